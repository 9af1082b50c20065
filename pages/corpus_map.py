"""Corpus map: chunk embeddings in 2-D (PCA; UMAP when installed) with the golden questions placed in
the same plane; selecting a question draws lines to its relevant and retrieved chunks."""
from __future__ import annotations

from ui import corpus_map
from ui.shell import ensure_shell

ensure_shell()

corpus_map.render()
