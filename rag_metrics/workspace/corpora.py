"""Uploaded corpora kept in the workspace, so they come back after a reload or a restart.

Layout, per corpus folder of the workspace (:class:`rag_metrics.workspace.store.Workspace`)::

    <workspace>/<corpus>/corpus/meta.json                 name, label, level, and the two files below
    <workspace>/<corpus>/corpus/documents-<hash>.jsonl    one {"id", "text", "title", "source"} per line
    <workspace>/<corpus>/corpus/seed_golden-<hash>.jsonl  the judged queries that came with it (BEIR), if any

Every file is plain text written atomically (a uniquely named temporary file + ``os.replace``),
never pickle.  The data files are named by their content's hash and ``meta.json`` names them, so
writing ``meta.json`` (last) switches from the old corpus to the new one at once: a crash
(``kill -9``) in the middle of a save leaves the old corpus or the new one, never documents of
one with the seed or label of the other.  Saves and removals hold the folder's lock, loads a
shared one (:func:`rag_metrics.io.files.locked`).  Folders written before (``documents.jsonl``,
``seed_golden.jsonl`` and a ``meta.json`` without file names) are still read.  A
corpus larger than :data:`MAX_CORPUS_BYTES` (its documents as stored) is not kept: it stays in
the session only, and :func:`save_corpus` says so with an ``InputError``.  A damaged folder reads
as absent (listed by :func:`stored_corpora` with nothing), never a traceback.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from rag_metrics.errors import InputError
from rag_metrics.io.files import atomic_write_text, locked
from rag_metrics.types import Corpus, Document, GoldenSet

__all__ = ["MAX_CORPUS_BYTES", "StoredCorpus", "load_corpus", "remove_corpus", "save_corpus", "stored_corpora",
           "stored_corpora_usage"]

#: Largest corpus kept in the workspace (its documents as JSON lines), in bytes: 200 MiB.
MAX_CORPUS_BYTES = 200 * 1024 * 1024
_FOLDER = "corpus"
_META = "meta.json"
_DOCS = "documents.jsonl"
_SEED = "seed_golden.jsonl"
_DATA_FILE = re.compile(r"(documents|seed_golden)(-[0-9a-f]{16})?\.jsonl")


@dataclass(frozen=True)
class StoredCorpus:
    """A kept corpus: its name (the sidebar's key), label and label level."""

    name: str
    label: str
    level: str


def _folder(name: str, root: str | os.PathLike[str] | None, space: str = "shared") -> Path:
    from rag_metrics.workspace.store import Workspace

    return Workspace(name, root, space=space).folder / _FOLDER


def save_corpus(name: str, corpus: Corpus, *, level: str = "chunk", label: str = "",
                seed_golden: GoldenSet | None = None, root: str | os.PathLike[str] | None = None,
                space: str = "shared") -> Path:
    """Keep ``corpus`` under ``name`` in ``space`` of the workspace (atomic, plain JSON lines);
    returns its folder.  In class mode a student's corpora go to their own space.

    Raises
    ------
    InputError
        When the corpus is larger than :data:`MAX_CORPUS_BYTES` (it is then not kept), or ``level``
        is not ``chunk`` / ``document``.
    """
    if level not in ("chunk", "document"):
        raise InputError(f"corpus {name!r}: level must be 'chunk' or 'document', got {level!r}")
    lines = [json.dumps({"id": d.id, "text": d.text, "title": d.title, "source": d.source}, ensure_ascii=False)
             for d in corpus]
    text = "\n".join(lines) + "\n"
    size = len(text.encode("utf-8"))
    if size > MAX_CORPUS_BYTES:
        raise InputError(f"corpus {name!r} is {size:,} bytes; the workspace keeps corpora up to "
                         f"{MAX_CORPUS_BYTES:,} bytes, so it is used in this session only (load it again after a "
                         "reload, or point the CLI at its folder)")
    folder = _folder(name, root, space)
    docs_file = f"documents-{_digest(text)}.jsonl"
    seed_text = None
    if seed_golden is not None:
        from rag_metrics.io.golden import golden_to_text

        seed_text = golden_to_text(seed_golden, "jsonl")
    seed_file = f"seed_golden-{_digest(seed_text)}.jsonl" if seed_text is not None else None
    with locked(folder / _META):
        atomic_write_text(folder / docs_file, text)
        if seed_text is not None and seed_file is not None:
            atomic_write_text(folder / seed_file, seed_text)
        atomic_write_text(folder / _META, json.dumps({  # the switch: the new files from now on
            "version": 2, "name": name, "label": label or name, "level": level, "documents": len(lines),
            "documents_file": docs_file, "seed_file": seed_file}, indent=2) + "\n")
        _drop_unused(folder, {docs_file, seed_file})
    return folder


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _drop_unused(folder: Path, keep: set[str | None]) -> None:
    """Remove data files of earlier saves (after the switch; a crash before leaves only litter)."""
    try:
        names = [p.name for p in folder.iterdir()]
    except OSError:
        return
    for n in names:
        if _DATA_FILE.fullmatch(n) and n not in keep:
            (folder / n).unlink(missing_ok=True)


def _files(folder: Path, meta: dict) -> tuple[Path, Path | None]:
    """The documents file and seed file (or None) that ``meta`` names (only names this module writes)."""
    docs, seed = meta.get("documents_file"), meta.get("seed_file", _SEED)
    docs = docs if isinstance(docs, str) and _DATA_FILE.fullmatch(docs) and docs.startswith("documents") else _DOCS
    if "documents_file" not in meta:  # written before version 2: fixed names
        seed = _SEED if (folder / _SEED).is_file() else None
    elif not (isinstance(seed, str) and _DATA_FILE.fullmatch(seed) and seed.startswith("seed_golden")):
        seed = None
    return folder / docs, (folder / seed if seed else None)


def _meta(folder: Path) -> dict | None:
    try:
        meta = json.loads((folder / _META).read_text(encoding="utf-8"))
        if isinstance(meta, dict) and isinstance(meta.get("name"), str) and _files(folder, meta)[0].is_file():
            return meta
    except (OSError, ValueError):
        pass
    return None


def stored_corpora(root: str | os.PathLike[str] | None = None, space: str = "shared") -> list[StoredCorpus]:
    """The corpora kept in ``space`` of the workspace, by name (damaged folders are left out)."""
    from rag_metrics.workspace.store import space_dir

    base = space_dir(space, root)
    out = []
    if base.is_dir():
        for sub in sorted(base.iterdir()):
            meta = _meta(sub / _FOLDER)
            if meta is not None:
                out.append(StoredCorpus(meta["name"], str(meta.get("label") or meta["name"]),
                                        "document" if meta.get("level") == "document" else "chunk"))
    return out


def stored_corpora_usage(root: str | os.PathLike[str] | None = None, space: str = "shared") -> tuple[int, int]:
    """``(corpora, bytes of their documents)`` kept in ``space`` (a seat's budget: ``lab.budgets.corpora_*``)."""
    from rag_metrics.workspace.store import space_dir

    base = space_dir(space, root)
    count = size = 0
    if base.is_dir():
        for sub in base.iterdir():
            meta = _meta(sub / _FOLDER)
            if meta is not None:
                count += 1
                try:
                    size += _files(sub / _FOLDER, meta)[0].stat().st_size
                except OSError:
                    pass
    return count, size


def load_corpus(name: str, root: str | os.PathLike[str] | None = None, space: str = "shared"
                ) -> tuple[Corpus, StoredCorpus, GoldenSet | None]:
    """A kept corpus of ``space``: ``(Corpus, its StoredCorpus, seed golden set or None)``.

    Raises
    ------
    InputError
        When it is not kept, or its files are damaged (naming the file and line).
    """
    folder = _folder(name, root, space)
    if not (folder / _META).is_file():
        raise InputError(f"corpus {name!r} is not kept in the workspace ({folder}); "
                         "load it on the Corpus explorer page")
    with locked(folder / _META, shared=True):
        return _load(name, folder)


def _load(name: str, folder: Path) -> tuple[Corpus, StoredCorpus, GoldenSet | None]:
    meta = _meta(folder)
    if meta is None:
        raise InputError(f"corpus {name!r} is not kept in the workspace ({folder}); "
                         "load it on the Corpus explorer page")
    docs_path, seed_path = _files(folder, meta)
    docs = []
    with open(docs_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                docs.append(Document(str(row["id"]), str(row["text"]), str(row.get("title") or ""),
                                     str(row.get("source") or "")))
            except (ValueError, KeyError, TypeError) as e:
                raise InputError(f"{docs_path}:{n}: not a document row ({e}); load the corpus again on the "
                                 "Corpus explorer page") from None
    seed = None
    if seed_path is not None and seed_path.is_file():
        from rag_metrics.io.golden import read_golden

        seed, report = read_golden(seed_path)
        report.raise_if_errors(str(seed_path), hint="load the corpus again on the Corpus explorer page")
    info = StoredCorpus(meta["name"], str(meta.get("label") or meta["name"]),
                        "document" if meta.get("level") == "document" else "chunk")
    return Corpus(tuple(docs), name=name), info, seed


def remove_corpus(name: str, root: str | os.PathLike[str] | None = None, space: str = "shared") -> bool:
    """Forget a kept corpus of ``space`` (its golden set and systems stay in the corpus folder)."""
    folder = _folder(name, root, space)
    if not folder.is_dir():
        return False
    with locked(folder / _META):
        found = (folder / _META).exists()
        (folder / _META).unlink(missing_ok=True)  # first: the corpus is gone at once
        try:
            names = [p.name for p in folder.iterdir()]
        except OSError:
            names = []
        for n in names:
            if _DATA_FILE.fullmatch(n):
                (folder / n).unlink(missing_ok=True)
                found = True
    return found
