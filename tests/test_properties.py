"""Invariants of every metric, with hypothesis."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_metrics import Run
from rag_metrics.evaluation import evaluate

IDS = [str(i) for i in range(12)]
METRICS = ["hit_rate", "precision", "recall", "mrr", "map", "ndcg", "ndcg_exp"]


@st.composite
def cases(draw):
    nq = draw(st.integers(1, 5))
    qrels, run = {}, {}
    for q in range(nq):
        judged = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=8, unique=True))
        grades = draw(st.lists(st.integers(0, 3), min_size=len(judged), max_size=len(judged)))
        if max(grades) == 0:
            grades[0] = 1
        qrels[str(q)] = dict(zip(judged, grades))
        ranking = draw(st.lists(st.sampled_from(IDS), max_size=12, unique=True))
        scores = draw(st.lists(st.integers(0, 4), min_size=len(ranking), max_size=len(ranking)))
        run[str(q)] = {d: float(s) for d, s in zip(ranking, scores)}
    return qrels, run


@settings(max_examples=150, deadline=None)
@given(cases(), st.integers(1, 3))
def test_invariants(case, level):
    qrels, run = case
    from rag_metrics.metrics.options import EvalOptions

    res = evaluate(qrels, run, EvalOptions(relevance_level=level))
    R = res.kernels.n_relevant
    prev = {}
    for k in range(1, 16):
        vals = {m: res.values(m, k) for m in METRICS}
        for m, v in vals.items():
            assert np.all((v >= 0) & (v <= 1 + 1e-12)), (m, k, v)
        # precision@k * k == recall@k * |R|
        np.testing.assert_allclose(vals["precision"] * k, vals["recall"] * R, atol=1e-9)
        if prev:
            assert np.all(vals["hit_rate"] >= prev["hit_rate"])
            assert np.all(vals["recall"] >= prev["recall"] - 1e-12)
            assert np.all(vals["mrr"] >= prev["mrr"])
            assert np.all(vals["map"] >= prev["map"] - 1e-12)
        prev = vals


@settings(max_examples=100, deadline=None)
@given(cases())
def test_ideal_ranking_scores_one(case):
    qrels, _ = case
    ideal = {q: sorted([d for d, g in rel.items() if g > 0], key=lambda d: -rel[d]) for q, rel in qrels.items()}
    res = evaluate(qrels, Run.from_rankings(ideal))
    for q in qrels:
        n = len(ideal[q])
        i = res.query_ids.index(q)
        for m in ["hit_rate", "mrr", "ndcg", "ndcg_exp", "map"]:
            assert abs(res.values(m, n)[i] - 1.0) < 1e-12, (m, q)
        assert res.values("recall", n)[i] == 1.0
        assert res.values("precision", n)[i] == 1.0


@settings(max_examples=100, deadline=None)
@given(cases(), st.integers(1, 6),
       st.lists(st.sampled_from([f"x{i}" for i in range(6)] + IDS), max_size=6, unique=True))
def test_appending_after_rank_k_changes_nothing_at_k(case, k, extra):
    qrels, run = case
    base = evaluate(qrels, Run.from_rankings({q: [d for d, _ in Run.from_dict({q: r}).rankings()[q]]
                                              for q, r in run.items() if r}))
    longer = {}
    for q, r in run.items():
        ranked = [d for d, _ in Run.from_dict({q: r}).rankings().get(q, [])]
        if not ranked:
            continue
        longer[q] = ranked + [d for d in extra if d not in ranked] if len(ranked) >= k else ranked
    after = evaluate(qrels, Run.from_rankings(longer))
    for m in METRICS:
        np.testing.assert_allclose(base.values(m, k), after.values(m, k), atol=1e-12)
