"""Workspace archives: a space's golden sets and settings as one ``.zip``, and the import journal
that swaps an archive's files in all or nothing.

:func:`read_archive` validates an archive in memory (caps per member and on the manifest) and never
writes; :func:`export_archive` writes one.  :func:`_commit_import` stages the files in the space
and commits them with one atomic write of ``.import-commit.json``; an import interrupted after that
point is finished by the next access to the space (:func:`_settle_import`), one interrupted before
it leaves nothing.  The whole-space verbs are :func:`rag_metrics.workspace.spaces.import_space_archive`
and ``export_space_archive``.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import secrets
import shutil
import threading
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.files import atomic_write_text, fsync_dir, loads_json
from rag_metrics.io.files import locked as _locked
from rag_metrics.io.golden import parse_golden
from rag_metrics.limits import parse_int
from rag_metrics.types import GoldenSet
from rag_metrics.workspace.history import _keep_entry
from rag_metrics.workspace.layout import (
    _SETTING_BOUNDS,
    DEFAULT_SPACE,
    GOLDEN_FILE,
    HISTORY_DIR,
    IMPORT_MARK,
    MAX_GOLDEN_BYTES,
    SETTINGS_FILE,
    _check_name,
    _write_name,
    folder_name,
    space_dir,
)

__all__ = ["MAX_ARCHIVE_BYTES", "ArchiveEntry", "export_archive", "read_archive"]

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
_STAGE_NAME = re.compile(r"\.import-[0-9]+-[0-9]+-[0-9a-f]{8}")


class _Saved(Protocol):
    """What :func:`export_archive` reads of a :class:`~rag_metrics.workspace.golden_store.Workspace`."""

    name: str

    def export(self) -> bytes: ...

    def load_settings(self) -> dict: ...


@dataclass(frozen=True)
class ArchiveEntry:
    name: str
    golden: GoldenSet | None
    settings: dict

def export_archive(workspaces: Sequence[_Saved]) -> bytes:
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
