"""Formats and user files: TREC and BEIR, golden sets, corpora, RAG logs, traces, safe reads and atomic writes.

``rag_metrics.io`` was a module until issue 25; its names now live in :mod:`rag_metrics.io.trec`.
Reading them here still works for one release and warns (``DeprecationWarning``) with the new path.
"""
from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from rag_metrics._compat import forward

    return forward(__name__, "rag_metrics.io.trec", name)
