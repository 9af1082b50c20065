"""Lesson ("Start here"): the lesson's steps one at a time, in English or Danish, with the live numbers
of the current corpus and system, a checked task per step, hints, and progress kept in the workspace."""
from __future__ import annotations

from ui import lesson, state
from ui.shell import ensure_shell

ensure_shell()

ctx = state.current_or_stop()
lesson.render(ctx)
