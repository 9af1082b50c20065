"""One CI setting: every library function that draws an interval defaults to the same constants."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from rag_metrics import Run
from rag_metrics.evaluation import CI_CONFIDENCE, CI_RESAMPLES, CI_SEED, EvaluationResult, bootstrap_ci, evaluate
from rag_metrics.insights.ragas import context_metrics_summary
from rag_metrics.report.html import report_content


def test_constants():
    assert (CI_CONFIDENCE, CI_RESAMPLES, CI_SEED) == (0.95, 2000, 0)


@pytest.mark.parametrize("fn", [bootstrap_ci, EvaluationResult.summary, EvaluationResult.by_category,
                                context_metrics_summary, report_content])
def test_defaults_are_the_one_setting(fn):
    params = inspect.signature(fn).parameters
    assert params["n_resamples"].default == CI_RESAMPLES
    if "confidence" in params:
        assert params["confidence"].default == CI_CONFIDENCE
    if "seed" in params:
        assert params["seed"].default == CI_SEED


def test_same_interval_from_summary_by_category_and_bootstrap_ci():
    rng = np.random.default_rng(3)
    golden = {f"q{i}": {"a": 1} for i in range(30)}
    run = Run.from_rankings({f"q{i}": (["a"] if rng.random() < 0.5 else ["x", "y", "a"]) for i in range(30)})
    res = evaluate(golden, run)
    direct = bootstrap_ci(res.values("mrr", 2)[res.included])
    s = res.summary(["mrr"], ks=(2,)).iloc[0]
    c = res.by_category(["mrr"], ks=(2,)).iloc[0]  # one category "(none)": every query
    assert (s.ci_low, s.ci_high) == direct == (c.ci_low, c.ci_high)
    assert direct[0] < s["mean"] < direct[1]
