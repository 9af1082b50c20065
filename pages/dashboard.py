"""Dashboard: the metrics at K with confidence intervals, against K, per category, hit rates and abstention."""
from __future__ import annotations

from ui import dashboard
from ui.shell import ensure_shell

ensure_shell()

dashboard.render()
