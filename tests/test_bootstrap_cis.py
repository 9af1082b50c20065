"""One resampling for every metric: :func:`bootstrap_cis` equals :func:`bootstrap_ci` row by row, exactly."""
from __future__ import annotations

import numpy as np
import pytest

from rag_metrics.evaluation import bootstrap_ci, bootstrap_cis


@pytest.mark.parametrize("n", [1, 2, 7, 64, 76, 500])
def test_rows_equal_single_calls_exactly(n):
    rng = np.random.default_rng(n)
    rows = np.vstack([rng.random(n), (rng.random(n) > 0.5).astype(float), np.full(n, 0.25),
                      1.0 / rng.integers(1, 11, n), np.zeros(n)])
    got = bootstrap_cis(rows)
    for row, (lo, hi) in zip(rows, got):
        np.testing.assert_array_equal((lo, hi), bootstrap_ci(row))  # nan == nan for n < MIN_CI_N
    if n < 3:  # too few for an interval: nan, and the pages say "too few"
        assert np.isnan(got).all()


def test_constant_rows_and_empty():
    assert bootstrap_cis(np.full((2, 5), 0.5)).tolist() == [[0.5, 0.5], [0.5, 0.5]]
    assert bootstrap_cis(np.empty((3, 0))).shape == (3, 2)
    assert np.isnan(bootstrap_cis(np.empty((3, 0)))).all()
    with pytest.raises(ValueError, match="2-D"):
        bootstrap_cis(np.zeros(4))


def test_summary_uses_the_same_intervals():
    from rag_metrics.evaluation import evaluate

    golden = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 2, "d": 1}, "q4": {"e": 1}}
    run = {"q1": {"a": 3.0, "x": 2.0}, "q2": {"x": 3.0, "b": 1.0}, "q3": {"d": 2.0, "y": 1.0}, "q4": {"z": 1.0}}
    res = evaluate(run, golden)
    s = res.summary(("mrr", "precision", "recall"), (1, 3))
    for row in s.itertuples():
        mk = f"{row.metric}@{row.k}"
        lo, hi = bootstrap_ci(res.values(mk)[res.included])
        assert (row.ci_low, row.ci_high) == (lo, hi)


@pytest.mark.parametrize("n", [3, 5, 76, 300])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_equals_scipy_bootstrap_exactly(n, confidence):
    from scipy import stats

    rng = np.random.default_rng(100 + n)
    rows = np.vstack([rng.random(n), (rng.random(n) > 0.3).astype(float), 1.0 / rng.integers(1, 11, n)])
    got = bootstrap_cis(rows, confidence=confidence)
    for row, (lo, hi) in zip(rows, got):
        ref = stats.bootstrap((row,), np.mean, confidence_level=confidence, n_resamples=2000, method="percentile",
                              random_state=np.random.default_rng(0), vectorized=True, batch=2000)
        assert (lo, hi) == (ref.confidence_interval.low, ref.confidence_interval.high)


def test_quantile_is_scipys_bit_for_bit():
    """The percentile step is scipy.stats.quantile's arithmetic, without importing scipy.stats at run time."""
    from scipy import stats

    from rag_metrics.evaluation import _quantile_linear

    rng = np.random.default_rng(7)
    for t in range(400):
        n = int(rng.integers(1, 300))
        values = rng.choice([0, 0.5, 1 / 3, 1, 0.2, 1 / 7], n) if t % 2 else rng.random(n)
        alpha = (1 - float(rng.choice([0.5, 0.8, 0.9, 0.95, 0.99]))) / 2
        p = np.array([alpha, 1 - alpha])
        assert np.array_equal(_quantile_linear(values, p), stats.quantile(values, p))
