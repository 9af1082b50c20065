"""A bounded pool for costly work that must not run in a page's own run (no Streamlit here).

The teacher's Class progress asks for every seat's metrics; computing them in the teacher's
session re-embedded every seat's questions before the page could draw (issue 27).  Instead the
page asks :func:`pool` for a result by key: a kept result is returned at once, a missing one is
queued (at most ``workers`` run at a time, at most ``max_pending`` wait) and the page shows it as
"computing" until a later run (the page refreshes itself) finds it done.

>>> p = JobPool(workers=1)
>>> p.result("k", lambda: 6 * 7, wait=5.0)
('done', 42)
>>> p.result("k", lambda: 0)
('done', 42)
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as _wait
from typing import Any

__all__ = ["JobPool", "pool", "slot"]


class JobPool:
    """Results by key, computed by at most ``workers`` threads; the newest ``keep`` are kept."""

    def __init__(self, workers: int = 2, max_pending: int = 256, keep: int = 2048) -> None:
        self.workers, self.max_pending, self.keep = max(1, workers), max_pending, keep
        self._exec = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="lab-job")
        self._jobs: dict[Hashable, Future[Any]] = {}
        self._lock = threading.Lock()

    def result(self, key: Hashable, compute: Callable[[], Any], wait: float = 0.0) -> tuple[str, Any]:
        """``("done", value)``, ``("error", exception)``, ``("pending", None)`` (queued now or before)
        or ``("busy", None)`` (the queue is full: asked again later)."""
        with self._lock:
            fut = self._jobs.get(key)
            if fut is None:
                pending = sum(1 for f in self._jobs.values() if not f.done())
                if pending >= self.max_pending:
                    return "busy", None
                fut = self._exec.submit(compute)
                self._jobs[key] = fut
                if len(self._jobs) > self.keep:  # forget the oldest finished results
                    for k in [k for k, f in self._jobs.items() if f.done()][: len(self._jobs) - self.keep]:
                        del self._jobs[k]
        if wait > 0:
            _wait([fut], timeout=wait)
        if not fut.done():
            return "pending", None
        err = fut.exception()
        return ("error", err) if err is not None else ("done", fut.result())

    def pending(self) -> int:
        with self._lock:
            return sum(1 for f in self._jobs.values() if not f.done())


_POOL: JobPool | None = None
_POOL_LOCK = threading.Lock()


def pool(workers: int = 2) -> JobPool:
    """The process's pool (made on first use with ``workers`` threads: ``lab.budgets.workers``)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = JobPool(workers)
        return _POOL


_SLOTS: threading.BoundedSemaphore | None = None


@contextlib.contextmanager
def slot(workers: int = 2, waiting: Callable[[], None] | None = None, poll: float = 0.5) -> Iterator[None]:
    """Run costly work that must stay in the caller's thread (it shows its own progress and can be
    cancelled there: embedding a corpus, a judge run) in one of the process's ``workers`` slots
    (``lab.budgets.workers``, fixed on first use): when all are taken, wait, calling ``waiting()``
    every ``poll`` seconds (a page says so there; Streamlit stops a cancelled run at that call).

    >>> with slot(1):
    ...     print("one at a time")
    one at a time
    """
    global _SLOTS
    with _POOL_LOCK:
        if _SLOTS is None:
            _SLOTS = threading.BoundedSemaphore(max(1, workers))
        sem = _SLOTS
    while not sem.acquire(timeout=poll):
        if waiting is not None:
            waiting()
    try:
        yield
    finally:
        sem.release()
