"""The undo history of a corpus's golden set on disk: the earlier versions kept in ``history/``.

Each entry is written atomically and named by time and content hash; at most :data:`HISTORY_SIZE`
are kept.  :func:`_read_entry` checks an entry before it is restored (hash, UTF-8, the load limit,
every row valid); a damaged one is set aside in ``history/damaged/`` (:func:`_set_aside`).
:meth:`rag_metrics.workspace.golden_store.Workspace.undo` and ``redo`` use them.
"""
from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from rag_metrics.io.files import atomic_write_bytes
from rag_metrics.io.golden import parse_golden
from rag_metrics.types import GoldenSet
from rag_metrics.workspace.layout import HISTORY_SIZE, MAX_GOLDEN_BYTES, _version

_HISTORY_NAME = re.compile(r"([0-9]{20})(?:-([0-9a-f]{16}))?\.jsonl")


def _entries(folder: Path) -> list[Path]:
    """History entries of one folder, oldest first."""
    try:
        return sorted(p for p in folder.glob("*.jsonl") if _HISTORY_NAME.fullmatch(p.name))
    except OSError:
        return []

def _keep_entry(folder: Path, data: bytes) -> Path | None:
    """Keep ``data`` as the newest entry of a history folder (atomic; named by time and content
    hash; never older than the newest entry; a copy of the newest entry is not kept twice)."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = _entries(folder)
    digest = _version(data)[:16]
    now = time.time_ns()
    if entries:
        m = _HISTORY_NAME.fullmatch(entries[-1].name)
        if m is not None:
            if m.group(2) == digest:
                return entries[-1]
            now = max(now, int(m.group(1)) + 1)
    p = folder / f"{now:020d}-{digest}.jsonl"
    atomic_write_bytes(p, data)
    for old in _entries(folder)[:-HISTORY_SIZE]:
        with contextlib.suppress(OSError):
            old.unlink()
    return p

def _read_entry(path: Path) -> tuple[GoldenSet | None, str | None, str | None]:
    """``(golden, text, None)`` for a sound history entry, else ``(None, None, problem)``."""
    try:
        size = path.stat().st_size
        if size > MAX_GOLDEN_BYTES:
            return None, None, f"{size:,} bytes, over the {MAX_GOLDEN_BYTES:,}-byte limit"
        data = path.read_bytes()
    except OSError as e:
        return None, None, f"cannot read ({e.strerror})"
    m = _HISTORY_NAME.fullmatch(path.name)
    if m is not None and m.group(2) is not None and _version(data)[:16] != m.group(2):
        return None, None, "its content does not match its hash: truncated or changed"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, None, f"not UTF-8 (byte offset {e.start})"
    golden, report = parse_golden(text, "jsonl", path.name)
    if report.errors:
        first = str(report.errors[0]).removeprefix("error: ")
        return None, None, f"{len(report.errors)} invalid row(s), first: {first}"
    return golden, text, None

def _set_aside(path: Path, folder: Path) -> None:
    """Move a refused history entry out of the way (kept, the newest :data:`HISTORY_SIZE` of them)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(path, folder / path.name)
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink()
    for old in sorted(folder.glob("*.jsonl"))[:-HISTORY_SIZE]:
        with contextlib.suppress(OSError):
            old.unlink()
