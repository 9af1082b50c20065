"""Where a workspace's files live: the folder of each space and corpus, their injective names, the
file names and size limits every other workspace module shares.

``<root>/<corpus folder>/golden.jsonl`` for the shared (default) space, and
``<root>/spaces/<space folder>/<corpus folder>/golden.jsonl`` for a named space.  ``root`` is
``$RAG_METRICS_WORKSPACE`` or ``~/.rag_metrics/workspace``.  Folder names are injective
(:func:`folder_name`); each folder records its exact name in ``name.txt`` (:func:`_write_name`),
which :func:`list_spaces` reads back.  The overview of the whole workspace is
:mod:`rag_metrics.workspace.store`.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path

from rag_metrics.config import setting
from rag_metrics.errors import InputError
from rag_metrics.io.files import atomic_write_text
from rag_metrics.io.files import locked as _locked

__all__ = ["DEFAULT_SPACE", "HISTORY_SIZE", "MAX_GOLDEN_BYTES", "default_workspace_dir", "folder_name", "list_spaces",
           "space_dir"]

GOLDEN_FILE = "golden.jsonl"
SETTINGS_FILE = "settings.json"
NAME_FILE = "name.txt"
HISTORY_DIR = "history"
UNDONE_DIR = "undone"     # under history/: versions an undo replaced (for redo)
DAMAGED_DIR = "damaged"   # under history/: entries undo refused
IMPORT_MARK = ".import-commit.json"
SPACES_DIR = "spaces"
#: The shared space (files directly under the root, as before named spaces existed).
DEFAULT_SPACE = "shared"
#: Golden versions kept for undo.
HISTORY_SIZE = 20
#: A saved golden file larger than this is not loaded (the app says so and offers reset/export).
MAX_GOLDEN_BYTES = 50 * 1024 * 1024
#: Bounds of the saved chunking settings (characters).
_SETTING_BOUNDS = {"chunk_size": (1, 10_000_000), "chunk_overlap": (0, 10_000_000)}
_MAX_NAME_CHARS = 200


def default_workspace_dir() -> Path:
    """``$RAG_METRICS_WORKSPACE`` if set, else ``~/.rag_metrics/workspace``."""
    env = setting("workspace")
    return Path(env).expanduser() if env else Path.home() / ".rag_metrics" / "workspace"

def _slug(name: str) -> str:
    """The old folder name (not injective; kept to find workspaces saved before)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:60] or "corpus"

def folder_name(name: str) -> str:
    """Injective folder name of a corpus or space name: readable slug + hash of the exact name."""
    return f"{_slug(name)[:40]}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"

def _check_name(name: str, what: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{what} name is empty; type a name")
    if len(name) > _MAX_NAME_CHARS:
        raise InputError(f"{what} name is {len(name):,} characters long; the limit is {_MAX_NAME_CHARS}")
    if any(not c.isprintable() for c in name):
        raise InputError(f"{what} name {name[:40]!r} contains control characters; use letters, digits and spaces")
    return name

def _version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

def space_dir(space: str = DEFAULT_SPACE, root: str | os.PathLike[str] | None = None) -> Path:
    """The folder of a space (the root itself for :data:`DEFAULT_SPACE`)."""
    base = Path(root) if root is not None else default_workspace_dir()
    if space == DEFAULT_SPACE:
        return base
    return base / SPACES_DIR / folder_name(_check_name(space, "workspace"))

def _read_name(folder: Path) -> str | None:
    try:
        text = (folder / NAME_FILE).read_text(encoding="utf-8")
        return text.removesuffix("\n")
    except (OSError, UnicodeDecodeError):
        return None

def list_spaces(root: str | os.PathLike[str] | None = None) -> list[str]:
    """Names of the saved spaces, :data:`DEFAULT_SPACE` first."""
    base = Path(root) if root is not None else default_workspace_dir()
    names = []
    with contextlib.suppress(OSError):
        for d in sorted((base / SPACES_DIR).iterdir()):
            n = _read_name(d)
            if d.is_dir() and n is not None and d.name == folder_name(n):
                names.append(n)
    return [DEFAULT_SPACE, *sorted(set(names) - {DEFAULT_SPACE})]

def _write_name(folder: Path, name: str) -> None:
    """Record a folder's exact name once (``name.txt``), under its lock."""
    p = folder / NAME_FILE
    if p.is_file():
        return
    with _locked(p):
        if not p.is_file():
            atomic_write_text(p, name + "\n")
