"""On-disk cache of LLM judge calls (SQLite, one file): a rerun, a K change or a page switch costs
nothing.

Keys are SHA-256 digests of a canonical JSON of *what was asked*: endpoint, model, call kind, the
full request (messages or text, sampling parameters) and the sample number (answer relevancy asks
the same prompt N times).  The API key is never part of a key or a value.  Values are JSON: the
reply content, refusal, finish reason and token counts for chat calls; the vector for embeddings.
Only successful replies are stored (a reply that is not valid JSON is stored too: it was paid for,
and its status is recomputed from it); network errors and HTTP errors are not.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["JudgeCache", "cache_key", "default_judge_cache_path"]


def default_judge_cache_path() -> Path:
    """``<embedding cache dir>/llm-judge.sqlite3`` (``$RAG_METRICS_CACHE`` or ``~/.cache/rag_metrics``)."""
    from rag_metrics.retrieval.cache import default_cache_dir

    return default_cache_dir() / "llm-judge.sqlite3"


def cache_key(**what: Any) -> str:
    """SHA-256 hex of the canonical JSON of ``what``."""
    blob = json.dumps(what, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class JudgeCache:
    """A thread-safe key -> JSON store in one SQLite file (``None`` path: in memory)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path) if self.path is not None else ":memory:",
                                   check_same_thread=False, timeout=30)
        with self._lock:
            if self.path is not None:
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, kind TEXT, "
                             "value TEXT NOT NULL, created REAL)")
            self._db.commit()

    def get(self, key: str) -> Any | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, kind: str, value: Any) -> None:
        blob = json.dumps(value, ensure_ascii=False)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?)", (key, kind, blob, time.time()))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def clear(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM calls")
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()
