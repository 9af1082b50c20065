"""Plain-Python support for the interactive lab (the Streamlit app): no streamlit import here.

- :class:`RetrievalMemo`: a retriever indexed once, with results memoised **per question text** to a
  fixed depth, so a golden-set edit retrieves (and embeds) only new or changed question texts and a
  change of K never retrieves at all.
- :class:`LazyEncoder`: an :class:`~rag_metrics.retrieval.encoders.Encoder` that loads the
  sentence-transformers model only when a text misses the embedding cache (the app starts from the
  shipped embeddings without loading torch when every text is cached).
- Golden set <-> editor table conversion (the data editor's rows), fingerprints.
- Data shaping for the views: metric cards, the lesson's MRR reading, targets, hit rates at fixed
  cutoffs, first-relevant-rank histogram, abstention sweep, failures with chunk texts.

Formatting (rounding, percentages) is left to the UI.
"""
from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.golden import LIST_SEPARATOR, golden_from_rows, golden_to_text, validate_golden
from rag_metrics.types import OUT_OF_SCOPE, Chunk, Corpus, GoldenQuery, GoldenSet, Run

__all__ = [
    "DEPTH", "RETRIEVERS", "CATEGORIES", "LazyEncoder", "RetrievalMemo", "corpus_fingerprint",
    "chunks_fingerprint", "golden_fingerprint", "golden_to_table", "table_to_golden", "TABLE_COLUMNS",
    "mrr_reading", "MRR_READING_TABLE", "TARGETS", "target_checks", "card_table", "hit_rate_table",
    "first_rank_histogram", "abstention_sweep", "score_range", "failures_with_text", "upsert_labels",
    "ranking_with_text", "report_table", "options_key", "MAX_IMPORT_BYTES", "EXPORT_FORMATS", "import_golden",
    "export_golden", "label_counts", "chunk_table", "explanation_table", "live_results", "suggest_threshold",
    "metric_glossary",
]

#: Retrieval depth of the lab: every question is retrieved once to this depth; K only reads columns.
DEPTH = 100
#: Retriever kinds offered by the app.
RETRIEVERS = ("dense", "bm25", "hybrid")
#: Categories of the sample golden set (the editor offers these plus any found in the data).
CATEGORIES = ("factual", "comparison", "procedural", OUT_OF_SCOPE)


# ---- fingerprints ------------------------------------------------------------------------------
def _sha(parts: Iterable[str]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:16]


def corpus_fingerprint(corpus: Corpus) -> str:
    """Content hash of a corpus (ids and texts)."""
    return _sha(x for d in corpus for x in (d.id, d.text))


def chunks_fingerprint(chunks: Sequence[Chunk]) -> str:
    return _sha(x for c in chunks for x in (c.id, c.text))


def golden_fingerprint(golden: GoldenSet) -> str:
    return _sha([golden_to_text(golden, "jsonl")])


# ---- lazy encoder ------------------------------------------------------------------------------
class LazyEncoder:
    """Wraps :class:`SentenceTransformerEncoder`, loading it on the first :meth:`encode` call.

    ``dim`` may be given (e.g. from the shipped embeddings manifest) so nothing loads while every
    text is found in the embedding cache.
    """

    def __init__(self, model: str | None = None, dim: int | None = None) -> None:
        from rag_metrics.retrieval.encoders import DEFAULT_MODEL, DEFAULT_MODEL_ALIASES

        self._requested = model
        self.name = DEFAULT_MODEL if model is None or model in DEFAULT_MODEL_ALIASES else str(model)
        self._dim = dim
        self._encoder: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._encoder is not None

    def _load(self) -> Any:
        with self._lock:
            if self._encoder is None:
                from rag_metrics.retrieval import get_encoder  # loaded once per process

                self._encoder = get_encoder(self._requested)
                self._dim = int(self._encoder.dim)
        return self._encoder

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._load()
        return int(self._dim)  # type: ignore[arg-type]

    def encode(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None):
        return self._load().encode(texts, progress=progress)


# ---- retrieval memo ----------------------------------------------------------------------------
class RetrievalMemo:
    """A retriever indexed on one chunk list; rankings memoised per question text.

    Parameters
    ----------
    retriever
        An indexed retriever (``retrieve(queries, k) -> Run``).
    chunks
        The indexed chunks (for texts and the depth bound).
    depth
        Rankings are kept to ``min(depth, len(chunks))``.

    Thread-safe: the app shares one memo between browser sessions.
    """

    def __init__(self, retriever: Any, chunks: Sequence[Chunk], depth: int = DEPTH) -> None:
        self.retriever = retriever
        self.chunks = list(chunks)
        self.depth = max(1, min(int(depth), len(self.chunks))) if self.chunks else 1
        self._memo: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()
        #: Number of question texts retrieved so far (tests and benchmarks read it).
        self.retrieved = 0

    def __contains__(self, text: str) -> bool:
        return text in self._memo

    def missing(self, texts: Iterable[str]) -> list[str]:
        return [t for t in dict.fromkeys(texts) if t not in self._memo]

    def ensure(self, texts: Iterable[str], progress: Callable[[int, int], None] | None = None) -> int:
        """Retrieve every text not yet memoised (one batch); returns how many were retrieved."""
        with self._lock:
            todo = self.missing(texts)
            if not todo:
                return 0
            queries = {f"t{i}": t for i, t in enumerate(todo)}
            run = self.retriever.retrieve(queries, k=self.depth, progress=progress)
            ranked = run.rankings()
            for key, text in queries.items():
                items = ranked.get(key, [])
                self._memo[text] = (np.array([i for i, _ in items], dtype=object),
                                    np.array([s for _, s in items], dtype=np.float64))
            self.retrieved += len(todo)
            return len(todo)

    def search(self, text: str) -> list[tuple[str, float]]:
        """Ranked ``(chunk_id, score)`` for one text (memoised)."""
        self.ensure([text])
        ids, scores = self._memo[text]
        return list(zip(ids.tolist(), scores.tolist()))

    def run_for(self, golden: GoldenSet, name: str = "lab") -> Run:
        """The run of every golden question (retrieving only texts not memoised yet)."""
        self.ensure(q.question for q in golden)
        qids, ids, scores = [], [], []
        for q in golden:
            i, s = self._memo[q.question]
            qids.append(np.full(len(i), q.id, dtype=object))
            ids.append(i)
            scores.append(s)
        if not qids:
            return Run(np.array([], dtype=object), np.array([], dtype=object), np.array([]), name)
        return Run(np.concatenate(qids), np.concatenate(ids), np.concatenate(scores), name)


# ---- golden set <-> editor table ---------------------------------------------------------------
#: Columns of the editor table, in order.
TABLE_COLUMNS = ("id", "question", "category", "relevant", "grades", "expected_answer")


def golden_to_table(golden: GoldenSet) -> pd.DataFrame:
    """One row per query: ``relevant`` is a list of ids, ``grades`` the parallel grades joined by
    ``|`` (:data:`~rag_metrics.golden.LIST_SEPARATOR`)."""
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


def table_to_golden(table: pd.DataFrame, known_ids: Iterable[str] | None = None, name: str = ""
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
            out.append(GoldenQuery(q.id, q.question, cat, rel, q.expected_answer))
            done = True
        else:
            out.append(q)
    if not done:
        from rag_metrics.golden import stable_query_id

        qid, n, ids = stable_query_id(question), 2, set(golden.ids)
        base = qid
        while qid in ids:
            qid, n = f"{base}-{n}", n + 1
        rel = {i: int(g) for i, g in labels.items() if g > 0}
        out.append(GoldenQuery(qid, question, category or ("" if rel else OUT_OF_SCOPE), rel, None))
    return GoldenSet(tuple(out), golden.name)


# ---- views: numbers shaped for the dashboard ---------------------------------------------------
#: The lesson's plain-language reading of MRR (lower bound of the band, reading).
MRR_READING_TABLE: tuple[tuple[float, str, str], ...] = (
    (1.0, "1.0", "Perfect: the first relevant chunk is always at rank 1."),
    (0.7, "0.7 - 1.0", "Good: the first relevant chunk is usually at rank 1, sometimes 2."),
    (0.5, "0.5", "Fair: on average the first relevant chunk is around rank 2."),
    (0.33, "0.33", "Mediocre: on average around rank 3."),
    (0.1, "0.1", "Poor: on average around rank 10, or often missing."),
)

#: Targets from the lesson: metric key, threshold.
TARGETS: tuple[tuple[str, int, float], ...] = (("mrr", 0, 0.7), ("precision", 5, 0.6))


def mrr_reading(mrr: float) -> str:
    """Plain-language reading of an MRR value (the lesson's table)."""
    if mrr is None or math.isnan(mrr):
        return "No in-scope queries: MRR is undefined."
    if mrr >= 0.999:
        return MRR_READING_TABLE[0][2]
    if mrr >= 0.7:
        return MRR_READING_TABLE[1][2]
    if mrr >= 0.45:
        return MRR_READING_TABLE[2][2]
    if mrr >= 0.2:
        return MRR_READING_TABLE[3][2] if mrr < 0.4 else "Fair to mediocre: on average the first relevant chunk is around rank 2-3."
    return MRR_READING_TABLE[4][2]


def target_checks(result: Any, k: int) -> pd.DataFrame:
    """The lesson's targets: MRR@K > 0.7 and P@5 > 0.6 (columns: metric, k, value, target, met)."""
    rows = []
    for name, fixed_k, threshold in TARGETS:
        kk = fixed_k or k
        v = result.mean(name, kk)
        rows.append({"metric": name, "k": kk, "value": v, "target": threshold,
                     "met": bool(not math.isnan(v) and v > threshold)})
    return pd.DataFrame(rows)


def card_table(result: Any, k: int, metrics: Sequence[str], n_resamples: int = 1000) -> pd.DataFrame:
    """metric, k, mean, ci_low, ci_high, n: one row per metric at ``k`` (95 % bootstrap CI)."""
    return result.summary(metrics, ks=(k,), ci=True, n_resamples=n_resamples)


def hit_rate_table(result: Any, ks: Sequence[int] = (1, 3, 5, 10)) -> pd.DataFrame:
    """k, hit_rate (mean over included queries), hits (count), n."""
    inc = result.included
    rows = []
    for k in ks:
        v = result.values("hit_rate", k)[inc]
        rows.append({"k": int(k), "hit_rate": float(v.mean()) if v.size else float("nan"),
                     "hits": int(v.sum()), "n": int(v.size)})
    return pd.DataFrame(rows)


def first_rank_histogram(result: Any) -> pd.DataFrame:
    """Counts of the first relevant rank over in-scope queries: columns rank_label, rank, count.

    ``rank`` 0 means no relevant chunk was retrieved within the depth (label "not found").
    """
    ranks = np.asarray(result.first_relevant_rank())[result.in_scope]
    if ranks.size == 0:
        return pd.DataFrame(columns=["rank_label", "rank", "count"])
    values, counts = np.unique(ranks, return_counts=True)
    depth = result.depth
    rows = [{"rank_label": ("not found" if r == 0 else str(int(r))),
             "rank": int(r) if r > 0 else depth + 1, "count": int(c)} for r, c in zip(values, counts)]
    return pd.DataFrame(rows).sort_values("rank").reset_index(drop=True)


def score_range(result: Any) -> tuple[float, float]:
    """Min and max of the top retrieval score per query (NaN-free; (0, 1) when empty)."""
    top = np.asarray(result.judged.top_score, dtype=np.float64)
    top = top[np.isfinite(top)]
    if top.size == 0:
        return (0.0, 1.0)
    lo, hi = float(top.min()), float(top.max())
    if hi <= lo:
        hi = lo + 1.0
    return (lo, hi)


def abstention_sweep(result: Any, n: int = 50) -> pd.DataFrame:
    """For thresholds across the top-score range: share of out-of-scope queries correctly refused
    and of in-scope queries wrongly refused (columns threshold, oos_refused_rate, in_scope_refused_rate)."""
    lo, hi = score_range(result)
    rows = []
    n_oos, n_in = result.n_out_of_scope, result.n_in_scope
    for t in np.linspace(lo, hi, n):
        a = result.abstention(float(t))
        rows.append({"threshold": float(t),
                     "oos_refused_rate": a["out_of_scope_refused"] / n_oos if n_oos else float("nan"),
                     "in_scope_refused_rate": a["in_scope_refused"] / n_in if n_in else float("nan")})
    return pd.DataFrame(rows)


def suggest_threshold(result: Any, n: int = 200) -> float | None:
    """Abstention threshold maximising Youden's J: (share of out-of-scope queries refused) minus
    (share of in-scope queries refused); ``None`` without both kinds of query."""
    if result.n_out_of_scope == 0 or result.n_in_scope == 0:
        return None
    top = np.asarray(result.judged.top_score, dtype=np.float64)
    candidates = np.unique(np.concatenate([top[np.isfinite(top)], np.linspace(*score_range(result), n)]))
    best, best_j = None, -np.inf
    for t in candidates:
        a = result.abstention(float(t))
        j = a["out_of_scope_refused"] / result.n_out_of_scope - a["in_scope_refused"] / result.n_in_scope
        if j > best_j + 1e-12:
            best, best_j = float(t), j
    return best


def failures_with_text(result: Any, k: int, chunk_text: Mapping[str, str]) -> pd.DataFrame:
    """:meth:`EvaluationResult.failures` with the expected and retrieved chunks' texts and a
    "would hit at K" column (the first relevant rank beyond k, <NA> when never retrieved)."""
    f = result.failures(k)
    f["expected_text"] = [[chunk_text.get(i, "(id not in the corpus)") for i in ids] for ids in f["expected_ids"]]
    f["retrieved_text"] = [[chunk_text.get(i, "") for i in ids] for ids in f["retrieved_ids"]]
    f["would_hit_at"] = f["first_relevant_rank"]
    return f


def ranking_with_text(result: Any, query_id: str, k: int, chunk_text: Mapping[str, str],
                      chunk_doc: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The top ``k`` of one query: rank, id, document, score, grade, relevant, text."""
    r = result.ranking(query_id).head(k).copy()
    r["document"] = [(chunk_doc or {}).get(i, "") for i in r["id"]]
    r["text"] = [chunk_text.get(i, "") for i in r["id"]]
    return r


def report_table(report: ValidationReport) -> pd.DataFrame:
    """The problems of a report as a table: severity, where, message (errors first)."""
    probs = report.errors + report.warnings
    return pd.DataFrame({"severity": [p.severity for p in probs], "where": [p.where for p in probs],
                         "message": [p.message for p in probs]}, columns=["severity", "where", "message"])


def options_key(options: Any) -> str:
    """A stable string for an :class:`EvalOptions` (cache keys)."""
    return json.dumps(options.__dict__, sort_keys=True)


# ---- import / export of golden sets (the editor's upload and download buttons) -----------------
#: Largest golden-set upload accepted by the app, in bytes.
MAX_IMPORT_BYTES = 2 * 1024 * 1024
EXPORT_FORMATS = {"csv": "text/csv", "json": "application/json", "jsonl": "application/jsonl",
                  "qrels": "text/plain"}


def import_golden(data: bytes, filename: str, current: GoldenSet, known_ids: Iterable[str] | None = None,
                  max_bytes: int = MAX_IMPORT_BYTES) -> tuple[GoldenSet | None, ValidationReport]:
    """Parse an uploaded golden set; ``(None, report)`` when it must not replace the current set.

    ``.csv``, ``.json`` and ``.jsonl`` files replace the whole set.  TREC qrels (any other name,
    lines ``qid 0 id grade``) carry no question text: they replace the labels of the queries of
    ``current`` with the same ids; unknown query ids are errors.  Ids not in ``known_ids`` are
    errors.  The report lists every problem; warnings alone do not block the import.
    """
    from pathlib import PurePath

    from rag_metrics.golden import parse_golden
    from rag_metrics.io import parse_beir_qrels, parse_trec_qrels

    report = ValidationReport()
    name = PurePath(filename).name or "upload"
    if len(data) > max_bytes:
        report.error(f"file is {len(data):,} bytes; the limit is {max_bytes:,} bytes. Split the file or "
                     "evaluate it with the CLI (rag-metrics evaluate)", file=name)
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
            GoldenQuery(q.id, q.question, q.category, dict(qrels[q.id]), q.expected_answer) if q.id in qrels else q
            for q in current), current.name)
    validate_golden(golden, known_ids, report, source=name)
    if not report.ok:
        return None, report
    return GoldenSet(golden.queries, current.name), report


def export_golden(golden: GoldenSet, fmt: str) -> str:
    """Text of the golden set in ``csv``, ``json``, ``jsonl`` or TREC ``qrels`` format."""
    if fmt == "qrels":
        from rag_metrics.io import qrels_to_text

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


def explanation_table(explanations: Mapping[str, Any], metrics: Sequence[str]) -> pd.DataFrame:
    """metric, k, formula, substituted, value for the metrics asked (registry order kept)."""
    rows = []
    for m in metrics:
        e = explanations.get(m)
        if e is not None:
            rows.append({"metric": m, "k": e.k, "formula": e.formula, "substituted": e.substituted,
                         "value": e.value})
    return pd.DataFrame(rows, columns=["metric", "k", "formula", "substituted", "value"])


def live_results(memo: RetrievalMemo, text: str, n: int, chunk_text: Mapping[str, str],
                 chunk_doc: Mapping[str, str], labels: Mapping[str, int] | None = None,
                 level: int = 1) -> pd.DataFrame:
    """Top ``n`` chunks for a free-text query: rank, id, document, score, grade, relevant, text."""
    hits = memo.search(text)[:n]
    labels = labels or {}
    return pd.DataFrame({
        "rank": list(range(1, len(hits) + 1)), "id": [i for i, _ in hits],
        "document": [chunk_doc.get(i, "") for i, _ in hits], "score": [s for _, s in hits],
        "grade": [int(labels.get(i, labels.get(chunk_doc.get(i, ""), 0))) for i, _ in hits],
        "relevant": [int(labels.get(i, labels.get(chunk_doc.get(i, ""), 0))) >= level for i, _ in hits],
        "text": [chunk_text.get(i, "") for i, _ in hits]})


def metric_glossary(metrics: Sequence[str]) -> pd.DataFrame:
    """metric (label), description, formula, trec_eval name: from the metric registry."""
    from rag_metrics.metrics.registry import METRICS

    return pd.DataFrame([{"metric": METRICS[m].label, "description": METRICS[m].description,
                          "formula": METRICS[m].formula, "trec_eval": METRICS[m].trec_eval} for m in metrics])
