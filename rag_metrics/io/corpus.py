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
- **Ids** are written into TREC runs and qrels, whose columns are separated by whitespace.  A
  JSONL document id with whitespace or control characters is an error
  (:func:`rag_metrics.limits.id_problem`); a file name with spaces gets an id with each run of
  whitespace replaced by ``_`` (``My notes.md`` -> ``My_notes``); two files that then share an id
  are reported as duplicates.
- **Hostile paths**: a folder is walked without following symbolic links, unreadable entries are
  reported (not raised), and the walk stops at :data:`MAX_FOLDER_ENTRIES` entries with a message
  (so ``/`` or a home folder is refused quickly instead of read).
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from rag_metrics.config import setting
from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.files import loads_json
from rag_metrics.limits import id_problem, parse_int
from rag_metrics.types import Corpus, Document

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_FILE_BYTES_LIMIT",
    "MAX_FOLDER_ENTRIES",
    "TEXT_SUFFIXES",
    "corpus_from_files",
    "document_from_text",
    "file_doc_id",
    "load_corpus",
    "load_corpus_folder",
    "load_corpus_jsonl",
    "parse_corpus_jsonl",
    "resolve_max_file_bytes",
]

#: Default largest accepted file, in bytes (5 MiB).  Override per call with ``max_file_bytes=``
#: or for the whole process with the environment variable ``RAG_METRICS_MAX_FILE_BYTES``.
MAX_FILE_BYTES = 5 * 1024 * 1024
#: Largest per-file limit that may be configured (4 GiB): bigger values are refused.
MAX_FILE_BYTES_LIMIT = 4 * 1024 ** 3
#: Entries (files and folders) visited in a corpus folder before the walk stops with an error.
MAX_FOLDER_ENTRIES = 50_000
#: File suffixes read as documents from a folder or an upload.
TEXT_SUFFIXES = (".md", ".markdown", ".txt")

# A heading line; the closing "#"s and blanks are stripped in Python (a lazy group followed by
# optional runs, as in ``(.+?)[ \t]*#*[ \t]*$``, backtracks cubically on a long line of blanks).
_HEADING = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+(.+)$", re.MULTILINE)


def resolve_max_file_bytes(override: int | None = None) -> int:
    """The effective size limit: ``override``, else ``$RAG_METRICS_MAX_FILE_BYTES``, else default.

    Either must be a whole number of bytes from 1 to :data:`MAX_FILE_BYTES_LIMIT`.
    """
    if override is None:
        env = setting("max_file_bytes")
        if not env:
            return MAX_FILE_BYTES
        n, msg = parse_int(env, 1, MAX_FILE_BYTES_LIMIT, "RAG_METRICS_MAX_FILE_BYTES")
        if msg is not None:
            raise InputError(f"{msg} (bytes); unset it to use the default {MAX_FILE_BYTES:,}.")
        assert n is not None
        return n
    n, msg = parse_int(override, 1, MAX_FILE_BYTES_LIMIT, "max_file_bytes")
    if msg is not None:
        raise InputError(f"{msg} (bytes).")
    assert n is not None
    return n


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
    if not m:
        return stem
    body = m.group(1)
    title = body.rstrip(" \t").rstrip("#").rstrip(" \t")
    return (title or body[:1]).strip()


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
        obj: Any
        obj, msg, _ = loads_json(line)
        if msg is not None:
            report.error(f"{msg}; each line must be one "
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
        bad = id_problem(doc_id, "document id")
        if bad is not None:
            report.error(bad + ".", **where)
            continue
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
    """The file's bytes, or ``None`` with an error recorded (too large, unreadable)."""
    try:
        size = path.stat().st_size
        if not _check_size(size, str(path), limit, report):
            return None
        return path.read_bytes()
    except OSError as err:
        report.error(f"cannot read the file ({err.strerror or err}); check its permissions.",
                     file=str(path))
        return None


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
    if text is None:
        report.raise_if_errors(str(p))
    report.raise_if_errors(str(p))
    assert text is not None
    return parse_corpus_jsonl(text, str(p), report=report, name=name or p.stem)


def _iter_text_files(folder: Path, report: ValidationReport) -> list[Path]:
    """Document files below ``folder`` (sorted), skipping hidden entries and symbolic links.

    Unreadable folders are recorded as errors; more than :data:`MAX_FOLDER_ENTRIES` entries
    raise :class:`InputError` (a path like ``/`` or a home folder is not a corpus).
    """
    files: list[Path] = []
    seen = 0

    def unreadable(err: OSError) -> None:
        report.error(f"cannot read this folder ({err.strerror or err}); check its permissions.",
                     file=str(err.filename or folder))

    for dirpath, dirnames, filenames in os.walk(folder, onerror=unreadable, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        seen += len(dirnames) + len(filenames)
        if seen > MAX_FOLDER_ENTRIES:
            raise InputError(f"{folder}: more than {MAX_FOLDER_ENTRIES:,} files and folders below it; "
                             "this does not look like a corpus folder. Point at the folder that holds "
                             "the documents (or a BEIR folder with corpus.jsonl).", report=report)
        for name in filenames:
            p = Path(dirpath) / name
            if name.startswith(".") or p.suffix.lower() not in TEXT_SUFFIXES or p.is_symlink():
                continue
            files.append(p)
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def file_doc_id(rel: str) -> str:
    """Document id of a file: its relative path without extension, whitespace runs -> ``_``."""
    return re.sub(r"\s+", "_", str(PurePosixPath(rel).with_suffix("")))


def _docs_from_named_bytes(
    items: list[tuple[str, str, bytes]], limit: int, report: ValidationReport
) -> list[Document]:
    """``items`` = (relative posix name, source for messages, content)."""
    docs: list[Document] = []
    seen: dict[str, str] = {}
    for rel, source, data in items:
        if data[:2] == b"\x1f\x8b" or data[:4] == b"PAR1":  # gzip / Parquet: the one reader takes them off
            from rag_metrics.io.containers import unwrap

            try:
                data, rel, _wraps = unwrap(data, rel)
            except InputError as e:
                report.error(str(e), file=source)
                continue
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
        doc_id = file_doc_id(rel)
        bad = id_problem(doc_id, "document id")
        if bad is not None:
            report.error(bad + "; rename the file.", file=source)
            continue
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
    if not root.is_dir():
        raise InputError(f"{root}: not a folder; pass a folder of .md/.txt files, a .jsonl corpus, "
                         "or a BEIR folder containing corpus.jsonl.")
    files = _iter_text_files(root, report)
    if not files:
        report.raise_if_errors(str(root))
        raise InputError(f"{root}: no .md or .txt files found; pass a folder of documents, a "
                         ".jsonl corpus, or a BEIR folder containing corpus.jsonl.")
    items: list[tuple[str, str, bytes]] = []
    for p in files:
        rel = p.relative_to(root).as_posix()
        data = _read_bytes(p, limit, report)
        if data is not None:
            items.append((rel, str(p), data))
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
    try:
        exists = p.exists()
    except OSError as err:  # e.g. a name too long, or a parent folder without permission
        raise InputError(f"{p}: cannot open ({err.strerror or err}); check the path.") from None
    if not exists:
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
        data = _read_bytes(p, limit, report)
        docs = _docs_from_named_bytes([(p.name, str(p), data)], limit, report) if data is not None else []
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
