"""The one ranking rule (docs/conventions.md#ranking): score descending, ties by id descending, byte-wise.

trec_eval sorts a query's lines with ``comp_sim_docno``: higher score first, and on equal scores
``strcmp(b, a)``, so the id that is larger byte-wise comes first ("b" before "a", "9" before
"10", "é" (UTF-8 ``c3 a9``) before "z").  Every ordering in the library goes through this module:
judging a run (:func:`order_rows`), a run's ranked lists (:meth:`rag_metrics.types.Run.rankings`)
and the retrievers' top-k (:func:`rag_metrics.retrieval.ranking.top_k`), so the three can never
disagree on a tie.

- Scores compare as float64.  float32 scores (dense and BM25 retrievers) are promoted exactly, so
  a float32 score and the same value stored as float64 rank alike.  pytrec_eval compares float32
  (parity tests feed rank-derived scores).
- NaN scores rank last, as ``-inf`` (trec_eval has no NaN; our readers reject NaN in files).
- Ids compare by their UTF-8 bytes; for valid Unicode this is code point order, which is how
  Python compares ``str``, so no id is encoded to sort it.

Only NumPy is imported: ``types``, ``metrics.judge`` and ``retrieval.ranking`` all import this
module without a cycle.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["desc_id_rank", "duplicate_rows", "may_have_duplicates", "order_rows", "query_positions", "sort_scores",
           "trec_order"]


def desc_id_rank(ids: Sequence[str] | NDArray[np.object_]) -> NDArray[np.int64]:
    """``r[i]`` = position of ``ids[i]`` when the ids are sorted byte-wise **descending**.

    The largest id gets 0.  Sorting by ``r`` ascending therefore puts ties in trec_eval order
    without comparing strings again.  Equal ids (in a list with repeats) get distinct adjacent
    ranks, earlier occurrence first.

    >>> desc_id_rank(["10", "9", "1", "b", "a"]).tolist()
    [3, 2, 4, 0, 1]
    """
    arr = np.asarray(ids, dtype=object)
    n = len(arr)
    rank = np.empty(n, dtype=np.int64)
    if n == 0:
        return rank
    asc = np.argsort(arr, kind="stable")  # code point order == UTF-8 byte order
    # descending, but equal ids keep their original order (a stable sort on the reversed keys)
    rev = asc[::-1]
    eq = np.zeros(n, dtype=bool)
    if n > 1:
        s = arr[rev]
        eq[1:] = s[1:] == s[:-1]
    if eq.any():  # re-order runs of equal ids so the earlier occurrence comes first
        grp = np.cumsum(~eq) - 1
        rev = rev[np.lexsort((rev, grp))]
    rank[rev] = np.arange(n, dtype=np.int64)
    return rank


def sort_scores(scores: NDArray[np.floating] | Sequence[float]) -> NDArray[np.float64]:
    """Scores as the rule compares them: float64, NaN as ``-inf`` (ranks last)."""
    s = np.asarray(scores, dtype=np.float64)
    nan = np.isnan(s)
    return np.where(nan, -np.inf, s) if nan.any() else s


def trec_order(scores: NDArray[np.floating] | Sequence[float], id_rank: NDArray[np.integer],
               groups: NDArray[np.integer] | None = None) -> NDArray[np.int64]:
    """Row permutation: ``groups`` ascending (when given), then score descending, then id descending.

    Parameters
    ----------
    scores : array of float, shape (n,)
        Row scores (float32 or float64; NaN ranks last).
    id_rank : array of int, shape (n,)
        :func:`desc_id_rank` of each row's id (any values with the same order work).
    groups : array of int, shape (n,), optional
        Query code of each row; rows of one query end up contiguous, queries in code order.

    Returns
    -------
    ndarray of int64, shape (n,)
        ``order`` such that ``rows[order]`` is ranked.

    >>> trec_order([1.0, 2.0, 1.0, 1.0], desc_id_rank(["10", "x", "9", "1"])).tolist()
    [1, 2, 0, 3]
    """
    s = sort_scores(scores)
    keys = (np.asarray(id_rank), -s) if groups is None else (np.asarray(id_rank), -s, np.asarray(groups))
    return np.lexsort(keys).astype(np.int64, copy=False)


def order_rows(groups: NDArray[np.integer], id_codes: NDArray[np.integer], id_uniques: NDArray[np.object_],
               scores: NDArray[np.floating]) -> NDArray[np.int64] | None:
    """Rank rows of many queries at once by :func:`trec_order`.

    Parameters
    ----------
    groups : array of int, shape (n,)
        Non-negative query code of each row.
    id_codes, id_uniques
        ``id_uniques[id_codes]`` are the rows' ids.
    scores : array of float, shape (n,)

    Returns
    -------
    ndarray of int64 or None
        ``None`` when every query's rows are already contiguous and ranked (queries may come in
        any order).  Otherwise ``order`` with ``rows[order]`` ranked: when each query's rows are
        contiguous, only the queries found out of order are sorted, each within its own rows, so
        queries keep their places; otherwise rows are grouped by query code ascending.

    Notes
    -----
    The check costs two comparisons per row; ids are compared (through :func:`desc_id_rank` of
    the unique ids) only where scores tie.
    """
    n = len(groups)
    if n < 2:
        return None
    s = sort_scores(scores)
    same_q = groups[1:] == groups[:-1]
    n_groups = int(n - same_q.sum())
    # each query's rows together: as many runs of equal codes as distinct codes (a run whose queries
    # take turns row by row has as many runs as rows, and far fewer queries)
    contiguous = n_groups == int(np.count_nonzero(np.bincount(groups)))
    if contiguous:
        # a row out of place: the next row of its query scores higher, or ties with an id that
        # does not come later in the order
        up = same_q & (s[1:] > s[:-1])
        tie = np.flatnonzero(same_q & (s[1:] == s[:-1]))
        rank = desc_id_rank(id_uniques) if tie.size else None
        if rank is not None:
            bad_tie = tie[rank[id_codes[tie]] >= rank[id_codes[tie + 1]]]
            up[bad_tie] = True
        if not up.any():
            return None
        # sort only the queries that need it, each inside its own rows (queries stay where they are)
        bad_q = np.zeros(int(groups.max()) + 1, dtype=bool)
        bad_q[groups[np.flatnonzero(up)]] = True
        idx = np.flatnonzero(bad_q[groups])
        g = groups[idx]
        segment = np.zeros(len(idx), dtype=np.int64)
        np.cumsum(g[1:] != g[:-1], out=segment[1:])
        order = np.arange(n, dtype=np.int64)
        if rank is None:
            rank = desc_id_rank(id_uniques)
        order[idx] = idx[trec_order(s[idx], rank[id_codes[idx]], segment)]
        return order
    return trec_order(s, desc_id_rank(id_uniques)[id_codes], groups)


def query_positions(sq: NDArray[np.integer], nq: int) -> tuple[NDArray[np.int64], NDArray[np.int32]]:
    """For rows grouped by query (groups contiguous, in any order): first row of each query and
    each row's 0-based position inside its query."""
    n = len(sq)
    starts = np.zeros(nq, dtype=np.int64)
    if n == 0:
        return starts, np.zeros(0, dtype=np.int32)
    first = np.ones(n, dtype=bool)
    np.not_equal(sq[1:], sq[:-1], out=first[1:])
    fr = np.flatnonzero(first)
    starts[sq[fr]] = fr
    # positions without an n-sized temporary: +1 per row, and at each query's first row a jump back
    # to 0 (minus the previous query's length), then one cumulative sum in place
    pos = np.ones(n, dtype=np.int32)
    pos[0] = 0
    if len(fr) > 1:
        pos[fr[1:]] = 1 - np.diff(fr).astype(np.int32)
    np.cumsum(pos, out=pos)
    return starts, pos


def may_have_duplicates(sq: NDArray[np.integer], sic: NDArray[np.integer], nq: int,
                         counts: NDArray[np.integer], pos: NDArray[np.integer]) -> bool:
    """Cheap exact test for a repeated id inside one query (rows grouped by query).

    Lays the ids out as a (query, position) matrix, sorts each short row and looks for equal
    neighbours: much faster than hashing every (query, id) pair.  Falls back to True (let the
    caller hash) when the matrix would be much larger than the rows (very uneven depths).
    """
    n = len(sq)
    d = int(counts.max()) if n else 0
    if d < 2:
        return False
    if nq * d > 4 * n + 1024:
        return True
    mat = np.full((nq, d), -1, dtype=np.int64 if sic.dtype == np.int64 and sic.max() > 2**31 - 2 else np.int32)
    mat[sq, pos] = sic
    mat.sort(axis=1)
    return bool(np.any((mat[:, 1:] == mat[:, :-1]) & (mat[:, 1:] >= 0)))


def duplicate_rows(qcodes: NDArray[np.integer], idcodes: NDArray[np.integer]) -> NDArray[np.bool_]:
    """True for every row whose (query, id) pair appeared in an earlier row (any row layout)."""
    n = len(qcodes)
    if n < 2:
        return np.zeros(n, dtype=bool)
    nq = int(qcodes.max()) + 1
    contiguous = int(np.count_nonzero(qcodes[1:] != qcodes[:-1])) + 1 == int(np.count_nonzero(np.bincount(qcodes)))
    if contiguous:
        counts = np.bincount(qcodes, minlength=nq)
        _, pos = query_positions(qcodes, nq)
        if not may_have_duplicates(qcodes, idcodes, nq, counts, pos):
            return np.zeros(n, dtype=bool)
    nu = int(idcodes.max()) + 1
    import pandas as pd

    return pd.Index(qcodes.astype(np.int64) * nu + idcodes).duplicated(keep="first")
