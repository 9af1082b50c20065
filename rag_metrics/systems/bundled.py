"""The bundled retrievers (dense, BM25, hybrid over the current corpus) as a :class:`System`.

Wraps the lab's retrieval memo (``RetrievalMemo``: a retriever indexed once, rankings memoised per
question text), so a K change or a golden edit never retrieves again here either.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rag_metrics.systems.base import (
    SystemRun,
    _check_depth,
    fingerprint,
    run_from_rankings,
)

__all__ = ["BundledSystem"]


class BundledSystem:
    """A :class:`~rag_metrics.systems.base.System` over a retrieval memo.

    Parameters
    ----------
    memo
        A ``RetrievalMemo`` (``ensure(texts)``, ``search(text)``, ``depth``, ``chunks``).
    name
        Label, e.g. ``"dense"``.
    identity
        What identifies the index (corpus and chunking fingerprint, retriever kind): part of
        :attr:`fingerprint`.
    """

    def __init__(self, memo: Any, name: str, identity: str = "") -> None:
        self.memo = memo
        self.name = name
        self._fp = fingerprint("bundled", name, identity or id(memo))

    @property
    def fingerprint(self) -> str:
        return self._fp

    def rank(self, questions: Mapping[str, str], depth: int,
             progress: Callable[[int, int], None] | None = None) -> SystemRun:
        depth = _check_depth(depth)
        notes: tuple[str, ...] = ()
        if depth > self.memo.depth and len(self.memo.chunks) > self.memo.depth:
            notes = (f"{self.name!r} is indexed to depth {self.memo.depth}; deeper ranks are not available",)
        self.memo.ensure(questions.values(), progress=progress)
        rankings = {qid: self.memo.search(text)[:depth] for qid, text in questions.items()}
        return SystemRun(run_from_rankings(rankings, self.name), (), notes)
