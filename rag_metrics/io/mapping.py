"""A column mapping: the user says which field of a file is the question, the contexts, the ids, the
scores, the answer, the reference answer and the labels, when the readers' own field names do not fit.

The spec is the CLI's ``--map`` value (and what the Bring your system page builds)::

    question=query,contexts=results[].text,ids=results[].id,scores=results[].score

A *path* is a field name, dotted for nested objects (``attributes.input.value``; a key that itself
holds dots, as in OpenInference's ``"input.value"``, is found too), with ``[]`` to take a field from
every item of a list (``retrieval.documents[].document.id``) or ``[N]`` for one item (0-based).  A
string cell that holds JSON or a Python list (CSV exports) is read as that value first.

:func:`apply_mapping` reads the rows of a file (JSON list, ``{"rows": [...]}``, columnar JSON, JSON
lines, CSV/TSV, and Parquet or ``.gz`` through :func:`rag_metrics.io.containers.unwrap`), takes each
mapped field and writes rows under the canonical names the readers already understand (a RAG log's
``question``/``contexts``/``context_ids``, a run's ``query_id``/``ids``/``scores``, a golden set's
``id``/``question``/``relevant_chunk_ids``), as JSON lines.  The result then goes through the usual
reader (:func:`rag_metrics.formats.describe_bytes`, :func:`rag_metrics.systems.uploads.parse_upload`,
:func:`rag_metrics.io.golden.parse_golden`): one rule for what a file is, with the names the user gave.
"""
from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.io.containers import unwrap
from rag_metrics.io.files import loads_json

__all__ = ["TARGETS", "ColumnMap", "apply_mapping", "field_paths", "map_rows", "mapped_name", "parse_map",
           "preview_rows", "read_golden_mapped", "read_rows", "shape_key"]

#: What a mapping can name, with the words used in messages and on the page.
TARGETS: dict[str, str] = {
    "question": "the question text",
    "query_id": "the question's id",
    "contexts": "the retrieved texts, in rank order",
    "ids": "the retrieved chunk or document ids, in rank order",
    "scores": "the retrieval scores (ranked highest first)",
    "answer": "the generated answer",
    "reference": "the reference (expected) answer",
    "labels": "the relevant ids (a golden set's labels)",
}

#: Rows read for a preview, and for the field names of a shape.
PREVIEW_ROWS = 5
_SHAPE_ROWS = 50
_MAX_PROBLEMS = 3
_WRAPPERS = ("rows", "data", "samples", "records", "test_cases", "testCases", "goldens", "examples", "items",
             "traces", "spans", "observations")
_SEGMENT = re.compile(r"^(?P<key>.*?)(?P<index>(\[\d*\])*)$")


@dataclass(frozen=True)
class ColumnMap:
    """A parsed mapping: ``{target: path}`` in the order given."""

    fields: tuple[tuple[str, str], ...]

    def __bool__(self) -> bool:
        return bool(self.fields)

    def get(self, target: str) -> str | None:
        return next((p for t, p in self.fields if t == target), None)

    @property
    def spec(self) -> str:
        """The mapping written back as ``--map`` takes it."""
        return ",".join(f"{t}={p}" for t, p in self.fields)

    @property
    def role(self) -> str:
        """``"golden"`` when the mapping names labels and no retrieval, else ``"system"``."""
        if self.get("labels") and not (self.get("contexts") or self.get("ids")):
            return "golden"
        return "system"


def parse_map(spec: str | Mapping[str, str] | ColumnMap | None, option: str = "--map") -> ColumnMap:
    """Parse ``question=query,contexts=results[].text,...``; raise :class:`InputError` naming the bad
    key and listing the valid ones.  A mapping ``{target: path}`` is checked the same way."""
    if isinstance(spec, ColumnMap):
        return spec
    if spec is None:
        return ColumnMap(())
    valid = ", ".join(TARGETS)
    if isinstance(spec, Mapping):
        items = [(str(k).strip(), str(v).strip()) for k, v in spec.items() if str(v or "").strip()]
    else:
        items = []
        for part in (p.strip() for p in str(spec).split(",")):
            if not part:
                continue
            if "=" not in part:
                raise InputError(f"{option} {spec!r}: {part!r} is not KEY=FIELD; write e.g. "
                                 f"question=query,contexts=results[].text (keys: {valid})")
            k, _, v = part.partition("=")
            items.append((k.strip(), v.strip()))
    seen: dict[str, str] = {}
    for k, v in items:
        if k not in TARGETS:
            raise InputError(f"{option}: unknown key {k!r}; the valid keys are {valid}")
        if not v:
            raise InputError(f"{option}: {k}= names no field; write {k}=FIELD (a field name, dotted for nested "
                             "objects, [] for every item of a list)")
        if k in seen:
            raise InputError(f"{option}: {k} is given twice ({seen[k]!r} and {v!r}); give each key once")
        _segments(v, option, k)
        seen[k] = v
    if seen and not (seen.keys() & {"question", "query_id"}):
        raise InputError(f"{option}: name the question (question=FIELD) or its id (query_id=FIELD); every row "
                         "needs one to be matched to the golden questions")
    if seen and not (seen.keys() & {"contexts", "ids", "labels"}):
        raise InputError(f"{option}: name what was retrieved (contexts=FIELD or ids=FIELD) or, for a golden set, "
                         "the relevant ids (labels=FIELD)")
    return ColumnMap(tuple(seen.items()))


# ---- paths ---------------------------------------------------------------------------------------
def _segments(path: str, option: str = "--map", target: str = "") -> list[tuple[str, list[str]]]:
    """``a.b[].c`` as ``[("a", []), ("b", ["[]"]), ("c", [])]``."""
    out: list[tuple[str, list[str]]] = []
    for seg in path.split("."):
        m = _SEGMENT.match(seg)
        assert m is not None  # the pattern matches any string
        key, index = m.group("key"), m.group("index")
        if not key and not (index and out == []):
            raise InputError(f"{option}: {target}={path!r} has an empty field name; write e.g. results[].text")
        if "[" in key or "]" in key:
            raise InputError(f"{option}: {target}={path!r}: brackets go after a field name, [] for every item "
                             "or [N] for one item, e.g. results[].text")
        out.append((key, re.findall(r"\[\d*\]", index)))
    return out


def _decoded(v: Any) -> Any:
    """A string cell holding JSON or a Python literal list/object (CSV exports), decoded; else as is."""
    if isinstance(v, str) and v.lstrip()[:1] in ("[", "{"):
        value, msg, _ = loads_json(v.strip(), strict=False)
        if msg is None:
            return value
        try:
            return ast.literal_eval(v.strip())
        except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
            return v
    return v


class _Missing(Exception):
    def __init__(self, what: str, absent: bool = False) -> None:
        super().__init__(what)
        self.what = what
        self.absent = absent  # the row has no such field at all (not: a field inside it is wrong)


def _lookup(obj: Any, segs: list[tuple[str, list[str]]], done: str) -> Any:
    if not segs:
        return obj
    obj = _decoded(obj)
    if not isinstance(obj, Mapping):
        raise _Missing(f"{done or 'the row'} is {type(obj).__name__}, not an object with fields")
    # the longest run of segments that is one key (OpenInference keys hold dots: "input.value")
    for n in range(len(segs), 0, -1):
        if any(idx for _, idx in segs[: n - 1]):
            continue
        key = ".".join(k for k, _ in segs[:n])
        if key in obj:
            break
    else:
        have = ", ".join(map(repr, list(obj)[:12]))
        raise _Missing(f"no field {segs[0][0]!r} in {done or 'the row'} (fields: {have})", absent=not done)
    value = obj[key]
    here = f"{done}.{key}" if done else key
    return _index(value, segs[n - 1][1], segs[n:], here)


def _index(value: Any, indexes: list[str], rest: list[tuple[str, list[str]]], here: str) -> Any:
    if not indexes:
        return _lookup(value, rest, here) if rest else value
    value = _decoded(value)
    if not isinstance(value, (list, tuple)):
        raise _Missing(f"{here} is {type(value).__name__}, not a list (the path says {indexes[0]})")
    ix, more = indexes[0], indexes[1:]
    if ix == "[]":
        return [_index(item, more, rest, f"{here}[{n}]") for n, item in enumerate(value)]
    pos = int(ix[1:-1])
    if pos >= len(value):
        raise _Missing(f"{here} has {len(value)} item(s), no item {pos}")
    return _index(value[pos], more, rest, f"{here}[{pos}]")


def _get(row: Any, path: str) -> Any:
    if isinstance(row, Mapping) and path in row:  # a column whose name holds dots or brackets
        return row[path]
    segs = _segments(path)
    if not segs[0][0]:  # "[]..." : the row itself is a list
        return _index(row, segs[0][1], segs[1:], "the row")
    return _lookup(row, segs, "")


# ---- rows ----------------------------------------------------------------------------------------
def read_rows(data: bytes, filename: str, limit: int | None = None) -> tuple[list[Any], str, bool]:
    """The rows of a file, its name with any wrapping taken off, and whether it is a CSV/TSV.

    Raises :class:`InputError` naming the file when no rows can be read."""
    data, name, _ = unwrap(data, filename, role="run")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{filename}: not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}); re-save it as "
                         "UTF-8") from None
    suffix = PurePath(name).suffix.lower()
    stripped = text.lstrip()
    if not stripped:
        raise InputError(f"{filename}: the file is empty")
    if stripped[:1] in "[{":
        value, msg, _ = loads_json(text)
        if msg is None:
            return _rows_of_json(value, filename)[:limit], name, False
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            v, m, _ = loads_json(line)
            if m is not None:
                raise InputError(f"{filename}: line {n}: {m}; a mapped file is JSON, JSON lines, CSV or Parquet")
            rows.append(v)
            if limit is not None and len(rows) >= limit:
                break
        return rows, name, False
    first = stripped.splitlines()[0]
    delim = "\t" if suffix == ".tsv" or first.count("\t") > first.count(",") else ","
    if csv.field_size_limit() < len(data) + 1:
        csv.field_size_limit(len(data) + 1)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delim)
    rows = []
    try:
        if len(reader.fieldnames or ()) < 2:
            raise InputError(f"{filename}: not a table with named fields; a mapping reads JSON, JSON lines, CSV "
                             "(a header line naming the columns) or Parquet")
        for row in reader:
            rows.append({str(k).strip(): v for k, v in row.items() if k is not None})
            if limit is not None and len(rows) >= limit:
                break
    except csv.Error as e:
        raise InputError(f"{filename}: line {reader.line_num}: malformed CSV ({e}); check quoting") from None
    return rows, name, True


def _rows_of_json(value: Any, filename: str) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, Mapping):
        for w in _WRAPPERS:
            if isinstance(value.get(w), list):
                return list(value[w])
        lists = {k: v for k, v in value.items() if isinstance(v, list)}
        if lists and len(lists) == len(value) and len({len(v) for v in lists.values()}) == 1:  # columnar
            n = len(next(iter(lists.values())))
            return [{k: v[i] for k, v in lists.items()} for i in range(n)]
        return [value]  # one row
    raise InputError(f"{filename}: a JSON {type(value).__name__}, not rows; a mapped file holds a list of objects")


def field_paths(rows: Sequence[Any], limit: int = 200) -> list[str]:
    """The paths a mapping can name in ``rows`` (``query``, ``results[].text``, ...), in first-seen order."""
    out: dict[str, None] = {}

    def walk(v: Any, prefix: str, depth: int) -> None:
        if len(out) >= limit or depth > 6:
            return
        v = _decoded(v) if depth else v
        if isinstance(v, Mapping):
            for k, x in v.items():
                p = f"{prefix}.{k}" if prefix else str(k)
                out.setdefault(p, None)
                walk(x, p, depth + 1)
        elif isinstance(v, (list, tuple)) and prefix:
            items = [x for x in v[:20] if isinstance(_decoded(x), (Mapping, list, tuple))]
            if items:
                for x in items:
                    walk(x, prefix + "[]", depth + 1)

    for r in rows[:_SHAPE_ROWS]:
        walk(r, "", 0)
    return list(out)


def shape_key(rows: Sequence[Any]) -> str:
    """The shape of a file: its sorted top-level field names (a kept mapping is found by it)."""
    keys: set[str] = set()
    for r in rows[:_SHAPE_ROWS]:
        if isinstance(r, Mapping):
            keys.update(str(k) for k in r)
    return ",".join(sorted(keys))


# ---- applying ------------------------------------------------------------------------------------
def _texts(v: Any, target: str, path: str) -> list[str]:
    v = _decoded(v)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return []
    if isinstance(v, (list, tuple)):
        bad = next((x for x in v if isinstance(x, (Mapping, list, tuple)) or x is None), "ok")
        if bad != "ok":
            kind = "null" if bad is None else type(bad).__name__
            raise _Missing(f"{target}={path} gives a list holding a {kind}, not strings; point the path at the text "
                           "or id field of each item, e.g. results[].text")
        return [str(x) for x in v]
    if isinstance(v, Mapping):
        raise _Missing(f"{target}={path} is an object (fields: {', '.join(map(repr, list(v)[:8]))}); point the "
                       "path at a field inside it")
    return [str(v)]  # one context in a singular column


def _scalar(v: Any, target: str, path: str) -> str | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (Mapping, list, tuple)):
        raise _Missing(f"{target}={path} is a {type(v).__name__}, not one value; point the path at one field")
    return str(v)


#: Keys a row may lack (a row without contexts retrieved nothing; without labels, it awaits them).
_OPTIONAL = ("answer", "reference", "scores", "contexts", "ids", "labels")


def _mapped_row(row: Any, cmap: ColumnMap, role: str, found: set[str]) -> dict[str, Any]:
    got: dict[str, Any] = {}
    for target, path in cmap.fields:
        try:
            got[target] = _get(row, path)
        except _Missing as e:
            if target in _OPTIONAL and e.absent:  # this row lacks it; others may not
                continue
            raise _Missing(f"{target}={path}: {e.what}") from None
        found.add(target)
    question = _scalar(got.get("question"), "question", cmap.get("question") or "")
    qid = _scalar(got.get("query_id"), "query_id", cmap.get("query_id") or "")
    answer = _scalar(got.get("answer"), "answer", cmap.get("answer") or "") if "answer" in got else None
    reference = _scalar(got.get("reference"), "reference", cmap.get("reference") or "") if "reference" in got \
        else None
    if role == "golden":
        out: dict[str, Any] = {}
        if qid is not None:
            out["id"] = qid
        out["question"] = question or ""
        out["relevant_chunk_ids"] = _texts(got.get("labels"), "labels", cmap.get("labels") or "") \
            if "labels" in got else []
        if reference is not None:
            out["expected_answer"] = reference
        return out
    contexts = _texts(got["contexts"], "contexts", cmap.get("contexts") or "") if "contexts" in got else None
    ids = _texts(got["ids"], "ids", cmap.get("ids") or "") if "ids" in got else None
    if contexts is None and ids is None:
        contexts = []  # this row retrieved nothing (the reader warns)
    ids = [i.strip() for i in ids] if ids is not None else None
    if contexts is not None and ids is not None and len(contexts) != len(ids):
        raise _Missing(f"{len(contexts)} contexts but {len(ids)} ids; contexts= and ids= must give one item each "
                       "per retrieved result")
    scores = got.get("scores")
    if scores is not None:
        raw = _decoded(scores)
        raw = raw if isinstance(raw, (list, tuple)) else [raw]
        n = len(ids if ids is not None else contexts or [])
        try:
            values = [float(s) for s in raw]
        except (TypeError, ValueError):
            raise _Missing(f"scores={cmap.get('scores')}: {raw[:3]!r} are not all numbers") from None
        if len(values) != n:
            raise _Missing(f"scores={cmap.get('scores')} gives {len(values)} scores for {n} results; give one score "
                           "per retrieved result")
        order = sorted(range(n), key=lambda i: (-values[i], i))  # highest first, ties as listed
        contexts = [contexts[i] for i in order] if contexts is not None else None
        ids = [ids[i] for i in order] if ids is not None else None
        values = [values[i] for i in order]
    if question is None and ids is not None and contexts is None:  # a run: query ids and ranked ids
        out = {"query_id": qid, "ids": ids}
        if scores is not None:
            out["scores"] = values
        return out
    out = {}
    if qid is not None:
        out["id"] = qid
    out["question"] = question or ""
    if contexts is not None:
        out["contexts"] = contexts
    if ids is not None:
        out["context_ids"] = ids
    if answer is not None:
        out["answer"] = answer
    if reference is not None:
        out["ground_truth"] = reference
    return out


def map_rows(rows: Sequence[Any], cmap: ColumnMap, filename: str, role: str | None = None,
             from_csv: bool = False) -> list[dict[str, Any]]:
    """Rows in the canonical names (see the module docstring); raise :class:`InputError` naming the
    file, the row, the key and what the path met, for the first few rows that do not fit."""
    role = role or cmap.role
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    n_bad = 0
    found: set[str] = set()
    for n, row in enumerate(rows, 1):
        where = f"data row {n}" if from_csv else f"row {n}"  # a CSV cell may span lines: its row, not a line
        try:
            out.append(_mapped_row(row, cmap, role, found))
        except _Missing as e:
            n_bad += 1
            if len(problems) < _MAX_PROBLEMS:
                problems.append(f"{where}: {e.what}")
    if n_bad:
        more = f"; and {n_bad - len(problems)} more row(s)" if n_bad > len(problems) else ""
        raise InputError(f"{filename}: the mapping {cmap.spec} does not fit {n_bad} of {len(rows)} row(s): "
                         + "; ".join(problems) + more)
    if not out:
        raise InputError(f"{filename}: no rows to map")
    never = [f"{t}={p}" for t, p in cmap.fields if t not in found]
    if never:
        fields = ", ".join(field_paths(rows)[:20])
        raise InputError(f"{filename}: no row has the field of {', '.join(never)}; the fields are {fields}")
    return out


def apply_mapping(data: bytes, filename: str, spec: str | Mapping[str, str] | ColumnMap | None,
                  role: str | None = None) -> tuple[bytes, str]:
    """``data`` read through the mapping, as JSON lines in the canonical names, and the name to give
    the readers (``<filename> (mapped).jsonl``).  Without a mapping, ``(data, filename)`` unchanged.

    ``role`` is ``"system"`` (a run or RAG log: the default unless the mapping names only labels) or
    ``"golden"`` (a golden set: question, id, labels, reference answer)."""
    cmap = parse_map(spec)
    if not cmap:
        return data, filename
    rows, _name, from_csv = read_rows(data, filename)
    mapped = map_rows(rows, cmap, filename, role, from_csv)
    text = "\n".join(json.dumps(r, ensure_ascii=False) for r in mapped) + "\n"
    return text.encode("utf-8"), mapped_name(filename)


def mapped_name(filename: str) -> str:
    """The name a mapped file is read under (its rows are JSON lines)."""
    return f"{filename} (mapped).jsonl"


def preview_rows(data: bytes, filename: str, spec: str | Mapping[str, str] | ColumnMap,
                 n: int = PREVIEW_ROWS) -> list[dict[str, Any]]:
    """The first ``n`` rows as the mapping reads them (raises :class:`InputError` like :func:`apply_mapping`)."""
    cmap = parse_map(spec)
    rows, _name, from_csv = read_rows(data, filename, limit=n)
    return map_rows(rows, cmap, filename, None, from_csv)


def read_golden_mapped(data: bytes, filename: str, spec: str | Mapping[str, str] | ColumnMap) -> tuple[Any, Any]:
    """A golden set read through a mapping that names its labels: ``(GoldenSet, ValidationReport)``."""
    from rag_metrics.io.golden import parse_golden

    text, name = apply_mapping(data, filename, spec, role="golden")
    return parse_golden(text.decode("utf-8"), "jsonl", name)
