"""rag_metrics: exact, trec_eval-compatible retrieval metrics for RAG systems.

``import rag_metrics`` is light: it never imports streamlit, torch, sentence-transformers or faiss.
"""
from __future__ import annotations

from rag_metrics.errors import InputError, Problem, ValidationReport
from rag_metrics.types import OUT_OF_SCOPE, Chunk, Corpus, Document, GoldenQuery, GoldenSet, Run

__version__ = "0.1.0"

__all__ = [
    "Chunk", "Corpus", "Document", "GoldenQuery", "GoldenSet", "Run", "OUT_OF_SCOPE",
    "InputError", "Problem", "ValidationReport",
]
