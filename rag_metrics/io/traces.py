"""Trace exports read as RAG logs: OpenInference (Arize Phoenix), Langfuse and LangSmith.

Over 500 lines: one reader per trace tool (Phoenix, Langfuse, LangSmith) sharing the span walk and
the refusal messages.

RAG applications often log through a tracing tool rather than a flat file.  One *trace* per
question holds a retriever step (the question and the ranked documents) and a generation step
(the answer).  This module turns each trace into one :class:`~rag_metrics.io.logrows.RagLogRow`,
so an export is a RAG log everywhere (Systems, Answers, the CLI's ``--run`` and ``--data``).

Files are JSON (a list of records, or an object holding the list under ``data``, ``spans``,
``runs`` or ``observations``) or JSONL (one record per line).  The format is detected from the
records' fields (:func:`trace_format`):

OpenInference / Phoenix spans (``phoenix``)
    A span has ``context.trace_id`` and ``context.span_id`` (nested ``"context": {...}`` or
    flattened ``context.*`` columns, as ``px.Client().get_spans_dataframe()`` writes them),
    ``parent_id``, ``span_kind`` and ``attributes`` (nested, or flattened ``attributes.*``
    columns; OTLP-style dotted keys ``retrieval.documents.0.document.id`` and nested lists
    ``retrieval.documents: [{"document.id": ...}]`` are both read).  The ``RETRIEVER`` span gives
    the question (``input.value``) and the documents ``retrieval.documents.<i>.document.id`` /
    ``.content`` / ``.score`` in rank order ``i``.  The answer is the last ``LLM`` span's
    ``llm.output_messages.<last>.message.content`` or ``output.value``, else the root span's
    ``output.value``.
Langfuse observations (``langfuse``)
    Each has ``id``, ``traceId``, ``type`` and ``input`` / ``output``.  The ``RETRIEVER``
    observation's ``input`` is the question (a string, or an object with ``query`` /
    ``question`` / ``input``), its ``output`` the documents (a list, or an object holding it
    under ``documents`` / ``results`` / ``contexts``) as strings or objects with ``id`` /
    ``content`` / ``page_content`` / ``text`` and ``score``.  The answer is the last
    ``GENERATION``'s output (a string, ``{"content"}`` or ``{"role", "content"}``).
LangSmith runs (``langsmith``)
    Each has ``id``, ``run_type``, ``trace_id`` (else the root found through ``parent_run_id``),
    ``inputs`` and ``outputs``.  The ``retriever`` run's ``inputs.query`` is the question, its
    ``outputs.documents`` the LangChain documents (``page_content``; the id from the document's
    ``id`` or ``metadata.chunk_id`` / ``metadata.id`` / ``metadata.doc_id``).  The answer is the
    root run's ``outputs`` (``output`` / ``answer`` / ``result`` / ``text``), else the last
    ``llm`` run's ``outputs.generations[0][0].text``.

Documents keep their rank order (scores are not used to re-sort: a RAG log's order is what the
application showed; scores ``n - rank`` as for every RAG log).  When every document of a trace has
an id the ids are used; otherwise the contents are matched to corpus chunks by text
(:mod:`rag_metrics.systems.textmatch`).  Each malformed trace gives one warning naming the file, the
line of its retriever record and the trace id, with the fix, and is left out; the other traces are
kept (listed in :attr:`~rag_metrics.io.logrows.RagLog.skipped`, which a system's notes repeat).
Invalid JSON is an error (the file is damaged), and so is an export where no trace can be read.  The row
id of a trace is its trace id.
"""
from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rag_metrics.errors import ValidationReport
from rag_metrics.io.files import loads_json

__all__ = ["TRACE_FORMATS", "looks_like_trace_export", "parse_trace_export", "trace_format"]

#: Formats read, by the name :func:`trace_format` returns.
TRACE_FORMATS = ("phoenix", "langfuse", "langsmith")
_WRAPPERS = ("data", "spans", "runs", "observations", "records")
_QUERY_KEYS = ("query", "question", "input", "user_input", "text")
_DOC_LIST_KEYS = ("documents", "results", "contexts", "docs", "nodes")
_DOC_TEXT_KEYS = ("content", "page_content", "text")
_DOC_ID_KEYS = ("id", "chunk_id", "doc_id", "document_id")
_ANSWER_KEYS = ("output", "answer", "result", "text", "content", "response")
_MAX_REPORTED = 200
#: Tokens whose presence (as JSON keys) marks a trace export; checked before the RAG log sniff.
_SNIFF = ('"span_kind"', '"openinference.span.kind"', '"context.span_id"', '"attributes.openinference',
          '"run_type"', '"traceId"', '"parentObservationId"')


def _first_record(text: str) -> Any:
    """The first record of a JSON list, JSONL file or wrapper object (None when it cannot be read)."""
    import json

    s = text.lstrip()
    try:
        if s.startswith("["):
            rest = s[1:].lstrip()
            return json.JSONDecoder().raw_decode(rest)[0] if rest[:1] == "{" else None
        if not s.startswith("{"):
            return None
        first, msg, _ = loads_json(s.split("\n", 1)[0])
        if msg is not None:
            first, msg, _ = loads_json(s)
        if msg is not None or not isinstance(first, Mapping):
            return None
        wrap = next((k for k in _WRAPPERS if isinstance(first.get(k), list)), None)
        if wrap is not None:
            return first[wrap][0] if first[wrap] else None
        return first
    except (ValueError, RecursionError):
        return None


def looks_like_trace_export(data: bytes | str) -> bool:
    """Does the text start with a span, observation or run (:func:`trace_format` of its first
    record)?  When the first record cannot be read (cut off), a sniff for the fields' names."""
    head = data[:1 << 20].decode("utf-8", "replace") if isinstance(data, bytes) else data[:1 << 20]
    rec = _first_record(head.lstrip("\ufeff"))
    if isinstance(rec, Mapping):
        return trace_format([rec]) is not None
    if '"contexts"' in head[:65536] or '"retrieved_contexts"' in head[:65536]:  # a RAG log that quotes a trace
        return False
    return any(tok in head[:65536] for tok in _SNIFF)


# ---- records ---------------------------------------------------------------------------------
def _with_children(records: list[tuple[int | None, Any]]) -> list[tuple[int | None, Any]]:
    """LangSmith runs with nested ``child_runs`` (``Run.dict()``, a run tree): each child becomes a
    record of its own, with ``parent_run_id`` and ``trace_id`` from its parent when it lacks them."""
    out: list[tuple[int | None, Any]] = []
    stack = list(reversed(records))
    while stack:
        line, rec = stack.pop()
        if isinstance(rec, Mapping) and isinstance(rec.get("child_runs"), list):
            kids = []
            for child in rec["child_runs"]:
                if isinstance(child, Mapping):
                    child = dict(child)
                    if _missing(child.get("parent_run_id")) and not _missing(rec.get("id")):
                        child["parent_run_id"] = rec["id"]
                    if _missing(child.get("trace_id")) and not _missing(rec.get("trace_id")):
                        child["trace_id"] = rec["trace_id"]
                kids.append((line, child))
            rec = {k: v for k, v in rec.items() if k != "child_runs"}
            stack.extend(reversed(kids))
        out.append((line, rec))
    return out


def _records(text: str, source: str, report: ValidationReport) -> list[tuple[int | None, Any]]:
    return _with_children(_records_flat(text, source, report))


def _records_flat(text: str, source: str, report: ValidationReport) -> list[tuple[int | None, Any]]:
    from rag_metrics.io.logrows import _json_list_with_lines, _rows_jsonl

    stripped = text.lstrip()
    if stripped.startswith("["):
        return _json_list_with_lines(text, source, report) or []
    data, msg, at = loads_json(text)
    if msg is None and isinstance(data, Mapping):
        wrap = next((k for k in _WRAPPERS if isinstance(data.get(k), list)), None)
        if wrap is not None:
            return [(None, r) for r in data[wrap]]
        return [(1, data)]
    if msg is None:
        report.error(f"expected a list of spans, runs or observations, got {type(data).__name__}", file=source)
        return []
    return _rows_jsonl(text, source, report)  # JSON Lines (also when saved as .json)


def _flatten(obj: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested objects and lists as dotted keys (``retrieval.documents.0.document.id``)."""
    out = {} if out is None else out
    if isinstance(obj, dict):  # JSON gives dicts and lists (exact types: fast checks on large exports)
        for k, v in obj.items():
            if isinstance(v, (dict, list)):
                _flatten(v, f"{prefix}{k}.", out)
            else:
                out[f"{prefix}{k}"] = v
    elif isinstance(obj, list) and obj and all(isinstance(x, (dict, list)) for x in obj):
        for i, v in enumerate(obj):
            _flatten(v, f"{prefix}{i}.", out)
    else:
        out[prefix[:-1]] = obj
    return out


def trace_format(records: list[Any]) -> str | None:
    """``"phoenix"``, ``"langfuse"``, ``"langsmith"`` or None, from the first records' fields."""
    for rec in records[:20]:
        if not isinstance(rec, Mapping):
            continue
        keys = set(rec)
        if "run_type" in keys:
            return "langsmith"
        if "traceId" in keys and "type" in keys:
            return "langfuse"
        flat_keys = {k for k in _flatten(rec)}
        if ("span_kind" in keys or "attributes.openinference.span.kind" in flat_keys
                or "context.span_id" in flat_keys or "context.trace_id" in flat_keys):
            return "phoenix"
    return None


# ---- one trace -------------------------------------------------------------------------------
@dataclass
class _Step:
    """One span / observation / run, reduced to what a RAG log row needs."""

    kind: str  # "retriever", "llm", "other"
    line: int | None
    order: int
    start: tuple[int, float, str] = (2, 0.0, "")
    parent: str | None = None
    span_id: str = ""
    question: Any = None
    docs: list[tuple[Any, Any]] | None = None  # (id or None, text or None) in rank order
    found_in: str = ""  # a SPAN / GENERATION whose output holds documents ("" for a retriever step)
    raw_kind: str = ""  # the record's own kind (SPAN, GENERATION, chain ...) for messages
    answer: Any = None
    problems: list[str] = field(default_factory=list)


def _when(v: Any) -> tuple[int, float, str]:
    """A sort key of a start time: epoch numbers (pandas' ``to_json`` writes milliseconds) by value,
    ISO strings as text, a missing time last."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v):
        return (0, float(v), "")
    if isinstance(v, str) and v.strip():
        return (1, 0.0, v.strip())
    return (2, 0.0, "")


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip())


def _as_text(v: Any, keys: tuple[str, ...]) -> str | None:
    """A string, or the first string under ``keys`` of an object (JSON text decoded first)."""
    if _missing(v):
        return None
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("{"):
            obj, msg, _ = loads_json(s)
            if msg is not None and len(s) < 10000:  # a Python dict's repr, as some SDKs log tool inputs
                try:
                    obj, msg = ast.literal_eval(s), None
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    pass
            if msg is None and isinstance(obj, Mapping):
                return _as_text(obj, keys)
        return v
    if isinstance(v, Mapping):
        for k in keys:
            t = _as_text(v.get(k), keys)
            if t is not None:
                return t
        return None
    if isinstance(v, list) and v:
        return _as_text(v[-1], keys)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    return None


def _doc(obj: Any) -> tuple[Any, Any]:
    """``(id, text)`` of one retrieved document object (or string)."""
    if isinstance(obj, str):
        return None, obj
    if not isinstance(obj, Mapping):
        return None, None
    if isinstance(obj.get("document"), Mapping):  # {"document": {"id", "content"}}
        obj = obj["document"]
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    did = next((obj[k] for k in _DOC_ID_KEYS if not _missing(obj.get(k))), None)
    if did is None:
        did = next((meta[k] for k in _DOC_ID_KEYS if not _missing(meta.get(k))), None)
    text = next((obj[k] for k in _DOC_TEXT_KEYS if isinstance(obj.get(k), str)), None)
    return did, text


def _doc_list(v: Any) -> list[Any] | None:
    if isinstance(v, str):
        obj, msg, _ = loads_json(v) if v.strip()[:1] in "[{" else (None, "", None)
        if msg is None:
            v = obj
    if isinstance(v, Mapping):
        v = next((v[k] for k in _DOC_LIST_KEYS if isinstance(v.get(k), list)), None)
    return v if isinstance(v, list) else None


def _documents_in(v: Any) -> list[tuple[Any, Any]] | None:
    """The documents in the output of a span that is not marked as a retriever: a list (directly,
    under a document-list key, or under ``content`` as LangChain tool messages hold it) of objects
    that each have an id or a text (``url`` counts as an id for web-search results).  None when the
    output holds no such list (an answer, messages, a plain value)."""
    if isinstance(v, str):
        obj, msg, _ = loads_json(v) if v.strip()[:1] in "[{" else (None, "", None)
        if msg is not None:
            return None
        v = obj
    if isinstance(v, Mapping):
        v = next((v[k] for k in (*_DOC_LIST_KEYS, "content", "output") if isinstance(v.get(k), list)), None)
    if not isinstance(v, list) or not v or not all(isinstance(d, Mapping) for d in v):
        return None
    if any(k in d for d in v for k in ("role", "tool_calls")):  # chat messages, not documents
        return None
    docs = []
    for d in v:
        did, text = _doc(d)
        if did is None and not _missing(d.get("url")):
            did = d.get("url")
        if did is None and text is None:
            return None
        docs.append((did, text))
    return docs


def _phoenix_step(rec: Mapping[str, Any], line: int | None, order: int) -> tuple[str, _Step]:
    flat = _flatten(rec)
    attrs = {k[len("attributes."):]: v for k, v in flat.items() if k.startswith("attributes.")}
    kind = str(rec.get("span_kind") or attrs.get("openinference.span.kind") or "").upper()
    trace_id = flat.get("context.trace_id", rec.get("trace_id"))
    step = _Step("retriever" if kind == "RETRIEVER" else "llm" if kind == "LLM" else "other", line, order,
                 _when(rec.get("start_time")), None, str(flat.get("context.span_id", rec.get("span_id")) or ""))
    step.raw_kind = kind or "span without kind"
    parent = rec.get("parent_id", flat.get("context.parent_id"))
    step.parent = None if _missing(parent) else str(parent)
    question = attrs.get("input.value")
    if question is not None and str(attrs.get("input.mime_type", "")).endswith("json"):
        question = _as_text(question, _QUERY_KEYS)
    step.question = question
    if step.kind == "retriever":
        docs: dict[int, dict[str, Any]] = {}
        for k, v in attrs.items():
            if not k.startswith("retrieval.documents."):
                continue
            rest = k[len("retrieval.documents."):]
            idx, _, name = rest.partition(".")
            if not idx.isdigit():
                continue
            docs.setdefault(int(idx), {})[name] = v
        listed = any(k == "retrieval.documents" or k.startswith("retrieval.documents.") for k in attrs)
        step.docs = [(d.get("document.id"), d.get("document.content")) for _, d in sorted(docs.items())] \
            if listed else None
    msgs = sorted({int(k.split(".")[2]) for k in attrs if k.startswith("llm.output_messages.")
                   and k.split(".")[2].isdigit()})
    content = attrs.get(f"llm.output_messages.{msgs[-1]}.message.content") if msgs else None
    step.answer = content if not _missing(content) else attrs.get("output.value")
    return ("" if _missing(trace_id) else str(trace_id)), step


def _langfuse_step(rec: Mapping[str, Any], line: int | None, order: int) -> tuple[str, _Step]:
    kind = str(rec.get("type") or "").upper()
    step = _Step("retriever" if kind == "RETRIEVER" else "llm" if kind == "GENERATION" else "other", line, order,
                 _when(rec.get("startTime")), None, str(rec.get("id") or ""))
    step.raw_kind = kind or "observation without type"
    parent = rec.get("parentObservationId")
    step.parent = None if _missing(parent) else str(parent)
    step.question = _as_text(rec.get("input"), _QUERY_KEYS)
    if step.kind == "retriever":
        docs = _doc_list(rec.get("output"))
        step.docs = None if docs is None else [_doc(d) for d in docs]
    elif kind in ("SPAN", "GENERATION"):  # a retrieval logged as a plain span: documents in its output
        found = _documents_in(rec.get("output"))
        if found is not None:
            step.docs, step.found_in = found, f"{kind} {str(rec.get('name') or step.span_id)!r}"
    step.answer = _as_text(rec.get("output"), _ANSWER_KEYS) if step.kind == "llm" else None
    trace_id = rec.get("traceId")
    return ("" if _missing(trace_id) else str(trace_id)), step


def _langsmith_step(rec: Mapping[str, Any], line: int | None, order: int) -> tuple[str, _Step]:
    kind = str(rec.get("run_type") or "").lower()
    step = _Step("retriever" if kind == "retriever" else "llm" if kind in ("llm", "chat_model") else "other", line,
                 order, _when(rec.get("start_time")), None, str(rec.get("id") or ""))
    step.raw_kind = kind or "run without run_type"
    parent = rec.get("parent_run_id")
    step.parent = None if _missing(parent) else str(parent)
    inputs, outputs = rec.get("inputs"), rec.get("outputs")
    step.question = _as_text(inputs, _QUERY_KEYS)
    if step.kind == "retriever":
        docs = _doc_list(outputs)
        if docs is None and isinstance(outputs, Mapping):  # @traceable(run_type="retriever"): {"output": [...]}
            docs = _doc_list(outputs.get("output"))
        step.docs = None if docs is None else [_doc(d) for d in docs]
    elif step.kind == "llm" and isinstance(outputs, Mapping) and isinstance(outputs.get("generations"), list):
        gens = outputs["generations"]
        first = gens[0][0] if gens and isinstance(gens[0], list) and gens[0] else (gens[0] if gens else None)
        step.answer = _as_text(first, ("text", "message", "content"))
    else:
        step.answer = _as_text(outputs, _ANSWER_KEYS)
    trace_id = rec.get("trace_id")
    return ("" if _missing(trace_id) else str(trace_id)), step


_READERS = {"phoenix": _phoenix_step, "langfuse": _langfuse_step, "langsmith": _langsmith_step}
_RETRIEVER_NAME = {"phoenix": "RETRIEVER span (span_kind or attributes.openinference.span.kind)",
                   "langfuse": "RETRIEVER observation (type)", "langsmith": "retriever run (run_type)"}
_DOCS_FIELD = {"phoenix": "attributes retrieval.documents.<i>.document.id / .content",
               "langfuse": "output (a list of documents)", "langsmith": "outputs.documents"}
_QUESTION_FIELD = {"phoenix": "attributes input.value", "langfuse": "input", "langsmith": "inputs.query"}


def _count_kinds(steps: list[_Step]) -> dict[str, int]:
    out: dict[str, int] = {}
    for st in steps:
        out[st.raw_kind or st.kind] = out.get(st.raw_kind or st.kind, 0) + 1
    return out


def _root_of(step_id: str, parents: Mapping[str, str | None]) -> str:
    seen = set()
    while parents.get(step_id) and step_id not in seen:
        seen.add(step_id)
        step_id = str(parents[step_id])
    return step_id


def parse_trace_export(text: str, source: str, report: ValidationReport) -> Any:
    """The traces of an export as a :class:`~rag_metrics.io.logrows.RagLog` (one row per trace).

    Problems go to ``report`` (each malformed trace once, with file:line and trace id); never raises
    on content.
    """
    from rag_metrics.io.logrows import RagLog, RagLogRow

    records = _records(text, source, report)
    fmt = trace_format([r for _, r in records])
    if fmt is None:
        if records and report.ok:
            report.error("not a trace export this reader knows: expected OpenInference/Phoenix spans (span_kind, "
                         "context.trace_id, attributes), Langfuse observations (traceId, type) or LangSmith runs "
                         "(run_type); or save the log with 'question' and 'contexts' columns", file=source)
        return RagLog((), source)
    reader = _READERS[fmt]
    skipped: list[str] = []
    traces: dict[str, list[_Step]] = {}
    parents: dict[str, str | None] = {}
    orphans = 0
    for n, (line, rec) in enumerate(records, 1):
        if not isinstance(rec, Mapping):
            report.warning(f"record {n} is {type(rec).__name__}, not an object; each line or list item must be one "
                           "span, observation or run; the record is left out", file=source, line=line)
            skipped.append(f"{source}:{line if line is not None else n}: record {n} is not an object")
            continue
        tid, step = reader(rec, line, n)
        if step.span_id:
            parents[step.span_id] = step.parent
        if not tid and fmt == "langsmith" and step.span_id:
            tid = "\0" + step.span_id  # resolved through parent_run_id below
        if not tid:
            orphans += 1
            if orphans <= _MAX_REPORTED:
                report.warning("record has no trace id (context.trace_id / traceId / trace_id); export whole "
                               "traces; the record is left out", file=source, line=line)
            skipped.append(f"{source}:{line if line is not None else n}: a record without a trace id")
            continue
        traces.setdefault(tid, []).append(step)
    if fmt == "langsmith":  # runs without trace_id join the trace of their root run
        merged: dict[str, list[_Step]] = {}
        for tid, steps in traces.items():
            key = _root_of(tid[1:], parents) if tid.startswith("\0") else tid
            merged.setdefault(key, []).extend(steps)
        traces = merged
    rows: list[RagLogRow] = []
    bad = 0

    def fail(msg: str, tid: str, line: int | None) -> None:
        nonlocal bad
        bad += 1
        skipped.append(f"{source}:{line}: trace {tid!r}: {msg}" if line is not None else f"trace {tid!r}: {msg}")
        if bad <= _MAX_REPORTED:
            report.warning(f"trace {tid!r}: {msg}; the trace is left out (the other traces are kept)", file=source,
                           line=line, query_id=tid)

    for tid, steps in traces.items():
        retr = [s for s in steps if s.kind == "retriever"] or [s for s in steps if s.found_in]
        where = steps[0].line
        if not retr:
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(_count_kinds(steps).items()))
            fail(f"no {_RETRIEVER_NAME[fmt]} and no step whose output holds a list of documents (it has {kinds}); "
                 "a trace needs the retrieval step to be evaluated: log the retrieval as a retriever step, or "
                 "return the documents (objects with an id or a text) from a span", tid, where)
            continue
        retr.sort(key=lambda s: (*s.start, s.order))
        r = retr[0]
        if len(retr) > 1:
            report.warning(f"trace {tid!r}: {len(retr)} retriever steps; the first one is used", file=source,
                           line=r.line, query_id=tid)
        here = {x.span_id for x in steps}
        roots = [s for s in steps if s.parent is None or s.parent not in here]
        root = min(roots, key=lambda s: (*s.start, s.order)) if roots else None
        question = _as_text(r.question, _QUERY_KEYS) or (
            _as_text(root.question, _QUERY_KEYS) if root is not None else None)
        if not question or not question.strip():
            fail(f"the retriever step has no question ({_QUESTION_FIELD[fmt]})", tid, r.line)
            continue
        if r.docs is None:
            fail(f"the retriever step has no document list ({_DOCS_FIELD[fmt]})", tid, r.line)
            continue
        odd = next((n for n, (d, _) in enumerate(r.docs, 1) if isinstance(d, (Mapping, list, bool))), None)
        if odd is not None:
            fail(f"document {odd} has an id that is not a string or number; give document ids as strings", tid,
                 r.line)
            continue
        ids = [None if _missing(d) else str(d).strip() for d, _ in r.docs]
        texts = [t if isinstance(t, str) else None for _, t in r.docs]
        bad_doc = next((i for i, (d, t) in enumerate(zip(ids, texts), 1) if d is None and t is None), None)
        if bad_doc is not None:
            fail(f"document {bad_doc} has neither an id nor a text ({_DOCS_FIELD[fmt]})", tid, r.line)
            continue
        context_ids: tuple[str, ...] | None = None
        contexts: tuple[str, ...] = ()
        if all(d is not None for d in ids):
            context_ids = tuple(str(d) for d in ids)
            contexts = tuple(t or "" for t in texts) if all(t is not None for t in texts) else ()
        elif all(t is not None for t in texts):
            contexts = tuple(str(t) for t in texts)
            if any(d is not None for d in ids):
                report.warning(f"trace {tid!r}: some documents have ids and some do not; all are matched to the "
                               "corpus by text", file=source, line=r.line, query_id=tid)
        else:
            first = next(i for i, t in enumerate(texts, 1) if t is None)
            other = next(i for i, d in enumerate(ids, 1) if d is None)
            fail(f"document {first} has an id but no text and document {other} a text but no id; give every "
                 "document an id, or every one its text", tid, r.line)
            continue
        if not r.docs:
            report.warning(f"trace {tid!r}: the retriever returned no document; this question counts as retrieving "
                           "nothing", file=source, line=r.line, query_id=tid)
        llms = sorted((s for s in steps if s.kind == "llm" and not _missing(s.answer)),
                      key=lambda s: (*s.start, s.order))
        answer = _as_text(llms[-1].answer, _ANSWER_KEYS) if llms else None
        if answer is None and root is not None and root is not r:
            answer = _as_text(root.answer, _ANSWER_KEYS)
        rows.append(RagLogRow(id=tid, question=question.strip(), contexts=contexts, context_ids=context_ids,
                              answer=answer, ground_truth=None, line=r.line, row=len(rows) + 1))
    if bad > _MAX_REPORTED:
        report.warning(f"{bad - _MAX_REPORTED} more malformed traces not listed", file=source)
    if orphans > _MAX_REPORTED:
        report.warning(f"{orphans - _MAX_REPORTED} more records without a trace id not listed", file=source)
    if not rows and report.ok:
        listed = "; ".join(skipped[:3]) + (f"; and {len(skipped) - 3} more" if len(skipped) > 3 else "")
        report.error("no trace could be read" + (f" ({len(skipped)} left out: {listed})" if skipped else "")
                     + "; export whole traces with their retriever step", file=source)
    return RagLog(tuple(rows), source, skipped=tuple(skipped))
