"""TREC runs: ``qid Q0 docid rank score tag``, read, checked and written.

The rank column is ignored: like trec_eval we rank by score (ties by docid descending).  A score is
a finite float64 written in ASCII; anything else is reported with file:line, never converted.
Large regular files take a fast path (pyarrow's CSV reader, or pandas' C reader for
:func:`parse_trec_run`); on any irregularity a line-by-line pass reports every problem.  A run
wrapped in gzip or Parquet is unwrapped first (:mod:`rag_metrics.io.containers`).  The qrels
readers are :mod:`rag_metrics.io.trec`, which re-exports these names.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import re
from collections.abc import Collection
from pathlib import Path

import numpy as np

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.containers import is_wrapped, unwrap
from rag_metrics.io.files import atomic_write_text, decode_utf8, read_bytes
from rag_metrics.ordering import duplicate_rows
from rag_metrics.types import GoldenSet, Run

__all__ = ["load_run", "parse_trec_run", "read_run", "run_to_text", "validate_run", "write_trec_run"]

MAX_REPORTED = 200  # problems listed per file before summarising
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # ASCII, as C's strtod reads
_FAST_MIN = 1 << 20  # files at least this large (bytes) try the Arrow readers first
_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]+,[0-9]+")  # 1,5: a score written with a decimal comma (a locale's)



def _show(tok: str, limit: int = 40) -> str:
    """A token for a message: quoted, and cut when long (a 5000-digit number is not echoed whole)."""
    return repr(tok) if len(tok) <= limit else f"{tok[:limit]!r}... ({len(tok)} characters)"


def _score(tok: str) -> float | str:
    """The score in a run field, or a message: a finite float64 written in ASCII (C's strtod)."""
    if not _FLOAT.fullmatch(tok):
        if tok.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            return (f"score {_show(tok)} is not a finite number (NaN and infinity cannot be ranked); "
                    "every retrieved id needs a finite score")
        if _DECIMAL_COMMA.fullmatch(tok):
            return (f"score {_show(tok)} is written with a decimal comma; write it with a point "
                    f"({tok.replace(',', '.')}), e.g. sed -E 's/ ([0-9]+),([0-9]+) / \\1.\\2 /' (a TREC run's scores "
                    "are read as C's strtod reads them, never converted)")
        return f"score {_show(tok)} is not a number (5th field of 'qid Q0 docid rank score tag')"
    s = float(tok)
    if not math.isfinite(s):
        return (f"score {_show(tok)} is outside the float64 range (about ±1.8e308); "
                "rescale the scores (only their order matters)")
    return s


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
    p = Path(path)
    with open(p, "rb") if p.is_file() else contextlib.nullcontext(None) as f:
        head = f.read(4) if f is not None else b""
    if is_wrapped(head):
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


