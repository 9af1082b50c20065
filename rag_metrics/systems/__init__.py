"""Systems: anything that ranks chunks for the golden questions (bundled retrievers, uploaded runs,
RAG logs, live search backends), behind one protocol.

Submodules import lazily; ``import rag_metrics.systems`` stays light.
"""
from __future__ import annotations

from rag_metrics.io.logrows import RagLog, RagLogRow
from rag_metrics.io.raglog import load_rag_log, parse_rag_log, read_rag_log

__all__ = ["RagLog", "RagLogRow", "load_rag_log", "parse_rag_log", "read_rag_log"]
