"""Tune the retriever: a sweep over chunking and retrievers, a Pareto chart of quality against cost,
and an honest held-out check (rag_metrics.tuning; the CLI's `rag-metrics sweep`)."""
from __future__ import annotations

from ui import tune
from ui.shell import ensure_shell

ensure_shell()

tune.render()
