"""What a file is: the one reader that decides, for the CLI (``evaluate``, ``validate``,
``answers``), the app's uploads and History alike.

Two steps, both pure functions of the bytes and the file name, in lower modules that the readers
share (so no reader imports this one):

1. :func:`~rag_metrics.io.containers.unwrap` (:mod:`rag_metrics.io.containers`) takes off what wraps
   the content: gzip and Parquet.  The readers themselves (:mod:`rag_metrics.io.trec`,
   :mod:`rag_metrics.io.golden`, :mod:`rag_metrics.io.corpus`, :mod:`rag_metrics.io.raglog`,
   :mod:`rag_metrics.systems.uploads`) call it first, so a ``.gz`` or ``.parquet`` file works
   wherever its plain twin does.
2. :func:`~rag_metrics.io.sniff.sniff` (:mod:`rag_metrics.io.sniff`) looks at the content and names
   its kind (:data:`KINDS`).

:func:`describe` reads a whole file with the reader its kind calls for and says in one line what
was read, or raises :class:`~rag_metrics.errors.InputError` naming the file, what it looks like and
the fix.  The names of steps 1 and 2 are importable from here as before.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from rag_metrics.errors import InputError, ValidationReport, grouped_lines
from rag_metrics.io.containers import MAX_UNWRAPPED_BYTES, is_wrapped, read_unwrapped, unwrap
from rag_metrics.io.files import loads_json, read_bytes
from rag_metrics.io.llamaindex import llamaindex_dataset
from rag_metrics.io.sniff import KINDS, Sniffed, nearest_format, sniff

__all__ = ["KINDS", "MAX_UNWRAPPED_BYTES", "FileRead", "Sniffed", "describe", "describe_bytes", "is_trec_run",
           "read_unwrapped", "sniff", "unwrap"]


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
    if not is_wrapped(head) and p.suffix.lower() not in (".jsonl", ".ndjson", ".json", ".csv", ".tsv"):
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


# FileRead.warnings: a repeated warning is shown once and then counted (examples=1), so the first
# lines a page shows (Bring shows three) always include the count.
def _first_errors(report: Any, n: int = 3) -> str:
    lines = grouped_lines(report.errors, examples=1)  # an error on every line is shown once, and counted
    errs = lines[:n]
    more = len(lines) - len(errs)
    return "; ".join(errs) + (f"; and {more} more" if more > 0 else "")


def _n(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _refuse(name: str, s: Sniffed, fix: str) -> InputError:
    seen = f" (fields: {', '.join(f if len(f) <= 60 else f[:60] + '...' for f in s.fields[:12])})" if s.fields else ""
    return InputError(f"{name}: looks like {s.label}{seen}; {fix}")


def describe(path: str | os.PathLike[str]) -> FileRead:
    """Read any supported file and say in one line what was read (see :func:`describe_bytes`)."""
    p = Path(path)
    if p.is_dir():
        from rag_metrics.io.trec import read_qrels

        golden = read_qrels(p)
        return FileRead("beir_qrels", f"{p}: BEIR folder: {len(golden)} queries with judgments", golden=golden)
    return describe_bytes(read_bytes(p), str(p))


def describe_bytes(data: bytes, filename: str, role: str | None = None, mapping: Any = None) -> FileRead:
    """What a file holds, read with the reader its kind calls for, and one line saying so.

    Raises :class:`InputError` naming the file, what it looks like and the fix, when nothing can be
    read from it.  ``mapping`` (a ``--map`` spec, :mod:`rag_metrics.io.mapping`) names the fields
    first: the file is read as the rows it maps to.
    """
    from rag_metrics.io.trec import parse_beir_qrels, parse_trec_qrels, parse_trec_run

    if mapping:
        from rag_metrics.io.mapping import apply_mapping

        data, filename = apply_mapping(data, filename, mapping)
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
                        warnings=tuple(report.warning_lines(examples=1)))
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
                        warnings=tuple(report.warning_lines(examples=1)))
    if kind in ("rag_log", "trace"):
        from rag_metrics.io.raglog import parse_rag_log

        log, report = parse_rag_log(s.data, s.filename)
        if not log.rows:
            raise InputError(f"{name}: looks like {s.label}, but no question could be read: "
                             f"{_first_errors(report) or 'no rows'}")
        if report.errors:
            raise InputError(f"{name}: looks like {s.label} but {len(report.errors)} row(s) are wrong: "
                             f"{_first_errors(report)}")
        if log.no_retrieval:
            refs = sum(1 for r in log.rows if r.ground_truth)
            if refs and not log.has_answers:  # a dataset not run yet: its questions and reference answers
                from rag_metrics.types import GoldenQuery, GoldenSet

                golden = GoldenSet(tuple(GoldenQuery(r.id, r.question, "", {}, r.ground_truth or "")
                                         for r in log.rows), PurePath(name).stem)
                return FileRead("golden", f"{name}: {s.label} that {log.no_retrieval.split(':')[0]}, read as a "
                                          f"golden set: {_n(len(golden), 'question')}, 0 with relevant ids, {refs} "
                                          "with reference answers", golden=golden,
                                warnings=tuple(report.warning_lines(examples=1)))
            raise InputError(f"{name}: looks like {s.label} but {log.no_retrieval}")
        ids = "chunk ids" if log.has_ids else "context texts (matched to a corpus by text)"
        answers = ", with answers" if log.has_answers else ""
        refs = sum(1 for r in log.rows if r.ground_truth)
        extra = f", {refs} reference answers" if refs else ""
        skipped = f"; {len(log.skipped)} left out" if getattr(log, "skipped", ()) else ""
        return FileRead(kind, f"{name}: {s.label}: {_n(len(log.rows), 'question')} with {ids}{answers}{extra}{skipped}",
                        log=log, warnings=tuple(report.warning_lines(examples=1)))
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
        from rag_metrics.io.golden import UNREAD_FIELDS

        unread = next((p.message for p in report.warnings if p.message.startswith(UNREAD_FIELDS)), "")
        why = f" ({unread.split(';')[0]})" if unread and not labelled else ""
        return FileRead(kind, f"{name}: {s.label}: {_n(len(golden), 'question')}, {labelled} with relevant ids"
                              + (f", {refs} with reference answers" if refs else "") + why, golden=golden,
                        warnings=tuple(report.warning_lines(examples=1)))
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
        raise _refuse(name, s, nearest_format(s.fields))
    raise _refuse(name, s, "expected TREC or BEIR qrels, a TREC run, JSON {qid: {id: score}}, a golden set, a RAG "
                           "log or a trace export, as text, Parquet or .gz (docs/your-files.md lists every format)")
