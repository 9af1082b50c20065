"""What the ``rag-metrics`` subcommands print: the program name, messages on stderr, progress."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

from rag_metrics.config import setting

#: The command's name in messages.
PROG = "rag-metrics"


def stderr(msg: str) -> None:
    """Print one message line on stderr (flushed)."""
    print(msg, file=sys.stderr, flush=True)


class Progress:
    """Stage messages on stderr, only for long inputs (or when RAG_METRICS_PROGRESS=1)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled or setting("progress") == "1"
        self.t0 = time.perf_counter()

    def __call__(self, msg: str) -> None:
        if self.enabled:
            stderr(f"{PROG}: [{time.perf_counter() - self.t0:6.1f}s] {msg}")


def counter_progress(label: str) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback printing ``label: done/total (p%)`` on stderr.

    On a terminal the line is rewritten in place (``\\r``) at most every 0.2 s; otherwise a line is
    printed at most every 10 s, and always at the end.
    """
    tty = sys.stderr.isatty()
    state = {"last": -1.0}

    def cb(done: int, total: int) -> None:
        if total <= 0:
            return
        now = time.monotonic()
        if done < total and now - state["last"] < (0.2 if tty else 10.0):
            return
        state["last"] = now
        msg = f"{label}: {done}/{total} ({100 * done // total}%)"
        if tty:
            print("\r" + msg, end="\n" if done >= total else "", file=sys.stderr, flush=True)
        else:
            print(msg, file=sys.stderr, flush=True)
    return cb
