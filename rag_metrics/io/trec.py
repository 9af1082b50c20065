"""TREC qrels and runs, BEIR folders, and format detection for relevance judgments.

Over 500 lines: the TREC and BEIR readers share one line reader, one error format and the format
detection, which decides between them.

- TREC qrels: ``qid iter docid grade`` (whitespace separated; ``iter`` is ignored, usually 0).
- BEIR qrels: tab-separated with header ``query-id	corpus-id	score``.
- TREC run: ``qid Q0 docid rank score tag``.  The rank column is ignored: like trec_eval we rank
  by score (ties by docid descending).
- BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/test.tsv`` or ``qrels.tsv``.
- Lines starting with ``#`` are comments; ids may contain ``#``.

Bounds at the edge: a grade is an integer in ``[GRADE_MIN, GRADE_MAX]``
(:data:`rag_metrics.limits.GRADE_MIN`, -1000 .. 1000) written in ASCII digits; a score is a
finite float64.  Anything else is reported with file:line, never converted, wrapped or crashed on.

``read_*`` functions return the value and a :class:`ValidationReport` (content problems never
raise); ``load_*`` raise :class:`InputError` on the first error.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import re
from collections.abc import Callable, Collection
from pathlib import Path

import numpy as np

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.files import atomic_write_text, decode_utf8, read_bytes
from rag_metrics.io.golden import GOLDEN_SUFFIXES, read_golden
from rag_metrics.limits import GRADE_MAX, GRADE_MIN
from rag_metrics.types import GoldenQuery, GoldenSet, Run

__all__ = [  # grouped by kind, not sorted
    "parse_trec_qrels", "parse_beir_qrels", "read_qrels", "load_qrels", "qrels_to_text",
    "parse_trec_run", "read_run", "load_run", "run_to_text", "write_trec_run", "write_trec_qrels",
    "read_queries_jsonl", "find_beir_qrels", "load_beir", "validate_run",
]

MAX_REPORTED = 200  # problems listed per file before summarising


_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # ASCII, as C's strtod reads


def _show(tok: str, limit: int = 40) -> str:
    """A token for a message: quoted, and cut when long (a 5000-digit number is not echoed whole)."""
    return repr(tok) if len(tok) <= limit else f"{tok[:limit]!r}... ({len(tok)} characters)"


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


def _score(tok: str) -> float | str:
    """The score in a run field, or a message: a finite float64 written in ASCII (C's strtod)."""
    if not _FLOAT.fullmatch(tok):
        if tok.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            return (f"score {_show(tok)} is not a finite number (NaN and infinity cannot be ranked); "
                    "every retrieved id needs a finite score")
        return f"score {_show(tok)} is not a number (5th field of 'qid Q0 docid rank score tag')"
    s = float(tok)
    if not math.isfinite(s):
        return (f"score {_show(tok)} is outside the float64 range (about ±1.8e308); "
                "rescale the scores (only their order matters)")
    return s


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
    from rag_metrics.io.files import loads_json
    from rag_metrics.limits import id_problem

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


_FAST_MIN = 1 << 20  # files at least this large (bytes) try the Arrow readers first


def _qrels_by_kind(p: Path) -> tuple[GoldenSet, ValidationReport] | None:
    """Judgments from a file :func:`rag_metrics.formats.sniff` does not leave to the plain readers
    below: gzip or Parquet around qrels, a LlamaIndex dataset, a RAG log or trace export (its
    questions, with reference answers and no labels yet); a run given as judgments is refused.
    None for plain TREC/BEIR qrels and golden sets (the readers below, with their fast paths)."""
    from rag_metrics.formats import KINDS, llamaindex_dataset, sniff

    try:
        with open(p, "rb") as f:
            head = f.read(4)
    except OSError:
        return None  # the readers below name the problem
    wrapped = head[:2] == b"\x1f\x8b" or head[:4] == b"PAR1"
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
        from rag_metrics.systems.raglog import parse_rag_log

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


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------

def _slow_run_parse(text: str, source: str, report: ValidationReport) -> Run:
    qids: list[str] = []
    ids: list[str] = []
    scores: list[float] = []
    n_problems = 0
    n_extra, first_extra = 0, 0

    def problem(msg: str, n: int) -> None:
        nonlocal n_problems
        n_problems += 1
        if n_problems <= MAX_REPORTED:
            report.error(msg, file=source, line=n)

    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) < 6:
            problem(f"expected 6 fields 'qid Q0 docid rank score tag', found {len(parts)}: {line.strip()[:80]!r}", n)
            continue
        if len(parts) > 6:  # trec_eval reads six fields and ignores the rest of the line
            n_extra += 1
            first_extra = first_extra or n
        s = _score(parts[4])
        if isinstance(s, str):
            problem(s, n)
            continue
        qids.append(parts[0])
        ids.append(parts[2])
        scores.append(s)
    if n_problems > MAX_REPORTED:
        report.error(f"{n_problems - MAX_REPORTED} more malformed lines not listed", file=source)
    if n_extra:
        report.warning(f"{n_extra} line{'s have' if n_extra > 1 else ' has'} text after the sixth field (the tag), "
                       f"first at line {first_extra}; it is ignored, as trec_eval does", file=source)
    return Run(np.array(qids, dtype=object), np.array(ids, dtype=object), np.array(scores, dtype=np.float64),
               name=Path(source).stem)


def parse_trec_run(data: bytes | str, source: str = "run") -> tuple[Run, ValidationReport]:
    """Parse a TREC run.  Fast path with pandas' C reader; on any irregularity a line-by-line
    pass reports every problem with file:line."""
    report = ValidationReport()
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data.strip():
        report.error("run file is empty; expected lines 'qid Q0 docid rank score tag'", file=source)
        return Run(np.array([], object), np.array([], object), np.array([], float), Path(source).stem), report
    import pandas as pd

    try:
        df = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, engine="c", comment=None,
                         dtype={0: str, 1: str, 2: str, 3: str, 4: np.float64, 5: str},
                         names=list(range(6)), na_filter=False, skip_blank_lines=True,
                         on_bad_lines="error", encoding="utf-8")
        ok = (len(df.columns) == 6 and not (df[5] == "").any() and df[4].dtype == np.float64
              and bool(np.isfinite(df[4].to_numpy()).all()) and not df[0].str.startswith("#").any())
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError):
        ok = False
    if ok and not df.empty and str(df.iat[0, 0]).startswith("#"):
        ok = False
    if not ok:
        run = _slow_run_parse(decode_utf8(data, source), source, report)
        return run, report
    qc, qu = pd.factorize(df[0])
    ic, iu = pd.factorize(df[2])
    run = Run.from_factorized(qc, np.asarray(qu, dtype=object), ic, np.asarray(iu, dtype=object),
                              df[4].to_numpy(np.float64), name=str(df.iat[0, 5]) if len(df) else Path(source).stem)
    return run, report


_RUN_PIECE = 1 << 23  # bytes of whole lines handed to the CSV reader at a time (8 MiB: fewer dictionary merges)


def _numpy(arr, dtype) -> np.ndarray:
    """The values of an Arrow array without nulls, as a read-only NumPy view of its buffer.

    pyarrow's own ``to_numpy`` (like ``pa.array`` and Python scalars passed to compute functions)
    imports pandas, about 0.3 s of CPU that the TREC readers otherwise never need.
    """
    dt = np.dtype(dtype)
    return np.frombuffer(arr.buffers()[1], dtype=dt, count=len(arr) + arr.offset)[arr.offset:]


def _valid(arr) -> np.ndarray:
    """True where an Arrow array has a value (from its validity bitmap)."""
    bitmap = arr.buffers()[0]
    if bitmap is None or arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[arr.offset:arr.offset + len(arr)].astype(bool)


class _Codes:
    """Incremental string -> int32 code table across the pieces of one file (lookups in Arrow's C++)."""

    def __init__(self) -> None:
        import pyarrow as pa

        self._pa = pa
        self._pool = pa.system_memory_pool()
        self.values = None  # Arrow string array of every value seen, in code order

    def map_dictionary(self, dictionary) -> np.ndarray:
        """Global codes of a piece's dictionary values (unique strings); new values are appended."""
        import pyarrow.compute as pc

        if self.values is None:
            self.values = dictionary
            return np.arange(len(dictionary), dtype=np.int32)
        pos = pc.index_in(dictionary, value_set=self.values, memory_pool=self._pool)
        codes = _numpy(pos, np.int32).copy()
        new = ~_valid(pos)
        if new.any():
            fresh = np.flatnonzero(new).astype(np.int32)
            codes[fresh] = len(self.values) + np.arange(len(fresh), dtype=np.int32)
            take = self._pa.Array.from_buffers(self._pa.int32(), len(fresh), [None, self._pa.py_buffer(fresh)])
            added = pc.take(dictionary, take, memory_pool=self._pool)
            self.values = self._pa.concat_arrays([self.values, added], memory_pool=self._pool)
        return codes

    def uniques(self) -> np.ndarray:
        return np.asarray(self.values.to_pylist() if self.values is not None else [], dtype=object)

    def any_startswith(self, prefix: str) -> bool:
        import pyarrow.compute as pc

        if self.values is None or len(self.values) == 0:
            return False
        return bool(pc.any(pc.starts_with(self.values, prefix)).as_py())


def _arrow_run(path: Path) -> Run | None:
    """Streaming fast path for well-formed runs separated by single spaces or tabs.

    pyarrow's CSV reader parses about 2 MiB of whole lines at a time; ids are dictionary-encoded per
    piece and mapped to global int32 codes, so memory stays near 16 bytes per line (two codes and a
    score) instead of a Python string per field.  Returns None when pyarrow is missing or the file is irregular in
    any way; the caller then parses it line by line and reports every problem with file:line.
    """
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow comes with pandas/streamlit
        return None
    with open(path, "rb") as f:
        head = f.read(4096)
    if not head.strip():
        return None
    first = head.splitlines()[0]
    delim = "\t" if b"\t" in first else " "
    if first.startswith(b"#") or first != first.strip() or b"  " in first or (delim == "\t" and b" " in first):
        return None
    parts = first.split()
    if len(parts) != 6:
        return None
    dict_t = pa.dictionary(pa.int32(), pa.string())
    qtab, dtab = _Codes(), _Codes()
    # Columns filled in place (no per-block pieces to concatenate): capacity from the file size and
    # the length of the first lines, grown by half when the estimate was short.
    lines = head.count(b"\n") or 1
    cap = int(path.stat().st_size / (len(head) / lines) * 1.05) + 1024
    qcodes = np.empty(cap, dtype=np.int32)
    dcodes = np.empty(cap, dtype=np.int32)
    scores = np.empty(cap, dtype=np.float64)
    n = 0
    pool = pa.system_memory_pool()  # returns freed buffers to the OS at once
    read_opts = pacsv.ReadOptions(column_names=["q", "q0", "d", "r", "s", "t"], use_threads=False,
                                  block_size=_RUN_PIECE * 2)
    parse_opts = pacsv.ParseOptions(delimiter=delim, quote_char=False, double_quote=False, escape_char=False,
                                    newlines_in_values=False, ignore_empty_lines=True)
    conv_opts = pacsv.ConvertOptions(column_types={"q": dict_t, "d": dict_t, "s": pa.float64()},
                                     include_columns=["q", "d", "s"], strings_can_be_null=False, null_values=[])
    try:
        # Whole lines, about 2 MiB at a time: memory stays bounded by the piece, not by the file.
        with open(path, "rb") as f:
            rest = b""
            while True:
                piece = f.read(_RUN_PIECE)
                data = rest + piece
                cut = data.rfind(b"\n") + 1 if piece else len(data)
                data, rest = data[:cut], data[cut:]
                if data and not data.isspace():
                    tbl = pacsv.read_csv(pa.py_buffer(data), read_opts, parse_opts, conv_opts, memory_pool=pool)
                    for batch in tbl.to_batches():
                        q, d, sc = batch.column(0), batch.column(1), batch.column(2)
                        if sc.null_count:
                            return None
                        m = batch.num_rows
                        if n + m > cap:
                            cap = int((n + m) * 1.5)
                            qcodes, dcodes = np.resize(qcodes, cap), np.resize(dcodes, cap)
                            scores = np.resize(scores, cap)
                        qcodes[n:n + m] = qtab.map_dictionary(q.dictionary)[_numpy(q.indices, np.int32)]
                        dcodes[n:n + m] = dtab.map_dictionary(d.dictionary)[_numpy(d.indices, np.int32)]
                        scores[n:n + m] = _numpy(sc, np.float64)
                        n += m
                    del tbl
                if not piece:
                    break
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, ValueError, UnicodeDecodeError):
        return None
    if n == 0 or qtab.any_startswith("#"):  # a comment line that happened to have six fields
        return None
    # views of the rows read: the unused tail of np.empty was never touched, so it is not resident
    qcodes, dcodes, scores = qcodes[:n], dcodes[:n], scores[:n]
    if not np.isfinite(scores).all():  # NaN, inf, 1e999: the careful parser names the lines
        return None
    return Run.from_factorized(qcodes, qtab.uniques(), dcodes, dtab.uniques(), scores,
                               name=parts[5].decode("utf-8", "replace"))


def read_run(path: str | os.PathLike[str]) -> tuple[Run, ValidationReport]:
    """A TREC run file (also gzip-compressed, or a ``q_id, doc_id, score`` Parquet table)."""
    from rag_metrics.formats import unwrap

    p = Path(path)
    with open(p, "rb") if p.is_file() else contextlib.nullcontext(None) as f:
        head = f.read(4) if f is not None else b""
    if head[:2] == b"\x1f\x8b" or head[:4] == b"PAR1":
        data, _name, _wraps = unwrap(read_bytes(p), str(p), role="run")
        return parse_trec_run(decode_utf8(data, str(p)), str(p))
    if p.is_file() and p.stat().st_size >= _FAST_MIN:
        run = _arrow_run(p)
        if run is not None:
            return run, ValidationReport()
    data = read_bytes(p)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        decode_utf8(data, str(p))  # raises with line and offset
    return parse_trec_run(data, str(p))


def load_run(path: str | os.PathLike[str]) -> Run:
    run, report = read_run(path)
    report.raise_if_errors()
    if len(run) == 0:
        raise InputError(f"{path}: run has no lines; expected 'qid Q0 docid rank score tag'")
    return run


def validate_run(run: Run, golden: GoldenSet | None = None, known_ids: Collection[str] | None = None,
                 report: ValidationReport | None = None, source: str = "") -> ValidationReport:
    """Content checks on a run: NaN scores, duplicate ids inside one ranking, queries not in the
    golden set, golden queries missing from the run, ids not in the corpus.

    Works on the run's integer codes, so a run of millions of lines costs no string per line.
    """
    from rag_metrics.metrics.judge import duplicate_rows

    report = report if report is not None else ValidationReport()
    if len(run) == 0:
        report.error("run is empty", file=source)
        return report
    qc, qu = run.factorized_qids()
    ic, iu = run.factorized_ids()
    nan = np.isnan(run.scores)
    if nan.any():
        for q in qu[np.unique(qc[nan])][:MAX_REPORTED]:
            report.error("NaN score(s); every retrieved id needs a numeric score (NaN ranks last)",
                         file=source, query_id=str(q))
    dup = duplicate_rows(qc, ic)
    if dup.any():
        pairs = dict.fromkeys(zip(qc[dup].tolist(), ic[dup].tolist()))
        for q, i in list(pairs)[:MAX_REPORTED]:
            report.warning(f"id {iu[i]!r} appears more than once in this ranking; its best-ranked occurrence is kept",
                           file=source, query_id=str(qu[q]))
    if golden is not None:
        gids = set(golden.ids)
        rq = qu.tolist()
        extra = [q for q in rq if q not in gids]
        if extra:
            shown = ", ".join(map(repr, extra[:10])) + (" ..." if len(extra) > 10 else "")
            report.warning(f"{len(extra)} run quer{'y is' if len(extra) == 1 else 'ies are'} not in the golden set "
                           f"and ignored: {shown}", file=source)
        rset = set(rq)
        missing = [q.id for q in golden if q.id not in rset and q.in_scope]  # in_scope reads every grade: last
        if missing:
            shown = ", ".join(map(repr, missing[:10])) + (" ..." if len(missing) > 10 else "")
            report.warning(f"{len(missing)} golden quer{'y has' if len(missing) == 1 else 'ies have'} "
                           f"no line in the run and count 0: {shown}", file=source)
    if known_ids is not None:
        known = set(known_ids)
        unknown = [i for i in iu.tolist() if i not in known]
        if unknown:
            shown = ", ".join(map(repr, unknown[:10])) + (" ..." if len(unknown) > 10 else "")
            report.warning(f"{len(unknown)} retrieved id(s) are not in the corpus: {shown}", file=source)
    return report


def run_to_text(run: Run, tag: str | None = None, depth: int | None = None) -> str:
    """TREC run text in trec_eval order (score desc, ties by id desc), ranks from 1."""
    tag = (tag or run.name or "run").replace(" ", "_")
    out: list[str] = []
    for q, items in run.rankings().items():
        for r, (i, s) in enumerate(items[:depth] if depth else items, 1):
            out.append(f"{q} Q0 {i} {r} {s!r} {tag}\n")
    return "".join(out)


def write_trec_run(run: Run, path: str | os.PathLike[str], tag: str | None = None, depth: int | None = None) -> None:
    for i in run.factorized_ids()[1]:
        if any(c.isspace() for c in str(i)):
            raise InputError(f"id {i!r} contains whitespace, which TREC runs cannot hold; rename it")
    atomic_write_text(path, run_to_text(run, tag, depth))


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
