"""TREC and BEIR relevance judgments (qrels), BEIR folders, and the one qrels reader that decides
what a judgments file is; TREC runs are :mod:`rag_metrics.io.trec_runs` (their names are importable
from here too).

- TREC qrels: ``qid iter docid grade`` (whitespace separated; ``iter`` is ignored, usually 0).
- BEIR qrels: tab-separated with header ``query-id	corpus-id	score``.
- TREC run: ``qid Q0 docid rank score tag`` (:mod:`rag_metrics.io.trec_runs`).
- BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/test.tsv`` or ``qrels.tsv``.
- Lines starting with ``#`` are comments; ids may contain ``#``.
- Anything else :func:`read_qrels` is given (gzip or Parquet around qrels, JSON qrels, a LlamaIndex
  dataset, a RAG log or trace export) is recognised by :func:`rag_metrics.io.sniff.sniff`.

Bounds at the edge: a grade is an integer in ``[GRADE_MIN, GRADE_MAX]``
(:data:`rag_metrics.limits.GRADE_MIN`, -1000 .. 1000) written in ASCII digits; a score is a
finite float64.  Anything else is reported with file:line, never converted, wrapped or crashed on.

``read_*`` functions return the value and a :class:`ValidationReport` (content problems never
raise); ``load_*`` raise :class:`InputError` on the first error.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.containers import is_wrapped
from rag_metrics.io.files import atomic_write_text, decode_utf8, loads_json, read_bytes
from rag_metrics.io.golden import GOLDEN_SUFFIXES, read_golden
from rag_metrics.io.llamaindex import llamaindex_dataset
from rag_metrics.io.sniff import KINDS, sniff
from rag_metrics.io.trec_runs import (
    _FAST_MIN,
    _FLOAT,
    MAX_REPORTED,
    _numpy,
    _show,
    load_run,
    parse_trec_run,
    read_run,
    run_to_text,
    validate_run,
    write_trec_run,
)
from rag_metrics.limits import GRADE_MAX, GRADE_MIN, id_problem
from rag_metrics.types import GoldenQuery, GoldenSet

__all__ = [  # grouped by kind, not sorted
    "parse_trec_qrels", "parse_beir_qrels", "read_qrels", "load_qrels", "qrels_to_text",
    "parse_trec_run", "read_run", "load_run", "run_to_text", "write_trec_run", "write_trec_qrels",
    "read_queries_jsonl", "find_beir_qrels", "load_beir", "validate_run",
]

_INT = re.compile(r"[+-]?[0-9]+")


def _int_grade(tok: str, what: str = "grade") -> int | str:
    """The grade in a file field, or a message saying why it is not one.

    Accepted: an integer in [GRADE_MIN, GRADE_MAX] written with ASCII digits (``2``, ``-1``, ``+3``),
    or a finite float with no fraction (``2.0``).  Rejected with a message: ``²`` and other
    characters that ``str.isdigit`` accepts, fractions, ``inf``/``nan``, and anything outside the
    range (``3000000000``, ``1e308``, a 5000-digit number), so no grade can overflow or wrap.
    """
    t = tok.strip()
    fix = f"use whole numbers from {GRADE_MIN} to {GRADE_MAX} (0 = not relevant, e.g. 0-3)"
    if _INT.fullmatch(t):
        digits = t.lstrip("+-").lstrip("0")
        g = int(t) if len(digits) <= len(str(GRADE_MAX)) + 1 else None  # never convert a huge number
    elif _FLOAT.fullmatch(t):
        f = float(t)
        if not f.is_integer():  # fractions and inf (1e999)
            return f"{what} {_show(tok)} is not an integer; {fix}"
        g = int(f) if abs(f) <= 1e9 else None
    else:
        return f"{what} {_show(tok)} is not an integer; {fix}"
    if g is None or not GRADE_MIN <= g <= GRADE_MAX:
        return f"{what} {_show(tok)} is outside the accepted range [{GRADE_MIN}, {GRADE_MAX}]; {fix}"
    return g


def _qrels_rows(lines, source: str, report: ValidationReport, parse_line: Callable, start_line: int = 1):
    order: dict[str, dict[str, int]] = {}
    n_problems = 0
    for n, line in enumerate(lines, start_line):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        got = parse_line(line)
        if isinstance(got, str):
            n_problems += 1
            if n_problems <= MAX_REPORTED:
                report.error(got, file=source, line=n)
            continue
        qid, did, g = got
        if g < 0:
            report.warning(f"grade {g} is negative; it is treated as non-relevant", file=source, line=n, query_id=qid)
        rel = order.setdefault(qid, {})
        if did in rel:
            report.warning(f"id {did!r} judged twice for this query; the later grade {g} replaces {rel[did]}",
                           file=source, line=n, query_id=qid)
        rel[did] = g
    if n_problems > MAX_REPORTED:
        report.error(f"{n_problems - MAX_REPORTED} more malformed lines not listed", file=source)
    return order


def _trec_qrels_line(line: str):
    parts = line.split()
    if len(parts) != 4:
        return (f"expected 4 fields 'qid iter docid grade', found {len(parts)}: {line.strip()[:80]!r}; "
                "TREC qrels have one judgment per line")
    g = _int_grade(parts[3])
    return g if isinstance(g, str) else (parts[0], parts[2], g)


def _beir_qrels_line(line: str):
    parts = line.rstrip("\r\n").split("\t")
    if len(parts) != 3:
        parts = line.split()
    if len(parts) != 3:
        return (f"expected 3 tab-separated fields 'query-id corpus-id score', found {len(parts)}: "
                f"{line.strip()[:80]!r}")
    g = _int_grade(parts[2], "score")
    return g if isinstance(g, str) else (parts[0].strip(), parts[1].strip(), g)


def parse_trec_qrels(text: str, source: str = "qrels") -> tuple[dict[str, dict[str, int]], ValidationReport]:
    report = ValidationReport()
    return _qrels_rows(text.splitlines(), source, report, _trec_qrels_line), report


def parse_beir_qrels(text: str, source: str = "qrels.tsv") -> tuple[dict[str, dict[str, int]], ValidationReport]:
    report = ValidationReport()
    lines = text.splitlines()
    if lines and lines[0].lower().startswith("query-id"):
        return _qrels_rows(lines[1:], source, report, _beir_qrels_line, start_line=2), report
    return _qrels_rows(lines, source, report, _beir_qrels_line), report


def read_queries_jsonl(path: str | os.PathLike[str]) -> tuple[dict[str, str], ValidationReport]:
    """BEIR ``queries.jsonl``: ``{"id"|"_id": str, "text": str}`` per line.

    Content problems (invalid or too deeply nested JSON, ids TREC cannot hold, duplicates) are
    collected in the report with ``file:line``; an unreadable file raises :class:`InputError`.
    """
    p = Path(path)
    report = ValidationReport()
    out: dict[str, str] = {}
    for n, line in enumerate(decode_utf8(read_bytes(p), str(p)).splitlines(), 1):
        if not line.strip():
            continue
        obj, msg, _ = loads_json(line)
        if msg is not None:
            report.error(f"{msg}; each line must be one JSON object", file=str(p), line=n)
            continue
        if not isinstance(obj, dict):
            report.error("expected a JSON object {\"id\": ..., \"text\": ...}", file=str(p), line=n)
            continue
        qid = obj.get("id", obj.get("_id"))
        text = obj.get("text", obj.get("question", obj.get("query")))
        if qid is None or isinstance(qid, (bool, dict, list)) or str(qid).strip() == "":
            report.error("missing 'id'", file=str(p), line=n)
            continue
        qid = str(qid)
        bad = id_problem(qid, "query id")
        if bad is not None:
            report.error(bad, file=str(p), line=n)
            continue
        if text is None or isinstance(text, (dict, list)) or not str(text).strip():
            report.error("empty query text", file=str(p), line=n, query_id=qid)
            text = ""
        if qid in out:
            report.error(f"duplicate query id {qid!r}", file=str(p), line=n, query_id=qid)
            continue
        out[qid] = str(text)
    return out, report


def find_beir_qrels(folder: Path) -> Path | None:
    """The qrels file of a BEIR folder (test, then top-level, dev, train), or ``None``."""
    for cand in (folder / "qrels" / "test.tsv", folder / "qrels.tsv", folder / "qrels" / "dev.tsv",
                 folder / "qrels" / "train.tsv"):
        try:
            if cand.is_file():
                return cand
        except OSError:  # unreadable parent: treated as absent, load_beir says what is missing
            continue
    return None


def _golden_from_qrels(qrels: dict[str, dict[str, int]], questions: dict[str, str], name: str) -> GoldenSet:
    return GoldenSet(tuple(GoldenQuery(q, questions.get(q, ""), "", rel) for q, rel in qrels.items()), name)


def read_qrels(path: str | os.PathLike[str], with_report: bool = False):
    """Relevance judgments from any supported source, as a :class:`GoldenSet`.

    ``path`` may be a golden-set file (.csv/.json/.jsonl), a TREC qrels file, a BEIR qrels .tsv
    (header ``query-id corpus-id score``) or a BEIR folder.  Raises :class:`InputError` on errors
    unless ``with_report`` (then returns ``(golden, report)``).
    """
    p = Path(path)
    if not p.is_dir():
        other = _qrels_by_kind(p)
        if other is not None:
            golden, report = other
            if with_report:
                return golden, report
            report.raise_if_errors()
            return golden
    if p.is_dir():
        qp = find_beir_qrels(p)
        if qp is None:
            raise InputError(f"{p}: folder has no qrels/test.tsv or qrels.tsv; give a qrels file or a BEIR folder")
        qrels, report = parse_beir_qrels(decode_utf8(read_bytes(qp), str(qp)), str(qp))
        questions: dict[str, str] = {}
        if (p / "queries.jsonl").is_file():
            questions, qrep = read_queries_jsonl(p / "queries.jsonl")
            report.extend(qrep.problems)
        golden = _golden_from_qrels(qrels, questions, p.name)
    elif p.suffix.lower() in GOLDEN_SUFFIXES:
        golden, report = read_golden(p)
    elif p.is_file() and p.stat().st_size >= _FAST_MIN and (fast := _arrow_qrels(p)) is not None:
        golden, report = _golden_from_qrels(fast, {}, p.stem), ValidationReport()
    else:
        text = decode_utf8(read_bytes(p), str(p))
        first = next((line for line in text.splitlines() if line.strip()), "")
        if not first:
            raise InputError(f"{p}: file is empty; expected TREC qrels lines 'qid 0 docid grade'")
        if first.lower().startswith("query-id") or (len(first.split("\t")) == 3 and len(first.split()) == 3):
            qrels, report = parse_beir_qrels(text, str(p))
        else:
            qrels, report = parse_trec_qrels(text, str(p))
        golden = _golden_from_qrels(qrels, {}, p.stem)
    if with_report:
        return golden, report
    report.raise_if_errors()
    if len(golden) == 0:
        raise InputError(f"{p}: no judgments found; expected TREC qrels 'qid 0 docid grade', BEIR qrels "
                         "or a golden set")
    return golden


def _qrels_by_kind(p: Path) -> tuple[GoldenSet, ValidationReport] | None:
    """Judgments from a file :func:`rag_metrics.io.sniff.sniff` does not leave to the plain readers
    below: gzip or Parquet around qrels, a LlamaIndex dataset, a RAG log or trace export (its
    questions, with reference answers and no labels yet); a run given as judgments is refused.
    None for plain TREC/BEIR qrels and golden sets (the readers below, with their fast paths)."""
    try:
        with open(p, "rb") as f:
            head = f.read(4)
    except OSError:
        return None  # the readers below name the problem
    wrapped = is_wrapped(head)
    if not wrapped and p.suffix.lower() not in (".json", ".jsonl", ".csv", ".tsv", ".txt", ".trec", ".qrels", ""):
        return None
    if not wrapped and p.stat().st_size >= _FAST_MIN and p.suffix.lower() not in (".json",):
        return None  # large TREC / golden files: the fast readers below
    sn = sniff(read_bytes(p), str(p), role="qrels")
    report = ValidationReport()
    if sn.kind in ("trec_run", "json_run", "run_table"):
        raise InputError(f"{p}: looks like {KINDS[sn.kind]}, not relevance judgments; give it as the run "
                         "(--run) and the judgments (TREC/BEIR qrels or a golden set) as the qrels")
    if sn.kind == "llamaindex":
        from rag_metrics.io.files import loads_json

        golden, _corpus, warns = llamaindex_dataset(loads_json(decode_utf8(sn.data, str(p)))[0], str(p))
        for w in warns:
            report.warning(w.split(": ", 1)[-1], file=str(p))
        return golden, report
    if sn.kind in ("rag_log", "trace"):
        from rag_metrics.io.raglog import parse_rag_log

        log, report = parse_rag_log(sn.data, sn.filename)
        golden = GoldenSet(tuple(GoldenQuery(r.id, r.question, "", {}, r.ground_truth or "") for r in log.rows),
                           p.stem)
        if log.rows:
            report.warning(f"{KINDS[sn.kind]}: {len(log.rows)} questions without relevant ids; label them (the "
                           "Golden set page proposes evidence from reference answers) or give qrels",
                           file=str(p))
        return golden, report
    if not sn.wrapping:
        return None
    text = decode_utf8(sn.data, str(p))
    if sn.kind in ("golden", "json_qrels"):
        suffix = Path(sn.filename).suffix.lower().lstrip(".")
        from rag_metrics.io.golden import parse_golden

        return parse_golden(text, suffix if suffix in ("csv", "json", "jsonl") else "json", str(p))
    if sn.kind == "beir_qrels":
        qrels, report = parse_beir_qrels(text, str(p))
    else:
        qrels, report = parse_trec_qrels(text, str(p))
    return _golden_from_qrels(qrels, {}, Path(sn.filename).stem), report


def _arrow_qrels(path: Path) -> dict[str, dict[str, int]] | None:
    """Fast path for large, regular TREC qrels (``qid iter docid grade``, one space or tab).

    pyarrow's CSV reader splits and types the whole file in C++ (ids dictionary-encoded, grades
    int64); the ``{qid: {id: grade}}`` dicts are then built one query at a time.  Returns None
    (the caller parses line by line and reports every problem with file:line) when pyarrow is
    missing or anything is irregular: another field count, a grade that is not a plain integer in
    [0, GRADE_MAX] (negative grades get a warning per line), an id judged twice, a comment line.
    """
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow comes with pandas/streamlit
        return None
    data = path.read_bytes()
    first = data[:4096].split(b"\n", 1)[0]
    delim = "\t" if b"\t" in first else " "
    if (first.startswith(b"#") or first != first.strip() or b"  " in first or (delim == "\t" and b" " in first)
            or len(first.split()) != 4):
        return None
    import pyarrow.compute as pc

    try:
        tbl = pacsv.read_csv(
            pa.py_buffer(data),
            pacsv.ReadOptions(column_names=["q", "it", "d", "g"], use_threads=False, block_size=len(data) + 1),
            pacsv.ParseOptions(delimiter=delim, quote_char=False, double_quote=False, escape_char=False,
                               newlines_in_values=False, ignore_empty_lines=True),
            pacsv.ConvertOptions(column_types={"q": pa.string(), "d": pa.string(), "g": pa.int64()},
                                 include_columns=["q", "d", "g"], strings_can_be_null=False, null_values=[]))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, ValueError, UnicodeDecodeError):
        return None
    del data
    if tbl.num_rows == 0:
        return None
    # strings read plainly, then one hash pass each (about 3x faster than Arrow's dictionary columns)
    q = pc.dictionary_encode(tbl.column("q").combine_chunks())
    d = pc.dictionary_encode(tbl.column("d").combine_chunks())
    g = tbl.column("g").combine_chunks()
    if g.null_count:
        return None
    grades = _numpy(g, np.int64)
    if grades.min() < 0 or grades.max() > GRADE_MAX:
        return None
    qids = q.dictionary.to_pylist()
    if any(x.startswith("#") for x in qids):
        return None
    qc = _numpy(q.indices, np.int32)
    order = np.argsort(qc, kind="stable")  # lines grouped by query, queries in first-seen order
    counts = np.bincount(qc, minlength=len(qids)).tolist()
    ids = np.asarray(d.dictionary.to_pylist(), dtype=object)[_numpy(d.indices, np.int32)[order]].tolist()
    gr = grades[order].tolist()
    out: dict[str, dict[str, int]] = {}
    lo = 0
    for qid, c in zip(qids, counts):
        rel = dict(zip(ids[lo:lo + c], gr[lo:lo + c]))
        if len(rel) != c:  # an id judged twice: the careful parser warns with the line
            return None
        out[qid] = rel
        lo += c
    return out


def load_qrels(path: str | os.PathLike[str]) -> GoldenSet:
    return read_qrels(path)


def qrels_to_text(golden: GoldenSet) -> str:
    """TREC qrels text ``qid 0 docid grade``; out-of-scope queries have no line."""
    lines = []
    for q in golden:
        for i, g in q.relevant.items():
            if any(c.isspace() for c in q.id + i):
                raise InputError(f"query {q.id!r}: id {i!r} or the query id contains whitespace, "
                                 "which TREC qrels cannot hold")
            lines.append(f"{q.id} 0 {i} {g}\n")
    return "".join(lines)


def write_trec_qrels(golden: GoldenSet, path: str | os.PathLike[str]) -> None:
    atomic_write_text(path, qrels_to_text(golden))


def load_beir(folder: str | os.PathLike[str]):
    """A BEIR folder as ``(Corpus, GoldenSet)`` (questions from queries.jsonl, labels from qrels).

    Raises :class:`InputError` (never another exception) when the path is not a folder, cannot be
    read, or lacks ``corpus.jsonl`` or a qrels file.
    """
    from rag_metrics.io.corpus import load_corpus

    raw = str(folder).strip()
    if not raw:
        raise InputError("no BEIR folder given; type the path of a folder that holds corpus.jsonl, "
                         "queries.jsonl and qrels/test.tsv")
    p = Path(raw).expanduser()
    shown = raw if len(raw) <= 200 else raw[:200] + "..."
    try:
        is_dir = p.is_dir()
        is_file = not is_dir and p.exists()
        has_corpus = is_dir and (p / "corpus.jsonl").is_file()
        os.listdir(p) if is_dir else None
    except PermissionError:
        raise InputError(f"{shown}: permission denied; choose a folder this server can read") from None
    except OSError as e:
        raise InputError(f"{shown}: cannot open ({e.strerror or e}); check the path") from None
    if is_file:
        raise InputError(f"{shown}: is a file, not a folder; give the BEIR folder that holds corpus.jsonl, "
                         "queries.jsonl and qrels/test.tsv")
    if not is_dir:
        raise InputError(f"{shown}: folder not found; a BEIR folder holds corpus.jsonl, queries.jsonl and qrels")
    if not has_corpus:
        raise InputError(f"{shown}: no corpus.jsonl in this folder; a BEIR folder holds corpus.jsonl, "
                         "queries.jsonl and qrels/test.tsv (or qrels.tsv)")
    if find_beir_qrels(p) is None:
        raise InputError(f"{shown}: no qrels/test.tsv (or qrels.tsv, qrels/dev.tsv) in this folder; "
                         "add the relevance judgments")
    corpus = load_corpus(p)
    golden = read_qrels(p)
    return corpus, golden
