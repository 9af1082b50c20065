"""Exercises ("Write the metric yourself"): write each of the lesson's functions in Python, run the checks in
your own browser (Pyodide, sandboxed), and get a verdict from the lab's engine; code and attempts kept in
your space.  Opens the exercise named by ``?exercise=NAME``."""
from __future__ import annotations

from ui import exercises, state
from ui.shell import ensure_shell

ensure_shell()

ctx = state.current_or_stop()
exercises.render(ctx)
