"""Each metric's arithmetic for one ranked list, with the numbers substituted.

Used by the drill-down and the metric sandbox.  The values are computed with the same kernels as
:func:`rag_metrics.evaluation.evaluate` (so the explanation can never disagree with the dashboard);
the text shows the arithmetic a student would write down.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_metrics.metrics.judge import Judged
from rag_metrics.metrics.kernels import Kernels, check_k

__all__ = ["MetricExplanation", "explain_ranking", "judged_from_grades"]


@dataclass(frozen=True)
class MetricExplanation:
    metric: str          # registry name
    k: int | None
    value: float
    formula: str         # symbolic
    substituted: str     # the same with this list's numbers, ending in "= value"


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


def _f(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


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
    L = relevance_level
    topk = list(grades[:k])
    rel_ranks = [i + 1 for i, g in enumerate(topk) if g >= L]
    h = len(rel_ranks)
    R = int(kn.n_relevant[0])
    out: dict[str, MetricExplanation] = {}

    v = float(kn.hit_rate(k)[0])
    out["hit_rate"] = MetricExplanation("hit_rate", k, v, "1 if hits@k > 0 else 0",
                                        f"hits@{k} = {h} -> {int(v)}")
    v = float(kn.precision(k)[0])
    out["precision"] = MetricExplanation("precision", k, v, "hits@k / k", f"{h} / {k} = {_f(v)}")
    v = float(kn.recall(k, recall_denominator)[0])
    den = R if recall_denominator == "all" else min(k, R)
    den_txt = "|R|" if recall_denominator == "all" else "min(k, |R|)"
    out["recall"] = MetricExplanation("recall", k, v, f"hits@k / {den_txt}",
                                      f"{h} / {den} = {_f(v)}" if den else "no relevant id: 0")
    v = float(kn.mrr(k)[0])
    first = int(kn.first_relevant_rank[0])
    if first and first <= k:
        sub = f"first relevant at rank {first}: 1 / {first} = {_f(v)}"
    elif first:
        sub = f"first relevant at rank {first} > k = {k}: 0 (would count 1/{first} at K={first})"
    else:
        sub = "no relevant id retrieved: 0"
    out["mrr"] = MetricExplanation("mrr", k, v, "1 / rank of the first relevant id (if <= k)", sub)
    v = float(kn.map(k)[0])
    terms = [f"{n + 1}/{r}" for n, r in enumerate(rel_ranks)]
    sub = (f"(1/{R}) x ({' + '.join(terms)}) = {_f(v)}" if terms and R else
           ("no relevant id in the top k: 0" if R else "no relevant id: 0"))
    out["map"] = MetricExplanation("map", k, v, "(1/|R|) x sum over relevant ranks i <= k of hits@i / i", sub)
    for name, gain in (("ndcg", "linear"), ("ndcg_exp", "exponential")):
        v = float(kn.ndcg(k, gain)[0])

        def g_of(g: int, gain: str = gain) -> float:
            return float(g) if gain == "linear" else 2.0 ** g - 1.0

        def g_txt(g: int, gain: str = gain) -> str:
            return str(g) if gain == "linear" else f"(2^{g}-1)"

        dterms = [f"{g_txt(g)}/log2({i + 2})" for i, g in enumerate(topk) if g > 0]
        ideal = sorted([g for g in judged_grades if g > 0], reverse=True)[:k]
        iterms = [f"{g_txt(g)}/log2({i + 2})" for i, g in enumerate(ideal)]
        dcg = sum(g_of(g) / math.log2(i + 2) for i, g in enumerate(topk) if g > 0)
        idcg = sum(g_of(g) / math.log2(i + 2) for i, g in enumerate(ideal))
        sub = (f"DCG = {' + '.join(dterms) or '0'} = {_f(dcg)}; IDCG = {' + '.join(iterms) or '0'} = {_f(idcg)}; "
               f"{_f(dcg)} / {_f(idcg)} = {_f(v)}" if idcg else "no positive grade: 0")
        formula = "DCG@k / IDCG@k, DCG = sum gain(g_i) / log2(i + 1)" + ("" if gain == "linear" else ", gain = 2^g - 1")
        out[name] = MetricExplanation(name, k, v, formula, sub)
    return out
