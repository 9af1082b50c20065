"""Answer metrics: faithfulness and answer relevancy (LLM judge, ragas 0.4 definitions), offline
approximations (context support, answer-question similarity) and reference metrics.

Modules: :mod:`.types` (items, verdicts, the :class:`Judge` protocol), :mod:`.text` (sentences),
:mod:`.offline`, :mod:`.reference`, :mod:`.llm` (OpenAI-compatible judge and its disk cache),
:mod:`.scoring` (aggregation), :mod:`.data` (reading answer files and the shipped sample),
:mod:`.agreement` (judge vs people).  Heavy imports are lazy.
"""
from __future__ import annotations

from rag_metrics.answers.types import (
    NOT_A_CLAIM,
    STATUSES,
    SUPPORTED,
    UNSUPPORTED,
    AnswerItem,
    GeneratedQuestion,
    ItemJudgement,
    Judge,
    JudgeProgress,
    MetricScore,
    StatementVerdict,
)

__all__ = [
    "NOT_A_CLAIM",
    "STATUSES",
    "SUPPORTED",
    "UNSUPPORTED",
    "AnswerItem",
    "GeneratedQuestion",
    "ItemJudgement",
    "Judge",
    "JudgeProgress",
    "MetricScore",
    "StatementVerdict",
]
