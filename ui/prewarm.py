"""The app's modules imported while a fresh server waits for its first browser (``python -m ui.launch``).

A fresh process spends about 1.5 s of its first page importing Altair, pandas and the lab's own
modules, after the browser has already waited for the server, its own start and the page's
scripts. :func:`start` does those imports on a thread as soon as the server listens, while the
browser loads. The first page's script calls :func:`join` before any import of its own, so the two
threads never import at the same time (modules that import each other, imported from two threads
at once, can be seen half-initialised). Without the launcher (``streamlit run app.py``, AppTest)
:func:`join` returns at once.
"""
from __future__ import annotations

import importlib
import sys
import threading
import time
from collections.abc import Sequence

__all__ = ["MODULES", "join", "start"]

#: What the first page (the Dashboard) imports; the rest of each import tree comes with them.
MODULES = ("ui.shell", "ui.sidebar", "ui.state", "ui.cache", "ui.views", "ui.systems", "ui.answer_views",
           "ui.report_ui", "rag_metrics.evaluation", "rag_metrics.insights.readouts", "rag_metrics.retrieval.dense")

_done = threading.Event()
_done.set()


def join(timeout: float = 120.0) -> None:
    """Wait until :func:`start`'s imports are done (at once when nothing was started)."""
    _done.wait(timeout)


def _listening() -> bool:
    """Whether the Streamlit runtime has started (read from ``sys.modules``: importing it here would
    race with the server's own start on the main thread)."""
    rt = sys.modules.get("streamlit.runtime.runtime")
    inst = getattr(getattr(rt, "Runtime", None), "_instance", None)
    state = getattr(inst, "state", None)
    return getattr(state, "name", "") in ("NO_SESSIONS_CONNECTED", "ONE_OR_MORE_SESSIONS_CONNECTED")


def _warm(modules: Sequence[str], wait: float) -> None:
    try:
        end = time.monotonic() + wait
        while not _listening() and time.monotonic() < end:
            time.sleep(0.02)
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the first page then imports it and shows its message
                pass
    finally:
        _done.set()


def start(modules: Sequence[str] = MODULES, wait: float = 120.0) -> threading.Thread:
    """Import ``modules`` on a daemon thread once the server listens (at most ``wait`` s from now)."""
    _done.clear()
    t = threading.Thread(target=_warm, args=(tuple(modules), wait), name="rag-metrics-prewarm", daemon=True)
    t.start()
    return t
