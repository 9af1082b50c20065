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
from typing import Any, cast

__all__ = ["Cancelled", "JobPool", "Slots", "Ticket", "charge", "current", "metered", "pool", "set_meter", "slot",
           "slots"]


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


class Cancelled(Exception):
    """Raised by :meth:`Ticket.check` in costly work whose person pressed Cancel (between batches)."""


class Ticket:
    """One costly job's place in the process's queue of worker slots: how many wait ahead of it
    (``ahead``), whether it runs (``running``), and its cancel flag, which the work reads between
    batches (:meth:`check`).  A page keeps the ticket of its session's job so its Cancel button
    can set the flag.

    >>> t = Ticket("embedding")
    >>> t.cancel(); t.cancelled
    True
    """

    def __init__(self, what: str = "") -> None:
        self.what = what
        self.ahead = 0
        self.running = False
        self.done = 0
        self.total = 0
        self._cancel = threading.Event()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Ask the work to stop at its next batch (and a waiting job to leave the queue)."""
        self._cancel.set()

    def check(self, done: int | None = None, total: int | None = None) -> None:
        """Between two batches: note the progress; raise :class:`Cancelled` when Cancel was pressed."""
        if done is not None:
            self.done = done
        if total is not None:
            self.total = total
        if self._cancel.is_set():
            raise Cancelled(f"{self.what or 'the job'} was cancelled")


class Slots:
    """At most ``workers`` jobs run at once; the others wait in arrival order (first come, first
    served), each knowing how many are ahead of it."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._cond = threading.Condition()
        self._running = 0
        self._queue: list[Ticket] = []

    def running(self) -> int:
        with self._cond:
            return self._running

    def waiting(self) -> int:
        with self._cond:
            return len(self._queue)

    def acquire(self, ticket: Ticket, waiting: Callable[[], None] | None = None, poll: float = 0.5) -> None:
        """Wait for a slot: ``ticket.ahead`` is kept current and ``waiting()`` called every ``poll``
        seconds meanwhile; a cancelled ticket leaves the queue (:class:`Cancelled`), as does an
        exception from ``waiting`` (Streamlit stops a run there)."""
        with self._cond:
            self._queue.append(ticket)
        try:
            while True:
                with self._cond:
                    if ticket.cancelled:
                        raise Cancelled(f"{ticket.what or 'the job'} was cancelled while waiting")
                    ticket.ahead = self._queue.index(ticket)
                    if ticket.ahead < self.workers - self._running:
                        self._queue.remove(ticket)
                        self._running += 1
                        ticket.ahead, ticket.running = 0, True
                        self._cond.notify_all()
                        return
                if waiting is not None:
                    waiting()  # at once, then every poll seconds
                with self._cond:
                    if not ticket.cancelled:
                        self._cond.wait(poll)
        except BaseException:
            with self._cond:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                self._cond.notify_all()
            raise

    def release(self, ticket: Ticket) -> None:
        with self._cond:
            if ticket.running:
                ticket.running = False
                self._running -= 1
            self._cond.notify_all()


_SLOTS: Slots | None = None
_HELD = threading.local()
#: Called with the ticket while a job waits whose caller gave no ``waiting`` (the library's own
#: embedding, :func:`rag_metrics.retrieval.cache.encode_with_cache`): the app sets it to show the
#: place in the queue on the page that waits (``None``: wait silently, as the CLI does).
on_wait: Callable[[Ticket], None] | None = None  # the ticket this thread runs under (a slot is held once per thread)


def slots(workers: int | None = None) -> Slots:
    """The process's :class:`Slots` (made on first use with ``workers``, ``lab.budgets.workers``; 2 when
    the first user does not say)."""
    global _SLOTS
    with _POOL_LOCK:
        if _SLOTS is None:
            _SLOTS = Slots(2 if workers is None else workers)
        return _SLOTS


def current() -> Ticket | None:
    """The ticket of the slot this thread holds (``None``: none)."""
    return getattr(_HELD, "ticket", None)


@contextlib.contextmanager
def slot(workers: int | None = None, waiting: Callable[[], None] | None = None, poll: float = 0.5,
         ticket: Ticket | None = None) -> Iterator[Ticket]:
    """Run costly work that must stay in the caller's thread (it shows its own progress and can be
    cancelled there: embedding a corpus, a judge run) in one of the process's ``workers`` slots
    (``lab.budgets.workers``, fixed on first use): when all are taken, wait in line, calling
    ``waiting()`` every ``poll`` seconds (a page shows ``ticket.ahead`` there: "waiting: 2 ahead").
    Yields the :class:`Ticket`, whose :meth:`Ticket.check` the work calls between batches; the slot
    is freed however the work ends (done, failed, cancelled).  A thread that holds a slot already
    (a page's costly step around the library's embedding) keeps it: no second slot, no deadlock.

    >>> with slot(1) as t:
    ...     print("one at a time", t.running)
    one at a time True
    """
    held = current()
    if held is not None:
        yield held
        return
    ticket = ticket if ticket is not None else Ticket()
    hook = on_wait if waiting is None else None
    if hook is not None:
        def waiting() -> None:
            hook(ticket)
    pool_ = slots(workers)
    pool_.acquire(ticket, waiting, poll)
    if hook is not None:
        hook(ticket)  # it runs now (the page's note goes)
    _HELD.ticket = ticket
    try:
        yield ticket
    finally:
        _HELD.ticket = None
        pool_.release(ticket)


# ---- the embedding meter (CPU as a budget) ----------------------------------------------------------
_METER = threading.local()
_UNSET = object()
#: Called (with no argument) for the meter of a thread that was given none (:func:`set_meter`): the app
#: sets it to find the meter of the browser session whose run this thread is (``None``: free).
meter_provider: Callable[[], Callable[[int], None] | None] | None = None


def set_meter(charge_fn: Callable[[int], None] | None) -> None:
    """Make ``charge_fn(texts)`` the meter of the work this thread runs from now on (``None``: free).
    Without one, :data:`meter_provider` finds it (the app: the student's seat's
    :func:`rag_metrics.server.budgets.embed_meter`); the library calls :func:`charge` before it embeds new texts."""
    _METER.charge = charge_fn


@contextlib.contextmanager
def metered(charge_fn: Callable[[int], None] | None) -> Iterator[None]:
    """:func:`set_meter` for the work inside the block (the previous meter back after it)."""
    before = getattr(_METER, "charge", _UNSET)
    _METER.charge = charge_fn
    try:
        yield
    finally:
        if before is _UNSET:
            del _METER.charge
        else:
            _METER.charge = before


def charge(texts: int) -> None:
    """Count ``texts`` new texts about to be embedded against this thread's meter (none: free, as in
    the CLI); the meter raises when they are over its budget, before any is embedded."""
    if texts <= 0:
        return
    got = getattr(_METER, "charge", _UNSET)
    fn: Callable[[int], None] | None
    if got is _UNSET:
        fn = meter_provider() if meter_provider is not None else None
    else:
        fn = cast("Callable[[int], None] | None", got)
    if fn is not None:
        fn(int(texts))
