"""The app's workspace: the user's golden sets on disk, saved atomically, with conflict detection.

Over 500 lines: one :class:`Workspace` class whose save, undo, check and archive methods share one
lock-and-version protocol; splitting it by job (layout, history, checks, archives) is the next step
of issue 25 and was not done by the mechanical move.

Layout
------
``<root>/<corpus folder>/golden.jsonl`` for the shared (default) space, and
``<root>/spaces/<space folder>/<corpus folder>/golden.jsonl`` for a named space.  ``root`` is
``$RAG_METRICS_WORKSPACE`` or ``~/.rag_metrics/workspace``.

Folder names are **injective**: :func:`folder_name` is a readable slug of the name plus the
first 10 hex digits of the SHA-256 of the exact name (``sample corpus`` ->
``sample_corpus-5c8f0e2c1a``), so two different names never share files, whatever their case,
spaces, unicode or path characters (``..``, ``/``).  Each folder records its exact name in
``name.txt`` (used to list spaces and corpora).

**Migration** from the old scheme (folder = slug only): when a name's folder does not exist and
the old folder ``<root>/<slug>`` has files, they are copied into the new folder and the old
folder is marked ``.claimed`` with that name, so only the first name that opens it takes it over
(the app opens the sample, whose old folder is ``sample_corpus``, first).  The old files are
left in place.

Saving
------
Every save is atomic (temporary file + ``os.replace``) and runs under an exclusive lock file, so
two app sessions never interleave a write.  A session remembers the *version* (SHA-256 of the
file content) it last loaded or saved; if the file on disk has another version when it saves,
another session saved in between: the save does **not** overwrite it, the session's copy is
written beside it (``golden.conflict-<session>.jsonl``) and the conflict is reported.

**Undo**: before a save replaces the file, the previous content is kept in ``history/``
(the last :data:`HISTORY_SIZE` versions, each written atomically and named by time and content
hash); :meth:`Workspace.undo` puts the newest back after checking it (its hash, UTF-8, the load
limit, every row valid: a damaged entry is refused with a message and set aside in
``history/damaged/``), and keeps the version it replaces in ``history/undone/``, so
:meth:`Workspace.redo` undoes the undo.

**Imports** (:func:`import_space_archive`, :meth:`Workspace.import_archive`) are all or
nothing: the archive is validated in memory first (caps per member and on the manifest), its
files are written into a staging folder of the space, and one atomic write of the space's
``.import-commit.json`` swaps them in at once; an import interrupted after that point (``kill
-9``) is finished by the next access to the space, one interrupted before it leaves nothing.

**Health**: :meth:`Workspace.check` lists what is wrong with which file (unreadable, not
UTF-8, too large, invalid rows, bad grades, unknown format, bad settings) without raising;
:meth:`Workspace.repair` keeps a backup and rewrites the good rows; :meth:`Workspace.reset`
keeps a backup and removes the saved files; :meth:`Workspace.export_archive` /
:meth:`Workspace.import_archive` move a workspace as one ``.zip`` file.

Private spaces (class mode)
---------------------------
:func:`class_mode` is on when ``RAG_METRICS_CLASS_MODE=1`` or the app is started with
``streamlit run app.py -- --class-mode``.  Then each student works in the private space of their
seat (:mod:`rag_metrics.server.seats`), never one named by a URL.  A private space is **copy-on-write**:
it holds nothing until the student's first change, and until then reads the shared space's files
(:func:`read_through`), so a new seat costs no disk and no copy.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import threading
import time
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_metrics.config import class_mode_on as _server_class_mode
from rag_metrics.config import setting
from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.files import atomic_write_bytes, atomic_write_text, fsync_dir, loads_json
from rag_metrics.io.files import locked as _locked
from rag_metrics.io.golden import golden_to_text, parse_golden
from rag_metrics.limits import grade_error, id_problem, parse_int
from rag_metrics.types import GoldenSet

__all__ = [
    "DEFAULT_SPACE",
    "HISTORY_SIZE",
    "MAX_ARCHIVE_BYTES",
    "MAX_GOLDEN_BYTES",
    "SaveResult",
    "Workspace",
    "WorkspaceCheck",
    "WorkspaceProblem",
    "class_mode",
    "default_workspace_dir",
    "ensure_space",
    "folder_name",
    "list_corpora",
    "list_spaces",
    "private_space_name",
    "read_through",
    "space_dir",
]

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
#: Largest workspace archive accepted by :meth:`Workspace.import_archive` (compressed bytes).
MAX_ARCHIVE_BYTES = 20 * 1024 * 1024
#: Largest total uncompressed size and entry count inside an archive.
MAX_ARCHIVE_UNPACKED = 60 * 1024 * 1024
MAX_ARCHIVE_ENTRIES = 200
#: Corpora listed in one archive's manifest.
MAX_ARCHIVE_CORPORA = 100
#: Largest manifest and settings member (uncompressed bytes); a golden member is capped at
#: :data:`MAX_GOLDEN_BYTES`, the workspace's own load limit.
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_SETTINGS_BYTES = 64 * 1024
ARCHIVE_FORMAT = "rag-metrics-workspace"
_MEMBER = re.compile(r"[0-9]{1,4}/(golden\.jsonl|settings\.json)")
_HISTORY_NAME = re.compile(r"([0-9]{20})(?:-([0-9a-f]{16}))?\.jsonl")
_STAGE_NAME = re.compile(r"\.import-[0-9]+-[0-9]+-[0-9a-f]{8}")
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


# ---- spaces ------------------------------------------------------------------------------------
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


# ---- results -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class SaveResult:
    saved: bool
    version: str | None          # version now on disk (ours when saved)
    conflict_path: Path | None = None  # where our copy went when another session had saved
    message: str | None = None   # why nothing was done (undo / redo), for the user

    @property
    def conflict(self) -> bool:
        return self.conflict_path is not None


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


class Workspace:
    """Golden set storage for one corpus in one space.

    Parameters
    ----------
    corpus_name : str
        The corpus name (any text; its folder is :func:`folder_name` of it).
    root : path-like, optional
        The workspace root (default :func:`default_workspace_dir`).
    space : str
        The named space (default :data:`DEFAULT_SPACE`, the shared one).
    """

    def __init__(self, corpus_name: str, root: str | os.PathLike[str] | None = None,
                 space: str = DEFAULT_SPACE) -> None:
        self.name = corpus_name
        self.space = space
        self.root = Path(root) if root is not None else default_workspace_dir()
        self.folder = space_dir(space, self.root) / folder_name(corpus_name)
        self.path = self.folder / GOLDEN_FILE
        _settle_import(space, self.root)
        if space == DEFAULT_SPACE:
            self._migrate()

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r})"

    # ---- migration from slug-only folders ------------------------------------------------------
    def _write_name(self) -> None:
        _write_name(self.folder, self.name)

    def _migrate(self) -> None:
        try:
            if self.folder.exists():
                return
            legacy = self.root / _slug(self.name)
            if legacy == self.folder or not legacy.is_dir():
                return
            files = [f for f in (GOLDEN_FILE, SETTINGS_FILE) if (legacy / f).is_file()]
            if not files:
                return
            with _locked(self.root / ".migrate"):
                claimed = legacy / ".claimed"
                if claimed.exists() or self.folder.exists():
                    return
                self.folder.mkdir(parents=True, exist_ok=True)
                for f in files:
                    atomic_write_bytes(self.folder / f, (legacy / f).read_bytes())
                self._write_name()
                atomic_write_text(claimed, self.name + "\n")
        except OSError:  # read-only root: leave the old files where they are
            return

    # ---- read -----------------------------------------------------------------------------------
    def version(self) -> str | None:
        """Version of the saved file, ``None`` when there is none (or it cannot be read)."""
        try:
            return _version(self.path.read_bytes())
        except FileNotFoundError:
            return None
        except OSError:
            return "unreadable"

    def _read(self) -> bytes | None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return None
        except OSError as e:
            raise InputError(f"{self.path}: cannot read the workspace ({e.strerror}); "
                             "check the folder's permissions, or reset the workspace") from None
        if size > MAX_GOLDEN_BYTES:
            raise InputError(f"{self.path}: the saved golden set is {size:,} bytes, over the "
                             f"{MAX_GOLDEN_BYTES:,}-byte limit; export it and reset the workspace")
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise InputError(f"{self.path}: cannot read the workspace ({e.strerror}); "
                             "check the folder's permissions, or reset the workspace") from None

    def load(self) -> tuple[GoldenSet, ValidationReport, str] | None:
        """``(golden, report, version)`` of the saved set, or ``None`` when nothing was saved.

        Rows with problems (bad grades, invalid JSON) are left out and listed in ``report``;
        only an unreadable, non-UTF-8 or too large file raises :class:`InputError`.
        """
        _settle_import(self.space, self.root)
        data = self._read()
        if data is None:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{self.path}: the saved golden set is not UTF-8; repair (keeps a backup) "
                             "or reset the workspace") from None
        golden, report = parse_golden(text, "jsonl", str(self.path))
        return golden, report, _version(data)

    # ---- write ----------------------------------------------------------------------------------
    def _keep_history(self, data: bytes) -> None:
        _keep_entry(self.folder / HISTORY_DIR, data)

    def _replace(self, text: str) -> None:
        """Write ``text`` as the golden file (caller holds the lock), keeping the old in history."""
        try:
            old = self.path.read_bytes()
        except FileNotFoundError:
            old = None
        if old is not None and old != text.encode("utf-8"):
            self._keep_history(old)
        atomic_write_text(self.path, text)
        self._write_name()

    def save(self, golden: GoldenSet, expected_version: str | None, *, session: str = "session",
             force: bool = False, text: str | None = None) -> SaveResult:
        """Save unless another session saved since ``expected_version`` (then save beside it).

        ``expected_version`` is the version this session last loaded or saved (``None`` when it
        started from the sample and nothing was saved).  ``force`` overwrites regardless.
        ``text``: the set's JSONL text when the caller already made it (saves a serialisation).
        """
        _check_saveable(golden)
        if text is None:
            text = golden_to_text(golden, "jsonl")
        data = text.encode("utf-8")
        with _locked(self.path):
            current = self.version()
            if not force and current is not None and current != expected_version:
                if current == _version(data):  # someone saved exactly our content
                    return SaveResult(True, current)
                beside = self.folder / f"golden.conflict-{_slug(session)}.jsonl"
                atomic_write_text(beside, text)
                return SaveResult(False, current, beside)
            self._replace(text)
            return SaveResult(True, _version(data))

    def delete(self) -> None:
        with _locked(self.path):
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass

    # ---- undo / redo --------------------------------------------------------------------------
    def history(self) -> list[Path]:
        """Saved earlier versions, oldest first (at most :data:`HISTORY_SIZE`)."""
        return _entries(self.folder / HISTORY_DIR)

    def undone(self) -> list[Path]:
        """Versions that undo replaced, oldest first (what :meth:`redo` puts back)."""
        return _entries(self.folder / HISTORY_DIR / UNDONE_DIR)

    def undo(self, expected_version: str | None) -> tuple[SaveResult, GoldenSet | None]:
        """Put back the version before the last save (repeat to go further back).

        The entry is checked first (content hash, UTF-8, :data:`MAX_GOLDEN_BYTES`, every row
        valid); a damaged one is refused with a message, nothing changed, and it is set aside in
        ``history/damaged/`` (undo again goes further back).  The version replaced is kept in
        ``history/undone/`` (:meth:`redo` puts it back).  Refused (``saved`` False, nothing
        changed, ``message`` says why) when another session saved since ``expected_version`` or
        there is nothing to undo.  Returns the result and the restored set.
        """
        return self._step(expected_version, HISTORY_DIR, f"{HISTORY_DIR}/{UNDONE_DIR}", "undo")

    def redo(self, expected_version: str | None) -> tuple[SaveResult, GoldenSet | None]:
        """Put back the version the last :meth:`undo` replaced (the current one goes to history)."""
        return self._step(expected_version, f"{HISTORY_DIR}/{UNDONE_DIR}", HISTORY_DIR, "redo")

    def _step(self, expected_version: str | None, source: str, keep: str, what: str
              ) -> tuple[SaveResult, GoldenSet | None]:
        with _locked(self.path):
            current = self.version()
            if current != expected_version:
                return SaveResult(False, current, message=(
                    f"nothing to {what}: another session saved since you loaded the set (load it first)")), None
            while True:
                entries = _entries(self.folder / source)
                if not entries:
                    return SaveResult(False, current, message=(
                        "there is no earlier version" if what == "undo" else "no undo to redo")), None
                last = entries[-1]
                golden, text, problem = _read_entry(last)
                if problem is not None or golden is None or text is None:
                    _set_aside(last, self.folder / HISTORY_DIR / DAMAGED_DIR)
                    return SaveResult(False, current, message=(
                        f"the saved version {last.name} is damaged ({problem}); it was not restored and was "
                        f"moved to {HISTORY_DIR}/{DAMAGED_DIR}. {what.capitalize()} again to go further back")), None
                data = text.encode("utf-8")
                if _version(data) != current:
                    break
                last.unlink(missing_ok=True)  # the same as now (a step interrupted after its write)
            try:
                old = self.path.read_bytes()
            except FileNotFoundError:
                old = None
            if old is not None:
                _keep_entry(self.folder / keep, old)
            atomic_write_bytes(self.path, data)
            last.unlink(missing_ok=True)
            return SaveResult(True, _version(data)), golden

    # ---- per-corpus settings (chunking the labels were made on) ------------------------------
    @property
    def settings_path(self) -> Path:
        return self.folder / SETTINGS_FILE

    def _settings_problems(self) -> tuple[dict, list[str]]:
        try:
            raw = self.settings_path.read_bytes()
        except FileNotFoundError:
            return {}, []
        except OSError as e:
            return {}, [f"cannot read ({e.strerror})"]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return {}, ["not UTF-8"]
        data, msg, _ = loads_json(text)
        if msg is not None:
            return {}, [msg]
        if not isinstance(data, dict):
            return {}, [f"expected a JSON object, got {type(data).__name__}"]
        out, problems = {}, []
        for k, v in data.items():
            if k in _SETTING_BOUNDS:
                n, err = parse_int(v, *_SETTING_BOUNDS[k], what=k)
                if err is not None:
                    problems.append(err)
                    continue
                v = n
            out[k] = v
        return out, problems

    def load_settings(self) -> dict:
        """Saved settings (``{}`` when none or unreadable; out-of-range values left out)."""
        return self._settings_problems()[0]

    def save_settings(self, **values: object) -> None:
        """Merge ``values`` into the saved settings (atomic write)."""
        with _locked(self.settings_path):
            data = self.load_settings()
            data.update(values)
            atomic_write_text(self.settings_path, json.dumps(data, indent=1, sort_keys=True) + "\n")
            self._write_name()

    # ---- health: check / repair / reset ---------------------------------------------------------
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
        starts from the corpus's shipped labels).  Returns the backup paths."""
        backups = []
        for p in (self.path, self.settings_path):
            with _locked(p):
                with contextlib.suppress(OSError):
                    b = self._backup(p)
                    if b:
                        backups.append(b)
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
        return backups

    def export(self) -> bytes:
        """The saved golden file's bytes as they are on disk (b"" when none), for download even
        when it cannot be parsed."""
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return b""
        except OSError as e:
            raise InputError(f"{self.path}: cannot read ({e.strerror})") from None

    # ---- archives -------------------------------------------------------------------------------
    def export_archive(self) -> bytes:
        """This corpus's golden set and settings as one ``.zip`` (a manifest names the corpus)."""
        return export_archive([self])

    def import_archive(self, data: bytes, expected_version: str | None, *, session: str = "import",
                       force: bool = False) -> tuple[SaveResult, ValidationReport]:
        """Replace this workspace's golden set (and settings) with the one in an archive.

        The archive's content is validated first; on any error nothing is written and the report
        says why.  Then, as a normal save, another session's save since ``expected_version`` puts
        the archive's set beside it (a conflict file); otherwise the golden set and settings are
        swapped in at once (:func:`import_space_archive`'s staging) and the old set stays in the
        undo history.
        """
        entries, report = read_archive(data)
        if not report.ok:
            return SaveResult(False, self.version()), report
        if len(entries) != 1:
            names = ", ".join(repr(e.name) for e in entries[:5])
            report.error(f"the archive holds {len(entries)} corpora ({names}); import it into a space "
                         "with import_space_archive, or export one corpus", file="archive")
            return SaveResult(False, self.version()), report
        e = entries[0]
        golden = GoldenSet(e.golden.queries, name=self.name) if e.golden is not None else None
        if golden is not None:
            try:
                _check_saveable(golden)
            except InputError as err:
                report.error(str(err), file="archive")
                return SaveResult(False, self.version()), report
        base = space_dir(self.space, self.root)
        with _locked(base / IMPORT_MARK), _locked(self.path):  # lock order: import, then golden
            current = self.version()
            if golden is not None and not force and current is not None and current != expected_version:
                return self.save(golden, expected_version, session=session), report
            text = golden_to_text(golden, "jsonl") if golden is not None else None
            _commit_import(self.space, self.root, [(self.name, text, e.settings)])
            return SaveResult(True, self.version()), report


# ---- archives ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ArchiveEntry:
    name: str
    golden: GoldenSet | None
    settings: dict


def export_archive(workspaces: Sequence[Workspace]) -> bytes:
    """A ``.zip``: ``manifest.json`` + per corpus ``<n>/golden.jsonl`` and ``<n>/settings.json``.

    Only plain JSON/JSONL text inside (no pickle); member names are numbers, never user text.
    """
    buf = io.BytesIO()
    corpora: list[dict] = []
    manifest = {"format": ARCHIVE_FORMAT, "version": 1, "corpora": corpora}
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for n, ws in enumerate(workspaces):
            item: dict = {"name": ws.name, "folder": str(n)}
            g = ws.export()
            if g:
                z.writestr(f"{n}/{GOLDEN_FILE}", g)
                item["golden"] = f"{n}/{GOLDEN_FILE}"
            s = ws.load_settings()
            if s:
                z.writestr(f"{n}/{SETTINGS_FILE}", json.dumps(s, indent=1, sort_keys=True))
                item["settings"] = f"{n}/{SETTINGS_FILE}"
            corpora.append(item)
        z.writestr("manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False))
    return buf.getvalue()


def read_archive(data: bytes, source: str = "archive") -> tuple[list[ArchiveEntry], ValidationReport]:
    """Validate and read a workspace archive; never raises on content, never writes anything.

    Checks: size caps (:data:`MAX_ARCHIVE_BYTES` compressed, :data:`MAX_ARCHIVE_UNPACKED`
    uncompressed, :data:`MAX_ARCHIVE_ENTRIES` members), no member name twice in the zip, caps per
    member (a golden set up to :data:`MAX_GOLDEN_BYTES`, the workspace's own load limit; the
    manifest up to :data:`MAX_MANIFEST_BYTES`; settings up to :data:`MAX_SETTINGS_BYTES`; each
    read with a bound, whatever the zip declares), a manifest of this format listing at most
    :data:`MAX_ARCHIVE_CORPORA` corpora and each member at most once, member names only as listed
    in the manifest (no path is ever taken from the archive to write to), golden sets and
    settings that parse without errors.
    """
    report = ValidationReport()
    if len(data) > MAX_ARCHIVE_BYTES:
        report.error(f"the archive is {len(data):,} bytes, over the {MAX_ARCHIVE_BYTES:,}-byte limit", file=source)
        return [], report
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        infos = z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        report.error("not a .zip archive exported by RAG Metrics Lab", file=source)
        return [], report
    if len(infos) > MAX_ARCHIVE_ENTRIES:
        report.error(f"{len(infos)} files inside, over the limit of {MAX_ARCHIVE_ENTRIES}", file=source)
        return [], report
    if sum(i.file_size for i in infos) > MAX_ARCHIVE_UNPACKED:
        report.error(f"unpacks to more than {MAX_ARCHIVE_UNPACKED:,} bytes; refused", file=source)
        return [], report
    members = {i.filename: i for i in infos}
    if len(members) != len(infos):
        twice = sorted({i.filename for i in infos if sum(j.filename == i.filename for j in infos) > 1})
        report.error(f"member {twice[0][:60]!r} appears more than once in the zip; refused", file=source)
        return [], report
    used: set[str] = set()

    def text_of(member: str) -> str | None:
        if member != "manifest.json" and not _MEMBER.fullmatch(member):
            report.error(f"member name {member[:60]!r} is not one this app writes "
                         "(<number>/golden.jsonl or <number>/settings.json); refused", file=source)
            return None
        if member in used:
            report.error(f"{member!r} is listed more than once in the manifest; refused", file=source)
            return None
        used.add(member)
        info = members.get(member)
        if info is None:
            report.error(f"{member!r} is listed in the manifest but missing", file=source)
            return None
        cap = MAX_MANIFEST_BYTES if member == "manifest.json" else \
            MAX_GOLDEN_BYTES if member.endswith(GOLDEN_FILE) else MAX_SETTINGS_BYTES
        if info.file_size > cap:
            report.error(f"{member!r} unpacks to {info.file_size:,} bytes, over the {cap:,}-byte limit; refused",
                         file=source)
            return None
        try:
            with z.open(info) as f:
                raw = f.read(cap + 1)
            if len(raw) > cap:
                report.error(f"{member!r} unpacks to more than {cap:,} bytes; refused", file=source)
                return None
        except (zipfile.BadZipFile, OSError, ValueError, RuntimeError, EOFError) as e:
            report.error(f"{member!r} cannot be read ({e})", file=source)
            return None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            report.error(f"{member!r} is not UTF-8", file=source)
            return None

    man_text = text_of("manifest.json")
    if man_text is None:
        return [], report
    man, msg, _ = loads_json(man_text)
    if msg is not None or not isinstance(man, dict) or man.get("format") != ARCHIVE_FORMAT \
            or not isinstance(man.get("corpora"), list):
        report.error(f"manifest.json is not a {ARCHIVE_FORMAT} manifest" + (f" ({msg})" if msg else ""),
                     file=source)
        return [], report
    if len(man["corpora"]) > MAX_ARCHIVE_CORPORA:
        report.error(f"the manifest lists {len(man['corpora']):,} corpora, over the limit of {MAX_ARCHIVE_CORPORA}; "
                     "refused", file=source)
        return [], report
    out: list[ArchiveEntry] = []
    seen: set[str] = set()
    for item in man["corpora"]:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            report.error("manifest entry without a corpus name", file=source)
            continue
        name = item["name"]
        try:
            _check_name(name, "corpus")
        except InputError as e:
            report.error(str(e), file=source)
            continue
        if name in seen:
            report.error(f"corpus {name!r} listed twice", file=source)
            continue
        seen.add(name)
        golden = None
        if isinstance(item.get("golden"), str):
            t = text_of(item["golden"])
            if t is not None:
                golden, rep = parse_golden(t, "jsonl", f"{source}:{name}")
                report.extend(rep.problems)
        settings: dict = {}
        if isinstance(item.get("settings"), str):
            t = text_of(item["settings"])
            if t is not None:
                s, msg, _ = loads_json(t)
                if msg is not None or not isinstance(s, dict):
                    report.error(f"settings of {name!r}: {msg or 'not a JSON object'}", file=source)
                else:
                    for k, v in s.items():
                        if k in _SETTING_BOUNDS:
                            n, err = parse_int(v, *_SETTING_BOUNDS[k], what=k)
                            if err is not None:
                                report.error(f"settings of {name!r}: {err}", file=source)
                                continue
                            settings[k] = n
        out.append(ArchiveEntry(name, golden, settings))
    return out, report


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


# ---- durable pieces: names, history entries, the import journal ---------------------------------
def _write_name(folder: Path, name: str) -> None:
    """Record a folder's exact name once (``name.txt``), under its lock."""
    p = folder / NAME_FILE
    if p.is_file():
        return
    with _locked(p):
        if not p.is_file():
            atomic_write_text(p, name + "\n")


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


def _commit_import(space: str, root: str | os.PathLike[str] | None,
                   items: Sequence[tuple[str, str | None, Mapping[str, object]]]) -> None:
    """Stage ``(corpus, golden text or None, settings)`` items in the space, then swap them in at once.

    The staged files are written (and fsynced) into ``<space>/.import-<unique>/``; writing
    ``<space>/.import-commit.json`` (atomic) is the commit point; :func:`_apply_import` then moves
    each file into place.  All under the space's import lock.
    """
    base = space_dir(space, root)
    base.mkdir(parents=True, exist_ok=True)
    with _locked(base / IMPORT_MARK):
        _apply_import(base, space, root)  # an earlier import interrupted after its commit point
        for d in base.glob(".import-*"):   # and staging folders of imports that never committed
            if d.is_dir() and _STAGE_NAME.fullmatch(d.name):
                shutil.rmtree(d, ignore_errors=True)
        stage = base / f".import-{os.getpid()}-{threading.get_ident()}-{secrets.token_hex(4)}"
        stage.mkdir()
        plan = []
        for n, (name, text, settings) in enumerate(items):
            item: dict[str, object] = {"corpus": name}
            if text is not None:
                atomic_write_text(stage / f"{n}.golden", text)
                item["golden"] = f"{n}.golden"
            if settings:
                item["settings"] = dict(settings)
            plan.append(item)
        fsync_dir(stage)
        atomic_write_text(base / IMPORT_MARK, json.dumps(
            {"stage": stage.name, "space": space, "items": plan}, ensure_ascii=False) + "\n")
        _apply_import(base, space, root)


def _settle_import(space: str, root: str | os.PathLike[str] | None) -> None:
    """Finish an import whose commit point was reached (one ``stat`` when there is none)."""
    try:
        base = space_dir(space, root)
    except InputError:
        return
    if (base / IMPORT_MARK).is_file():
        with contextlib.suppress(OSError), _locked(base / IMPORT_MARK):
            _apply_import(base, space, root)


def _apply_import(base: Path, space: str, root: str | os.PathLike[str] | None) -> None:
    """Move a committed import's staged files into place (caller holds the import lock).

    Idempotent: a step whose staged file is gone was done before an interruption."""
    mark = base / IMPORT_MARK
    try:
        journal = loads_json(mark.read_text(encoding="utf-8"))[0]
    except FileNotFoundError:
        return
    except (OSError, ValueError):
        journal = None
    ok = isinstance(journal, dict) and isinstance(journal.get("stage"), str) \
        and _STAGE_NAME.fullmatch(journal["stage"]) is not None and journal.get("space") == space \
        and isinstance(journal.get("items"), list)
    if not ok or journal is None:  # not written by this module (its writes are atomic): drop it
        mark.unlink(missing_ok=True)
        return
    stage = base / journal["stage"]
    if space != DEFAULT_SPACE:
        _write_name(base, space)
    for item in journal["items"]:
        if not isinstance(item, dict) or not isinstance(item.get("corpus"), str):
            continue
        name = item["corpus"]
        folder = base / folder_name(name)
        folder.mkdir(parents=True, exist_ok=True)
        staged = item.get("golden")
        if isinstance(staged, str) and re.fullmatch(r"[0-9]{1,4}\.golden", staged) and (stage / staged).is_file():
            path = folder / GOLDEN_FILE
            with _locked(path):
                try:
                    old = path.read_bytes()
                except FileNotFoundError:
                    old = None
                new = (stage / staged).read_bytes()
                if old is not None and old != new:
                    _keep_entry(folder / HISTORY_DIR, old)
                os.replace(stage / staged, path)
                fsync_dir(folder)
        settings = item.get("settings")
        if isinstance(settings, dict) and settings:
            ws_settings = folder / SETTINGS_FILE
            with _locked(ws_settings):
                try:
                    current = loads_json(ws_settings.read_text(encoding="utf-8"))[0]
                except (OSError, ValueError):
                    current = {}
                merged = {**(current if isinstance(current, dict) else {}), **settings}
                if merged != current:
                    atomic_write_text(ws_settings, json.dumps(merged, indent=1, sort_keys=True) + "\n")
        _write_name(folder, name)
    mark.unlink(missing_ok=True)
    fsync_dir(base)
    shutil.rmtree(stage, ignore_errors=True)


__all__ += ["ArchiveEntry", "export_archive", "export_space_archive", "import_space_archive", "read_archive"]
