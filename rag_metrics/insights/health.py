"""Golden-set health checks: every check returns a pandas DataFrame the app can show as is.

- :func:`unknown_ids`: labelled ids that are not in the corpus (with the closest known id).
- :func:`exact_duplicates` / :func:`near_duplicates`: chunks with the same text, or whose
  embeddings have a cosine above a threshold (labels on one copy make the other a "miss").
- :func:`unlabelled_queries`: questions with no relevant id that are not marked out of scope.
- :func:`judging_candidates`: chunks retrieved in the top K for many questions but never labelled
  for any: the first ids to judge (they are either relevant and missing from the labels, or a
  "hub" chunk that crowds out the right answers).
- :func:`too_easy_queries`: questions whose content words almost all appear in their relevant
  chunk (a lexical retriever cannot miss them; they inflate the scores).
- :func:`ci_width_by_category` / :func:`ci_width_curve`: how wide the 95 % confidence interval
  of a metric is per category now, and how many queries each category needs for a target width.
- :func:`health_checks`: all of the above that the given inputs allow, as a list of
  :class:`HealthCheck` (name, count, table, explanation).

No rounding or formatting is done here; the UI formats.
"""
from __future__ import annotations

import difflib
import hashlib
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from rag_metrics.errors import InputError
from rag_metrics.evaluation import EvaluationResult, bootstrap_ci
from rag_metrics.metrics.registry import MetricKey, parse_metric
from rag_metrics.retrieval.choice import thresholds_for
from rag_metrics.types import OUT_OF_SCOPE, Chunk, GoldenSet

if TYPE_CHECKING:  # pragma: no cover
    import altair as alt

__all__ = [
    "HealthCheck", "STOP_WORDS", "content_words", "unknown_ids", "exact_duplicates", "near_duplicates",
    "unlabelled_queries", "judging_candidates", "too_easy_queries", "ci_width_by_category",
    "ci_width_curve", "ci_width_chart", "health_checks", "ALL_CATEGORIES",
]

#: Category label used for the row/line covering every included query.
ALL_CATEGORIES = "(all)"

# The stop words as text, one space between words (easier to read and edit than a list literal).
_STOP_WORDS_TEXT = """
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each few for from further get gets got had hadn't has hasn't have haven't having he her here
hers herself him himself his how i i'm if in into is isn't it it's its itself just let's me more most
mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same
shan't she should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they're this those through to too under until up very was wasn't we we're were
weren't what what's when where which while who whom why will with won't would wouldn't you you're your
yours yourself yourselves whats hows wheres whos im ive id dont doesnt isnt cant wont also may might
must shall one
"""

#: English stop words removed before measuring word overlap (a compact list; pass your own).
STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())

_WORD = re.compile(r"[\w']+", re.UNICODE)


def content_words(text: str, stop_words: Collection[str] = STOP_WORDS) -> set[str]:
    """Lower-cased words of ``text`` without stop words and one-letter tokens.

    >>> sorted(content_words("How do I export my notes?"))
    ['export', 'notes']
    """
    return {w.strip("'") for w in _WORD.findall(text.lower())
            if len(w.strip("'")) > 1 and w not in stop_words and w.strip("'") not in stop_words}


@dataclass(frozen=True)
class HealthCheck:
    """One health check's outcome: ``count`` problems listed in ``table``."""

    name: str
    title: str
    count: int
    table: pd.DataFrame
    explanation: str
    severity: str = "warning"  # "error", "warning" or "info"

    @property
    def ok(self) -> bool:
        return self.count == 0


# ---- ids ----------------------------------------------------------------------------------------
def unknown_ids(golden: GoldenSet, known_ids: Collection[str]) -> pd.DataFrame:
    """Labelled ids that are not in ``known_ids`` (chunk or document ids of the corpus).

    Columns: ``query_id, question, id, grade, suggestion`` (the most similar known id, or "").
    """
    known = set(known_ids)
    known_list = sorted(known)
    rows = []
    for q in golden:
        for i, g in q.relevant.items():
            if i in known:
                continue
            close = difflib.get_close_matches(i, known_list, n=1, cutoff=0.6) if known_list else []
            rows.append({"query_id": q.id, "question": q.question, "id": i, "grade": int(g),
                         "suggestion": close[0] if close else ""})
    return pd.DataFrame(rows, columns=["query_id", "question", "id", "grade", "suggestion"])


# ---- duplicate chunks ---------------------------------------------------------------------------
def _text_hash(text: str, normalise: bool) -> str:
    t = " ".join(text.lower().split()) if normalise else text
    return hashlib.sha1(t.encode("utf-8")).hexdigest()


def exact_duplicates(chunks: Sequence[Chunk], normalise: bool = True, preview_chars: int = 120) -> pd.DataFrame:
    """Chunks whose text is identical (by SHA-1; ``normalise`` ignores case and runs of whitespace).

    Columns: ``group`` (0, 1, ... by first appearance), ``chunk_id, doc_id, n_copies, text_hash,
    preview``.  Only groups of two or more chunks are listed.
    """
    by_hash: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_hash.setdefault(_text_hash(c.text, normalise), []).append(c)
    rows = []
    group = 0
    for h, cs in by_hash.items():
        if len(cs) < 2:
            continue
        for c in cs:
            rows.append({"group": group, "chunk_id": c.id, "doc_id": c.doc_id, "n_copies": len(cs),
                         "text_hash": h[:12], "preview": " ".join(c.text.split())[:preview_chars]})
        group += 1
    return pd.DataFrame(rows, columns=["group", "chunk_id", "doc_id", "n_copies", "text_hash", "preview"])


def near_duplicates(embeddings: NDArray[np.floating], chunk_ids: Sequence[str], threshold: float = 0.95,
                    doc_ids: Sequence[str] | None = None, block: int = 1024,
                    max_pairs: int = 10_000) -> pd.DataFrame:
    """Pairs of chunks whose embedding cosine similarity is at least ``threshold`` (0.95 is
    all-MiniLM-L6-v2's; another model's is :func:`rag_metrics.retrieval.choice.thresholds_for`).

    ``embeddings[i]`` belongs to ``chunk_ids[i]``; rows are L2-normalised here (zero rows never
    match).  Work is done in blocks of ``block`` rows, so memory stays ``O(block * n)``.

    Columns: ``chunk_a, chunk_b, cosine`` (+ ``doc_a, doc_b, same_doc`` when ``doc_ids`` is given),
    most similar first, at most ``max_pairs`` rows.
    """
    x = np.asarray(embeddings, dtype=np.float32)
    ids = list(chunk_ids)
    if x.ndim != 2 or x.shape[0] != len(ids):
        raise InputError(f"embeddings must have one row per chunk id: got shape {x.shape} for {len(ids)} ids")
    if not (-1.0 <= float(threshold) <= 1.0):
        raise InputError(f"threshold must be a cosine between -1 and 1, got {threshold!r}")
    if doc_ids is not None and len(doc_ids) != len(ids):
        raise InputError(f"doc_ids must have one entry per chunk id: got {len(doc_ids)} for {len(ids)} ids")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
    a_idx: list[NDArray[np.int64]] = []
    b_idx: list[NDArray[np.int64]] = []
    sims: list[NDArray[np.float32]] = []
    n = x.shape[0]
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        s = x[lo:hi] @ x.T
        rows, cols = np.nonzero(s >= threshold - 1e-6)
        rows_g = rows + lo
        keep = cols > rows_g  # upper triangle, no self pairs
        a_idx.append(rows_g[keep])
        b_idx.append(cols[keep])
        sims.append(s[rows[keep], cols[keep]])
    cols_out = ["chunk_a", "chunk_b", "cosine"] + (["doc_a", "doc_b", "same_doc"] if doc_ids is not None else [])
    if not a_idx or not sum(len(a) for a in a_idx):
        return pd.DataFrame(columns=cols_out)
    a = np.concatenate(a_idx)
    b = np.concatenate(b_idx)
    sim = np.minimum(np.concatenate(sims).astype(np.float64), 1.0)
    order = np.lexsort((b, a, -sim))[:max_pairs]
    ids_arr = np.asarray(ids, dtype=object)
    out = pd.DataFrame({"chunk_a": ids_arr[a[order]], "chunk_b": ids_arr[b[order]], "cosine": sim[order]})
    if doc_ids is not None:
        d = np.asarray(list(doc_ids), dtype=object)
        out["doc_a"] = d[a[order]]
        out["doc_b"] = d[b[order]]
        out["same_doc"] = out["doc_a"] == out["doc_b"]
    return out.reset_index(drop=True)


# ---- labels -------------------------------------------------------------------------------------
def unlabelled_queries(golden: GoldenSet) -> pd.DataFrame:
    """Questions with no relevant id whose category is not ``out_of_scope``.

    With no judgment at all they are out of scope (left out of the means); judged with none
    relevant they score 0 in every mean (trec_eval).  Columns: ``query_id,
    question, category, n_judged`` (ids judged non-relevant, grade <= 0).
    """
    rows = [{"query_id": q.id, "question": q.question, "category": q.category, "n_judged": len(q.relevant)}
            for q in golden if not q.has_relevant and q.category != OUT_OF_SCOPE]
    return pd.DataFrame(rows, columns=["query_id", "question", "category", "n_judged"])


def judging_candidates(result: EvaluationResult, k: int = 10, min_queries: int = 2,
                       chunk_text: Mapping[str, str] | None = None, preview_chars: int = 160) -> pd.DataFrame:
    """Ids retrieved in the top ``k`` of at least ``min_queries`` questions but labelled for none.

    "Labelled" means the id appears in any query's labels, with any grade (a grade 0 is a
    judgement too).  Questions marked ``out_of_scope`` do not count: the golden set says the corpus
    cannot answer them, and a "relevant" chunk would quietly bring them into scope (unlabelled
    questions do count: they are the ones waiting for labels).  Columns: ``id, n_queries, share``
    (of the questions that count), ``best_rank``,
    ``mean_rank``, ``query_ids``, ``questions``, ``ranks`` (lists, in golden order: the id's rank in
    each of those questions' rankings), and ``preview`` when
    ``chunk_text`` is given.  Most frequent first.  To label one, add it to a query's
    ``relevant`` map (e.g. :func:`rag_metrics.authoring.golden_edit.upsert_labels`).
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be an integer >= 1, got {k!r}")
    labelled: set[str] = set()
    for q in result.golden:
        labelled.update(q.relevant)
    seen: dict[str, list[tuple[int, int]]] = {}

    scope = np.fromiter((q.category != OUT_OF_SCOPE for q in result.golden.queries), dtype=bool,
                        count=len(result.golden.queries))
    for qi in (int(q) for q in np.flatnonzero(scope)):
        ids, _, _ = result.judged.ranking(qi)
        for rank, i in enumerate(ids[:k], 1):
            if i not in labelled:
                seen.setdefault(i, []).append((qi, rank))
    rows = []
    nq = max(int(scope.sum()), 1)
    for i, hits in seen.items():
        if len(hits) < min_queries:
            continue
        ranks = [r for _, r in hits]
        row = {"id": i, "n_queries": len(hits), "share": len(hits) / nq, "best_rank": min(ranks),
               "mean_rank": float(np.mean(ranks)),
               "query_ids": [result.query_ids[q] for q, _ in hits],
               "questions": [result.golden.queries[q].question for q, _ in hits], "ranks": ranks}
        if chunk_text is not None:
            row["preview"] = " ".join(chunk_text.get(i, "").split())[:preview_chars]
        rows.append(row)
    cols = ["id", "n_queries", "share", "best_rank", "mean_rank", "query_ids", "questions", "ranks"] + \
        (["preview"] if chunk_text is not None else [])
    out = pd.DataFrame(rows, columns=cols)
    if len(out):
        out = out.sort_values(["n_queries", "best_rank", "id"], ascending=[False, True, True]).reset_index(drop=True)
    return out


def too_easy_queries(golden: GoldenSet, chunks: Sequence[Chunk] | Mapping[str, str], threshold: float = 0.8,
                     stop_words: Collection[str] = STOP_WORDS, relevance_level: int = 1,
                     all_queries: bool = False) -> pd.DataFrame:
    """Questions whose content words nearly all occur in one of their relevant chunks.

    ``overlap = |W(question) & W(chunk)| / |W(question)|`` where ``W`` is :func:`content_words`
    (lower-cased, stop words removed); the best relevant chunk counts.  A question copied from its
    passage ("What is the refund window for annual plans?" against "The refund window for annual
    plans is 30 days") scores 1.0: any keyword search finds it, so it says little about the
    retriever.  Real users paraphrase.

    Returns the in-scope queries with ``overlap >= threshold`` (all in-scope queries with
    ``all_queries=True``), highest overlap first.  Columns: ``query_id, question, category,
    chunk_id, overlap, n_words, shared_words, missing_words, too_easy``.
    """
    if not (0.0 <= float(threshold) <= 1.0):
        raise InputError(f"threshold must be between 0 and 1, got {threshold!r}")
    texts = chunks if isinstance(chunks, Mapping) else {c.id: c.text for c in chunks}
    rows = []
    for q in golden:
        if not q.has_relevant:
            continue
        qw = content_words(q.question, stop_words)
        best: tuple[float, str, set[str]] = (-1.0, "", set())
        for i, g in q.relevant.items():
            if g < relevance_level or i not in texts:
                continue
            shared = qw & content_words(texts[i], stop_words)
            ov = len(shared) / len(qw) if qw else 0.0
            if ov > best[0]:
                best = (ov, i, shared)
        if best[0] < 0:
            continue
        ov, cid, shared = best
        if not all_queries and ov < threshold:
            continue
        rows.append({"query_id": q.id, "question": q.question, "category": q.category, "chunk_id": cid,
                     "overlap": ov, "n_words": len(qw), "shared_words": sorted(shared),
                     "missing_words": sorted(qw - shared), "too_easy": ov >= threshold})
    cols = ["query_id", "question", "category", "chunk_id", "overlap", "n_words", "shared_words",
            "missing_words", "too_easy"]
    out = pd.DataFrame(rows, columns=cols)
    if len(out):
        out = out.sort_values(["overlap", "query_id"], ascending=[False, True]).reset_index(drop=True)
    return out


# ---- how many queries are needed ----------------------------------------------------------------
def _metric_key(metric: str | MetricKey, k: int | None) -> MetricKey:
    if isinstance(metric, MetricKey):
        return metric
    return parse_metric(metric) if k is None else parse_metric(f"{metric}@{k}")


def _z(confidence: float) -> float:
    from scipy import stats

    if not (0.0 < confidence < 1.0):
        raise InputError(f"confidence must be between 0 and 1, got {confidence!r}")
    return float(stats.norm.ppf(0.5 + confidence / 2))


def _spread(v: NDArray[np.float64]) -> tuple[float, bool]:
    """Per-query standard deviation; when there is no spread (n < 2 or all equal) a prudent
    Bernoulli value ``sqrt(p(1-p))`` with ``p = (sum + 0.5) / (n + 1)`` stands in (flagged)."""
    n = v.size
    sd = float(np.std(v, ddof=1)) if n >= 2 else 0.0
    if sd > 0:
        return sd, False
    p = (float(np.clip(v, 0, 1).sum()) + 0.5) / (n + 1)
    return math.sqrt(p * (1 - p)), True


def ci_width_by_category(result: EvaluationResult, metric: str | MetricKey = "ndcg", k: int | None = 10,
                         target_half_width: float = 0.05, confidence: float = 0.95,
                         n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Current CI half-width of a metric's mean per category, and the queries needed for a target.

    For each category (and :data:`ALL_CATEGORIES` for every included query) with ``n`` queries:
    ``half_width`` is half the percentile-bootstrap CI (:func:`~rag_metrics.evaluation.bootstrap_ci`),
    ``half_width_normal = z * sd / sqrt(n)`` the normal approximation (``sd`` with ``ddof=1``).
    A half-width shrinks like ``1 / sqrt(n)``, so the queries needed for ``target_half_width`` are
    ``n_needed = ceil(n * (half_width / target)^2)`` (= ``ceil((z * sd / target)^2)`` under the
    normal approximation) and ``more_needed = max(0, n_needed - n)``.

    With no spread yet (one query, or all values equal: e.g. 3 hits out of 3) the bootstrap
    width is 0, which says nothing; a Bernoulli stand-in ``sd = sqrt(p(1-p))``, ``p = (sum + 0.5)
    / (n + 1)``, is used instead and ``no_spread`` is True.

    Columns: ``category, n, mean, sd, half_width, half_width_normal, ci_low, ci_high, target,
    n_needed, more_needed, no_spread``.
    """
    if not (target_half_width > 0):
        raise InputError(f"target_half_width must be > 0, got {target_half_width!r}")
    key = _metric_key(metric, k)
    z = _z(confidence)
    values = result.values(key)
    inc = result.included
    cats = result.categories
    groups = [(ALL_CATEGORIES, inc)] + [(c, inc & (cats == c)) for c in dict.fromkeys(cats[inc].tolist())]
    rows = []
    for cat, sel in groups:
        v = values[sel]
        n = int(v.size)
        if n == 0:
            continue
        sd, flat = _spread(v)
        lo, hi = bootstrap_ci(v, confidence, n_resamples, seed)
        hw_boot = (hi - lo) / 2
        hw_norm = z * sd / math.sqrt(n)
        hw = hw_norm if flat else hw_boot
        n_needed = int(math.ceil(n * (hw / target_half_width) ** 2 - 1e-9)) if hw > 0 else n
        rows.append({"category": cat, "n": n, "mean": float(v.mean()), "sd": sd, "half_width": hw,
                     "half_width_normal": hw_norm, "ci_low": lo, "ci_high": hi, "target": float(target_half_width),
                     "n_needed": max(n_needed, 1), "more_needed": max(0, n_needed - n), "no_spread": flat})
    cols = ["category", "n", "mean", "sd", "half_width", "half_width_normal", "ci_low", "ci_high", "target",
            "n_needed", "more_needed", "no_spread"]
    return pd.DataFrame(rows, columns=cols)


def ci_width_curve(result: EvaluationResult, metric: str | MetricKey = "ndcg", k: int | None = 10,
                   n_values: Iterable[int] | None = None, confidence: float = 0.95, n_resamples: int = 2000,
                   target_half_width: float = 0.05) -> pd.DataFrame:
    """Projected CI half-width against the number of queries, per category (for a chart).

    ``half_width(n) = half_width_now * sqrt(n_now / n)``.  Default ``n_values``: 5 to 4x the
    largest needed count, on a roughly logarithmic grid (always including each category's current
    n).  Columns: ``category, n_queries, half_width, current`` (True on the row of today's n).
    """
    table = ci_width_by_category(result, metric, k, target_half_width, confidence, n_resamples)
    if table.empty:
        return pd.DataFrame(columns=["category", "n_queries", "half_width", "current"])
    if n_values is None:
        hi = int(max(table["n_needed"].max(), table["n"].max()) * 2)
        grid = np.unique(np.round(np.geomspace(2, max(hi, 10), 40)).astype(int)).tolist()
    else:
        grid = sorted({int(n) for n in n_values if int(n) >= 1})
    rows = []
    for r in table.itertuples(index=False):
        for n in sorted(set(grid) | {int(r.n)}):
            rows.append({"category": r.category, "n_queries": n,
                         "half_width": r.half_width * math.sqrt(r.n / n), "current": n == r.n})
    return pd.DataFrame(rows)


def ci_width_chart(curve: pd.DataFrame, target_half_width: float | None = 0.05,
                   title: str = "Confidence-interval half-width vs number of queries") -> alt.LayerChart:
    """Altair chart of :func:`ci_width_curve`: one line per category, today's n as points, the
    target as a dashed rule."""
    import altair as alt

    base = alt.Chart(curve).encode(
        x=alt.X("n_queries:Q", scale=alt.Scale(type="log"), title="queries in the category"),
        y=alt.Y("half_width:Q", title="95% CI half-width (±)"),
        color=alt.Color("category:N", title="category"),
    )
    lines = base.mark_line().encode(tooltip=["category", "n_queries", alt.Tooltip("half_width:Q", format=".3f")])
    now = base.transform_filter(alt.datum.current).mark_point(filled=True, size=80).encode(
        tooltip=["category", alt.Tooltip("n_queries:Q", title="queries now"),
                 alt.Tooltip("half_width:Q", format=".3f")])
    layers = [lines, now]
    if target_half_width is not None:
        layers.append(alt.Chart(pd.DataFrame({"target": [float(target_half_width)]})).mark_rule(
            strokeDash=[6, 4], color="#555").encode(y="target:Q"))
    return cast(alt.LayerChart, alt.layer(*layers).properties(title=title, width=480, height=280))


# ---- all at once --------------------------------------------------------------------------------
def health_checks(golden: GoldenSet, chunks: Sequence[Chunk] | None = None,
                  result: EvaluationResult | None = None, embeddings: NDArray[np.floating] | None = None,
                  *, k: int = 10, near_duplicate_threshold: float | None = None, min_queries: int = 3,
                  overlap_threshold: float = 0.8, metric: str = "ndcg",
                  target_half_width: float = 0.05, model: str | None = None) -> list[HealthCheck]:
    """Run every check the inputs allow (``embeddings`` rows follow ``chunks``, made by ``model``: its
    near-duplicate threshold, :func:`rag_metrics.retrieval.choice.thresholds_for`, unless
    ``near_duplicate_threshold`` is given; default model: the bundled all-MiniLM-L6-v2, 0.95)."""
    if near_duplicate_threshold is None:
        near_duplicate_threshold = thresholds_for(model).near_duplicate
    out: list[HealthCheck] = []
    if chunks is not None:
        known = {c.id for c in chunks} | {c.doc_id for c in chunks}
        t = unknown_ids(golden, known)
        out.append(HealthCheck("unknown_ids", "Labelled ids not in the corpus", len(t), t,
                               "These labels can never be retrieved: fix the id (see suggestion) or re-label "
                               "after a re-chunking.", "error"))
        t = exact_duplicates(chunks)
        out.append(HealthCheck("exact_duplicates", "Chunks with identical text", int(t["group"].nunique()), t,
                               "A label on one copy makes retrieving the other copy count as a miss."))
        if embeddings is not None:
            t = near_duplicates(embeddings, [c.id for c in chunks], near_duplicate_threshold,
                                doc_ids=[c.doc_id for c in chunks])
            out.append(HealthCheck("near_duplicates", f"Near-duplicate chunks (cosine >= {near_duplicate_threshold})",
                                   len(t), t, "Label near-duplicates together, or remove one copy."))
    t = unlabelled_queries(golden)
    out.append(HealthCheck("unlabelled", "Questions with no label, not marked out of scope", len(t), t,
                           f"Label at least one relevant chunk, or set the category to {OUT_OF_SCOPE!r}."))
    if result is not None:
        texts = {c.id: c.text for c in chunks} if chunks is not None else None
        t = judging_candidates(result, k, min_queries, texts)
        out.append(HealthCheck("judging_candidates", f"Often retrieved (top {k}) but never labelled", len(t), t,
                               "Judge these first: relevant ones are missing labels (they lower every metric "
                               "unfairly); irrelevant ones are hubs crowding out the answers.", "info"))
    if chunks is not None:
        t = too_easy_queries(golden, chunks, overlap_threshold)
        out.append(HealthCheck("too_easy", f"Questions copying their passage (word overlap >= {overlap_threshold})",
                               len(t), t, "Rephrase them the way a user would ask; they inflate the scores.",
                               "info"))
    if result is not None and result.n_queries:
        t = ci_width_by_category(result, metric, k, target_half_width)
        n_short = int((t["more_needed"] > 0).sum())
        out.append(HealthCheck("ci_width", f"Queries needed for ±{target_half_width} on {metric}@{k}", n_short, t,
                               "Categories whose confidence interval is wider than the target, and how many "
                               "queries each needs.", "info"))
    return out
