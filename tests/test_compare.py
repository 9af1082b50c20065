"""Paired comparison: values, significance tests against scipy, verdicts."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rag_metrics import GoldenQuery, GoldenSet, Run
from rag_metrics.compare import compare, disagreements, paired_tests, per_query_deltas, verdict
from rag_metrics.evaluate import evaluate


def test_paired_tests_match_scipy_on_known_inputs():
    a = np.array([0.2, 0.5, 0.1, 0.9, 0.4, 0.3, 0.6, 0.0])
    b = np.array([0.4, 0.6, 0.3, 0.9, 0.7, 0.2, 0.8, 0.5])
    p_rand, p_t = paired_tests(a, b)
    assert p_t == pytest.approx(stats.ttest_rel(b, a).pvalue)
    # 2^8 = 256 sign flips <= resamples: exact test; count by hand
    d = b - a
    obs = abs(d.mean())
    signs = np.array(np.meshgrid(*[[1, -1]] * len(d))).reshape(len(d), -1).T
    exact = np.mean(np.abs((signs * d).mean(axis=1)) >= obs - 1e-12)
    assert p_rand == pytest.approx(exact)


def test_identical_runs_give_p_one_and_identical_verdict():
    golden = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = Run.from_rankings({"q1": ["a"], "q2": ["x", "b"]})
    a = evaluate(golden, run)
    df = compare(a, a, ["ndcg@5"])
    assert df.loc[0, "p_randomization"] == 1.0 and df.loc[0, "delta"] == 0
    assert "identical" in verdict(df.iloc[0])


def test_small_set_verdict_says_too_small():
    rng = np.random.default_rng(0)
    golden = {str(i): {"a": 1} for i in range(8)}
    ra = Run.from_rankings({str(i): (["a"] if rng.random() < 0.5 else ["x", "a"]) for i in range(8)})
    rb = Run.from_rankings({str(i): (["a"] if rng.random() < 0.5 else ["x", "a"]) for i in range(8)})
    df = compare(evaluate(golden, ra), evaluate(golden, rb), ["mrr@5"])
    text = verdict(df.iloc[0])
    assert "no significant difference" in text and "too small" in text


def test_bh_adjustment_and_win_loss_tie():
    golden = {str(i): {"a": 1} for i in range(40)}
    ra = Run.from_rankings({str(i): ["x", "y", "a"] for i in range(40)})
    rb = Run.from_rankings({str(i): ["a"] if i < 30 else ["x", "y", "z", "a"] for i in range(40)})
    df = compare(evaluate(golden, ra), evaluate(golden, rb), ["mrr@10", "hit_rate@3"])
    r = df.set_index("metric").loc["mrr"]
    assert (r.wins, r.losses, r.ties) == (30, 10, 0)
    ps = df["p_randomization"].to_numpy()
    np.testing.assert_allclose(df["p_randomization_adj"], stats.false_discovery_control(ps, method="bh"))
    assert bool(r.significant)


def test_disagreements_and_deltas():
    golden = GoldenSet((GoldenQuery("q1", "a?", "f", {"a": 1}), GoldenQuery("q2", "b?", "f", {"b": 1}),
                        GoldenQuery("q3", "c?", "f", {"c": 1})))
    ra = Run.from_rankings({"q1": ["x", "x2", "x3", "x4", "x5", "a"], "q2": ["b"], "q3": ["x", "y", "c"]})
    rb = Run.from_rankings({"q1": ["x", "a"], "q2": ["x", "x2", "x3", "x4", "x5", "b"], "q3": ["x", "c"]})
    a, b = evaluate(golden, ra), evaluate(golden, rb)
    d = disagreements(a, b, 5).set_index("query_id")
    assert d.loc["q1", "kind"] == "newly hit"
    assert d.loc["q2", "kind"] == "newly missed"
    assert d.loc["q3", "kind"] == "ranking moved"  # hit@5 unchanged, NDCG up (rank 3 -> 2)
    pq = per_query_deltas(a, b, "mrr@10").set_index("query_id")
    assert pq.loc["q3", "delta"] == pytest.approx(1 / 2 - 1 / 3)
