"""ui.prewarm: the first page waits for the launcher's imports, and never waits without a launcher."""
from __future__ import annotations

import sys
import threading
import time

import pytest

from ui import prewarm


@pytest.mark.serial  # measures time: runs alone (tests/tiers.py)
def test_join_returns_at_once_without_a_launcher():
    t = time.monotonic()
    prewarm.join(timeout=5)
    assert time.monotonic() - t < 1


def test_imports_wait_for_the_server_and_join_waits_for_them(monkeypatch):
    listening = threading.Event()
    monkeypatch.setattr(prewarm, "_listening", listening.is_set)
    sys.modules.pop("colorsys", None)
    thread = prewarm.start(modules=("colorsys", "no_such_module_for_the_prewarm_test"), wait=30)
    time.sleep(0.2)
    assert "colorsys" not in sys.modules  # nothing is imported before the server listens
    assert not prewarm._done.is_set()
    listening.set()
    prewarm.join(timeout=30)
    thread.join(timeout=5)
    assert "colorsys" in sys.modules  # imported; a module that fails to import is left to the page
    assert prewarm._done.is_set()


def test_gives_up_waiting_for_a_server_that_never_listens(monkeypatch):
    monkeypatch.setattr(prewarm, "_listening", lambda: False)
    prewarm.start(modules=(), wait=0.2)
    prewarm.join(timeout=10)
    assert prewarm._done.is_set()


def test_listening_reads_the_runtime_without_importing_it(monkeypatch):
    class State:
        name = "NO_SESSIONS_CONNECTED"

    class Runtime:
        _instance = type("R", (), {"state": State()})()

    fake = type(sys)("streamlit.runtime.runtime")
    fake.Runtime = Runtime  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "streamlit.runtime.runtime", fake)
    assert prewarm._listening()
    Runtime._instance = None
    assert not prewarm._listening()
