"""Corpus explorer: browse chunks, query live, re-chunk (labels carried across), load another corpus."""
from __future__ import annotations

from ui import corpus_explorer
from ui.shell import ensure_shell

ensure_shell()

corpus_explorer.render()
