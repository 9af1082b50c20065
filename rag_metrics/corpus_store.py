"""Uploaded corpora kept in the workspace, so they come back after a reload or a restart.

Layout, per corpus folder of the workspace (:class:`rag_metrics.workspace.Workspace`)::

    <workspace>/<corpus>/corpus/meta.json          name, label, label level ("chunk" or "document")
    <workspace>/<corpus>/corpus/documents.jsonl    one {"id", "text", "title", "source"} per line
    <workspace>/<corpus>/corpus/seed_golden.jsonl  the judged queries that came with it (BEIR), if any

Every file is plain text written atomically (temporary file + ``os.replace``), never pickle.  A
corpus larger than :data:`MAX_CORPUS_BYTES` (its documents as stored) is not kept: it stays in
the session only, and :func:`save_corpus` says so with an ``InputError``.  A damaged folder reads
as absent (listed by :func:`stored_corpora` with nothing), never a traceback.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from rag_metrics.errors import InputError
from rag_metrics.files import atomic_write_text
from rag_metrics.types import Corpus, Document, GoldenSet

__all__ = ["MAX_CORPUS_BYTES", "StoredCorpus", "load_corpus", "remove_corpus", "save_corpus", "stored_corpora"]

#: Largest corpus kept in the workspace (its documents as JSON lines), in bytes: 200 MiB.
MAX_CORPUS_BYTES = 200 * 1024 * 1024
_FOLDER = "corpus"
_META = "meta.json"
_DOCS = "documents.jsonl"
_SEED = "seed_golden.jsonl"


@dataclass(frozen=True)
class StoredCorpus:
    """A kept corpus: its name (the sidebar's key), label and label level."""

    name: str
    label: str
    level: str


def _folder(name: str, root: str | os.PathLike[str] | None, space: str = "shared") -> Path:
    from rag_metrics.workspace import Workspace

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
    atomic_write_text(folder / _DOCS, text)
    if seed_golden is not None:
        from rag_metrics.golden import golden_to_text

        atomic_write_text(folder / _SEED, golden_to_text(seed_golden, "jsonl"))
    else:
        (folder / _SEED).unlink(missing_ok=True)
    atomic_write_text(folder / _META, json.dumps({"version": 1, "name": name, "label": label or name,
                                                  "level": level, "documents": len(lines)}, indent=2) + "\n")
    return folder


def _meta(folder: Path) -> dict | None:
    try:
        meta = json.loads((folder / _META).read_text(encoding="utf-8"))
        if isinstance(meta, dict) and isinstance(meta.get("name"), str) and (folder / _DOCS).is_file():
            return meta
    except (OSError, ValueError):
        pass
    return None


def stored_corpora(root: str | os.PathLike[str] | None = None, space: str = "shared") -> list[StoredCorpus]:
    """The corpora kept in ``space`` of the workspace, by name (damaged folders are left out)."""
    from rag_metrics.workspace import space_dir

    base = space_dir(space, root)
    out = []
    if base.is_dir():
        for sub in sorted(base.iterdir()):
            meta = _meta(sub / _FOLDER)
            if meta is not None:
                out.append(StoredCorpus(meta["name"], str(meta.get("label") or meta["name"]),
                                        "document" if meta.get("level") == "document" else "chunk"))
    return out


def load_corpus(name: str, root: str | os.PathLike[str] | None = None, space: str = "shared"
                ) -> tuple[Corpus, StoredCorpus, GoldenSet | None]:
    """A kept corpus of ``space``: ``(Corpus, its StoredCorpus, seed golden set or None)``.

    Raises
    ------
    InputError
        When it is not kept, or its files are damaged (naming the file and line).
    """
    folder = _folder(name, root, space)
    meta = _meta(folder)
    if meta is None:
        raise InputError(f"corpus {name!r} is not kept in the workspace ({folder}); "
                         "load it on the Corpus explorer page")
    docs = []
    with open(folder / _DOCS, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                docs.append(Document(str(row["id"]), str(row["text"]), str(row.get("title") or ""),
                                     str(row.get("source") or "")))
            except (ValueError, KeyError, TypeError) as e:
                raise InputError(f"{folder / _DOCS}:{n}: not a document row ({e}); load the corpus again on the "
                                 "Corpus explorer page") from None
    seed = None
    if (folder / _SEED).is_file():
        from rag_metrics.golden import read_golden

        seed, report = read_golden(folder / _SEED)
        report.raise_if_errors(str(folder / _SEED), hint="load the corpus again on the Corpus explorer page")
    info = StoredCorpus(meta["name"], str(meta.get("label") or meta["name"]),
                        "document" if meta.get("level") == "document" else "chunk")
    return Corpus(tuple(docs), name=name), info, seed


def remove_corpus(name: str, root: str | os.PathLike[str] | None = None, space: str = "shared") -> bool:
    """Forget a kept corpus of ``space`` (its golden set and systems stay in the corpus folder)."""
    folder = _folder(name, root, space)
    found = False
    for fname in (_META, _DOCS, _SEED):
        p = folder / fname
        if p.exists():
            p.unlink()
            found = True
    return found
