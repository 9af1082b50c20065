"""The bounded pool and worker slots for costly work (issue 27: costly work never takes more than its
share of a process; the teacher's Class progress never computes students' work in its own run)."""
from __future__ import annotations

import threading

import pytest

from rag_metrics import jobs


def test_results_are_kept_and_the_queue_is_bounded():
    gate = threading.Event()
    pool = jobs.JobPool(workers=1, max_pending=2)
    assert pool.result("a", lambda: gate.wait(30) and 1) == ("pending", None)
    assert pool.result("b", lambda: 2) == ("pending", None)  # queued behind "a"
    assert pool.result("c", lambda: 3) == ("busy", None)     # the queue is full: asked again later
    gate.set()
    assert pool.result("a", lambda: 0, wait=30) == ("done", 1)
    assert pool.result("b", lambda: 0, wait=30) == ("done", 2)
    state, err = pool.result("e", lambda: 1 / 0, wait=30)
    assert state == "error" and isinstance(err, ZeroDivisionError)


def test_one_slot_lets_one_costly_job_run(monkeypatch):
    monkeypatch.setattr(jobs, "_SLOTS", None)
    inside, release, waited = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with jobs.slot(1):
            inside.set()
            release.wait(30)

    t = threading.Thread(target=first)
    t.start()
    inside.wait(30)
    order = []

    def waiting() -> None:
        order.append("waited")
        waited.set()
        release.set()  # the first job finishes once the second says it waits

    with jobs.slot(1, waiting, poll=0.01):
        order.append("ran")
    t.join(30)
    assert order[0] == "waited" and order[-1] == "ran"


def _hold(slots, ticket, inside: threading.Event, release: threading.Event) -> threading.Thread:
    def run() -> None:
        slots.acquire(ticket)
        inside.set()
        release.wait(30)
        slots.release(ticket)
    t = threading.Thread(target=run)
    t.start()
    assert inside.wait(30)
    return t


def test_a_waiting_job_knows_how_many_are_ahead_and_jobs_start_in_arrival_order():
    slots = jobs.Slots(1)
    release = threading.Event()
    running = _hold(slots, jobs.Ticket("first"), threading.Event(), release)
    second, third = jobs.Ticket("second"), jobs.Ticket("third")
    seen: dict[str, set[int]] = {"second": set(), "third": set()}
    order: list[str] = []

    def waiter(t: jobs.Ticket) -> threading.Thread:
        def run() -> None:
            slots.acquire(t, waiting=lambda: seen[t.what].add(t.ahead), poll=0.01)
            order.append(t.what)
            slots.release(t)
        th = threading.Thread(target=run)
        th.start()
        return th

    a = waiter(second)
    while slots.waiting() < 1:
        threading.Event().wait(0.01)
    b = waiter(third)
    while not seen["third"]:
        threading.Event().wait(0.01)
    assert seen["second"] == {0} and seen["third"] == {1}  # "waiting: 1 ahead"
    release.set()
    for th in (running, a, b):
        th.join(30)
    assert order == ["second", "third"] and slots.running() == 0 and slots.waiting() == 0


def test_cancel_stops_the_work_between_batches_and_frees_its_slot(monkeypatch):
    monkeypatch.setattr(jobs, "_SLOTS", None)
    done: list[int] = []
    with pytest.raises(jobs.Cancelled), jobs.slot(1) as ticket:
        for batch in range(10):
            ticket.check(batch, 10)   # between batches
            done.append(batch)
            if batch == 2:
                ticket.cancel()       # the person pressed Cancel during batch 2
    assert done == [0, 1, 2] and ticket.done == 3 and ticket.total == 10
    assert jobs.slots().running() == 0    # the cancelled job gave its slot back
    with jobs.slot(1) as t:               # the next job runs at once
        assert t.running and jobs.current() is t


def test_a_cancelled_waiting_job_leaves_the_queue():
    slots = jobs.Slots(1)
    release = threading.Event()
    running = _hold(slots, jobs.Ticket("first"), threading.Event(), release)
    ticket = jobs.Ticket("waiting")
    with pytest.raises(jobs.Cancelled):
        slots.acquire(ticket, waiting=ticket.cancel, poll=0.01)
    assert slots.waiting() == 0 and slots.running() == 1
    release.set()
    running.join(30)
    assert slots.running() == 0


def test_a_thread_holding_a_slot_does_not_take_a_second_one(monkeypatch):
    monkeypatch.setattr(jobs, "_SLOTS", None)
    with jobs.slot(1) as outer:
        with jobs.slot(1) as inner:  # the library's embedding inside a page's costly step
            assert inner is outer
        assert jobs.slots().running() == 1
    assert jobs.slots().running() == 0 and jobs.current() is None


def test_embedding_many_new_texts_takes_a_slot_and_stops_between_slabs(monkeypatch):
    import numpy as np

    from rag_metrics.retrieval import cache as rc

    monkeypatch.setattr(jobs, "_SLOTS", None)
    monkeypatch.setattr(rc, "SLAB", 10)
    seen: list[int] = []

    class Enc:
        name, dim = "fake", 2

        def encode(self, texts, progress=None):
            seen.append(jobs.slots().running())
            t = jobs.current()
            if len(seen) == 2:
                t.cancel()  # Cancel pressed while the second slab is embedded
            return np.ones((len(texts), 2), dtype=np.float32)

    with pytest.raises(jobs.Cancelled):
        rc.encode_with_cache(Enc(), [f"text {i}" for i in range(100)], None)
    assert seen == [1, 1]                   # in a slot; stopped before the third slab
    assert jobs.slots().running() == 0
    few = rc.encode_with_cache(Enc(), ["a", "b"], None)  # a few texts (a question) take no slot
    assert few.shape == (2, 2) and seen[-1] == 0


def test_a_job_the_library_queued_itself_reports_its_wait_through_the_hook(monkeypatch):
    slots = jobs.Slots(1)
    monkeypatch.setattr(jobs, "_SLOTS", slots)
    seen: list[tuple[int, bool]] = []
    monkeypatch.setattr(jobs, "on_wait", lambda t: seen.append((t.ahead, t.running)))
    release = threading.Event()
    running = _hold(slots, jobs.Ticket("other"), threading.Event(), release)
    threading.Timer(0.2, release.set).start()
    with jobs.slot(1, poll=0.01):
        pass
    running.join(30)
    assert seen[0] == (0, False) and seen[-1] == (0, True)  # waited (none ahead, one running), then ran
