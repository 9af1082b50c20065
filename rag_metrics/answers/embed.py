"""The project's sentence encoder and on-disk embedding cache, shared by the offline judges.

The default encoder loads all-MiniLM-L6-v2 only when a text misses the embedding cache (the
shipped sample embeddings and earlier runs make most texts hits).  :func:`encoder_for_items` applies the
one encoder rule (:mod:`rag_metrics.retrieval.choice`) to a set of answers: their language picks the
model (English: all-MiniLM-L6-v2; Danish and other languages: multilingual-e5-small, on its query side,
as e5 compares two texts).
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
    "encoder_for_items",
    ]

#: Folder (in ``sample_corpus/``) of the shipped vectors of every text the offline judges embed
#: for the shipped sample answers, so the Answers page starts without loading the model.
SHIPPED_ANSWER_EMBEDDINGS = "answers_embeddings"


def default_encoder(model: str | None = None) -> Any:
    """A lazily loaded :class:`~rag_metrics.retrieval.encoders.Encoder` (default MiniLM)."""
    from rag_metrics.retrieval.memo import LazyEncoder

    return LazyEncoder(model)


def encoder_for_items(items: Sequence[Any], model: str | None = None) -> Any:
    """The encoder comparing the texts of ``items`` (answers, questions, contexts, references): ``model``
    when given, else the one encoder rule on their language (with the operator's choices); the default
    model as :func:`default_encoder` (loaded only on a cache miss)."""
    from rag_metrics.retrieval.choice import choose_encoder, operator_encoders, text_encoders
    from rag_metrics.retrieval.encoders import DEFAULT_MODEL

    if model is None:
        texts = [t for it in items for t in (getattr(it, "question", ""), getattr(it, "answer", ""))]
        model = choose_encoder(texts=texts, overrides=operator_encoders()).model
    return default_encoder() if model in ("", DEFAULT_MODEL) else text_encoders(model).queries


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
