"""Live search backends, one module each: :mod:`.http`, :mod:`.pgvector`, :mod:`.qdrant`.

Each takes a small validated frozen config (secrets only as ``${VAR}`` references), implements
the :class:`~rag_metrics.systems.base.Backend` protocol, and is wrapped by
:class:`~rag_metrics.systems.base.LiveSystem` (memo, concurrency, per-question failures).
Client libraries (psycopg, qdrant-client) are imported only when a backend is used.
"""
from __future__ import annotations

__all__: list[str] = []
