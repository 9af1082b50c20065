"""The health of a corpus's saved files: what is wrong with which file, and the repairs.

:meth:`WorkspaceHealth.check` lists what is wrong (unreadable, not UTF-8, too large, invalid rows,
bad grades, unknown format, bad settings) without raising; :meth:`WorkspaceHealth.repair` keeps a
backup and rewrites the good rows; :meth:`WorkspaceHealth.reset` keeps a backup and removes the
saved files.  :func:`_check_saveable` is the last guard before any golden set is written.
:class:`~rag_metrics.workspace.golden_store.Workspace` has these methods (a mixin: they share its
lock-and-version protocol and its paths).
"""
from __future__ import annotations

import contextlib
import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.files import atomic_write_bytes, atomic_write_text
from rag_metrics.io.files import locked as _locked
from rag_metrics.io.golden import golden_to_text, parse_golden
from rag_metrics.limits import grade_error, id_problem
from rag_metrics.types import GoldenSet
from rag_metrics.workspace.layout import MAX_GOLDEN_BYTES

__all__ = ["WorkspaceCheck", "WorkspaceHealth", "WorkspaceProblem"]


@dataclass(frozen=True)
class WorkspaceProblem:
    """One thing wrong with one saved file."""

    path: Path
    kind: str       # unreadable | not_utf8 | too_large | invalid_rows | unknown_format | bad_settings
    message: str
    repairable: bool = True

    def __str__(self) -> str:
        return f"{self.path.name}: {self.message}"

@dataclass
class WorkspaceCheck:
    """What :meth:`Workspace.check` found (``ok`` when nothing)."""

    problems: list[WorkspaceProblem] = field(default_factory=list)
    report: ValidationReport = field(default_factory=ValidationReport)  # row-level detail

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]

def _check_saveable(golden: GoldenSet) -> None:
    """The last guard before disk: grades within the shared bounds, ids TREC can hold.

    Every edit path validates earlier with a friendlier message; this makes sure a label that would
    be dropped (or crash) when read back is never written."""
    for q in golden:
        for what, value in (("query id", q.id), *(("relevant id", i) for i in q.relevant)):
            msg = id_problem(value, what)
            if msg is not None:
                raise InputError(f"not saved: query {q.id[:60]!r}: {msg}")
        for i, g in q.relevant.items():
            _, msg = grade_error(g)
            if msg is not None:
                raise InputError(f"not saved: query {q.id!r}, id {i!r}: {msg}")


class WorkspaceHealth:
    """Check, repair and reset: the health methods of
    :class:`~rag_metrics.workspace.golden_store.Workspace`."""

    path: Path  # the golden file

    if TYPE_CHECKING:  # provided by Workspace
        @property
        def settings_path(self) -> Path: ...

        def _settings_problems(self) -> tuple[dict, list[str]]: ...

        def load_settings(self) -> dict: ...

    def check(self) -> WorkspaceCheck:
        """What is wrong with the saved files (never raises)."""
        out = WorkspaceCheck()
        p = self.path
        try:
            size = p.stat().st_size
        except FileNotFoundError:
            size = None
        except OSError as e:
            out.problems.append(WorkspaceProblem(p, "unreadable", f"cannot read ({e.strerror})", False))
            size = None
        if size is not None:
            if size > MAX_GOLDEN_BYTES:
                out.problems.append(WorkspaceProblem(
                    p, "too_large", f"{size:,} bytes, over the {MAX_GOLDEN_BYTES:,}-byte limit; export it, "
                    "then reset", False))
            else:
                try:
                    data = p.read_bytes()
                except OSError as e:
                    out.problems.append(WorkspaceProblem(p, "unreadable", f"cannot read ({e.strerror})", False))
                    data = None
                if data is not None:
                    try:
                        text = data.decode("utf-8")
                    except UnicodeDecodeError as e:
                        line = data[: e.start].count(b"\n") + 1
                        out.problems.append(WorkspaceProblem(
                            p, "not_utf8", f"not UTF-8 (line {line}); repair replaces the bad bytes"))
                        text = data.decode("utf-8", errors="replace")
                    stripped = text.lstrip()
                    if stripped and not stripped.startswith("{"):
                        out.problems.append(WorkspaceProblem(
                            p, "unknown_format", "not JSON Lines (one JSON object per line); it was not "
                            "saved by this app. Export it, then reset (or repair to keep the valid lines)"))
                    _, report = parse_golden(text, "jsonl", str(p))
                    out.report = report
                    if report.errors:
                        first = str(report.errors[0])[len("error: "):]
                        out.problems.append(WorkspaceProblem(
                            p, "invalid_rows", f"{len(report.errors)} problem(s), first: {first}; repair "
                            "drops the bad rows and labels (a backup is kept)"))
        _, sp = self._settings_problems()
        for m in sp:
            out.problems.append(WorkspaceProblem(self.settings_path, "bad_settings", m))
        return out

    def _backup(self, path: Path) -> Path | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        b = path.with_name(f"{path.stem}.backup-{time.strftime('%Y%m%d-%H%M%S')}-{time.time_ns() % 10**6:06d}"
                           f"{secrets.token_hex(2)}{path.suffix}")
        atomic_write_bytes(b, data)
        return b

    def repair(self) -> list[Path]:
        """Keep a backup of each bad file, then rewrite the golden set with its good rows only and
        drop bad settings.  Returns the backup paths.  Raises :class:`InputError` when the file
        cannot be read at all (then use :meth:`reset`)."""
        backups: list[Path] = []
        with _locked(self.path):
            chk = self.check()
            kinds = {pr.kind for pr in chk.problems if pr.path == self.path}
            if kinds & {"unreadable", "too_large"}:
                raise InputError(f"{self.path}: cannot be repaired ({'; '.join(chk.lines())}); "
                                 "export it if you can, then reset the workspace")
            if kinds:
                text = self.path.read_bytes().decode("utf-8", errors="replace")
                golden, _ = parse_golden(text, "jsonl", str(self.path))
                b = self._backup(self.path)
                if b:
                    backups.append(b)
                atomic_write_text(self.path, golden_to_text(golden, "jsonl"))
        if any(pr.kind == "bad_settings" for pr in chk.problems):
            with _locked(self.settings_path):
                good = self.load_settings()
                b = self._backup(self.settings_path)
                if b:
                    backups.append(b)
                atomic_write_text(self.settings_path, json.dumps(good, indent=1, sort_keys=True) + "\n")
        return backups

    def reset(self) -> list[Path]:
        """Keep a backup of the saved golden set and settings, then remove them (the app then
        starts from the corpus's shipped labels).  The golden set removed is kept in the undo
        history too (checked when undo restores it).  Returns the backup paths."""
        from rag_metrics.workspace.history import _keep_entry
        from rag_metrics.workspace.layout import HISTORY_DIR

        backups = []
        for p in (self.path, self.settings_path):
            with _locked(p):
                with contextlib.suppress(OSError):
                    b = self._backup(p)
                    if b:
                        backups.append(b)
                if p == self.path:
                    with contextlib.suppress(OSError):
                        if p.stat().st_size <= MAX_GOLDEN_BYTES:
                            _keep_entry(p.parent / HISTORY_DIR, p.read_bytes())
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
        return backups
