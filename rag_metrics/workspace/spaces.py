"""Spaces: the named workspaces a corpus's files live in, and who works in which.

:func:`choose_space` picks a browser session's space: a URL's ``?ws=`` in single-user mode, the
session's private space in class mode (:func:`class_mode`).  A private space is **copy-on-write**:
it holds nothing until the student's first change, and until then reads the shared space's files
(:func:`read_through`), so a new seat costs no disk and no copy.  :func:`ensure_space` creates a
named space as a copy of the shared one; :func:`export_space_archive` and
:func:`import_space_archive` move a whole space as one ``.zip``.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from rag_metrics.config import class_mode_on as _server_class_mode
from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.files import atomic_write_bytes, atomic_write_text
from rag_metrics.io.golden import golden_to_text
from rag_metrics.types import GoldenSet
from rag_metrics.workspace.archive import _commit_import, _settle_import, export_archive, read_archive
from rag_metrics.workspace.checks import _check_saveable
from rag_metrics.workspace.golden_store import Workspace
from rag_metrics.workspace.layout import (
    DEFAULT_SPACE,
    GOLDEN_FILE,
    NAME_FILE,
    SETTINGS_FILE,
    _check_name,
    _read_name,
    folder_name,
    space_dir,
)

__all__ = ["choose_space", "class_mode", "ensure_space", "export_space_archive", "import_space_archive",
           "list_corpora", "private_space_name", "read_through"]


def list_corpora(space: str = DEFAULT_SPACE, root: str | os.PathLike[str] | None = None) -> list[str]:
    """Names of the corpora with saved files in a space (new-scheme folders only)."""
    _settle_import(space, root)
    base = space_dir(space, root)
    out = []
    with contextlib.suppress(OSError):
        for d in sorted(base.iterdir()):
            n = _read_name(d)
            if d.is_dir() and n is not None and d.name == folder_name(n):
                out.append(n)
    return sorted(out)

def ensure_space(space: str, root: str | os.PathLike[str] | None = None,
                 copy_from: str | None = DEFAULT_SPACE) -> Path:
    """Create a named space (idempotent).  On creation, copy every corpus of ``copy_from``."""
    d = space_dir(space, root)
    if space == DEFAULT_SPACE or (d / NAME_FILE).is_file():
        return d
    d.mkdir(parents=True, exist_ok=True)
    if copy_from is not None and copy_from != space:
        for corpus in list_corpora(copy_from, root):
            src = Workspace(corpus, root, space=copy_from)
            dst = Workspace(corpus, root, space=space)
            for f in (GOLDEN_FILE, SETTINGS_FILE):
                with contextlib.suppress(FileNotFoundError):
                    dst.folder.mkdir(parents=True, exist_ok=True)
                    atomic_write_bytes(dst.folder / f, (src.folder / f).read_bytes())
            dst._write_name()
    atomic_write_text(d / NAME_FILE, space + "\n")
    return d

def class_mode(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> bool:
    """True when the server runs in class mode: ``RAG_METRICS_CLASS_MODE=1`` (or true/yes/on)
    or ``--class-mode`` among the script arguments (``streamlit run app.py -- --class-mode``)."""
    return _server_class_mode(argv, env)

def private_space_name(token: str) -> str:
    """The private space of one browser session in class mode."""
    return f"private-{token}"

def read_through(corpus_name: str, space: str = DEFAULT_SPACE,
                 root: str | os.PathLike[str] | None = None, *, settings: bool = False) -> Workspace:
    """The workspace a space *reads* a corpus's golden set (``settings``: its chunking settings)
    from (copy-on-write): its own once it saved that file, else the shared space's.  Writes always
    go to ``Workspace(corpus_name, root, space=space)``; the first one makes the private copy."""
    own = Workspace(corpus_name, root, space=space)
    if space == DEFAULT_SPACE or (own.settings_path if settings else own.path).exists():
        return own
    return Workspace(corpus_name, root)

def choose_space(requested: str | None, token: str, *, class_mode_on: bool | None = None,
                 root: str | os.PathLike[str] | None = None) -> tuple[str, str | None]:
    """The space a browser session works in, and a warning when the request was refused.

    Single-user mode: ``requested`` (e.g. the URL's ``?ws=``) wins when it is a valid name (a new
    named space starts as a copy of the shared one), else :data:`DEFAULT_SPACE`; carry the returned
    name in the URL so a reload finds the same space.  Class mode (:func:`class_mode`): a URL never
    chooses a space (``requested`` is ignored with a warning); the session's private space
    ``private-<token>`` is returned, created lazily (:func:`read_through`).  The app gives a
    student the space of their seat instead (:func:`rag_metrics.server.seats.seat_space`).
    """
    on = _server_class_mode() if class_mode_on is None else class_mode_on
    warning = None
    if on:
        if requested is not None and requested.strip():
            warning = "Ignored the workspace from the link: in class mode a link never chooses a workspace."
        return private_space_name(token), warning
    if requested is not None and requested.strip():
        name = requested.strip()
        try:
            _check_name(name, "workspace")
        except InputError as err:
            warning = f"Ignored the workspace from the link: {err}."
        else:
            if name != DEFAULT_SPACE:
                ensure_space(name, root)
            return name, None
    return DEFAULT_SPACE, warning

def export_space_archive(space: str = DEFAULT_SPACE, root: str | os.PathLike[str] | None = None) -> bytes:
    """Every corpus of a space as one archive."""
    return export_archive([Workspace(n, root, space=space) for n in list_corpora(space, root)])

def import_space_archive(data: bytes, space: str, root: str | os.PathLike[str] | None = None,
                         ) -> ValidationReport:
    """Write every corpus of an archive into ``space``, all or nothing.

    The archive is validated in memory (any error: nothing written, the report says why); its files
    are written into a staging folder of the space and swapped in at once (see the module's
    *Imports*).  Existing golden sets are replaced (a forced save: the old one stays in the undo
    history); settings are merged into the saved ones."""
    entries, report = read_archive(data)
    if not report.ok:
        return report
    items = []
    for e in entries:
        text = None
        if e.golden is not None:
            golden = GoldenSet(e.golden.queries, name=e.name)
            try:
                _check_saveable(golden)
            except InputError as err:
                report.error(f"corpus {e.name!r}: {err}", file="archive")
                continue
            text = golden_to_text(golden, "jsonl")
        items.append((e.name, text, e.settings))
    if report.ok:
        _commit_import(space, root, items)
    return report
