"""RAG logs: the rows a RAG application logs per question, and the rows the lesson feeds RAGAS.

A RAG log holds, for each question the application answered, the retrieved contexts (texts, and
their ids when the application logged them), the generated answer and the reference answer.  This
module reads such logs; :mod:`rag_metrics.systems.uploads` turns one into a :class:`~rag_metrics.types.Run`.

Formats (chosen by the file name's extension)
---------------------------------------------
``.jsonl`` / ``.ndjson``
    One JSON object per line.
``.json``
    A list of row objects; an object holding that list under ``rows``, ``data``, ``samples``,
    ``records``, ``test_cases``, ``testCases`` (a DeepEval test run), ``goldens`` or ``examples``;
    or the *columnar* shape that ``ragas.evaluate`` / ``datasets.Dataset.from_dict``
    take: ``{"question": [...], "contexts": [[...], ...], "answer": [...], ...}`` (every column a
    list of the same length).  A JSONL file saved as ``.json`` is read as JSONL.
``.csv`` / ``.tsv``
    A header row naming the columns; the ``contexts`` and ``context_ids`` cells hold a JSON list
    (``["text 1", "text 2"]``).  A Python list literal as ``pandas.DataFrame.to_csv`` writes it
    (``['text 1', 'text 2']``) is accepted too, and so is NumPy's ``str()`` of an array, which
    pandas writes for ragas 0.1 results (``['text 1'\n 'text 2']``, no comma between the items).

Columns (first alias found wins)
--------------------------------
``question``
    Required.  Aliases ``user_input`` (ragas >= 0.2), ``query``, ``input`` (DeepEval).
``contexts``
    The retrieved texts in rank order, a list of strings.  Aliases ``retrieved_contexts``,
    ``retrieved_texts``, ``retrieval_context`` / ``retrievalContext`` (DeepEval), ``retrieved``,
    ``retrieved_chunks``, ``retrieved_docs``, ``retrieved_documents``.  Elements may also be objects
    with a ``text``, ``page_content`` or ``content`` field (LangChain / LlamaIndex documents).
    Required unless ``context_ids`` is given.  A singular ``context`` holding one text per row (an
    eval CSV) is read as one retrieved context, when the row has no other contexts field.
``context_ids``
    Optional ids of the retrieved chunks, parallel to ``contexts``.  Aliases ``retrieved_ids``,
    ``retrieved_context_ids``.
``answer``
    Optional generated answer.  Aliases ``response``, ``generated_answer``, ``actual_output`` /
    ``actualOutput`` (DeepEval), ``llm_response``, ``raw_output``, ``output``.
``ground_truth``
    Optional reference answer.  Aliases ``reference``, ``expected_answer``, ``ground_truths``
    (ragas 0.0: a list, joined with newlines), ``expected_output`` / ``expectedOutput``,
    ``reference_answer``.
``id``
    Optional row id.  Aliases ``query_id``, ``qid``.  When absent, the 1-based row number (as a
    string: ``"1"``, ``"2"``, ...).

Trace exports (``.json`` / ``.jsonl``) of OpenInference/Phoenix, Langfuse and LangSmith are
detected from their fields and read by :mod:`rag_metrics.io.traces` (one row per trace).

Problems are collected into a :class:`~rag_metrics.errors.ValidationReport`, each with file:line
(JSON lists, JSONL and CSV) or the row number (columnar JSON), the value received and the fix.
:func:`parse_rag_log` never raises on content.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePath

from rag_metrics.errors import ValidationReport
from rag_metrics.io.files import read_bytes
from rag_metrics.io.logrows import (
    _DEPTH_MSG,
    ANSWER_KEYS,
    CONTEXT_ID_KEYS,
    CONTEXT_KEYS,
    GROUND_TRUTH_KEYS,
    ID_KEYS,
    MAX_RAG_LOG_BYTES,
    QUESTION_KEYS,
    RAG_LOG_SUFFIXES,
    SINGLE_CONTEXT_KEY,
    RagLog,
    RagLogRow,
    _build,
    _header_problem,
    _rows_csv,
    _rows_json,
    _rows_jsonl,
)
from rag_metrics.io.traces import looks_like_trace_export

__all__ = [
    "ANSWER_KEYS",
    "CONTEXT_ID_KEYS",
    "CONTEXT_KEYS",
    "GROUND_TRUTH_KEYS",
    "ID_KEYS",
    "MAX_RAG_LOG_BYTES",
    "QUESTION_KEYS",
    "RAG_LOG_SUFFIXES",
    "SINGLE_CONTEXT_KEY",
    "RagLog",
    "RagLogRow",
    "load_rag_log",
    "looks_like_rag_log",
    "parse_rag_log",
    "read_rag_log",
]


# ---- cells -------------------------------------------------------------------------------------



# ---- rows -> RagLog ----------------------------------------------------------------------------



# ---- formats -----------------------------------------------------------------------------------



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
    if isinstance(data, bytes):
        from rag_metrics.errors import InputError
        from rag_metrics.io.containers import unwrap

        try:
            data, source, _wraps = unwrap(data, source)  # gzip, Parquet rows
        except InputError as e:
            report.error(str(e))
            return empty, report
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
        from rag_metrics.io.traces import looks_like_trace_export, parse_trace_export

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
    if isinstance(data, bytes) and (data[:2] == b"\x1f\x8b" or data[:4] == b"PAR1"):
        from rag_metrics.errors import InputError
        from rag_metrics.io.containers import unwrap

        try:
            data, filename, _wraps = unwrap(data, filename)
        except InputError:  # cut off (a head only) or damaged: the full read says what is wrong
            return False
    suffix = PurePath(filename).suffix.lower()
    if suffix not in RAG_LOG_SUFFIXES:
        return False
    head = (data[:65536].decode("utf-8", "replace") if isinstance(data, bytes) else data[:65536]).lstrip("\ufeff")
    if suffix in (".csv", ".tsv"):
        first = head.splitlines()[0] if head.strip() else ""
        cols = [c.strip().strip('"') for c in first.split("\t" if suffix == ".tsv" else ",")]
        return any(k in cols for k in QUESTION_KEYS) and any(k in cols for k in CONTEXT_KEYS + CONTEXT_ID_KEYS
                                                             + (SINGLE_CONTEXT_KEY,))

    if looks_like_trace_export(head):
        return True
    quoted = {f'"{k}"' for k in QUESTION_KEYS}, {f'"{k}"' for k in CONTEXT_KEYS + CONTEXT_ID_KEYS
                                                  + (SINGLE_CONTEXT_KEY,)}
    return any(k in head for k in quoted[0]) and any(k in head for k in quoted[1])
