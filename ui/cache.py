"""The Streamlit caches of the app's core: corpus, chunks, embeddings, retrieval, the evaluation and the tables
derived from it.  Only caches: what they compute is the library's (or :mod:`ui.context`'s, for the small
readouts the pages show).  The Compare, insights and golden-set pages' caches are in :mod:`ui.cache_insights`,
the Answers page's in :mod:`ui.cache_answers`.

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
                                             :class:`ui.context.EvalKey` of the evaluation, the key of
                                             every table derived from it
``summary_table / category_table / ...``     small DataFrames per (key, k, ...); intervals use the
                                             library's one CI setting (``CI_*`` in rag_metrics/evaluation.py)
``config_memo``                              the retriever of a configuration (the sidebar's, or a
                                             Compare side): chunking, retriever, model (the default
                                             model reuses ``retrieval_memo``)
``chunk_embeddings(_chunks, chunks_fp)``     chunk vectors from the embedding cache (shipped sample
                                             embeddings, then the on-disk cache): one lookup per
                                             chunking and process, never a re-embedding on a rerun
``question_embeddings(questions)``           question vectors, keyed by the question texts
``golden_file / sweep_estimate / ...``       the Tune page's

Resources are shared by every browser session (they are immutable or internally locked);
session-specific state (the golden working copy, uploads) is in :mod:`ui.state`.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from rag_metrics.config import setting
from rag_metrics.errors import InputError
from rag_metrics.evaluation import EvaluationResult, evaluate
from rag_metrics.insights import readouts
from rag_metrics.io.corpus import load_corpus
from rag_metrics.io.golden import load_golden
from rag_metrics.retrieval import get_encoder, make_retriever
from rag_metrics.retrieval.cache import EmbeddingCache, default_cache_dir, read_shipped
from rag_metrics.retrieval.choice import text_encoders
from rag_metrics.retrieval.chunking import chunk_corpus
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, RETRIEVER_KINDS
from rag_metrics.retrieval.dense import DenseRetriever
from rag_metrics.retrieval.memo import LazyEncoder, RetrievalMemo
from rag_metrics.sample import SAMPLE_FOLDERS, SampleInfo, sample_paths
from rag_metrics.types import Chunk, Corpus, GoldenSet
from ui import context
from ui.budget import Budget, chunking_bytes, index_bytes, release_freed_memory
from ui.context import ChunkSet, EvalKey
from ui.context import abstention_records as _abstention_shape
from ui.context import curve_records as _curve_shape

__all__ = ["ChunkSet", "sample_corpus", "sample_golden", "sample_info", "budget", "touch", "chunk_set",
    "embedding_cache", "encoder", "warm_in_background", "retrieval_memo", "evaluation", "evaluation_documents",
    "chunk_table", "document_text", "summary_table", "target_readouts", "curve_table", "curve_records",
    "abstention_records", "abstention_setup", "abstention_counts", "worst_query", "category_table", "hit_rate_table",
    "target_table", "abstention_table", "clear_all", "embedded", "prewarm_embeddings", "config_memo",
    "chunk_embeddings", "question_embeddings", "golden_file", "sweep_estimate", "sweep_labels"]


# ---- corpus and chunks -------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def sample_corpus(language: str = "en") -> tuple[Corpus, str]:
    """The bundled sample corpus in ``language`` ("en": ``sample_corpus``, "da": ``sample_corpus_da``)
    and its fingerprint."""
    corpus = load_corpus(sample_paths(language=language).docs, name=SAMPLE_FOLDERS[language][0])
    return corpus, corpus.fingerprint()


@st.cache_resource(show_spinner=False)
def sample_golden(language: str = "en") -> GoldenSet:
    """The shipped golden set of the sample in ``language`` (``sample_corpus/golden.jsonl``)."""
    g = load_golden(sample_paths(language=language).golden)
    return GoldenSet(g.queries, name="sample" if language == "en" else f"sample-{language}")


@st.cache_resource(show_spinner=False)
def sample_info(language: str = "en") -> Any:
    """What the sample in ``language`` declares (:class:`rag_metrics.sample.SampleInfo`: label, model)."""
    paths = sample_paths(required=False, language=language)
    return paths.info if paths.root.is_dir() else SampleInfo()


# ---- the memory budget of the per-chunking caches (ui.budget) ----------------------------------------
@st.cache_resource(show_spinner=False)
def budget() -> Any:
    """The process's :class:`ui.budget.Budget`: chunk sets, indexes and chunk vectors registered by
    chunking fingerprint, least recently used chunkings dropped beyond ``RAG_METRICS_CACHE_MB``."""
    return Budget()


def touch(chunks: ChunkSet) -> None:
    """Mark a chunking used (its cached chunk set, indexes and vectors are dropped last)."""
    budget().touch(chunks.fingerprint)


@st.cache_resource(show_spinner=False, max_entries=16)
def chunk_set(_corpus: Corpus, corpus_fp: str, size: int, overlap: int) -> ChunkSet:
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
    cache = EmbeddingCache(cache_dir)
    for language in SAMPLE_FOLDERS:
        paths = sample_paths(required=False, language=language)
        cache.add_shipped(paths.embeddings)
        cache.add_shipped(paths.query_embeddings)
    return cache


@st.cache_resource(show_spinner=False)
def encoder(model: str = "") -> LazyEncoder:
    """The embedding model, loaded only when a text is missing from the embedding cache."""
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
    return str(default_cache_dir())


def _make_retriever(kind: str) -> Any:
    """Dense / BM25 / hybrid retriever.  The dense encoder is lazy (the library's
    ``make_retriever`` loads the model eagerly, which would cost seconds at every start)."""
    if kind == "bm25":
        return make_retriever("bm25")

    dense = DenseRetriever(encoder(), embedding_cache(_default_cache_dir()))
    if kind == "dense":
        return dense
    from rag_metrics.retrieval.hybrid import HybridRetriever
    from rag_metrics.retrieval.lexical import BM25Retriever

    return HybridRetriever(dense, BM25Retriever())


@st.cache_resource(show_spinner=False, max_entries=12)
def retrieval_memo(_chunks: ChunkSet, chunks_fp: str, kind: str) -> RetrievalMemo:
    """An indexed retriever for one chunking, with rankings memoised per question text."""
    if kind not in RETRIEVER_KINDS:
        raise InputError(f"unknown retriever {kind!r}; use one of {', '.join(RETRIEVER_KINDS)}")

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
    return _curve_shape(curve_table(_result, key, metrics))


@st.cache_data(show_spinner=False, max_entries=64)
def abstention_records(_result: EvaluationResult, key: EvalKey) -> list[dict]:
    return _abstention_shape(abstention_table(_result, key))


@st.cache_data(show_spinner=False, max_entries=64)
def abstention_setup(_result: EvaluationResult, key: EvalKey) -> dict[str, float | None]:
    """The abstention slider's range and start (:func:`ui.context.abstention_setup`)."""
    return context.abstention_setup(_result)


@st.cache_data(show_spinner=False, max_entries=256)
def abstention_counts(_result: EvaluationResult, key: EvalKey, threshold: float) -> dict[str, int]:
    """:meth:`EvaluationResult.abstention` at ``threshold`` plus the two totals
    (:func:`ui.context.abstention_counts`)."""
    return context.abstention_counts(_result, threshold)


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


def embedded(chunks: ChunkSet, model: str = "") -> bool:
    """Whether :func:`prewarm_embeddings` already embedded ``chunks`` (with ``model``) in this process."""
    return chunks.fingerprint + (f"/{model}" if model else "") in _embedded()


def prewarm_embeddings(chunks: ChunkSet, progress=None, model: str = "") -> int:
    """Embed (through the on-disk cache) every chunk text not embedded yet, reporting
    ``progress(done, total)``; the dense index built next then finds every vector cached.
    Returns the number of chunks."""
    from rag_metrics.retrieval.cache import encode_with_cache

    texts = [c.text for c in chunks.chunks]
    embedded_now = [0]

    def counting(done: int, total: int) -> None:
        embedded_now[0] = total
        if progress is not None:
            progress(done, total)

    encode_with_cache(_encoders(model).passages, texts, embedding_cache(_default_cache_dir()), counting)
    _embedded().add(chunks.fingerprint + (f"/{model}" if model else ""))
    if embedded_now[0] >= 256:  # a large embedding step: hand the encoder's freed memory back
        release_freed_memory()
    return len(texts)


# ---- A vs B (the Compare page) ------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=8)
def config_memo(_chunks: ChunkSet, chunks_fp: str, kind: str, model: str) -> RetrievalMemo:
    """An indexed retriever for one chunking and model ("" = the bundled default)."""
    if kind == "bm25" or not model:
        return retrieval_memo(_chunks, chunks_fp, kind)

    try:
        enc = get_encoder(model)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - any loading failure becomes one clear message
        raise InputError(f"the embedding model {model!r} could not be loaded offline ({type(err).__name__}: "
                         f"{str(err)[:200]}). Only models already on this machine can be used; leave the field "
                         "empty for the corpus's own model.") from None
    dense = DenseRetriever(enc, embedding_cache(_default_cache_dir()))
    if kind == "dense":
        retriever: Any = dense
    else:
        from rag_metrics.retrieval.hybrid import HybridRetriever
        from rag_metrics.retrieval.lexical import BM25Retriever

        retriever = HybridRetriever(dense, BM25Retriever())
    retriever.index(list(_chunks.chunks))

    budget().add(chunks_fp, f"index:{kind}:{model}", index_bytes(len(_chunks.chunks), kind, int(enc.dim)),
                 lambda: config_memo.clear(_chunks, chunks_fp, kind, model))
    return RetrievalMemo(retriever, _chunks.chunks, DEFAULT_DEPTH)


# ==== insights pages: RAGAS, golden-set health, corpus map, presenter / report =====================
def _texts_key(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:16]


# ---- embeddings (through the shared embedding cache; never re-embedded on a rerun) --------------
# ``model``: the corpus's embedding model (rag_metrics.retrieval.choice, ui.encoding; "" = the bundled default)
def _encoders(model: str = "") -> Any:
    """The passage and query encoders of ``model`` (:func:`rag_metrics.retrieval.choice.text_encoders`)."""
    return text_encoders(model) if model else text_encoders(passages=encoder())


def _encode(texts: list[str], progress=None, model: str = "", queries: bool = False) -> np.ndarray:
    from rag_metrics.retrieval.cache import encode_with_cache

    enc = _encoders(model)
    return encode_with_cache(enc.queries if queries else enc.passages, texts, embedding_cache(_default_cache_dir()),
                             progress)


@st.cache_resource(show_spinner=False, max_entries=8)
def chunk_embeddings(_chunks: ChunkSet, chunks_fp: str, model: str = "") -> np.ndarray:
    """Vectors of every chunk of one chunking (row i = ``_chunks.chunks[i]``), embedded as passages."""
    v = _encode([c.text for c in _chunks.chunks], model=model)
    v.setflags(write=False)
    budget().add(chunks_fp, f"vectors:{model}" if model else "vectors", int(v.nbytes),
                 lambda: chunk_embeddings.clear(_chunks, chunks_fp, model))
    return v


@st.cache_resource(show_spinner=False, max_entries=32)
def _question_embeddings(questions: tuple[str, ...], key: str, model: str = "") -> np.ndarray:
    v = _encode(list(questions), model=model, queries=True)
    v.setflags(write=False)
    return v


def question_embeddings(questions: Sequence[str], model: str = "") -> np.ndarray:
    """Vectors of questions (or other texts searching the chunks), embedded as queries."""
    qs = tuple(questions)
    return _question_embeddings(qs, _texts_key(qs), model)


# ---- the Tune page --------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=8)
def golden_file(path: str, mtime_ns: int) -> GoldenSet:
    """A golden file read once per version (``mtime_ns`` keys it): the sample's labels for the Tune page."""
    return load_golden(path)


@st.cache_data(show_spinner=False, max_entries=16)
def sweep_estimate(grid: Any, _corpus: Corpus, corpus_fp: str, _golden: GoldenSet, golden_fp: str) -> Any:
    """:func:`rag_metrics.tuning.estimate` of a grid (chunks every chunking and looks the embedding cache up):
    once per grid, corpus and labels, not on every rerun.  The page clears it after a sweep (the cache grew)."""
    from rag_metrics.tuning import estimate

    return estimate(grid, _corpus, _golden, cache=embedding_cache(str(default_cache_dir())))


@st.cache_data(show_spinner=False, max_entries=8)
def sweep_labels(_golden: GoldenSet, golden_fp: str, _chunks: Sequence[Chunk], chunks_fp: str, _corpus: Corpus,
                 corpus_fp: str) -> GoldenSet:
    """The golden set's chunk labels as evidence (:func:`rag_metrics.tuning.as_evidence`: it indexes the
    corpus), once per golden set and chunking."""
    from rag_metrics.tuning import as_evidence

    return as_evidence(_golden, _chunks, _corpus)
