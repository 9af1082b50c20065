"""Class progress (the teacher's view): the lesson's progress per seat, the code exercises, the tutor
(:mod:`ui.class_progress`)."""
from __future__ import annotations

from ui import class_progress
from ui.shell import ensure_shell

ensure_shell()

class_progress.render()
