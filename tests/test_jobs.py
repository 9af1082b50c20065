"""The bounded pool and worker slots for costly work (issue 27: costly work never takes more than its
share of a process; the teacher's Class progress never computes students' work in its own run)."""
from __future__ import annotations

import threading

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
