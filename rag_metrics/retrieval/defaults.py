"""The retrieval defaults, each defined once: retriever kinds, default retriever, default depth.

The default chunking lives beside the chunker (:data:`rag_metrics.retrieval.chunking.DEFAULT_CHUNK_SIZE`,
:data:`~rag_metrics.retrieval.chunking.DEFAULT_CHUNK_OVERLAP`).  Importing this module is free.
"""
from __future__ import annotations

__all__ = ["RETRIEVER_KINDS", "DEFAULT_RETRIEVER", "DEFAULT_DEPTH"]

#: Retriever kinds of :func:`rag_metrics.retrieval.factory.make_retriever`, the CLI and the app.
RETRIEVER_KINDS: tuple[str, ...] = ("dense", "bm25", "hybrid")
#: The retriever used when none is named.
DEFAULT_RETRIEVER = "dense"
#: Results retrieved per question by default: ``Retriever.retrieve(k=...)``, ``rag-metrics retrieve
#: --k``, and the depth the app memoises per question (so the largest K it offers).
DEFAULT_DEPTH = 100
