"""Caches of the RAGAS, golden-set health, corpus-map and report pages (all numbers from the library).

Every function takes the heavy objects with a leading ``_`` (not hashed) and explicit fingerprint
keys, like :mod:`ui.cache`:

``chunk_embeddings(_chunks, chunks_fp)``        chunk vectors from the embedding cache (shipped sample
                                                embeddings, then the on-disk cache): one lookup per
                                                chunking and process, never a re-embedding on a rerun
``question_embeddings(questions)``             question vectors, keyed by the question texts
``corpus_map(...)``                            the projection, keyed by chunking fingerprint + question
                                               texts + labels/evaluation (eval_key) + K + method
``map_spec(...)``                              the Altair chart as a Vega-Lite dict (building it costs
                                               ~0.3 s; filling from the cache costs nothing)
``context_table / context_summary``            RAGAS context metrics at K
``ragas_export``                               RAGAS-ready JSONL / CSV text
``health_*``                                   each health check's table
``report_content_for / report_html``           the stakeholder report (content, HTML)
"""
from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from rag_metrics.evaluate import EvaluationResult
from rag_metrics.types import GoldenSet
from ui import cache


def _texts_key(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:16]


# ---- embeddings (through the shared embedding cache; never re-embedded on a rerun) --------------
def _encode(texts: list[str], progress=None) -> np.ndarray:
    from rag_metrics.retrieval.cache import encode_with_cache

    return encode_with_cache(cache.encoder(), texts, cache.embedding_cache(cache._default_cache_dir()), progress)


@st.cache_resource(show_spinner=False, max_entries=8)
def chunk_embeddings(_chunks: cache.ChunkSet, chunks_fp: str) -> np.ndarray:
    """Vectors of every chunk of one chunking (row i = ``_chunks.chunks[i]``)."""
    v = _encode([c.text for c in _chunks.chunks])
    v.setflags(write=False)
    return v


@st.cache_resource(show_spinner=False, max_entries=32)
def _question_embeddings(questions: tuple[str, ...], key: str) -> np.ndarray:
    v = _encode(list(questions))
    v.setflags(write=False)
    return v


def question_embeddings(questions: Sequence[str]) -> np.ndarray:
    qs = tuple(questions)
    return _question_embeddings(qs, _texts_key(qs))


# ---- corpus map ------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=24)
def corpus_map(_chunks: cache.ChunkSet, _golden: GoldenSet, _result: EvaluationResult, chunks_fp: str,
               eval_key: str, k: int, method: str, relevance_level: int):
    """:func:`rag_metrics.projection.project_corpus` of the current chunks, golden set and run."""
    from rag_metrics.projection import project_corpus

    cx = chunk_embeddings(_chunks, chunks_fp)
    qx = question_embeddings([q.question for q in _golden])
    if len(_golden) == 0:
        qx = np.zeros((0, cx.shape[1]), dtype=np.float32)
    return project_corpus(list(_chunks.chunks), cx, _golden, qx, _result, k=k, method=method,  # type: ignore[arg-type]
                          relevance_level=relevance_level)


@st.cache_data(show_spinner=False, max_entries=64)
def map_spec(_cmap: Any, map_key: str, query_id: str | None, color: str, height: int = 860) -> dict:
    """The corpus map chart as a Vega-Lite spec (width follows the container)."""
    from rag_metrics.projection import corpus_map_chart

    chart = corpus_map_chart(_cmap, query_id=query_id, color=color, width="container", height=height,  # type: ignore[arg-type]
                             title=None)
    spec = chart.to_dict()
    # Legends below the plot, so the plot gets the page width (long question labels stay inside);
    # Streamlit fits the whole chart, legends included, into the height.
    spec.setdefault("config", {})["legend"] = {"orient": "bottom", "direction": "vertical",
                                               "labelLimit": 170, "symbolLimit": 80}

    def wide_legends(node: Any) -> None:
        if isinstance(node, dict):
            leg = node.get("legend")
            if isinstance(leg, dict) and "columns" in leg:
                leg["columns"] = 3
            for v in node.values():
                wide_legends(v)
        elif isinstance(node, list):
            for v in node:
                wide_legends(v)

    wide_legends(spec)
    return spec


# ---- RAGAS ------------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=64)
def context_table(_result: EvaluationResult, eval_key: str, k: int) -> pd.DataFrame:
    from rag_metrics.ragas import context_metrics

    return context_metrics(_result, k)


@st.cache_data(show_spinner=False, max_entries=64)
def context_summary(_result: EvaluationResult, eval_key: str, k: int) -> pd.DataFrame:
    from rag_metrics.ragas import context_metrics_summary

    return context_metrics_summary(_result, k)


@st.cache_data(show_spinner=False, max_entries=32)
def ragas_export(_result: EvaluationResult, _chunks: cache.ChunkSet, eval_key: str, k: int, fmt: str,
                 document_level: bool) -> str:
    """RAGAS-ready dataset text (``fmt`` ``jsonl`` or ``csv``)."""
    from rag_metrics.ragas import ragas_csv, ragas_jsonl

    fn = ragas_jsonl if fmt == "jsonl" else ragas_csv
    return fn(_result, _chunks.text, k, chunk_to_doc=_chunks.doc if document_level else None)


# ---- golden-set health --------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=32)
def health_unknown(_golden: GoldenSet, _known: Sequence[str], golden_fp: str, known_key: str) -> pd.DataFrame:
    from rag_metrics.health import unknown_ids

    return unknown_ids(_golden, set(_known))


@st.cache_data(show_spinner=False, max_entries=16)
def health_exact_duplicates(_chunks: cache.ChunkSet, chunks_fp: str) -> pd.DataFrame:
    from rag_metrics.health import exact_duplicates

    return exact_duplicates(_chunks.chunks)


@st.cache_data(show_spinner=False, max_entries=64)
def health_near_duplicates(_chunks: cache.ChunkSet, chunks_fp: str, threshold: float) -> pd.DataFrame:
    from rag_metrics.health import near_duplicates

    return near_duplicates(chunk_embeddings(_chunks, chunks_fp), _chunks.ids, threshold,
                           doc_ids=[c.doc_id for c in _chunks.chunks])


@st.cache_data(show_spinner=False, max_entries=32)
def health_unlabelled(_golden: GoldenSet, golden_fp: str) -> pd.DataFrame:
    from rag_metrics.health import unlabelled_queries

    return unlabelled_queries(_golden)


@st.cache_data(show_spinner=False, max_entries=64)
def health_candidates(_result: EvaluationResult, _text: dict, eval_key: str, k: int, min_queries: int) -> pd.DataFrame:
    from rag_metrics.health import judging_candidates

    return judging_candidates(_result, k, min_queries, _text)


@st.cache_data(show_spinner=False, max_entries=64)
def health_too_easy(_golden: GoldenSet, _text: dict, golden_fp: str, text_key: str, threshold: float,
                    relevance_level: int) -> pd.DataFrame:
    from rag_metrics.health import too_easy_queries

    return too_easy_queries(_golden, _text, threshold, relevance_level=relevance_level, all_queries=True)


@st.cache_data(show_spinner=False, max_entries=64)
def health_ci_width(_result: EvaluationResult, eval_key: str, metric: str, k: int, target: float) -> pd.DataFrame:
    from rag_metrics.health import ci_width_by_category

    return ci_width_by_category(_result, metric, k, target)


@st.cache_data(show_spinner=False, max_entries=64)
def health_ci_curve_spec(_result: EvaluationResult, eval_key: str, metric: str, k: int, target: float) -> dict:
    from rag_metrics.health import ci_width_chart, ci_width_curve

    curve = ci_width_curve(_result, metric, k, target_half_width=target)
    return ci_width_chart(curve, target, title="").properties(width="container", height=340).to_dict()


# ---- report ---------------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=16)
def report_content_for(_result: EvaluationResult, _text: dict, _config: dict, _comparison: Any, report_key: str,
                       k: int, names: tuple[str, str], title: str, options: tuple = ()):
    from rag_metrics.report import report_content

    return report_content(_result, k=k, chunk_text=_text, config=_config, comparison=_comparison,
                          comparison_names=names, title=title, **dict(options))


@st.cache_data(show_spinner=False, max_entries=32)
def chart_spec(_chart: Any, key: str) -> dict:
    """An Altair chart of a cached report content, as a Vega-Lite dict (validated once)."""
    return _chart.to_dict()
