"""Systems kept in the workspace: uploads as files, connections as settings without secrets.

Layout, per corpus folder of the workspace (:class:`rag_metrics.workspace.store.Workspace`)::

    <workspace>/<corpus>/systems/systems.json       the list of systems (name, kind, file or settings)
    <workspace>/<corpus>/systems/<slug>.<ext>       each uploaded run or RAG log, byte for byte

Every write is atomic (a uniquely named temporary file + ``os.replace``), and every change of the
index (add, remove) is a read-modify-write under the index's lock
(:func:`rag_metrics.io.files.locked`), so concurrent "Add system" from many sessions or processes
keeps every system; files are plain text (JSON, the user's
own upload), never pickle.  Uploads are capped at :data:`MAX_STORED_BYTES` each and
:data:`MAX_SYSTEMS` systems per corpus.  Connection settings are stored as written: secrets only
as ``${VAR}`` references (a literal password in a DSN or a literal value in a sensitive header
is refused with the fix), so nothing secret reaches the disk, a URL or an export.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.files import atomic_write_bytes, atomic_write_text, locked
from rag_metrics.io.raglog import looks_like_rag_log
from rag_metrics.retrieval.defaults import RETRIEVER_KINDS
from rag_metrics.server.connections import _NAMED_KEY, ServerEnv, named_connection, server_env
from rag_metrics.server.secrets import redact_dsn, references
from rag_metrics.types import Chunk

__all__ = [
    "KINDS",
    "MAX_STORED_BYTES",
    "MAX_SYSTEMS",
    "SystemSpec",
    "SystemStore",
    "build_system",
    "connection_config",
]

#: Kinds of stored systems.
KINDS = ("upload", "http", "pgvector", "qdrant", "connection")
#: Largest upload kept, in bytes (50 MiB).
MAX_STORED_BYTES = 50 * 1024 * 1024
#: Systems per corpus.
MAX_SYSTEMS = 20
_INDEX = "systems.json"
_NAME = re.compile(r"^[\w .:()+-]{1,60}$")


@dataclass(frozen=True)
class SystemSpec:
    """One stored system: ``kind`` ``upload`` (with ``file`` and the original ``filename``) or a
    connection kind with its ``settings`` (as written, ``${VAR}`` references only)."""

    name: str
    kind: str
    file: str | None = None
    filename: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    match_threshold: float = 90.0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "file": self.file, "filename": self.filename,
                "settings": dict(self.settings), "match_threshold": self.match_threshold}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SystemSpec:
        return cls(str(d["name"]), str(d["kind"]), d.get("file"), d.get("filename"), dict(d.get("settings") or {}),
                   float(d.get("match_threshold", 90.0)))

    @property
    def description(self) -> str:
        """One line for lists (no secret: settings are stored without them)."""
        s = self.settings
        if self.kind == "upload":
            return f"uploaded file {self.filename}"
        if self.kind == "http":
            return f"HTTP endpoint {s.get('url')}"
        if self.kind == "connection":
            return f"the class's connection {s.get('connection')}"
        if self.kind == "pgvector":
            return f"pgvector table {s.get('table')} at {redact_dsn(str(s.get('dsn', '')))}"
        return f"Qdrant collection {s.get('collection')} at {s.get('url') or s.get('path')}"


def connection_config(kind: str, settings: Mapping[str, Any]) -> Any:
    """The validated config object of a connection kind (InputError names the bad setting)."""
    s = dict(settings)
    if kind == "http":
        from rag_metrics.systems.backends.http import HttpConfig

        s["headers"] = tuple(tuple(h) for h in s.get("headers") or ())
        return HttpConfig(**s)
    if kind == "pgvector":
        from rag_metrics.systems.backends.pgvector import PgvectorConfig

        return PgvectorConfig(**s)
    if kind == "qdrant":
        from rag_metrics.systems.backends.qdrant import QdrantConfig

        return QdrantConfig(**s)
    if kind == "connection":  # a named connection of the operator's: only its name is stored
        from rag_metrics.server.connections import NamedRef

        return NamedRef(str(s.get("connection", "")))
    raise InputError(f"unknown connection kind {kind!r}; use one of http, pgvector, qdrant")


def _refuse_literal_secrets(kind: str, cfg: Any) -> None:
    if kind == "http" and cfg.literal_secrets():
        names = ", ".join(cfg.literal_secrets())
        raise InputError(f"header(s) {names} hold a literal secret, which would be saved; write the value as a "
                         "${VAR} reference (e.g. 'Bearer ${MY_TOKEN}') and export the variable, or add it to "
                         ".streamlit/secrets.toml")
    if kind == "pgvector" and redact_dsn(cfg.dsn) != cfg.dsn:
        raise InputError("the DSN holds a literal password, which would be saved; write it as ${VAR} (e.g. "
                         "postgresql://me:${PGPASS}@db/x) or leave it out and set PGPASSWORD")


_LOADED: dict[tuple[Any, ...], Any] = {}  # parsed uploads, per (file, size, mtime, corpus): re-parsed only on change
_LOADED_LOCK = threading.Lock()
_MEMOS: dict[str, Any] = {}  # one result memo per store folder and process
_SNIFFED: dict[tuple[Any, ...], bool] = {}  # is this stored file a RAG log? per (file, size, mtime)


class SystemStore:
    """The systems of one corpus, kept under ``folder`` (``<workspace>/<corpus>/systems``)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    @classmethod
    def for_corpus(cls, corpus_name: str, root: str | os.PathLike[str] | None = None,
                   space: str = "shared") -> SystemStore:
        """The systems of a corpus kept in ``space`` (a student's own in class mode, else the shared one)."""
        from rag_metrics.workspace.store import Workspace

        return cls(Workspace(corpus_name, root, space=space).folder / "systems")

    # ---- index --------------------------------------------------------------------------------
    def specs(self) -> list[SystemSpec]:
        """Stored systems in the order they were added (a damaged index reads as empty, never raises)."""
        p = self.folder / _INDEX
        if not p.is_file():
            return []
        try:
            raw = json.loads(p.read_text(encoding="utf-8"))
            return [SystemSpec.from_json(d) for d in raw.get("systems", [])]
        except (ValueError, KeyError, TypeError, OSError):
            return []

    def _specs_to_change(self) -> list[SystemSpec]:
        """The index for a read-modify-write (under the lock): a damaged index is not overwritten."""
        p = self.folder / _INDEX
        if not p.is_file():
            return []
        try:
            raw = json.loads(p.read_text(encoding="utf-8"))
            return [SystemSpec.from_json(d) for d in raw["systems"]]
        except (ValueError, KeyError, TypeError, OSError):
            raise InputError(f"{p} is damaged, so it was not changed (the systems in it would be lost); "
                             "move it aside or fix it, then add the system again") from None

    def names(self) -> list[str]:
        """Names of the stored systems, in the order they were added."""
        return [s.name for s in self.specs()]

    def get(self, name: str) -> SystemSpec | None:
        """The stored system called ``name`` (None when there is none)."""
        return next((s for s in self.specs() if s.name == name), None)

    def _write(self, specs: Sequence[SystemSpec]) -> None:
        atomic_write_text(self.folder / _INDEX,
                          json.dumps({"version": 1, "systems": [s.to_json() for s in specs]}, indent=2) + "\n")

    def _locked(self) -> Any:
        """The index's lock: held around every read-modify-write of ``systems.json``."""
        return locked(self.folder / _INDEX)

    def _add(self, spec: SystemSpec, data: bytes | None = None) -> SystemSpec:
        """Check the name again and append ``spec`` (writing its file first), all under the lock."""
        with self._locked():
            specs = self._specs_to_change()
            self._check_name(spec.name)
            if data is not None and spec.file:
                atomic_write_bytes(self.folder / spec.file, data)
            self._write([*specs, spec])
        return spec

    def _check_name(self, name: str, renaming: str | None = None) -> str:
        name = " ".join(str(name).split())
        if not _NAME.match(name):
            raise InputError(f"system name {name!r}: use 1-60 letters, digits, spaces or . : ( ) + - _")

        if name.lower() in RETRIEVER_KINDS:
            raise InputError(f"system name {name!r} is the name of a bundled retriever; choose another name")
        specs = self.specs()
        if any(s.name == name and s.name != renaming for s in specs):
            raise InputError(f"a system named {name!r} exists already; choose another name or remove it first")
        if renaming is None and len(specs) >= MAX_SYSTEMS:
            raise InputError(f"{MAX_SYSTEMS} systems are stored for this corpus; remove one first")
        return name

    # ---- add / remove -------------------------------------------------------------------------
    def add_upload(self, name: str, filename: str, data: bytes,
                   chunks: Sequence[Chunk] | Mapping[str, str] | None = None,
                   match_threshold: float = 90.0) -> tuple[SystemSpec | None, ValidationReport]:
        """Validate an upload (run or RAG log) and keep it; ``(None, report)`` when it has errors."""
        spec, report = self.prepare_upload(name, filename, data, chunks, match_threshold)
        return (self._add(spec, data) if spec is not None else None), report

    def prepare_upload(self, name: str, filename: str, data: bytes,
                       chunks: Sequence[Chunk] | Mapping[str, str] | None = None,
                       match_threshold: float = 90.0) -> tuple[SystemSpec | None, ValidationReport]:
        """Everything :meth:`add_upload` checks (the name is free, the file parses), writing nothing: the
        spec to keep with :meth:`add_prepared`, or ``(None, report)``; a bad name raises :class:`InputError`."""
        from rag_metrics.systems.uploads import parse_upload

        name = self._check_name(name)
        report = ValidationReport()
        if len(data) > MAX_STORED_BYTES:
            report.error(f"file is {len(data):,} bytes; the app keeps uploads up to {MAX_STORED_BYTES:,} bytes. "
                         "Evaluate larger runs with the CLI (rag-metrics evaluate)", file=filename)
            return None, report
        system, report = parse_upload(data, filename, chunks, match_threshold, name)
        if system is None:
            return None, report
        suffix = PurePath(filename).suffix.lower()
        suffix = suffix if re.fullmatch(r"\.[a-z0-9]{1,8}", suffix) else ".txt"
        stem = re.sub(r"[^A-Za-z0-9_-]+", "_", name)[:40] or "system"
        fname = f"{stem}-{hashlib.sha256(data).hexdigest()[:8]}{suffix}"
        spec = SystemSpec(name, "upload", fname, PurePath(filename).name, {}, float(match_threshold))
        return spec, report

    def add_prepared(self, prepared: Sequence[tuple[SystemSpec, bytes]]) -> list[SystemSpec]:
        """Keep specs made by :meth:`prepare_upload`, all or none: every name is checked again under the
        lock (:class:`InputError` when one was taken since), then the files and one index write."""
        if not prepared:
            return []
        with self._locked():
            specs = self._specs_to_change()
            names = [spec.name for spec, _ in prepared]
            for spec, _ in prepared:
                self._check_name(spec.name)
            if len(set(names)) != len(names):
                raise InputError("two systems of one change have the same name; name them apart")
            if len(specs) + len(prepared) > MAX_SYSTEMS:
                raise InputError(f"{MAX_SYSTEMS} systems at most are stored for this corpus; remove one first")
            for spec, data in prepared:
                if spec.file:
                    atomic_write_bytes(self.folder / spec.file, data)
            self._write([*specs, *(spec for spec, _ in prepared)])
        return [spec for spec, _ in prepared]

    def add_connection(self, name: str, kind: str, settings: Mapping[str, Any]) -> SystemSpec:
        """Validate connection settings and keep them (secrets only as ``${VAR}`` references)."""
        name = self._check_name(name)
        cfg = connection_config(kind, settings)
        _refuse_literal_secrets(kind, cfg)
        stored = cfg.public() if kind != "pgvector" else {**cfg.public(), "dsn": cfg.dsn}
        if kind == "http":
            stored["headers"] = [list(h) for h in cfg.headers]
        if kind == "pgvector":
            stored.update(connect_timeout=cfg.connect_timeout)
        return self._add(SystemSpec(name, kind, None, None, stored))

    def remove(self, name: str) -> bool:
        """Forget a stored system (its uploaded file too, unless another system uses it)."""
        with self._locked():
            specs = self._specs_to_change()
            keep = [s for s in specs if s.name != name]
            if len(keep) == len(specs):
                return False
            self._write(keep)
            for s in specs:
                if s.name == name and s.file and not any(o.file == s.file for o in keep):
                    (self.folder / s.file).unlink(missing_ok=True)
        return True

    def rename(self, old: str, new: str) -> SystemSpec:
        """Rename a stored system in place (same position, file and settings)."""
        with self._locked():
            spec = self.get(old)
            if spec is None:
                raise InputError(f"no system named {old!r} is stored; reload the page")
            specs = self._specs_to_change()
            new = self._check_name(new, renaming=old)
            renamed = replace(spec, name=new)
            self._write([renamed if s.name == old else s for s in specs])
        return renamed
    def read_upload(self, spec: SystemSpec) -> bytes:
        """The bytes of a stored upload (InputError when its file is gone)."""
        p = self.folder / str(spec.file)
        try:
            return p.read_bytes()
        except OSError:
            raise InputError(f"the file of system {spec.name!r} ({spec.file}) is missing from {self.folder}; "
                             "remove the system and upload it again") from None

    def upload_version(self, spec: SystemSpec) -> tuple[int, int] | None:
        """``(size, mtime_ns)`` of a stored upload's file (a cache key that changes with it), or None."""
        try:
            st = (self.folder / str(spec.file)).stat()
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    def answer_logs(self) -> list[SystemSpec]:
        """Stored uploads that are RAG logs or trace exports (they may hold generated answers): the
        Answers page judges them without a second upload."""
        out = []
        for spec in self.specs():
            if spec.kind != "upload" or not spec.file:
                continue
            p = self.folder / spec.file
            try:
                st = p.stat()
                key = (str(p), st.st_size, st.st_mtime_ns, spec.filename)
                hit = _SNIFFED.get(key)
                if hit is None:
                    with open(p, "rb") as f:
                        head = f.read(65536)
                    if head[:2] == b"\x1f\x8b" or head[:4] == b"PAR1":  # gzip / Parquet: sniffed whole
                        head = p.read_bytes()
                    hit = _SNIFFED[key] = looks_like_rag_log(head, spec.filename or p.name)
                    if len(_SNIFFED) > 256:
                        _SNIFFED.clear()
            except OSError:
                continue
            if hit:
                out.append(spec)
        return out

    def history(self) -> Any:
        """The evaluations saved as named runs for this corpus, kept beside its systems
        (:class:`rag_metrics.compare.history.RunHistory`)."""
        from rag_metrics.compare.history import RunHistory

        return RunHistory(self.folder / "runs")

    # ---- systems ------------------------------------------------------------------------------
    def memo(self) -> Any:
        """The result memo of this store's live systems, kept on disk beside them
        (``systems/memo/<fingerprint>.json``: question texts and ``[id, score]`` pairs, no secret),
        so answers come back after a restart without querying the backend again."""
        from rag_metrics.systems.base import ResultMemo

        key = str(self.folder / "memo")
        with _LOADED_LOCK:
            memo = _MEMOS.get(key)
            if memo is None:
                memo = _MEMOS[key] = ResultMemo(key)
        return memo

    def system(self, spec: SystemSpec, chunks: Sequence[Chunk] | Mapping[str, str] | None = None,
               encoder: Any = None, corpus_key: str = "", env: Mapping[str, str] | None = None) -> Any:
        """The :class:`~rag_metrics.systems.base.System` of a stored spec (uploads parsed once per
        file version and corpus; live systems answer from :meth:`memo` first)."""
        if spec.kind != "upload":
            return build_system(spec, encoder, env, memo=self.memo())
        p = self.folder / str(spec.file)
        try:
            st = p.stat()
        except OSError:
            raise InputError(f"the file of system {spec.name!r} ({spec.file}) is missing from {self.folder}; "
                             "remove the system and upload it again") from None
        key = (str(p), st.st_size, st.st_mtime_ns, corpus_key, spec.name, spec.match_threshold)
        with _LOADED_LOCK:
            hit = _LOADED.get(key)
        if hit is not None:
            return hit
        from rag_metrics.systems.uploads import parse_upload

        system, report = parse_upload(p.read_bytes(), spec.filename or p.name, chunks, spec.match_threshold, spec.name)
        if system is None:
            report.raise_if_errors(f"system {spec.name!r}", hint="remove it and upload a corrected file")
        with _LOADED_LOCK:
            if len(_LOADED) > 64:
                _LOADED.clear()
            _LOADED[key] = system
        return system


def build_system(spec: SystemSpec, encoder: Any = None, env: Mapping[str, str] | None = None,
                 memo: Any = None) -> Any:
    """A live system from a connection spec (``encoder``: the lab's, for pgvector and Qdrant;
    ``memo``: a :class:`~rag_metrics.systems.base.ResultMemo`, default the process-wide one)."""
    cfg = connection_config(spec.kind, spec.settings)
    if spec.kind == "connection":
        from rag_metrics.systems.store import build_named

        return build_named(spec, encoder, env, memo)
    if spec.kind == "http":
        from rag_metrics.systems.backends.http import http_system

        return http_system(cfg, name=spec.name, env=env, memo=memo)
    if encoder is None:
        raise InputError(f"system {spec.name!r} ({spec.kind}) needs the lab's encoder for question embeddings")
    if spec.kind == "pgvector":
        from rag_metrics.systems.backends.pgvector import pgvector_system

        return pgvector_system(cfg, encoder, name=spec.name, env=env, memo=memo)
    from rag_metrics.systems.backends.qdrant import qdrant_system

    return qdrant_system(cfg, encoder, name=spec.name, env=env, memo=memo)


def build_named(spec: Any, encoder: Any, env: Mapping[str, str] | None, memo: Any) -> Any:
    """The live system of a stored named connection (settings and secrets from the configuration)."""
    from rag_metrics.systems.store import SystemSpec, build_system

    name = str(dict(spec.settings).get("connection", ""))
    conn = named_connection(env, name)
    base = env if isinstance(env, ServerEnv) else server_env()
    settings = dict(conn.settings)
    if isinstance(settings.get("headers"), Mapping):  # TOML: headers = { Authorization = "..." }
        settings["headers"] = [[str(k), str(v)] for k, v in settings["headers"].items()]
    named_env = base.for_named()
    key = settings.get("api_key")
    if conn.kind == "qdrant" and isinstance(key, str) and key.strip() and not references(key):
        # a literal key in the operator's file: handed over as a variable of this environment only
        assert named_env.variables is not None
        named_env.variables[_NAMED_KEY] = key
        settings["api_key"] = "${" + _NAMED_KEY + "}"
    system = build_system(SystemSpec(spec.name, conn.kind, settings=settings), encoder, named_env, memo=memo)
    backend = getattr(system, "backend", None)
    if backend is not None:
        backend.label = f"the class's connection {name!r}"
        backend.named = name
    return system


__all__ += ['build_named']
