"""Every Streamlit cache of the app lives here.

Layers (each keyed by an explicit fingerprint; heavy arguments start with ``_`` so Streamlit does
not hash them):

``sample_corpus()``                          the bundled corpus, read once per process
``chunk_set(_corpus, corpus_fp, size, ov)``  chunks + lookups (text, document) for one chunking
``budget()``                                 memory bound of the per-chunking entries (chunk sets,
                                             indexes, chunk vectors; :mod:`ui.budget`)
``embedding_cache(cache_dir)``               on-disk embedding cache + shipped sample embeddings
``encoder(model)``                           lazy sentence-transformers encoder (loads on a miss)
``retrieval_memo(_chunks, chunks_fp, kind)`` indexed retriever + rankings memoised per question
                                             text (depth >= 100): K never retrieves, a golden edit
                                             retrieves only new or changed question texts
``evaluation(_memo, _golden, key)``          EvaluationResult (judge + kernels, cheap); ``key`` is the
                                             :class:`ui.state.EvalKey` of the evaluation, the key of
                                             every table derived from it
``summary_table / category_table / ...``     small DataFrames per (key, k, ...); intervals use the
                                             library's one CI setting (``CI_*`` in evaluate.py)
``config_memo / config_evaluation``          a Compare-page configuration (A or B): chunking,
                                             retriever, model, depth (the default model reuses
                                             ``retrieval_memo``)
``comparison / ab_category_table``           paired A vs B tables (``rag_metrics.compare.paired``)

Insights pages (RAGAS, golden-set health, corpus map, presenter / report):

``chunk_embeddings(_chunks, chunks_fp)``     chunk vectors from the embedding cache (shipped sample
                                             embeddings, then the on-disk cache): one lookup per
                                             chunking and process, never a re-embedding on a rerun
``question_embeddings(questions)``           question vectors, keyed by the question texts
``corpus_map(...)``                          the projection, keyed by chunking fingerprint + question
                                             texts + labels/evaluation (key) + K + method
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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st

from rag_metrics.evaluation import EvaluationResult, evaluate
from rag_metrics.insights import readouts
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, RETRIEVER_KINDS
from rag_metrics.retrieval.memo import LazyEncoder, RetrievalMemo
from rag_metrics.types import Chunk, Corpus, GoldenSet

if TYPE_CHECKING:  # pragma: no cover
    from ui.state import EvalKey

__all__ = [
    "ChunkSet", "budget", "touch", "sample_corpus", "sample_golden", "sample_info", "chunk_set", "embedding_cache",
    "encoder",
    "retrieval_memo", "warm_in_background", "embedded", "prewarm_embeddings", "evaluation", "evaluation_documents",
    "chunk_table", "summary_table", "curve_table", "category_table", "hit_rate_table", "abstention_table",
    "abstention_setup", "abstention_counts", "worst_query", "document_text", "clear_all", "chunk_embeddings",
    "question_embeddings", "corpus_map", "map_spec", "context_table", "context_summary", "ragas_export",
    "health_unknown", "health_exact_duplicates", "health_near_duplicates", "health_unlabelled", "health_candidates",
    "health_too_easy", "health_duplicate_groups", "health_too_easy_count", "health_ci_overall", "health_ci_width",
    "health_ci_curve_spec", "report_content_for", "chart_spec", "config_golden", "mean_chunk_length",
    "uncovered_count", "failures_found_lower", "golden_export", "golden_validation", "golden_editor_options",
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
def sample_corpus(language: str = "en") -> tuple[Corpus, str]:
    """The bundled sample corpus in ``language`` ("en": ``sample_corpus``, "da": ``sample_corpus_da``)
    and its fingerprint."""
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.sample import SAMPLE_FOLDERS, sample_paths

    corpus = load_corpus(sample_paths(language=language).docs, name=SAMPLE_FOLDERS[language][0])
    return corpus, corpus.fingerprint()


@st.cache_resource(show_spinner=False)
def sample_golden(language: str = "en") -> GoldenSet:
    """The shipped golden set of the sample in ``language`` (``sample_corpus/golden.jsonl``)."""
    from rag_metrics.io.golden import load_golden
    from rag_metrics.sample import sample_paths

    g = load_golden(sample_paths(language=language).golden)
    return GoldenSet(g.queries, name="sample" if language == "en" else f"sample-{language}")


@st.cache_resource(show_spinner=False)
def sample_info(language: str = "en") -> Any:
    """What the sample in ``language`` declares (:class:`rag_metrics.sample.SampleInfo`: label, model)."""
    from rag_metrics.sample import SampleInfo, sample_paths

    paths = sample_paths(required=False, language=language)
    return paths.info if paths.root.is_dir() else SampleInfo()


# ---- the memory budget of the per-chunking caches (ui.budget) ----------------------------------------
@st.cache_resource(show_spinner=False)
def budget() -> Any:
    """The process's :class:`ui.budget.Budget`: chunk sets, indexes and chunk vectors registered by
    chunking fingerprint, least recently used chunkings dropped beyond ``RAG_METRICS_CACHE_MB``."""
    from ui.budget import Budget

    return Budget()


def touch(chunks: ChunkSet) -> None:
    """Mark a chunking used (its cached chunk set, indexes and vectors are dropped last)."""
    budget().touch(chunks.fingerprint)


@st.cache_resource(show_spinner=False, max_entries=16)
def chunk_set(_corpus: Corpus, corpus_fp: str, size: int, overlap: int) -> ChunkSet:
    from rag_metrics.retrieval.chunking import chunk_corpus
    from ui.budget import chunking_bytes

    chunks = tuple(chunk_corpus(_corpus, size, overlap))
    out = ChunkSet(_corpus, chunks, size, overlap, f"{corpus_fp}:{size}:{overlap}",
                   {c.id: c.text for c in chunks}, {c.id: c.doc_id for c in chunks})
    budget().add(out.fingerprint, "chunks", chunking_bytes(c.text for c in chunks),
                 lambda: chunk_set.clear(_corpus, corpus_fp, size, overlap))
    return out


# ---- embeddings and retrieval ------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def embedding_cache(cache_dir: str) -> Any:
    """The on-disk embedding cache at ``cache_dir`` with the shipped embeddings of every sample
    (English and Danish, chunks and golden questions) layered in."""
    from rag_metrics.retrieval.cache import EmbeddingCache
    from rag_metrics.sample import SAMPLE_FOLDERS, sample_paths

    cache = EmbeddingCache(cache_dir)
    for language in SAMPLE_FOLDERS:
        paths = sample_paths(required=False, language=language)
        cache.add_shipped(paths.embeddings)
        cache.add_shipped(paths.query_embeddings)
    return cache


@st.cache_resource(show_spinner=False)
def encoder(model: str = "") -> LazyEncoder:
    """The embedding model, loaded only when a text is missing from the embedding cache."""
    from rag_metrics.retrieval.cache import read_shipped
    from rag_metrics.sample import sample_paths

    shipped = read_shipped(sample_paths(required=False).embeddings)
    dim = shipped.vectors.shape[1] if shipped is not None else None
    enc = LazyEncoder(model or None)
    if shipped is not None and shipped.model == enc.name:
        enc = LazyEncoder(model or None, dim=int(dim))  # type: ignore[arg-type]
    return enc


@st.cache_resource(show_spinner=False)
def warm_in_background() -> Any:
    """Once per server process, after the first page is drawn: load the embedding model in a
    daemon thread, so the first question edit, live query or new chunking of any session does not
    wait for it (the sample's index and question vectors come from the shipped embeddings and need
    no model).  ``RAG_METRICS_WARM=0`` turns it off.  Returns the thread (``None`` when off)."""
    import threading

    from rag_metrics.config import setting

    if setting("warm") in ("0", "false", "no"):
        return None
    enc = encoder()

    def load() -> None:
        try:
            enc.encode(["warm up"])  # loads the model (LazyEncoder); the vector is not kept
        except Exception:  # noqa: BLE001 - a missing model shows where it is needed, with its message
            pass

    t = threading.Thread(target=load, name="rag-metrics-warm", daemon=True)
    t.start()
    # A process that exits while torch is still loading in this thread aborts ("terminate called
    # without an active exception"): let the load finish first (bounded).
    import atexit

    atexit.register(t.join, 120)
    return t


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
    from ui.budget import index_bytes

    retriever = _make_retriever(kind)
    retriever.index(list(_chunks.chunks))
    budget().add(chunks_fp, f"index:{kind}", index_bytes(len(_chunks.chunks), kind),
                 lambda: retrieval_memo.clear(_chunks, chunks_fp, kind))
    return RetrievalMemo(retriever, _chunks.chunks, DEFAULT_DEPTH)


@st.cache_resource(show_spinner=False, max_entries=32)
def evaluation(_memo: RetrievalMemo, _golden: GoldenSet, key: EvalKey) -> EvaluationResult:
    """Judge the memoised run of ``_golden`` under ``key.options`` (``key`` names the memo, the
    golden set and the options)."""
    run = _memo.run_for(_golden)
    return evaluate(_golden, run, key.options)


@st.cache_resource(show_spinner=False, max_entries=16)
def evaluation_documents(_memo: RetrievalMemo, _golden: GoldenSet, _chunks: ChunkSet, key: EvalKey
                         ) -> EvaluationResult:
    """Document-level evaluation (labels are document ids, e.g. BEIR): a document takes the rank
    of its first chunk (the library's ``evaluate(..., chunk_to_doc=...)``)."""
    run = _memo.run_for(_golden)
    return evaluate(_golden, run, key.options, chunk_to_doc=_chunks.doc)


@st.cache_resource(show_spinner=False, max_entries=4)
def chunk_table(_chunks: ChunkSet, _golden: GoldenSet | None, chunks_fp: str, golden_fp: str,
                relevance_level: int) -> pd.DataFrame:
    """The Corpus explorer's chunk table (:func:`rag_metrics.authoring.golden_edit.chunk_table`), kept on the
    server: pages filter it and send one page.  Read-only (shared by every session)."""
    from rag_metrics.authoring.golden_edit import chunk_table as table

    return table(_chunks.chunks, _golden, relevance_level)


@st.cache_resource(show_spinner=False, max_entries=8)
def document_text(_corpus: Corpus, corpus_fp: str) -> dict[str, str]:
    """``{document id: text}`` of a corpus (document-level labels name documents)."""
    return {d.id: d.text for d in _corpus}


# ---- tables derived from one evaluation --------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=512)
def summary_table(_result: EvaluationResult, key: EvalKey, k: int, metrics: tuple[str, ...]) -> pd.DataFrame:
    """The cards: mean and 95 % CI per metric at ``k`` (the library's CI setting, as the report)."""
    return readouts.card_table(_result, k, metrics)


@st.cache_data(show_spinner=False, max_entries=256)
def target_readouts(_result: EvaluationResult, key: EvalKey, k: int) -> tuple:
    """The lesson's targets at ``k`` with the best value the labels allow
    (:func:`rag_metrics.report.story.target_readouts`)."""
    from rag_metrics.report.story import target_readouts as readouts_of

    return readouts_of(_result, k)


@st.cache_data(show_spinner=False, max_entries=64)
def curve_table(_result: EvaluationResult, key: EvalKey, metrics: tuple[str, ...]) -> pd.DataFrame:
    return _result.curve(metrics, max_k=max(_result.depth, 1))


@st.cache_data(show_spinner=False, max_entries=64)
def curve_records(_result: EvaluationResult, key: EvalKey, metrics: tuple[str, ...]) -> list[dict]:
    from ui.views import curve_records as shape

    return shape(curve_table(_result, key, metrics))


@st.cache_data(show_spinner=False, max_entries=64)
def abstention_records(_result: EvaluationResult, key: EvalKey) -> list[dict]:
    from ui.views import abstention_records as shape

    return shape(abstention_table(_result, key))


@st.cache_data(show_spinner=False, max_entries=64)
def abstention_setup(_result: EvaluationResult, key: EvalKey) -> dict[str, float | None]:
    """The abstention slider's range and start: ``lo``, ``hi`` (top-score range), ``suggested``
    (Youden's J, ``None`` without both kinds of query) and ``start`` (suggested, else the middle),
    rounded to the slider's step (0.001)."""
    lo, hi = readouts.score_range(_result)
    suggested = readouts.suggest_threshold(_result)
    lo_r, hi_r = round(lo, 3), round(hi, 3)
    start = round(suggested if suggested is not None else lo + (hi - lo) / 2, 3)
    return {"lo": lo_r, "hi": hi_r, "suggested": suggested, "start": min(max(start, lo_r), hi_r)}


@st.cache_data(show_spinner=False, max_entries=256)
def abstention_counts(_result: EvaluationResult, key: EvalKey, threshold: float) -> dict[str, int]:
    """:meth:`EvaluationResult.abstention` at ``threshold`` plus the two totals (``out_of_scope``,
    ``in_scope``)."""
    a = dict(_result.abstention(float(threshold)))
    a["out_of_scope"] = a["out_of_scope_refused"] + a["out_of_scope_answered"]
    a["in_scope"] = a["in_scope_refused"] + a["in_scope_answered"]
    return a


@st.cache_data(show_spinner=False, max_entries=64)
def worst_query(_result: EvaluationResult, key: EvalKey, metric: str, k: int) -> str | None:
    """The in-mean question with the lowest ``metric@k`` (:func:`rag_metrics.insights.readouts.worst_query`)."""
    return readouts.worst_query(_result, metric, k)


@st.cache_data(show_spinner=False, max_entries=512)
def category_table(_result: EvaluationResult, key: EvalKey, metric: str, k: int) -> pd.DataFrame:
    return _result.by_category((metric,), ks=(k,), ci=True)


@st.cache_data(show_spinner=False, max_entries=64)
def hit_rate_table(_result: EvaluationResult, key: EvalKey) -> pd.DataFrame:
    return readouts.hit_rate_table(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def target_table(_result: EvaluationResult, key: EvalKey, unit: str) -> pd.DataFrame:
    """The lesson's targets with the best value the golden set allows (the ideal ranking is judged once)."""
    return readouts.target_checks(_result, None, unit)


@st.cache_data(show_spinner=False, max_entries=64)
def abstention_table(_result: EvaluationResult, key: EvalKey) -> pd.DataFrame:
    return readouts.abstention_sweep(_result)


def clear_all() -> None:
    """Clear every cache of this module (tests)."""
    st.cache_data.clear()
    st.cache_resource.clear()


@st.cache_resource(show_spinner=False)
def _embedded() -> set[str]:
    """Fingerprints of the chunkings whose texts are all in the embedding cache (this process)."""
    return set()


def embedded(chunks: ChunkSet) -> bool:
    """Whether :func:`prewarm_embeddings` already embedded ``chunks`` in this process."""
    return chunks.fingerprint in _embedded()


def prewarm_embeddings(chunks: ChunkSet, progress=None) -> int:
    """Embed (through the on-disk cache) every chunk text not embedded yet, reporting
    ``progress(done, total)``; the dense index built next then finds every vector cached.
    Returns the number of chunks."""
    from rag_metrics.retrieval.cache import encode_with_cache
    from ui.budget import release_freed_memory

    texts = [c.text for c in chunks.chunks]
    embedded_now = [0]

    def counting(done: int, total: int) -> None:
        embedded_now[0] = total
        if progress is not None:
            progress(done, total)

    encode_with_cache(encoder(), texts, embedding_cache(_default_cache_dir()), counting)
    _embedded().add(chunks.fingerprint)
    if embedded_now[0] >= 256:  # a large embedding step: hand the encoder's freed memory back
        release_freed_memory()
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
    from ui.budget import index_bytes

    budget().add(chunks_fp, f"index:{kind}:{model}", index_bytes(len(_chunks.chunks), kind, int(enc.dim)),
                 lambda: config_memo.clear(_chunks, chunks_fp, kind, model))
    return RetrievalMemo(retriever, _chunks.chunks, DEFAULT_DEPTH)


@st.cache_resource(show_spinner=False, max_entries=16)
def config_golden(_golden: GoldenSet, _labelled: ChunkSet, _target: ChunkSet, golden_fp: str, labelled_fp: str,
                  target_fp: str, level: str) -> tuple[GoldenSet, Any, dict[str, str] | None]:
    """A configuration's golden set (labels carried to its chunking at chunk level), the carry-over
    report, and ``chunk_to_doc`` at document level: once per golden version and pair of chunkings."""
    from rag_metrics.compare import ab

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
    from rag_metrics.compare.paired import compare

    return compare(_a, _b, list(keys))


@st.cache_data(show_spinner=False, max_entries=64)
def ab_category_table(_a: EvaluationResult, _b: EvaluationResult, key_a: EvalKey, key_b: EvalKey, metric: str,
                   k: int) -> pd.DataFrame:
    from rag_metrics.compare.ab import category_deltas

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
    budget().add(chunks_fp, "vectors", int(v.nbytes), lambda: chunk_embeddings.clear(_chunks, chunks_fp))
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
               key: EvalKey, k: int, method: str, relevance_level: int):
    """:func:`rag_metrics.insights.projection.project_corpus` of the current chunks, golden set and run."""
    from rag_metrics.insights.projection import project_corpus

    cx = chunk_embeddings(_chunks, chunks_fp)
    qx = question_embeddings([q.question for q in _golden])
    if len(_golden) == 0:
        qx = np.zeros((0, cx.shape[1]), dtype=np.float32)
    return project_corpus(list(_chunks.chunks), cx, _golden, qx, _result, k=k, method=method,  # type: ignore[arg-type]
                          relevance_level=relevance_level)


@st.cache_data(show_spinner=False, max_entries=64)
def map_spec(_cmap: Any, key: EvalKey, k: int, method: str, query_id: str | None, color: str,
             height: int = 860) -> dict:
    """The corpus map chart as a Vega-Lite spec (width follows the container); ``key``, ``k`` and
    ``method`` name the projection ``_cmap``."""
    from rag_metrics.insights.projection import corpus_map_chart

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
                leg["columns"] = 2  # within a projector's 1024 px
            shape = (node.get("encoding") or {}).get("shape")
            if isinstance(shape, dict) and shape.get("legend", {}) is not None:  # coverage: above, not beside
                shape["legend"] = {**(shape.get("legend") or {}), "orient": "top", "direction": "horizontal"}
            for v in node.values():
                wide_legends(v)
        elif isinstance(node, list):
            for v in node:
                wide_legends(v)

    wide_legends(spec)
    from ui.views import wrap_question_labels

    return wrap_question_labels(spec)


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
    t = health_exact_duplicates(_chunks, chunks_fp)
    return int(t["group"].nunique()) if len(t) else 0


@st.cache_data(show_spinner=False, max_entries=64)
def health_near_duplicates(_chunks: ChunkSet, chunks_fp: str, threshold: float) -> pd.DataFrame:
    from rag_metrics.insights.health import near_duplicates

    return near_duplicates(chunk_embeddings(_chunks, chunks_fp), _chunks.ids, threshold,
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
    t = health_too_easy(_golden, _text, golden_fp, ids_key, threshold, relevance_level)
    return int(t["too_easy"].sum()) if len(t) else 0


@st.cache_data(show_spinner=False, max_entries=64)
def health_ci_width(_result: EvaluationResult, key: EvalKey, metric: str, k: int, target: float) -> pd.DataFrame:
    from rag_metrics.insights.health import ci_width_by_category

    return ci_width_by_category(_result, metric, k, target)


@st.cache_data(show_spinner=False, max_entries=64)
def health_ci_overall(_result: EvaluationResult, key: EvalKey, metric: str, k: int, target: float) -> dict | None:
    """The ``(all)`` row of :func:`health_ci_width` (``None`` when no query enters the mean)."""
    from rag_metrics.insights.health import ALL_CATEGORIES

    t = health_ci_width(_result, key, metric, k, target)
    rows = t[t["category"] == ALL_CATEGORIES].to_dict("records")
    return rows[0] if rows else None


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
    from rag_metrics.io.golden import validate_golden

    return validate_golden(_golden, set(_known))


@st.cache_data(show_spinner=False, max_entries=32)
def golden_editor_options(_golden: GoldenSet, _known: Sequence[str], golden_fp: str, ids_key: str
                          ) -> tuple[list[str], list[str]]:
    """The editor's choices: categories (the usual ones plus any in the set) and label ids (the
    corpus ids plus any id the set names)."""
    from rag_metrics.authoring.golden_edit import CATEGORIES

    categories = list(dict.fromkeys([*CATEGORIES, *(q.category for q in _golden if q.category)]))
    ids = list(dict.fromkeys([*_known, *(i for q in _golden for i in q.relevant)]))
    return categories, ids


# ---- small counts the pages show (pages do no arithmetic) ---------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=16)
def mean_chunk_length(_chunks: ChunkSet, chunks_fp: str) -> float:
    """Mean chunk length in characters (0 without chunks)."""
    n = len(_chunks.chunks)
    return sum(len(c.text) for c in _chunks.chunks) / n if n else 0.0


@st.cache_data(show_spinner=False, max_entries=64)
def uncovered_count(_cmap: Any, key: EvalKey, k: int, method: str) -> int:
    """Chunks of a corpus map that no question labels or retrieves."""
    return int((~_cmap.chunks["covered_by_any_question"]).sum())


@st.cache_data(show_spinner=False, max_entries=128)
def failures_found_lower(_result: EvaluationResult, key: EvalKey, k: int) -> int:
    """Failures at ``k`` whose first relevant id is retrieved below ``k`` (a larger K would fix them)."""
    f = _result.failures(k)
    return int(f["first_relevant_rank"].notna().sum()) if len(f) else 0


# ==== answers page (rag_metrics.answers) : every cache of the Answers page, in this one block =========
@st.cache_resource(show_spinner=False, max_entries=1)
def answers_sample() -> tuple:
    """The shipped sample answers and their human labels."""
    from rag_metrics.answers.data import load_sample_answers

    return load_sample_answers()


@st.cache_resource(show_spinner=False, max_entries=1)
def answers_sample_key() -> str:
    """The content fingerprint of the shipped sample answers (hashed once, not on every rerun)."""
    from rag_metrics.answers.data import items_fingerprint

    return items_fingerprint(answers_sample()[0])


@st.cache_data(show_spinner=False, max_entries=8)
def answers_upload(data: bytes, filename: str, system: str | None = None) -> tuple:
    """Answer items of an uploaded RAG log (or trace export) and the reader's report."""
    from rag_metrics.answers.data import parse_answers

    return parse_answers(data, filename, system)


@st.cache_resource(show_spinner=False, max_entries=16)
def stored_answers(corpus_name: str, name: str, version: tuple) -> tuple | None:
    """``(items, items key, source, report)`` of the system ``name`` stored for ``corpus_name`` when
    its upload is a RAG log or trace export with answers, else None; ``version`` (the store's folder,
    the file, its size and time: the caller's own space or the shared one, chosen by
    ``ui.answer_views``) keys it, so a rerun neither re-reads nor re-hashes the file."""
    from rag_metrics.answers.data import items_fingerprint, parse_answers
    from rag_metrics.errors import InputError
    from rag_metrics.systems.store import SystemStore

    store = SystemStore(version[0])
    spec = store.get(name)
    if spec is None:
        return None
    try:
        data = store.read_upload(spec)
    except InputError:
        return None
    items, rep = parse_answers(data, spec.filename or str(spec.file), spec.name)
    if not any(it.answer for it in items):
        return None
    return tuple(items), items_fingerprint(items), f"System {spec.name} ({spec.filename})", rep


@st.cache_resource(show_spinner=False, max_entries=8)
def merged_answers(_sets: tuple, key: str) -> tuple:
    """``(items, items key)`` of several stored systems' answers as one list (``key``: theirs joined)."""
    from rag_metrics.answers.data import items_fingerprint, merge_answer_sets

    items = tuple(merge_answer_sets(list(_sets)))
    return items, items_fingerprint(items)


@st.cache_resource(show_spinner=False, max_entries=8)
def answers_offline(_items: tuple, items_key: str, threshold: float) -> Any:
    """Offline approximations and reference metrics of ``_items`` (keyed by their fingerprint)."""
    from rag_metrics.answers.embed import add_shipped_answer_embeddings
    from rag_metrics.answers.offline import OfflineJudge
    from rag_metrics.answers.reference import ReferenceMetrics
    from rag_metrics.answers.scoring import evaluate_answers

    enc = encoder()
    emb = add_shipped_answer_embeddings(embedding_cache(_default_cache_dir()))
    return evaluate_answers(list(_items), [OfflineJudge(enc, emb, threshold), ReferenceMetrics(enc, emb)])


@st.cache_resource(show_spinner=False, max_entries=16)
def answers_for_golden(_items: tuple, items_key: str, _golden: GoldenSet, golden_fp: str, _llm: Any,
                       llm_key: str) -> Any:
    """The answers of ``_items`` to questions of ``_golden``, scored offline (the Answers page's
    cached run on the whole file, restricted) and by the LLM judge when ``_llm`` holds its run;
    ``None`` when no answer matches a golden question."""
    from rag_metrics.answers.offline import SUPPORT_THRESHOLD
    from rag_metrics.answers.summary import answers_for_golden as match
    from rag_metrics.answers.summary import combine, restrict

    matched = match(_items, _golden)
    if not matched:
        return None
    offline = answers_offline(_items, items_key, SUPPORT_THRESHOLD)
    return combine([restrict(_llm, matched) if _llm is not None else None, restrict(offline, matched)])


@st.cache_data(show_spinner=False, max_entries=32)
def answers_summary_rows(_ev: Any, ev_key: str) -> pd.DataFrame:
    """:func:`rag_metrics.answers.summary.summary_rows` of an :func:`answers_for_golden` result."""
    from rag_metrics.answers.summary import summary_rows

    return summary_rows(_ev)


@st.cache_data(show_spinner=False, max_entries=32)
def answers_comparison(_ev: Any, ev_key: str, system_a: str, system_b: str) -> pd.DataFrame:
    """:func:`rag_metrics.answers.summary.compare_systems` of an :func:`answers_for_golden` result."""
    from rag_metrics.answers.summary import compare_systems

    return compare_systems(_ev, system_a, system_b)


@st.cache_resource(show_spinner=False, max_entries=16)
def answers_report_section(_ev: Any, ev_key: str, source: str) -> Any:
    """:func:`rag_metrics.answers.summary.answer_section` (the report's and Presenter view's)."""
    from rag_metrics.answers.summary import answer_section

    return answer_section(_ev, source)
# ==== end of the answers page block =====================================================================


# ---- labels proposed from reference answers (rag_metrics.authoring.label_suggest) -----------------------------
@st.cache_data(show_spinner=False, max_entries=256)
def reference_proposals(_chunks: ChunkSet, chunks_fp: str, reference: str, top: int) -> pd.DataFrame:
    """The chunks that support ``reference`` (MiniLM similarity through the embedding cache, and
    rapidfuzz over its sentences), best first: :func:`rag_metrics.authoring.label_suggest.propose_supporting_chunks`."""
    from rag_metrics.authoring.label_suggest import propose_supporting_chunks

    vectors = chunk_embeddings(_chunks, chunks_fp)
    ref = question_embeddings([reference])[0]
    return propose_supporting_chunks(reference, [c.id for c in _chunks.chunks], [c.text for c in _chunks.chunks],
                                     vectors, ref, top=top)


# ---- the Tune page --------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=8)
def golden_file(path: str, mtime_ns: int) -> GoldenSet:
    """A golden file read once per version (``mtime_ns`` keys it): the sample's labels for the Tune page."""
    from rag_metrics.io.golden import load_golden

    return load_golden(path)


@st.cache_data(show_spinner=False, max_entries=16)
def sweep_estimate(grid: Any, _corpus: Corpus, corpus_fp: str, _golden: GoldenSet, golden_fp: str) -> Any:
    """:func:`rag_metrics.tuning.estimate` of a grid (chunks every chunking and looks the embedding cache up):
    once per grid, corpus and labels, not on every rerun.  The page clears it after a sweep (the cache grew)."""
    from rag_metrics.retrieval.cache import default_cache_dir
    from rag_metrics.tuning import estimate

    return estimate(grid, _corpus, _golden, cache=embedding_cache(str(default_cache_dir())))


@st.cache_data(show_spinner=False, max_entries=8)
def sweep_labels(_golden: GoldenSet, golden_fp: str, _chunks: Sequence[Chunk], chunks_fp: str, _corpus: Corpus,
                 corpus_fp: str) -> GoldenSet:
    """The golden set's chunk labels as evidence (:func:`rag_metrics.tuning.as_evidence`: it indexes the
    corpus), once per golden set and chunking."""
    from rag_metrics.tuning import as_evidence

    return as_evidence(_golden, _chunks, _corpus)
