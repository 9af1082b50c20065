"""No interval leaves its metric's range: bootstrap intervals of a mean stay in [0, 1], paired
intervals of a difference in [-1, 1], per-category intervals too; 1 or 2 values give "too few"
(nan with a flag), never nan arithmetic or a range past +-1."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_metrics.compare.paired import compare_paired, paired_t_interval
from rag_metrics.evaluation import MIN_CI_N, bootstrap_ci, too_few

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(unit, min_size=1, max_size=40))
def test_bootstrap_interval_of_a_mean_stays_in_0_1(values):
    lo, hi = bootstrap_ci(np.array(values), n_resamples=200)
    if len(values) < MIN_CI_N:
        assert math.isnan(lo) and math.isnan(hi) and too_few(len(values))
    else:
        assert 0.0 <= lo <= hi <= 1.0


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(unit, unit), min_size=1, max_size=30))
def test_difference_interval_stays_in_minus_1_1(pairs):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    lo, hi = paired_t_interval(b - a)
    if len(pairs) < MIN_CI_N and len(set((b - a).tolist())) > 1:
        assert math.isnan(lo) and math.isnan(hi)  # too few: no interval
        return
    if len(pairs) < 2:
        return
    assert -1.0 <= lo <= hi <= 1.0
    row = compare_paired([("ndcg", 10, a, b)]).iloc[0]
    assert -1.0 <= row["ci_low"] <= row["ci_high"] <= 1.0
    # the decision rule still holds after cutting: interval excludes 0 iff significant
    assert bool(row["significant"]) == (row["ci_low"] > 0 or row["ci_high"] < 0) or row["ci_low"] == row["ci_high"]


def test_the_reported_cases_are_now_in_range():
    """Issue 29: an MRR difference interval of [-1.028, -0.699] and an NDCG one of [-4.8, +5.7] (n = 2)."""
    d = np.array([-1.0, -0.75, -1.0, -0.8])  # every query lost most of its MRR
    lo, hi = paired_t_interval(d)
    assert -1.0 <= lo < hi < 0 and lo == -1.0
    assert all(math.isnan(x) for x in paired_t_interval(np.array([-0.9, 0.8])))  # n = 2: too few, not +-12 SE
    assert all(math.isnan(x) for x in paired_t_interval(np.array([0.5])))


def test_two_questions_are_too_few_for_a_verdict():
    row = compare_paired([("ndcg", 10, np.array([0.1, 0.9]), np.array([0.8, 0.2]))]).iloc[0]
    assert row["verdict"] == "too few queries" and math.isnan(row["ci_low"])


def test_the_cli_says_too_few_instead_of_nan(tmp_path, capsys):
    from rag_metrics.cli import main

    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "r.trec").write_text("q1 Q0 d1 1 2 x\nq1 Q0 d9 2 1 x\nq2 Q0 d9 1 2 x\nq2 Q0 d2 2 1 x\n")
    assert main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.trec"), "--ci",
                 "--metrics", "mrr", "--k", "10"]) == 0
    out = capsys.readouterr().out
    assert "too few (n = 2)" in out and "nan" not in out
