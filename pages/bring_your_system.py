"""Bring your system: from a RAG app's files (corpus, golden set or reference answers, run / log /
trace) to a verdict on one page; the Corpus explorer, Golden set editor, Systems and the sidebar stay
for details."""
from __future__ import annotations

from ui import bring_your_system
from ui.shell import ensure_shell

ensure_shell()

bring_your_system.render()
