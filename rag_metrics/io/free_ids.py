"""Ids for questions written without one: ``base``, else ``base-2``, ``base-3``, ... the first free.

:class:`FreeIds` keeps a counter per base, so N questions with the same text get their ids in N
steps, not N²/2 (a file of 16,000 identical questions once cost 13 s of a class server's CPU).
Every place that names a new question (:mod:`rag_metrics.io.golden` and the authoring tools) asks it.
"""
from __future__ import annotations

from collections.abc import Iterable

__all__ = ["FreeIds", "free_id"]


class FreeIds:
    """The ids taken so far and, per base, where the next free ``base-n`` may be.

    >>> ids = FreeIds(["q-1"])
    >>> [ids.new("q-1"), ids.new("q-1"), ids.new("q-2")]
    ['q-1-2', 'q-1-3', 'q-2']
    """

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken: set[str] = set(taken)
        self._next: dict[str, int] = {}
        #: Ids looked up in :attr:`taken` so far (at most two per new id plus one per id taken).
        self.probes = 0

    def __contains__(self, qid: object) -> bool:
        return qid in self.taken

    def add(self, qid: str) -> None:
        """Mark ``qid`` (an id the file gives) as taken."""
        self.taken.add(qid)

    def new(self, base: str) -> str:
        """The first free id of ``base``, ``base-2``, ``base-3``, ..., now taken.  The counter only moves on
        past ids that are taken, and an id once taken stays taken, so no id is looked up twice for one base."""
        self.probes += 1
        qid = base
        if base in self.taken:
            n = self._next.get(base, 2)
            while True:
                self.probes += 1
                qid, n = f"{base}-{n}", n + 1
                if qid not in self.taken:
                    break
            self._next[base] = n
        self.taken.add(qid)
        return qid


def free_id(base: str, taken: Iterable[str]) -> str:
    """One new id beside ``taken`` (:meth:`FreeIds.new`)."""
    return FreeIds(taken).new(base)
