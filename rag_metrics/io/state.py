"""Where a class keeps its shared state: files (the default) or PostgreSQL (no Streamlit here).

The class's small stores (seats and rejoin codes, rate limits and guess counters, the spend, embed and
tutor ledgers, teacher sessions and claims, the seat-proof key and used proofs) are each one JSON
document, named like its file (``seats.json``, ``rates.json``, ...).  A store reads its document
(:meth:`FileState.read`) and changes it in one step (:meth:`FileState.change`: read, modify, write),
through one of two backends with the same two methods:

- :class:`FileState` (the default; one host): ``<workspace root>/.class/<name>``, changed under an
  exclusive ``flock`` and written atomically (write, then rename), as before.
- :class:`PostgresState` (``lab.state = "postgresql://..."``; several hosts): one row per document in
  the table ``lab_state``, changed in a transaction that holds the row's lock (``SELECT ... FOR
  UPDATE``).  PostgreSQL's row lock replaces ``flock``, which shared file systems (NFS) do not honour
  across hosts.  The schema is made by numbered migrations (:data:`MIGRATIONS`), applied once at the
  first connection of a process, under an advisory lock (two hosts starting at once apply them once).

The DSN is the operator's secret: write its password as a ``${VAR}`` reference
(``postgresql://lab:${LAB_PG_PASSWORD}@10.0.0.8/lab``), resolved from the environment when the
connection opens (:func:`rag_metrics.config.expand`); messages name only its host, port and database
(:func:`where`).

>>> import tempfile
>>> st = FileState(tempfile.mkdtemp())
>>> with st.change("demo.json") as doc:
...     doc.text = '{"a": 1}'
>>> st.read("demo.json")
'{"a": 1}'
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from rag_metrics.io.pg_state import MIGRATIONS, Document, PostgresState, backend_for, migrate, state_dsn, where

__all__ = ["MIGRATIONS", "ClassState", "Document", "FileState", "PostgresState", "class_state", "migrate", "state_dsn",
           "where"]


class ClassState(Protocol):
    """A backend of the class's shared state (:class:`FileState`, :class:`PostgresState`)."""

    def read(self, name: str) -> str | None: ...

    def change(self, name: str) -> contextlib.AbstractContextManager[Document]: ...


class FileState:
    """The documents as files in ``<root>/.class`` (``root``: the workspace root)."""

    kind = "files"

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.folder = Path(root) / ".class"

    def __repr__(self) -> str:
        return f"FileState({str(self.folder)!r})"

    def path(self, name: str) -> Path:
        return self.folder / name

    def read(self, name: str) -> str | None:
        """The document's text; ``None`` when there is none (an unreadable file reads as damaged text)."""
        try:
            return self.path(name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return ""

    @contextlib.contextmanager
    def change(self, name: str) -> Iterator[Document]:
        from rag_metrics.io.files import atomic_write_text, locked

        path = self.path(name)
        with locked(path):
            doc = Document(self.read(name))
            yield doc
            if doc.text is not None and doc.text != doc.before:
                atomic_write_text(path, doc.text)


def class_state(root: str | os.PathLike[str], dsn: str | None = None) -> FileState | PostgresState:
    """The backend of the class whose workspace root is ``root``: PostgreSQL when ``dsn`` (else
    :func:`state_dsn`) names one (one backend, with its connections, per DSN and process), else files."""
    dsn = state_dsn() if dsn is None else dsn
    return backend_for(dsn) if dsn else FileState(root)
