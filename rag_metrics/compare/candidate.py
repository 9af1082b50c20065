"""A changed version of a system for teaching the gate (lesson 4 of the course): the same rankings with each
question's first two results swapped, as a faulty reranker might do, evaluated by the lab's engine.

Only questions whose first relevant result was first (and the second not relevant) lose; only those whose first
relevant result was second win; the rest tie.  :data:`METRIC` is the metric the lesson and its exercises compare.
"""
from __future__ import annotations

from rag_metrics.evaluation import EvaluationResult, evaluate
from rag_metrics.types import Run

__all__ = ["METRIC", "candidate_result"]

#: The metric the lesson compares (at the sidebar's K): a swap of the first two results moves it.
METRIC = "mrr"

_CANDIDATES: dict[int, tuple[EvaluationResult, EvaluationResult]] = {}


def candidate_result(result: EvaluationResult) -> EvaluationResult:
    """The candidate, evaluated by the engine under ``result``'s conventions: the same questions and rankings as
    ``result``'s run, with each question's first two results swapped (kept for the last few results)."""
    kept = _CANDIDATES.get(id(result))
    if kept is not None and kept[0] is result:
        return kept[1]
    swapped = {}
    for q, ranking in result.run.rankings().items():
        ids = [cid for cid, _ in ranking]
        if len(ids) > 1:
            ids[0], ids[1] = ids[1], ids[0]
        swapped[q] = [(cid, float(len(ids) - i)) for i, cid in enumerate(ids)]
    out = evaluate(result.golden, Run.from_rankings(swapped, name="candidate"), result.options)
    if len(_CANDIDATES) >= 8:
        _CANDIDATES.clear()
    _CANDIDATES[id(result)] = (result, out)
    return out
