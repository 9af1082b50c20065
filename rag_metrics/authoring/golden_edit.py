"""Editing a golden set in the app: the editor table, label upserts, import/export, label counts.

- :func:`golden_to_table` / :func:`table_to_golden`: the data editor's rows and back, with every
  problem in a :class:`~rag_metrics.errors.ValidationReport` (1-based table rows).
- :func:`upsert_labels`: set one question's labels (by id or question text), or append it.
- :func:`import_golden` / :func:`export_golden`: the editor's upload and download buttons
  (CSV, JSON, JSONL, TREC qrels).
- :func:`label_counts` / :func:`chunk_table`: how many questions label each chunk.

No streamlit import here.
"""
from __future__ import annotations

import csv
import io
import math
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.golden import LIST_SEPARATOR, golden_from_rows, golden_to_text, validate_golden
from rag_metrics.io.trec import parse_beir_qrels, parse_trec_qrels
from rag_metrics.types import OUT_OF_SCOPE, Chunk, GoldenQuery, GoldenSet

__all__ = [
    "CATEGORIES", "TABLE_COLUMNS", "golden_to_table", "table_to_golden", "upsert_labels", "MAX_IMPORT_BYTES",
    "EXPORT_FORMATS", "import_golden", "export_golden", "label_counts", "chunk_table", "label_rows", "labels_from_rows",
    "count_questions", "import_size_problem",
]

#: Categories of the sample golden set (the editor offers these plus any found in the data).
CATEGORIES = ("factual", "comparison", "procedural", OUT_OF_SCOPE)

#: Columns of the editor table, in order.
TABLE_COLUMNS = ("id", "question", "category", "relevant", "grades", "expected_answer")


def golden_to_table(golden: GoldenSet) -> pd.DataFrame:
    """One row per query: ``relevant`` is a list of ids, ``grades`` the parallel grades joined by
    ``|`` (:data:`~rag_metrics.io.golden.LIST_SEPARATOR`)."""
    rows = [{
        "id": q.id, "question": q.question, "category": q.category or "",
        "relevant": list(q.relevant),
        "grades": LIST_SEPARATOR.join(str(g) for g in q.relevant.values()),
        "expected_answer": q.expected_answer or "",
    } for q in golden]
    df = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    for c in ("id", "question", "category", "grades", "expected_answer"):
        df[c] = df[c].astype(object)
    return df


def _cell(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    if v is pd.NA:
        return None
    return v


def table_to_golden(table: pd.DataFrame, known_ids: Collection[str] | None = None, name: str = ""
                    ) -> tuple[GoldenSet, ValidationReport]:
    """Parse the editor table back into a golden set, with every problem (parse + validation).

    Row numbers in the report are 1-based table rows.  Rows that are entirely empty are skipped.
    """
    rows: list[tuple[int | None, Mapping[str, Any]]] = []
    report = ValidationReport()
    for n, rec in enumerate(table.to_dict("records"), start=1):
        rec = {k: _cell(v) for k, v in rec.items()}
        rel = rec.get("relevant")
        if isinstance(rel, np.ndarray):
            rel = rel.tolist()
        if all(v in (None, "", []) for v in (rec.get("question"), rel, rec.get("expected_answer"))):
            continue
        row: dict[str, Any] = {
            "id": rec.get("id") or None, "question": rec.get("question") or "",
            "category": rec.get("category") or "", "relevant_chunk_ids": rel if rel is not None else [],
            "expected_answer": rec.get("expected_answer") or None,
        }
        grades = rec.get("grades")
        if grades not in (None, ""):
            ids = [str(i).strip() for i in rel] if isinstance(rel, (list, tuple)) else \
                [p.strip() for p in str(rel or "").split(LIST_SEPARATOR) if p.strip()]
            gl = [p.strip() for p in str(grades).split(LIST_SEPARATOR)]
            gl = [g for g in gl if g] if len(gl) > 1 or gl != [""] else []
            if len(gl) != len(ids):
                report.warning(f"{len(gl)} grade(s) for {len(ids)} relevant id(s): "
                               + ("extra grades are ignored" if len(gl) > len(ids) else "missing grades count as 1")
                               + f"; give one grade per id, in the same order, separated by {LIST_SEPARATOR!r}",
                               file="table", line=n, query_id=rec.get("id") or None, field="grades")
                gl = (gl + ["1"] * len(ids))[: len(ids)]
            if gl:
                row["grades"] = LIST_SEPARATOR.join(gl)
        rows.append((n, row))
    golden, report = golden_from_rows(rows, source="table", report=report)
    golden = GoldenSet(golden.queries, name=name)
    validate_golden(golden, known_ids, report)
    return golden, report


def label_rows(query: GoldenQuery) -> pd.DataFrame:
    """One row per label of ``query`` (``id``, ``grade``), in the golden order: the per-question
    label editor's table (usable with 50-155 labels, where one cell of ids is not)."""
    return pd.DataFrame({"id": list(query.relevant), "grade": [int(g) for g in query.relevant.values()]},
                        columns=["id", "grade"])


def labels_from_rows(old: Mapping[str, int], rows: Sequence[Mapping[str, Any]], query_id: str = "") -> dict[str, int]:
    """The ``labels`` argument of :func:`upsert_labels` that makes a question's labels exactly
    ``rows`` (``id``, ``grade``; an empty grade is 1): every row's id with its grade, and grade 0
    (removed) for each ``old`` id no row names.  Empty rows are skipped.

    Raises
    ------
    InputError
        A grade that is not a whole number from 1 to 3, or an id given twice (naming the row).
    """
    out: dict[str, int] = {}
    for n, row in enumerate(rows, start=1):
        rid = str(row.get("id") or "").strip()
        raw = row.get("grade")
        if not rid:
            if raw is None or (isinstance(raw, float) and math.isnan(raw)) or str(raw).strip() == "":
                continue
            raise InputError(f"question {query_id or '?'}, label row {n}: a grade without an id; type the id or "
                             "delete the row")
        if raw is None or (isinstance(raw, float) and math.isnan(raw)) or str(raw).strip() == "":
            grade = 1
        else:
            try:
                grade = int(float(str(raw)))
            except ValueError:
                grade = -1
            if grade not in (1, 2, 3) or float(str(raw)) != grade:
                raise InputError(f"question {query_id or '?'}, label row {n} ({rid}): grade {raw!r}; use 1, 2 or 3 "
                                 "(delete the row to remove the label)")
        if rid in out:
            raise InputError(f"question {query_id or '?'}, label row {n}: {rid} is listed twice; keep one row")
        out[rid] = grade
    for i in old:
        out.setdefault(i, 0)
    return out


def upsert_labels(golden: GoldenSet, question: str, labels: Mapping[str, int], category: str = "",
                  query_id: str | None = None) -> GoldenSet:
    """Set the labels of one question (by id, else by exact question text), or append it.

    ``labels`` replaces the query's labels for the chunks it names; a grade of 0 removes a label.
    """
    question = question.strip()
    if not question:
        raise InputError("type a question before saving labels")
    out: list[GoldenQuery] = []
    done = False
    for q in golden:
        if not done and ((query_id is not None and q.id == query_id) or
                         (query_id is None and q.question.strip() == question)):
            rel = dict(q.relevant)
            for i, g in labels.items():
                if g > 0:
                    rel[i] = int(g)
                else:
                    rel.pop(i, None)
            cat = q.category
            if rel and any(g > 0 for g in rel.values()) and cat == OUT_OF_SCOPE:
                cat = category or ""
            out.append(q.relabelled(rel, category=cat))
            done = True
        else:
            out.append(q)
    if not done:
        from rag_metrics.io.free_ids import free_id
        from rag_metrics.io.golden import stable_query_id

        qid = free_id(stable_query_id(question), golden.ids)
        rel = {i: int(g) for i, g in labels.items() if g > 0}
        out.append(GoldenQuery(qid, question, category or ("" if rel else OUT_OF_SCOPE), rel, None))
    return GoldenSet(tuple(out), golden.name)


# ---- import / export (the editor's upload and download buttons) ----------------------------------
#: Largest golden-set upload accepted by the app, in bytes.
MAX_IMPORT_BYTES = 2 * 1024 * 1024
_QUESTION_FIELDS = ("question", "query")


def _asks(row: Any, role_known: bool) -> bool:
    """Whether a parsed row is a question (``role_known=False``: only a row with a question field)."""
    return role_known or (isinstance(row, Mapping) and any(k in row for k in _QUESTION_FIELDS))


def _json_rows(value: Any) -> list[Any]:
    """The rows of a parsed JSON golden set: a list, the list under a wrapper key (``queries``, ...),
    or a columnar object's question column; qrels (``{qid: {id: grade}}``) are no questions."""
    if isinstance(value, list):
        return value
    if isinstance(value, Mapping):
        for k in _QUESTION_FIELDS:
            if isinstance(value.get(k), list):  # columnar {"question": [...], ...}
                return [{k: v} for v in value[k]]
        return next((v for v in value.values() if isinstance(v, list) and v and isinstance(v[0], Mapping)), [])
    return []


def count_questions(data: bytes, filename: str, *, role_known: bool = True, stop: int | None = None) -> int:
    r"""The questions in a golden-set file, counted as it is parsed, up to ``stop`` (the count stops
    there: a budget plus one).  A ``.gz`` or Parquet file is unwrapped first, within the reading budget
    (:func:`rag_metrics.io.containers.unwrap`; an :class:`InputError` when it is over).  JSONL
    records, the rows of a JSON list (or of the list under a wrapper key), CSV records less the
    header; 0 for qrels (labels of questions already there).  Keys are counted once parsed, so
    ``"questio\u006e"`` is a question.  ``role_known=False`` (a file that may also be a corpus)
    counts only rows with a ``question``/``query`` field and CSVs with such a column.

    >>> count_questions(b'{"question": "a"}\n{"question": "b"}\n', "g.jsonl")
    2
    >>> count_questions(b'id,question\nq1,"two\nlines"\nq2,b\n', "g.csv")
    2
    >>> count_questions(b'{"id": "d1", "text": "a document"}\n', "docs.jsonl", role_known=False)
    0
    >>> count_questions(b'{"questio\\u006e": "a"}\n' * 5, "g.jsonl", role_known=False, stop=3)
    3
    """
    from rag_metrics.io.containers import unwrap
    from rag_metrics.io.files import loads_json

    data, name, _wraps = unwrap(data, filename)
    suffix = PurePath(name).suffix.lower()
    text = data.decode("utf-8-sig", errors="replace")
    limit = stop if stop is not None else sys.maxsize
    n = 0
    if suffix == ".json":
        value, msg, _ = loads_json(text)
        if msg is None:
            for row in _json_rows(value):
                n += _asks(row, role_known)
                if n >= limit:
                    break
            return n
        if not text.lstrip().startswith("{"):
            return 0  # the parse reports the syntax error
        suffix = ".jsonl"  # JSONL saved as .json, read as JSONL by the parse too
    if suffix == ".jsonl":
        for line in io.StringIO(text):
            if not line.strip():
                continue
            if role_known:
                n += 1
            else:
                value, msg, _ = loads_json(line)
                n += msg is None and _asks(value, False)
            if n >= limit:
                break
        return n
    if suffix == ".csv":
        reader = csv.reader(io.StringIO(text))
        try:
            header = [c.strip().lower() for c in next(reader, [])]
            if not role_known and not any(k in c for c in header for k in _QUESTION_FIELDS):
                return 0
            for row in reader:
                n += any(c.strip() for c in row)
                if n >= limit:
                    break
        except csv.Error:
            pass  # the parse reports it
        return n
    return 0


def import_size_problem(data: bytes, filename: str, max_questions: int | None, *,
                        max_bytes: int | None = MAX_IMPORT_BYTES, role_known: bool = True) -> str | None:
    r"""Why a golden-set file is refused before it is read as a golden set (``None``: it may be read):
    over ``max_bytes``, unwrapped over the reading budget, or more questions (:func:`count_questions`,
    which stops at ``max_questions + 1``) than ``max_questions``, a seat's
    ``lab.budgets.golden_questions`` (``None``: no limit).  Every golden import asks this first.

    >>> import_size_problem(b'{"question": "q"}\n' * 3, "big.jsonl", 2)[:62]
    "big.jsonl: more than 2 questions, over this seat's budget of 2"
    """
    name = PurePath(filename).name or "upload"
    if max_bytes is not None and len(data) > max_bytes:
        return (f"{name}: the file is {len(data):,} bytes; the limit is {max_bytes:,} bytes. Split the file, or "
                "evaluate it with the CLI (rag-metrics evaluate)")
    if max_questions is not None:
        try:
            n = count_questions(data, name, role_known=role_known, stop=max_questions + 1)
        except InputError as e:
            return str(e)
        if n > max_questions:
            return (f"{name}: more than {max_questions:,} questions, over this seat's budget of {max_questions:,} "
                    "questions (lab.budgets.golden_questions); import a smaller set (split the file), or ask the "
                    "teacher")
    return None


EXPORT_FORMATS = {"csv": "text/csv", "json": "application/json", "jsonl": "application/jsonl",
                  "qrels": "text/plain"}


def import_golden(data: bytes, filename: str, current: GoldenSet, known_ids: Collection[str] | None = None,
                  max_bytes: int = MAX_IMPORT_BYTES, max_questions: int | None = None,
                  ) -> tuple[GoldenSet | None, ValidationReport]:
    """Parse an uploaded golden set; ``(None, report)`` when it must not replace the current set.

    ``.csv``, ``.json`` and ``.jsonl`` files replace the whole set.  TREC qrels (any other name,
    lines ``qid 0 id grade``) carry no question text: they replace the labels of the queries of
    ``current`` with the same ids; unknown query ids are errors.  Ids not in ``known_ids`` are
    errors.  The report lists every problem; warnings alone do not block the import.  A file over
    ``max_bytes`` or ``max_questions`` (:func:`import_size_problem`) is refused before it is parsed.
    """
    from rag_metrics.io.golden import parse_golden

    report = ValidationReport()
    name = PurePath(filename).name or "upload"
    too_big = import_size_problem(data, name, max_questions, max_bytes=max_bytes)
    if too_big is not None:
        report.error(too_big.split(": ", 1)[1], file=name)
        return None, report
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        report.error(f"not UTF-8 (byte 0x{data[e.start]:02x}); re-save the file as UTF-8", file=name, line=line)
        return None, report
    if not text.strip():
        report.error("the file is empty", file=name)
        return None, report
    suffix = PurePath(name).suffix.lower().lstrip(".")
    if suffix in ("csv", "json", "jsonl"):
        try:
            golden, rep = parse_golden(text, suffix, name)
        except InputError as err:
            report.error(str(err), file=name)
            return None, report
        report.extend(rep.problems)
        if len(golden) == 0 and report.ok:
            report.error("no query found in the file", file=name)
    else:
        first = next((ln for ln in text.splitlines() if ln.strip()), "")
        if first.lower().startswith("query-id") or (len(first.split("\t")) == 3 and len(first.split()) == 3):
            qrels, rep = parse_beir_qrels(text, name)
        else:
            qrels, rep = parse_trec_qrels(text, name)
        report.extend(rep.problems)
        if not qrels and report.ok:
            report.error("no judgment found; expected TREC qrels lines 'qid 0 id grade'", file=name)
        have = {q.id for q in current}
        for qid in qrels:
            if qid not in have:
                report.error("query id is not in the current golden set; qrels carry no question text, so "
                             "add the question first (or import CSV/JSON/JSONL with questions)",
                             file=name, query_id=qid)
        golden = GoldenSet(tuple(
            q.relabelled(dict(qrels[q.id])) if q.id in qrels else q
            for q in current), current.name)
    validate_golden(golden, known_ids, report, source=name)
    if not report.ok:
        return None, report
    return GoldenSet(golden.queries, current.name), report


def export_golden(golden: GoldenSet, fmt: str) -> str:
    """Text of the golden set in ``csv``, ``json``, ``jsonl`` or TREC ``qrels`` format."""
    if fmt == "qrels":
        from rag_metrics.io.trec import qrels_to_text

        return qrels_to_text(golden)
    return golden_to_text(golden, fmt)


def label_counts(golden: GoldenSet, level: int = 1) -> dict[str, int]:
    """``{id: number of queries labelling it relevant (grade >= level)}``."""
    out: dict[str, int] = {}
    for q in golden:
        for i, g in q.relevant.items():
            if g >= level:
                out[i] = out.get(i, 0) + 1
    return out


def chunk_table(chunks: Sequence[Chunk], golden: GoldenSet | None = None, level: int = 1) -> pd.DataFrame:
    """id, document, start, end, chars, labelled (queries labelling the chunk), text."""
    counts = label_counts(golden, level) if golden is not None else {}
    return pd.DataFrame({
        "id": [c.id for c in chunks], "document": [c.doc_id for c in chunks],
        "start": [c.start for c in chunks], "end": [c.end for c in chunks],
        "chars": [len(c.text) for c in chunks], "labelled": [counts.get(c.id, 0) for c in chunks],
        "text": [c.text for c in chunks]})
