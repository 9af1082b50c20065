"""Each metric's arithmetic for one ranked list, with the numbers substituted (each family's ``explain``).

Used by the drill-down and the metric sandbox.  The values are computed with the same kernels as
:func:`rag_metrics.evaluation.evaluate` (so the explanation can never disagree with the dashboard);
the text shows the arithmetic a student would write down.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rag_metrics.metrics import average_precision, hit_rate, mrr, ndcg, precision, recall
from rag_metrics.metrics.judge import Judged
from rag_metrics.metrics.kernels import Kernels, check_k
from rag_metrics.metrics.spec import MetricExplanation, OneList

__all__ = ["MetricExplanation", "explain_ranking", "judged_from_grades"]

#: The families explained, in the order the explanation lists them (each family's ``explain`` writes its text).
_FAMILIES = (hit_rate, precision, recall, mrr, average_precision, ndcg)


def judged_from_grades(rankings: Sequence[Sequence[int]], judged_grades: Sequence[Sequence[int]]) -> Judged:
    """A :class:`Judged` from grade lists directly (no ids): ``rankings[q]`` are the grades in rank
    order, ``judged_grades[q]`` every judged grade of the query (retrieved or not)."""
    nq = len(rankings)
    depth = max([len(r) for r in rankings] + [1])
    grades = np.zeros((nq, depth), dtype=np.int32)
    for q, r in enumerate(rankings):
        grades[q, : len(r)] = r
    pos = [sorted([g for g in jg if g > 0], reverse=True) for jg in judged_grades]
    m = max([len(p) for p in pos] + [1])
    ideal = np.zeros((nq, m), dtype=np.int32)
    for q, p in enumerate(pos):
        ideal[q, : len(p)] = p
    n = np.array([len(r) for r in rankings], dtype=np.int64)
    return Judged(
        query_ids=tuple(str(i) for i in range(nq)), grades=grades, n_retrieved=n, ideal_grades=ideal,
        top_score=np.zeros(nq), in_run=n > 0,
        starts=(np.cumsum(n) - n).astype(np.int64),
        ranked_codes=np.zeros(0, np.int64), id_uniques=np.array([], dtype=object), ranked_scores=np.zeros(0),
    )


def explain_ranking(grades: Sequence[int], judged_grades: Sequence[int], k: int, relevance_level: int = 1,
                    recall_denominator: str = "all") -> dict[str, MetricExplanation]:
    """Explain every metric at cutoff ``k`` for one ranked list.

    Parameters
    ----------
    grades
        Grade of each retrieved id in rank order (0 = not relevant / unjudged).
    judged_grades
        Grades of *all* judged ids of the query, retrieved or not (defines ``|R|`` and the ideal DCG).
    """
    k = check_k(k)
    kn = Kernels(judged_from_grades([list(grades)], [list(judged_grades)]), relevance_level)
    topk = list(grades[:k])
    rel_ranks = [i + 1 for i, g in enumerate(topk) if g >= relevance_level]
    one = OneList(kn, k, topk, rel_ranks, len(rel_ranks), int(kn.n_relevant[0]), list(judged_grades),
                  recall_denominator)
    return {e.metric: e for family in _FAMILIES for e in family.explain(one)}
