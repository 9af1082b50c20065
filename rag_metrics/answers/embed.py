"""The project's sentence encoder and on-disk embedding cache, shared by the offline judges.

The default encoder loads all-MiniLM-L6-v2 only when a text misses the embedding cache (the
shipped sample embeddings and earlier runs make most texts hits).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["default_embedding_cache", "default_encoder", "embed"]


def default_encoder(model: str | None = None) -> Any:
    """A lazily loaded :class:`~rag_metrics.retrieval.encoders.Encoder` (default MiniLM)."""
    from rag_metrics.retrieval.memo import LazyEncoder

    return LazyEncoder(model)


def default_embedding_cache() -> Any:
    """The user's on-disk embedding cache (``$RAG_METRICS_CACHE`` or ``~/.cache/rag_metrics``)."""
    from rag_metrics.retrieval.cache import EmbeddingCache

    return EmbeddingCache()


def embed(encoder: Any, cache: Any, texts: Sequence[str]) -> dict[str, NDArray[np.float32]]:
    """``{text: unit vector}`` for the distinct ``texts``, embedding only cache misses."""
    from rag_metrics.retrieval.cache import encode_with_cache

    distinct = list(dict.fromkeys(texts))
    if not distinct:
        return {}
    vecs = encode_with_cache(encoder, distinct, cache)
    return dict(zip(distinct, vecs))
