"""Paired comparison of two runs on the same golden set.

Per metric at k: mean of A and B, the mean per-query delta (B - A) with a 95 % bootstrap CI,
wins/losses/ties, a paired randomization (sign-flip permutation) test and a paired t-test
(both scipy.stats), with a Benjamini-Hochberg correction across the metrics compared
(``scipy.stats.false_discovery_control``), and a plain-language verdict.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from rag_metrics.errors import InputError
from rag_metrics.evaluate import EvaluationResult, bootstrap_ci
from rag_metrics.metrics.registry import METRICS, MetricKey

__all__ = ["paired_tests", "compare", "per_query_deltas", "disagreements", "verdict", "ComparisonRow"]


@dataclass(frozen=True)
class ComparisonRow:
    metric: str
    k: int | None
    mean_a: float
    mean_b: float
    delta: float
    ci_low: float
    ci_high: float
    wins: int
    losses: int
    ties: int
    p_randomization: float
    p_ttest: float
    n: int


def paired_tests(a: np.ndarray, b: np.ndarray, n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Two-sided p-values: paired randomization test (exact when 2^n <= n_resamples) and paired t-test.

    Identical samples give p = 1 for both.
    """
    from scipy import stats

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    d = b - a
    if d.size == 0:
        return (float("nan"), float("nan"))
    if np.all(d == 0):
        return (1.0, 1.0)

    def mean_diff(x, y, axis=-1):
        return np.mean(y - x, axis=axis)

    perm = stats.permutation_test((a, b), mean_diff, permutation_type="samples", vectorized=True,
                                  n_resamples=n_resamples, alternative="two-sided",
                                  random_state=np.random.default_rng(seed))
    p_rand = float(perm.pvalue)
    if d.size < 2 or np.all(d == d[0]):
        # constant non-zero difference: t statistic is infinite
        p_t = 0.0 if d.size >= 2 else float("nan")
    else:
        p_t = float(stats.ttest_rel(b, a).pvalue)
    return (p_rand, p_t)


def _check_same_golden(a: EvaluationResult, b: EvaluationResult) -> None:
    if a.query_ids != b.query_ids:
        raise InputError("the two evaluations use different golden sets; compare runs on the same golden set")


def compare(a: EvaluationResult, b: EvaluationResult, keys: Sequence[str | MetricKey],
            n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """One row per metric key: mean_a, mean_b, delta (B - A), CI, wins/losses/ties, p-values
    (raw and BH-adjusted), and whether the difference is significant at 0.05 after correction."""
    from scipy import stats

    from rag_metrics.metrics.registry import parse_metric

    _check_same_golden(a, b)
    inc = a.included & b.included
    rows = []
    for key in keys:
        mk = key if isinstance(key, MetricKey) else parse_metric(str(key))
        va, vb = a.values(mk)[inc], b.values(mk)[inc]
        d = vb - va
        lo, hi = bootstrap_ci(d, seed=seed)
        p_r, p_t = paired_tests(va, vb, n_resamples, seed)
        rows.append(ComparisonRow(mk.name, mk.k, float(va.mean()) if va.size else math.nan,
                                  float(vb.mean()) if vb.size else math.nan,
                                  float(d.mean()) if d.size else math.nan, lo, hi,
                                  int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum()), p_r, p_t, int(d.size)))
    df = pd.DataFrame([r.__dict__ for r in rows])
    if df.empty:
        return df
    for col in ("p_randomization", "p_ttest"):
        p = df[col].to_numpy(dtype=float)
        ok = ~np.isnan(p)
        adj = np.full_like(p, np.nan)
        if ok.any():
            adj[ok] = stats.false_discovery_control(p[ok], method="bh")
        df[col + "_adj"] = adj
    df["significant"] = df["p_randomization_adj"] < 0.05
    df["k"] = df["k"].astype("Int64")
    return df


def per_query_deltas(a: EvaluationResult, b: EvaluationResult, key: str | MetricKey) -> pd.DataFrame:
    """query_id, category, a, b, delta, outcome (win/loss/tie for B) for the included queries."""
    from rag_metrics.metrics.registry import parse_metric

    _check_same_golden(a, b)
    mk = key if isinstance(key, MetricKey) else parse_metric(str(key))
    inc = a.included & b.included
    va, vb = a.values(mk)[inc], b.values(mk)[inc]
    d = vb - va
    return pd.DataFrame({
        "query_id": np.asarray(a.query_ids, dtype=object)[inc], "category": a.categories[inc],
        "a": va, "b": vb, "delta": d,
        "outcome": np.where(d > 0, "B better", np.where(d < 0, "A better", "tie")),
    })


def disagreements(a: EvaluationResult, b: EvaluationResult, k: int) -> pd.DataFrame:
    """Queries where the metrics tell different stories between A and B at k.

    ``kind`` is ``newly hit`` (B hits, A missed), ``newly missed`` (A hit, B misses), or
    ``ranking moved`` (hit@k unchanged but NDCG@k changed: the relevant chunk moved up or down).
    """
    _check_same_golden(a, b)
    inc = a.included & b.included & a.in_scope
    ha, hb = a.values("hit_rate", k), b.values("hit_rate", k)
    na, nb = a.values("ndcg", k), b.values("ndcg", k)
    ra, rb = a.first_relevant_rank(), b.first_relevant_rank()
    rows = []
    for q in np.flatnonzero(inc):
        if ha[q] == 0 and hb[q] == 1:
            kind = "newly hit"
        elif ha[q] == 1 and hb[q] == 0:
            kind = "newly missed"
        elif ha[q] == hb[q] and not math.isclose(na[q], nb[q], abs_tol=1e-12):
            kind = "ranking moved"
        else:
            continue
        gq = a.golden.queries[q]
        rows.append({"query_id": gq.id, "category": gq.category, "question": gq.question, "kind": kind,
                     f"hit@{k} A": int(ha[q]), f"hit@{k} B": int(hb[q]),
                     f"ndcg@{k} A": float(na[q]), f"ndcg@{k} B": float(nb[q]),
                     "first relevant rank A": int(ra[q]) or None, "first relevant rank B": int(rb[q]) or None})
    return pd.DataFrame(rows)


def verdict(row: pd.Series | dict, name_a: str = "A", name_b: str = "B") -> str:
    """Plain-language reading of one comparison row, saying when the golden set is too small."""
    r = dict(row)
    label = METRICS[r["metric"]].label + (f"@{r['k']}" if r.get("k") is not None and not pd.isna(r["k"]) else "")
    n = int(r["n"])
    d = float(r["delta"])
    if n == 0:
        return f"{label}: no query to compare."
    if d == 0 and r["wins"] == 0 and r["losses"] == 0:
        return f"{label}: identical on all {n} queries."
    lo, hi = float(r["ci_low"]), float(r["ci_high"])
    width = hi - lo
    better = name_b if d > 0 else name_a
    p = r.get("p_randomization_adj", r.get("p_randomization"))
    if p is not None and not pd.isna(p) and p < 0.05:
        return (f"{label}: {better} is better by {abs(d):.3f} ({name_b} - {name_a} = {d:+.3f}, 95% CI {lo:+.3f} to "
                f"{hi:+.3f}, adjusted p = {p:.3g}; {name_b} wins {r['wins']}, loses {r['losses']}, ties {r['ties']} "
                f"of {n} queries).")
    small = n < 30
    tail = (f" With only {n} queries the set is too small to tell differences smaller than about "
            f"{width / 2:.2f}; add queries to decide." if small or width > 0.2 else
            f" The difference, if any, is likely smaller than {max(abs(lo), abs(hi)):.2f}.")
    return (f"{label}: no significant difference ({name_b} - {name_a} = {d:+.3f}, 95% CI {lo:+.3f} to {hi:+.3f}, "
            f"adjusted p = {p:.3g}).{tail}")
