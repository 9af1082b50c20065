"""What a file is: the one reader that decides, for the CLI (``evaluate``, ``validate``,
``answers``), the app's uploads and History alike.

Over 500 lines: the one reader that decides what a file is; its sniffers and its refusal messages
are one table of kinds.

Two steps, both pure functions of the bytes and the file name:

1. :func:`unwrap` takes off what wraps the content: gzip (``.gz``, detected by its magic bytes,
   around any supported format) and Parquet (``PAR1``).  A Parquet table with a query column, an id
   column and a score column (``q_id, doc_id, score`` as ``ranx`` writes it) becomes TREC text (qrels
   when the scores are whole numbers, else a run); any other table becomes JSON lines, one object a
   row, so a RAG log, a golden set or a corpus saved as Parquet reads like its JSONL twin.
2. :func:`sniff` looks at the content and names its kind (:data:`KINDS`): TREC/BEIR qrels, TREC
   run, JSON qrels / run (pytrec_eval, ranx), a run table (CSV/JSONL with ids), a RAG log (question
   and contexts: ragas, DeepEval, home-made ``retrieved`` lists), a trace export (Phoenix, Langfuse,
   LangSmith), a golden set, a LlamaIndex ``EmbeddingQAFinetuneDataset``, a corpus or BEIR queries.

:func:`describe` reads a whole file with the reader its kind calls for and says in one line what
was read, or raises :class:`~rag_metrics.errors.InputError` naming the file, what it looks like and
the fix.  The readers themselves (:mod:`rag_metrics.io.trec`, :mod:`rag_metrics.io.golden`,
:mod:`rag_metrics.systems.uploads`, :mod:`rag_metrics.systems.raglog`) call :func:`unwrap` first, so
a ``.gz`` or ``.parquet`` file works wherever its plain twin does.
"""
from __future__ import annotations

import json
import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.io.files import loads_json, read_bytes

__all__ = ["KINDS", "MAX_UNWRAPPED_BYTES", "FileRead", "Sniffed", "describe", "describe_bytes", "is_trec_run",
           "read_unwrapped", "sniff", "unwrap"]

#: Largest content read out of a ``.gz`` or Parquet file (bytes, as the upload limit).
MAX_UNWRAPPED_BYTES = 200 * 1024 * 1024

#: Kinds :func:`sniff` names, with the words used in messages.
KINDS: dict[str, str] = {
    "trec_qrels": "TREC qrels (qid iter docid grade)",
    "beir_qrels": "BEIR qrels (query-id corpus-id score)",
    "trec_run": "a TREC run (qid Q0 docid rank score tag)",
    "json_qrels": "JSON qrels {qid: {id: grade}} (pytrec_eval, ranx)",
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

_GZIP_MAGIC = b"\x1f\x8b"
_PARQUET_MAGIC = b"PAR1"
_QID_COLS = ("q_id", "query_id", "qid", "query-id", "query")
_DOC_COLS = ("doc_id", "docid", "chunk_id", "corpus-id", "doc")
_SCORE_COLS = ("score", "grade", "relevance", "rel", "label")
_QUESTION_KEYS = ("question", "user_input", "query", "input")
_CONTEXT_KEYS = ("contexts", "retrieved_contexts", "retrieved_texts", "retrieval_context", "retrieved",
                 "retrieved_chunks", "context_ids", "retrieved_ids", "retrieved_context_ids")
_RUN_LIST_KEYS = ("ids", "chunk_ids", "doc_ids", "results", "ranking")
_RELEVANT_KEYS = ("relevant", "relevant_chunk_ids", "relevant_ids", "gold_chunk_id", "gold_chunk_ids")


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


def _gunzip(data: bytes, name: str) -> bytes:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    try:
        while True:
            out += d.decompress(data, MAX_UNWRAPPED_BYTES + 1 - len(out))
            if len(out) > MAX_UNWRAPPED_BYTES:
                raise InputError(f"{name}: gzip content is over {MAX_UNWRAPPED_BYTES:,} bytes; evaluate a smaller "
                                 "file or split it")
            data = d.unconsumed_tail
            if d.eof and d.unused_data[:2] == _GZIP_MAGIC:  # several gzip members one after another
                data, d = d.unused_data, zlib.decompressobj(16 + zlib.MAX_WBITS)
                continue
            if d.eof or not data:
                break
    except zlib.error as e:
        raise InputError(f"{name}: looks like a gzip file (it starts with 1f 8b) but cannot be decompressed "
                         f"({e}); compress it again with gzip, or give the file uncompressed") from None
    if not d.eof:
        raise InputError(f"{name}: the gzip file is cut off (no end of stream); copy the whole file again, "
                         "or give it uncompressed")
    return bytes(out)


def _column(names: list[str], wanted: tuple[str, ...]) -> str | None:
    low = {n.lower(): n for n in names}
    return next((low[w] for w in wanted if w in low), None)


def _parquet(data: bytes, name: str, role: str | None) -> tuple[bytes, str, str]:
    """Parquet bytes -> (text bytes, file name for the readers, what it became)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a requirement
        raise InputError(f"{name}: a Parquet file, and reading Parquet needs pyarrow; `pip install pyarrow`, or "
                         "save the table as CSV") from None
    try:
        table = pq.read_table(pa.py_buffer(data))
    except (pa.ArrowException, OSError, ValueError) as e:
        raise InputError(f"{name}: starts like a Parquet file (PAR1) but cannot be read ({str(e)[:200]}); write it "
                         "again (e.g. DataFrame.to_parquet), or save it as CSV") from None
    cols = list(table.column_names)
    q, d, s = _column(cols, _QID_COLS), _column(cols, _DOC_COLS), _column(cols, _SCORE_COLS)
    if q and d and s and not (set(c.lower() for c in cols) & {"question", "contexts", "text"}):
        import pyarrow.types as pt

        whole = pt.is_integer(table.schema.field(s).type)
        as_qrels = role == "qrels" or (role is None and whole)
        qs, ds, ss = (table.column(c).to_pylist() for c in (q, d, s))
        if as_qrels:
            lines = [f"{a} 0 {b} {c}" for a, b, c in zip(qs, ds, ss)]
        else:
            rank: dict[Any, int] = {}
            lines = []
            for a, b, c in zip(qs, ds, ss):
                rank[a] = rank.get(a, 0) + 1
                lines.append(f"{a} Q0 {b} {rank[a]} {c} {PurePath(name).stem}")
        text = "\n".join(lines) + "\n"
        return text.encode("utf-8"), name, f"Parquet ({q}, {d}, {s})"
    rows = table.to_pylist()
    text = "\n".join(json.dumps(r, ensure_ascii=False, default=str) for r in rows) + "\n"
    return text.encode("utf-8"), f"{name}.jsonl", "Parquet"


def unwrap(data: bytes, filename: str, role: str | None = None) -> tuple[bytes, str, tuple[str, ...]]:
    """Take gzip and Parquet off ``data``: ``(content, name for the readers, wrappings taken off)``.

    ``role`` (``"qrels"``, ``"run"`` or None) decides what a ``q_id, doc_id, score`` Parquet table
    becomes; without it whole-number scores make qrels.  Raises :class:`InputError` for a damaged
    gzip or Parquet file.  Content in neither wrapping comes back unchanged.
    """
    wraps: list[str] = []
    name = filename or "file"
    for _ in range(3):  # a .parquet.gz, at most
        if data[:2] == _GZIP_MAGIC:
            data = _gunzip(data, name)
            p = PurePath(name)
            if p.suffix.lower() in (".gz", ".gzip"):
                name = str(p.with_suffix(""))
            wraps.append("gzip-compressed")
        elif data[:4] == _PARQUET_MAGIC:
            data, name, what = _parquet(data, name, role)
            wraps.append(what)
        else:
            break
    return data, name, tuple(wraps)


def read_unwrapped(path: str | os.PathLike[str], role: str | None = None) -> tuple[bytes, str, tuple[str, ...]]:
    """:func:`unwrap` of a file's bytes (messages name ``path``)."""
    return unwrap(read_bytes(path), str(path), role)


# ---- sniffing ----------------------------------------------------------------------------------
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
    if ks & set(_QUESTION_KEYS) and ks & set(_CONTEXT_KEYS):
        return "rag_log"
    if ks & set(_RUN_LIST_KEYS) and ks & {"query_id", "qid", "q_id", "question", "id"}:
        return "run_table"
    if ks & {"query_id", "qid", "q_id"} and ks & {"chunk_id", "doc_id", "docid"} and ks & {"score", "rank"}:
        return "run_table"
    if ks & set(_RELEVANT_KEYS) or (ks & {"question"}):
        return "golden"
    if ks & {"_id", "id", "doc_id"} and "text" in ks:
        return "corpus" if ks & {"title"} or "_id" not in ks else "queries"
    if ks & {"query", "text"} and ks & {"id", "query_id", "qid"}:
        return "golden"
    return "records"


def _kind_of_json(value: Any, text: str) -> tuple[str, list[str]]:
    from rag_metrics.systems.traces import looks_like_trace_export

    if isinstance(value, Mapping):
        keys = [str(k) for k in value]
        if {"queries", "corpus", "relevant_docs"} <= set(keys):
            return "llamaindex", keys
        if {"values", "query_ids", "metrics"} <= set(keys):
            return "saved_run", keys
        if looks_like_trace_export(text):
            return "trace", keys
        inner = list(value.values())[:200]
        if inner and all(isinstance(v, Mapping) for v in inner):
            nums = [x for v in inner for x in v.values()]
            if nums and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in nums):
                whole = all(isinstance(x, int) for x in nums)  # grades are integers; "2.0" is a score
                return ("json_qrels" if whole else "json_run"), keys
        for wrap in ("queries", "rows", "data", "samples", "records", "test_cases", "goldens"):
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
        from rag_metrics.systems.traces import looks_like_trace_export

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


def is_trec_run(path: str | os.PathLike[str]) -> bool:
    """Whether a ``--run`` file is a TREC run (read by :func:`rag_metrics.io.trec.read_run`) rather than
    a file matched to the golden questions (a RAG log, trace export, CSV/JSON run): the one test
    ``evaluate``, ``compare`` and ``validate --run`` share."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            head = f.read(4)
    except OSError:
        return True  # read_run names the problem (missing file, folder, permission)
    if (head[:2] != _GZIP_MAGIC and head[:4] != _PARQUET_MAGIC
            and p.suffix.lower() not in (".jsonl", ".ndjson", ".json", ".csv", ".tsv")):
        return True  # a TREC run by name: the fast reader handles large files
    s = sniff(read_bytes(p), str(p), role="run")
    return s.kind in ("trec_run", "trec_qrels", "beir_qrels", "empty", "unknown", "binary")


# ---- one line: what was read ---------------------------------------------------------------------
@dataclass(frozen=True)
class FileRead:
    """What :func:`describe` read: the kind, a one-line summary, and the objects read."""

    kind: str
    summary: str
    golden: Any = None  # GoldenSet
    run: Any = None  # Run
    log: Any = None  # RagLog
    corpus: Any = None  # Corpus (LlamaIndex corpus nodes)
    warnings: tuple[str, ...] = ()


def _first_errors(report: Any, n: int = 3) -> str:
    errs = [str(p) for p in report.errors[:n]]
    more = len(report.errors) - len(errs)
    return "; ".join(errs) + (f"; and {more} more" if more > 0 else "")


def _n(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _refuse(name: str, s: Sniffed, fix: str) -> InputError:
    seen = f" (fields: {', '.join(s.fields[:12])})" if s.fields else ""
    return InputError(f"{name}: looks like {s.label}{seen}; {fix}")


def llamaindex_dataset(value: Mapping[str, Any], source: str) -> tuple[Any, Any, list[str]]:
    """A LlamaIndex ``EmbeddingQAFinetuneDataset`` as ``(GoldenSet, Corpus, warnings)``.

    ``queries`` ``{qid: text}`` give the questions, ``relevant_docs`` ``{qid: [node_id]}`` the
    relevant ids (grade 1), ``corpus`` ``{node_id: text}`` one document per node, whose id is the
    node id (so the golden ids name documents of this corpus; evaluate at ``--level document`` or
    with runs that return node ids).
    """
    from rag_metrics.types import Corpus, Document, GoldenQuery, GoldenSet

    queries, corpus, rel = value.get("queries"), value.get("corpus"), value.get("relevant_docs")
    for key, v in (("queries", queries), ("corpus", corpus), ("relevant_docs", rel)):
        if not isinstance(v, Mapping):
            raise InputError(f"{source}: field {key!r} of a LlamaIndex EmbeddingQAFinetuneDataset must be an object "
                             f"{{id: ...}}, got {type(v).__name__}; save the dataset again with "
                             "dataset.save_json(path)")
    assert isinstance(queries, Mapping) and isinstance(corpus, Mapping) and isinstance(rel, Mapping)
    warnings: list[str] = []
    out = []
    for qid, text in queries.items():
        ids = rel.get(qid, [])
        if isinstance(ids, str):
            ids = [ids]
        if not isinstance(ids, list):
            warnings.append(f"{source}: relevant_docs[{qid!r}] is not a list; the query has no relevant id")
            ids = []
        missing = [i for i in ids if str(i) not in corpus]
        if missing:
            warnings.append(f"{source}: query {qid!r}: relevant node {missing[0]!r} is not in 'corpus'")
        out.append(GoldenQuery(str(qid), str(text), "", {str(i): 1 for i in ids}))
    stray = [q for q in rel if q not in queries]
    if stray:
        warnings.append(f"{source}: relevant_docs names {len(stray)} query id(s) not in 'queries' (first "
                        f"{stray[0]!r}); they are left out")
    docs = tuple(Document(str(i), str(t), str(i), source) for i, t in corpus.items())
    name = PurePath(source).stem
    return GoldenSet(tuple(out), name), Corpus(docs, name=name), warnings


def describe(path: str | os.PathLike[str]) -> FileRead:
    """Read any supported file and say in one line what was read (see :func:`describe_bytes`)."""
    p = Path(path)
    if p.is_dir():
        from rag_metrics.io.trec import read_qrels

        golden = read_qrels(p)
        return FileRead("beir_qrels", f"{p}: BEIR folder: {len(golden)} queries with judgments", golden=golden)
    return describe_bytes(read_bytes(p), str(p))


def describe_bytes(data: bytes, filename: str, role: str | None = None) -> FileRead:
    """What a file holds, read with the reader its kind calls for, and one line saying so.

    Raises :class:`InputError` naming the file, what it looks like and the fix, when nothing can be
    read from it.
    """
    from rag_metrics.errors import ValidationReport
    from rag_metrics.io.trec import parse_beir_qrels, parse_trec_qrels, parse_trec_run

    s = sniff(data, filename, role)
    name = filename
    text = s.data.decode("utf-8-sig", "replace")
    kind = s.kind
    if kind == "empty":
        raise InputError(f"{name}: the file is empty; give a run, qrels, golden set, RAG log or trace export")
    if kind == "binary":
        raise InputError(f"{name}: binary data in no format this reader knows (first bytes "
                         f"{s.data[:4].hex(' ')}); give a text file (TREC, CSV, JSON, JSONL), a Parquet table, or "
                         "a .gz of one")
    if kind in ("trec_qrels", "beir_qrels", "json_qrels"):
        if kind == "json_qrels":
            from rag_metrics.io.golden import parse_golden

            golden, report = parse_golden(text, "json", name)
            qrels = {q.id: dict(q.relevant) for q in golden}
        else:
            qrels, report = (parse_trec_qrels if kind == "trec_qrels" else parse_beir_qrels)(text, name)
        if report.errors:
            raise InputError(f"{name}: looks like {s.label} but {len(report.errors)} line(s) are wrong: "
                             f"{_first_errors(report)}")
        n = sum(len(v) for v in qrels.values())
        from rag_metrics.io.trec import _golden_from_qrels

        return FileRead(kind, f"{name}: {s.label}: {len(qrels)} queries, {n} judgments",
                        golden=_golden_from_qrels(qrels, {}, PurePath(name).stem),
                        warnings=tuple(str(p) for p in report.warnings))
    if kind in ("trec_run", "json_run", "run_table"):
        if kind == "trec_run":
            run, report = parse_trec_run(s.data, name)
        else:
            from rag_metrics.systems.uploads import parse_run_upload

            up, report = parse_run_upload(s.data, s.filename)
            run = up.run
        if report.errors:
            raise InputError(f"{name}: looks like {s.label} but {len(report.errors)} problem(s): "
                             f"{_first_errors(report)}")
        nq = len(run.query_ids()) if len(run) else 0
        return FileRead(kind, f"{name}: {s.label}: {nq} queries, {len(run)} ranked ids", run=run,
                        warnings=tuple(str(p) for p in report.warnings))
    if kind in ("rag_log", "trace"):
        from rag_metrics.systems.raglog import parse_rag_log

        log, report = parse_rag_log(s.data, s.filename)
        if not log.rows:
            raise InputError(f"{name}: looks like {s.label}, but no question could be read: "
                             f"{_first_errors(report) or 'no rows'}")
        if report.errors:
            raise InputError(f"{name}: looks like {s.label} but {len(report.errors)} row(s) are wrong: "
                             f"{_first_errors(report)}")
        ids = "chunk ids" if log.has_ids else "context texts (matched to a corpus by text)"
        answers = ", with answers" if log.has_answers else ""
        refs = sum(1 for r in log.rows if r.ground_truth)
        extra = f", {refs} reference answers" if refs else ""
        skipped = f"; {len(log.skipped)} left out" if getattr(log, "skipped", ()) else ""
        return FileRead(kind, f"{name}: {s.label}: {_n(len(log.rows), 'question')} with {ids}{answers}{extra}{skipped}",
                        log=log, warnings=tuple(str(p) for p in report.warnings))
    if kind == "llamaindex":
        value, msg, _ = loads_json(text)
        golden, corpus, warns = llamaindex_dataset(value, name)
        n_rel = sum(len(q.relevant) for q in golden)
        return FileRead(kind, f"{name}: {s.label}: a golden set of {len(golden)} questions ({n_rel} relevant ids) "
                              f"and a corpus of {len(corpus.documents)} nodes", golden=golden, corpus=corpus,
                        warnings=tuple(warns))
    if kind == "golden":
        from rag_metrics.io.golden import parse_golden

        fmt = PurePath(s.filename).suffix.lower().lstrip(".")
        if fmt not in ("csv", "json", "jsonl"):
            fmt = "json" if text.lstrip()[:1] in "[{" and loads_json(text)[1] is None else "jsonl"
        golden, report = parse_golden(text, fmt, name)
        if report.errors:
            raise InputError(f"{name}: looks like {s.label} but {len(report.errors)} row(s) are wrong: "
                             f"{_first_errors(report)}")
        labelled = sum(1 for q in golden if q.has_relevant)
        refs = sum(1 for q in golden if q.expected_answer)
        return FileRead(kind, f"{name}: {s.label}: {len(golden)} questions, {labelled} with relevant ids"
                              + (f", {refs} with reference answers" if refs else ""), golden=golden,
                        warnings=tuple(str(p) for p in report.warnings))
    if kind == "saved_run":
        from rag_metrics.compare.history import parse_saved_run

        saved = parse_saved_run(text, name)
        return FileRead(kind, f"{name}: {s.label}: run {saved.name!r}, {len(saved.query_ids)} questions, "
                              f"{', '.join(saved.metrics[:6])}")
    if kind == "queries":
        n = sum(1 for ln in text.splitlines() if ln.strip())
        return FileRead(kind, f"{name}: {s.label}: {n} questions, no judgments (add the qrels, e.g. "
                              "qrels/test.tsv of the same BEIR folder)")
    if kind == "corpus":
        from rag_metrics.io.corpus import parse_corpus_jsonl

        report = ValidationReport()
        try:
            corpus = parse_corpus_jsonl(text, name, report=report)
        except InputError as e:
            raise _refuse(name, s, f"save it as JSON lines with 'id' and 'text' per document ({e})") from None
        return FileRead(kind, f"{name}: {s.label}: {len(corpus)} documents", corpus=corpus)
    if kind == "records":
        raise _refuse(name, s, "no question, id or text field this reader uses; for a corpus save JSON lines "
                               "with 'id' and 'text' per document, for a golden set rows with 'question' and "
                               "'relevant_chunk_ids', for a RAG log rows with 'question' and 'contexts' "
                               "(docs/your-files.md lists every format)")
    raise _refuse(name, s, "expected TREC or BEIR qrels, a TREC run, JSON {qid: {id: score}}, a golden set, a RAG "
                           "log or a trace export, as text, Parquet or .gz (docs/your-files.md lists every format)")
