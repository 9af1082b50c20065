"""A browser's file read in a worker process with a memory limit, in a class (issue 50).

:func:`read` runs a library reader (``describe_bytes``, ``read_sweep_upload``, ``parse_answers``):
in class mode in a worker (:func:`rag_metrics.io.worker.run_limited`) within this run's reading budget,
killed when this browser session ends (its tab closed; the run then stops); outside a class in this
process, as before.  Every page that reads an upload it parses whole asks it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

__all__ = ["read", "session_gone"]


def session_gone() -> Callable[[], bool] | None:
    """A test of whether this browser session has ended (``None`` outside a server's run)."""
    from streamlit.runtime import Runtime, exists
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not exists():
        return None
    runtime, session = Runtime.instance(), ctx.session_id
    return lambda: not runtime.is_active_session(session)


def read(fn: Callable[..., Any], *args: Any, what: str) -> Any:
    """``fn(*args)``; in class mode in the memory-limited worker (``what`` names the file in its messages)."""
    from rag_metrics.config import class_mode_on

    if not class_mode_on():
        return fn(*args)
    from rag_metrics.io.containers import read_limit
    from rag_metrics.io.worker import Cancelled, run_limited, within

    try:
        return run_limited(within, read_limit(), fn, *args, what=what, cancelled=session_gone())
    except Cancelled:
        st.stop()
        raise
