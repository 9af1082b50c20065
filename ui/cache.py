"""Every Streamlit cache of the app lives here.

Layers (each keyed by an explicit fingerprint; heavy arguments start with ``_`` so Streamlit does
not hash them):

``sample_corpus()``                          the bundled corpus, read once per process
``chunk_set(_corpus, corpus_fp, size, ov)``  chunks + lookups (text, document) for one chunking
``embedding_cache(cache_dir)``               on-disk embedding cache + shipped sample embeddings
``encoder(model)``                           lazy sentence-transformers encoder (loads on a miss)
``retrieval_memo(_chunks, chunks_fp, kind)`` indexed retriever + rankings memoised per question
                                             text (depth >= 100): K never retrieves, a golden edit
                                             retrieves only new or changed question texts
``evaluation(_memo, _golden, eval_key)``     EvaluationResult (judge + kernels, cheap)
``summary_table / curve_table / category_table / ...``  small DataFrames per (eval_key, k, ...)
``config_memo / config_evaluation``          a Compare-page configuration (A or B): chunking,
                                             retriever, model, depth (the default model reuses
                                             ``retrieval_memo``)
``comparison / ab_category_table``           paired A vs B tables (``rag_metrics.compare``)

Insights pages (RAGAS, golden-set health, corpus map, presenter / report):

``chunk_embeddings(_chunks, chunks_fp)``     chunk vectors from the embedding cache (shipped sample
                                             embeddings, then the on-disk cache): one lookup per
                                             chunking and process, never a re-embedding on a rerun
``question_embeddings(questions)``           question vectors, keyed by the question texts
``corpus_map(...)``                          the projection, keyed by chunking fingerprint + question
                                             texts + labels/evaluation (eval_key) + K + method
``map_spec(...)``                            the Altair chart as a Vega-Lite dict (building it costs
                                             ~0.3 s; filling from the cache costs nothing)
``context_table / context_summary``          RAGAS context metrics at K
``ragas_export``                             RAGAS-ready JSONL / CSV text
``health_*``                                 each health check's table
``report_content_for / chart_spec``          the stakeholder report's content and its charts

Resources are shared by every browser session (they are immutable or internally locked);
session-specific state (the golden working copy, uploads) is in :mod:`ui.state`.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from rag_metrics import readouts
from rag_metrics.evaluate import EvalOptions, EvaluationResult, evaluate
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, RETRIEVER_KINDS
from rag_metrics.retrieval.memo import LazyEncoder, RetrievalMemo
from rag_metrics.types import Chunk, Corpus, GoldenSet

__all__ = [
    "ChunkSet", "sample_corpus", "sample_golden", "chunk_set", "embedding_cache", "encoder",
    "retrieval_memo", "evaluation", "evaluation_documents", "summary_table", "curve_table", "category_table",
    "hit_rate_table", "abstention_table", "clear_all",
    # insights pages
    "chunk_embeddings", "question_embeddings", "corpus_map", "map_spec", "context_table", "context_summary",
    "ragas_export", "health_unknown", "health_exact_duplicates", "health_near_duplicates", "health_unlabelled",
    "health_candidates", "health_too_easy", "health_ci_width", "health_ci_curve_spec", "report_content_for",
    "chart_spec",
]


@dataclass(frozen=True, eq=False)
class ChunkSet:
    """One chunking of one corpus, with the lookups every page needs."""

    corpus: Corpus
    chunks: tuple[Chunk, ...]
    size: int
    overlap: int
    fingerprint: str
    text: dict[str, str] = field(default_factory=dict)
    doc: dict[str, str] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.chunks]


# ---- corpus and chunks -------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def sample_corpus() -> tuple[Corpus, str]:
    """The bundled sample corpus and its fingerprint."""
    from rag_metrics.corpus import load_corpus
    from rag_metrics.retrieval.build_sample_cache import sample_paths

    corpus = load_corpus(sample_paths()["docs"], name="sample_corpus")
    return corpus, corpus.fingerprint()


@st.cache_resource(show_spinner=False)
def sample_golden() -> GoldenSet:
    """The shipped golden set (``sample_corpus/golden.jsonl``)."""
    from rag_metrics.golden import load_golden
    from rag_metrics.retrieval.build_sample_cache import sample_paths

    g = load_golden(sample_paths()["golden"])
    return GoldenSet(g.queries, name="sample")


@st.cache_resource(show_spinner=False, max_entries=16)
def chunk_set(_corpus: Corpus, corpus_fp: str, size: int, overlap: int) -> ChunkSet:
    from rag_metrics.retrieval.chunking import chunk_corpus

    chunks = tuple(chunk_corpus(_corpus, size, overlap))
    return ChunkSet(_corpus, chunks, size, overlap, f"{corpus_fp}:{size}:{overlap}",
                    {c.id: c.text for c in chunks}, {c.id: c.doc_id for c in chunks})


# ---- embeddings and retrieval ------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def embedding_cache(cache_dir: str) -> Any:
    """The on-disk embedding cache at ``cache_dir`` with the shipped sample embeddings layered in."""
    from rag_metrics.retrieval.build_sample_cache import sample_paths
    from rag_metrics.retrieval.cache import EmbeddingCache

    cache = EmbeddingCache(cache_dir)
    cache.add_shipped(sample_paths()["embeddings"])
    return cache


@st.cache_resource(show_spinner=False)
def encoder(model: str = "") -> LazyEncoder:
    """The embedding model, loaded only when a text is missing from the embedding cache."""
    from rag_metrics.retrieval.build_sample_cache import sample_paths
    from rag_metrics.retrieval.cache import read_shipped

    shipped = read_shipped(sample_paths()["embeddings"])
    dim = shipped.vectors.shape[1] if shipped is not None else None
    enc = LazyEncoder(model or None)
    if shipped is not None and shipped.model == enc.name:
        enc = LazyEncoder(model or None, dim=int(dim))  # type: ignore[arg-type]
    return enc


def _default_cache_dir() -> str:
    from rag_metrics.retrieval.cache import default_cache_dir

    return str(default_cache_dir())


def _make_retriever(kind: str) -> Any:
    """Dense / BM25 / hybrid retriever.  The dense encoder is lazy (the library's
    ``make_retriever`` loads the model eagerly, which would cost seconds at every start)."""
    from rag_metrics.retrieval import make_retriever

    if kind == "bm25":
        return make_retriever("bm25")
    from rag_metrics.retrieval.dense import DenseRetriever

    dense = DenseRetriever(encoder(), embedding_cache(_default_cache_dir()))
    if kind == "dense":
        return dense
    from rag_metrics.retrieval.hybrid import HybridRetriever
    from rag_metrics.retrieval.lexical import BM25Retriever

    return HybridRetriever(dense, BM25Retriever())


@st.cache_resource(show_spinner=False, max_entries=12)
def retrieval_memo(_chunks: ChunkSet, chunks_fp: str, kind: str) -> RetrievalMemo:
    """An indexed retriever for one chunking, with rankings memoised per question text."""
    from rag_metrics.errors import InputError

    if kind not in RETRIEVER_KINDS:
        raise InputError(f"unknown retriever {kind!r}; use one of {', '.join(RETRIEVER_KINDS)}")
    retriever = _make_retriever(kind)
    retriever.index(list(_chunks.chunks))
    return RetrievalMemo(retriever, _chunks.chunks, DEFAULT_DEPTH)


@st.cache_resource(show_spinner=False, max_entries=32)
def evaluation(_memo: RetrievalMemo, _golden: GoldenSet, _options: EvalOptions,
               eval_key: str) -> EvaluationResult:
    """Judge the memoised run of ``_golden`` (``eval_key`` = memo key + golden fp + options)."""
    run = _memo.run_for(_golden)
    return evaluate(_golden, run, _options)


@st.cache_resource(show_spinner=False, max_entries=16)
def evaluation_documents(_memo: RetrievalMemo, _golden: GoldenSet, _options: EvalOptions,
                         _chunks: ChunkSet, eval_key: str) -> EvaluationResult:
    """Document-level evaluation (labels are document ids, e.g. BEIR): a document takes the rank
    of its first chunk (the library's ``evaluate(..., chunk_to_doc=...)``)."""
    run = _memo.run_for(_golden)
    return evaluate(_golden, run, _options, chunk_to_doc=_chunks.doc)


# ---- tables derived from one evaluation --------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=512)
def summary_table(_result: EvaluationResult, eval_key: str, k: int, metrics: tuple[str, ...]) -> pd.DataFrame:
    return readouts.card_table(_result, k, metrics)


@st.cache_data(show_spinner=False, max_entries=64)
def curve_table(_result: EvaluationResult, eval_key: str, metrics: tuple[str, ...]) -> pd.DataFrame:
    return _result.curve(metrics, max_k=max(_result.depth, 1))


@st.cache_data(show_spinner=False, max_entries=64)
def curve_records(_result: EvaluationResult, eval_key: str, metrics: tuple[str, ...]) -> list[dict]:
    from ui.views import curve_records as shape

    return shape(curve_table(_result, eval_key, metrics))


@st.cache_data(show_spinner=False, max_entries=64)
def abstention_records(_result: EvaluationResult, eval_key: str) -> list[dict]:
    from ui.views import abstention_records as shape

    return shape(abstention_table(_result, eval_key))


@st.cache_data(show_spinner=False, max_entries=512)
def category_table(_result: EvaluationResult, eval_key: str, metric: str, k: int) -> pd.DataFrame:
    return _result.by_category((metric,), ks=(k,), ci=True, n_resamples=1000)


@st.cache_data(show_spinner=False, max_entries=64)
def hit_rate_table(_result: EvaluationResult, eval_key: str) -> pd.DataFrame:
    return readouts.hit_rate_table(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def abstention_table(_result: EvaluationResult, eval_key: str) -> pd.DataFrame:
    return readouts.abstention_sweep(_result)


def clear_all() -> None:
    """Clear every cache of this module (tests)."""
    st.cache_data.clear()
    st.cache_resource.clear()


def prewarm_embeddings(chunks: ChunkSet, progress=None) -> int:
    """Embed (through the on-disk cache) every chunk text not embedded yet, reporting
    ``progress(done, total)``; the dense index built next then finds every vector cached.
    Returns the number of chunks."""
    from rag_metrics.retrieval.cache import encode_with_cache

    texts = [c.text for c in chunks.chunks]
    encode_with_cache(encoder(), texts, embedding_cache(_default_cache_dir()), progress)
    return len(texts)


# ---- A vs B (the Compare page) ------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=8)
def config_memo(_chunks: ChunkSet, chunks_fp: str, kind: str, model: str) -> RetrievalMemo:
    """An indexed retriever for one chunking and model ("" = the bundled default)."""
    from rag_metrics.errors import InputError

    if kind == "bm25" or not model:
        return retrieval_memo(_chunks, chunks_fp, kind)
    from rag_metrics.retrieval import get_encoder
    from rag_metrics.retrieval.dense import DenseRetriever

    try:
        enc = get_encoder(model)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - any loading failure becomes one clear message
        raise InputError(f"the embedding model {model!r} could not be loaded offline ({type(err).__name__}: "
                         f"{str(err)[:200]}). Only models already on this machine can be used; leave the field "
                         "empty for the bundled all-MiniLM-L6-v2.") from None
    dense = DenseRetriever(enc, embedding_cache(_default_cache_dir()))
    if kind == "dense":
        retriever: Any = dense
    else:
        from rag_metrics.retrieval.hybrid import HybridRetriever
        from rag_metrics.retrieval.lexical import BM25Retriever

        retriever = HybridRetriever(dense, BM25Retriever())
    retriever.index(list(_chunks.chunks))
    return RetrievalMemo(retriever, _chunks.chunks, DEFAULT_DEPTH)


@st.cache_resource(show_spinner=False, max_entries=16)
def config_evaluation(_memo: RetrievalMemo, _golden: GoldenSet, _options: EvalOptions,
                      _c2d: dict[str, str] | None, key: str, depth: int) -> EvaluationResult:
    """One configuration's evaluation (``key`` names chunking, retriever, model, golden, options)."""
    run = _memo.run_for(_golden)
    return evaluate(_golden, run, _options, chunk_to_doc=_c2d, depth=depth)


@st.cache_data(show_spinner=False, max_entries=64)
def comparison(_a: EvaluationResult, _b: EvaluationResult, key_a: str, key_b: str,
               keys: tuple[str, ...]) -> pd.DataFrame:
    """``compare(a, b, keys)`` (10,000 resamples, seed 0: the CLI's defaults) with a verdict column."""
    from rag_metrics.compare import compare, verdict

    df = compare(_a, _b, list(keys))
    df["verdict"] = [verdict(r, "A", "B") for _, r in df.iterrows()]
    return df


@st.cache_data(show_spinner=False, max_entries=64)
def ab_category_table(_a: EvaluationResult, _b: EvaluationResult, key_a: str, key_b: str, metric: str,
                   k: int) -> pd.DataFrame:
    from rag_metrics.ab import category_deltas

    return category_deltas(_a, _b, metric, k)


# ==== insights pages: RAGAS, golden-set health, corpus map, presenter / report =====================
def _texts_key(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:16]


# ---- embeddings (through the shared embedding cache; never re-embedded on a rerun) --------------
def _encode(texts: list[str], progress=None) -> np.ndarray:
    from rag_metrics.retrieval.cache import encode_with_cache

    return encode_with_cache(encoder(), texts, embedding_cache(_default_cache_dir()), progress)


@st.cache_resource(show_spinner=False, max_entries=8)
def chunk_embeddings(_chunks: ChunkSet, chunks_fp: str) -> np.ndarray:
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
def corpus_map(_chunks: ChunkSet, _golden: GoldenSet, _result: EvaluationResult, chunks_fp: str,
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
def ragas_export(_result: EvaluationResult, _chunks: ChunkSet, eval_key: str, k: int, fmt: str,
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
def health_exact_duplicates(_chunks: ChunkSet, chunks_fp: str) -> pd.DataFrame:
    from rag_metrics.health import exact_duplicates

    return exact_duplicates(_chunks.chunks)


@st.cache_data(show_spinner=False, max_entries=64)
def health_near_duplicates(_chunks: ChunkSet, chunks_fp: str, threshold: float) -> pd.DataFrame:
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
