"""Systems: evaluate your own retriever (uploaded runs and RAG logs, live HTTP / pgvector / Qdrant)
beside the bundled one, with judged@K and the pooled labelling queue."""
from __future__ import annotations

from ui import systems
from ui.shell import ensure_shell

ensure_shell()

systems.render()
