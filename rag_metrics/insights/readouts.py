"""Dashboard and failure-page readouts: an :class:`~rag_metrics.evaluation.EvaluationResult` shaped
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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.evaluation import CI_RESAMPLES, evaluate
from rag_metrics.metrics.registry import METRICS
from rag_metrics.types import GoldenSet as _GoldenSet

if TYPE_CHECKING:  # pragma: no cover
    from rag_metrics.evaluation import EvaluationResult
    from rag_metrics.metrics.explain import MetricExplanation
    from rag_metrics.metrics.options import EvalOptions
    from rag_metrics.retrieval.memo import RetrievalMemo
    from rag_metrics.types import GoldenSet, Run

__all__ = [
    "MRR_READING_TABLE", "MRR_BELOW_TABLE", "mrr_reading", "mrr_reading_rows", "TARGETS", "target_checks",
    "targets_caption", "achievable", "ideal_run", "card_table", "hit_rate_table", "first_rank_histogram",
    "score_range", "abstention_sweep",
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
#: The rank each row of :data:`MRR_READING_TABLE` reads (about 1 / value).
_ROW_RANK = (1, 2, 3, 4, 10)

#: The lesson's targets, ``(metric, k, threshold)``: met when the mean is strictly above the
#: threshold, at the cutoff the lesson defines the target for (``None``: MRR over the whole
#: ranking); the sidebar's K does not move them.
TARGETS: tuple[tuple[str, int | None, float], ...] = (("mrr", None, 0.7), ("precision", 5, 0.6))


def mrr_reading(mrr: float | None, unit: str = "chunk", k: int | None = None) -> str:
    """Plain-language reading of an MRR value, from :data:`MRR_READING_TABLE` (``unit``: what a
    label names, ``"chunk"`` or ``"document"``; ``k``: the cutoff of MRR@k, ``None`` = the whole ranking).

    The reading is the row with the largest value ``<= mrr`` (so 0.5 is "Good" and 0.4999
    "Acceptable"); below the last row (0.1) it is :data:`MRR_BELOW_TABLE`.  A row's "around rank r"
    is only said when MRR@k can see rank r (r <= k): MRR@1 is the share of questions answered at
    rank 1, and at a small K a low value means "often below rank K or missing".

    >>> mrr_reading(0.5).split(":")[0], mrr_reading(0.4999).split(":")[0], mrr_reading(0.0999).split(":")[0]
    ('Good', 'Acceptable', 'Very poor')
    >>> "rank 2" in mrr_reading(0.5, k=1)
    False
    """
    if mrr is None or math.isnan(mrr):
        return "No in-scope queries: MRR is undefined."
    for (value, reading), rank in zip(MRR_READING_TABLE, _ROW_RANK):
        if mrr >= value:
            if k is None or rank <= k:
                return reading.replace("chunk", unit)
            word = reading.split(":")[0]
            if k == 1:
                return (f"{word}: at K = 1, MRR@1 is the share of questions with a relevant {unit} at rank 1 "
                        "(the same as hit rate@1); the others have none there.")
            return (f"{word} for K = {k}: only ranks 1 to {k} count, so the first relevant {unit} is often below "
                    f"rank {k} or missing (1 / MRR ≈ {rank} is not a rank MRR@{k} can see).")
    if k is not None and k < 10:
        return (f"Very poor for K = {k}: the first relevant {unit} is usually below rank {k} or missing.")
    return MRR_BELOW_TABLE.replace("chunk", unit)


def mrr_reading_rows(unit: str = "chunk") -> pd.DataFrame:
    """The lesson's MRR table as the dashboard shows it: columns ``MRR`` (text) and ``Reading``."""
    return pd.DataFrame({"MRR": [str(v) for v, _ in MRR_READING_TABLE],
                         "Reading": [r.replace("chunk", unit) for _, r in MRR_READING_TABLE]})


# ---- the best a golden set allows (the ideal ranking) ---------------------------------------
def ideal_run(golden: GoldenSet) -> Run:
    """The ideal ranking of every question: its positively graded ids, highest grade first (a
    question with no positive grade retrieves nothing).  Built from the golden set's labels only."""
    from rag_metrics.types import Run

    return Run.from_dict({q.id: {i: float(g) for i, g in q.relevant.items() if g > 0} for q in golden},
                         name="ideal ranking")


def _ideal_values(result: EvaluationResult, metric: str, k: int | None) -> NDArray[np.float64]:
    opts = replace(result.options, level="chunk", missing_queries="zero")  # the labels' own ids
    return evaluate(result.golden, ideal_run(result.golden), opts).values(metric, k)


def achievable(source: EvaluationResult | GoldenSet, metric: str, k: int | None = None,
               options: EvalOptions | None = None) -> float:
    """The best mean of ``metric@k`` any ranking can reach on this golden set: the mean under the
    ideal ranking (:func:`ideal_run`), over the same questions as the evaluation's mean.

    ``source``: an :class:`EvaluationResult` (its golden set, options and questions in the mean) or
    a :class:`GoldenSet` (with ``options``, default trec_eval's).  On the sample, P@5 = 0.431: 41 of
    the 64 in-scope questions have fewer than 3 relevant chunks.

    >>> from rag_metrics import GoldenSet
    >>> g = GoldenSet.from_qrels({"q1": {"a": 1}, "q2": {"a": 1, "b": 2, "c": 1}})
    >>> achievable(g, "precision", 2), achievable(g, "mrr")
    (0.75, 1.0)
    """
    from rag_metrics.evaluation import EvaluationResult, evaluate
    from rag_metrics.metrics.options import EvalOptions

    if isinstance(source, _GoldenSet):
        opts = options or EvalOptions()
        source = evaluate(source, ideal_run(source), replace(opts, level="chunk"))
    elif not isinstance(source, EvaluationResult):
        raise InputError(f"achievable() needs an EvaluationResult or a GoldenSet, got {type(source).__name__}")
    v = _ideal_values(source, metric, k)[source.included_for(metric)]
    return float(v.mean()) if v.size else float("nan")


def _target_reason(result: EvaluationResult, metric: str, k: int | None, threshold: float, best: float,
                   unit: str, lang: str = "en") -> str:
    """Why no ranking reaches ``metric@k > threshold``: how many questions in the mean cannot (in English,
    or in Danish for ``lang="da"``, the lesson's other language)."""
    inc = result.included
    ideal = _ideal_values(result, metric, k)[inc]
    n, short = int(inc.sum()), int((ideal < threshold).sum())
    if lang == "da":
        return _target_reason_da(result, metric, k, threshold, best, unit, n, short)
    which = "in-scope questions" if result.options.out_of_scope == "exclude" else "questions"
    n_oos = int((inc & ~result.in_scope).sum())
    oos = f" ({n_oos} of them out of scope, counted as misses)" if n_oos else ""
    name = f"{METRICS[metric].label}@{k}" if k is not None else METRICS[metric].label
    if metric == "precision" and k is not None:
        need = max(1, math.ceil(threshold * k - 1e-9))
        return (f"{short} of {n} {which} have fewer than {need} relevant {unit}s{oos}, so even a perfect ranking "
                f"gives {name} = {best:.3f}.")
    if metric in ("mrr", "hit_rate"):
        return (f"{short} of {n} {which} have no relevant {unit}{oos}, so even a perfect ranking gives "
                f"{name} = {best:.3f}.")
    return (f"{short} of {n} {which} cannot reach {threshold:g} even ranked perfectly{oos}: "
            f"the best is {name} = {best:.3f}.")


def _target_reason_da(result: EvaluationResult, metric: str, k: int | None, threshold: float, best: float,
                      unit: str, n: int, short: int) -> str:
    which = "spørgsmål inden for emnet" if result.options.out_of_scope == "exclude" else "spørgsmål"
    n_oos = int((result.included & ~result.in_scope).sum())
    oos = f" ({n_oos} af dem uden for emnet, talt som bomme)" if n_oos else ""
    name = f"{METRICS[metric].label}@{k}" if k is not None else METRICS[metric].label
    b = f"{best:.3f}".replace(".", ",")
    if metric == "precision" and k is not None:
        need = max(1, math.ceil(threshold * k - 1e-9))
        return (f"{short} af {n} {which} har færre end {need} relevante {unit}s{oos}, så selv en perfekt rangering "
                f"giver {name} = {b}.")
    if metric in ("mrr", "hit_rate"):
        return (f"{short} af {n} {which} har ingen relevant {unit}{oos}, så selv en perfekt rangering giver "
                f"{name} = {b}.")
    t = f"{threshold:g}".replace(".", ",")
    return f"{short} af {n} {which} kan ikke nå {t} selv med en perfekt rangering{oos}: det bedste er {name} = {b}."


def target_checks(result: EvaluationResult, k: int | None = None, unit: str = "chunk", lang: str = "en"
                  ) -> pd.DataFrame:
    """The lesson's targets (:data:`TARGETS`), each at the cutoff the lesson defines it for, beside
    the best value this golden set allows there (:func:`achievable`).

    Columns: metric, k (the target's cutoff, ``None`` for MRR over the whole ranking), value, target,
    met, best, reachable (``best > target``), why (a sentence when the target is out of reach, else "").
    ``k`` (the sidebar's K) is accepted and ignored: the targets do not move with it.  ``lang="da"``: the
    ``why`` sentences in Danish (the lesson's other language).
    """
    rows = []
    for name, tk, threshold in TARGETS:
        v = result.mean(name, tk)
        best = achievable(result, name, tk)
        reachable = bool(not math.isnan(best) and best > threshold)
        rows.append({"metric": name, "k": tk, "value": v, "target": threshold,
                     "met": bool(not math.isnan(v) and v > threshold), "best": best, "reachable": reachable,
                     "why": "" if reachable or math.isnan(best) else
                     _target_reason(result, name, tk, threshold, best, unit, lang)})
    out = pd.DataFrame(rows, columns=["metric", "k", "value", "target", "met", "best", "reachable", "why"])
    out["k"] = out["k"].astype("Int64")  # <NA>: the whole ranking
    return out


def target_label(metric: str, k: int | None, lang: str = "en") -> str:
    """How a target's metric is named wherever it is shown: ``"Precision@5"``, and for a target over
    the whole ranking ``"MRR (whole ranking)"`` (Danish: ``"MRR (hele rangeringen)"``), so it is never read
    as the card's MRR@K."""
    name = METRICS[metric].label if metric in METRICS else metric
    whole = "hele rangeringen" if lang == "da" else "whole ranking"
    return f"{name} ({whole})" if k is None else f"{name}@{k}"


def targets_caption(k: int | None = None) -> str:
    """The targets in words, at the lesson's cutoffs, e.g. ``"MRR > 0.7 and Precision@5 > 0.6"``."""
    parts = [f"{METRICS[name].label}{'' if tk is None else f'@{tk}'} > {threshold:g}"
             for name, tk, threshold in TARGETS]
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


def failure_verdict(first_relevant_rank: object, unit: str = "chunk") -> str:
    """How a failure at K reads: ``would hit at K=r`` (its first relevant item lies below K, at rank
    r) or ``no relevant <unit> in the whole ranking``."""
    if first_relevant_rank is None or first_relevant_rank is pd.NA or pd.isna(first_relevant_rank):
        return f"no relevant {unit} in the whole ranking"
    return f"would hit at K={int(first_relevant_rank)}"  # type: ignore[call-overload]


def failure_table(failures: pd.DataFrame) -> pd.DataFrame:
    """One row per failure (of :func:`failures_with_text`), for a table: query, question, category,
    top score, and would hit at K (<NA>: no relevant id retrieved; :func:`failure_verdict` in words)."""
    return pd.DataFrame({
        "query_id": failures["query_id"], "question": failures["question"],
        "category": failures["category"].fillna("").astype(str), "top_score": failures["top_score"],
        "would_hit_at": failures["first_relevant_rank"],
    }, columns=["query_id", "question", "category", "top_score", "would_hit_at"])


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
    return pd.DataFrame([{"metric": METRICS[m].label, "description": METRICS[m].description,
                          "formula": METRICS[m].formula, "trec_eval": METRICS[m].trec_eval} for m in metrics])


def worst_query(result: EvaluationResult, metric: str, k: int) -> str | None:
    """The in-mean query with the lowest ``metric@k`` (ties: the smallest query id); ``None`` when no
    query enters the mean.  The corpus map opens on it (the most instructive picture)."""
    values = result.values(metric, k)
    pairs = [(float(v), q) for q, v, ok in zip(result.query_ids, values, result.included) if ok]
    return min(pairs)[1] if pairs else None
