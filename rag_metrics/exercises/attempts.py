"""A student's work on the code exercises, kept in their space: ``<space dir>/exercises/<name>.json``.

One small file per exercise: the last code run, how many times the checks were run, the checks
passed by the last run and the best run, whether the exercise was ever solved, and the draft: the code
as the student last typed it (saved from the editor while they type, so a reload keeps it; a run
replaces it, as the code run is then the newest).  The code is
kept as text and only ever shown (to the student, and to the teacher read-only); nothing here or
anywhere on the server runs it.  Files are written atomically under a lock (two tabs of one
student may run checks at once); a missing file is a fresh start, a bad one too, with
:attr:`AttemptStore.problem` saying why.

>>> import tempfile
>>> store = AttemptStore(tempfile.mkdtemp())
>>> a = store.record("hit_rate_at_k", "def hit_rate_at_k(...): ...", passed=3, total=9)
>>> a = store.record("hit_rate_at_k", "def hit_rate_at_k(g, r, k): ...", passed=9, total=9)
>>> a.attempts, a.passed, a.best, a.solved
(2, 9, 9, True)
>>> store.load("hit_rate_at_k").code
'def hit_rate_at_k(g, r, k): ...'
>>> store.save_draft("hit_rate_at_k", "def hit_rate_at_k(g, r, k): return").current_code
'def hit_rate_at_k(g, r, k): return'
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_metrics.errors import InputError
from rag_metrics.io.files import atomic_write_text, loads_json, locked

if TYPE_CHECKING:
    import pandas as pd
else:
    from rag_metrics.lazy import pandas as pd

__all__ = ["COLUMNS", "EXERCISES_DIR", "MAX_CODE_CHARS", "MAX_FILE_BYTES", "Attempts", "AttemptStore",
           "class_attempts", "store_for_space"]

EXERCISES_DIR = "exercises"
#: The longest code kept (characters); longer code is refused before it is run.
MAX_CODE_CHARS = 20_000
#: A file above this size is not read.
MAX_FILE_BYTES = 256 * 1024
_FORMAT = "rag-metrics-exercise-attempts"
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
#: Columns of :func:`class_attempts`.
COLUMNS = ["seat", "space", "exercise", "passed", "total", "best", "attempts", "solved", "updated", "problem"]


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InputError(f"exercise name {str(name)[:40]!r} is not valid: use lower-case letters, digits and _ "
                         "(e.g. hit_rate_at_k)")
    return name


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**9 else 0


@dataclass(frozen=True)
class Attempts:
    """One exercise in one space: ``code`` (the last code run), ``attempts`` (runs of the checks),
    ``passed``/``total`` (the last run), ``best`` (most checks passed in one run), ``solved`` (some
    run passed every check), ``updated`` (UTC time of the last run), ``draft`` (the code as last typed,
    when newer than the last run; ``""`` otherwise) and ``drafted`` (UTC time of that draft)."""

    exercise: str
    code: str = ""
    attempts: int = 0
    passed: int = 0
    total: int = 0
    best: int = 0
    solved: bool = False
    updated: str = ""
    draft: str = ""
    drafted: str = ""

    @property
    def current_code(self) -> str:
        """What the editor opens with: the draft, else the last code run (``""``: the starter)."""
        return self.draft or self.code

    def with_draft(self, code: str) -> Attempts:
        """The record with ``code`` as the draft (no run counted)."""
        if not isinstance(code, str):
            raise InputError("the draft must be text")
        if len(code) > MAX_CODE_CHARS:
            raise InputError(f"the draft is {len(code):,} characters long; the limit is {MAX_CODE_CHARS:,}")
        return replace(self, draft=code, drafted=_now() if code else "")

    def with_run(self, code: str, passed: int, total: int) -> Attempts:
        """The record after one run of the checks."""
        if len(code) > MAX_CODE_CHARS:
            raise InputError(f"the code is {len(code):,} characters long; the limit is {MAX_CODE_CHARS:,}")
        passed, total = max(0, int(passed)), max(0, int(total))
        return replace(self, code=code, attempts=self.attempts + 1, passed=passed, total=total,
                       best=max(self.best, passed), solved=self.solved or (total > 0 and passed == total),
                       updated=_now(), draft="", drafted="")

    def to_json(self) -> str:
        return json.dumps({"format": _FORMAT, "version": 1, "exercise": self.exercise, "code": self.code,
                           "attempts": self.attempts, "passed": self.passed, "total": self.total, "best": self.best,
                           "solved": self.solved, "updated": self.updated, "draft": self.draft,
                           "drafted": self.drafted}, ensure_ascii=False, indent=1)

    @classmethod
    def from_json(cls, name: str, text: str) -> tuple[Attempts, str | None]:
        """``(attempts, problem)``: what could be read, and a message when something was wrong."""
        value, msg, _ = loads_json(text)
        if msg is not None:
            return cls(name), msg
        if not isinstance(value, dict) or value.get("format") != _FORMAT:
            return cls(name), "not an exercise attempts file"
        code = value.get("code", "")
        if not isinstance(code, str):
            return cls(name), "malformed exercise attempts (code is not text)"
        draft = value.get("draft", "")
        draft = draft[:MAX_CODE_CHARS] if isinstance(draft, str) else ""
        return cls(name, code=code[:MAX_CODE_CHARS], attempts=_count(value.get("attempts")),
                   passed=_count(value.get("passed")), total=_count(value.get("total")),
                   best=_count(value.get("best")), solved=value.get("solved") is True,
                   updated=str(value.get("updated", ""))[:40], draft=draft,
                   drafted=str(value.get("drafted", ""))[:40] if draft else ""), None


class AttemptStore:
    """The exercise files of one space: ``<folder>/exercises/<name>.json`` (``folder``: the space's
    folder, :func:`rag_metrics.workspace.store.space_dir`)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder) / EXERCISES_DIR
        self.problem: str | None = None

    def __repr__(self) -> str:
        return f"AttemptStore({str(self.folder)!r})"

    def path(self, name: str) -> Path:
        return self.folder / f"{_check_name(name)}.json"

    def load(self, name: str) -> Attempts:
        """The saved record of ``name``, or a fresh one (:attr:`problem` says why when a file was bad)."""
        self.problem = None
        path = self.path(name)
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                self.problem = f"{path.name} is over {MAX_FILE_BYTES:,} bytes; starting afresh"
                return Attempts(name)
            data = path.read_bytes()
        except FileNotFoundError:
            return Attempts(name)
        except OSError as e:
            self.problem = f"cannot read {path.name} ({e.strerror})"
            return Attempts(name)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.problem = f"{path.name} is not UTF-8"
            return Attempts(name)
        attempts, msg = Attempts.from_json(name, text)
        self.problem = f"{path.name}: {msg}" if msg else None
        return attempts

    def record(self, name: str, code: str, *, passed: int, total: int) -> Attempts:
        """Count one run of the checks and keep its code (read, update and write under the file's lock)."""
        path = self.path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(path):
            new = self.load(name).with_run(code, passed, total)
            atomic_write_text(path, new.to_json() + "\n")
        return new

    def save_draft(self, name: str, code: str) -> Attempts:
        """Keep ``code`` as the draft of ``name`` (what the student typed, not run; at most
        :data:`MAX_CODE_CHARS` characters, else :class:`InputError`).  ``""`` forgets the draft.  Nothing is
        written when the draft is unchanged, or when there is neither a draft nor a record to keep it in."""
        path = self.path(name)
        old = self.load(name)
        new = old.with_draft(code)
        if new.draft == old.draft or (not code and not path.is_file()):
            return old
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(path):
            new = self.load(name).with_draft(code)
            atomic_write_text(path, new.to_json() + "\n")
        return new

    def reset(self, name: str) -> None:
        """Forget the exercise's record (the next load gives the starter again)."""
        try:
            self.path(name).unlink()
        except FileNotFoundError:
            pass


def store_for_space(space: str, root: str | os.PathLike[str] | None = None) -> AttemptStore:
    """The attempts of a workspace space (:func:`rag_metrics.workspace.store.space_dir`)."""
    from rag_metrics.workspace.store import space_dir

    return AttemptStore(space_dir(space, root))


def class_attempts(seats: Sequence[tuple[str, str]], names: Sequence[str],
                   root: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The teacher's view: one row per seat and exercise (:data:`COLUMNS`), for the ``(seat label,
    space)`` pairs of ``seats`` and the exercises ``names``.  No code: that is read one at a time,
    on demand (:meth:`AttemptStore.load`).  Access is decided by the caller, never here."""
    rows = []
    for seat, space in seats:
        store = store_for_space(space, root)
        for name in names:
            a = store.load(name)
            rows.append({"seat": seat, "space": space, "exercise": name, "passed": a.passed, "total": a.total,
                         "best": a.best, "attempts": a.attempts, "solved": a.solved, "updated": a.updated,
                         "problem": store.problem or ""})
    return pd.DataFrame(rows, columns=COLUMNS)
