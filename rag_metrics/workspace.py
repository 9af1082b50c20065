"""The app's workspace: the user's golden sets on disk, saved atomically, with conflict detection.

Layout: ``<root>/<corpus-slug>/golden.jsonl``.  ``root`` is ``$RAG_METRICS_WORKSPACE`` or
``~/.rag_metrics/workspace``.

Every save is atomic (temporary file + ``os.replace``, see
:func:`rag_metrics.golden.atomic_write_text`) and runs under an exclusive lock file, so two app
sessions never interleave a write.  A session remembers the *version* (SHA-256 of the file
content) it last loaded or saved; if the file on disk has another version when it saves, another
session saved in between: the save does **not** overwrite it, the session's copy is written beside
it (``golden.conflict-<session>.jsonl``) and the conflict is reported, so nothing is lost.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.golden import atomic_write_text, golden_to_text, parse_golden
from rag_metrics.types import GoldenSet

__all__ = ["default_workspace_dir", "Workspace", "SaveResult"]

GOLDEN_FILE = "golden.jsonl"


def default_workspace_dir() -> Path:
    """``$RAG_METRICS_WORKSPACE`` if set, else ``~/.rag_metrics/workspace``."""
    env = os.environ.get("RAG_METRICS_WORKSPACE")
    return Path(env).expanduser() if env else Path.home() / ".rag_metrics" / "workspace"


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:60] or "corpus"
    return s


def _version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class SaveResult:
    saved: bool
    version: str | None          # version now on disk (ours when saved)
    conflict_path: Path | None = None  # where our copy went when another session had saved

    @property
    def conflict(self) -> bool:
        return self.conflict_path is not None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(f".{path.name}.lock")
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - Windows: atomic replace only
            pass
        yield
    finally:
        os.close(fd)  # closing releases the lock


class Workspace:
    """Golden set storage for one corpus."""

    def __init__(self, corpus_name: str, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_workspace_dir()
        self.folder = self.root / _slug(corpus_name)
        self.path = self.folder / GOLDEN_FILE

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r})"

    def version(self) -> str | None:
        """Version of the saved file, ``None`` when there is none."""
        try:
            return _version(self.path.read_bytes())
        except FileNotFoundError:
            return None

    def load(self) -> tuple[GoldenSet, ValidationReport, str] | None:
        """``(golden, report, version)`` of the saved set, or ``None`` when nothing was saved."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise InputError(f"{self.path}: cannot read the workspace ({e.strerror})") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{self.path}: the saved golden set is not UTF-8; delete or fix the file") from None
        golden, report = parse_golden(text, "jsonl", str(self.path))
        return golden, report, _version(data)

    def save(self, golden: GoldenSet, expected_version: str | None, *, session: str = "session",
             force: bool = False, text: str | None = None) -> SaveResult:
        """Save unless another session saved since ``expected_version`` (then save beside it).

        ``expected_version`` is the version this session last loaded or saved (``None`` when it
        started from the sample and nothing was saved).  ``force`` overwrites regardless.
        ``text``: the set's JSONL text when the caller already made it (saves a serialisation).
        """
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
            atomic_write_text(self.path, text)
            return SaveResult(True, _version(data))

    def delete(self) -> None:
        with _locked(self.path):
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass

    # ---- per-corpus settings (chunking the labels were made on) ------------------------------
    @property
    def settings_path(self) -> Path:
        return self.folder / "settings.json"

    def load_settings(self) -> dict:
        """Saved settings (``{}`` when none or unreadable)."""
        import json

        try:
            data = json.loads(self.settings_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_settings(self, **values: object) -> None:
        """Merge ``values`` into the saved settings (atomic write)."""
        import json

        with _locked(self.settings_path):
            data = self.load_settings()
            data.update(values)
            atomic_write_text(self.settings_path, json.dumps(data, indent=1, sort_keys=True) + "\n")
