"""What a file is: :func:`sniff` looks at the content (its gzip / Parquet wrapping taken off by
:func:`rag_metrics.io.containers.unwrap`) and names its kind (:data:`KINDS`).

The kinds: TREC/BEIR qrels, TREC run, JSON qrels / run (pytrec_eval, ranx), a run table (CSV/JSONL
with ids), a RAG log (question and contexts: ragas, DeepEval, home-made ``retrieved`` lists), a
trace export (Phoenix, Langfuse, LangSmith), a golden set, a LlamaIndex
``EmbeddingQAFinetuneDataset``, a corpus or BEIR queries.  A pure function of the bytes and the
file name; the readers that act on the kind are :func:`rag_metrics.formats.describe` and
:func:`rag_metrics.io.trec.read_qrels`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from rag_metrics.io.containers import unwrap
from rag_metrics.io.files import loads_json
from rag_metrics.io.golden import _ANS_KEYS as _REFERENCE_KEYS
from rag_metrics.io.golden import GOLDEN_FIELDS, RELEVANT_ID_KEYS, id_lists
from rag_metrics.io.logrows import (
    ANSWER_KEYS,
    CONTEXT_ID_KEYS,
    CONTEXT_KEYS,
    QUESTION_KEYS,
    ROW_WRAPPER_KEYS,
    SINGLE_CONTEXT_KEY,
    contexts_hint,
)
from rag_metrics.io.traces import looks_like_trace_export

__all__ = ["KINDS", "Sniffed", "nearest_format", "sniff"]

#: Kinds :func:`sniff` names, with the words used in messages.
KINDS: dict[str, str] = {
    "trec_qrels": "TREC qrels (qid iter docid grade)",
    "beir_qrels": "BEIR qrels (query-id corpus-id score)",
    "trec_run": "a TREC run (qid Q0 docid rank score tag)",
    "json_qrels": "JSON qrels {qid: {id: grade}} or {qid: [ids]} (pytrec_eval, ranx)",
    "json_run": "a JSON run {qid: {id: score}} (pytrec_eval, ranx)",
    "run_table": "a run table (query and ranked ids, CSV/JSON)",
    "rag_log": "a RAG log (questions with retrieved contexts)",
    "trace": "a trace export (Phoenix, Langfuse or LangSmith)",
    "golden": "a golden set (questions with relevant ids)",
    "llamaindex": "a LlamaIndex EmbeddingQAFinetuneDataset (queries, corpus, relevant_docs)",
    "corpus": "a corpus (documents with ids and texts)",
    "saved_run": "an evaluation saved by `rag-metrics evaluate --save-run` (History)",
    "queries": "BEIR queries (ids and question texts, no judgments)",
    "records": "a table of records this reader has no use for",
    "empty": "an empty file",
    "binary": "binary data",
    "unknown": "text in no format this reader knows",
}

# The field names are the readers' own (one list each: rag_metrics.io.logrows for RAG logs,
# rag_metrics.io.golden for golden sets), so what the sniff calls a log is what the log reader reads.
_QUESTION_KEYS = QUESTION_KEYS
_CONTEXT_KEYS = CONTEXT_KEYS + CONTEXT_ID_KEYS
_RUN_LIST_KEYS = ("ids", "chunk_ids", "doc_ids", "results", "ranking")
_RELEVANT_KEYS = ("relevant", *RELEVANT_ID_KEYS)
#: Answers only a system gives (a golden set's reference answer is never named so).
_SYSTEM_ANSWER_KEYS = tuple(k for k in ANSWER_KEYS if k not in _REFERENCE_KEYS)


@dataclass(frozen=True)
class Sniffed:
    """The content of a file with its wrapping taken off, and what it is.

    ``data`` and ``filename`` are what the format readers get (a ``.gz`` name loses its ``.gz``; a
    Parquet table that is not a run or qrels becomes ``<name>.jsonl``); ``wrapping`` says what was
    taken off (``"gzip"``, ``"Parquet"``); ``kind`` is a key of :data:`KINDS`; ``fields`` the
    column / key names seen (for messages).
    """

    kind: str
    data: bytes
    filename: str
    wrapping: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``"gzip-compressed TREC run (...)"``: the kind with its wrapping, for one-line summaries."""
        what = KINDS.get(self.kind, self.kind)
        for w in reversed(self.wrapping):
            what = f"a {w} file holding {what}"
        return what


def _keys_of(rows: list[Any]) -> list[str]:
    keys: dict[str, None] = {}
    for r in rows[:50]:
        if isinstance(r, Mapping):
            keys.update(dict.fromkeys(str(k) for k in r))
    return list(keys)


def _kind_of_rows(keys: list[str]) -> str:
    ks = set(keys)
    if ks & set(_RELEVANT_KEYS) and ks & {"question", "query", "text"}:  # labels: a golden set, whatever else
        return "golden"
    if ks & set(_QUESTION_KEYS) and (ks & set(_CONTEXT_KEYS) or SINGLE_CONTEXT_KEY in ks):
        return "rag_log"
    if ks & set(_RUN_LIST_KEYS) and ks & {"query_id", "qid", "q_id", "id", *_QUESTION_KEYS}:
        return "run_table"
    if (ks & {"query_id", "qid", "q_id", *_QUESTION_KEYS} and ks & {"chunk_id", "doc_id", "docid"}
            and ks & {"score", "rank"}):
        return "run_table"
    if ks & set(_RELEVANT_KEYS):
        return "golden"
    if ks & set(_QUESTION_KEYS) and (ks & set(_SYSTEM_ANSWER_KEYS) or ("answer" in ks and ks - GOLDEN_FIELDS)):
        # the system's own answer, with fields a golden set does not have: a RAG log whose contexts
        # field has another name (the log reader names it), never a golden set of "reference" answers
        return "rag_log"
    if "question" in ks or (ks & set(_QUESTION_KEYS) and ks & set(_REFERENCE_KEYS)):
        return "golden"
    if ks & {"_id", "id", "doc_id"} and "text" in ks:
        return "corpus" if ks & {"title"} or "_id" not in ks else "queries"
    if ks & {"query", "text"} and ks & {"id", "query_id", "qid"}:
        return "golden"
    return "records"


def _kind_of_json(value: Any, text: str) -> tuple[str, list[str]]:
    if isinstance(value, Mapping):
        keys = [str(k) for k in value]
        if {"queries", "corpus", "relevant_docs"} <= set(keys):
            return "llamaindex", keys
        if {"values", "query_ids", "metrics"} <= set(keys):
            return "saved_run", keys
        if looks_like_trace_export(text):
            return "trace", keys
        if id_lists(value):  # {qid: [ids]}: binary qrels
            return "json_qrels", keys
        inner = list(value.values())[:200]
        if inner and all(isinstance(v, Mapping) for v in inner):
            nums = [x for v in inner for x in v.values()]
            if nums and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in nums):
                whole = all(isinstance(x, int) for x in nums)  # grades are integers; "2.0" is a score
                return ("json_qrels" if whole else "json_run"), keys
        for wrap in ("queries", *ROW_WRAPPER_KEYS):
            if isinstance(value.get(wrap), list):
                return _kind_of_rows(_keys_of(value[wrap])), _keys_of(value[wrap])
        if all(isinstance(v, list) for v in value.values()) and value:  # columnar {"question": [...], ...}
            return _kind_of_rows(keys), keys
        return _kind_of_rows(keys), keys
    if isinstance(value, list):
        if looks_like_trace_export(text):
            return "trace", _keys_of(value)
        keys = _keys_of(value)
        return _kind_of_rows(keys), keys
    return "unknown", []


def _kind_of_lines(text: str, suffix: str) -> tuple[str, list[str]]:
    first = ""
    for ln in text.splitlines():
        if ln.strip() and not ln.lstrip().startswith("#"):
            first = ln
            break
    if not first:
        return "empty", []
    if first.lower().startswith("query-id"):
        return "beir_qrels", first.split()
    fields = first.split()
    if len(fields) == 6 and fields[1] in ("Q0", "q0", "0"):
        return "trec_run", []
    if len(fields) == 4 and suffix not in (".csv",) and "," not in first:
        return "trec_qrels", []
    if len(first.split("\t")) == 3 and len(fields) == 3:
        return "beir_qrels", []
    if suffix in (".csv", ".tsv") or "," in first or "\t" in first:
        import csv

        delim = "\t" if (suffix == ".tsv" or first.count("\t") > first.count(",")) else ","
        try:
            header = next(csv.reader([first], delimiter=delim))
        except csv.Error:
            header = []
        cols = [h.strip() for h in header]
        if len(cols) >= 2:
            return _kind_of_rows(cols), cols
    return "unknown", []


def sniff(data: bytes, filename: str, role: str | None = None) -> Sniffed:
    """What ``data`` (a file named ``filename``) is: see the module docstring.  Never raises on
    content, except for a damaged gzip or Parquet wrapping (:class:`InputError`)."""
    data, name, wraps = unwrap(data, filename, role)
    if not data.strip():
        return Sniffed("empty", data, name, wraps)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return Sniffed("binary", data, name, wraps)
    suffix = PurePath(name).suffix.lower()
    stripped = text.lstrip()
    if stripped[:1] in "[{":
        value, msg, _ = loads_json(text)
        if msg is None:
            kind, keys = _kind_of_json(value, text)
            return Sniffed(kind, data, name, wraps, tuple(keys[:30]))
        # JSON lines: one object a line
        if looks_like_trace_export(text):
            return Sniffed("trace", data, name, wraps)
        rows = []
        for ln in text.splitlines()[:50]:
            if ln.strip():
                v, m, _ = loads_json(ln)
                if m is None:
                    rows.append(v)
        if rows:
            keys = _keys_of(rows)
            return Sniffed(_kind_of_rows(keys), data, name, wraps, tuple(keys[:30]))
        return Sniffed("unknown", data, name, wraps)
    kind, cols = _kind_of_lines(text, suffix)
    return Sniffed(kind, data, name, wraps, tuple(cols[:30]))


def nearest_format(fields: tuple[str, ...] | list[str]) -> str:
    """The fix for a table of records (kind ``records``): the format its fields come nearest to, and
    what to rename; the words :func:`rag_metrics.formats.describe_bytes` and the app's upload reader
    both refuse such a file with."""

    keys = [str(f) for f in fields]
    low = " ".join(keys).lower()
    if any(w in low for w in ("question", "query", "input", "prompt")):
        hint = contexts_hint(keys)
        return (f"nearest: a RAG log or a golden set; {hint}name the question field 'question', the retrieved "
                "contexts 'contexts' (a RAG log) or the relevant ids 'relevant_chunk_ids' (a golden set) "
                "(docs/your-files.md lists every format and the names read)")
    if any("title" in k.lower() or k.lower() in ("text", "content", "body", "page_content", "description")
           for k in keys):
        body = next((k for k in keys if any(w in k.lower() for w in ("text", "content", "body", "description"))),
                    None)
        rename = f" (rename {body!r} to 'text')" if body and body != "text" else ""
        return (f"nearest: a corpus: for a corpus save JSON lines with 'id' and 'text' per document{rename} "
                "(docs/your-files.md lists every format)")
    return ("no question, id or text field this reader uses; for a corpus save JSON lines with 'id' and 'text' "
            "per document, for a golden set rows with 'question' and 'relevant_chunk_ids', for a RAG log rows with "
            "'question' and 'contexts' (docs/your-files.md lists every format)")
