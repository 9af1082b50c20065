"""RAGAS context metrics: RAGAS's ID-based (LLM-free) context precision and recall from the golden
labels, next to precision@K, recall@K and AP@K; the RAGAS-ready export; what needs a judge model."""
from __future__ import annotations

from ui import ragas
from ui.shell import ensure_shell

ensure_shell()

ragas.render()
