"""Ranking helpers shared by the retrievers: trec_eval-ordered top-k and chunk -> document collapse.

Conventions
-----------
- **Order (docs/conventions.md#ranking)**: score descending, ties by id in descending byte-wise order
  (trec_eval), as defined once in :mod:`rag_metrics.ordering` (``desc_id_rank`` is re-exported
  here for the retrievers).  Every retriever here returns its top ``k`` in exactly that order, so cutting,
  fusing or exporting a run never depends on an index's internal tie order.
- Scores are kept as computed (float32 for dense and BM25, promoted exactly to float64 in
  :class:`~rag_metrics.types.Run`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from rag_metrics.errors import InputError
from rag_metrics.ordering import desc_id_rank, sort_scores, trec_order
from rag_metrics.types import Run

__all__ = ["RunBuilder", "collapse_to_documents", "cut_run", "desc_id_rank", "top_k"]


def top_k(scores: NDArray[np.floating], id_rank: NDArray[np.int64], k: int,
          candidates: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
    """Indices of the ``k`` best entries in trec_eval order (score desc, id desc).

    Parameters
    ----------
    scores : ndarray, shape (m,)
        Scores of the candidates (or of every item when ``candidates`` is None).
    id_rank : ndarray, shape (n,)
        :func:`desc_id_rank` of all item ids.
    k : int
        How many to return (fewer when there are fewer items).
    candidates : ndarray of int, optional
        Item indices that ``scores`` refer to; default ``arange(m)``.

    Notes
    -----
    Exact at the cut: every item tied with the k-th score is considered before cutting, so the
    id tie-break decides which of them survive.
    """
    m = len(scores)
    if candidates is None:
        candidates = np.arange(m, dtype=np.int64)
    if m == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    s = sort_scores(scores)  # float64, NaN as -inf: the ordering rule's view of the scores
    if k < m:
        kth = np.partition(s, m - k)[m - k]
        keep = np.flatnonzero(s >= kth)
    else:
        keep = np.arange(m)
    order = trec_order(s[keep], id_rank[candidates[keep]])
    return candidates[keep[order[:k]]]


class RunBuilder:
    """Accumulates per-query ranked rows and builds one :class:`Run`."""

    def __init__(self) -> None:
        self._q: list[NDArray[np.object_]] = []
        self._i: list[NDArray[np.object_]] = []
        self._s: list[NDArray[np.float64]] = []

    def add(self, qid: str, ids: NDArray[np.object_] | Sequence[str],
            scores: NDArray[np.floating] | Sequence[float]) -> None:
        ids_arr = np.asarray(ids, dtype=object)
        self._q.append(np.full(len(ids_arr), qid, dtype=object))
        self._i.append(ids_arr)
        self._s.append(np.asarray(scores, dtype=np.float64))

    def build(self, name: str) -> Run:
        if not self._q:
            return Run(np.array([], dtype=object), np.array([], dtype=object),
                       np.array([], dtype=np.float64), name)
        return Run(np.concatenate(self._q), np.concatenate(self._i), np.concatenate(self._s), name)


def cut_run(run: Run, k: int) -> Run:
    """The first ``k`` rows of every query in trec_eval order (a new Run, rows in that order)."""
    b = RunBuilder()
    for q, items in run.rankings().items():
        items = items[:k]
        b.add(q, [i for i, _ in items], [s for _, s in items])
    return b.build(run.name)


def collapse_to_documents(
    run: Run, chunk_to_doc: Mapping[str, str], k: int | None = None,
    scores: Literal["chunk", "rank"] = "chunk",
) -> Run:
    """Turn a chunk run into a document run: each document keeps its best-ranked chunk only.

    Parameters
    ----------
    run : Run
        Chunk-level run (ids are chunk ids).
    chunk_to_doc : mapping
        ``{chunk_id: doc_id}`` (e.g. :func:`rag_metrics.retrieval.chunking.chunk_to_doc`).
    k : int, optional
        Keep only the first ``k`` documents per query.
    scores : {"chunk", "rank"}
        ``"chunk"`` (default): a document's score is the score of its first chunk in trec_eval
        order, so thresholds on scores keep their meaning.  ``"rank"``: scores ``n - rank`` that
        reproduce the chunk walk order exactly.

    Returns
    -------
    Run
        Rows in ranked order.

    Notes
    -----
    Chunks are walked in trec_eval order (score desc, chunk id desc); the first chunk of each
    document fixes its position, later chunks of it are dropped (docs/conventions.md
    #chunks-and-documents), so two chunks of one relevant document never count twice.  With ``"chunk"``
    scores, two documents whose best chunks have *exactly* equal scores are ordered by document id
    descending when the run is re-ranked (what trec_eval does with the exported file); this equals
    the chunk walk order unless ids contain characters that sort below ``#``.  Use ``"rank"`` when
    the walk order must be kept bit for bit.

    Raises
    ------
    InputError
        When a chunk id of the run is missing from ``chunk_to_doc``.
    """
    b = RunBuilder()
    for q, items in run.rankings().items():
        seen: set[str] = set()
        ids: list[str] = []
        sc: list[float] = []
        for cid, s in items:
            doc = chunk_to_doc.get(cid)
            if doc is None:
                raise InputError(f"run id {cid!r} (query {q!r}) is not a chunk of the corpus; "
                                 "collapse runs produced on the same chunking.")
            if doc in seen:
                continue
            seen.add(doc)
            ids.append(doc)
            sc.append(s)
            if k is not None and len(ids) >= k:
                break
        if scores == "rank":
            n = len(ids)
            sc = [float(n - r) for r in range(n)]
        b.add(q, ids, sc)
    return b.build(run.name)
