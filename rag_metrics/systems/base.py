"""The :class:`System` protocol and what every system shares: results, failures, question matching,
result memo and the live-backend driver.

A *system* is anything that ranks chunks for the golden questions: a bundled retriever, an
uploaded run, an uploaded RAG log or a live search backend.  Every one answers
``rank(questions, depth) -> SystemRun``; pages, reports and the CLI call only that, so they never
branch on the kind.

Order of results (docs/conventions.md#ranking): a system hands back scores as its source gave them; the run
is ranked later, by :func:`rag_metrics.metrics.judge.judge`, score descending with ties by id
descending (trec_eval).  Sources without scores (RAG logs, ranked id lists) get ``n - rank``
(:meth:`rag_metrics.types.Run.from_rankings`), which keeps their order exactly.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rag_metrics.errors import InputError
from rag_metrics.retrieval.ranking import cut_run
from rag_metrics.types import Run

__all__ = [
    "DEFAULT_MEMO",
    "Backend",
    "BackendError",
    "LiveSystem",
    "QuestionFailure",
    "QuestionMatch",
    "ResultMemo",
    "System",
    "SystemRun",
    "UnmatchedRow",
    "cut_to_depth",
    "fingerprint",
    "match_questions",
    "normalise_question",
    "run_from_rankings",
]

Ranking = list[tuple[str, float]]


# ---- results -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class QuestionFailure:
    """A golden question the system could not answer (backend error, timeout, bad response)."""

    query_id: str
    question: str
    message: str

    def __str__(self) -> str:
        return f"query {self.query_id!r} ({self.question[:60]!r}): {self.message}"


@dataclass(frozen=True)
class UnmatchedRow:
    """A row of an upload that matches no golden question (by id or by normalised text)."""

    key: str  # the row's id (or question text when it has no id)
    question: str
    where: str  # "line 12", "row 3"
    reason: str


@dataclass(frozen=True)
class SystemRun:
    """What :meth:`System.rank` returns.

    Attributes
    ----------
    run
        The ranked results, keyed by golden query id.  Questions that failed have no rows.
    failures
        Questions the system could not answer, with the reason (a backend that failed half-way
        keeps what it answered; the rest are named here).
    notes
        Plain sentences for the user: how rows were matched, what was dropped and why.
    unmatched_rows
        Upload rows that match no golden question (listed, not fatal).
    context_match
        For RAG logs without ids: the context -> chunk match report
        (:class:`rag_metrics.systems.textmatch.ContextMatchReport`), else None.
    context_texts
        ``{context id: text}`` for contexts logged with both an id and a text (a RAG app's own
        chunk ids): an id the lab does not know is then located in the corpus by its text.
    """

    run: Run
    failures: tuple[QuestionFailure, ...] = ()
    notes: tuple[str, ...] = ()
    unmatched_rows: tuple[UnmatchedRow, ...] = ()
    context_match: Any = None
    context_texts: Mapping[str, str] | None = None

    @property
    def failed_ids(self) -> list[str]:
        return [f.query_id for f in self.failures]

    @property
    def ok(self) -> bool:
        return not self.failures


@runtime_checkable
class System(Protocol):
    """Anything that ranks chunks for golden questions.

    ``name`` is the label shown everywhere; ``fingerprint`` identifies what the system returns
    (configuration and content, never secrets), so results can be memoised per
    ``(fingerprint, question, depth)``.
    """

    name: str

    @property
    def fingerprint(self) -> str: ...

    def rank(self, questions: Mapping[str, str], depth: int) -> SystemRun:
        """Rank chunks for ``questions`` (``{golden query id: question text}``) to ``depth``."""
        ...


class BackendError(Exception):
    """A per-question failure of a live backend (message names the setting and the fix)."""


def fingerprint(*parts: object) -> str:
    """A short content hash of JSON-serialisable parts."""
    h = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()[:16]


def run_from_rankings(rankings: Mapping[str, Sequence[tuple[str, float]]], name: str) -> Run:
    """A :class:`Run` from ``{qid: [(id, score), ...]}`` (scores kept as given)."""
    qids: list[str] = []
    ids: list[str] = []
    scores: list[float] = []
    for q, items in rankings.items():
        for i, s in items:
            qids.append(q)
            ids.append(i)
            scores.append(s)
    return Run(np.asarray(qids, dtype=object), np.asarray(ids, dtype=object), np.asarray(scores, dtype=np.float64),
               name)


def cut_to_depth(run: Run, depth: int) -> Run:
    """``run`` with at most ``depth`` ids per query, cut in trec_eval order (unchanged when no query
    has more)."""
    if len(run) == 0:
        return run
    qc, _ = run.factorized_qids()
    if int(np.bincount(qc).max()) <= depth:
        return run

    return cut_run(run, depth)


def _check_depth(depth: object) -> int:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or int(depth) < 1:
        raise InputError(f"depth must be a whole number >= 1, got {depth!r}")
    return int(depth)


# ---- question matching -------------------------------------------------------------------------
def normalise_question(text: str) -> str:
    """Question text for matching: Unicode NFKC, case folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True)
class QuestionMatch:
    """Rows of an upload matched to golden query ids."""

    to_golden: dict[str, str]  # row key -> golden query id
    unmatched: tuple[UnmatchedRow, ...]
    by_id: int
    by_text: int

    def note(self, what: str) -> str:
        parts = [(f"{len(self.to_golden)} {what} matched to golden questions ({self.by_id} by id, "
                  f"{self.by_text} by question text)")]
        if self.unmatched:
            parts.append(f"{len(self.unmatched)} not matched and ignored")
        return "; ".join(parts)


def match_questions(golden: Mapping[str, str], rows: Sequence[tuple[str, str | None, str]],
                    text_first: bool = False) -> QuestionMatch:
    """Match upload rows to golden queries by id, or by normalised question text.

    Parameters
    ----------
    golden
        ``{golden query id: question text}``.
    rows
        ``(key, question text or None, where)`` per upload row; ``key`` is the row's query id.
    text_first
        Try the question text before the id (RAG logs, whose ids may be row numbers).

    Notes
    -----
    Each golden query takes the first row that matches it; later rows for the same query are
    listed as unmatched (duplicates).
    """
    by_text: dict[str, str] = {}
    for gid, gtext in golden.items():
        if gtext and gtext.strip():
            by_text.setdefault(normalise_question(gtext), gid)
    taken: dict[str, str] = {}
    out: dict[str, str] = {}
    unmatched: list[UnmatchedRow] = []
    n_id = n_text = 0
    for key, text, where in rows:
        via_text = by_text.get(normalise_question(text)) if text else None
        via_id = key if key in golden else None
        order = [(via_text, "text"), (via_id, "id")] if text_first else [(via_id, "id"), (via_text, "text")]
        hit = next(((q, how) for q, how in order if q is not None), None)
        if hit is None:
            reason = ("no golden question has this id or this question text" if text else
                      "no golden query has this id")
            unmatched.append(UnmatchedRow(key, text or "", where, reason))
            continue
        qid, how = hit
        if qid in taken:
            unmatched.append(UnmatchedRow(key, text or "", where,
                                          f"golden query {qid!r} is already answered by {taken[qid]}; "
                                          "only the first row is used"))
            continue
        taken[qid] = where
        out[key] = qid
        if how == "id":
            n_id += 1
        else:
            n_text += 1
    return QuestionMatch(out, tuple(unmatched), n_id, n_text)


# ---- memo of live results ----------------------------------------------------------------------
class ResultMemo:
    """Rankings memoised per ``(system fingerprint, question text)`` with the depth they reach.

    A ranking fetched to depth ``d`` answers every later request with depth ``<= d``, so a K
    change or a golden-set edit never re-queries a backend; only new question texts (or a deeper
    request) do.  Failures are not memoised (the next call retries them).

    With ``folder``, rankings are also kept on disk (one JSON file per fingerprint, atomic
    writes; question text and ``[id, score]`` pairs only) and come back after a restart.
    Thread-safe.
    """

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = Path(folder) if folder is not None else None
        self._data: dict[str, dict[str, tuple[int, Ranking]]] = {}
        self._lock = threading.Lock()
        #: Questions sent to backends so far (tests and benchmarks read it).
        self.queried = 0

    def _table(self, fp: str) -> dict[str, tuple[int, Ranking]]:
        t = self._data.get(fp)
        if t is None:
            t = {}
            if self.folder is not None:
                p = self.folder / f"{fp}.json"
                if p.is_file():
                    try:
                        raw = json.loads(p.read_text(encoding="utf-8"))
                        t = {q: (int(d), [(str(i), float(s)) for i, s in items]) for q, (d, items) in raw.items()}
                    except (ValueError, TypeError, OSError):
                        t = {}  # a damaged memo file is only a cache: start again
            self._data[fp] = t
        return t

    def get(self, fp: str, question: str, depth: int) -> Ranking | None:
        with self._lock:
            hit = self._table(fp).get(question)
        if hit is None:
            return None
        d, items = hit
        if d < depth and len(items) >= d:  # fetched to a smaller depth and the backend had more
            return None
        return items[:depth]

    def put_many(self, fp: str, depth: int, results: Mapping[str, Ranking]) -> None:
        if not results:
            return
        with self._lock:
            t = self._table(fp)
            for q, items in results.items():
                t[q] = (depth, list(items))
            if self.folder is not None:
                from rag_metrics.io.files import atomic_write_text

                atomic_write_text(self.folder / f"{fp}.json",
                                  json.dumps({q: [d, items] for q, (d, items) in t.items()}, ensure_ascii=False))

    def clear(self, fp: str | None = None) -> None:
        with self._lock:
            if fp is None:
                self._data.clear()
            else:
                self._data.pop(fp, None)
                if self.folder is not None:
                    (self.folder / f"{fp}.json").unlink(missing_ok=True)


#: The memo shared by live systems that are not given one (one per process).
DEFAULT_MEMO = ResultMemo()


# ---- live backends -----------------------------------------------------------------------------
class Backend(Protocol):
    """What a live adapter implements: one question -> ranked ``(id, score)``.

    Raise :class:`BackendError` for a per-question failure; raise :class:`InputError` for a
    setting that makes every question fail (unknown table, wrong dimension): the driver stops at
    once and names it.
    """

    concurrency: int

    @property
    def public_config(self) -> Mapping[str, Any]: ...

    def search(self, question: str, k: int) -> Ranking: ...

    def close(self) -> None: ...

    # Optional: ``search_many(questions, k) -> list[Ranking | BackendError]`` answers a batch at
    # once (one encoder call, one round trip); the driver uses it when present.


class BatchedBackend:
    """Mixin for a :class:`Backend` that answers batches (``search_many``): ``search`` is one batch."""

    def search_many(self, questions: list[str], k: int) -> list[Ranking | BackendError]:
        raise NotImplementedError

    def search(self, question: str, k: int) -> Ranking:
        res = self.search_many([question], k)[0]
        if isinstance(res, BackendError):
            raise res
        return res


class LiveSystem:
    """A :class:`System` over a live :class:`Backend`: memoised, concurrent, failures collected.

    Parameters
    ----------
    name
        Label of the system.
    backend
        The adapter (HTTP, pgvector, Qdrant).
    memo
        Where results are memoised (default: the process-wide :data:`DEFAULT_MEMO`).
    progress
        Optional ``progress(done, total)`` callback.
    """

    def __init__(self, name: str, backend: Backend, memo: ResultMemo | None = None) -> None:
        self.name = name
        self.backend = backend
        self.memo = memo if memo is not None else DEFAULT_MEMO

    @property
    def fingerprint(self) -> str:
        return fingerprint(type(self.backend).__name__, dict(self.backend.public_config))

    def _fetch(self, texts: list[str], depth: int, progress: Callable[[int, int], None] | None
               ) -> dict[str, Ranking | BackendError]:
        many = getattr(self.backend, "search_many", None)
        batch = many(texts, depth) if callable(many) else None
        if batch is not None:
            return dict(zip(texts, batch))
        out: dict[str, Ranking | BackendError] = {}

        def one(t: str) -> Ranking | BackendError:
            try:
                return self.backend.search(t, depth)
            except BackendError as e:
                return e

        workers = max(1, int(getattr(self.backend, "concurrency", 1)))
        if workers == 1 or len(texts) == 1:
            for n, t in enumerate(texts, 1):
                out[t] = one(t)
                if progress:
                    progress(n, len(texts))
            return out
        with ThreadPoolExecutor(max_workers=min(workers, len(texts))) as pool:
            for n, (t, res) in enumerate(zip(texts, pool.map(one, texts)), 1):
                out[t] = res
                if progress:
                    progress(n, len(texts))
        return out

    def rank(self, questions: Mapping[str, str], depth: int,
             progress: Callable[[int, int], None] | None = None) -> SystemRun:
        depth = _check_depth(depth)
        fp = self.fingerprint
        rankings: dict[str, Ranking] = {}
        todo: list[str] = []
        for qid, text in questions.items():
            hit = self.memo.get(fp, text, depth)
            if hit is None:
                todo.append(text)
            else:
                rankings[qid] = hit
        todo = list(dict.fromkeys(todo))
        fetched: dict[str, Ranking | BackendError] = {}
        if todo:
            fetched = {t: (r if isinstance(r, BackendError) else list(r)[:depth])
                       for t, r in self._fetch(todo, depth, progress).items()}  # never keep more than asked
            self.memo.queried += len(todo)
            self.memo.put_many(fp, depth, {t: r for t, r in fetched.items() if not isinstance(r, BackendError)})
        failures: list[QuestionFailure] = []
        for qid, text in questions.items():
            if qid in rankings:
                continue
            res = fetched.get(text)
            if isinstance(res, BackendError):
                failures.append(QuestionFailure(qid, text, str(res)))
            elif res is not None:
                rankings[qid] = res[:depth]
        notes: list[str] = []
        if todo:
            notes.append(f"{len(todo) - sum(isinstance(r, BackendError) for r in fetched.values())} of "
                         f"{len(todo)} new question(s) answered by {self.name!r}; "
                         f"{len(questions) - len(todo)} came from the memo")
        if failures:
            shown = ", ".join(repr(f.query_id) for f in failures[:10]) + (" ..." if len(failures) > 10 else "")
            notes.append(f"{len(failures)} question(s) failed and have no results (they count as retrieving "
                         f"nothing): {shown}; run again to retry them")
        return SystemRun(run_from_rankings(rankings, self.name), tuple(failures), tuple(notes))

    def test(self, question: str, depth: int = 5) -> Ranking:
        """Send one question (not memoised); raises :class:`InputError` with the backend's message."""
        try:
            return self.backend.search(question, depth)
        except BackendError as e:
            raise InputError(f"{self.name}: {e}") from None

    def close(self) -> None:
        close = getattr(self.backend, "close", None)
        if callable(close):
            close()

