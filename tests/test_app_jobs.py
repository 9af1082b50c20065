"""Costly work in the app (issue 27): a session waits in line for one of the process's worker slots
and its page says where it stands ("waiting: 1 ahead"); a cancelled job leaves the line and its slot
is free for the next.  The page runs :func:`ui.views.costly` as every costly step does."""
from __future__ import annotations

import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from rag_metrics import jobs


def _page() -> None:
    import streamlit as st

    from ui import views

    with views.costly("Embedding chunks", cancel_key="embed_cancel"):
        st.write("embedded")


@pytest.fixture
def one_busy_slot(monkeypatch, app_env):
    """The process's one worker slot taken by another session, and one more session in line."""
    slots = jobs.Slots(1)
    monkeypatch.setattr(jobs, "_SLOTS", slots)
    release = threading.Event()
    started = threading.Event()

    def other(name: str, ready: threading.Event | None) -> None:
        t = jobs.Ticket(name)
        slots.acquire(t, poll=0.01)
        if ready is not None:
            ready.set()
            release.wait(60)
        slots.release(t)

    holder = threading.Thread(target=other, args=("running", started))
    holder.start()
    assert started.wait(30)
    queued = threading.Thread(target=other, args=("ahead", None))
    queued.start()
    while slots.waiting() < 1:
        time.sleep(0.01)
    yield slots, release
    release.set()
    holder.join(30)
    queued.join(30)


def _when(cond, then) -> threading.Thread:
    def run() -> None:
        end = time.monotonic() + 60
        while not cond() and time.monotonic() < end:
            time.sleep(0.01)
        then()
    t = threading.Thread(target=run)
    t.start()
    return t


def _page_ticket(slots: jobs.Slots) -> jobs.Ticket | None:
    return next((t for t in list(slots._queue) if t.what == "Embedding chunks"), None)


def test_the_page_waits_in_line_and_says_how_many_were_ahead(one_busy_slot):
    slots, release = one_busy_slot
    # the other jobs finish once this page's job has waited in line behind one
    watcher = _when(lambda: (t := _page_ticket(slots)) is not None and t.ahead == 1, release.set)
    at = AppTest.from_function(_page, default_timeout=60).run()
    watcher.join(30)
    assert not at.exception
    assert any(b.label == "Cancel embedding chunks" for b in at.button)
    captions = " ".join(c.value for c in at.caption)
    assert "waited" in captions and "(1 ahead at first)" in captions
    assert [m.value for m in at.markdown if m.value == "embedded"]
    assert slots.running() == 0 and slots.waiting() == 0


def test_a_job_cancelled_in_line_leaves_it_and_does_nothing(one_busy_slot):
    slots, release = one_busy_slot
    # Cancel pressed while the page waits: its ticket's cancel flag (a Stop of the run does the same)
    watcher = _when(lambda: _page_ticket(slots) is not None, lambda: _page_ticket(slots).cancel())
    at = AppTest.from_function(_page, default_timeout=60).run()
    watcher.join(30)
    assert not at.exception
    assert any("Embedding chunks cancelled" in i.value for i in at.info)
    assert not [m for m in at.markdown if m.value == "embedded"]
    assert slots.waiting() == 1 and slots.running() == 1  # only the other sessions' jobs are left
    release.set()
    deadline = time.monotonic() + 30
    while slots.running() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert slots.running() == 0 and slots.waiting() == 0
