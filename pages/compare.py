"""Compare A vs B: two retrieval configurations on the same golden set, with paired statistics."""
from __future__ import annotations

from ui import compare
from ui.shell import ensure_shell

ensure_shell()

compare.render()
