"""Golden sets: parse, load, save and validate (CSV, JSON, JSONL).

Row fields (JSON/JSONL objects or CSV columns):

``id``
    Query id (also ``query_id``, ``qid``).  Optional: when absent an id is derived from the
    question text, ``q-<first 8 hex of sha1(question)>``, so it is stable across reorderings.
``question``
    The question text (also ``query``, ``text``).  Required, non-empty.
``category``
    Free text; ``out_of_scope`` marks questions the corpus cannot answer.
``relevant``
    ``{id: grade}`` (JSON) -- or ``relevant_chunk_ids``: a list of ids (JSON) or, in CSV, ids
    separated by ``|`` (``doc#0|doc#3``), with optional parallel ``grades`` (``3|1``; default 1).
    Other names other tools give the ids are read the same way (:data:`RELEVANT_ID_KEYS`:
    ``relevant_ids``, ``expected_chunk_id(s)``, ``gold_chunk_id(s)``, ``ground_truth_ids``, ...;
    a single id is one relevant id, and ``also_acceptable`` beside it adds more).  Fields the
    reader does not use are named in one warning.
``expected_answer``
    Optional (also ``answer``, ``ground_truth``, ``reference``, ``expected_output``,
    ``reference_answer``).
``evidence`` (JSON and JSONL only; optional)
    Evidence labels: a list of ``{"doc": ..., "quote": ... | "start": .., "end": .., "grade": ..}``
    objects (the passage of the corpus that answers, judged whatever the chunking: see
    :mod:`rag_metrics.metrics.evidence` and docs/evidence.md); ``"status": "proposed"`` marks an unreviewed
    proposal, which is kept for review and never judged.
``origin``, ``draft``, ``label_origin`` (JSON and JSONL only; all optional)
    Provenance: ``origin`` is ``"hand-written"`` (default, not written) or ``"drafted"``;
    ``draft`` the drafting record of a drafted question (``source_chunk_ids``, ``generation``,
    ``badges``); ``label_origin`` ``{id: "judge" | "source"}`` for labels a person did not give
    (absent ids are a person's).  Files without them load unchanged; CSV does not carry them.

The lesson's shape ``{"question": ..., "relevant_chunk_ids": [...], "category": ...}`` loads as is.
A JSON file may hold the rows in a list, under ``queries`` or another wrapper key
(:data:`~rag_metrics.io.logrows.ROW_WRAPPER_KEYS`: a LlamaIndex ``LabelledRagDataset``'s
``examples``, whose ``query`` and ``reference_answer`` give questions with reference answers), or be
qrels: ``{qid: {id: grade}}``, or ``{qid: [ids]}`` (each id grade 1).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.errors import excerpt as _excerpt
from rag_metrics.io.files import atomic_write_text, loads_json, read_text
from rag_metrics.io.free_ids import FreeIds
from rag_metrics.io.logrows import ROW_WRAPPER_KEYS
from rag_metrics.limits import grade_error, id_problem
from rag_metrics.types import (
    HUMAN,
    LABEL_ORIGINS,
    OUT_OF_SCOPE,
    PROPOSED,
    QUESTION_ORIGINS,
    REVIEWED,
    Evidence,
    GoldenQuery,
    GoldenSet,
)

__all__ = [
    "GOLDEN_FIELDS",
    "LIST_SEPARATOR",
    "RELEVANT_ID_KEYS",
    "UNREAD_FIELDS",
    "golden_from_rows",
    "golden_to_rows",
    "golden_to_text",
    "id_lists",
    "load_golden",
    "parse_golden",
    "read_golden",
    "save_golden",
    "stable_query_id",
    "validate_golden",
]

#: Separator of ids and grades inside one CSV cell.
LIST_SEPARATOR = "|"
GOLDEN_SUFFIXES = (".csv", ".json", ".jsonl")

_ID_KEYS = ("id", "query_id", "qid", "_id")
_Q_KEYS = ("question", "query", "text")
# The reference names come before ``answer``: in a row that has both, ``answer`` is a system's.
_ANS_KEYS = ("expected_answer", "ground_truth", "reference", "expected_output", "expectedOutput", "reference_answer",
             "answer")

#: Fields a row may give its relevant ids in, first found wins (after ``relevant``): the lab's own
#: names and the ones other tools and hand-made sets use.  A singular name holds one id (a list or
#: a ``|``-separated string is read too).
RELEVANT_ID_KEYS = ("relevant_chunk_ids", "relevant_ids", "relevant_chunk_id", "relevant_id", "relevant_doc_ids",
                    "expected_chunk_ids", "expected_chunk_id", "expected_ids", "expected_doc_ids", "expected_doc_id",
                    "gold_chunk_ids", "gold_chunk_id", "gold_ids", "gold_doc_ids", "gold_doc_id",
                    "ground_truth_ids", "ground_truth_chunk_ids", "ground_truth_chunk_id", "ground_truth_doc_ids",
                    "positive_ids", "positive_chunk_ids")

#: Every field a golden-set row may have; :func:`golden_from_rows` names the others in one warning.
GOLDEN_FIELDS = frozenset(_ID_KEYS + _Q_KEYS + _ANS_KEYS + RELEVANT_ID_KEYS + (
    "relevant", "also_acceptable", "grades", "category", "evidence", "origin", "draft", "label_origin", "_qrels"))

#: How the warning naming the fields a golden set's reader did not use starts.
UNREAD_FIELDS = "fields not read"


def id_lists(value: Any) -> bool:
    """Whether a JSON object is qrels as ``{qid: [ids]}``: every value a list of ids (strings or
    whole numbers) and no key a golden-set or RAG-log field name (``{"question": [...]}`` is columnar)."""
    from rag_metrics.io.logrows import ANSWER_KEYS, CONTEXT_ID_KEYS, CONTEXT_KEYS, QUESTION_KEYS

    if not isinstance(value, Mapping) or not value:
        return False
    names = GOLDEN_FIELDS | set(QUESTION_KEYS + CONTEXT_KEYS + CONTEXT_ID_KEYS + ANSWER_KEYS)
    if any(str(k) in names for k in value):
        return False
    return all(isinstance(v, list) and all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in v)
               for v in value.values())


def stable_query_id(question: str) -> str:
    return "q-" + hashlib.sha1(question.strip().encode("utf-8")).hexdigest()[:8]


def _first(row: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in row and row[k] is not None and not (isinstance(row[k], float) and math.isnan(row[k])):
            return row[k]
    return None


def _grade(value: Any, report: ValidationReport, where: dict) -> int | None:
    """An integer grade in ``[GRADE_MIN, GRADE_MAX]``, or None (error reported).

    Negative grades are kept with a warning.  The bounds and the parser are
    :func:`rag_metrics.limits.grade_error` (shared with the TREC/BEIR readers).
    """
    g, msg = grade_error(value)
    if msg is not None:
        report.error(msg, **where)
        return None
    assert g is not None
    if g < 0:
        report.warning(f"grade {g} is negative; it is treated as non-relevant (use 0)", **where)
    return g


def _split_cell(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    s = str(value).strip()
    if not s:
        return []
    if s.startswith("["):  # a JSON list pasted into a CSV cell
        v, _, _ = loads_json(s)
        if isinstance(v, list):
            return [str(x).strip() for x in v if str(x).strip()]
    return [p.strip() for p in s.split(LIST_SEPARATOR) if p.strip()]


def _id_ok(i: str, report: ValidationReport, where: dict, what: str = "relevant id",
           field: str = "relevant") -> bool:
    msg = id_problem(i, what)
    if msg is not None:
        report.error(msg, **{**where, "field": field})
        return False
    return True


def _relevant(row: Mapping[str, Any], report: ValidationReport, where: dict) -> dict[str, int]:
    rel: dict[str, int] = {}
    raw = row.get("relevant")
    if isinstance(raw, Mapping):
        for i, g in raw.items():
            gi = _grade(g, report, {**where, "field": "relevant"})
            if gi is not None and _id_ok(str(i), report, where):
                rel[str(i)] = gi
        return rel
    key = next((k for k in RELEVANT_ID_KEYS if k in row and row[k] is not None), None)
    ids_raw = row[key] if key is not None else raw
    if isinstance(ids_raw, int) and not isinstance(ids_raw, bool):  # one id written as a number
        ids_raw = str(ids_raw)
    extra = row.get("also_acceptable")  # ids also accepted beside a single gold id (grade 1 as it)
    if key is not None and not key.endswith("s") and extra is not None and not isinstance(ids_raw, (list, tuple)):
        ids_raw = [*_split_cell(ids_raw), *_split_cell(extra if isinstance(extra, (list, tuple, str)) else None)]
    if ids_raw is not None and not isinstance(ids_raw, (list, tuple, str)):
        if not (isinstance(ids_raw, float) and math.isnan(ids_raw)):
            report.error(f"relevant ids must be a list or a {LIST_SEPARATOR!r}-separated string, got "
                         f"{_excerpt(ids_raw)}", **{**where, "field": key or "relevant_chunk_ids"})
        return rel
    ids = _split_cell(ids_raw)
    grades_raw = row.get("grades")
    if isinstance(grades_raw, Mapping):
        grades: list[Any] = [grades_raw.get(i, 1) for i in ids]
    else:
        grades = _split_cell(grades_raw) if grades_raw is not None else []
        if grades and len(grades) != len(ids):
            report.error(f"{len(grades)} grades for {len(ids)} relevant ids; give one grade per id "
                         f"(separated by {LIST_SEPARATOR!r}) or none (all 1)", **{**where, "field": "grades"})
            grades = []
    for n, i in enumerate(ids):
        g = _grade(grades[n], report, {**where, "field": "grades"}) if grades else 1
        if g is None or not _id_ok(i, report, where):
            continue
        if i in rel:
            report.warning(f"id {i!r} is listed twice; the higher grade is kept",
                           **{**where, "field": "relevant_chunk_ids"})
            g = max(g, rel[i])
        rel[i] = g
    return rel


def _evidence(row: Mapping[str, Any], report: ValidationReport, where: dict) -> tuple[Evidence, ...]:
    """The optional ``evidence`` list of one row (bad items are reported and dropped)."""
    raw = row.get("evidence")
    if raw is None or (isinstance(raw, float) and math.isnan(raw)):
        return ()
    w = {**where, "field": "evidence"}
    if not isinstance(raw, list):
        report.error(f"evidence must be a list of {{doc, quote, grade}} objects, got {type(raw).__name__}", **w)
        return ()
    out = []
    for n, item in enumerate(raw, 1):
        if not isinstance(item, Mapping):
            report.error(f"evidence item {n} must be an object {{doc, quote, grade}}, got {type(item).__name__}", **w)
            continue
        doc = str(item.get("doc") or item.get("doc_id") or "").strip()
        quote = str(item.get("quote") or item.get("text") or "")
        start, end = item.get("start"), item.get("end")
        has_span = isinstance(start, int) and isinstance(end, int) and not isinstance(start, bool) and 0 <= start < end
        if (start is not None or end is not None) and not has_span:
            report.error(f"evidence item {n}: start/end must be whole numbers with 0 <= start < end, got "
                         f"{start!r}/{end!r}", **w)
            continue
        if not quote.strip() and not has_span:
            report.error(f"evidence item {n} has neither a quote nor a start/end span; give the passage that "
                         "answers", **w)
            continue
        if has_span and not doc:
            report.error(f"evidence item {n}: a character span needs the document (doc)", **w)
            continue
        g = _grade(item.get("grade", 1), report, w)
        if g is None:
            continue
        status = str(item.get("status") or REVIEWED)
        if status not in (REVIEWED, PROPOSED):
            report.warning(f"evidence item {n}: status {status!r} is not {REVIEWED!r} or {PROPOSED!r}; read as "
                           f"{PROPOSED!r} (unreviewed)", **w)
            status = PROPOSED
        score = item.get("score")
        out.append(Evidence(doc, g, quote, start if has_span else None, end if has_span else None, status,
                            float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None))
    return tuple(out)


def _provenance(row: Mapping[str, Any], rel: Mapping[str, int], report: ValidationReport,
                where: dict) -> tuple[str, dict[str, Any] | None, dict[str, str]]:
    """The optional provenance fields of one row (bad values are reported and dropped)."""
    origin = row.get("origin")
    if origin is None or (isinstance(origin, float) and math.isnan(origin)) or origin == "":
        origin = QUESTION_ORIGINS[0]
    elif str(origin) not in QUESTION_ORIGINS:
        report.warning(f"origin {origin!r} is not one of {', '.join(QUESTION_ORIGINS)}; read as "
                       f"{QUESTION_ORIGINS[0]!r}", **{**where, "field": "origin"})
        origin = QUESTION_ORIGINS[0]
    draft = row.get("draft")
    if draft is not None and not isinstance(draft, Mapping):
        report.warning(f"draft must be an object (the drafting record), got {type(draft).__name__}; dropped",
                       **{**where, "field": "draft"})
        draft = None
    raw = row.get("label_origin")
    lo: dict[str, str] = {}
    if isinstance(raw, Mapping):
        for i, o in raw.items():
            if str(o) not in LABEL_ORIGINS:
                report.warning(f"label_origin of {i!r} is {o!r}; use one of {', '.join(LABEL_ORIGINS)} "
                               f"(read as {HUMAN!r})", **{**where, "field": "label_origin"})
            elif str(i) not in rel:
                report.warning(f"label_origin names {i!r}, which has no label; ignored",
                               **{**where, "field": "label_origin"})
            else:
                lo[str(i)] = str(o)
    elif raw is not None and not (isinstance(raw, float) and math.isnan(raw)):
        report.warning(f"label_origin must be an object {{id: origin}}, got {type(raw).__name__}; ignored",
                       **{**where, "field": "label_origin"})
    return str(origin), (dict(draft) if draft is not None else None), lo


def golden_from_rows(rows: list[tuple[int | None, Mapping[str, Any]]], source: str = "",
                     report: ValidationReport | None = None) -> tuple[GoldenSet, ValidationReport]:
    """Build a golden set from ``(line, row)`` pairs, collecting every problem.

    Rows that hold what a system retrieved or answered (a RAG log: ``contexts``, ``response``, ...)
    give their questions and reference answers only: their ``answer`` is the system's, never read
    as a reference answer (one warning says so)."""
    report = report if report is not None else ValidationReport()
    ans_keys: tuple[str, ...] = _ANS_KEYS
    if _log_shaped(rows):
        ans_keys = tuple(k for k in _ANS_KEYS if k != "answer")
        if any(isinstance(r, Mapping) and r.get("answer") not in (None, "") for _, r in rows):
            report.warning("the rows hold what a system retrieved or answered (a RAG log): their 'answer' is the "
                           "system's and is not read as a reference answer (name reference answers "
                           "'expected_answer'; bring the log itself as a system)", file=source, field="answer")
    queries: list[GoldenQuery] = []
    seen: dict[str, int | None] = {}
    free = FreeIds()
    for line, row in rows:
        where: dict = {"file": source, "line": line}
        if not isinstance(row, Mapping):
            report.error(f"expected an object with a 'question' field, got {type(row).__name__}", **where)
            continue
        q = _first(row, _Q_KEYS)
        question = "" if q is None else str(q).strip()
        qid_raw = _first(row, _ID_KEYS)
        qid = str(qid_raw).strip() if qid_raw is not None and str(qid_raw).strip() else ""
        if not question:
            report.error("empty question; write the question text (or delete the row)",
                         **where, query_id=qid or None, field="question")
        if not qid:
            base = stable_query_id(question) if question else f"row-{line if line is not None else len(queries) + 1}"
            qid = free.new(base)  # constant time per question (a counter per base)
        elif not _id_ok(qid, report, {**where, "query_id": None}, "query id", "id"):
            continue
        elif qid in seen:
            first = seen[qid]
            report.error(f"duplicate query id {qid!r} (first at line {first}); give each query its own id",
                         **where, query_id=qid, field="id")
            continue
        seen[qid] = line
        free.add(qid)
        rel = _relevant(row, report, {**where, "query_id": qid})
        cat = row.get("category")
        category = "" if cat is None or (isinstance(cat, float) and math.isnan(cat)) else str(cat).strip()
        ans = _first(row, ans_keys)
        if isinstance(ans, list):
            ans = " ".join(map(str, ans))
        origin, draft, label_origin = _provenance(row, rel, report, {**where, "query_id": qid})
        evidence = _evidence(row, report, {**where, "query_id": qid})
        queries.append(GoldenQuery(id=qid, question=question, category=category, relevant=rel,
                                   expected_answer=None if ans is None or str(ans) == "" else str(ans),
                                   origin=origin, draft=draft, label_origin=label_origin, evidence=evidence))
    _warn_unread(rows, queries, source, report)
    return GoldenSet(tuple(queries), name=Path(source).stem if source else ""), report


def _log_shaped(rows: list[tuple[int | None, Mapping[str, Any]]]) -> bool:
    """Whether the rows hold a system's output (contexts retrieved, or an answer only a system gives)."""
    from rag_metrics.io.logrows import ANSWER_KEYS, CONTEXT_ID_KEYS, CONTEXT_KEYS, SINGLE_CONTEXT_KEY

    system = set(CONTEXT_KEYS + CONTEXT_ID_KEYS + (SINGLE_CONTEXT_KEY,)) | (set(ANSWER_KEYS) - set(_ANS_KEYS))
    return any(isinstance(r, Mapping) and not system.isdisjoint(r) for _, r in rows[:50])


def _warn_unread(rows: list[tuple[int | None, Mapping[str, Any]]], queries: list[GoldenQuery], source: str,
                 report: ValidationReport) -> None:
    """One warning naming the fields no row's reader used (never one per row), with the names the
    relevant ids are read from when no question got any."""
    unread: dict[str, None] = {}
    for _, row in rows:
        if isinstance(row, Mapping):
            unread.update(dict.fromkeys(str(k) for k in row if str(k) not in GOLDEN_FIELDS))
    if not unread:
        return
    names = list(unread)
    shown = ", ".join(_excerpt(k, 60) for k in names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    if any(q.relevant for q in queries):
        report.warning(f"{UNREAD_FIELDS}: {shown}; this reader does not use them", file=source)
        return
    report.warning(f"{UNREAD_FIELDS}: {shown}; no question has relevant ids: if one of these fields holds them, "
                   f"rename it 'relevant_chunk_ids' (read also as {', '.join(RELEVANT_ID_KEYS[1:6])}, ...; "
                   "docs/your-files.md lists them)", file=source)


def _rows_jsonl(text: str, source: str, report: ValidationReport) -> list[tuple[int | None, Any]]:
    rows: list[tuple[int | None, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        value, msg, _ = loads_json(line)
        if msg is not None:
            report.error(f"{msg}; each line must be one JSON object", file=source, line=n)
            continue
        rows.append((n, value))
    return rows


def _rows_json(text: str, source: str, report: ValidationReport) -> list[tuple[int | None, Any]]:
    data, msg, line = loads_json(text)
    if msg is not None:
        report.error(f"{msg}; fix the syntax or save as JSONL", file=source, line=line)
        return []
    if isinstance(data, Mapping):
        wrap = next((k for k in ("queries", *ROW_WRAPPER_KEYS) if isinstance(data.get(k), list)), None)
        if wrap is not None:
            data = data[wrap]
    if isinstance(data, Mapping):
        # pytrec_eval-shaped {qid: {id: grade}}
        if data and all(isinstance(v, Mapping) for v in data.values()):
            return [(None, {"id": q, "question": "", "relevant": v, "_qrels": True}) for q, v in data.items()]
        if id_lists(data):  # {qid: [ids]}: binary qrels
            return [(None, {"id": q, "question": "", "relevant_chunk_ids": [str(i) for i in v], "_qrels": True})
                    for q, v in data.items()]
        keys = ", ".join(repr(str(k)) for k in list(data)[:8])
        report.error(f"expected a list of query objects, {{\"queries\": [...]}}, {{qid: {{id: grade}}}} or "
                     f"{{qid: [ids]}}; found an object with keys {_excerpt(keys, 200)}", file=source)
        return []
    if not isinstance(data, list):
        report.error(f"expected a list of query objects, got {type(data).__name__}", file=source)
        return []
    return [(None, row) for row in data]


def _rows_csv(text: str, source: str, report: ValidationReport) -> list[tuple[int | None, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    fields = [f.strip() for f in (reader.fieldnames or [])]
    if not fields:
        report.error("empty CSV file; the first line must name the columns (question, category, "
                     "relevant_chunk_ids, grades, expected_answer)", file=source, line=1)
        return []
    reader.fieldnames = fields
    if not any(k in fields for k in _Q_KEYS):
        report.error(f"no 'question' column (columns: {', '.join(fields)}); the header must name a question column",
                     file=source, line=1)
        return []
    rows: list[tuple[int | None, Any]] = []
    try:
        for row in reader:
            if None in row:
                report.error(f"{len(fields) + len(row[None])} cells but the header has {len(fields)}; "
                             "quote cells that contain commas",
                             file=source, line=reader.line_num)
                continue
            if all((v or "").strip() == "" for v in row.values()):
                continue
            rows.append((reader.line_num, {k: (v if v != "" else None) for k, v in row.items()}))
    except csv.Error as e:
        report.error(f"malformed CSV ({e}); check quoting", file=source, line=reader.line_num)
    return rows


def parse_golden(text: str, fmt: str, source: str = "") -> tuple[GoldenSet, ValidationReport]:
    """Parse golden-set text in ``fmt`` (``csv``, ``json`` or ``jsonl``); never raises on content."""
    report = ValidationReport()
    fmt = fmt.lower().lstrip(".")
    if fmt == "jsonl":
        rows = _rows_jsonl(text, source, report)
    elif fmt == "json":
        # A JSONL file saved as .json is common: accept it.
        stripped = text.lstrip()
        if stripped.startswith("{") and "\n{" in stripped.rstrip():
            _, msg, _ = loads_json(text)
            rows = _rows_json(text, source, report) if msg is None else _rows_jsonl(text, source, report)
        else:
            rows = _rows_json(text, source, report)
    elif fmt == "csv":
        rows = _rows_csv(text, source, report)
    else:
        raise InputError(f"{source or 'golden set'}: unknown golden-set format {fmt!r}; use .csv, .json or .jsonl")
    qrels_like = all(isinstance(r, Mapping) and r.get("_qrels") for _, r in rows) and rows
    if qrels_like:
        # qrels have no question text: do not report empty questions
        golden, _ = golden_from_rows([(n, {**r, "question": f"(query {r['id']})"}) for n, r in rows], source, report)
        golden = GoldenSet(tuple(GoldenQuery(q.id, "", q.category, q.relevant, q.expected_answer) for q in golden),
                           golden.name)
        return golden, report
    return golden_from_rows(rows, source, report)


def read_golden(path: str | os.PathLike[str]) -> tuple[GoldenSet, ValidationReport]:
    """Load a golden set file and its validation report (content problems do not raise)."""
    p = Path(path)
    if p.suffix.lower() not in GOLDEN_SUFFIXES:
        raise InputError(f"{p}: unknown golden-set extension {p.suffix!r}; use .csv, .json or .jsonl")
    return parse_golden(read_text(p), p.suffix, str(p))


def load_golden(path: str | os.PathLike[str]) -> GoldenSet:
    """Load a golden set; raise :class:`InputError` (first error, with file:line) on any error."""
    golden, report = read_golden(path)
    report.raise_if_errors()
    return golden


def golden_to_rows(golden: GoldenSet) -> list[dict[str, Any]]:
    rows = []
    for q in golden:
        row: dict[str, Any] = {"id": q.id, "question": q.question, "category": q.category,
                               "relevant": dict(q.relevant)}
        if q.expected_answer is not None:
            row["expected_answer"] = q.expected_answer
        if q.origin != QUESTION_ORIGINS[0]:
            row["origin"] = q.origin
        if q.draft:
            row["draft"] = dict(q.draft)
        if q.label_origin:
            row["label_origin"] = dict(q.label_origin)
        if q.evidence:
            row["evidence"] = [e.as_row() for e in q.evidence]
        rows.append(row)
    return rows


def golden_to_text(golden: GoldenSet, fmt: str) -> str:
    """Serialise to ``csv``, ``json`` or ``jsonl`` text (round-trips through :func:`parse_golden`)."""
    fmt = fmt.lower().lstrip(".")
    rows = golden_to_rows(golden)
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if fmt == "json":
        return json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["id", "question", "category", "relevant_chunk_ids", "grades", "expected_answer"])
        for q in golden:
            for i in q.relevant:
                if LIST_SEPARATOR in i:
                    raise InputError(f"query {q.id!r}: id {i!r} contains {LIST_SEPARATOR!r}, which CSV uses "
                                     "to separate ids; save as JSON or JSONL instead")
            w.writerow([q.id, q.question, q.category, LIST_SEPARATOR.join(q.relevant),
                        LIST_SEPARATOR.join(str(g) for g in q.relevant.values()), q.expected_answer or ""])
        return buf.getvalue()
    raise InputError(f"unknown golden-set format {fmt!r}; use csv, json or jsonl")


def save_golden(golden: GoldenSet, path: str | os.PathLike[str]) -> None:
    p = Path(path)
    if p.suffix.lower() not in GOLDEN_SUFFIXES:
        raise InputError(f"{p}: unknown golden-set extension {p.suffix!r}; use .csv, .json or .jsonl")
    atomic_write_text(p, golden_to_text(golden, p.suffix))


def validate_golden(golden: GoldenSet, known_ids: Collection[str] | None = None,
                    report: ValidationReport | None = None, source: str = "") -> ValidationReport:
    """Content checks on a parsed golden set (add to ``report`` if given).

    Errors: ids not in ``known_ids`` (when given).  Warnings: queries with no relevant id that are
    not marked ``out_of_scope``; out-of-scope queries that do have labels.
    """
    report = report if report is not None else ValidationReport()
    known = set(known_ids) if known_ids is not None else None
    for q in golden:
        if known is not None:
            unknown = [i for i in q.relevant if i not in known]
            for i in unknown:
                report.error(f"relevant id {i!r} is not in the corpus; fix the id or re-label the query",
                             file=source, query_id=q.id, field="relevant")
        if q.awaiting_labels:
            report.warning("a reference answer but no relevant id and no reviewed evidence: it is neither in nor out "
                           "of scope yet; propose evidence from the reference answer (rag-metrics validate GOLDEN "
                           "--corpus PATH --propose-evidence OUT.jsonl, or the Golden set page's review queue) and "
                           "review it", file=source, query_id=q.id, field="relevant")
        elif not q.has_relevant and q.category != OUT_OF_SCOPE:
            effect = ("it scores 0 in every mean (judged, none relevant, as trec_eval counts it)" if q.relevant
                      else "with no judgment it is left out of the means as out of scope")
            report.warning(f"no relevant id: {effect}; label at least one or set the category to {OUT_OF_SCOPE!r}",
                           file=source, query_id=q.id, field="relevant")
        if q.has_relevant and q.category == OUT_OF_SCOPE:
            report.warning(f"marked {OUT_OF_SCOPE!r} but has relevant ids; it is left out of the means as out of "
                           f"scope; remove the category to evaluate it",
                           file=source, query_id=q.id, field="category")
    return report
