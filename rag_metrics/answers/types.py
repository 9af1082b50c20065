"""Data types of the answer metrics: items, per-statement verdicts, per-metric scores.

Every score carries a ``status``: ``"ok"`` means ``value`` is a number; anything else means the
metric could not be computed for that item (``value`` is ``None``, ``message`` says why and how to
fix it).  A missing value is never a silent 0 or NaN.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol, runtime_checkable

__all__ = [
    "NOT_A_CLAIM",
    "STATUSES",
    "SUPPORTED",
    "UNSUPPORTED",
    "VERDICTS",
    "AnswerItem",
    "CancelCheck",
    "GeneratedQuestion",
    "ItemJudgement",
    "Judge",
    "JudgeProgress",
    "MetricScore",
    "ProgressCallback",
    "StatementVerdict",
    "Verdict",
]

SUPPORTED: Final = "supported"
UNSUPPORTED: Final = "unsupported"
NOT_A_CLAIM: Final = "not a claim"
#: Verdict of one statement (the human labels of the shipped answers use the same words).
Verdict = Literal["supported", "unsupported", "not a claim"]
VERDICTS: tuple[str, ...] = (SUPPORTED, UNSUPPORTED, NOT_A_CLAIM)

#: Per-item, per-metric status values and what they mean.
STATUSES: Mapping[str, str] = {
    "ok": "computed",
    "empty_answer": "the answer is empty",
    "no_sentences": "the answer has no sentence (only spaces or punctuation)",
    "no_claims": "no sentence of the answer carries a claim (questions, greetings, filler only)",
    "no_statements": "the judge found no statement in the answer",
    "missing_contexts": "the item has no retrieved context to check the answer against",
    "missing_question": "the item has no question",
    "no_ground_truth": "the item has no ground truth (reference answer)",
    "unreachable": "the judge endpoint could not be reached",
    "timeout": "the judge endpoint did not answer in time",
    "http_error": "the judge endpoint answered with an HTTP error",
    "invalid_json": "the judge's reply was not the JSON asked for",
    "refusal": "the judge refused to answer",
    "cancelled": "cancelled before this item was judged",
}


@dataclass(frozen=True)
class AnswerItem:
    """One generated answer to judge.

    Parameters
    ----------
    id : str
        Unique item id (an ``id`` column, else the row number).
    question, answer : str
    contexts : tuple of str
        The retrieved texts the answer was generated from, in rank order.
    ground_truth : str or None
        Reference answer, when known.
    system : str
        Name of the system that produced the answer ("" when unknown).
    category : str
        Question category ("" when unknown).
    question_id : str
        Golden question id ("" when unknown); several systems answer one question.
    context_ids : tuple of str
        Ids of the contexts, when known.
    """

    id: str
    question: str
    answer: str
    contexts: tuple[str, ...] = ()
    ground_truth: str | None = None
    system: str = ""
    category: str = ""
    question_id: str = ""
    context_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "contexts", tuple(self.contexts))
        object.__setattr__(self, "context_ids", tuple(self.context_ids))


@dataclass(frozen=True)
class StatementVerdict:
    """The verdict on one statement (an answer sentence, or an LLM-extracted statement).

    ``evidence`` is the context sentence that best supports it (offline judge) or the judge's
    reason (LLM judge); ``similarity`` is the offline cosine (``None`` for the LLM judge).
    """

    statement: str
    verdict: Verdict
    evidence: str = ""
    similarity: float | None = None
    reason: str = ""


@dataclass(frozen=True)
class GeneratedQuestion:
    """A question generated from the answer alone (answer relevancy), with its cosine to the
    original question and the noncommittal flag the judge gave."""

    question: str
    noncommittal: bool
    cosine: float | None = None


@dataclass(frozen=True)
class MetricScore:
    """One metric on one item: value (``None`` unless status is ``"ok"``), status, arithmetic."""

    value: float | None
    status: str = "ok"
    message: str = ""
    statements: tuple[StatementVerdict, ...] = ()
    questions: tuple[GeneratedQuestion, ...] = ()
    arithmetic: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @staticmethod
    def failed(status: str, message: str = "", **kw: object) -> MetricScore:
        if status not in STATUSES or status == "ok":
            raise ValueError(f"unknown failure status {status!r}")
        return MetricScore(None, status, message or STATUSES[status], **kw)  # type: ignore[arg-type]  # kw: other MetricScore fields, passed through


@dataclass(frozen=True)
class ItemJudgement:
    """Every metric a judge computed for one item: ``{metric name: MetricScore}``."""

    item_id: str
    scores: Mapping[str, MetricScore] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeProgress:
    """Progress of a judge run: calls done out of calls planned, cache hits, tokens, seconds."""

    done: int
    total: int
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


ProgressCallback = Callable[[JudgeProgress], None]
#: ``cancel()`` returns True when the user asked to stop (e.g. ``threading.Event().is_set``).
CancelCheck = Callable[[], bool]


@runtime_checkable
class Judge(Protocol):
    """Turns (question, answer, contexts) into per-statement verdicts plus scores.

    ``name`` identifies the judge in results ("offline" or "llm:<model>@<endpoint>");
    ``metrics`` lists the metric names it produces.  ``judge`` returns one
    :class:`ItemJudgement` per item, in input order, with a :class:`MetricScore` for every name in
    ``metrics`` (failed items carry a status, never a made-up number).
    """

    name: str
    metrics: tuple[str, ...]

    def judge(self, items: Sequence[AnswerItem], progress: ProgressCallback | None = None,
              cancel: CancelCheck | None = None) -> list[ItemJudgement]:
        ...
