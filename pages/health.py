"""Golden-set health: every check of rag_metrics.insights.health, with one-click labelling of the chunks most
worth judging, duplicate and too-easy thresholds, and how many queries each category needs."""
from __future__ import annotations

from ui import health
from ui.shell import ensure_shell

ensure_shell()

health.render()
