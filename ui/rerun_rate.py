"""A rerun rate per browser session (issue 50): a tab (or a script posing as one) that asks for more than
:data:`RERUNS` reruns within :data:`WINDOW_S` seconds gets a short message instead of its page, so a flood
of widget messages costs the server a few milliseconds each, not a page's work.

In class mode only, and only under a real server (not ``AppTest``, whose reruns are a test's, back to
back).  Every rerun asked for counts, the refused ones too, so a flood stays refused while it goes on;
a person who clicks on after a second's pause is served.
"""
from __future__ import annotations

import time
from collections import deque

import streamlit as st

from ui import session
from ui.keys import RERUN_TIMES

__all__ = ["RERUNS", "WINDOW_S", "allowed", "guard"]

#: Most reruns one session may ask for within :data:`WINDOW_S` seconds (a person clicking and typing fast
#: asks for 3-4 a second; a tab that waits for each run reaches it only when runs take under 100 ms).
RERUNS = 20
WINDOW_S = 2.0


def allowed(times: deque[float], now: float, reruns: int = RERUNS, window: float = WINDOW_S) -> bool:
    """Record a rerun asked for at ``now`` in ``times`` (a deque of ``maxlen=reruns``) and say whether it may run:
    not when it is the ``reruns``-th within ``window`` seconds.

    >>> t = deque(maxlen=3)
    >>> [allowed(t, s, reruns=3, window=1.0) for s in (0.0, 0.1, 0.2, 0.3, 1.25, 2.5)]
    [True, True, False, False, True, True]
    """
    times.append(now)
    return len(times) < reruns or times[0] <= now - window


def guard() -> None:
    """First thing of a session's run: over the rate, a short message and stop (no page, no sidebar)."""
    from rag_metrics.config import class_mode_on

    if not class_mode_on() or not st.runtime.exists():
        return
    times = session.value(RERUN_TIMES)
    if not isinstance(times, deque) or times.maxlen != RERUNS:
        times = session.store()[RERUN_TIMES] = deque(maxlen=RERUNS)
    if not allowed(times, time.monotonic()):
        st.warning(f"This tab asked the server for more than {RERUNS} redraws in {WINDOW_S:g} seconds, so the lab "
                   "skipped this one. Wait a second, then click again.", icon=":material/hourglass_top:")
        st.stop()
