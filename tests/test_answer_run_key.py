"""The Answers views cache an LLM judge's run by its content, not by the judge's name: two sessions that
ran the same judge on the same answers (or one session's rerun) never see each other's scores."""
from __future__ import annotations

from rag_metrics.answers.scoring import AnswerEvaluation
from rag_metrics.answers.types import AnswerItem, MetricScore


def _run(value: float, reason: str = "") -> AnswerEvaluation:
    item = AnswerItem(id="q1", question="Q?", answer="A.", contexts=("C.",))
    return AnswerEvaluation((item,), "gpt-judge", {"q1": {"faithfulness": MetricScore(value, message=reason)}})


def test_same_judge_different_scores_are_different_runs():
    assert _run(0.5).fingerprint() != _run(1.0).fingerprint()
    assert _run(0.5, "one reason").fingerprint() != _run(0.5, "another").fingerprint()


def test_the_same_run_has_the_same_key():
    assert _run(0.5).fingerprint() == _run(0.5).fingerprint()
