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

Resources are shared by every browser session (they are immutable or internally locked);
session-specific state (the golden working copy, uploads) is in :mod:`ui.state`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics import lab
from rag_metrics.evaluate import EvalOptions, EvaluationResult, evaluate
from rag_metrics.types import Chunk, Corpus, GoldenSet

__all__ = [
    "ChunkSet", "sample_corpus", "sample_golden", "chunk_set", "embedding_cache", "encoder",
    "retrieval_memo", "evaluation", "evaluation_documents", "summary_table", "curve_table", "category_table",
    "hit_rate_table", "abstention_table", "clear_all",
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
    return corpus, lab.corpus_fingerprint(corpus)


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
def encoder(model: str = "") -> lab.LazyEncoder:
    """The embedding model, loaded only when a text is missing from the embedding cache."""
    from rag_metrics.retrieval.build_sample_cache import sample_paths
    from rag_metrics.retrieval.cache import read_shipped

    shipped = read_shipped(sample_paths()["embeddings"])
    dim = shipped.vectors.shape[1] if shipped is not None else None
    enc = lab.LazyEncoder(model or None)
    if shipped is not None and shipped.model == enc.name:
        enc = lab.LazyEncoder(model or None, dim=int(dim))  # type: ignore[arg-type]
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
def retrieval_memo(_chunks: ChunkSet, chunks_fp: str, kind: str) -> lab.RetrievalMemo:
    """An indexed retriever for one chunking, with rankings memoised per question text."""
    from rag_metrics.errors import InputError

    if kind not in lab.RETRIEVERS:
        raise InputError(f"unknown retriever {kind!r}; use one of {', '.join(lab.RETRIEVERS)}")
    retriever = _make_retriever(kind)
    retriever.index(list(_chunks.chunks))
    return lab.RetrievalMemo(retriever, _chunks.chunks, lab.DEPTH)


@st.cache_resource(show_spinner=False, max_entries=32)
def evaluation(_memo: lab.RetrievalMemo, _golden: GoldenSet, _options: EvalOptions,
               eval_key: str) -> EvaluationResult:
    """Judge the memoised run of ``_golden`` (``eval_key`` = memo key + golden fp + options)."""
    run = _memo.run_for(_golden)
    return evaluate(_golden, run, _options)


@st.cache_resource(show_spinner=False, max_entries=16)
def evaluation_documents(_memo: lab.RetrievalMemo, _golden: GoldenSet, _options: EvalOptions,
                         _chunks: ChunkSet, eval_key: str) -> EvaluationResult:
    """Document-level evaluation (labels are document ids, e.g. BEIR): a document takes the rank
    of its first chunk (the library's ``evaluate(..., chunk_to_doc=...)``)."""
    run = _memo.run_for(_golden)
    return evaluate(_golden, run, _options, chunk_to_doc=_chunks.doc)


# ---- tables derived from one evaluation --------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=512)
def summary_table(_result: EvaluationResult, eval_key: str, k: int, metrics: tuple[str, ...]) -> pd.DataFrame:
    return lab.card_table(_result, k, metrics)


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
    return lab.hit_rate_table(_result)


@st.cache_data(show_spinner=False, max_entries=64)
def abstention_table(_result: EvaluationResult, eval_key: str) -> pd.DataFrame:
    return lab.abstention_sweep(_result)


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
def config_memo(_chunks: ChunkSet, chunks_fp: str, kind: str, model: str) -> lab.RetrievalMemo:
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
    return lab.RetrievalMemo(retriever, _chunks.chunks, lab.DEPTH)


@st.cache_resource(show_spinner=False, max_entries=16)
def config_evaluation(_memo: lab.RetrievalMemo, _golden: GoldenSet, _options: EvalOptions,
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
