"""The Streamlit caches of the Compare, insights and golden-set pages (every cache of the app's core, the one
evaluation, is in :mod:`ui.cache`; the Answers page's in :mod:`ui.cache_answers`).  Only caches: what they
compute is the library's (or :mod:`ui.context`'s, for the small readouts the pages show).

``config_golden / config_evaluation``        a Compare-page configuration (A or B): its golden set and evaluation
``comparison / ab_category_table``           paired A vs B tables (``rag_metrics.compare.paired``)
``corpus_map(...)``                          the projection, keyed by chunking fingerprint + question
                                             texts + labels/evaluation (key) + K + method
``map_spec(...)``                            the Altair chart as a Vega-Lite dict (building it costs
                                             ~0.3 s; filling from the cache costs nothing)
``context_table / context_summary``          RAGAS context metrics at K
``ragas_export``                             RAGAS-ready JSONL / CSV text
``health_*``                                 each health check's table
``report_content_for / chart_spec``          the stakeholder report's content and its charts
``golden_export / golden_validation / ...``  the golden set editor's, keyed by the golden fingerprint
``reference_proposals``                      labels proposed from a reference answer
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from rag_metrics.compare import ab
from rag_metrics.compare.ab import category_deltas
from rag_metrics.compare.paired import compare
from rag_metrics.evaluation import EvaluationResult, evaluate
from rag_metrics.io.golden import validate_golden
from rag_metrics.retrieval.memo import RetrievalMemo
from rag_metrics.types import GoldenSet
from ui import context
from ui.cache import chunk_embeddings, question_embeddings
from ui.context import ChunkSet, EvalKey


# ---- A vs B (the Compare page) ------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=16)
def config_golden(_golden: GoldenSet, _labelled: ChunkSet, _target: ChunkSet, golden_fp: str, labelled_fp: str,
                  target_fp: str, level: str) -> tuple[GoldenSet, Any, dict[str, str] | None]:
    """A configuration's golden set (labels carried to its chunking at chunk level), the carry-over
    report, and ``chunk_to_doc`` at document level: once per golden version and pair of chunkings."""
    golden, report = ab.golden_for(_golden, level, _labelled.chunks, _target.chunks)  # type: ignore[arg-type]
    c2d = ab.chunk_to_doc(_labelled.chunks, _target.chunks) if level == "document" else None
    return golden, report, c2d


@st.cache_resource(show_spinner=False, max_entries=16)
def config_evaluation(_memo: RetrievalMemo, _golden: GoldenSet, _c2d: dict[str, str] | None,
                      key: EvalKey) -> EvaluationResult:
    """One configuration's evaluation (``key`` names chunking, retriever, model, golden, options)."""
    run = _memo.run_for(_golden)
    return evaluate(_golden, run, key.options, chunk_to_doc=_c2d, depth=key.depth)


@st.cache_data(show_spinner=False, max_entries=64)
def comparison(_a: EvaluationResult, _b: EvaluationResult, key_a: EvalKey, key_b: EvalKey,
               keys: tuple[str, ...]) -> pd.DataFrame:
    """``compare(a, b, keys)``: the verdict table (verdict, sentence, plain), as ``rag-metrics compare``."""
    return compare(_a, _b, list(keys))


@st.cache_data(show_spinner=False, max_entries=64)
def ab_category_table(_a: EvaluationResult, _b: EvaluationResult, key_a: EvalKey, key_b: EvalKey, metric: str,
                   k: int) -> pd.DataFrame:
    return category_deltas(_a, _b, metric, k)


# ---- corpus map ------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=24)
def corpus_map(_chunks: ChunkSet, _golden: GoldenSet, _result: EvaluationResult, chunks_fp: str,
               key: EvalKey, k: int, method: str, relevance_level: int, model: str = ""):
    """:func:`rag_metrics.insights.projection.project_corpus` of the current chunks, golden set and run."""
    from rag_metrics.insights.projection import project_corpus

    cx = chunk_embeddings(_chunks, chunks_fp, model)
    qx = question_embeddings([q.question for q in _golden], model)
    if len(_golden) == 0:
        qx = np.zeros((0, cx.shape[1]), dtype=np.float32)
    return project_corpus(list(_chunks.chunks), cx, _golden, qx, _result, k=k, method=method,  # type: ignore[arg-type]
                          relevance_level=relevance_level)


@st.cache_data(show_spinner=False, max_entries=64)
def map_spec(_cmap: Any, key: EvalKey, k: int, method: str, query_id: str | None, color: str,
             height: int = 860) -> dict:
    """The corpus map chart as a Vega-Lite spec (width follows the container; legends below the plot:
    :func:`ui.context.legends_below`); ``key``, ``k`` and ``method`` name the projection ``_cmap``."""
    from rag_metrics.insights.projection import corpus_map_chart

    chart = corpus_map_chart(_cmap, query_id=query_id, color=color, width="container", height=height,  # type: ignore[arg-type]
                             title=None)
    return context.legends_below(chart.to_dict())


# ---- RAGAS ------------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=64)
def context_table(_result: EvaluationResult, key: EvalKey, k: int) -> pd.DataFrame:
    from rag_metrics.insights.ragas import context_metrics

    return context_metrics(_result, k)


@st.cache_data(show_spinner=False, max_entries=64)
def context_summary(_result: EvaluationResult, key: EvalKey, k: int) -> pd.DataFrame:
    from rag_metrics.insights.ragas import context_metrics_summary

    return context_metrics_summary(_result, k)


@st.cache_data(show_spinner=False, max_entries=32)
def ragas_export(_result: EvaluationResult, _chunks: ChunkSet, key: EvalKey, k: int, fmt: str,
                 document_level: bool) -> str:
    """RAGAS-ready dataset text (``fmt`` ``jsonl`` or ``csv``)."""
    from rag_metrics.insights.ragas import ragas_csv, ragas_jsonl

    fn = ragas_jsonl if fmt == "jsonl" else ragas_csv
    return fn(_result, _chunks.text, k, chunk_to_doc=_chunks.doc if document_level else None)


# ---- golden-set health --------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=32)
def health_unknown(_golden: GoldenSet, _known: Sequence[str], golden_fp: str, ids_key: str) -> pd.DataFrame:
    from rag_metrics.insights.health import unknown_ids

    return unknown_ids(_golden, set(_known))


@st.cache_data(show_spinner=False, max_entries=16)
def health_exact_duplicates(_chunks: ChunkSet, chunks_fp: str) -> pd.DataFrame:
    from rag_metrics.insights.health import exact_duplicates

    return exact_duplicates(_chunks.chunks)


@st.cache_data(show_spinner=False, max_entries=16)
def health_duplicate_groups(_chunks: ChunkSet, chunks_fp: str) -> int:
    """How many groups of identical chunks there are."""
    return context.duplicate_groups(health_exact_duplicates(_chunks, chunks_fp))


@st.cache_data(show_spinner=False, max_entries=64)
def health_near_duplicates(_chunks: ChunkSet, chunks_fp: str, threshold: float, model: str = "") -> pd.DataFrame:
    from rag_metrics.insights.health import near_duplicates

    return near_duplicates(chunk_embeddings(_chunks, chunks_fp, model), _chunks.ids, threshold,
                           doc_ids=[c.doc_id for c in _chunks.chunks])


@st.cache_data(show_spinner=False, max_entries=32)
def health_unlabelled(_golden: GoldenSet, golden_fp: str) -> pd.DataFrame:
    from rag_metrics.insights.health import unlabelled_queries

    return unlabelled_queries(_golden)


@st.cache_data(show_spinner=False, max_entries=64)
def health_candidates(_result: EvaluationResult, _text: dict, key: EvalKey, k: int, min_queries: int) -> pd.DataFrame:
    from rag_metrics.insights.health import judging_candidates

    return judging_candidates(_result, k, min_queries, _text)


@st.cache_data(show_spinner=False, max_entries=64)
def health_too_easy(_golden: GoldenSet, _text: dict, golden_fp: str, ids_key: str, threshold: float,
                    relevance_level: int) -> pd.DataFrame:
    from rag_metrics.insights.health import too_easy_queries

    return too_easy_queries(_golden, _text, threshold, relevance_level=relevance_level, all_queries=True)


@st.cache_data(show_spinner=False, max_entries=64)
def health_too_easy_count(_golden: GoldenSet, _text: dict, golden_fp: str, ids_key: str, threshold: float,
                          relevance_level: int) -> int:
    """How many in-scope questions are flagged too easy at ``threshold``."""
    return context.too_easy_count(health_too_easy(_golden, _text, golden_fp, ids_key, threshold, relevance_level))


@st.cache_data(show_spinner=False, max_entries=64)
def health_ci_width(_result: EvaluationResult, key: EvalKey, metric: str, k: int, target: float) -> pd.DataFrame:
    from rag_metrics.insights.health import ci_width_by_category

    return ci_width_by_category(_result, metric, k, target)


@st.cache_data(show_spinner=False, max_entries=64)
def health_ci_overall(_result: EvaluationResult, key: EvalKey, metric: str, k: int, target: float) -> dict | None:
    """The ``(all)`` row of :func:`health_ci_width` (``None`` when no query enters the mean)."""
    return context.overall_ci_row(health_ci_width(_result, key, metric, k, target))


@st.cache_data(show_spinner=False, max_entries=64)
def health_ci_curve_spec(_result: EvaluationResult, key: EvalKey, metric: str, k: int, target: float) -> dict:
    from rag_metrics.insights.health import ci_width_chart, ci_width_curve

    curve = ci_width_curve(_result, metric, k, target_half_width=target)
    return ci_width_chart(curve, target, title="").properties(width="container", height=340).to_dict()


# ---- report ---------------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=16)
def report_content_for(_result: EvaluationResult, _text: dict, _config: dict, _comparison: Any, report_key: tuple,
                       k: int, names: tuple[str, str], title: str, options: tuple = (), _answers: Any = None):
    from rag_metrics.report.html import report_content

    return report_content(_result, k=k, chunk_text=_text, config=_config, comparison=_comparison,
                          comparison_names=names, title=title, answers=_answers, **dict(options))


@st.cache_data(show_spinner=False, max_entries=32)
def chart_spec(_chart: Any, key: tuple) -> dict:
    """An Altair chart of a cached report content, as a Vega-Lite dict (validated once)."""
    return _chart.to_dict()


# ---- golden set editor (keyed by the golden fingerprint: nothing is redone on a rerun) ---------------------
@st.cache_data(show_spinner=False, max_entries=32)
def golden_export(_golden: GoldenSet, golden_fp: str, fmt: str) -> str:
    """The golden set as ``csv`` / ``json`` / ``jsonl`` / TREC ``qrels`` text (one format, on demand)."""
    from rag_metrics.authoring.golden_edit import export_golden

    return export_golden(_golden, fmt)


@st.cache_data(show_spinner=False, max_entries=32)
def golden_validation(_golden: GoldenSet, _known: Sequence[str], golden_fp: str, ids_key: str) -> Any:
    """Validation of the golden set against the corpus ids (unknown ids, unlabelled questions)."""
    return validate_golden(_golden, set(_known))


@st.cache_data(show_spinner=False, max_entries=32)
def golden_editor_options(_golden: GoldenSet, _known: Sequence[str], golden_fp: str, ids_key: str
                          ) -> tuple[list[str], list[str]]:
    """The editor's choices: categories and label ids (:func:`ui.context.editor_options`)."""
    return context.editor_options(_golden, _known)


# ---- small counts the pages show (pages do no arithmetic) ---------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=16)
def mean_chunk_length(_chunks: ChunkSet, chunks_fp: str) -> float:
    """Mean chunk length in characters (0 without chunks)."""
    return context.mean_chunk_length(_chunks)


@st.cache_data(show_spinner=False, max_entries=64)
def uncovered_count(_cmap: Any, key: EvalKey, k: int, method: str) -> int:
    """Chunks of a corpus map that no question labels or retrieves."""
    return context.uncovered_count(_cmap)


@st.cache_data(show_spinner=False, max_entries=128)
def failures_found_lower(_result: EvaluationResult, key: EvalKey, k: int) -> int:
    """Failures at ``k`` whose first relevant id is retrieved below ``k`` (a larger K would fix them)."""
    return context.failures_found_lower(_result, k)


# ---- labels proposed from reference answers (rag_metrics.authoring.label_suggest) -----------------------------
@st.cache_data(show_spinner=False, max_entries=256)
def reference_proposals(_chunks: ChunkSet, chunks_fp: str, reference: str, top: int, model: str = "") -> pd.DataFrame:
    """The chunks that support ``reference`` (the corpus model's similarity through the embedding cache, and
    rapidfuzz over its sentences), best first: :func:`rag_metrics.authoring.label_suggest.propose_supporting_chunks`."""
    from rag_metrics.authoring.label_suggest import propose_supporting_chunks

    vectors = chunk_embeddings(_chunks, chunks_fp, model)
    ref = question_embeddings([reference], model)[0]
    return propose_supporting_chunks(reference, [c.id for c in _chunks.chunks], [c.text for c in _chunks.chunks],
                                     vectors, ref, top=top)


