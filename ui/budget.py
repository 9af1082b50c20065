"""A memory budget for the app's per-chunking caches (chunk sets, indexes, chunk vectors).

Streamlit bounds a cache by its number of entries; one entry of a 5,000-chunk BEIR corpus weighs
tens of megabytes (texts, vectors, a FAISS and a BM25 index) where one of the sample weighs one.
Each heavy entry is registered here with an estimate of its bytes and a callback that drops it
from its Streamlit cache; when the registered total exceeds the budget, the least recently used
chunkings are dropped (never the one just used).  Sessions that still hold a dropped object keep
it alive until they let go; the cache recomputes it on the next use.

The budget is ``RAG_METRICS_CACHE_MB`` megabytes (default :data:`DEFAULT_BUDGET_MB`).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable

from rag_metrics.config import setting

__all__ = ["DEFAULT_BUDGET_MB", "Budget", "budget_bytes", "chunking_bytes", "index_bytes", "release_freed_memory"]

#: Default memory budget of the per-chunking caches, in megabytes.
DEFAULT_BUDGET_MB = 512


def budget_bytes() -> int:
    """The budget in bytes from ``RAG_METRICS_CACHE_MB`` (default :data:`DEFAULT_BUDGET_MB`)."""
    raw = setting("cache_mb")
    try:
        mb = float(raw) if raw else DEFAULT_BUDGET_MB
    except ValueError:
        mb = DEFAULT_BUDGET_MB
    return int(max(mb, 1) * 2**20)


def chunking_bytes(texts: Iterable[str]) -> int:
    """Estimated bytes of one chunk set: each text held twice (chunk, lookup), Python string and
    object overheads (~400 bytes a chunk)."""
    n, chars = 0, 0
    for t in texts:
        n += 1
        chars += len(t)
    return 2 * chars + 400 * n


def index_bytes(n_chunks: int, kind: str, dim: int = 384) -> int:
    """Estimated bytes of one indexed retriever over ``n_chunks`` chunks: vectors and a flat FAISS
    copy for dense (4 bytes a dimension, twice), a BM25 matrix for lexical (~1 kB a chunk), both
    for hybrid; plus the memoised rankings (~2 kB a chunk)."""
    dense = 2 * 4 * dim * n_chunks
    lexical = 1024 * n_chunks
    per_kind = {"dense": dense, "bm25": lexical, "hybrid": dense + lexical}.get(kind, dense + lexical)
    return per_kind + 2048 * n_chunks


def release_freed_memory() -> bool:
    """Give the memory the encoder freed back to the system (glibc ``malloc_trim``).

    Embedding a few thousand chunks leaves ~150-200 MB of freed working memory in the allocator's
    arenas, counted in the server's RSS until reused; after a large embedding step this returns
    it.  ``False`` where glibc is not available (nothing to do).
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim(0)
    return True


class Budget:
    """LRU of named groups (one per chunking fingerprint) of cache entries with estimated sizes.

    Parameters
    ----------
    limit : callable returning int
        The budget in bytes (read at each check, so tests and operators can change it).
    """

    def __init__(self, limit: Callable[[], int] = budget_bytes) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._groups: OrderedDict[str, dict[str, tuple[int, Callable[[], None]]]] = OrderedDict()
        self.evicted: list[str] = []

    def add(self, group: str, entry: str, nbytes: int, drop: Callable[[], None]) -> list[str]:
        """Register ``entry`` of ``group`` (``nbytes``; ``drop()`` removes it from its cache), mark
        the group used, and drop least recently used groups over the budget.  Returns them."""
        with self._lock:
            self._groups.setdefault(group, {})[entry] = (int(nbytes), drop)
            self._groups.move_to_end(group)
        return self._enforce()

    def touch(self, group: str) -> None:
        """Mark ``group`` used now (a cache hit)."""
        with self._lock:
            if group in self._groups:
                self._groups.move_to_end(group)

    def total(self) -> int:
        with self._lock:
            return sum(n for g in self._groups.values() for n, _ in g.values())

    def sizes(self) -> dict[str, int]:
        """``{group: estimated bytes}``, least recently used first."""
        with self._lock:
            return {k: sum(n for n, _ in g.values()) for k, g in self._groups.items()}

    def clear(self) -> None:
        with self._lock:
            self._groups.clear()

    def _enforce(self) -> list[str]:
        dropped: list[tuple[str, list[Callable[[], None]]]] = []
        with self._lock:
            limit = self._limit()
            total = sum(n for g in self._groups.values() for n, _ in g.values())
            while total > limit and len(self._groups) > 1:
                name, entries = self._groups.popitem(last=False)
                total -= sum(n for n, _ in entries.values())
                dropped.append((name, [d for _, d in entries.values()]))
        for name, drops in dropped:  # outside the lock: a drop clears a Streamlit cache entry
            for d in drops:
                try:
                    d()
                except Exception:  # noqa: BLE001 - an entry already gone is fine
                    pass
            self.evicted.append(name)
        return [n for n, _ in dropped]
