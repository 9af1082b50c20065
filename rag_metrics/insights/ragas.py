"""RAGAS bridge: RAGAS's LLM-free context metrics from golden labels, and a RAGAS-ready export.

RAGAS (``pip install ragas``) scores retrieval with *context precision* and *context recall*.
Its LLM-based variants ask a judge model whether each retrieved passage is relevant; its
**ID-based** variants need no model: they compare the retrieved chunk ids with reference ids.
Our golden set *is* a set of reference ids, so the ID-based scores can be computed exactly and
offline, and shown next to the trec_eval metrics they resemble.

Definitions (verified against the ragas 0.4.3 source, ``ragas/metrics/_context_precision.py``
and ``ragas/metrics/_context_recall.py``; the same code ships in ragas 0.2.x and 0.3.x)
----------------------------------------------------------------------------------------------
``IDBasedContextPrecision`` (metric name ``id_based_context_precision``)::

    retrieved_ids_set = set(str(id) for id in retrieved_context_ids)
    reference_ids_set = set(str(id) for id in reference_context_ids)
    total_retrieved = len(retrieved_ids_set)          # 0 -> NaN ("cannot calculate precision")
    hits = sum(1 for ret_id in retrieved_ids_set if str(ret_id) in reference_ids_set)
    score = hits / total_retrieved

``IDBasedContextRecall`` (metric name ``id_based_context_recall``)::

    hits = sum(1 for ref_id in reference_ids_set if str(ref_id) in retrieved_ids_set)
    total_refs = len(reference_ids_set)
    score = hits / total_refs if total_refs > 0 else np.nan

Rank-weighted *context precision* (the formula every other RAGAS context-precision metric uses,
``LLMContextPrecisionWithReference`` / ``NonLLMContextPrecisionWithReference`` /
``ContextPrecision``, method ``_calculate_average_precision``; documented at
https://docs.ragas.io/en/stable/concepts/metrics/available_metrics/context_precision/ as
``Context Precision@K = sum_{k=1..K} (Precision@k * v_k) / (total number of relevant items in the
top K results)``)::

    denominator = sum(verdict_list) + 1e-10
    numerator = sum((sum(verdict_list[: i + 1]) / (i + 1)) * verdict_list[i]
                    for i in range(len(verdict_list)))
    score = numerator / denominator

Those metrics obtain the verdicts ``v_k`` from a judge model (or from string similarity to
reference passages).  Here ``v_k = 1`` exactly when the chunk at rank k is a labelled relevant id
(grade >= the relevance level), which is what the judge is meant to decide; we call this
``ragas_context_precision``.  The ``+ 1e-10`` makes RAGAS print a perfect score as 0.9999999999;
we compute the exact value (pass ``epsilon=1e-10`` to :func:`rank_weighted_context_precision`
to reproduce RAGAS bit for bit).

Parity with ragas
-----------------
- **Duplicates.** ragas scores the list it is given.  With ``duplicates="raw"`` (default) the
  RAGAS-named values and the export use the retrieved list as ranked, a repeated id included
  (ID-based metrics count it once through ``set``, the rank-weighted precision sees it at every
  position), so ``ragas.evaluate`` on our export gives our numbers.  ``duplicates="first"``
  keeps each id's best-ranked occurrence, the rule our trec_eval metrics use.  At document level
  the list is always the collapsed document ranking (a document at the rank of its best chunk).
- **Aggregates.** ``ragas.evaluate`` averages each metric over every row of the dataset with
  ``np.nanmean``: an out-of-scope question (no reference id) scores 0 for ID-based precision
  (something was retrieved, nothing matches) and NaN for ID-based recall (left out).
  :func:`context_metrics_summary` gives both named aggregates: ``mean`` over the queries that
  enter our means (in scope), and ``ragas_evaluate_mean`` over every exported row, ragas's way.

See :data:`RELATION` for how these relate to precision@k, recall@k and AP@k, and
:data:`JUDGE_METRICS_NOTE` for faithfulness and answer relevancy (computed on the Answers page).
"""
from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from rag_metrics.errors import InputError
from rag_metrics.evaluation import CI_CONFIDENCE, CI_RESAMPLES, CI_SEED, EvaluationResult, bootstrap_ci
from rag_metrics.metrics.kernels import check_k
from rag_metrics.ordering import duplicate_rows
from rag_metrics.types import Chunk

__all__ = [
    "RAGAS_VERSION_CHECKED", "RAGAS_METRICS", "RELATION", "JUDGE_METRICS", "JUDGE_METRICS_NOTE",
    "id_context_precision", "id_context_recall", "rank_weighted_context_precision",
    "context_metrics", "context_metrics_summary",
    "ragas_rows", "ragas_jsonl", "ragas_csv", "RAGAS_COLUMNS", "LEGACY_COLUMNS",
]

#: The ragas release whose source the definitions above were checked against.
RAGAS_VERSION_CHECKED = "0.4.3"

#: Our column name -> (RAGAS class, RAGAS metric name, the trec_eval-style metric it is shown next to).
RAGAS_METRICS: dict[str, tuple[str, str, str]] = {
    "ragas_id_context_precision": ("IDBasedContextPrecision", "id_based_context_precision", "precision"),
    "ragas_id_context_recall": ("IDBasedContextRecall", "id_based_context_recall", "recall"),
    "ragas_context_precision": ("ContextPrecision / NonLLMContextPrecisionWithReference "
                                "(verdicts from labels)", "context_precision", "map"),
}

RELATION = """\
How the RAGAS context metrics relate to ours, for one query at cutoff K
(h_K = relevant ids in the top K, |R| = all relevant ids, n = ids retrieved, R-ids = ids with
grade >= the relevance level; the retrieved list is cut to the top K before RAGAS sees it).

- RAGAS ID-based context recall = h_K / |R| = our recall@K (trec_eval recall.K), for every
  in-scope query. They differ only when (a) the query has no relevant id: RAGAS gives NaN, we give
  0 and leave the query out of the mean; (b) you choose our BEIR-style option
  recall_denominator="cap" (h_K / min(K, |R|)).

- RAGAS ID-based context precision = h_K / min(K, n) (relevant share of what was retrieved);
  our precision@K = h_K / K (trec_eval P.K divides by K even when fewer were retrieved).
  They coincide whenever at least K ids were retrieved; with fewer, RAGAS is higher
  (2 retrieved, 1 relevant, K = 5: RAGAS 1/2, P@5 = 1/5). Nothing retrieved: RAGAS NaN, ours 0.
  Neither looks at the order inside the top K.

- RAGAS context precision (rank-weighted) = (1 / h_K) * sum over relevant ranks i <= K of h_i / i;
  our AP@K (trec_eval map_cut.K) = (1 / |R|) * the same sum. So RAGAS CP@K = AP@K * |R| / h_K:
  equal when every relevant id is in the top K (h_K = |R|), otherwise RAGAS is higher because it
  ignores the relevant ids that were missed (one relevant id at rank 1 and nine missed:
  RAGAS CP = 1.0, AP = 0.1). Both are 0 when nothing relevant is in the top K.
  RAGAS adds 1e-10 to its denominator, so its perfect score prints as 0.9999999999.

Read RAGAS context precision as "how well ordered is what was found" and AP@K / recall@K as
"how much of what should be found was found, and how high".
"""

#: Answer-side RAGAS metrics that need a judge model; shown, never computed offline.
JUDGE_METRICS: dict[str, str] = {
    "faithfulness": (
        "Share of the claims in the generated answer that the retrieved contexts support. A judge "
        "model splits the answer into claims and checks each against the contexts; 1.0 means "
        "nothing in the answer was made up. Needs: question, answer, retrieved contexts."),
    "answer_relevancy": (
        "How directly the answer addresses the question. A judge model writes questions that the "
        "answer would answer; the score is their mean embedding cosine to the real question. "
        "Incomplete or padded answers score lower. Needs: question, answer (and an embedding model)."),
}

JUDGE_METRICS_NOTE = (
    "Faithfulness and answer relevancy judge the generated answer, not the retrieval, so they are computed "
    "on the Answers page: with an LLM judge model you connect (ragas 0.4.3's prompts and arithmetic), "
    "or as offline approximations without one.\n"
    + "\n".join(f"- {name}: {text}" for name, text in JUDGE_METRICS.items())
)


# ---- the RAGAS definitions on ids ---------------------------------------------------------------
def id_context_precision(retrieved_ids: Sequence[Any], reference_ids: Collection[Any]) -> float:
    """RAGAS ``IDBasedContextPrecision``: ``|set(retrieved) & set(reference)| / |set(retrieved)|``.

    Ids are compared as strings; duplicates count once; no retrieved id gives NaN (as in RAGAS).
    Cut ``retrieved_ids`` to the top K yourself for a value "at K".

    >>> id_context_precision(["b", "a", "d", "c"], {"a", "c"})
    0.5
    """
    ret = {str(i) for i in retrieved_ids}
    ref = {str(i) for i in reference_ids}
    if not ret:
        return math.nan
    return sum(1 for i in ret if i in ref) / len(ret)


def id_context_recall(retrieved_ids: Sequence[Any], reference_ids: Collection[Any]) -> float:
    """RAGAS ``IDBasedContextRecall``: ``|set(reference) & set(retrieved)| / |set(reference)|``.

    No reference id gives NaN (as in RAGAS).

    >>> id_context_recall(["b", "a", "d"], ["a", "c"])
    0.5
    """
    ret = {str(i) for i in retrieved_ids}
    ref = {str(i) for i in reference_ids}
    if not ref:
        return math.nan
    return sum(1 for i in ref if i in ret) / len(ref)


def rank_weighted_context_precision(verdicts: Sequence[int | bool], epsilon: float = 0.0) -> float:
    """RAGAS's rank-weighted context precision of a list of 0/1 verdicts (rank 1 first).

    ``sum_i (sum(v[:i+1]) / (i+1)) * v[i] / (sum(v) + epsilon)``; 0 when no verdict is 1 (RAGAS:
    ``0 / 1e-10 = 0``).  ``epsilon=1e-10`` reproduces RAGAS's ``_calculate_average_precision``.

    >>> rank_weighted_context_precision([0, 1, 0, 1])   # (1/2 + 2/4) / 2
    0.5
    """
    v = np.asarray([1 if x else 0 for x in verdicts], dtype=np.float64)
    if v.size == 0:
        return 0.0
    h = np.cumsum(v)
    num = float(np.sum(h / np.arange(1, v.size + 1) * v))
    den = float(v.sum()) + epsilon
    return num / den if den > 0 else 0.0


# ---- per query, from an evaluation ------------------------------------------------------------
def _check_k(k: object) -> int:
    return check_k(k)


Duplicates = Literal["raw", "first"]


def _check_duplicates(duplicates: object) -> None:
    if duplicates not in ("raw", "first"):
        raise InputError(f"duplicates must be 'raw' (score the list as ragas does) or 'first' (best-ranked "
                         f"occurrence, as trec_eval), got {duplicates!r}")


def _raw_top_k(result: EvaluationResult, k: int) -> dict[int, list[str]]:
    """Golden row -> the raw top-``k`` ids, for the queries whose raw top k repeats an id.

    Raw = the run's rows of the query ranked trec_eval's way (score descending, ties by id
    descending, NaN last) without removing repeated ids.  Every other query's raw top k equals
    its deduplicated one.  Chunk level only (document level collapses by definition).
    """
    run = result.run
    if result.options.level != "chunk" or len(run) < 2:
        return {}
    qc, qun = run.factorized_qids()
    ic, iun = run.factorized_ids()
    dup = duplicate_rows(qc, ic)
    if not dup.any():
        return {}
    pos = {q: i for i, q in enumerate(result.query_ids)}
    out: dict[int, list[str]] = {}
    for code in np.unique(qc[dup]).tolist():
        qid = str(qun[code])
        if qid not in pos:
            continue
        rows = np.flatnonzero(qc == code)
        items = [(str(iun[ic[r]]), float(run.scores[r])) for r in rows]
        items = [(i, -math.inf if math.isnan(s) else s) for i, s in items]
        items.sort(key=lambda t: t[0].encode("utf-8"), reverse=True)
        items.sort(key=lambda t: t[1], reverse=True)  # stable: id descending among equal scores
        top = [i for i, _ in items[:k]]
        if len(set(top)) < len(top):
            out[pos[qid]] = top
    return out


def _ragas_arrays(result: EvaluationResult, k: int, duplicates: Duplicates = "raw") -> dict[str, NDArray[np.float64]]:
    """RAGAS values for every golden query (golden order), from the judged relevance arrays;
    with ``duplicates="raw"``, queries whose raw top k repeats an id are scored on that list."""
    judged = result.judged
    level = result.options.relevance_level
    depth = judged.depth
    n_ret = np.minimum(judged.n_retrieved, k).astype(np.float64)
    if depth:
        rel = (judged.grades[:, : min(k, depth)] >= level).astype(np.float64)
        h_prefix = np.cumsum(rel, axis=1)
        ranks = np.arange(1, rel.shape[1] + 1, dtype=np.float64)
        ap_sum = np.sum(h_prefix / ranks * rel, axis=1)
        h_k = h_prefix[:, -1] if rel.shape[1] else np.zeros(len(n_ret))
    else:
        ap_sum = np.zeros(len(n_ret))
        h_k = np.zeros(len(n_ret))
    n_rel = (judged.ideal_grades >= level).sum(axis=1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(n_ret > 0, h_k / np.where(n_ret > 0, n_ret, 1), np.nan)
        rec = np.where(n_rel > 0, h_k / np.where(n_rel > 0, n_rel, 1), np.nan)
        cp = np.where(h_k > 0, ap_sum / np.where(h_k > 0, h_k, 1), 0.0)
    if duplicates == "raw":
        for qi, top in _raw_top_k(result, k).items():
            q = result.golden.queries[qi]
            ref = {i for i, g in q.relevant.items() if g >= level}
            prec[qi] = id_context_precision(top, ref)
            rec[qi] = id_context_recall(top, ref)
            cp[qi] = rank_weighted_context_precision([i in ref for i in top])
    return {"hits": h_k, "n_retrieved": n_ret, "n_relevant": n_rel,
            "ragas_id_context_precision": prec, "ragas_id_context_recall": rec,
            "ragas_context_precision": cp}


def context_metrics(result: EvaluationResult, k: int, duplicates: Duplicates = "raw") -> pd.DataFrame:
    """Per-query RAGAS context metrics at ``k`` next to precision@k, recall@k and AP@k.

    One row per golden query (golden order).  Columns: ``query_id, category, in_scope, included,
    n_relevant, n_retrieved`` (distinct ids in the top k), ``hits`` (relevant in the top k),
    ``precision@k``, ``ragas_id_context_precision``, ``recall@k``, ``ragas_id_context_recall``,
    ``map@k``, ``ragas_context_precision``.  RAGAS columns are NaN where RAGAS returns NaN
    (nothing retrieved; no reference id) and follow ``duplicates`` (module docstring); the
    other columns use the deduplicated ranking, as our metrics do.  See :data:`RELATION`.
    """
    k = _check_k(k)
    _check_duplicates(duplicates)
    r = _ragas_arrays(result, k, duplicates)
    df = pd.DataFrame({
        "query_id": list(result.query_ids),
        "category": result.categories,
        "in_scope": result.in_scope,
        "included": result.included,
        "n_relevant": r["n_relevant"].astype(np.int64),
        "n_retrieved": r["n_retrieved"].astype(np.int64),
        "hits": r["hits"].astype(np.int64),
        f"precision@{k}": result.values("precision", k),
        "ragas_id_context_precision": r["ragas_id_context_precision"],
        f"recall@{k}": result.values("recall", k),
        "ragas_id_context_recall": r["ragas_id_context_recall"],
        f"map@{k}": result.values("map", k),
        "ragas_context_precision": r["ragas_context_precision"],
    })
    return df


_PAIRS = (
    ("ragas_id_context_precision", "precision", "RAGAS ID-based context precision",
     "equal to precision@K when at least K ids were retrieved; RAGAS divides by min(K, n)"),
    ("ragas_id_context_recall", "recall", "RAGAS ID-based context recall",
     "equal to recall@K for every in-scope query (both h_K / |R|)"),
    ("ragas_context_precision", "map", "RAGAS context precision (rank-weighted)",
     "AP@K * |R| / h_K: equal to AP@K when all relevant ids are in the top K, else higher"),
)


def context_metrics_summary(result: EvaluationResult, k: int, ci: bool = True, confidence: float = CI_CONFIDENCE,
                            n_resamples: int = CI_RESAMPLES, seed: int = CI_SEED,
                            duplicates: Duplicates = "raw") -> pd.DataFrame:
    """Means at ``k`` of each RAGAS context metric beside its trec_eval-style counterpart.

    Two named aggregates of each RAGAS metric:

    - ``mean`` (with ``ci_low, ci_high, n``): the **in-scope mean**, over the queries that enter
      our means (:attr:`EvaluationResult.included`), NaN values (nothing retrieved, no reference
      id) left out.  Comparable with ``ours_mean``.
    - ``ragas_evaluate_mean`` (with ``ragas_evaluate_n``): **ragas's own aggregate**, what
      ``ragas.evaluate`` reports on :func:`ragas_rows`' export at the same ``k``: ``np.nanmean``
      over every golden query, out-of-scope ones included (ID-based precision scores them 0
      when something was retrieved; ID-based recall is NaN for them and left out).

    Other columns: ``ragas_metric, label, ours`` (e.g. ``precision@5``), ``ours_mean,
    ours_ci_low, ours_ci_high, ours_n, n_equal`` (included queries where both values agree to
    1e-12), ``relation``.
    """
    k = _check_k(k)
    per = context_metrics(result, k, duplicates)
    inc = per["included"].to_numpy(bool)
    rows = []
    for col, ours, label, relation in _PAIRS:
        every = per[col].to_numpy(np.float64)
        every = every[~np.isnan(every)]
        v = per[col].to_numpy(np.float64)[inc]
        o = per[f"{ours}@{k}"].to_numpy(np.float64)[inc]
        vv = v[~np.isnan(v)]
        lo, hi = bootstrap_ci(vv, confidence, n_resamples, seed) if ci else (math.nan, math.nan)
        olo, ohi = bootstrap_ci(o, confidence, n_resamples, seed) if ci else (math.nan, math.nan)
        rows.append({
            "ragas_metric": col, "label": label,
            "mean": float(vv.mean()) if vv.size else math.nan, "ci_low": lo, "ci_high": hi,
            "n": int(vv.size),
            "ragas_evaluate_mean": float(every.mean()) if every.size else math.nan,
            "ragas_evaluate_n": int(every.size), "ours": f"{ours}@{k}",
            "ours_mean": float(o.mean()) if o.size else math.nan, "ours_ci_low": olo, "ours_ci_high": ohi,
            "ours_n": int(o.size), "n_equal": int(np.sum(np.isclose(v, o, rtol=0, atol=1e-12))),
            "relation": relation,
        })
    return pd.DataFrame(rows)


# ---- RAGAS-ready dataset --------------------------------------------------------------------
#: Column names of ragas >= 0.2 (``SingleTurnSample`` / ``EvaluationDataset.from_list``).
RAGAS_COLUMNS = ("user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids",
                 "reference_context_ids", "reference", "response")
#: Column names of ragas 0.1 (``datasets.Dataset`` with question/contexts/ground_truth/answer).
LEGACY_COLUMNS = ("question", "contexts", "ground_truth", "answer")
_LIST_COLUMNS = ("retrieved_contexts", "reference_contexts", "retrieved_context_ids",
                 "reference_context_ids", "contexts")


def _chunk_texts(chunks: Sequence[Chunk] | Mapping[str, str]) -> Mapping[str, str]:
    if isinstance(chunks, Mapping):
        return chunks
    return {c.id: c.text for c in chunks}


def ragas_rows(result: EvaluationResult, chunks: Sequence[Chunk] | Mapping[str, str], k: int,
               answers: Mapping[str, str] | None = None,
               columns: Literal["both", "ragas", "legacy"] = "both",
               include_out_of_scope: bool = True,
               chunk_to_doc: Mapping[str, str] | None = None,
               duplicates: Duplicates = "raw") -> list[dict[str, Any]]:
    """One RAGAS sample per golden query: the top-``k`` retrieved chunks and the labels.

    The ids are exactly those our metrics judge: at document level (``EvalOptions(level=
    "document")``) ``retrieved_context_ids`` are documents (each at the rank of its best chunk) and
    ``retrieved_contexts`` the text of that best chunk; chunk labels are mapped to documents
    through ``chunk_to_doc`` (needed at document level to find each document's best chunk;
    document labels are used as they are).

    Fields (``columns="ragas"``, the ragas >= 0.2 names): ``user_input`` (the question),
    ``retrieved_contexts`` (texts of the top-k chunks, rank order), ``retrieved_context_ids``,
    ``reference_context_ids`` (ids with grade >= the relevance level, best grade first),
    ``reference_contexts`` (their texts, where known), ``reference`` (the expected answer, or
    None), ``response`` (from ``answers[query_id]``, or None).  ``columns="legacy"`` gives the
    ragas 0.1 names ``question, contexts, ground_truth, answer``; ``"both"`` (default) gives all.
    ``query_id`` and ``category`` are always included (ragas ignores unknown fields).

    ``duplicates="raw"`` (default) exports the top k as ranked, a repeated id included (what
    :func:`context_metrics` scores, so ragas on this export gives its numbers); ``"first"`` keeps
    each id's best-ranked occurrence.

    Raises :class:`InputError` when a retrieved id has no text in ``chunks``.
    """
    k = _check_k(k)
    _check_duplicates(duplicates)
    raw = _raw_top_k(result, k) if duplicates == "raw" else {}
    if columns not in ("both", "ragas", "legacy"):
        raise InputError(f"columns must be 'both', 'ragas' or 'legacy', got {columns!r}")
    texts = _chunk_texts(chunks)
    answers = answers or {}
    level = result.options.relevance_level
    doc_level = result.options.level == "document"
    chunk_rankings = result.run.rankings() if doc_level else {}
    rows: list[dict[str, Any]] = []
    for qi, q in enumerate(result.golden.queries):
        if not include_out_of_scope and not result.in_scope[qi]:
            continue
        retrieved = raw[qi] if qi in raw else [str(i) for i in result.judged.ranking(qi)[0][:k]]
        source = retrieved  # the chunk behind each id: at document level, the document's best chunk
        if doc_level:
            best: dict[str, str] = {}
            for cid, _ in chunk_rankings.get(q.id, []):
                best.setdefault((chunk_to_doc or {}).get(cid, cid), cid)
            source = [best.get(i, i) for i in retrieved]
        missing = [i for i in source if i not in texts]
        if missing:
            raise InputError(f"query {q.id!r}: retrieved chunk {missing[0]!r} has no text in the chunks given "
                             f"({len(missing)} missing); pass the chunks the run was retrieved from")
        ref_ids = [i for i in q.relevant_ids if q.relevant[i] >= level]
        if doc_level and chunk_to_doc is not None:
            ref_ids = list(dict.fromkeys(chunk_to_doc.get(i, i) for i in ref_ids))
        ctx = [texts[i] for i in source]
        ref_ctx = [texts[i] for i in ref_ids if i in texts]
        answer = answers.get(q.id)
        row: dict[str, Any] = {"query_id": q.id, "category": q.category}
        if columns in ("both", "ragas"):
            row.update({"user_input": q.question, "retrieved_contexts": ctx, "reference_contexts": ref_ctx,
                        "retrieved_context_ids": retrieved, "reference_context_ids": ref_ids,
                        "reference": q.expected_answer, "response": answer})
        if columns in ("both", "legacy"):
            row.update({"question": q.question, "contexts": ctx, "ground_truth": q.expected_answer,
                        "answer": answer})
            if columns == "legacy":
                row.update({"retrieved_context_ids": retrieved, "reference_context_ids": ref_ids})
        rows.append(row)
    return rows


def ragas_jsonl(result: EvaluationResult, chunks: Sequence[Chunk] | Mapping[str, str], k: int,
                answers: Mapping[str, str] | None = None,
                columns: Literal["both", "ragas", "legacy"] = "both",
                include_out_of_scope: bool = True, chunk_to_doc: Mapping[str, str] | None = None,
                duplicates: Duplicates = "raw") -> str:
    """:func:`ragas_rows` as JSON Lines text (UTF-8, one sample per line).

    Load it with ``ragas.EvaluationDataset.from_list([json.loads(l) for l in text.splitlines()])``.
    """
    rows = ragas_rows(result, chunks, k, answers, columns, include_out_of_scope, chunk_to_doc, duplicates)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def ragas_csv(result: EvaluationResult, chunks: Sequence[Chunk] | Mapping[str, str], k: int,
              answers: Mapping[str, str] | None = None,
              columns: Literal["both", "ragas", "legacy"] = "both",
              include_out_of_scope: bool = True, chunk_to_doc: Mapping[str, str] | None = None,
              duplicates: Duplicates = "raw") -> str:
    """:func:`ragas_rows` as CSV text; list columns hold a JSON-encoded list in one cell.

    Read back with ``pandas.read_csv`` and ``json.loads`` on the list columns (``contexts``,
    ``retrieved_contexts``, ``reference_contexts``, ``*_context_ids``).  Missing values are empty.
    """
    rows = ragas_rows(result, chunks, k, answers, columns, include_out_of_scope, chunk_to_doc, duplicates)
    if not rows:
        return ""
    fields = list(rows[0])
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({f: (json.dumps(v, ensure_ascii=False) if f in _LIST_COLUMNS else ("" if v is None else v))
                    for f, v in r.items()})
    return buf.getvalue()
