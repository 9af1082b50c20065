"""Uploaded systems: run files and RAG logs, matched to the golden questions.

Over 500 lines: the uploaded systems' kinds (runs, RAG logs, traces) share one matching and
provenance path.

Run files (:func:`parse_run_upload`)
------------------------------------
TREC run (any extension other than the ones below, e.g. ``.trec``, ``.run``, ``.txt``)
    ``qid Q0 docid rank score tag``, read by :func:`rag_metrics.io.trec.parse_trec_run`.
CSV / TSV (``.csv``, ``.tsv``)
    A header naming ``query_id`` (or ``qid``) and/or ``question``; ``chunk_id`` (or ``doc_id``,
    ``docid``, ``id``); ``score`` and/or ``rank``.  With a score the rank is ignored (trec_eval
    ranks by score); with a rank only, rank 1 is best.
JSON (``.json``)
    ``{qid: {id: score}}`` as pytrec_eval and ranx write it; or a list of rows (see JSONL).
JSONL (``.jsonl``)
    One row per query: ``query_id`` (or ``qid``, ``id``) and/or ``question``, and a ranked list
    under ``ids`` (or ``chunk_ids``, ``doc_ids``, ``retrieved_ids``, ``results``, ``ranking``) of
    ids or of ``{"id", "score"}`` objects; optional parallel ``scores``.  Without scores the list
    order is kept exactly (scores ``n - rank``).

A ``.csv``/``.json``/``.jsonl`` file naming a question column *and* a contexts column is a RAG log
(:mod:`rag_metrics.io.raglog`), see :func:`load_upload`.

Matching to golden questions
----------------------------
Run rows: by query id, then by normalised question text.  RAG log rows: by normalised question
text, then by id (their ids are often row numbers).  Unmatched rows are listed in the
:class:`~rag_metrics.systems.base.SystemRun`.
"""
from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from rag_metrics.errors import InputError, ValidationReport, excerpt
from rag_metrics.io.containers import unwrap
from rag_metrics.io.files import loads_json
from rag_metrics.io.logrows import QUESTION_KEYS, RagLog
from rag_metrics.io.raglog import looks_like_rag_log, parse_rag_log
from rag_metrics.io.trec import parse_trec_run
from rag_metrics.systems.base import (
    QuestionMatch,
    SystemRun,
    _check_depth,
    cut_to_depth,
    fingerprint,
    match_questions,
    run_from_rankings,
)
from rag_metrics.systems.textmatch import (
    DEFAULT_THRESHOLD,
    ContextMatcher,
    ContextMatchReport,
)
from rag_metrics.types import Chunk, Run

__all__ = [
    "MAX_UPLOAD_BYTES",
    "RUN_ID_KEYS",
    "RUN_LIST_KEYS",
    "RUN_QID_KEYS",
    "RagLogSystem",
    "RunFileSystem",
    "UploadedRun",
    "load_upload",
    "parse_run_upload",
    "parse_upload",
    "run_for_qrels",
]

#: Largest uploaded run or log, in bytes (200 MiB).
MAX_UPLOAD_BYTES = 200 * 1024 * 1024
RUN_QID_KEYS = ("query_id", "qid")
RUN_ID_KEYS = ("chunk_id", "doc_id", "docid", "id")
RUN_LIST_KEYS = ("ids", "chunk_ids", "doc_ids", "retrieved_ids", "results", "ranking")
_MAX_REPORTED = 200


@dataclass(frozen=True)
class UploadedRun:
    """A parsed run file: rows keyed by the file's query key, plus question texts where given.

    ``run`` is keyed by the file's query id, or by the question text when the file has no id
    column.  ``questions`` maps a key to its question text (empty when the file has none);
    ``where`` maps a key to where it first appears (``line 3``).
    """

    run: Run
    questions: Mapping[str, str] = field(default_factory=dict)
    where: Mapping[str, str] = field(default_factory=dict)
    source: str = ""


def _empty_run(name: str) -> Run:
    return Run(np.array([], dtype=object), np.array([], dtype=object), np.array([], dtype=np.float64), name)


def _first(keys: Sequence[str], names: Sequence[str]) -> str | None:
    return next((k for k in keys if k in names), None)


def _csv_run(data: bytes, source: str, report: ValidationReport) -> UploadedRun:
    name = PurePath(source).stem
    sep = "\t" if source.lower().endswith(".tsv") else ","
    try:
        df = pd.read_csv(io.BytesIO(data), sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as e:
        report.error(f"cannot read the CSV ({str(e).splitlines()[0]}); check quoting and the separator "
                     f"({'tab' if sep == chr(9) else 'comma'})", file=source)
        return UploadedRun(_empty_run(name), source=source)
    df.columns = [str(c).strip() for c in df.columns]
    cols = list(df.columns)
    qk = _first(RUN_QID_KEYS, cols)
    tk = _first(QUESTION_KEYS, cols)
    ik = _first(RUN_ID_KEYS, cols)
    sk = "score" if "score" in cols else None
    rk = "rank" if "rank" in cols else None
    missing = []
    if qk is None and tk is None:
        missing.append("a query column ('query_id' or 'question')")
    if ik is None:
        missing.append("an id column ('chunk_id' or 'doc_id')")
    if sk is None and rk is None:
        missing.append("a 'score' or 'rank' column")
    if missing:
        from rag_metrics.io.logrows import contexts_hint

        listed = ", ".join(missing[:-1]) + (" and " if len(missing) > 1 else "") + missing[-1]
        shown = ", ".join(cols)
        shown = shown if len(shown) <= 300 else f"{shown[:300]}... ({len(cols)} columns)"
        log = (f"; if it is a RAG log (questions with the contexts retrieved), {contexts_hint(cols)}name the "
               "contexts column 'contexts'" if tk is not None else "")
        report.error(f"missing: {listed} (columns: {shown}); a run CSV needs query_id,chunk_id,score{log}",
                     file=source, line=1)
        return UploadedRun(_empty_run(name), source=source)
    lines = np.arange(2, len(df) + 2)  # header is line 1 (multi-line cells are not expected in runs)
    keys = df[qk] if qk is not None else df[tk]
    keys = keys.str.strip()
    ids = df[ik].str.strip()
    num = pd.to_numeric(df[sk] if sk is not None else df[rk], errors="coerce")
    bad = num.isna().to_numpy() | (keys == "").to_numpy() | (ids == "").to_numpy()
    if bad.any():
        col = sk or rk
        for n in np.flatnonzero(bad)[:_MAX_REPORTED]:
            cell = str(df[col].iat[n])
            comma = (f" (a decimal comma: write it with a point, {cell.strip().replace(',', '.')})"
                     if re.fullmatch(r"\s*[+-]?[0-9]+,[0-9]+\s*", cell) else "")
            what = (f"{col} {excerpt(cell, 60)} is not a number{comma}" if math.isnan(num.iat[n]) else
                    "empty query or id cell")
            report.error(f"{what}; every row needs a query, an id and a numeric {col}", file=source,
                         line=int(lines[n]))
        if bad.sum() > _MAX_REPORTED:
            report.error(f"{int(bad.sum()) - _MAX_REPORTED} more bad rows not listed", file=source)
        keep = ~bad
        df, keys, ids, num, lines = df[keep], keys[keep], ids[keep], num[keep], lines[keep]
    scores = num.to_numpy(np.float64) if sk is not None else -num.to_numpy(np.float64)
    qc, qu = pd.factorize(keys)
    ic, iu = pd.factorize(ids)
    run = Run.from_factorized(qc, np.asarray(qu, dtype=object), ic, np.asarray(iu, dtype=object), scores, name=name)
    first = pd.Series(lines).groupby(qc).min().to_numpy() if len(qc) else np.array([], dtype=np.int64)
    where = {str(q): f"line {int(first[n])}" for n, q in enumerate(qu)}
    questions: dict[str, str] = {}
    if tk is not None:
        texts = df[tk].to_numpy()
        firsts = pd.Series(np.arange(len(qc))).groupby(qc).min().to_numpy()
        questions = {str(q): str(texts[firsts[n]]) for n, q in enumerate(qu)}
    return UploadedRun(run, questions, where, source)


def _ranked_list(obj: Any, scores: Any, where: str, report: ValidationReport, source: str, line: int | None
                 ) -> list[tuple[str, float]] | None:
    if not isinstance(obj, list):
        report.error(f"{where}: the ranked list must be a JSON list of ids, got {type(obj).__name__}", file=source,
                     line=line)
        return None
    if scores is not None and (not isinstance(scores, list) or len(scores) != len(obj)):
        report.error(f"{where}: 'scores' must be a list as long as the ranked list ({len(obj)})", file=source,
                     line=line)
        return None
    n = len(obj)
    out: list[tuple[str, float]] = []
    for r, item in enumerate(obj):
        if isinstance(item, Mapping):
            iid = next((item[k] for k in ("id", "chunk_id", "doc_id") if k in item), None)
            s = item.get("score", float(n - r))
        else:
            iid, s = item, (scores[r] if scores is not None else float(n - r))
        if iid is None or isinstance(iid, (list, dict)) or str(iid).strip() == "":
            report.error(f"{where}: item {r + 1} has no id; give ids as strings or {{\"id\": ..., \"score\": ...}}",
                         file=source, line=line)
            return None
        try:
            sf = float(s)
        except (TypeError, ValueError):
            report.error(f"{where}: score {s!r} of item {r + 1} is not a number", file=source, line=line)
            return None
        if math.isnan(sf):
            report.error(f"{where}: score of item {r + 1} is NaN; every retrieved id needs a numeric score",
                         file=source, line=line)
            return None
        out.append((str(iid).strip(), sf))
    return out


def _rows_run(rows: list[tuple[int | None, Any]], source: str, report: ValidationReport) -> UploadedRun:
    rankings: dict[str, list[tuple[str, float]]] = {}
    questions: dict[str, str] = {}
    where: dict[str, str] = {}
    for n, (line, row) in enumerate(rows, 1):
        loc = f"line {line}" if line is not None else f"row {n}"
        if not isinstance(row, Mapping):
            report.error(f"{loc}: expected an object with 'query_id' and 'ids', got {type(row).__name__}",
                         file=source, line=line)
            continue
        qk = _first(RUN_QID_KEYS + ("id",), list(row))
        tk = _first(QUESTION_KEYS, list(row))  # question, user_input, query, input: the log readers' names
        text = row.get(tk) if tk is not None else None
        key = str(row[qk]).strip() if qk is not None and row[qk] is not None else (str(text).strip() if text else "")
        lk = _first(RUN_LIST_KEYS, list(row))
        if not key or lk is None:
            report.error(f"{loc}: a run row needs a query ('query_id', or the question in 'question' / 'query') "
                         f"and a ranked list ({' / '.join(RUN_LIST_KEYS)}); found keys "
                         f"{excerpt(', '.join(map(repr, row)), 200)}", file=source, line=line)
            continue
        if key in rankings:
            report.error(f"{loc}: query {key!r} appears twice (first at {where[key]}); give one row per query",
                         file=source, line=line, query_id=key)
            continue
        ranked = _ranked_list(row[lk], row.get("scores"), loc, report, source, line)
        if ranked is None:
            continue
        rankings[key] = ranked
        where[key] = loc
        if text:
            questions[key] = str(text)

    return UploadedRun(run_from_rankings(rankings, PurePath(source).stem), questions, where, source)


def _json_run(text: str, source: str, report: ValidationReport, jsonl: bool) -> UploadedRun:
    name = PurePath(source).stem
    rows: list[tuple[int | None, Any]] = []
    try:
        if jsonl:
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    value, msg, _ = loads_json(line)
                    if msg is not None:
                        report.error(f"{msg}; each line must be one JSON object", file=source, line=n)
                        continue
                    rows.append((n, value))
            return _rows_run(rows, source, report)
        data, msg, at = loads_json(text)
        if msg is not None:
            report.error(f"{msg}; a run is {{qid: {{id: score}}}} or a list of rows", file=source, line=at)
            return UploadedRun(_empty_run(name), source=source)
    except RecursionError:  # pragma: no cover - loads_json never raises it; kept for the row readers
        report.error("JSON nested too deeply for the reader; a run is {qid: {id: score}} or a list of rows",
                     file=source)
        return UploadedRun(_empty_run(name), source=source)
    if isinstance(data, Mapping) and data and all(isinstance(v, Mapping) for v in data.values()):
        qids: list[str] = []
        ids: list[str] = []
        scores: list[float] = []
        for q, ranking in data.items():
            for i, s in ranking.items():
                try:
                    sf = float(s)
                except (TypeError, ValueError):
                    sf = math.nan
                if math.isnan(sf):
                    report.error(f"score {s!r} of id {i!r} is not a number", file=source, query_id=str(q))
                    continue
                qids.append(str(q))
                ids.append(str(i))
                scores.append(sf)
        run = Run(np.asarray(qids, dtype=object), np.asarray(ids, dtype=object), np.asarray(scores), name)
        return UploadedRun(run, {}, {str(q): f"key {str(q)!r}" for q in data}, source)
    if isinstance(data, list):
        return _rows_run([(None, r) for r in data], source, report)
    report.error("expected {qid: {id: score}} (pytrec_eval, ranx) or a list of rows with 'query_id' and 'ids'",
                 file=source)
    return UploadedRun(_empty_run(name), source=source)


def parse_run_upload(data: bytes, filename: str,
                     max_bytes: int = MAX_UPLOAD_BYTES) -> tuple[UploadedRun, ValidationReport]:
    """Parse a run file of any supported format (see the module docstring).  Never raises on content."""
    report = ValidationReport()
    source = filename or "run"
    name = PurePath(source).stem
    try:
        data, source, _wraps = unwrap(data, source, role="run")  # gzip, Parquet
    except InputError as e:
        report.error(str(e))
        return UploadedRun(_empty_run(name), source=source), report
    if len(data) > max_bytes:
        report.error(f"file is {len(data):,} bytes; the limit is {max_bytes:,} bytes. Evaluate it with the CLI "
                     "(rag-metrics evaluate) or split it", file=source)
        return UploadedRun(_empty_run(name), source=source), report
    if not data.strip():
        report.error("file is empty; expected a run (TREC lines 'qid Q0 docid rank score tag', CSV, JSON)",
                     file=source)
        return UploadedRun(_empty_run(name), source=source), report
    suffix = PurePath(source).suffix.lower()
    first = data.lstrip()[:500].split(b"\n", 1)[0].split()
    if suffix in (".csv", ".tsv") and len(first) == 6 and first[1] == b"Q0":  # a TREC run saved as .tsv/.csv
        suffix = ".trec"
    if suffix in (".csv", ".tsv"):
        up = _csv_run(data, source, report)
    elif suffix in (".json", ".jsonl", ".ndjson"):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            report.error(f"not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}); re-save as UTF-8",
                         file=source, line=data[: e.start].count(b"\n") + 1)
            return UploadedRun(_empty_run(name), source=source), report
        jsonl = suffix != ".json" or (text.lstrip().startswith("{") and "\n{" in text.strip())
        if jsonl and suffix == ".json":
            jsonl = loads_json(text)[1] is not None  # one JSON document, or JSON lines saved as .json
        up = _json_run(text, source, report, jsonl)
    else:
        run, rep = parse_trec_run(data, source)
        report.extend(rep.problems)
        up = UploadedRun(run, {}, {}, source)
    if len(up.run) == 0 and report.ok:
        report.error("no results found in the file", file=source)
    return up, report


def _rows_note(match: QuestionMatch, what: str) -> str:
    return match.note(what)


class RunFileSystem:
    """A :class:`~rag_metrics.systems.base.System` over an uploaded run file."""

    def __init__(self, upload: UploadedRun, name: str | None = None) -> None:
        self.upload = upload
        self.name = name or upload.run.name or PurePath(upload.source).stem or "run"
        qc, qu = upload.run.factorized_qids()
        ic, iu = upload.run.factorized_ids()
        self._fp = fingerprint("run", len(upload.run), qu.tolist()[:1000], int(np.asarray(qc, np.int64).sum()),
                               iu.tolist()[:1000], int(np.asarray(ic, np.int64).sum()),
                               float(np.nansum(upload.run.scores)))

    @property
    def fingerprint(self) -> str:
        return self._fp

    def rank(self, questions: Mapping[str, str], depth: int) -> SystemRun:
        depth = _check_depth(depth)
        run = self.upload.run
        qc, qu = run.factorized_qids()
        rows = [(str(k), self.upload.questions.get(str(k)), self.upload.where.get(str(k), f"query {k!r}"))
                for k in qu.tolist()]
        match = match_questions(questions, rows, text_first=False)
        gid = np.array([match.to_golden.get(str(k)) for k in qu.tolist()], dtype=object)
        keep_u = np.array([g is not None for g in gid], dtype=bool)
        if keep_u.all() and all(match.to_golden[str(k)] == str(k) for k in qu.tolist()):
            out = Run.from_factorized(qc, qu, *run.factorized_ids(), run.scores, name=self.name)
        else:
            new_u, inv = np.unique(np.where(keep_u, gid, ""), return_inverse=True)
            rowmask = keep_u[qc]
            ic, iu = run.factorized_ids()
            out = Run.from_factorized(inv[qc][rowmask], new_u.astype(object), ic[rowmask], iu,
                                      run.scores[rowmask], name=self.name)
        out = cut_to_depth(out, depth)
        return SystemRun(out, (), (_rows_note(match, "run queries"),), match.unmatched)


def _rank_run(rankings: Mapping[str, Sequence[str]], name: str) -> Run:
    """Ranked id lists as a Run with scores ``n - rank`` (the order kept exactly), built with NumPy
    (the same scores as :meth:`Run.from_rankings`, without a Python tuple per result)."""
    qids = list(rankings)
    lengths = np.fromiter((len(rankings[q]) for q in qids), dtype=np.int64, count=len(qids))
    total = int(lengths.sum())
    if total == 0:
        return _empty_run(name)
    ids = np.empty(total, dtype=object)
    ids[:] = [i for q in qids for i in rankings[q]]
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    pos = np.arange(total, dtype=np.int64) - starts
    scores = (np.repeat(lengths, lengths) - pos).astype(np.float64)
    qcodes = np.repeat(np.arange(len(qids), dtype=np.int64), lengths)
    icodes, iuniq = pd.factorize(ids)
    return Run.from_factorized(qcodes, np.asarray(qids, dtype=object), icodes, np.asarray(iuniq, dtype=object),
                               scores, name=name)


class RagLogSystem:
    """A :class:`~rag_metrics.systems.base.System` over an uploaded RAG log.

    Parameters
    ----------
    log
        The parsed log.
    chunks
        Chunks of the current corpus, for rows without context ids (text matching).  Not needed
        when every row has ids.
    threshold
        Fuzzy-match threshold (``rapidfuzz.fuzz.ratio``, 0-100).
    name
        Label (default: the file name).
    """

    def __init__(self, log: RagLog, chunks: Sequence[Chunk] | Mapping[str, str] | None = None,
                 threshold: float = DEFAULT_THRESHOLD, name: str | None = None) -> None:
        self.log = log
        self.name = name or log.name or "rag log"
        self.threshold = threshold
        self._chunks = chunks
        self._matcher: ContextMatcher | None = None
        needs_text = any(r.context_ids is None and r.contexts for r in log)
        if needs_text and chunks is None:
            raise InputError(f"{log.source or 'RAG log'}: rows have contexts without ids, so they are matched to "
                             "the corpus by text; give the corpus (the app's current corpus, or --corpus PATH)")
        if needs_text:
            self._matcher = ContextMatcher(chunks, threshold)  # type: ignore[arg-type]  # chunks is not None (checked above)
        corpus_fp = fingerprint(self._matcher.ids, self._matcher.norm) if self._matcher else ""
        self._fp = fingerprint("raglog", [(r.id, r.question, r.contexts, r.context_ids) for r in log],
                               corpus_fp, threshold if needs_text else None)
        self._ranked: tuple[dict[str, list[str]], ContextMatchReport | None] | None = None

    @property
    def fingerprint(self) -> str:
        return self._fp

    def ranked_ids(self) -> tuple[dict[str, list[str]], ContextMatchReport | None]:
        """``{row id: ranked ids}`` and the match report (computed once)."""
        if self._ranked is None:
            report = ContextMatchReport(self.threshold) if self._matcher else None
            out: dict[str, list[str]] = {}
            for r in self.log:
                if r.context_ids is not None:
                    out[r.id] = list(r.context_ids)
                elif self._matcher is None or report is None or not r.contexts:
                    out[r.id] = []  # the row retrieved nothing (a DeepEval test case with an empty retrieval_context)
                else:
                    out[r.id] = self._matcher.match_all(r.contexts, r.where, report)
            self._ranked = (out, report)
        return self._ranked

    def unmatched_contexts(self, ids: Sequence[str]) -> pd.DataFrame:
        """The contexts behind the placeholder ids ``unmatched:...`` among ``ids``: their text, the
        closest chunk of the corpus and its similarity (rapidfuzz ratio, 0-100; below the threshold,
        which is why it matched nothing).  Columns id, context, closest_chunk, similarity, threshold."""
        _, report = self.ranked_ids()
        rows = []
        for i in dict.fromkeys(ids):
            text = report.texts.get(i) if report is not None else None
            if text is None or self._matcher is None:
                continue
            cid, score = self._matcher.closest(text)
            rows.append((i, text, cid, score, self.threshold))
        return pd.DataFrame(rows, columns=["id", "context", "closest_chunk", "similarity", "threshold"])

    def rank(self, questions: Mapping[str, str], depth: int) -> SystemRun:
        depth = _check_depth(depth)
        ranked, report = self.ranked_ids()
        rows = [(r.id, r.question, r.where) for r in self.log]
        match = match_questions(questions, rows, text_first=True)
        rankings = {match.to_golden[rid]: ids[:depth] for rid, ids in ranked.items() if rid in match.to_golden}
        notes = [match.note("log rows")]
        if self.log.skipped:
            shown = "; ".join(self.log.skipped[:3]) + (" ..." if len(self.log.skipped) > 3 else "")
            notes.append(f"{len(self.log.skipped)} malformed trace(s) or record(s) left out of the export: {shown}")
        dups = sum(len(ids) - len(set(ids)) for ids in rankings.values())
        if report is not None:
            notes.append(report.note())
        if dups:
            notes.append(f"{dups} context(s) repeat a chunk already retrieved higher for the same question; the "
                         "repeat is dropped (each chunk counts once, at its best rank)")
        texts = {i: t for r in self.log if r.context_ids is not None and len(r.contexts) == len(r.context_ids)
                 for i, t in zip(r.context_ids, r.contexts)}
        return SystemRun(_rank_run(rankings, self.name), (), tuple(notes), match.unmatched, report, texts or None)


#: What to do with a file the sniff names that is no system's output.
_NOT_A_SYSTEM = {
    **dict.fromkeys(("trec_qrels", "beir_qrels", "json_qrels", "golden", "llamaindex", "queries"),
                    "give it as the golden set (--qrels, or the Golden set editor) and the system's output (a run, RAG "
                    "log or trace export) as the system"),
    "corpus": "give it as the corpus (--corpus, or the Corpus explorer) and the system's output as the system",
}


def _log_system(data: bytes, filename: str, chunks: Sequence[Chunk] | Mapping[str, str] | None, threshold: float,
                name: str | None) -> tuple[RagLogSystem | None, ValidationReport]:
    """A RAG log or trace export as a system; None with the problems when it cannot be one (a log
    that holds no retrieval is refused: :attr:`~rag_metrics.io.logrows.RagLog.no_retrieval`)."""
    log, report = parse_rag_log(data, filename)
    if not report.ok:
        return None, report
    if log.no_retrieval:
        refs = sum(1 for r in log.rows if r.ground_truth)
        golden = (f"; its {refs} reference answers can start a golden set (give the file as the golden set)"
                  if refs else "")
        report.error(f"{log.no_retrieval}{golden}", file=filename)
        return None, report
    try:
        return RagLogSystem(log, chunks, threshold, name), report
    except InputError as e:
        report.error(str(e), file=filename)
        return None, report


def parse_upload(data: bytes, filename: str, chunks: Sequence[Chunk] | Mapping[str, str] | None = None,
                 threshold: float = DEFAULT_THRESHOLD, name: str | None = None, mapping: Any = None
                 ) -> tuple[RunFileSystem | RagLogSystem | None, ValidationReport]:
    """An uploaded file as a system: a RAG log when it names question and contexts columns, else a run.

    Returns ``(None, report)`` when the file has errors.  Gzip and Parquet are taken off first
    (:func:`rag_metrics.io.containers.unwrap`).  ``mapping`` (a ``--map`` spec, see
    :mod:`rag_metrics.io.mapping`) names the fields first, when the file's own names do not fit.
    """
    try:
        if mapping:
            from rag_metrics.io.mapping import apply_mapping

            data, filename = apply_mapping(data, filename, mapping, role="system")
            name = name or PurePath(filename).name.split(".")[0]
        data, filename, _wraps = unwrap(data, filename, role="run")
    except InputError as e:
        report = ValidationReport()
        report.error(str(e))
        return None, report
    if looks_like_rag_log(data, filename):
        return _log_system(data, filename, chunks, threshold, name)
    up, report = parse_run_upload(data, filename)
    if not report.ok:
        # Not read as a run: what the one sniff (rag_metrics.io.sniff, the CLI's and describe_bytes')
        # calls the file decides what to say -- a RAG log whose fields have other names is read by the
        # log reader (which names them), judgments or a golden set are named as such.
        from rag_metrics.io.sniff import KINDS, sniff

        sn = sniff(data, filename, role="run")
        kind = sn.kind
        if kind in ("rag_log", "trace"):
            return _log_system(data, filename, chunks, threshold, name)
        if kind in _NOT_A_SYSTEM or kind == "records":
            from rag_metrics.io.sniff import nearest_format

            fix = _NOT_A_SYSTEM[kind] if kind in _NOT_A_SYSTEM else nearest_format(sn.fields)
            clear = ValidationReport()
            clear.error(f"looks like {KINDS[kind]}, not a run or a RAG log; {fix}", file=filename)
            clear.extend(report.problems[:3])
            return None, clear
        return None, report
    return RunFileSystem(up, name), report


def run_for_qrels(data: bytes, filename: str, golden: Any, chunks: Sequence[Chunk] | Mapping[str, str] | None = None,
                  threshold: float = DEFAULT_THRESHOLD, mapping: Any = None) -> tuple[Run | None, list[str]]:
    """A run file or RAG log read for the judgments ``golden`` it was given with, as
    ``rag-metrics evaluate --qrels Q --run R`` reads it: a TREC run as it is (keyed by its query ids),
    any other file matched to the golden questions.  ``(run, notes)``, or ``(None, [why])``."""
    from rag_metrics.io.sniff import sniff

    if not mapping:
        try:
            s = sniff(data, filename, role="run")
        except InputError as e:
            return None, [str(e)]
        if s.kind == "trec_run":
            run, report = parse_trec_run(s.data, filename)
            if report.errors:
                return None, [f"{filename}: " + "; ".join(str(p) for p in report.errors[:3])]
            return run, [str(p) for p in report.warnings[:3]]
    system, report = parse_upload(data, filename, chunks, threshold, mapping=mapping)
    if system is None:
        return None, [f"{filename}: {report.summary()}: " + "; ".join(report.lines()[:3])]
    got = system.rank(golden.questions(), 1 << 30)
    return got.run, list(got.notes)


def load_upload(path: str, chunks: Sequence[Chunk] | Mapping[str, str] | None = None,
                threshold: float = DEFAULT_THRESHOLD, name: str | None = None,
                mapping: Any = None) -> RunFileSystem | RagLogSystem:
    """Read a run file or RAG log from ``path``; raise :class:`InputError` (file:line) on errors."""
    from pathlib import Path

    from rag_metrics.io.files import read_bytes

    p = Path(path)
    if p.is_file() and p.stat().st_size > MAX_UPLOAD_BYTES:
        raise InputError(f"{p}: file is {p.stat().st_size:,} bytes; the limit is {MAX_UPLOAD_BYTES:,} bytes")
    system, report = parse_upload(read_bytes(p), str(p), chunks, threshold, name, mapping)
    report.raise_if_errors("upload", hint="fix the rows listed")
    if system is None:  # pragma: no cover - parse_upload gives no system only with an error
        raise InputError(f"{p}: nothing could be read as a run or a RAG log")
    return system
