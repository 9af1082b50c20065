"""The user's files on disk: golden sets (saves, undo, checks, archives) and corpora.

``rag_metrics.workspace`` was a module until issue 25; its names now live in
:mod:`rag_metrics.workspace.store`. Reading them here still works for one release and warns
(``DeprecationWarning``) with the new path.
"""
from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from rag_metrics._compat import forward

    return forward(__name__, "rag_metrics.workspace.store", name)
