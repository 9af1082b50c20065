"""Presenter view: the stakeholder report's content (rag_metrics.report.html.report_content), large and clean."""
from __future__ import annotations

from ui import presenter
from ui.shell import ensure_shell

ensure_shell()

presenter.render()
