"""RAG-log rows: the row types and the tolerant JSON, JSONL and CSV row readers that RAG logs and trace
exports share (the format itself is described in :mod:`rag_metrics.io.raglog`)."""
from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from rag_metrics.errors import ValidationReport
from rag_metrics.io.files import loads_json

#: Extensions read as RAG logs.
RAG_LOG_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv")


#: Largest RAG log read, in bytes (200 MiB); larger files give a clear error, not a memory spike.
MAX_RAG_LOG_BYTES = 200 * 1024 * 1024


#: Problems listed per file before the rest are summarised in one line.
MAX_REPORTED = 200


QUESTION_KEYS = ("question", "user_input", "query", "input")


CONTEXT_KEYS = ("contexts", "retrieved_contexts", "retrieved_texts", "retrieval_context", "retrievalContext",
                "retrieved", "retrieved_chunks", "retrieved_docs", "retrieved_documents")


#: One retrieved context per row, as a string (an eval CSV's ``context`` column).  Read only when the
#: row has no field of :data:`CONTEXT_KEYS` / :data:`CONTEXT_ID_KEYS`: in a DeepEval row, beside
#: ``retrieval_context``, ``context`` is the ideal context, not what was retrieved.
SINGLE_CONTEXT_KEY = "context"


CONTEXT_ID_KEYS = ("context_ids", "retrieved_ids", "retrieved_context_ids")


ANSWER_KEYS = ("answer", "response", "generated_answer", "actual_output", "actualOutput", "llm_response", "raw_output",
               "output")


GROUND_TRUTH_KEYS = ("ground_truth", "reference", "expected_answer", "ground_truths", "expected_output",
                     "expectedOutput", "reference_answer")


ID_KEYS = ("id", "query_id", "qid")


#: Keys of an object that holds the rows as a list: ``{"data": [...]}``, a DeepEval test run's
#: ``testCases`` (its camelCase JSON), a LlamaIndex ``LabelledRagDataset``'s ``examples``.
ROW_WRAPPER_KEYS = ("rows", "data", "samples", "records", "test_cases", "testCases", "goldens", "examples")
_WRAPPER_KEYS = ROW_WRAPPER_KEYS


_TEXT_KEYS = ("text", "page_content", "content")


_OBJ_ID_KEYS = ("id", "chunk_id", "doc_id", "document_id")


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
    context_fields: tuple[str, ...] = ()  # the fields the contexts / ids were read from

    @property
    def no_retrieval(self) -> str | None:
        """Why the log holds no retrieval to evaluate (every row retrieved nothing), or None.

        The one rule the readers share (:func:`rag_metrics.formats.describe_bytes`, the app's
        upload reader :func:`rag_metrics.systems.uploads.parse_upload`)."""
        if not self.rows or any(r.contexts or r.context_ids for r in self.rows):
            return None
        fields = " / ".join(repr(f) for f in self.context_fields) or "the contexts field"
        n = len(self.rows)
        return (f"holds no retrieval: {fields} is empty in {'the one row' if n == 1 else f'all {n} rows'}, so "
                "there is nothing to evaluate; log the retrieved texts (or their ids) for each question")

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


_NUMPY_WRAP = re.compile(r"^array\((.*?)(?:,\s*dtype=[\w.\'\"<>|]+)?\)$", re.S)


def _numpy_strings(s: str) -> list[str] | None:
    """NumPy's ``str()`` of an array of strings, as pandas writes a column of arrays to CSV (ragas 0.1
    results): ``['a' 'b']``, the items separated by spaces or a newline and no comma (Python would
    read that as one string ``'ab'``).  The items, or None when ``s`` is not such an array."""
    import io as _io
    import tokenize

    m = _NUMPY_WRAP.match(s)  # repr(): array(['a', 'b'], dtype=object)
    if m:
        s = m.group(1).strip()
    if not s.startswith("["):
        return None
    try:
        toks = [t for t in tokenize.generate_tokens(_io.StringIO(s).readline)
                if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT,
                                  tokenize.DEDENT, tokenize.COMMENT)]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    if len(toks) < 2 or toks[0].string != "[" or toks[-1].string != "]":
        return None
    inner = toks[1:-1]
    items: list[str] = []
    adjacent = False  # two strings with no comma between: NumPy's separator
    prev_str = False
    for t in inner:
        if t.type == tokenize.STRING:
            if prev_str:
                adjacent = True
            try:
                v = ast.literal_eval(t.string)
            except (ValueError, SyntaxError, MemoryError):
                return None
            if not isinstance(v, str):
                return None  # b'...' bytes
            items.append(v)
            prev_str = True
        elif t.string == "," and prev_str:
            prev_str = False
        else:
            return None
    return items if adjacent or m else None


def _parse_list_cell(cell: str) -> list[Any] | None:
    """A JSON list (or a Python list literal, as pandas writes one, or NumPy's ``str()`` of an array of
    strings, ``['a' 'b']``) in a CSV cell; None if none of them."""
    s = cell.strip()
    if not s.startswith(("[", "array(")):
        return None
    v, msg, _ = loads_json(s, strict=False)  # a newline typed inside a cell is kept
    if msg is not None:
        arr = _numpy_strings(s)  # before literal_eval, which glues adjacent strings into one
        if arr is not None:
            return arr
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


def _object_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(x, Mapping) for x in value)


def _split_objects(row: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A home-made ``retrieved`` list of objects (``id`` or ``chunk_id``, ``text``, ``score``,
    ``rank``) as parallel ``contexts`` / ``context_ids``: ordered by ``rank`` when every object has a
    numeric one (else as listed); ids when every object has one, texts when every object has one."""
    items = list(row[key])
    ranks = [x.get("rank") for x in items]
    if all(isinstance(r, (int, float)) and not isinstance(r, bool) for r in ranks):
        items = [x for _, _, x in sorted(zip(ranks, range(len(items)), items), key=lambda t: (t[0], t[1]))]
    out = {k: v for k, v in row.items() if k != key}
    ids = [next((x[k] for k in _OBJ_ID_KEYS if not _missing(x.get(k))), None) for x in items]
    texts = [next((x[k] for k in _TEXT_KEYS if isinstance(x.get(k), str)), None) for x in items]
    if all(t is not None for t in texts):
        out["contexts"] = texts
    if all(i is not None and not isinstance(i, (Mapping, list, bool)) for i in ids):
        out["context_ids"] = [str(i) for i in ids]
    if "contexts" not in out and "context_ids" not in out:
        out[key] = row[key]  # reported by the list check with the item at fault
    return out


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
    used: dict[str, None] = {}  # the fields contexts and ids were read from, in order
    any_contexts = any(isinstance(r, Mapping) and (_first_key(r, CONTEXT_KEYS) or _first_key(r, CONTEXT_ID_KEYS)
                                                   or _single_context(r))
                       for _, r in rows)
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
        if ck is None and ik is None and _single_context(row):  # one context string per row
            one = row[SINGLE_CONTEXT_KEY]
            parsed = _parse_list_cell(one) if from_csv and isinstance(one, str) else None
            row = {**row, SINGLE_CONTEXT_KEY: parsed if parsed is not None else
                   ([one] if isinstance(one, str) and one.strip() else one if isinstance(one, list) else [])}
            ck = SINGLE_CONTEXT_KEY
        if ck is not None and ik is None and _object_list(row[ck]):
            row = _split_objects(row, ck)
            ck, ik = _first_key(row, CONTEXT_KEYS), _first_key(row, CONTEXT_ID_KEYS)
        contexts: tuple[str, ...] | None = ()
        if ck is not None:
            used[ck] = None
            contexts = _string_list(row[ck], ck, "texts", from_csv and ck != SINGLE_CONTEXT_KEY, rep, {**where})
            if contexts is None:
                continue
        ids: tuple[str, ...] | None = None
        if ik is not None:
            used[ik] = None
            ids = _string_list(row[ik], ik, "ids", from_csv, rep, {**where})
            if ids is None:
                continue
            if ck is not None and contexts and len(ids) != len(contexts):
                rep.error(f"{prefix}{len(contexts)} contexts but {len(ids)} context ids; give one id per "
                          f"context in the same order (or leave {ik!r} out to match texts to the corpus)",
                          **where, field=ik)
                continue
        null = next((k for k in CONTEXT_KEYS + CONTEXT_ID_KEYS if k in row), None)  # present, but null
        if ck is None and ik is None and null is not None:
            used[null] = None
            rep.warning(f"{prefix}no retrieved context ({null!r} is null); this question counts as retrieving "
                        "nothing", **where, field=null)
        elif ck is None and ik is None and any_contexts:
            rep.warning(f"{prefix}no contexts field in this row (other rows have one); this question counts as "
                        "retrieving nothing", **where, field="contexts")
        elif ck is None and ik is None:
            rep.error(f"{prefix}no contexts; give the retrieved texts as a list in a 'contexts' column "
                      f"(or {' / '.join(CONTEXT_KEYS[1:])}), or their ids in 'context_ids'", **where,
                      field="contexts")
            continue
        elif not contexts and not ids:
            rep.warning(f"{prefix}no retrieved context; this question counts as retrieving nothing",
                        **where, field=ck or ik)
        contexts = contexts or ()
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
    if not any_contexts:  # rows with no contexts field at all: say which field was looked for
        used.update(dict.fromkeys(k for k in CONTEXT_KEYS if any(isinstance(r, Mapping) and k in r for _, r in rows)))
    lim.flush()
    return RagLog(tuple(out), source, context_fields=tuple(used))


def _single_context(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` gives its one retrieved context in a singular ``context`` field (and no other
    contexts field, see :data:`SINGLE_CONTEXT_KEY`)."""
    return (SINGLE_CONTEXT_KEY in row and not _missing(row[SINGLE_CONTEXT_KEY])
            and not any(k in row for k in CONTEXT_KEYS + CONTEXT_ID_KEYS))


#: Words in a field's name that say it may hold the retrieved contexts (for the rename hint).
_CONTEXTISH = ("retriev", "context", "doc", "chunk", "passage", "source", "result", "hit", "node", "evidence")


def contexts_hint(keys: list[str]) -> str:
    """``"if 'sources' holds the retrieved contexts, rename it 'contexts'; "`` for the first field whose
    name says it may hold them, else ``""``."""
    known = set(QUESTION_KEYS + ANSWER_KEYS + GROUND_TRUTH_KEYS + ID_KEYS)
    cand = next((k for k in keys if k not in known and any(w in k.lower() for w in _CONTEXTISH)), None)
    return f"if {cand!r} holds the retrieved contexts, rename it 'contexts'; " if cand else ""


def _header_problem(keys: list[str], source: str, report: ValidationReport, line: int | None = 1) -> bool:
    """Report a missing question or contexts column (for CSV headers and columnar JSON)."""
    ok = True
    if not any(k in keys for k in QUESTION_KEYS):
        report.error(f"no question column (columns: {', '.join(keys) or 'none'}); name one "
                     f"{' or '.join(map(repr, QUESTION_KEYS))}", file=source, line=line)
        ok = False
    if not any(k in keys for k in CONTEXT_KEYS + CONTEXT_ID_KEYS + (SINGLE_CONTEXT_KEY,)):
        golden = ("; or, if it is a golden set, name its reference answers 'expected_answer'"
                  if "answer" in keys and not any(k in keys for k in ANSWER_KEYS[1:]) else "")
        report.error(f"no contexts column (columns: {', '.join(keys) or 'none'}); {contexts_hint(keys)}name the "
                     f"retrieved texts 'contexts' (or {', '.join(CONTEXT_KEYS[1:])}, or 'context' for one text a row) "
                     f"or their ids 'context_ids' (or {', '.join(CONTEXT_ID_KEYS[1:])}){golden}", file=source,
                     line=line)
        ok = False
    return ok


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
