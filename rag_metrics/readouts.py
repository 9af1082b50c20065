"""Dashboard and failure-page readouts: an :class:`~rag_metrics.evaluate.EvaluationResult` shaped
into the small tables and sentences the app shows.

- the lesson's MRR reading (:data:`MRR_READING_TABLE`, :func:`mrr_reading`) and targets
  (:data:`TARGETS`, :func:`target_checks`);
- metric cards, hit rates at fixed cutoffs, the first-relevant-rank histogram;
- abstention: top-score range, refusal sweep, suggested threshold;
- failures and one query's ranking with chunk texts, the metric explanation table, live search
  results, the metric glossary, a validation report as a table.

Formatting (rounding, percentages) is left to the UI.  No streamlit import here.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_metrics.errors import ValidationReport
from rag_metrics.evaluate import CI_RESAMPLES

if TYPE_CHECKING:  # pragma: no cover
    from rag_metrics.evaluate import EvaluationResult
    from rag_metrics.explain import MetricExplanation
    from rag_metrics.retrieval.memo import RetrievalMemo

__all__ = [
    "MRR_READING_TABLE", "MRR_BELOW_TABLE", "mrr_reading", "mrr_reading_rows", "TARGETS", "target_checks",
    "targets_caption", "card_table", "hit_rate_table", "first_rank_histogram", "score_range", "abstention_sweep",
    "suggest_threshold", "failures_with_text", "ranking_with_text", "report_table", "explanation_table",
    "live_results", "metric_glossary", "worst_query",
]

# ---- the lesson's MRR table and targets --------------------------------------------------------
#: The lesson's table of MRR values (shown on the dashboard), best first: ``(value, reading)``.
#: A value of 1 / r means the first relevant chunk is, on average, around rank r.
MRR_READING_TABLE: tuple[tuple[float, str], ...] = (
    (1.0, "Perfect: the first relevant chunk is always at rank 1."),
    (0.5, "Good: on average the first relevant chunk is around rank 2."),
    (0.33, "Acceptable: on average the first relevant chunk is around rank 3."),
    (0.25, "Weak: on average the first relevant chunk is around rank 4."),
    (0.1, "Poor: on average the first relevant chunk is around rank 10, or often missing."),
)
#: The reading below the table's last row.
MRR_BELOW_TABLE = "Very poor: the first relevant chunk is usually missing or far below rank 10."

#: The lesson's targets, ``(metric, threshold)``: each is met when the mean at the current K is
#: strictly above the threshold.
TARGETS: tuple[tuple[str, float], ...] = (("mrr", 0.7), ("precision", 0.6))


def mrr_reading(mrr: float | None) -> str:
    """Plain-language reading of an MRR value, from :data:`MRR_READING_TABLE`.

    The reading is the row with the largest value ``<= mrr`` (so 0.5 is "Good" and 0.4999
    "Acceptable"); below the last row (0.1) it is :data:`MRR_BELOW_TABLE`.

    >>> mrr_reading(0.5).split(":")[0], mrr_reading(0.4999).split(":")[0], mrr_reading(0.0999).split(":")[0]
    ('Good', 'Acceptable', 'Very poor')
    """
    if mrr is None or math.isnan(mrr):
        return "No in-scope queries: MRR is undefined."
    for value, reading in MRR_READING_TABLE:
        if mrr >= value:
            return reading
    return MRR_BELOW_TABLE


def mrr_reading_rows() -> pd.DataFrame:
    """The lesson's MRR table as the dashboard shows it: columns ``MRR`` (text) and ``Reading``."""
    return pd.DataFrame({"MRR": [str(v) for v, _ in MRR_READING_TABLE],
                         "Reading": [r for _, r in MRR_READING_TABLE]})


def target_checks(result: EvaluationResult, k: int) -> pd.DataFrame:
    """The lesson's targets at cutoff ``k``: MRR@k > 0.7 and precision@k > 0.6.

    Columns: metric, k (always ``k``), value, target, met.
    """
    rows = []
    for name, threshold in TARGETS:
        v = result.mean(name, k)
        rows.append({"metric": name, "k": int(k), "value": v, "target": threshold,
                     "met": bool(not math.isnan(v) and v > threshold)})
    return pd.DataFrame(rows)


def targets_caption(k: int) -> str:
    """The targets in words at cutoff ``k``, e.g. ``"MRR@5 > 0.7 and precision@5 > 0.6"``."""
    from rag_metrics.metrics.registry import METRICS

    parts = [f"{METRICS[name].label}@{k} > {threshold:g}" for name, threshold in TARGETS]
    return " and ".join(parts)


# ---- cards, hit rates, ranks, abstention -------------------------------------------------------
def card_table(result: EvaluationResult, k: int, metrics: Sequence[str], n_resamples: int = CI_RESAMPLES
               ) -> pd.DataFrame:
    """metric, k, mean, ci_low, ci_high, n: one row per metric at ``k`` (95 % bootstrap CI)."""
    return result.summary(metrics, ks=(k,), ci=True, n_resamples=n_resamples)


def hit_rate_table(result: EvaluationResult, ks: Sequence[int] = (1, 3, 5, 10)) -> pd.DataFrame:
    """k, hit_rate (mean over included queries), hits (count), n."""
    inc = result.included
    rows = []
    for k in ks:
        v = result.values("hit_rate", k)[inc]
        rows.append({"k": int(k), "hit_rate": float(v.mean()) if v.size else float("nan"),
                     "hits": int(v.sum()), "n": int(v.size)})
    return pd.DataFrame(rows)


def first_rank_histogram(result: EvaluationResult) -> pd.DataFrame:
    """Counts of the first relevant rank over in-scope queries: columns rank_label, rank, count.

    ``rank`` 0 means no relevant chunk was retrieved within the depth (label "not found").
    """
    ranks = np.asarray(result.first_relevant_rank())[result.in_scope]
    if ranks.size == 0:
        return pd.DataFrame(columns=["rank_label", "rank", "count"])
    values, counts = np.unique(ranks, return_counts=True)
    depth = result.depth
    rows = [{"rank_label": ("not found" if r == 0 else str(int(r))),
             "rank": int(r) if r > 0 else depth + 1, "count": int(c)} for r, c in zip(values, counts)]
    return pd.DataFrame(rows).sort_values("rank").reset_index(drop=True)


def score_range(result: EvaluationResult) -> tuple[float, float]:
    """Min and max of the top retrieval score per query (NaN-free; (0, 1) when empty)."""
    top = np.asarray(result.judged.top_score, dtype=np.float64)
    top = top[np.isfinite(top)]
    if top.size == 0:
        return (0.0, 1.0)
    lo, hi = float(top.min()), float(top.max())
    if hi <= lo:
        hi = lo + 1.0
    return (lo, hi)


def abstention_sweep(result: EvaluationResult, n: int = 50) -> pd.DataFrame:
    """For thresholds across the top-score range: share of out-of-scope queries correctly refused
    and of in-scope queries wrongly refused (columns threshold, oos_refused_rate, in_scope_refused_rate)."""
    lo, hi = score_range(result)
    rows = []
    n_oos, n_in = result.n_out_of_scope, result.n_in_scope
    for t in np.linspace(lo, hi, n):
        a = result.abstention(float(t))
        rows.append({"threshold": float(t),
                     "oos_refused_rate": a["out_of_scope_refused"] / n_oos if n_oos else float("nan"),
                     "in_scope_refused_rate": a["in_scope_refused"] / n_in if n_in else float("nan")})
    return pd.DataFrame(rows)


def suggest_threshold(result: EvaluationResult, n: int = 200) -> float | None:
    """Abstention threshold maximising Youden's J: (share of out-of-scope queries refused) minus
    (share of in-scope queries refused); ``None`` without both kinds of query."""
    if result.n_out_of_scope == 0 or result.n_in_scope == 0:
        return None
    top = np.asarray(result.judged.top_score, dtype=np.float64)
    candidates = np.unique(np.concatenate([top[np.isfinite(top)], np.linspace(*score_range(result), n)]))
    best, best_j = None, -np.inf
    for t in candidates:
        a = result.abstention(float(t))
        j = a["out_of_scope_refused"] / result.n_out_of_scope - a["in_scope_refused"] / result.n_in_scope
        if j > best_j + 1e-12:
            best, best_j = float(t), j
    return best


# ---- failures, rankings, explanations ----------------------------------------------------------
def failures_with_text(result: EvaluationResult, k: int, chunk_text: Mapping[str, str]) -> pd.DataFrame:
    """:meth:`EvaluationResult.failures` with the expected and retrieved chunks' texts and a
    "would hit at K" column (the first relevant rank beyond k, <NA> when never retrieved)."""
    f = result.failures(k)
    f["expected_text"] = [[chunk_text.get(i, "(id not in the corpus)") for i in ids] for ids in f["expected_ids"]]
    f["retrieved_text"] = [[chunk_text.get(i, "") for i in ids] for ids in f["retrieved_ids"]]
    f["would_hit_at"] = f["first_relevant_rank"]
    return f


def ranking_with_text(result: EvaluationResult, query_id: str, k: int, chunk_text: Mapping[str, str],
                      chunk_doc: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The top ``k`` of one query: rank, id, document, score, grade, relevant, text."""
    r = result.ranking(query_id).head(k).copy()
    r["document"] = [(chunk_doc or {}).get(i, "") for i in r["id"]]
    r["text"] = [chunk_text.get(i, "") for i in r["id"]]
    return r


def report_table(report: ValidationReport) -> pd.DataFrame:
    """The problems of a report as a table: severity, where, message (errors first)."""
    probs = report.errors + report.warnings
    return pd.DataFrame({"severity": [p.severity for p in probs], "where": [p.where for p in probs],
                         "message": [p.message for p in probs]}, columns=["severity", "where", "message"])


def explanation_table(explanations: Mapping[str, MetricExplanation], metrics: Sequence[str]) -> pd.DataFrame:
    """metric, k, formula, substituted, value for the metrics asked (registry order kept)."""
    rows = []
    for m in metrics:
        e = explanations.get(m)
        if e is not None:
            rows.append({"metric": m, "k": e.k, "formula": e.formula, "substituted": e.substituted,
                         "value": e.value})
    return pd.DataFrame(rows, columns=["metric", "k", "formula", "substituted", "value"])


def live_results(memo: RetrievalMemo, text: str, n: int, chunk_text: Mapping[str, str],
                 chunk_doc: Mapping[str, str], labels: Mapping[str, int] | None = None,
                 level: int = 1) -> pd.DataFrame:
    """Top ``n`` chunks for a free-text query: rank, id, document, score, grade, relevant, text."""
    hits = memo.search(text)[:n]
    labels = labels or {}
    return pd.DataFrame({
        "rank": list(range(1, len(hits) + 1)), "id": [i for i, _ in hits],
        "document": [chunk_doc.get(i, "") for i, _ in hits], "score": [s for _, s in hits],
        "grade": [int(labels.get(i, labels.get(chunk_doc.get(i, ""), 0))) for i, _ in hits],
        "relevant": [int(labels.get(i, labels.get(chunk_doc.get(i, ""), 0))) >= level for i, _ in hits],
        "text": [chunk_text.get(i, "") for i, _ in hits]})


def metric_glossary(metrics: Sequence[str]) -> pd.DataFrame:
    """metric (label), description, formula, trec_eval name: from the metric registry."""
    from rag_metrics.metrics.registry import METRICS

    return pd.DataFrame([{"metric": METRICS[m].label, "description": METRICS[m].description,
                          "formula": METRICS[m].formula, "trec_eval": METRICS[m].trec_eval} for m in metrics])


def worst_query(result: EvaluationResult, metric: str, k: int) -> str | None:
    """The in-mean query with the lowest ``metric@k`` (ties: the smallest query id); ``None`` when no
    query enters the mean.  The corpus map opens on it (the most instructive picture)."""
    values = result.values(metric, k)
    pairs = [(float(v), q) for q, v, ok in zip(result.query_ids, values, result.included) if ok]
    return min(pairs)[1] if pairs else None
