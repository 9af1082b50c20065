"""One corpus's golden set in one space: :class:`Workspace`, saved atomically, with conflict
detection, undo and redo, and the chunking settings the labels were made on.

Every save is atomic (temporary file + ``os.replace``) and runs under an exclusive lock file, so
two app sessions never interleave a write.  A session remembers the *version* (SHA-256 of the file
content) it last loaded or saved; if the file on disk has another version when it saves, another
session saved in between: the save does **not** overwrite it, the session's copy is written beside
it (``golden.conflict-<session>.jsonl``) and the conflict is reported.  The earlier versions are
kept by :mod:`rag_metrics.workspace.history`; the health methods come from
:mod:`rag_metrics.workspace.checks`; archives from :mod:`rag_metrics.workspace.archive`.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.files import atomic_write_bytes, atomic_write_text, loads_json
from rag_metrics.io.files import locked as _locked
from rag_metrics.io.golden import golden_to_text, parse_golden
from rag_metrics.limits import parse_int
from rag_metrics.types import GoldenSet
from rag_metrics.workspace import versions
from rag_metrics.workspace.archive import _commit_import, _settle_import, export_archive, read_archive
from rag_metrics.workspace.checks import WorkspaceHealth, _check_saveable
from rag_metrics.workspace.history import _entries, _keep_entry, _read_entry, _set_aside
from rag_metrics.workspace.layout import (
    _SETTING_BOUNDS,
    DAMAGED_DIR,
    DEFAULT_SPACE,
    GOLDEN_FILE,
    HISTORY_DIR,
    IMPORT_MARK,
    MAX_GOLDEN_BYTES,
    SETTINGS_FILE,
    UNDONE_DIR,
    _slug,
    _version,
    _write_name,
    default_workspace_dir,
    folder_name,
    space_dir,
)

__all__ = ["SaveResult", "Workspace"]


@dataclass(frozen=True)
class SaveResult:
    saved: bool
    version: str | None          # version now on disk (ours when saved)
    conflict_path: Path | None = None  # where our copy went when another session had saved
    message: str | None = None   # why nothing was done (undo / redo), for the user
    #: The teacher's change that refused this save (a newer generation, :mod:`rag_metrics.workspace.versions`):
    #: nothing was written; take the saved set.
    teacher: versions.Change | None = None

    @property
    def conflict(self) -> bool:
        return self.conflict_path is not None


class Workspace(WorkspaceHealth):
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

    def _replace(self, text: str, replacing: str | None = None) -> None:
        """Write ``text`` as the golden file (caller holds the lock), keeping the old in history.

        ``replacing``: the set the session showed when nothing is saved yet (the shipped set, or the
        shared set a private space reads through): kept in history too, so undo can bring it back.
        The history entry is written (atomically) before the golden file: a crash between the two
        leaves the old file and an entry equal to it, which undo skips."""
        old: bytes | None
        try:
            old = self.path.read_bytes()
        except FileNotFoundError:
            old = replacing.encode("utf-8") if replacing is not None else None
        if old is not None and old != text.encode("utf-8"):
            self._keep_history(old)
        atomic_write_text(self.path, text)
        self._write_name()

    def change(self, *, fresh: bool = False) -> versions.Change:
        """The teacher's last change of this golden set (a reset or a push; generation 0: none)."""
        return versions.current(space_dir(self.space, self.root), versions.golden_target(self.name), fresh=fresh)

    def save(self, golden: GoldenSet, expected_version: str | None, *, session: str = "session",
             force: bool = False, text: str | None = None, generation: int | None = None,
             replacing: str | None = None) -> SaveResult:
        """Save unless another session saved since ``expected_version`` (then save beside it).

        ``expected_version`` is the version this session last loaded or saved (``None`` when it
        started from the sample and nothing was saved).  ``force`` overwrites regardless.
        ``text``: the set's JSONL text when the caller already made it (saves a serialisation).
        ``generation``: the teacher's generation the session loaded (:meth:`change`); when the teacher
        changed the set since, nothing is written, even with ``force`` (``SaveResult.teacher`` says
        what they did): a session's copy never overwrites the teacher's reset or push.
        ``replacing``: the JSONL text of the set this save replaces when no file is saved yet (kept
        in the undo history, as a saved file would be).
        """
        _check_saveable(golden)
        if text is None:
            text = golden_to_text(golden, "jsonl")
        data = text.encode("utf-8")
        with _locked(self.path):
            current = self.version()
            if generation is not None:
                newer = versions.newer(space_dir(self.space, self.root), versions.golden_target(self.name),
                                       generation)
                if newer is not None:
                    return SaveResult(False, current, teacher=newer)
            if not force and current is not None and current != expected_version:
                if current == _version(data):  # someone saved exactly our content
                    return SaveResult(True, current)
                beside = self.folder / f"golden.conflict-{_slug(session)}.jsonl"
                atomic_write_text(beside, text)
                return SaveResult(False, current, beside)
            self._replace(text, replacing)
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
