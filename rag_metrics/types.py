"""Core data types: documents, chunks, golden sets and runs.

All types are frozen dataclasses.  Nothing here imports heavy libraries beyond NumPy.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Document", "Chunk", "Corpus", "Evidence", "GoldenQuery", "GoldenSet", "Run", "OUT_OF_SCOPE", "content_hash",
           "DRAFTED", "HAND_WRITTEN", "HUMAN", "JUDGE", "SOURCE", "LABEL_ORIGINS", "QUESTION_ORIGINS",
           "PROPOSED", "REVIEWED"]

#: Category name used for questions the corpus cannot answer (no relevant id).
OUT_OF_SCOPE = "out_of_scope"

#: Where a question came from (``GoldenQuery.origin``): typed by a person, or drafted by a judge
#: from the corpus's chunks and accepted by a person.
HAND_WRITTEN, DRAFTED = "hand-written", "drafted"
QUESTION_ORIGINS = (HAND_WRITTEN, DRAFTED)
#: Who gave a label (``GoldenQuery.label_origin``): a person (the default, never stored), the LLM
#: judge (a relevance suggestion taken as a label), or the source chunk a drafted question was
#: written from (labelled when the person accepted the draft).
HUMAN, JUDGE, SOURCE = "human", "judge", "source"
LABEL_ORIGINS = (HUMAN, JUDGE, SOURCE)


def content_hash(parts: Iterable[str]) -> str:
    """A 16-hex-digit SHA-256 of a sequence of strings (each ended by NUL, so boundaries count).

    The fingerprints of corpora, chunk lists and golden sets (cache keys) are built on it.

    >>> content_hash(["a", "b"]) == content_hash(["ab"])
    False
    """
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Document:
    """One source document of a corpus."""

    id: str
    text: str
    title: str = ""
    source: str = ""  # file path or origin, for messages


@dataclass(frozen=True)
class Chunk:
    """A contiguous character span ``text == document.text[start:end]`` of one document.

    Chunk ids are ``<doc_id>#<n>`` with n counting from 0 in document order.
    """

    id: str
    doc_id: str
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Corpus:
    """An ordered collection of documents."""

    documents: tuple[Document, ...]
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "documents", tuple(self.documents))

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    def get(self, doc_id: str) -> Document | None:
        for d in self.documents:
            if d.id == doc_id:
                return d
        return None

    def fingerprint(self) -> str:
        """Content hash of the documents' ids and texts (the name, titles and sources do not count)."""
        return content_hash(x for d in self.documents for x in (d.id, d.text))


#: Status of an evidence label (:attr:`Evidence.status`): given or accepted by a person, or proposed
#: from a reference answer and not yet reviewed (never judged: see :mod:`rag_metrics.metrics.evidence`).
REVIEWED, PROPOSED = "reviewed", "proposed"


@dataclass(frozen=True)
class Evidence:
    """A passage of the corpus that answers a golden question: relevance that does not depend on chunking.

    ``doc`` names the document ("" when unknown: the quote is then searched in the whole corpus);
    the passage is ``quote`` or the character span ``[start, end)`` of the document's text (a span
    wins when both are given).  ``grade`` is an integer grade as in the qrels.  ``status`` is
    :data:`REVIEWED` (the default) or :data:`PROPOSED` (unreviewed: never feeds a verdict).
    How a retrieved context is judged against evidence: :mod:`rag_metrics.metrics.evidence`.
    """

    doc: str
    grade: int = 1
    quote: str = ""
    start: int | None = None
    end: int | None = None
    status: str = REVIEWED
    score: float | None = None  # a proposal's support score (0-1), for review only

    @property
    def reviewed(self) -> bool:
        return self.status == REVIEWED

    def as_row(self) -> dict[str, Any]:
        """The JSON object of this item as golden files write it."""
        row: dict[str, Any] = {"doc": self.doc}
        if self.quote:
            row["quote"] = self.quote
        if self.start is not None and self.end is not None:
            row["start"], row["end"] = self.start, self.end
        row["grade"] = int(self.grade)
        if self.status != REVIEWED:
            row["status"] = self.status
        if self.score is not None:
            row["score"] = round(float(self.score), 4)
        return row


@dataclass(frozen=True)
class GoldenQuery:
    """A golden question with its relevant ids and integer grades.

    ``relevant`` maps a chunk (or document) id to its grade; grades ``<= 0`` mean judged
    non-relevant.  The query is *out of scope* (the golden set says the corpus cannot answer it)
    when its category is ``out_of_scope`` or it has no judgment at all; a query judged with none
    relevant is in scope and scores 0, as in trec_eval (docs/conventions.md#golden-set).
    """

    id: str
    question: str
    category: str = ""
    relevant: Mapping[str, int] = field(default_factory=dict)
    expected_answer: str | None = None
    #: :data:`HAND_WRITTEN` (default) or :data:`DRAFTED`.
    origin: str = HAND_WRITTEN
    #: For a drafted question: ``source_chunk_ids``, ``generation`` (model, endpoint, settings),
    #: ``badges`` and ``draft_id``, as the drafting step recorded them (JSON-serialisable).
    draft: Mapping[str, Any] | None = None
    #: ``{id: JUDGE | SOURCE}`` for labels not given by a person (absent ids: :data:`HUMAN`).
    label_origin: Mapping[str, str] = field(default_factory=dict)
    #: Evidence labels (passages of the corpus), judged by :mod:`rag_metrics.metrics.evidence`; proposed ones
    #: (unreviewed) are kept for review and never judged.
    evidence: tuple[Evidence, ...] = ()

    def __post_init__(self) -> None:
        # one rule: a provenance mark exists only for a label that exists, and "human" is the default
        lo = {str(i): str(o) for i, o in dict(self.label_origin or {}).items()
              if i in self.relevant and o != HUMAN}
        object.__setattr__(self, "label_origin", lo)
        object.__setattr__(self, "origin", self.origin or HAND_WRITTEN)
        object.__setattr__(self, "evidence", tuple(self.evidence or ()))

    @property
    def drafted(self) -> bool:
        return self.origin == DRAFTED

    def label_source(self, item_id: str) -> str:
        """:data:`HUMAN`, :data:`JUDGE` or :data:`SOURCE`: who gave the label of ``item_id``."""
        return self.label_origin.get(item_id, HUMAN)

    def relabelled(self, relevant: Mapping[str, int], by: str = HUMAN, category: str | None = None) -> GoldenQuery:
        """This query with labels ``relevant`` set by ``by``: ids whose grade is unchanged keep
        their provenance, new or changed ones are marked ``by`` (a person's edit makes a judge's
        label a person's).  Every other field (origin, draft, expected answer) is kept."""
        rel = dict(relevant)
        lo = {i: (self.label_origin.get(i, HUMAN) if self.relevant.get(i) == g else by) for i, g in rel.items()}
        return replace(self, relevant=rel, label_origin=lo,
                       category=self.category if category is None else category)

    @property
    def provenance_parts(self) -> tuple[str, ...]:
        """The provenance as strings for :meth:`GoldenSet.fingerprint` (empty for a plain query)."""
        ev = (json.dumps([e.as_row() for e in self.evidence], sort_keys=True),) if self.evidence else ()
        if self.origin == HAND_WRITTEN and not self.draft and not self.label_origin:
            return ev
        return (self.origin, json.dumps(self.draft, sort_keys=True, default=str),
                json.dumps(sorted(self.label_origin.items())), *ev)

    @property
    def reviewed_evidence(self) -> tuple[Evidence, ...]:
        """Evidence a person gave or accepted (what judging reads)."""
        return tuple(e for e in self.evidence if e.reviewed)

    @property
    def proposed_evidence(self) -> tuple[Evidence, ...]:
        """Evidence proposed from the reference answer and not reviewed yet (never judged)."""
        return tuple(e for e in self.evidence if not e.reviewed)

    @property
    def in_scope(self) -> bool:
        """The golden set's own reading: not ``out_of_scope`` and judged (ids or reviewed evidence;
        the one scope rule)."""
        return bool(self.relevant or self.reviewed_evidence) and self.category != OUT_OF_SCOPE

    @property
    def awaiting_labels(self) -> bool:
        """Not marked out of scope, no label, but a reference answer (or proposals) to label it from:
        neither in scope nor out of scope until a person reviews evidence for it."""
        return (self.category != OUT_OF_SCOPE and not self.relevant and not self.reviewed_evidence
                and bool(self.expected_answer or self.proposed_evidence))

    @property
    def has_relevant(self) -> bool:
        """At least one positive grade (EvalOptions ``out_of_scope_rule="no_relevant_id"``)."""
        return any(g > 0 for g in self.relevant.values()) or any(e.grade > 0 for e in self.reviewed_evidence)

    @property
    def relevant_ids(self) -> list[str]:
        """Ids with a positive grade, best grade first (ties keep insertion order)."""
        items = [(i, g) for i, g in self.relevant.items() if g > 0]
        return [i for i, _ in sorted(items, key=lambda t: -t[1])]


@dataclass(frozen=True)
class GoldenSet:
    """An ordered set of golden queries with unique ids."""

    queries: tuple[GoldenQuery, ...]
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "queries", tuple(self.queries))

    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self) -> Iterator[GoldenQuery]:
        return iter(self.queries)

    @property
    def ids(self) -> list[str]:
        return [q.id for q in self.queries]

    def get(self, query_id: str) -> GoldenQuery | None:
        for q in self.queries:
            if q.id == query_id:
                return q
        return None

    def fingerprint(self) -> str:
        """Content hash of the queries in order: ids, questions, categories, labels with their grades
        (in order) and expected answers (``None`` counts as empty); the set's name does not count."""
        return content_hash(x for q in self.queries for x in (
            q.id, q.question, q.category or "", json.dumps([[i, int(g)] for i, g in q.relevant.items()]),
            q.expected_answer or "", *q.provenance_parts))

    def qrels(self) -> dict[str, dict[str, int]]:
        """pytrec_eval-shaped ``{qid: {id: grade}}`` (out-of-scope queries included, empty)."""
        return {q.id: dict(q.relevant) for q in self.queries}

    def questions(self) -> dict[str, str]:
        return {q.id: q.question for q in self.queries}

    @classmethod
    def from_qrels(
        cls,
        qrels: Mapping[str, Mapping[str, int]],
        questions: Mapping[str, str] | None = None,
        name: str = "",
    ) -> GoldenSet:
        """Build from a pytrec_eval/ranx-shaped dict ``{qid: {id: grade}}``.

        Grades are whole numbers (trec_eval's integer grades, :func:`rag_metrics.limits.grade_error`):
        ``2``, ``2.0`` or ``"2"`` give 2.  A real-valued grade (``0.8``, as Haystack and TruLens
        write relevance scores), NaN, None or a boolean is refused with an :class:`InputError`
        naming the query, the id and the value: it is never truncated (``int(0.8)`` would be 0).
        """
        from rag_metrics.errors import InputError
        from rag_metrics.limits import grade_error

        questions = questions or {}
        queries = []
        for q, rel in qrels.items():
            if not isinstance(rel, Mapping):
                raise InputError(f"query {str(q)!r}: expected a {{id: grade}} mapping, got {type(rel).__name__}")
            relevant: dict[str, int] = {}
            for i, g in rel.items():
                value = int(g) if isinstance(g, np.integer) else float(g) if isinstance(g, np.floating) else g
                grade, msg = grade_error(value)
                if msg is not None or grade is None:
                    raise InputError(
                        f"query {str(q)!r}, id {str(i)!r}: {msg}. Real-valued grades (e.g. 0.8) are not "
                        "supported: metrics follow trec_eval's integer grades; map them to whole numbers first "
                        "(e.g. 1 when the score is >= your threshold, else 0)")
                relevant[str(i)] = grade
            queries.append(GoldenQuery(id=str(q), question=questions.get(str(q), ""), relevant=relevant))
        return cls(tuple(queries), name=name)


class Run:
    """A retrieval run in columnar form: one row per (query, id, score).

    Rows need not be sorted: evaluation ranks each query by score descending, ties broken by id in
    descending byte-wise order (trec_eval).  Use :meth:`rankings` for the ranked lists.

    The id columns may be held as integer codes into arrays of unique strings (see
    :meth:`from_factorized`); ``qids`` and ``ids`` are then materialised only when asked for.
    Treat a Run as immutable.
    """

    __slots__ = ("_qids", "_ids", "scores", "name", "_fact")

    def __init__(self, qids: NDArray[np.object_] | Sequence[str], ids: NDArray[np.object_] | Sequence[str],
                 scores: NDArray[np.float64] | Sequence[float], name: str = "run") -> None:
        q = np.asarray(qids, dtype=object)
        i = np.asarray(ids, dtype=object)
        s = np.asarray(scores, dtype=np.float64)
        if not (len(q) == len(i) == len(s)):
            raise ValueError(
                f"Run columns differ in length: {len(q)} qids, {len(i)} ids, {len(s)} scores; "
                "pass one qid, id and score per row."
            )
        self._qids: NDArray[np.object_] | None = q
        self._ids: NDArray[np.object_] | None = i
        self.scores = s
        self.name = name
        self._fact: dict[str, tuple[NDArray[np.integer], NDArray[np.object_]]] = {}

    def __repr__(self) -> str:
        return f"Run(name={self.name!r}, rows={len(self)})"

    def __len__(self) -> int:
        return len(self.scores)

    @property
    def qids(self) -> NDArray[np.object_]:
        if self._qids is None:
            codes, uniques = self._fact["qids"]
            self._qids = uniques[codes]
        return self._qids

    @property
    def ids(self) -> NDArray[np.object_]:
        if self._ids is None:
            codes, uniques = self._fact["ids"]
            self._ids = uniques[codes]
        return self._ids

    def _factorized(self, attr: str) -> tuple[NDArray[np.integer], NDArray[np.object_]]:
        if attr not in self._fact:
            import pandas as pd

            codes, uniques = pd.factorize(getattr(self, attr))
            self._fact[attr] = (codes, np.asarray(uniques, dtype=object))
        return self._fact[attr]

    def factorized_qids(self) -> tuple[NDArray[np.integer], NDArray[np.object_]]:
        """``(codes, uniques)`` with ``uniques[codes] == qids`` (computed once, cached)."""
        return self._factorized("qids")

    def factorized_ids(self) -> tuple[NDArray[np.integer], NDArray[np.object_]]:
        """``(codes, uniques)`` with ``uniques[codes] == ids`` (computed once, cached)."""
        return self._factorized("ids")

    @classmethod
    def from_factorized(cls, qcodes: NDArray[np.integer], quniques: NDArray[np.object_] | Sequence[str],
                        idcodes: NDArray[np.integer], iduniques: NDArray[np.object_] | Sequence[str],
                        scores: NDArray[np.float64], name: str = "run") -> Run:
        """Build from integer codes (e.g. a parser's dictionary encoding) without a string per row."""
        qcodes = np.asarray(qcodes)
        idcodes = np.asarray(idcodes)
        scores = np.asarray(scores, dtype=np.float64)
        if not (len(qcodes) == len(idcodes) == len(scores)):
            raise ValueError("Run columns differ in length; pass one qid code, id code and score per row.")
        run = cls.__new__(cls)
        run._qids = None
        run._ids = None
        run.scores = scores
        run.name = name
        run._fact = {"qids": (qcodes, np.asarray(quniques, dtype=object)),
                     "ids": (idcodes, np.asarray(iduniques, dtype=object))}
        return run

    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]], name: str = "run") -> Run:
        """From a pytrec_eval/ranx-shaped dict ``{qid: {id: score}}``."""
        qids: list[str] = []
        ids: list[str] = []
        scores: list[float] = []
        for q, ranking in run.items():
            for i, s in ranking.items():
                qids.append(str(q))
                ids.append(str(i))
                scores.append(float(s))
        return cls(np.array(qids, dtype=object), np.array(ids, dtype=object),
                   np.array(scores, dtype=np.float64), name)

    @classmethod
    def from_rankings(
        cls,
        rankings: Mapping[str, Sequence[str] | Sequence[tuple[str, float]]],
        name: str = "run",
    ) -> Run:
        """From ranked lists.  Plain id lists get scores ``n - rank`` so the order is kept exactly."""
        qids: list[str] = []
        ids: list[str] = []
        scores: list[float] = []
        for q, ranking in rankings.items():
            n = len(ranking)
            for r, item in enumerate(ranking):
                if isinstance(item, tuple):
                    i, s = item
                else:
                    i, s = item, float(n - r)
                qids.append(str(q))
                ids.append(str(i))
                scores.append(float(s))
        return cls(np.array(qids, dtype=object), np.array(ids, dtype=object),
                   np.array(scores, dtype=np.float64), name)

    @classmethod
    def concat(cls, runs: Iterable[Run], name: str = "run") -> Run:
        runs = list(runs)
        if not runs:
            return cls(np.array([], dtype=object), np.array([], dtype=object), np.array([]), name)
        return cls(np.concatenate([r.qids for r in runs]), np.concatenate([r.ids for r in runs]),
                   np.concatenate([r.scores for r in runs]), name)

    def query_ids(self) -> list[str]:
        """Distinct query ids in first-seen order."""
        return list(dict.fromkeys(self.qids.tolist()))

    def rankings(self) -> dict[str, list[tuple[str, float]]]:
        """``{qid: [(id, score), ...]}`` ranked by score desc, ties by id desc (trec_eval order,
        :mod:`rag_metrics.ordering`), queries in first-seen order.

        Duplicate ids inside one query keep their best-ranked occurrence.
        """
        return {q: list(zip(ids.tolist(), scores.tolist())) for q, (ids, scores) in self.ranked_arrays().items()}

    def ranked_arrays(self) -> dict[str, tuple[NDArray[np.object_], NDArray[np.float64]]]:
        """:meth:`rankings` as arrays, ``{qid: (ids, scores)}``: the same order, the same duplicates
        dropped, computed for all queries at once (no Python step per row)."""
        from rag_metrics.ordering import duplicate_rows, order_rows

        qc, qu = self.factorized_qids()
        ic, iu = self.factorized_ids()
        if len(qc) == 0:
            return {}
        first_seen = dict.fromkeys(qc.tolist())
        sc = self.scores
        order = order_rows(qc, ic, iu, sc)
        if order is not None:  # ranked, each query's rows together
            qc, ic, sc = qc[order], ic[order], sc[order]
        dup = duplicate_rows(qc, ic)  # a repeated id inside one query keeps its first (best-ranked) row
        if dup.any():
            qc, ic, sc = qc[~dup], ic[~dup], sc[~dup]
        starts = np.flatnonzero(np.r_[True, qc[1:] != qc[:-1]])
        ends = np.r_[starts[1:], len(qc)]
        ids = iu[ic]
        rows = {q: (ids[a:b], sc[a:b]) for q, a, b in zip(qc[starts].tolist(), starts.tolist(), ends.tolist())}
        return {qu[q]: rows[q] for q in first_seen}

    def to_dict(self) -> dict[str, dict[str, float]]:
        """pytrec_eval-shaped ``{qid: {id: score}}`` (first occurrence of a duplicate id wins)."""
        return {q: dict(items) for q, items in self.rankings().items()}

    def top_scores(self) -> dict[str, float]:
        """Best score per query."""
        return {q: items[0][1] for q, items in self.rankings().items() if items}
