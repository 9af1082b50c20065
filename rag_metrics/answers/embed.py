"""The project's sentence encoder and on-disk embedding cache, shared by the offline judges.

The default encoder loads all-MiniLM-L6-v2 only when a text misses the embedding cache (the
shipped sample embeddings and earlier runs make most texts hits).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "SHIPPED_ANSWER_EMBEDDINGS",
    "add_shipped_answer_embeddings",
    "default_embedding_cache",
    "default_encoder",
    "embed",
    ]

#: Folder (in ``sample_corpus/``) of the shipped vectors of every text the offline judges embed
#: for the shipped sample answers, so the Answers page starts without loading the model.
SHIPPED_ANSWER_EMBEDDINGS = "answers_embeddings"


def default_encoder(model: str | None = None) -> Any:
    """A lazily loaded :class:`~rag_metrics.retrieval.encoders.Encoder` (default MiniLM)."""
    from rag_metrics.retrieval.memo import LazyEncoder

    return LazyEncoder(model)


def default_embedding_cache() -> Any:
    """The user's on-disk embedding cache (``$RAG_METRICS_CACHE`` or ``~/.cache/rag_metrics``)."""
    from rag_metrics.retrieval.cache import EmbeddingCache

    return add_shipped_answer_embeddings(EmbeddingCache())


def _shipped_dir() -> Any:

    from rag_metrics.sample import sample_dir

    return sample_dir(required=False) / SHIPPED_ANSWER_EMBEDDINGS


def add_shipped_answer_embeddings(cache: Any) -> Any:
    """Add the shipped sample-answer vectors to ``cache`` as a read-only layer (when present and
    valid); returns ``cache``."""
    if cache is not None:
        cache.add_shipped(_shipped_dir())
    return cache



def embed(encoder: Any, cache: Any, texts: Sequence[str]) -> dict[str, NDArray[np.float32]]:
    """``{text: unit vector}`` for the distinct ``texts``, embedding only cache misses."""
    from rag_metrics.retrieval.cache import encode_with_cache

    distinct = list(dict.fromkeys(texts))
    if not distinct:
        return {}
    vecs = encode_with_cache(encoder, distinct, cache)
    return dict(zip(distinct, vecs))
