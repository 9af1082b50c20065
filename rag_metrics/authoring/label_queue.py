"""A labelling queue: questions labelled one at a time, with ticks kept per question.

The "Label with retrieval" step of the app is a queue over the golden set's questions:

- :meth:`LabelQueue.next`, :meth:`~LabelQueue.previous` and :meth:`~LabelQueue.skip` move
  through it (skip marks the question skipped and saves nothing);
- the ticks (``{chunk id: grade}``) belong to one question.  They start from that question's
  saved labels the first time it is shown and are never carried to another question, so a tick
  made for question 1 can never be saved with question 2;
- :meth:`~LabelQueue.apply` writes the current question's ticks into a golden set: its labels
  become exactly the ticked ids (an unticked saved label is removed);
- :meth:`~LabelQueue.add_question` adds a question typed in the live query box to the queue
  (and to the golden set when its labels are applied);
- :meth:`~LabelQueue.propose` attaches ranked chunk proposals to a question (from its reference
  answer, :mod:`rag_metrics.authoring.label_suggest`).  A proposal is never a label: only
  :meth:`~LabelQueue.accept` (a person's click) ticks it, and only :meth:`~LabelQueue.apply` saves.

Streamlit-free: the app keeps one queue in the session state and saves the golden set that
:meth:`~LabelQueue.apply` returns through its usual autosave.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rag_metrics.errors import InputError
from rag_metrics.io.free_ids import free_id
from rag_metrics.io.golden import stable_query_id
from rag_metrics.limits import grade_error, id_problem
from rag_metrics.types import OUT_OF_SCOPE, GoldenQuery, GoldenSet

__all__ = ["LabelQueue", "QueueItem"]

#: Status of a question in the queue.
PENDING, SAVED, SKIPPED = "pending", "saved", "skipped"


@dataclass(frozen=True)
class QueueItem:
    """One question of the queue (``query_id`` is ``None`` until a new question is applied)."""

    key: str
    question: str
    query_id: str | None
    category: str = ""


@dataclass
class LabelQueue:
    items: list[QueueItem] = field(default_factory=list)
    pos: int = 0
    ticks: dict[str, dict[str, int]] = field(default_factory=dict)    # key -> {id: grade}
    status: dict[str, str] = field(default_factory=dict)              # key -> pending/saved/skipped
    touched: set[str] = field(default_factory=set)                    # keys ticked since last apply
    proposals: dict[str, list[tuple[str, float]]] = field(default_factory=dict)  # key -> [(id, score)]

    # ---- building -------------------------------------------------------------------------------
    @classmethod
    def from_golden(cls, golden: GoldenSet, *, unlabelled_first: bool = False,
                    include_out_of_scope: bool = True) -> LabelQueue:
        """A queue over the questions of ``golden`` (in order, or those without labels first)."""
        qs = [q for q in golden if include_out_of_scope or q.category != OUT_OF_SCOPE]
        if unlabelled_first:
            qs = sorted(qs, key=lambda q: bool(q.relevant))  # stable: keeps order within groups
        items = [QueueItem(q.id, q.question, q.id, q.category) for q in qs]
        queue = cls(items)
        for q in qs:
            queue.ticks[q.id] = {i: g for i, g in q.relevant.items() if g > 0}
            queue.status[q.id] = PENDING
        return queue

    def sync(self, golden: GoldenSet) -> None:
        """Follow edits made elsewhere: drop questions no longer in ``golden`` (except new ones not
        applied yet), add new ones at the end, and refresh the ticks of questions not touched."""
        by_id = {q.id: q for q in golden}
        keep = [it for it in self.items if it.query_id is None or it.query_id in by_id]
        have = {it.query_id for it in keep}
        for q in golden:
            if q.id not in have:
                keep.append(QueueItem(q.id, q.question, q.id, q.category))
                self.status[q.id] = PENDING
        cur = self.current
        self.items = keep
        for it in keep:
            if it.key in self.touched:
                continue  # the user's unsaved ticks win
            found = by_id.get(it.query_id) if it.query_id is not None else None
            self.ticks[it.key] = {i: g for i, g in found.relevant.items() if g > 0} if found else {}
        if cur is not None and cur in keep:
            self.pos = keep.index(cur)
        self.pos = min(self.pos, max(len(keep) - 1, 0))

    # ---- moving ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.items)

    @property
    def current(self) -> QueueItem | None:
        return self.items[self.pos] if 0 <= self.pos < len(self.items) else None

    def next(self) -> QueueItem | None:
        if self.pos < len(self.items) - 1:
            self.pos += 1
        return self.current

    def previous(self) -> QueueItem | None:
        if self.pos > 0:
            self.pos -= 1
        return self.current

    def go(self, key: str) -> QueueItem | None:
        for n, it in enumerate(self.items):
            if it.key == key:
                self.pos = n
        return self.current

    def skip(self) -> QueueItem | None:
        """Leave the current question unlabelled (its ticks are kept for later) and move on."""
        cur = self.current
        if cur is not None and self.status.get(cur.key) != SAVED:
            self.status[cur.key] = SKIPPED
        return self.next()

    def progress(self) -> dict[str, int]:
        """Counts of ``saved``, ``skipped`` and ``pending`` questions, and ``total``."""
        out = {PENDING: 0, SAVED: 0, SKIPPED: 0}
        for it in self.items:
            out[self.status.get(it.key, PENDING)] += 1
        return {**out, "total": len(self.items)}

    # ---- ticks ----------------------------------------------------------------------------------
    def current_ticks(self) -> dict[str, int]:
        """A copy of the current question's ticks (``{}`` when the queue is empty)."""
        cur = self.current
        return dict(self.ticks.get(cur.key, {})) if cur is not None else {}

    def tick(self, chunk_id: str, grade: int = 1) -> None:
        """Tick (grade > 0) or untick (grade 0) one id for the current question only."""
        cur = self._require()
        g, msg = grade_error(grade)
        if msg is not None:
            raise InputError(f"question {cur.question[:60]!r}: {msg}")
        bad = id_problem(str(chunk_id), "chunk id")
        if bad is not None:
            raise InputError(f"question {cur.question[:60]!r}: {bad}")
        t = self.ticks.setdefault(cur.key, {})
        self.touched.add(cur.key)
        if g and g > 0:
            t[str(chunk_id)] = g
        else:
            t.pop(str(chunk_id), None)

    def set_ticks(self, shown: list[str], ticked: Mapping[str, int]) -> None:
        """Set the ticks of the ``shown`` ids at once (a widget's value): ids in ``ticked`` get
        their grade, the other shown ids are unticked; ids not shown keep their ticks."""
        cur = self._require()
        t = self.ticks.setdefault(cur.key, {})
        self.touched.add(cur.key)
        for i in shown:
            t.pop(i, None)
        for i, g in ticked.items():
            self.tick(i, g)

    # ---- proposals ------------------------------------------------------------------------------
    def propose(self, key: str, ranked: list[tuple[str, float]]) -> None:
        """Attach ranked ``(chunk id, score)`` proposals to the question ``key`` (replacing earlier
        ones).  Nothing is ticked or saved: a person accepts them with :meth:`accept`."""
        if not any(it.key == key for it in self.items):
            raise InputError(f"no question {key!r} in the labelling queue")
        self.proposals[key] = [(str(i), float(s)) for i, s in ranked]

    def current_proposals(self) -> list[tuple[str, float]]:
        """The current question's proposals, best first (``[]`` when it has none)."""
        cur = self.current
        return list(self.proposals.get(cur.key, [])) if cur is not None else []

    def accept(self, chunk_ids: list[str], grade: int = 1) -> None:
        """A person accepts proposed chunks: they are ticked (with ``grade``) for the current
        question; :meth:`apply` then saves them like any tick."""
        cur = self._require()
        offered = {i for i, _ in self.proposals.get(cur.key, [])}
        unknown = [i for i in chunk_ids if i not in offered]
        if unknown:
            raise InputError(f"question {cur.question[:60]!r}: {', '.join(map(repr, unknown))} was not proposed; "
                             "tick it in the list instead")
        for i in chunk_ids:
            self.tick(i, grade)

    # ---- saving ---------------------------------------------------------------------------------
    def apply(self, golden: GoldenSet) -> GoldenSet:
        """``golden`` with the current question's labels set to exactly its ticks.

        A question typed in the live box is appended (id from its text, category
        ``out_of_scope`` when nothing is ticked).  The question is marked saved.
        """
        cur = self._require()
        ticks = dict(self.ticks.get(cur.key, {}))
        out: list[GoldenQuery] = []
        done = False
        for q in golden:
            if cur.query_id is not None and q.id == cur.query_id:
                cat = q.category
                if ticks and cat == OUT_OF_SCOPE:
                    cat = ""
                out.append(q.relabelled(ticks, category=cat))
                done = True
            else:
                out.append(q)
        if not done:
            qid = free_id(cur.query_id or stable_query_id(cur.question), (q.id for q in golden))
            cat = cur.category or ("" if ticks else OUT_OF_SCOPE)
            out.append(GoldenQuery(qid, cur.question, cat, ticks, None))
            new = QueueItem(cur.key, cur.question, qid, cat)
            self.items[self.pos] = new
        self.status[cur.key] = SAVED
        self.touched.discard(cur.key)
        return GoldenSet(tuple(out), golden.name)

    def apply_and_next(self, golden: GoldenSet) -> GoldenSet:
        new = self.apply(golden)
        self.next()
        return new

    def add_question(self, text: str, golden: GoldenSet | None = None) -> QueueItem:
        """Add a question from the live query box (or go to it when it is already queued)."""
        text = text.strip()
        if not text:
            raise InputError("type a question first")
        for n, it in enumerate(self.items):
            if it.question.strip() == text:
                self.pos = n
                return it
        q = next((q for q in golden if q.question.strip() == text), None) if golden is not None else None
        key = q.id if q is not None else f"new:{stable_query_id(text)}"
        item = QueueItem(key, text, q.id if q is not None else None, q.category if q is not None else "")
        self.items.append(item)
        self.ticks[key] = {i: g for i, g in q.relevant.items() if g > 0} if q is not None else {}
        self.status[key] = PENDING
        self.pos = len(self.items) - 1
        return item

    def _require(self) -> QueueItem:
        cur = self.current
        if cur is None:
            raise InputError("the labelling queue is empty; add a question first")
        return cur
