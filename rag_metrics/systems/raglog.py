"""RAG logs: the rows a RAG application logs per question, and the rows the lesson feeds RAGAS.

A RAG log holds, for each question the application answered, the retrieved contexts (texts, and
their ids when the application logged them), the generated answer and the reference answer.  This
module reads such logs; :mod:`rag_metrics.systems.uploads` turns one into a :class:`~rag_metrics.types.Run`.

Formats (chosen by the file name's extension)
---------------------------------------------
``.jsonl`` / ``.ndjson``
    One JSON object per line.
``.json``
    A list of row objects; an object holding that list under ``rows``, ``data``, ``samples`` or
    ``records``; or the *columnar* shape that ``ragas.evaluate`` / ``datasets.Dataset.from_dict``
    take: ``{"question": [...], "contexts": [[...], ...], "answer": [...], ...}`` (every column a
    list of the same length).  A JSONL file saved as ``.json`` is read as JSONL.
``.csv`` / ``.tsv``
    A header row naming the columns; the ``contexts`` and ``context_ids`` cells hold a JSON list
    (``["text 1", "text 2"]``).  A Python list literal as ``pandas.DataFrame.to_csv`` writes it
    (``['text 1', 'text 2']``) is accepted too.

Columns (first alias found wins)
--------------------------------
``question``
    Required.  Aliases ``user_input`` (ragas >= 0.2), ``query``.
``contexts``
    The retrieved texts in rank order, a list of strings.  Aliases ``retrieved_contexts``,
    ``retrieved_texts``.  Elements may also be objects with a ``text``, ``page_content`` or
    ``content`` field (LangChain / LlamaIndex documents).  Required unless ``context_ids`` is given.
``context_ids``
    Optional ids of the retrieved chunks, parallel to ``contexts``.  Aliases ``retrieved_ids``,
    ``retrieved_context_ids``.
``answer``
    Optional generated answer.  Aliases ``response``, ``generated_answer``.
``ground_truth``
    Optional reference answer.  Aliases ``reference``, ``expected_answer``, ``ground_truths``
    (ragas 0.0: a list, joined with newlines).
``id``
    Optional row id.  Aliases ``query_id``, ``qid``.  When absent, the 1-based row number (as a
    string: ``"1"``, ``"2"``, ...).

Trace exports (``.json`` / ``.jsonl``) of OpenInference/Phoenix, Langfuse and LangSmith are
detected from their fields and read by :mod:`rag_metrics.systems.traces` (one row per trace).

Problems are collected into a :class:`~rag_metrics.errors.ValidationReport`, each with file:line
(JSON lists, JSONL and CSV) or the row number (columnar JSON), the value received and the fix.
:func:`parse_rag_log` never raises on content.
"""
from __future__ import annotations

import ast
import csv
import io
import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from rag_metrics.errors import ValidationReport
from rag_metrics.files import loads_json, read_bytes

__all__ = [
    "ANSWER_KEYS",
    "CONTEXT_ID_KEYS",
    "CONTEXT_KEYS",
    "GROUND_TRUTH_KEYS",
    "ID_KEYS",
    "MAX_RAG_LOG_BYTES",
    "QUESTION_KEYS",
    "RAG_LOG_SUFFIXES",
    "RagLog",
    "RagLogRow",
    "load_rag_log",
    "looks_like_rag_log",
    "parse_rag_log",
    "read_rag_log",
]

#: Extensions read as RAG logs.
RAG_LOG_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv")
#: Largest RAG log read, in bytes (200 MiB); larger files give a clear error, not a memory spike.
MAX_RAG_LOG_BYTES = 200 * 1024 * 1024
#: Problems listed per file before the rest are summarised in one line.
MAX_REPORTED = 200

QUESTION_KEYS = ("question", "user_input", "query")
CONTEXT_KEYS = ("contexts", "retrieved_contexts", "retrieved_texts")
CONTEXT_ID_KEYS = ("context_ids", "retrieved_ids", "retrieved_context_ids")
ANSWER_KEYS = ("answer", "response", "generated_answer")
GROUND_TRUTH_KEYS = ("ground_truth", "reference", "expected_answer", "ground_truths")
ID_KEYS = ("id", "query_id", "qid")
_WRAPPER_KEYS = ("rows", "data", "samples", "records")
_TEXT_KEYS = ("text", "page_content", "content")
_LIST_EXAMPLE = '["first retrieved text", "second retrieved text"]'


@dataclass(frozen=True)
class RagLogRow:
    """One logged question.

    Attributes
    ----------
    id
        The row's ``id`` / ``query_id`` value, or its 1-based row number as a string.
    question
        The question text (stripped).
    contexts
        Retrieved texts in rank order (empty when the log holds ids only).
    context_ids
        Retrieved chunk ids in rank order, or None when the log has no id column for this row.
    answer, ground_truth
        Generated and reference answers, or None.
    line
        1-based line of the row in the file (the line where the object starts in a JSON list), or
        None for the columnar JSON shape, where :attr:`row` locates it.
    row
        1-based position of the row among the data rows.
    """

    id: str
    question: str
    contexts: tuple[str, ...]
    context_ids: tuple[str, ...] | None
    answer: str | None
    ground_truth: str | None
    line: int | None
    row: int

    @property
    def where(self) -> str:
        """``line N`` or ``row N`` for messages."""
        return f"line {self.line}" if self.line is not None else f"row {self.row}"


@dataclass(frozen=True)
class RagLog:
    """The rows of one RAG log, in file order, with unique ids.

    ``skipped`` names what a trace export left out (malformed traces, as ``file:line: trace 'id':
    why``); empty for other logs, whose bad rows are errors.
    """

    rows: tuple[RagLogRow, ...]
    source: str = ""
    skipped: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", tuple(self.rows))

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[RagLogRow]:
        return iter(self.rows)

    @property
    def name(self) -> str:
        """The file name without folder and extension."""
        return PurePath(self.source).stem if self.source else ""

    @property
    def has_ids(self) -> bool:
        """True when every row carries context ids (no text matching is needed)."""
        return bool(self.rows) and all(r.context_ids is not None for r in self.rows)

    @property
    def has_answers(self) -> bool:
        return any(r.answer is not None for r in self.rows)


# ---- cells -------------------------------------------------------------------------------------
def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _first_key(row: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first alias present in ``row`` with a value (None when none is)."""
    for k in keys:
        if k in row and not _missing(row[k]):
            return k
    return None


def _text(v: Any) -> str | None:
    if _missing(v):
        return None
    if isinstance(v, (list, tuple)):
        parts = [str(x) for x in v if not _missing(x)]
        return "\n".join(parts) if parts else None
    s = str(v)
    return s if s.strip() else None


def _parse_list_cell(cell: str) -> list[Any] | None:
    """A JSON list (or a Python list literal, as pandas writes one) in a CSV cell; None if neither."""
    s = cell.strip()
    if not s.startswith("["):
        return None
    v, msg, _ = loads_json(s, strict=False)  # a newline typed inside a cell is kept
    if msg is not None:
        try:
            v = ast.literal_eval(s)
        except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
            return None
    return v if isinstance(v, list) else None


def _string_list(value: Any, field: str, what: str, from_csv: bool, report: ValidationReport,
                 where: dict[str, Any]) -> tuple[str, ...] | None:
    """``value`` as a tuple of strings, or None (problem reported)."""
    if from_csv and isinstance(value, str):
        parsed = _parse_list_cell(value)
        if parsed is None:
            shown = value.strip()[:60]
            report.error(f"{field} cell {shown!r} is not a list; write a JSON list in the cell, e.g. "
                         f"{_LIST_EXAMPLE}", **where, field=field)
            return None
        value = parsed
    if not isinstance(value, (list, tuple)):
        kind = type(value).__name__
        shown = repr(value)[:60]
        report.error(f"{field} must be a list of {what}, got {kind} {shown}; wrap it in a list, e.g. "
                     f"{_LIST_EXAMPLE}", **where, field=field)
        return None
    out: list[str] = []
    for n, item in enumerate(value, 1):
        if isinstance(item, Mapping):
            key = next((k for k in _TEXT_KEYS if isinstance(item.get(k), str)), None) if what == "texts" else \
                next((k for k in ("id", "chunk_id", "doc_id") if not _missing(item.get(k))), None)
            if key is None:
                expected = " or ".join(repr(k) for k in (_TEXT_KEYS if what == "texts" else ("id",)))
                report.error(f"{field} item {n} is an object without a {expected} field; give {what} as strings",
                             **where, field=field)
                return None
            item = item[key]
        elif isinstance(item, (list, tuple)) or _missing(item) or isinstance(item, bool):
            report.error(f"{field} item {n} is {item!r}; every item must be a string", **where, field=field)
            return None
        out.append(str(item) if what == "texts" else str(item).strip())
    return tuple(out)


# ---- rows -> RagLog ----------------------------------------------------------------------------
class _Limiter:
    """Caps the number of problems listed per file."""

    def __init__(self, report: ValidationReport, source: str) -> None:
        self.report, self.source, self.dropped = report, source, 0
        self.inner = ValidationReport()

    def flush(self) -> None:
        errs = self.inner.errors
        kept = self.inner.problems[:MAX_REPORTED]
        self.report.extend(kept)
        more = len(self.inner.problems) - len(kept)
        if more > 0:
            self.report.error(f"{more} more problem(s) not listed ({len(errs)} error(s) in all); fix the ones "
                              "above and read the file again", file=self.source)


def _build(rows: list[tuple[int | None, Any]], source: str, report: ValidationReport,
           from_csv: bool = False) -> RagLog:
    lim = _Limiter(report, source)
    rep = lim.inner
    out: list[RagLogRow] = []
    seen: dict[str, str] = {}
    first_q: dict[str, str] = {}
    for n, (line, row) in enumerate(rows, 1):
        where: dict[str, Any] = {"file": source, "line": line}
        loc = f"line {line}" if line is not None else f"row {n}"
        if not isinstance(row, Mapping):
            rep.error(f"{loc}: expected an object with 'question' and 'contexts' fields, got "
                      f"{type(row).__name__}", file=source, line=line)
            continue
        id_key = _first_key(row, ID_KEYS)
        rid = str(row[id_key]).strip() if id_key is not None else ""
        rid = rid or str(n)
        where["query_id"] = rid
        prefix = "" if line is not None else f"row {n}: "
        qk = _first_key(row, QUESTION_KEYS)
        question = "" if qk is None else str(row[qk]).strip()
        if not question:
            rep.error(f"{prefix}empty question; every row needs the question text "
                      f"(column {' / '.join(QUESTION_KEYS)})", **where, field="question")
            continue
        if rid in seen:
            rep.error(f"{prefix}duplicate id {rid!r} (first at {seen[rid]}); give each row its own id",
                      **where, field=id_key or "id")
            continue
        ck = _first_key(row, CONTEXT_KEYS)
        ik = _first_key(row, CONTEXT_ID_KEYS)
        contexts: tuple[str, ...] | None = ()
        if ck is not None:
            contexts = _string_list(row[ck], ck, "texts", from_csv, rep, {**where})
            if contexts is None:
                continue
        ids: tuple[str, ...] | None = None
        if ik is not None:
            ids = _string_list(row[ik], ik, "ids", from_csv, rep, {**where})
            if ids is None:
                continue
            if ck is not None and contexts and len(ids) != len(contexts):
                rep.error(f"{prefix}{len(contexts)} contexts but {len(ids)} context ids; give one id per "
                          f"context in the same order (or leave {ik!r} out to match texts to the corpus)",
                          **where, field=ik)
                continue
        if ck is None and ik is None:
            rep.error(f"{prefix}no contexts; give the retrieved texts as a list in a 'contexts' column "
                      f"(or {' / '.join(CONTEXT_KEYS[1:])}), or their ids in 'context_ids'", **where,
                      field="contexts")
            continue
        assert contexts is not None
        if not contexts and not ids:
            rep.warning(f"{prefix}no retrieved context; this question counts as retrieving nothing",
                        **where, field=ck or ik)
        norm_q = " ".join(question.lower().split())
        if norm_q in first_q:
            rep.warning(f"{prefix}same question as {first_q[norm_q]}; when rows are matched to golden "
                        "questions by text, only the first is used", **where, field=qk)
        else:
            first_q[norm_q] = loc
        seen[rid] = loc
        gk = _first_key(row, GROUND_TRUTH_KEYS)
        ak = _first_key(row, ANSWER_KEYS)
        out.append(RagLogRow(id=rid, question=question, contexts=contexts, context_ids=ids,
                             answer=_text(row[ak]) if ak else None,
                             ground_truth=_text(row[gk]) if gk else None, line=line, row=n))
    lim.flush()
    return RagLog(tuple(out), source)


def _header_problem(keys: list[str], source: str, report: ValidationReport, line: int | None = 1) -> bool:
    """Report a missing question or contexts column (for CSV headers and columnar JSON)."""
    ok = True
    if not any(k in keys for k in QUESTION_KEYS):
        report.error(f"no question column (columns: {', '.join(keys) or 'none'}); name one "
                     f"{' or '.join(map(repr, QUESTION_KEYS))}", file=source, line=line)
        ok = False
    if not any(k in keys for k in CONTEXT_KEYS + CONTEXT_ID_KEYS):
        report.error(f"no contexts column (columns: {', '.join(keys) or 'none'}); name one "
                     f"{' or '.join(map(repr, CONTEXT_KEYS + CONTEXT_ID_KEYS))}", file=source, line=line)
        ok = False
    return ok


# ---- formats -----------------------------------------------------------------------------------
_WS = re.compile(r"[^ \t\n\r]")


def _skip_ws(text: str, idx: int) -> int:
    """Index of the first non-whitespace character at or after ``idx`` (``len(text)`` if none)."""
    m = _WS.search(text, idx)
    return m.start() if m else len(text)
_DEPTH_MSG = ("JSON nested too deeply for the reader (about a thousand levels); a RAG log row needs only "
              "three (rows -> row -> contexts). Check that the file is a RAG log")


def _rows_jsonl(text: str, source: str, report: ValidationReport) -> list[tuple[int | None, Any]]:
    rows: list[tuple[int | None, Any]] = []
    bad = 0
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        value, msg, _ = loads_json(line)
        if msg is None:
            rows.append((n, value))
            continue
        bad += 1
        if bad <= MAX_REPORTED:
            report.error(f"{msg}; each line must be one JSON object", file=source, line=n)
    if bad > MAX_REPORTED:
        report.error(f"{bad - MAX_REPORTED} more invalid lines not listed", file=source)
    return rows


def _json_list_with_lines(text: str, source: str, report: ValidationReport) -> list[tuple[int | None, Any]] | None:
    """Decode a top-level JSON list element by element, keeping the line where each element starts."""
    dec = json.JSONDecoder()
    idx = _skip_ws(text, 0) + 1  # past '['
    rows: list[tuple[int | None, Any]] = []
    line, pos = 1, 0
    while True:
        idx = _skip_ws(text, idx)
        if idx < len(text) and text[idx] == "]" and not rows:
            idx += 1
            break
        line += text.count("\n", pos, idx)
        pos = idx
        try:
            obj, idx = dec.raw_decode(text, idx)
        except json.JSONDecodeError as e:
            report.error(f"invalid JSON ({e.msg} at column {e.colno}); fix the syntax or save the rows as JSONL",
                         file=source, line=e.lineno)
            return None
        rows.append((line, obj))
        idx = _skip_ws(text, idx)
        if idx < len(text) and text[idx] == ",":
            idx += 1
            continue
        if idx < len(text) and text[idx] == "]":
            idx += 1
            break
        lno = text.count("\n", 0, idx) + 1
        report.error("invalid JSON (expected ',' or ']' after a row); fix the syntax or save the rows as JSONL",
                     file=source, line=lno)
        return None
    if text[idx:].strip():
        report.error("invalid JSON (extra data after the closing ']'); fix the syntax or save the rows as JSONL",
                     file=source, line=text.count("\n", 0, idx) + 1)
        return None
    return rows


def _columnar(data: Mapping[str, Any], source: str, report: ValidationReport) -> list[tuple[int | None, Any]]:
    keys = [str(k) for k in data]
    if not _header_problem(keys, source, report, line=None):
        return []
    lists = {k: v for k, v in data.items() if isinstance(v, list)}
    not_lists = [k for k in keys if k not in lists]
    if not_lists:
        report.error(f"columnar JSON: column(s) {', '.join(map(repr, not_lists))} are not lists; in the "
                     "shape {\"question\": [...], \"contexts\": [[...], ...]} every column is a list with one "
                     "item per row", file=source)
        return []
    lengths = {k: len(v) for k, v in lists.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k!r}: {n}" for k, n in lengths.items())
        report.error(f"columnar JSON: columns differ in length ({shown}); every column needs one item per row",
                     file=source)
        return []
    n = next(iter(lengths.values()), 0)
    return [(None, {k: v[i] for k, v in lists.items()}) for i in range(n)]


def _rows_json(text: str, source: str, report: ValidationReport) -> list[tuple[int | None, Any]]:
    stripped = text.lstrip()
    if stripped.startswith("["):
        return _json_list_with_lines(text, source, report) or []
    data, msg, at = loads_json(text)
    if msg is not None:
        if stripped.startswith("{") and "\n" in stripped.rstrip():  # JSONL saved as .json
            return _rows_jsonl(text, source, report)
        report.error(f"{msg}; fix the syntax or save the rows as JSONL", file=source, line=at)
        return []
    if isinstance(data, Mapping):
        wrap = next((k for k in _WRAPPER_KEYS if isinstance(data.get(k), list)), None)
        if wrap is not None and not any(k in data for k in QUESTION_KEYS):
            return [(None, r) for r in data[wrap]]
        if any(isinstance(data.get(k), list) for k in QUESTION_KEYS):
            return _columnar(data, source, report)
        if any(k in data for k in QUESTION_KEYS):  # a single row object
            return [(1, data)]
        report.error("expected a list of rows, {\"rows\": [...]} or the columnar shape "
                     "{\"question\": [...], \"contexts\": [[...], ...]}; found an object with keys "
                     f"{', '.join(map(repr, list(data)[:8]))}", file=source)
        return []
    report.error(f"expected a list of rows or a columnar object, got {type(data).__name__}", file=source)
    return []


def _rows_csv(text: str, source: str, report: ValidationReport, delimiter: str) -> list[tuple[int | None, Any]]:
    if csv.field_size_limit() < MAX_RAG_LOG_BYTES:
        csv.field_size_limit(MAX_RAG_LOG_BYTES)  # a contexts cell easily exceeds the 128 KiB default
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        fields = [f.strip() for f in (reader.fieldnames or [])]
    except csv.Error as e:
        report.error(f"malformed CSV header ({e}); check quoting", file=source, line=1)
        return []
    if not fields:
        report.error("empty CSV file; the first line must name the columns (question, contexts, ...)",
                     file=source, line=1)
        return []
    reader.fieldnames = fields
    if not _header_problem(fields, source, report):
        return []
    rows: list[tuple[int | None, Any]] = []
    start = 2
    try:
        for row in reader:
            if None in row:
                report.error(f"{len(fields) + len(row[None])} cells but the header has {len(fields)}; quote "
                             "cells that contain the separator", file=source, line=start)
            elif not all((v or "").strip() == "" for v in row.values()):
                rows.append((start, {k: (v if v not in ("", None) else None) for k, v in row.items()}))
            start = reader.line_num + 1
    except csv.Error as e:
        report.error(f"malformed CSV ({e}); check quoting", file=source, line=reader.line_num)
    return rows


def parse_rag_log(data: bytes | str, filename: str,
                  max_bytes: int = MAX_RAG_LOG_BYTES) -> tuple[RagLog, ValidationReport]:
    """Parse a RAG log (see the module docstring for formats and columns).

    Parameters
    ----------
    data
        The file's content (bytes are decoded as UTF-8; a BOM is dropped).
    filename
        Its name; the extension chooses the format and the name appears in messages.
    max_bytes
        Size cap; a larger input gives one error and no rows.

    Returns
    -------
    (RagLog, ValidationReport)
        The rows that are valid, and every problem found.  Rows with errors are left out; the
        report's ``ok`` is False when there are any.  Never raises on content.
    """
    report = ValidationReport()
    source = filename or "rag log"
    empty = RagLog((), source)
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if size > max_bytes:
        report.error(f"file is {size:,} bytes; the limit is {max_bytes:,} bytes. Split the log into smaller "
                     "files", file=source)
        return empty, report
    suffix = PurePath(source).suffix.lower()
    if suffix not in RAG_LOG_SUFFIXES:
        report.error(f"unknown RAG log extension {suffix or '(none)'!r}; save it as "
                     f"{', '.join(RAG_LOG_SUFFIXES)}", file=source)
        return empty, report
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            line = data[: e.start].count(b"\n") + 1
            report.error(f"not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}); re-save the file as "
                         "UTF-8", file=source, line=line)
            return empty, report
    else:
        text = data.removeprefix("\ufeff")
    if not text.strip():
        report.error("file is empty; expected rows with 'question' and 'contexts' (see the RAG log format "
                     "in docs/your-system.md)", file=source)
        return empty, report
    from_csv = suffix in (".csv", ".tsv")
    if not from_csv:
        from rag_metrics.systems.traces import looks_like_trace_export, parse_trace_export

        if looks_like_trace_export(text):  # Phoenix spans, Langfuse observations, LangSmith runs
            try:
                return parse_trace_export(text, source, report), report
            except RecursionError:
                report.error(_DEPTH_MSG, file=source)
                return empty, report
            except ValueError as e:  # e.g. an integer of more than 4300 digits inside a span
                report.error(f"cannot read the file: {str(e).split(';')[0]}; fix the value and upload again",
                             file=source)
                return empty, report
    try:
        if suffix in (".jsonl", ".ndjson"):
            rows = _rows_jsonl(text, source, report)
        elif suffix == ".json":
            rows = _rows_json(text, source, report)
        else:
            rows = _rows_csv(text, source, report, "\t" if suffix == ".tsv" else ",")
    except RecursionError:
        report.error(_DEPTH_MSG, file=source)
        return empty, report
    except ValueError as e:  # e.g. an integer of more than 4300 digits inside a row
        report.error(f"cannot read the file: {str(e).split(';')[0]}; fix the value and upload again", file=source)
        return empty, report
    if not rows and report.ok:
        report.error("no rows found; expected rows with 'question' and 'contexts'", file=source)
        return empty, report
    if not from_csv and rows and all(isinstance(r, Mapping) for _, r in rows[:1]):
        keys = set().union(*(r.keys() for _, r in rows if isinstance(r, Mapping)))
        if rows[0][0] is not None and not _header_problem(sorted(keys), source, report, line=None):
            return empty, report
    return _build(rows, source, report, from_csv=from_csv), report


def read_rag_log(path: str | os.PathLike[str], max_bytes: int = MAX_RAG_LOG_BYTES) -> tuple[RagLog, ValidationReport]:
    """Read a RAG log file; see :func:`parse_rag_log`.  A missing file raises :class:`InputError`."""
    p = Path(path)
    if p.is_file() and p.stat().st_size > max_bytes:
        report = ValidationReport()
        report.error(f"file is {p.stat().st_size:,} bytes; the limit is {max_bytes:,} bytes. Split the log into "
                     "smaller files", file=str(p))
        return RagLog((), str(p)), report
    return parse_rag_log(read_bytes(p), str(p), max_bytes=max_bytes)


def load_rag_log(path: str | os.PathLike[str]) -> RagLog:
    """Read a RAG log; raise :class:`InputError` naming the first error (file:line) if there is any."""
    log, report = read_rag_log(path)
    report.raise_if_errors("RAG log", hint="fix the rows listed, or read the log with read_rag_log to list all")
    return log


def looks_like_rag_log(data: bytes | str, filename: str) -> bool:
    """Cheap sniff: does this JSON/JSONL/CSV file name a question column and a contexts column?

    Used to tell a RAG log from a run file of the same extension (a run has ids and scores, no
    question texts with contexts).
    """
    suffix = PurePath(filename).suffix.lower()
    if suffix not in RAG_LOG_SUFFIXES:
        return False
    head = (data[:65536].decode("utf-8", "replace") if isinstance(data, bytes) else data[:65536]).lstrip("\ufeff")
    if suffix in (".csv", ".tsv"):
        first = head.splitlines()[0] if head.strip() else ""
        cols = [c.strip().strip('"') for c in first.split("\t" if suffix == ".tsv" else ",")]
        return any(k in cols for k in QUESTION_KEYS) and any(k in cols for k in CONTEXT_KEYS + CONTEXT_ID_KEYS)
    from rag_metrics.systems.traces import looks_like_trace_export

    if looks_like_trace_export(head):
        return True
    quoted = {f'"{k}"' for k in QUESTION_KEYS}, {f'"{k}"' for k in CONTEXT_KEYS + CONTEXT_ID_KEYS}
    return any(k in head for k in quoted[0]) and any(k in head for k in quoted[1])
