"""Paired comparison: values, significance tests against scipy, verdicts."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rag_metrics import GoldenQuery, GoldenSet, Run
from rag_metrics.compare.paired import (
    ALPHA,
    DECISION_RULE,
    MIN_EFFECT,
    compare,
    comparison_summary,
    disagreements,
    paired_tests,
    per_query_deltas,
    plain_verdict,
    verdict,
    verdict_table,
)
from rag_metrics.evaluation import evaluate


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


def _runs(ranks_a, ranks_b):
    """Golden {q_i: {a: 1}}; run A puts 'a' at rank ranks_a[i] (0 = not retrieved), run B likewise."""
    golden = {f"q{i}": {"a": 1} for i in range(len(ranks_a))}

    def run(ranks):
        return Run.from_rankings({f"q{i}": [f"x{j}" for j in range(1, r)] + ["a"] if r else ["x1"]
                                  for i, r in enumerate(ranks)})
    return evaluate(golden, run(ranks_a)), evaluate(golden, run(ranks_b))


def _agree(row):
    """Interval, p and verdict tell the same story."""
    excludes_zero = row["ci_low"] > 0 or row["ci_high"] < 0
    assert bool(row["significant"]) == excludes_zero == (row["p_ttest_adj"] <= ALPHA)
    if row["significant"]:
        assert row["verdict"] == ("B better" if row["delta"] > 0 else "A better")
        assert "is better by" in row["sentence"] and "no significant" not in row["sentence"]
        assert "does better than" in row["plain"]
    else:
        assert row["verdict"] in ("no difference", "too small to tell", "identical", "too few queries")
        assert "is better" not in row["sentence"] and "does better" not in row["plain"]
        if row["verdict"] in ("no difference", "too small to tell"):
            assert "no significant difference" in row["sentence"] and "includes 0" in row["sentence"]
            assert abs(row["delta"]) < row["mde"]  # a non-significant difference is below the detectable one
            assert ("too small to tell" in row["verdict"]) == (row["mde"] > MIN_EFFECT)
    assert "p =" not in row["plain"] and "p-value" not in row["plain"] and "CI" not in row["plain"]


def test_identical_runs_give_p_one_and_identical_verdict():
    golden = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = Run.from_rankings({"q1": ["a"], "q2": ["x", "b"]})
    a = evaluate(golden, run)
    df = compare(a, a, ["ndcg@5"])
    r = df.iloc[0]
    assert r["p_ttest"] == 1.0 and r["delta"] == 0 and r["verdict"] == "identical"
    assert (r["ci_low"], r["ci_high"]) == (0.0, 0.0)
    assert "identical" in verdict(r) and "same result on every question" in plain_verdict(r)


def test_significant_hand_case():
    # 30 queries: A at rank 3, B at rank 1 (d = 1 - 1/3 = 2/3); 10 queries: A rank 3, B rank 4 (d = 1/4 - 1/3)
    a, b = _runs([3] * 40, [1] * 30 + [4] * 10)
    df = compare(a, b, ["mrr@10"])
    r = df.iloc[0]
    d = np.array([2 / 3] * 30 + [-1 / 12] * 10)
    assert r["delta"] == pytest.approx(d.mean())
    assert (r.wins, r.losses, r.ties) == (30, 10, 0)
    # one metric: the ordinary 95 % t-interval, p from the paired t-test
    half = stats.t.ppf(0.975, 39) * d.std(ddof=1) / np.sqrt(40)
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((d.mean() - half, d.mean() + half))
    assert r["ci_level"] == pytest.approx(0.95)
    assert r["p_ttest"] == pytest.approx(stats.ttest_rel(np.full(40, 0.0) + d, np.zeros(40)).pvalue)
    assert r["p_ttest_adj"] == pytest.approx(r["p_ttest"])
    assert r["verdict"] == "B better"
    assert r["sentence"].startswith("MRR@10: B is better by 0.479")
    assert "95% CI +0.33" in r["sentence"] or "95% CI +0.3" in r["sentence"]
    assert r["plain"].startswith("MRR@10: B does better than A (0.81 vs 0.33); "
                                 "the real gain is likely between 0.37 and 0.58.")
    _agree(r)


def test_no_difference_hand_case():
    # 400 queries: 5 up by 1/2 - 1/3, 5 down by the same, 390 unchanged: mean 0, small spread
    ra = [3] * 400
    rb = [2] * 5 + [6] * 5 + [3] * 390
    a, b = _runs(ra, rb)
    r = compare(a, b, ["mrr@10"]).iloc[0]
    d = np.array([1 / 2 - 1 / 3] * 5 + [1 / 6 - 1 / 3] * 5 + [0.0] * 390)
    mde = (stats.t.ppf(0.975, 399) + stats.t.ppf(0.8, 399)) * d.std(ddof=1) / np.sqrt(400)
    assert r["mde"] == pytest.approx(mde)
    assert r["mde"] < MIN_EFFECT
    assert r["verdict"] == "no difference"
    assert f"no difference: one of {mde:.2f} or more would have been detected" in r["sentence"]
    assert "perform about the same" in r["plain"]
    _agree(r)


def test_too_small_to_tell_hand_case():
    # 6 queries; B better on 3 (rank 2 -> 1: +1/2), worse on 2 (rank 1 -> 2: -1/2), one tie
    a, b = _runs([2, 2, 2, 1, 1, 1], [1, 1, 1, 2, 2, 1])
    r = compare(a, b, ["mrr@10"]).iloc[0]
    d = np.array([0.5, 0.5, 0.5, -0.5, -0.5, 0.0])
    assert r["delta"] == pytest.approx(d.mean())
    mde = (stats.t.ppf(0.975, 5) + stats.t.ppf(0.8, 5)) * d.std(ddof=1) / np.sqrt(6)
    assert r["mde"] == pytest.approx(mde) and mde > 0.5
    assert r["verdict"] == "too small to tell"
    assert f"only differences of about {mde:.2f} or more are detected" in r["sentence"]
    assert "can't tell A and B apart yet" in r["plain"] and "with 6 questions" in r["plain"]
    _agree(r)


def test_small_set_verdict_says_too_small():
    rng = np.random.default_rng(0)
    golden = {str(i): {"a": 1} for i in range(8)}
    ra = Run.from_rankings({str(i): (["a"] if rng.random() < 0.5 else ["x", "a"]) for i in range(8)})
    rb = Run.from_rankings({str(i): (["a"] if rng.random() < 0.5 else ["x", "a"]) for i in range(8)})
    df = compare(evaluate(golden, ra), evaluate(golden, rb), ["mrr@5"])
    text = verdict(df.iloc[0])
    assert "no significant difference" in text and "too small to tell" in text
    _agree(df.iloc[0])


def test_too_few_queries():
    a, b = _runs([1], [2])
    r = compare(a, b, ["mrr@10"]).iloc[0]
    assert r["verdict"] == "too few queries" and np.isnan(r["p_ttest"]) and not r["significant"]
    _agree(r)


def test_bh_adjustment_and_fcr_interval_level():
    golden = {str(i): {"a": 1} for i in range(40)}
    ra = Run.from_rankings({str(i): ["x", "y", "a"] for i in range(40)})
    rb = Run.from_rankings({str(i): ["a"] if i < 30 else ["x", "y", "z", "a"] for i in range(40)})
    df = compare(evaluate(golden, ra), evaluate(golden, rb), ["mrr@10", "hit_rate@3", "hit_rate@2"])
    r = df.set_index("metric").loc["mrr"]
    assert (r.wins, r.losses, r.ties) == (30, 10, 0)
    ps = df["p_ttest"].to_numpy()
    np.testing.assert_allclose(df["p_ttest_adj"], stats.false_discovery_control(ps, method="bh"))
    assert bool(r.significant)
    # hit_rate@3 identical (every query hits at 3 in A; B misses for 10) -> see the table; level from R of m
    R, m = int(df["significant"].sum()), 3
    assert df["ci_level"].nunique() == 1
    assert df["ci_level"].iloc[0] == pytest.approx(1 - 0.05 * max(R, 1) / m)
    for _, row in df.iterrows():
        _agree(row)


@pytest.mark.parametrize("seed", range(15))
def test_interval_p_and_sentence_always_agree(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 60))
    shift = rng.uniform(-0.4, 0.4)
    ra = [int(x) for x in rng.integers(0, 6, n)]
    rb = [max(0, min(8, r + round(rng.normal(shift * 4, 1.5)))) for r in ra]
    a, b = _runs(ra, rb)
    df = compare(a, b, ["mrr@10", "hit_rate@1", "hit_rate@3", "ndcg@5", "precision@2", "map@10"])
    for _, row in df.iterrows():
        _agree(row)
    summary = comparison_summary(df)
    assert summary.startswith(f"A vs B on {n} queries, 6 metrics: ")
    for v, c in df["verdict"].value_counts().items():
        assert f"{v} on {c}" in summary


def test_verdict_table_and_summary():
    a, b = _runs([3] * 40, [1] * 30 + [4] * 10)
    df = compare(a, b, ["mrr@10", "hit_rate@1"], name_a="dense", name_b="hybrid")
    t = verdict_table(df)
    assert list(t.columns) == ["metric", "mean A", "mean B", "difference (B - A)", "CI low", "CI high", "CI level",
                               "p", "adjusted p", "verdict", "detectable difference"]
    assert list(t["metric"]) == ["MRR@10", "Hit rate@1"]
    assert df["sentence"].iloc[0].startswith("MRR@10: hybrid is better")
    assert comparison_summary(df, "dense", "hybrid") == (
        "dense vs hybrid on 40 queries, 2 metrics: hybrid better on 2 (paired t-test, Benjamini-Hochberg at 0.05).")
    assert comparison_summary(df, "dense", "hybrid", plain=True).endswith("hybrid better on 2.")
    assert "t-test" in DECISION_RULE and "Benjamini-Hochberg" in DECISION_RULE


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
