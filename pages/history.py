"""History: evaluations saved as named runs, each metric over runs with CIs, and a paired
comparison of any two runs by the one decision rule (the CLI's --save-run / --baseline gate)."""
from __future__ import annotations

from ui import history
from ui.shell import ensure_shell

ensure_shell()

history.render()
