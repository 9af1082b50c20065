"""The sample corpus indexed for retrieval, starting from its shipped embeddings.

``sample_corpus/embeddings/`` (located by :func:`rag_metrics.sample.sample_paths`) holds the
embeddings of the default chunking (:data:`~rag_metrics.retrieval.chunking.DEFAULT_CHUNK_SIZE` /
:data:`~rag_metrics.retrieval.chunking.DEFAULT_CHUNK_OVERLAP`) and of the sample golden questions
for the default model, so nothing is embedded and no model is loaded at start (format in
:mod:`rag_metrics.retrieval.cache`).  At load the array is verified by SHA-256 and each chunk by
the SHA-256 of its text; mismatched chunks are re-embedded (and stored in the user's on-disk
cache).  The shipped files are written only by the build script ``sample_corpus/build_embeddings.py``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from rag_metrics.io.corpus import load_corpus
from rag_metrics.retrieval.cache import EmbeddingCache
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, chunk_corpus
from rag_metrics.retrieval.defaults import DEFAULT_RETRIEVER
from rag_metrics.retrieval.factory import make_retriever
from rag_metrics.sample import sample_paths
from rag_metrics.types import Chunk, Corpus

__all__ = ["SampleIndex", "load_sample_index"]


@dataclass
class SampleIndex:
    """The sample corpus, its default chunks and an indexed retriever."""

    corpus: Corpus
    chunks: list[Chunk]
    retriever: Any
    #: shipped embeddings were found and their array hash verified
    shipped_ok: bool = False
    #: chunk ids whose text differs from the shipped manifest (re-embedded at load)
    stale: list[str] = field(default_factory=list)


def load_sample_index(
    model: str | None = None, *, root: str | os.PathLike[str] | None = None,
    cache: EmbeddingCache | None = None, kind: str = DEFAULT_RETRIEVER, progress: Any = None,
) -> SampleIndex:
    """Load, chunk (default settings) and index the sample corpus, using the shipped embeddings.

    Parameters
    ----------
    model : str, optional
        Embedding model; the shipped embeddings only help for the default model.
    root : path-like, optional
        The sample folder (default: :func:`rag_metrics.sample.sample_dir`).
    cache : EmbeddingCache, optional
        Default: the user's on-disk cache.  The shipped embeddings are added to it as a
        read-only layer.
    kind : {"dense", "bm25", "hybrid"}
        Retriever to build (see :func:`rag_metrics.retrieval.factory.make_retriever`).
    progress : callable, optional
        ``progress(done, total)`` while (re-)embedding.

    Returns
    -------
    SampleIndex
        The corpus, its chunks and the indexed retriever, with the state of the shipped embeddings.
    """
    paths = sample_paths(root)
    corpus = load_corpus(paths.docs, name="sample_corpus")
    chunks = chunk_corpus(corpus, DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP)
    cache = cache if cache is not None else EmbeddingCache()
    shipped = cache.add_shipped(paths.embeddings)
    stale = shipped.stale_chunks([c.id for c in chunks], [c.text for c in chunks]) \
        if shipped is not None else [c.id for c in chunks]
    retriever = make_retriever(kind, model, cache)
    retriever.index(chunks, progress)
    return SampleIndex(corpus, chunks, retriever, shipped is not None, stale)
