"""Failures at K, first-relevant-rank histogram, and a per-query drill-down with each metric's arithmetic."""
from __future__ import annotations

from ui import failures
from ui.shell import ensure_shell

ensure_shell()

failures.render()
