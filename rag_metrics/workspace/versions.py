"""Versioned changes: what the teacher does to a student's files, and the one rule every save follows.

A student's open session holds a copy of their lesson progress and of their golden sets.  When
someone else changes one of those files (the teacher resets the progress or the golden set, or
pushes the shared golden set), the change gets a **generation**: a counter per file, kept in the
space's ``changes.json`` (beside the files it versions) with what was done and when, and raised under
the file's own lock (:func:`rag_metrics.io.files.locked`) together with the change (:func:`record`).

A session remembers the generation of what it loaded (read the generation *first*, then the file: a
change in between then only makes the session reload once).  Every save compares that generation with
the one on disk, under the same lock, before it writes (compare-and-swap, :func:`newer`): a save from
an older generation writes nothing, and the session takes the file as it is now and tells the student
what the teacher did.  So a save never overwrites a teacher's change with an older in-memory copy.

Targets (the files versioned): :data:`PROGRESS` (``lesson/progress.json``) and :func:`golden_target`
of a corpus.  A space nobody changed has no ``changes.json`` (every generation is 0), so a new seat
still costs nothing on disk.

>>> import tempfile
>>> space = tempfile.mkdtemp()
>>> newer(space, PROGRESS, 0) is None        # nothing changed: a save from generation 0 may write
True
>>> record(space, PROGRESS, "reset").generation
1
>>> newer(space, PROGRESS, 0).kind           # the teacher reset it since: the save is refused
'reset'
>>> newer(space, PROGRESS, 1) is None
True
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from rag_metrics.io.files import atomic_write_text, loads_json, locked
from rag_metrics.workspace.layout import folder_name

__all__ = ["CHANGES_FILE", "KINDS", "PROGRESS", "Change", "current", "golden_target", "newer", "record"]

#: The ledger of a space's versioned changes, in the space's folder.
CHANGES_FILE = "changes.json"
#: The lesson progress of a space (``lesson/progress.json``).
PROGRESS = "progress"
#: What a versioned change did.
KINDS = ("reset", "push")
#: A ledger above this size is not read (one short entry per file).
_MAX_BYTES = 256 * 1024
_FORMAT = "rag-metrics-changes"


def golden_target(corpus: str) -> str:
    """The target name of a corpus's golden set in a space."""
    return f"golden/{folder_name(corpus)}"


@dataclass(frozen=True)
class Change:
    """The last versioned change of one file: its ``generation`` (0: never changed by anyone but the
    space's owner), ``kind`` (:data:`KINDS`) and ``at`` (UTC time)."""

    generation: int = 0
    kind: str = ""
    at: str = ""


_CACHE: dict[str, tuple[tuple[int, int, int], dict[str, Change]]] = {}  # ledger path -> (stat, parsed)
_CACHE_GUARD = threading.Lock()


def _path(folder: str | os.PathLike[str]) -> Path:
    return Path(folder) / CHANGES_FILE


def _read(path: Path, *, fresh: bool = False) -> dict[str, Change]:
    """Every target's last change (``{}`` when there is no ledger or it cannot be read: generation 0,
    so a session holding a higher one reloads once, and saves again from there).  Kept per process
    while the file's ``stat`` is the same; ``fresh``: read the file (the checks under a lock)."""
    try:
        st = path.stat()
    except OSError:
        return {}
    key = (st.st_ino, st.st_mtime_ns, st.st_size)
    with _CACHE_GUARD:
        hit = _CACHE.get(str(path))
    if hit is not None and hit[0] == key and not fresh:
        return hit[1]
    out: dict[str, Change] = {}
    if st.st_size <= _MAX_BYTES:
        try:
            value, msg, _ = loads_json(path.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError):
            value, msg = None, "unreadable"
        targets = value.get("targets") if msg is None and isinstance(value, dict) else None
        for name, entry in (targets.items() if isinstance(targets, dict) else ()):
            gen = entry.get("generation") if isinstance(entry, dict) else None
            if isinstance(gen, int) and not isinstance(gen, bool) and gen >= 0:
                out[str(name)] = Change(gen, str(entry.get("kind", "")), str(entry.get("at", "")))
    with _CACHE_GUARD:
        _CACHE[str(path)] = (key, out)
    return out


def current(folder: str | os.PathLike[str], target: str, *, fresh: bool = False) -> Change:
    """The last versioned change of ``target`` in the space at ``folder`` (one ``stat`` when the
    ledger did not move since it was last read; ``fresh``: always read it)."""
    return _read(_path(folder), fresh=fresh).get(target, Change())


def newer(folder: str | os.PathLike[str], target: str, held: int) -> Change | None:
    """**The rule**, for every save of a versioned file: ``None`` when a session that loaded
    generation ``held`` may write; else the change it would overwrite (nothing may be written: the
    session takes the file as it is now).  Call it under the file's lock, as :func:`record` is."""
    now = current(folder, target, fresh=True)
    return now if now.generation != held else None


def record(folder: str | os.PathLike[str], target: str, kind: str) -> Change:
    """Raise ``target``'s generation after a change of ``kind`` (:data:`KINDS`); the caller holds the
    target file's lock and has made the change.  Returns the new :class:`Change`."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    path = _path(folder)
    with locked(path):
        changes = dict(_read(path, fresh=True))
        change = Change(changes.get(target, Change()).generation + 1, kind,
                        _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"))
        changes[target] = change
        doc = {"format": _FORMAT, "version": 1,
               "targets": {t: {"generation": c.generation, "kind": c.kind, "at": c.at}
                           for t, c in sorted(changes.items())}}
        atomic_write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return change
