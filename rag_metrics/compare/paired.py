"""Paired comparison of two runs on the same golden set, with one decision rule.

The decision rule (also :data:`DECISION_RULE`, shown on the Compare page and in the report)
-------------------------------------------------------------------------------------------
For each metric compared, ``d = B - A`` per query, over the queries both evaluations include.

1. **Test.** Two-sided paired t-test of mean(d) = 0 (``scipy.stats.ttest_rel``): ``p``.
   The t-test is the usual choice for IR comparisons (Urbano, Lima & Hanjalic, "Statistical
   significance testing in information retrieval: an empirical analysis of type I, type II and
   type III errors", SIGIR 2019); it gives the same decisions as the randomization test on
   these sizes (Smucker, Allan & Carterette, CIKM 2007), and, unlike a resampling test, has an
   exact interval to go with it.
2. **Correction.** Benjamini-Hochberg over the ``m`` metrics compared
   (``scipy.stats.false_discovery_control``): ``p_adj``.  A metric is *significant* when
   ``p_adj <= alpha`` (``alpha = 1 - CI_CONFIDENCE = 0.05``).
3. **Interval.** The paired t-interval of mean(d) at level ``1 - alpha'`` with
   ``alpha' = alpha * max(R, 1) / m`` (``R`` = the number of significant metrics): the
   false-coverage-rate adjusted intervals of Benjamini & Yekutieli (JASA 2005).  BH rejects
   exactly the metrics with ``p <= alpha * R / m``, and t-test/t-interval duality makes the
   interval exclude 0 exactly when ``p < alpha'``, so **the interval excludes 0 if and only if
   the metric is significant**.  With one metric this is the ordinary 95 % t-interval.
4. **Too small to tell.** The minimum detectable effect at 80 % power,
   ``mde = (t(1 - alpha'/2, n-1) + t(power, n-1)) * sd(d) / sqrt(n)``: the normal-approximation
   formula for a paired test, ``delta = (z(1 - alpha/2) + z(power)) * sigma / sqrt(n)`` (Cohen,
   *Statistical Power Analysis*, 1988, ch. 2), with t quantiles so that a non-significant
   difference is always smaller than its ``mde``.
5. **Verdict.** Significant: the better side (``"B better"`` / ``"A better"``).  Otherwise
   ``"too small to tell"`` when ``mde > min_effect`` (the set cannot see a difference of the
   size that matters, default 0.05), else ``"no difference"`` (a difference of ``mde`` or more
   would have been detected 80 % of the time).  ``"identical"`` when no query changed;
   ``"too few queries"`` below 3 (:data:`~rag_metrics.evaluation.MIN_CI_N`: no interval then).

:func:`compare` returns the rule's numbers, the verdict, the technical sentence and a plain
stakeholder sentence (no p-values) per metric; :func:`verdict_table` and
:func:`comparison_summary` give the table and the one-line summary.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rag_metrics.compare.power import MIN_EFFECT, POWER
from rag_metrics.errors import InputError
from rag_metrics.evaluation import CI_CONFIDENCE, DIFFERENCE_RANGE, MIN_CI_N, EvaluationResult, too_few
from rag_metrics.metrics.registry import METRICS, MetricKey, parse_metric

__all__ = ["paired_tests", "compare", "compare_paired", "per_query_deltas", "disagreements", "verdict", "plain_verdict",
           "verdict_table", "comparison_summary", "paired_t_interval", "minimum_detectable_effect",
           "ComparisonRow", "ALPHA", "POWER", "MIN_EFFECT", "DECISION_RULE", "INTERVAL_HEADER", "interval_note"]

#: Significance level of the verdicts (the library's one CI setting: ``1 - CI_CONFIDENCE``).
ALPHA = round(1 - CI_CONFIDENCE, 10)

DECISION_RULE = (
    "Paired t-test per metric on the per-query differences (B - A); Benjamini-Hochberg correction "
    f"across the metrics compared; significant when the adjusted p <= {ALPHA:g}. The interval is the paired "
    f"t-interval at the false-coverage-adjusted level 1 - {ALPHA:g} x max(R, 1) / m (Benjamini-Yekutieli; "
    "R significant of m metrics), so it excludes 0 exactly when the metric is significant. 'Too small to "
    "tell': not significant and the minimum detectable effect (80 % power, from the observed spread of "
    f"the differences and n) is above {MIN_EFFECT:g}."
)

#: Verdict codes, in the order the summary lists them.
VERDICTS = ("B better", "A better", "no difference", "too small to tell", "identical", "too few queries")


@dataclass(frozen=True)
class ComparisonRow:
    metric: str
    k: int | None
    n: int
    mean_a: float
    mean_b: float
    delta: float
    wins: int
    losses: int
    ties: int
    sd: float
    p_ttest: float


def paired_tests(a: np.ndarray, b: np.ndarray, n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Two-sided p-values: paired randomization test (exact when 2^n <= n_resamples) and paired t-test.

    A cross-check for users; :func:`compare` decides with the t-test only (see the module docstring).
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
    return (float(perm.pvalue), _ttest_p(d))


def _ttest_p(d: np.ndarray) -> float:
    """Two-sided paired t-test p of mean(d) = 0: 1 when d is all 0, 0 when d is constant non-zero."""
    from scipy import stats

    if d.size < 2:
        return math.nan
    if np.all(d == 0):
        return 1.0
    if np.all(d == d[0]):
        return 0.0  # constant non-zero difference: the t statistic is infinite
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def paired_t_interval(d: np.ndarray, confidence: float = CI_CONFIDENCE,
                      limits: tuple[float, float] | None = DIFFERENCE_RANGE) -> tuple[float, float]:
    """t-interval of mean(d) at ``confidence``: ``mean +- t(1 - a/2, n-1) * sd / sqrt(n)``, cut to
    ``limits`` (default :data:`~rag_metrics.evaluation.DIFFERENCE_RANGE`, ``(-1, 1)``: a difference
    of two metrics in [0, 1] cannot lie outside it; None keeps the raw interval).

    Dual to the paired t-test: it excludes 0 exactly when the test's p < 1 - confidence (cutting
    to limits that hold 0 keeps that).  ``(nan, nan)`` below :data:`~rag_metrics.evaluation.MIN_CI_N`
    values ("too few"); ``(m, m)`` when every value (2 or more) is m.
    """
    from scipy import stats

    d = np.asarray(d, dtype=np.float64)
    if d.size < 2:
        return (math.nan, math.nan)
    m = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0 or np.all(d == d[0]):
        return (m, m)
    if too_few(d.size):
        return (math.nan, math.nan)
    half = float(stats.t.ppf(1 - (1 - confidence) / 2, d.size - 1)) * sd / math.sqrt(d.size)
    lo, hi = m - half, m + half
    if limits is not None:
        lo, hi = max(lo, limits[0]), min(hi, limits[1])
    return (lo, hi)


def minimum_detectable_effect(sd: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """Smallest true mean difference a two-sided paired t-test at ``alpha`` detects with ``power``.

    ``(t(1 - alpha/2, n-1) + t(power, n-1)) * sd / sqrt(n)``: Cohen's (1988) normal-approximation
    formula ``(z(1 - alpha/2) + z(power)) * sd / sqrt(n)`` with t quantiles for small n.  NaN below
    2 queries; 0 when the differences do not vary.
    """
    from scipy import stats

    if n < 2 or math.isnan(sd):
        return math.nan
    df = n - 1
    return float((stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * sd / math.sqrt(n))


def _check_same_golden(a: EvaluationResult, b: EvaluationResult) -> None:
    if a.query_ids != b.query_ids:
        raise InputError("the two evaluations use different golden sets; compare runs on the same golden set")


def compare(a: EvaluationResult, b: EvaluationResult, keys: Sequence[str | MetricKey],
            alpha: float = ALPHA, power: float = POWER, min_effect: float = MIN_EFFECT,
            name_a: str = "A", name_b: str = "B") -> pd.DataFrame:
    """The verdict table: one row per metric key, every number from the module's decision rule.

    Columns: ``metric, k, n, mean_a, mean_b, delta`` (B - A), ``ci_low, ci_high, ci_level``,
    ``wins, losses, ties`` (for B), ``sd`` (of the per-query differences), ``p_ttest``,
    ``p_ttest_adj`` (Benjamini-Hochberg), ``significant``, ``mde``, ``verdict`` (one of
    :data:`VERDICTS`), ``sentence`` (technical, with the interval and p) and ``plain`` (for
    stakeholders, without p-values).  Interval, p and verdict always agree (module docstring).
    """
    _check_same_golden(a, b)
    pairs = []
    for key in keys:
        mk = key if isinstance(key, MetricKey) else parse_metric(str(key))
        inc = a.included_for(mk) & b.included_for(mk)  # recall may skip questions (EvalOptions.recall_empty)
        pairs.append((mk.name, mk.k, a.values(mk)[inc], b.values(mk)[inc]))
    return compare_paired(pairs, alpha=alpha, power=power, min_effect=min_effect, name_a=name_a, name_b=name_b)


def compare_paired(pairs: Sequence[tuple[str, int | None, np.ndarray, np.ndarray]], alpha: float = ALPHA,
                   power: float = POWER, min_effect: float = MIN_EFFECT, name_a: str = "A", name_b: str = "B"
                   ) -> pd.DataFrame:
    """:func:`compare`'s verdict table from paired values: ``(metric, k, values of A, values of B)``
    per metric, the two arrays aligned on the same items (questions).  The one decision rule of this
    module; :func:`compare` and the answer-system comparison both call it."""
    from scipy import stats

    for name, v in (("alpha", alpha), ("power", power)):
        if not 0 < v < 1:
            raise InputError(f"{name} must be between 0 and 1 (exclusive), got {v!r}")
    if not min_effect >= 0:
        raise InputError(f"min_effect must be >= 0, got {min_effect!r}")
    rows, diffs = [], []
    for metric, k, va, vb in pairs:
        va, vb = np.asarray(va, dtype=np.float64), np.asarray(vb, dtype=np.float64)
        if va.shape != vb.shape:
            raise InputError(f"{metric}: A has {va.size} values and B {vb.size}; pair them on the same items")
        d = vb - va
        diffs.append(d)
        rows.append(ComparisonRow(metric, k, int(d.size), float(va.mean()) if va.size else math.nan,
                                  float(vb.mean()) if vb.size else math.nan,
                                  float(d.mean()) if d.size else math.nan,
                                  int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum()),
                                  float(d.std(ddof=1)) if d.size > 1 else math.nan, _ttest_p(d)))
    cols = ["metric", "k", "n", "mean_a", "mean_b", "delta", "ci_low", "ci_high", "ci_level", "wins", "losses",
            "ties", "sd", "p_ttest", "p_ttest_adj", "significant", "mde", "verdict", "sentence", "plain"]
    if not rows:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame([r.__dict__ for r in rows])
    p = df["p_ttest"].to_numpy(dtype=float)
    ok = ~np.isnan(p)
    adj = np.full_like(p, np.nan)
    if ok.any():
        adj[ok] = stats.false_discovery_control(p[ok], method="bh")
    df["p_ttest_adj"] = adj
    df["significant"] = ok & (np.nan_to_num(adj, nan=1.0) <= alpha)
    m = max(int(ok.sum()), 1)
    alpha_ci = alpha * max(int(df["significant"].sum()), 1) / m
    ci = [paired_t_interval(d, 1 - alpha_ci) for d in diffs]
    df["ci_low"] = [c[0] for c in ci]
    df["ci_high"] = [c[1] for c in ci]
    df["ci_level"] = 1 - alpha_ci
    df["mde"] = [minimum_detectable_effect(sd, n, alpha_ci, power) for sd, n in zip(df["sd"], df["n"])]
    df["verdict"] = [_verdict_code(r, min_effect) for r in df.to_dict("records")]
    df["k"] = df["k"].astype("Int64")
    df["sentence"] = [verdict(r, name_a, name_b) for r in df.to_dict("records")]
    df["plain"] = [plain_verdict(r, name_a, name_b) for r in df.to_dict("records")]
    return df[cols]


def _verdict_code(r: dict, min_effect: float) -> str:
    if r["n"] < 2:
        return "too few queries"
    if r["wins"] == 0 and r["losses"] == 0:
        return "identical"
    if too_few(r["n"]):
        return "too few queries"
    if r["significant"]:
        return "B better" if r["delta"] > 0 else "A better"
    return "too small to tell" if r["mde"] > min_effect else "no difference"


def per_query_deltas(a: EvaluationResult, b: EvaluationResult, key: str | MetricKey) -> pd.DataFrame:
    """query_id, category, a, b, delta, outcome (win/loss/tie for B) for the included queries."""
    _check_same_golden(a, b)
    mk = key if isinstance(key, MetricKey) else parse_metric(str(key))
    inc = a.included_for(mk) & b.included_for(mk)
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


def _label(r: dict) -> str:
    k = r.get("k")
    name = r["metric"]
    if name in METRICS:
        base = METRICS[name].label
    else:  # an answer metric (rag_metrics.metrics.answer_registry: names and labels only, no heavy import)
        from rag_metrics.metrics.answer_registry import ANSWER_METRICS

        base = ANSWER_METRICS[name].label if name in ANSWER_METRICS else name
    return base + ("" if k is None or pd.isna(k) else f"@{k}")


def _level(r: dict) -> str:
    return f"{float(r['ci_level']) * 100:.4g}%"


def verdict(row: pd.Series | dict, name_a: str = "A", name_b: str = "B") -> str:
    """The technical sentence of one :func:`compare` row (interval, p, verdict: one rule)."""
    r = dict(row)
    label, v, n, d = _label(r), r["verdict"], int(r["n"]), float(r["delta"])
    if v == "too few queries":
        return (f"{label}: {n} quer{'y' if n == 1 else 'ies'} to compare; at least {MIN_CI_N} are needed for a "
                "verdict (too few).")
    if v == "identical":
        return f"{label}: identical on all {n} queries."
    lo, hi, p = float(r["ci_low"]), float(r["ci_high"]), float(r["p_ttest_adj"])
    nums = (f"{name_b} - {name_a} = {d:+.3f}, {_level(r)} CI {lo:+.3f} to {hi:+.3f}, "
            f"paired t-test adjusted p = {p:.3g}")
    if v in ("B better", "A better"):
        better = name_b if v == "B better" else name_a
        return (f"{label}: {better} is better by {abs(d):.3f} ({nums}; {name_b} wins {r['wins']}, loses "
                f"{r['losses']}, ties {r['ties']} of {n} queries).")
    mde = float(r["mde"])
    if v == "too small to tell":
        tail = (f"too small to tell: with {n} queries only differences of about {mde:.2f} or more are "
                f"detected (80% power); add queries to decide.")
    else:
        tail = f"no difference: one of {mde:.2f} or more would have been detected (80% power)."
    return f"{label}: no significant difference ({nums}; the interval includes 0); {tail}"


def plain_verdict(row: pd.Series | dict, name_a: str = "A", name_b: str = "B") -> str:
    """The same verdict in plain words for stakeholders (no p-values, no test names)."""
    r = dict(row)
    label, v, n = _label(r), r["verdict"], int(r["n"])
    if v == "too few queries":
        return f"{label}: too few questions to compare {name_a} and {name_b}."
    if v == "identical":
        return f"{label}: {name_a} and {name_b} give the same result on every question."
    ma, mb = float(r["mean_a"]), float(r["mean_b"])
    lo, hi = float(r["ci_low"]), float(r["ci_high"])
    if v in ("B better", "A better"):
        better, worse = (name_b, name_a) if v == "B better" else (name_a, name_b)
        return (f"{label}: {better} does better than {worse} ({mb if v == 'B better' else ma:.2f} vs "
                f"{ma if v == 'B better' else mb:.2f}); the real gain is likely between {min(abs(lo), abs(hi)):.2f} "
                f"and {max(abs(lo), abs(hi)):.2f}.")
    mde = float(r["mde"])
    if v == "too small to tell":
        return (f"{label}: we can't tell {name_a} and {name_b} apart yet ({ma:.2f} vs {mb:.2f}); with {n} "
                f"questions only a difference of about {mde:.2f} or more would reliably show. Add questions to decide.")
    return (f"{label}: {name_a} and {name_b} perform about the same ({ma:.2f} vs {mb:.2f}); a difference of "
            f"{mde:.2f} or more would have shown.")


def verdict_table(df: pd.DataFrame) -> pd.DataFrame:
    """The compact verdict table of a :func:`compare` result: one row per metric with mean A,
    mean B, difference, interval, p, adjusted p, verdict and minimum detectable effect."""
    out = pd.DataFrame({
        "metric": [_label(r) for r in df.to_dict("records")],
        "mean A": df["mean_a"], "mean B": df["mean_b"], "difference (B - A)": df["delta"],
        "CI low": df["ci_low"], "CI high": df["ci_high"], "CI level": df["ci_level"],
        "p": df["p_ttest"], "adjusted p": df["p_ttest_adj"], "verdict": df["verdict"],
        "detectable difference": df["mde"],
    })
    return out.reset_index(drop=True)


#: The interval column's one name in every verdict table (its level depends on how many metrics are
#: significant, so the level goes in :func:`interval_note`, never in the header).
INTERVAL_HEADER = "Interval of B − A (adjusted)"


def interval_note(df: pd.DataFrame) -> str:
    """The level of a :func:`compare` table's intervals, and why (one sentence under the table)."""
    if df.empty:
        return ""
    level = float(df["ci_level"].iloc[0])
    m = max(int(df["p_ttest"].notna().sum()), 1)
    r = int(df["significant"].sum())
    return (f"Intervals at the {level * 100:.4g} % level: 1 − {ALPHA:g} × max(R, 1) / m with R = {r} significant "
            f"of m = {m} metric{'s' if m != 1 else ''} (Benjamini-Yekutieli), so an interval excludes 0 exactly "
            "when its verdict says one is better.")


def comparison_summary(df: pd.DataFrame, name_a: str = "A", name_b: str = "B", plain: bool = False) -> str:
    """One line: how many metrics went each way, and the rule that decided (left out when ``plain``)."""
    if df.empty:
        return "No metric compared."
    counts = df["verdict"].value_counts().to_dict()
    names = {"B better": f"{name_b} better", "A better": f"{name_a} better"}
    parts = [f"{names.get(v, v)} on {counts[v]}" for v in VERDICTS if counts.get(v)]
    n = int(df["n"].max())
    return (f"{name_a} vs {name_b} on {n} queries, {len(df)} metric{'s' if len(df) != 1 else ''}: "
            + ", ".join(parts) + ("." if plain else f" (paired t-test, Benjamini-Hochberg at {ALPHA:g})."))
