"""ui.budget: the per-chunking caches are bounded by estimated memory, least recently used first."""
from __future__ import annotations

from ui.budget import Budget, budget_bytes, chunking_bytes, index_bytes


def test_least_recently_used_chunkings_are_dropped_beyond_the_budget():
    dropped: list[str] = []
    b = Budget(limit=lambda: 100)
    assert b.add("a", "chunks", 40, lambda: dropped.append("a/chunks")) == []
    b.add("a", "index:dense", 20, lambda: dropped.append("a/index"))
    assert b.add("b", "chunks", 30, lambda: dropped.append("b/chunks")) == []  # 90 <= 100
    b.touch("a")  # a used again: b is now the oldest
    assert b.add("c", "chunks", 30, lambda: dropped.append("c/chunks")) == ["b"]
    assert dropped == ["b/chunks"] and b.sizes() == {"a": 60, "c": 30} and b.total() == 90
    # one group larger than the budget stays (the chunking in use is never dropped)
    assert b.add("d", "chunks", 500, lambda: dropped.append("d")) == ["a", "c"]
    assert b.sizes() == {"d": 500} and "d" not in dropped
    assert b.evicted == ["b", "a", "c"]


def test_a_failing_drop_does_not_stop_the_others():
    def boom():
        raise KeyError("gone")

    b = Budget(limit=lambda: 10)
    b.add("a", "x", 8, boom)
    assert b.add("b", "x", 8, lambda: None) == ["a"]


def test_estimates_and_the_setting(monkeypatch):
    assert chunking_bytes(["abcd", "ef"]) == 2 * 6 + 400 * 2
    assert index_bytes(1000, "dense", 384) == 2 * 4 * 384 * 1000 + 2048 * 1000
    assert index_bytes(1000, "hybrid", 384) == index_bytes(1000, "dense", 384) + 1024 * 1000
    monkeypatch.setenv("RAG_METRICS_CACHE_MB", "64")
    assert budget_bytes() == 64 * 2**20
    monkeypatch.setenv("RAG_METRICS_CACHE_MB", "lots")
    assert budget_bytes() == 512 * 2**20


def test_release_freed_memory_runs_here():
    from ui.budget import release_freed_memory

    assert release_freed_memory() in (True, False)
    import sys

    if sys.platform.startswith("linux"):
        assert release_freed_memory() is True
