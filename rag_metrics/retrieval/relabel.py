"""Carry golden chunk labels across re-chunking, through document and character span.

The rule
--------
An old labelled chunk covers the span ``[s, e)`` of document ``D``.  A new chunk ``[s', e')`` of
the same document receives the label's grade when their overlap ``o`` satisfies

    ``o >= MIN_COVER * (e - s)``    (it holds at least half of the labelled text), or
    ``o >= MIN_COVER * (e' - s')``  (at least half of it is labelled text),

with ``MIN_COVER = 0.5`` and the overlapping text identical in both chunks (if the document
text changed under the span, the label is not carried).  So a label carried to a larger chunk
stays on it, a label split into smaller chunks goes to each piece that is mostly inside it, and a
new chunk that merely touches the old span's edge (a chunk overlap) gets nothing.

When several old labels of one query land on the same new chunk, the highest grade wins.  Grades
``<= 0`` (judged non-relevant) are carried by the same rule.  Ids that are not old chunk ids
(e.g. document-level labels) are kept unchanged with status ``"not_a_chunk"``.

Status of each label
--------------------
``kept``   one new chunk with the same id and span;
``moved``  exactly one new chunk, with another id or span;
``split``  several new chunks;
``lost``   no new chunk meets the rule (the query may become out of scope: see ``emptied``).
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from rag_metrics.types import Chunk, GoldenQuery, GoldenSet

__all__ = ["MIN_COVER", "LabelChange", "LabelReport", "carry_labels"]

#: Fraction of the old span (or of the new chunk) that must overlap for a label to carry.
MIN_COVER = 0.5

Status = Literal["kept", "moved", "split", "lost", "not_a_chunk"]
STATUSES: tuple[Status, ...] = ("kept", "moved", "split", "lost", "not_a_chunk")


@dataclass(frozen=True)
class LabelChange:
    """What happened to one ``(query, old id, grade)`` label."""

    query_id: str
    old_id: str
    grade: int
    status: Status
    new_ids: tuple[str, ...] = ()
    #: fraction of the old span covered by the new chunks that received the label
    coverage: float = 0.0
    note: str = ""


@dataclass(frozen=True)
class LabelReport:
    """Per-label outcome of :func:`carry_labels` (no pandas; ``to_rows()`` for tables)."""

    changes: tuple[LabelChange, ...] = ()
    #: in-scope queries that lost every positive label (now out of scope)
    emptied: tuple[str, ...] = field(default=())

    def counts(self) -> dict[str, int]:
        """``{status: number of labels}`` for every status (zeros included)."""
        out: dict[str, int] = {s: 0 for s in STATUSES}
        for c in self.changes:
            out[c.status] += 1
        return out

    def by_status(self, status: Status) -> list[LabelChange]:
        return [c for c in self.changes if c.status == status]

    @property
    def lost(self) -> list[LabelChange]:
        return self.by_status("lost")

    def to_rows(self) -> list[dict[str, object]]:
        """One dict per label: query, old id, grade, status, new ids (comma-joined), coverage."""
        return [
            {"query_id": c.query_id, "old_id": c.old_id, "grade": c.grade, "status": c.status,
             "new_ids": ", ".join(c.new_ids), "coverage": c.coverage, "note": c.note}
            for c in self.changes
        ]

    def summary(self) -> str:
        cnt = self.counts()
        parts = [f"{cnt[s]} {s.replace('_', ' ')}" for s in STATUSES if cnt[s]]
        text = ", ".join(parts) or "no labels"
        if self.emptied:
            text += f"; {len(self.emptied)} query(ies) lost all relevant chunks"
        return text


def _by_doc(chunks: Sequence[Chunk]) -> dict[str, tuple[list[int], list[Chunk]]]:
    groups: dict[str, list[Chunk]] = {}
    for c in chunks:
        groups.setdefault(c.doc_id, []).append(c)
    out = {}
    for d, cs in groups.items():
        cs = sorted(cs, key=lambda c: (c.start, c.end))
        out[d] = ([c.start for c in cs], cs)
    return out


def _targets(old: Chunk, index: dict[str, tuple[list[int], list[Chunk]]]
             ) -> tuple[list[Chunk], float, str]:
    starts, cs = index.get(old.doc_id, ([], []))
    span = old.end - old.start
    if not cs or span <= 0:
        return [], 0.0, "document has no chunks now" if not cs else "empty span"
    # new chunks can start before old.start: chunk lengths are bounded, so scan from the first
    # chunk whose start is >= old.start minus the longest chunk
    longest = max(c.end - c.start for c in cs)
    i = bisect_left(starts, old.start - longest)
    hits: list[Chunk] = []
    covered: list[tuple[int, int]] = []
    changed = False
    for c in cs[i:]:
        if c.start >= old.end:
            break
        lo, hi = max(c.start, old.start), min(c.end, old.end)
        o = hi - lo
        if o <= 0:
            continue
        if old.text[lo - old.start:hi - old.start] != c.text[lo - c.start:hi - c.start]:
            changed = True
            continue
        if o >= MIN_COVER * span or o >= MIN_COVER * (c.end - c.start):
            hits.append(c)
            covered.append((lo, hi))
    # union length of covered intervals
    total, cur_lo, cur_hi = 0, None, None
    for lo, hi in sorted(covered):
        if cur_hi is None or lo > cur_hi:
            if cur_hi is not None:
                total += cur_hi - cur_lo  # type: ignore[operator]  # cur_lo is set with cur_hi
            cur_lo, cur_hi = lo, hi
        else:
            cur_hi = max(cur_hi, hi)
    if cur_hi is not None:
        total += cur_hi - cur_lo  # type: ignore[operator]  # cur_lo is set with cur_hi
    note = "document text changed under the span" if changed and not hits else ""
    return hits, total / span, note


def carry_labels(golden: GoldenSet, old_chunks: Sequence[Chunk], new_chunks: Sequence[Chunk]
                 ) -> tuple[GoldenSet, LabelReport]:
    """Map every chunk label of ``golden`` from ``old_chunks`` to ``new_chunks``.

    Parameters
    ----------
    golden : GoldenSet
        Labels on ids of ``old_chunks``.
    old_chunks, new_chunks : sequence of Chunk
        The chunking the labels were made on, and the new one (same documents).

    Returns
    -------
    (GoldenSet, LabelReport)
        A new golden set (queries, categories and answers unchanged; ``relevant`` re-mapped, best
        grade first is not guaranteed: insertion order follows the old labels) and the report.
        The input is not modified.
    """
    old_by_id = {c.id: c for c in old_chunks}
    index = _by_doc(new_chunks)
    changes: list[LabelChange] = []
    queries: list[GoldenQuery] = []
    emptied: list[str] = []
    for q in golden:
        relevant: dict[str, int] = {}
        origin: dict[str, str] = {}  # a carried label keeps the provenance of the label it came from
        for old_id, grade in q.relevant.items():
            grade = int(grade)
            old = old_by_id.get(old_id)
            if old is None:
                relevant[old_id] = max(grade, relevant.get(old_id, grade))
                origin.setdefault(old_id, q.label_source(old_id))
                changes.append(LabelChange(q.id, old_id, grade, "not_a_chunk", (old_id,), 1.0,
                                           "not an id of the old chunks; kept unchanged"))
                continue
            hits, coverage, note = _targets(old, index)
            for c in hits:
                relevant[c.id] = max(grade, relevant.get(c.id, grade))
                origin.setdefault(c.id, q.label_source(old_id))
            ids = tuple(c.id for c in hits)
            if not hits:
                status: Status = "lost"
            elif len(hits) > 1:
                status = "split"
            elif hits[0].id == old.id and (hits[0].start, hits[0].end) == (old.start, old.end):
                status = "kept"
            else:
                status = "moved"
            changes.append(LabelChange(q.id, old_id, grade, status, ids, round(coverage, 6), note))
        new_q = replace(q, relevant=relevant, label_origin=origin)
        if q.has_relevant and not new_q.has_relevant:
            emptied.append(q.id)
        queries.append(new_q)
    return GoldenSet(tuple(queries), name=golden.name), LabelReport(tuple(changes), tuple(emptied))
