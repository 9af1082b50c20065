"""Load corpora: a folder of .md/.txt files, a JSONL corpus, or a BEIR folder.

Conventions
-----------
- **Folder of files**: every ``*.md``, ``*.markdown`` and ``*.txt`` file below the folder (hidden
  files and folders skipped), in sorted path order.  Document id = the path relative to the folder
  without its extension, with ``/`` separators (``guides/setup.md`` -> ``guides/setup``).  Title =
  the first ATX markdown heading (``# Title``), else the file stem.  ``text`` is the whole file.
- **JSONL** (BEIR ``corpus.jsonl`` shape): one object per line with ``"id"`` (or BEIR's ``"_id"``),
  ``"text"`` and an optional ``"title"``.  Blank lines are ignored.
- **BEIR folder**: a folder containing ``corpus.jsonl``.
- **Title handling for JSONL.**  Chunks must be exact spans of ``Document.text``, and retrievers
  index chunk text only, so the title is folded into the text: when ``title`` is non-empty and the
  text does not already start with it, ``Document.text = title + "\\n\\n" + text`` (a paragraph
  break, so the chunker keeps the title with the first paragraph).  ``Document.title`` keeps the
  title separately for display.  This is what the classic collections need (CACM: 1,617 of 3,204
  documents have a title and no abstract).
- **Empty documents** (no non-whitespace text and no title) are skipped and reported as
  *warnings* (pass ``report=`` to collect them); they cannot be retrieved anyway.
- **Errors** (non-UTF-8 bytes, invalid JSON, missing ``"text"``/``"id"``, duplicate ids, files
  over ``max_file_bytes``) are all collected, then raised as one :class:`InputError` naming the
  first problem as ``file:line`` and counting the rest; ``err.report`` lists them all.
- A UTF-8 byte-order mark is accepted and removed.  Line endings are kept as they are.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.types import Corpus, Document

__all__ = [
    "MAX_FILE_BYTES",
    "TEXT_SUFFIXES",
    "load_corpus",
    "load_corpus_jsonl",
    "load_corpus_folder",
    "parse_corpus_jsonl",
    "corpus_from_files",
    "document_from_text",
    "resolve_max_file_bytes",
]

#: Default largest accepted file, in bytes (5 MiB).  Override per call with ``max_file_bytes=``
#: or for the whole process with the environment variable ``RAG_METRICS_MAX_FILE_BYTES``.
MAX_FILE_BYTES = 5 * 1024 * 1024
#: File suffixes read as documents from a folder or an upload.
TEXT_SUFFIXES = (".md", ".markdown", ".txt")

_HEADING = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def resolve_max_file_bytes(override: int | None = None) -> int:
    """The effective size limit: ``override``, else ``$RAG_METRICS_MAX_FILE_BYTES``, else default."""
    if override is not None:
        return int(override)
    env = os.environ.get("RAG_METRICS_MAX_FILE_BYTES")
    if env:
        try:
            return int(env)
        except ValueError:
            raise InputError(
                f"RAG_METRICS_MAX_FILE_BYTES must be a whole number of bytes, got {env!r}."
            ) from None
    return MAX_FILE_BYTES


def _decode(data: bytes, source: str, report: ValidationReport) -> str | None:
    """UTF-8 decode (BOM removed) or record an error naming line and byte offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        bad = data[err.start:err.start + 1].hex().upper()
        report.error(
            f"not valid UTF-8: byte 0x{bad} at byte offset {err.start}; re-encode the file as "
            f"UTF-8 (e.g. `iconv -f latin1 -t utf-8 in > out`, or save as UTF-8 in your editor).",
            file=source, line=line,
        )
        return None


def _check_size(n_bytes: int, source: str, limit: int, report: ValidationReport) -> bool:
    if n_bytes > limit:
        report.error(
            f"file is {n_bytes:,} bytes, over the {limit:,}-byte limit; split it, or raise the limit "
            "with max_file_bytes= or the environment variable RAG_METRICS_MAX_FILE_BYTES.",
            file=source,
        )
        return False
    return True


def _title_from_markdown(text: str, stem: str) -> str:
    m = _HEADING.search(text)
    return m.group(1).strip() if m else stem


def document_from_text(doc_id: str, text: str, source: str = "", suffix: str = ".md") -> Document:
    """One document from a file's text; title = first markdown heading (``.md``) or the stem."""
    stem = PurePosixPath(doc_id).name
    title = _title_from_markdown(text, stem) if suffix.lower() in (".md", ".markdown") else stem
    return Document(id=doc_id, text=text, title=title, source=source)


def _fold_title(title: str, text: str) -> str:
    title = title.strip()
    if not title:
        return text
    if not text.strip():
        return title
    if text.lstrip().startswith(title):
        return text
    return f"{title}\n\n{text}"


def _parse_jsonl_into(
    text: str, source: str, report: ValidationReport, docs: list[Document], seen: dict[str, str]
) -> None:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = {"file": source, "line": lineno}
        try:
            obj: Any = json.loads(line)
        except json.JSONDecodeError as err:
            report.error(f"invalid JSON ({err.msg} at column {err.colno}); each line must be one "
                         'JSON object like {"id": "d1", "title": "...", "text": "..."}.', **where)
            continue
        if not isinstance(obj, dict):
            report.error(f"expected a JSON object, got {type(obj).__name__}; each line must look "
                         'like {"id": "d1", "text": "..."}.', **where)
            continue
        raw_id = obj.get("id", obj.get("_id"))
        if raw_id is None or isinstance(raw_id, (bool, dict, list)) or str(raw_id).strip() == "":
            report.error('missing document id: add "id" (or BEIR "_id") with a string value.',
                         **where)
            continue
        doc_id = str(raw_id)
        if "text" not in obj:
            report.error(f'document {doc_id!r} has no "text" field; add "text" (it may be "" '
                         'when "title" is given).', **where)
            continue
        body, title = obj["text"], obj.get("title", "")
        if title is None:
            title = ""
        if not isinstance(body, str) or not isinstance(title, str):
            bad = "text" if not isinstance(body, str) else "title"
            report.error(f'document {doc_id!r}: "{bad}" must be a string, got '
                         f"{type(obj[bad]).__name__}.", **where)
            continue
        if doc_id in seen:
            report.error(f"duplicate document id {doc_id!r} (first seen at {seen[doc_id]}); "
                         "ids must be unique.", **where)
            continue
        seen[doc_id] = f"{source}:{lineno}"
        full = _fold_title(title, body)
        if not full.strip():
            report.warning(f"document {doc_id!r} is empty (no text and no title); skipped.",
                           **where)
            continue
        docs.append(Document(id=doc_id, text=full, title=title.strip() or doc_id,
                             source=f"{source}:{lineno}"))


def parse_corpus_jsonl(
    text: str, source: str = "corpus.jsonl", *, report: ValidationReport | None = None,
    name: str = "",
) -> Corpus:
    """Parse JSONL corpus text (already decoded).  See the module docstring for the format.

    Parameters
    ----------
    text : str
        The file content.
    source : str
        File name used in messages (``source:line``).
    report : ValidationReport, optional
        Receives warnings (empty documents skipped) and errors.  Errors raise regardless.
    name : str
        Corpus name; defaults to ``source``.

    Raises
    ------
    InputError
        On any error; ``err.report`` lists all problems.
    """
    report = report if report is not None else ValidationReport()
    docs: list[Document] = []
    _parse_jsonl_into(text, source, report, docs, {})
    report.raise_if_errors(source)
    if not docs:
        raise InputError(f"{source}: no documents found; expected one JSON object per line like "
                         '{"id": "d1", "text": "..."}.', report=report)
    return Corpus(tuple(docs), name=name or source)


def _read_bytes(path: Path, limit: int, report: ValidationReport) -> bytes | None:
    size = path.stat().st_size
    if not _check_size(size, str(path), limit, report):
        return None
    return path.read_bytes()


def load_corpus_jsonl(
    path: str | os.PathLike[str], *, max_file_bytes: int | None = None,
    report: ValidationReport | None = None, name: str = "",
) -> Corpus:
    """Read a JSONL corpus file (BEIR ``corpus.jsonl`` shape)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: corpus file not found; pass a .jsonl file, a BEIR folder with "
                         "corpus.jsonl, or a folder of .md/.txt files.")
    report = report if report is not None else ValidationReport()
    data = _read_bytes(p, resolve_max_file_bytes(max_file_bytes), report)
    text = _decode(data, str(p), report) if data is not None else None
    report.raise_if_errors(str(p))
    assert text is not None
    return parse_corpus_jsonl(text, str(p), report=report, name=name or p.stem)


def _iter_text_files(folder: Path) -> list[Path]:
    files = []
    for p in folder.rglob("*"):
        rel = p.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES:
            files.append(p)
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def _docs_from_named_bytes(
    items: list[tuple[str, str, bytes]], limit: int, report: ValidationReport
) -> list[Document]:
    """``items`` = (relative posix name, source for messages, content)."""
    docs: list[Document] = []
    seen: dict[str, str] = {}
    for rel, source, data in items:
        suffix = PurePosixPath(rel).suffix.lower()
        if not _check_size(len(data), source, limit, report):
            continue
        text = _decode(data, source, report)
        if text is None:
            continue
        if suffix == ".jsonl":
            _parse_jsonl_into(text, source, report, docs, seen)
            continue
        if suffix not in TEXT_SUFFIXES:
            report.error(f"unsupported file type {suffix or '(none)'!r}; upload .md, .txt or "
                         "a .jsonl corpus.", file=source)
            continue
        doc_id = str(PurePosixPath(rel).with_suffix(""))
        if doc_id in seen:
            report.error(f"duplicate document id {doc_id!r}: also from {seen[doc_id]}; rename "
                         "one of the files (ids are paths without extension).", file=source)
            continue
        seen[doc_id] = source
        if not text.strip():
            report.warning(f"document {doc_id!r} is empty; skipped.", file=source)
            continue
        docs.append(document_from_text(doc_id, text, source, suffix))
    return docs


def load_corpus_folder(
    folder: str | os.PathLike[str], *, max_file_bytes: int | None = None,
    report: ValidationReport | None = None, name: str = "",
) -> Corpus:
    """Read every .md/.markdown/.txt file below ``folder`` as one document each."""
    root = Path(folder)
    report = report if report is not None else ValidationReport()
    limit = resolve_max_file_bytes(max_file_bytes)
    files = _iter_text_files(root)
    if not files:
        raise InputError(f"{root}: no .md or .txt files found; pass a folder of documents, a "
                         ".jsonl corpus, or a BEIR folder containing corpus.jsonl.")
    items: list[tuple[str, str, bytes]] = []
    for p in files:
        rel = p.relative_to(root).as_posix()
        if not _check_size(p.stat().st_size, str(p), limit, report):
            continue
        items.append((rel, str(p), p.read_bytes()))
    docs = _docs_from_named_bytes(items, limit, report)
    report.raise_if_errors(str(root))
    if not docs:
        raise InputError(f"{root}: every document is empty; add text to the files.", report=report)
    return Corpus(tuple(docs), name=name or root.name)


def load_corpus(
    path: str | os.PathLike[str], *, max_file_bytes: int | None = None,
    report: ValidationReport | None = None, name: str = "",
) -> Corpus:
    """Load a corpus from a folder of .md/.txt files, a .jsonl file, or a BEIR folder.

    Parameters
    ----------
    path : path-like
        A BEIR folder (contains ``corpus.jsonl``), a folder of documents, a ``.jsonl`` file, or a
        single ``.md``/``.txt`` file.
    max_file_bytes : int, optional
        Per-file size limit; default :data:`MAX_FILE_BYTES` or ``$RAG_METRICS_MAX_FILE_BYTES``.
    report : ValidationReport, optional
        Collects warnings (skipped empty documents) as well as errors.
    name : str
        Corpus name (default: the folder or file stem).

    Raises
    ------
    InputError
        Path missing or unsupported, or any problem in the files (first one named as file:line).
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: corpus not found; pass a folder of .md/.txt files, a .jsonl "
                         "corpus, or a BEIR folder containing corpus.jsonl.")
    if p.is_dir():
        beir = p / "corpus.jsonl"
        if beir.is_file():
            return load_corpus_jsonl(beir, max_file_bytes=max_file_bytes, report=report,
                                     name=name or p.name)
        return load_corpus_folder(p, max_file_bytes=max_file_bytes, report=report, name=name)
    suffix = p.suffix.lower()
    if suffix == ".jsonl":
        return load_corpus_jsonl(p, max_file_bytes=max_file_bytes, report=report, name=name)
    if suffix in TEXT_SUFFIXES:
        report = report if report is not None else ValidationReport()
        limit = resolve_max_file_bytes(max_file_bytes)
        docs = _docs_from_named_bytes([(p.name, str(p), p.read_bytes())], limit, report)
        report.raise_if_errors(str(p))
        if not docs:
            raise InputError(f"{p}: the document is empty.", report=report)
        return Corpus(tuple(docs), name=name or p.stem)
    raise InputError(f"{p}: unsupported corpus file type {suffix or '(none)'!r}; pass a folder of "
                     ".md/.txt files, a .jsonl corpus, or a BEIR folder containing corpus.jsonl.")


def corpus_from_files(
    files: Mapping[str, bytes], *, name: str = "upload", max_file_bytes: int | None = None,
    report: ValidationReport | None = None,
) -> Corpus:
    """Build a corpus from uploaded files ``{relative name: content}`` (the app's uploader).

    ``.md``/``.txt`` files become one document each (id = name without extension); ``.jsonl``
    files are parsed as JSONL corpora.  Files are processed in sorted name order; ids must be
    unique across all files.
    """
    if not files:
        raise InputError("no files given; upload .md or .txt documents or a .jsonl corpus.")
    report = report if report is not None else ValidationReport()
    limit = resolve_max_file_bytes(max_file_bytes)
    items = [(PurePosixPath(n.replace("\\", "/")).as_posix().lstrip("/"), n, bytes(files[n]))
             for n in sorted(files)]
    docs = _docs_from_named_bytes(items, limit, report)
    report.raise_if_errors(name)
    if not docs:
        raise InputError("every uploaded document is empty; add text to the files.",
                         report=report)
    return Corpus(tuple(docs), name=name)
