"""Judging: the one place where retrieved ids meet relevance labels.

:func:`judge` turns a run and qrels into a per-rank grade matrix, in the spirit of trec_eval's
``form_res_rels``: every metric kernel afterwards is arithmetic over integers and never compares ids.

Ranking rule (trec_eval): within a query, sort by score descending; ties by id in descending
byte-wise string order ("b" before "a", "9" before "10").  The rank column of a TREC run file is
ignored, as trec_eval ignores it.  A duplicate id inside one query keeps its best-ranked occurrence.
NaN scores rank last.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from rag_metrics.types import Run

__all__ = ["Judged", "judge", "rank_order"]


@dataclass(frozen=True, eq=False)
class Judged:
    """Relevance of every ranked position of every golden query.

    Attributes
    ----------
    query_ids
        Golden query ids, in golden-set order (row order of every matrix).
    grades
        ``grades[q, i]`` is the integer grade of the id at rank ``i + 1`` of query ``q``
        (0 when unjudged or when fewer than ``i + 1`` ids were retrieved).  Shape ``(n_queries, depth)``.
    n_retrieved
        Number of distinct ids retrieved per query (after duplicate removal).
    ideal_grades
        Positive grades of every judged id of the query, sorted descending, zero padded.
        Shape ``(n_queries, max_positive)``.  Used for ``|R|`` and the ideal DCG.
    top_score
        Best retrieval score per query (NaN when the query retrieved nothing).
    in_run
        True when the run has at least one row for the query.
    starts
        First ranked row of each query in ``ranked_codes`` / ``ranked_scores``.
    is_judged
        ``is_judged[q, i]`` is True when the id at rank ``i + 1`` has a label in the qrels (any
        grade, 0 and negative included); tells grade-0 judgments from unjudged ids (``judged@k``).
        None when the grades were given without ids.
    ranked_codes, id_uniques
        The ranked ids after id mapping (e.g. chunk -> document), aligned with ``order``, as codes
        into ``id_uniques`` (materialised per query by :meth:`ranking`).
    """

    query_ids: tuple[str, ...]
    grades: NDArray[np.int32]
    n_retrieved: NDArray[np.int64]
    ideal_grades: NDArray[np.int32]
    top_score: NDArray[np.float64]
    in_run: NDArray[np.bool_]
    starts: NDArray[np.int64]
    ranked_codes: NDArray[np.int64]
    id_uniques: NDArray[np.object_]
    ranked_scores: NDArray[np.float64]
    is_judged: NDArray[np.bool_] | None = None

    @property
    def depth(self) -> int:
        return int(self.grades.shape[1])

    def ranking(self, q: int) -> tuple[list[str], list[float], list[int]]:
        """Ids, scores and grades of query row ``q`` in ranked order."""
        lo = int(self.starts[q])
        hi = lo + int(self.n_retrieved[q])
        ids = self.id_uniques[self.ranked_codes[lo:hi]].tolist()
        scores = self.ranked_scores[lo:hi].tolist()
        return ids, scores, self.grades[q, : hi - lo].tolist()


def _id_rank(uniques: NDArray[np.object_]) -> NDArray[np.int64]:
    """Rank of each unique id in byte-wise order (UTF-8 order == code point order)."""
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[np.argsort(uniques, kind="stable")] = np.arange(len(uniques), dtype=np.int64)
    return rank


def rank_order(qcodes: NDArray[np.int64], idcodes: NDArray[np.int64], iduniques: NDArray[np.object_],
               scores: NDArray[np.float64]) -> NDArray[np.int64] | None:
    """Row order grouping rows by query, then score descending, then id descending (trec_eval).

    Returns None when the rows are already in that order (the usual case for TREC files and for
    runs we produce), so the caller can skip the sort.  ``scores`` must have no NaN.
    """
    n = len(qcodes)
    if n < 2:
        return None
    same_q = qcodes[1:] == qcodes[:-1]
    n_groups = int(n - same_q.sum())
    contiguous = n_groups == int(np.count_nonzero(np.bincount(qcodes))) if n_groups < n else True
    if contiguous:
        up = same_q & (scores[1:] > scores[:-1])
        if not up.any():
            tie = np.flatnonzero(same_q & (scores[1:] == scores[:-1]))
            if tie.size == 0:
                return None
            a, b = iduniques[idcodes[tie]], iduniques[idcodes[tie + 1]]
            if np.all(a > b):
                return None
    order = np.lexsort((-scores, qcodes))
    sq, ss = qcodes[order], scores[order]
    if np.any((sq[1:] == sq[:-1]) & (ss[1:] == ss[:-1])):
        idkey = _id_rank(iduniques)[idcodes]
        order = np.lexsort((-idkey, -scores, qcodes))
    return order


def _may_have_duplicates(sq: NDArray[np.int64], sic: NDArray[np.int64], nq: int,
                         counts: NDArray[np.int64], pos: NDArray[np.int64]) -> bool:
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
        _, pos = _positions(qcodes, nq)
        if not _may_have_duplicates(qcodes, idcodes, nq, counts, pos):
            return np.zeros(n, dtype=bool)
    nu = int(idcodes.max()) + 1
    return pd.Index(qcodes.astype(np.int64) * nu + idcodes).duplicated(keep="first")


def _positions(sq: NDArray[np.integer], nq: int) -> tuple[NDArray[np.int64], NDArray[np.int32]]:
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


def judge(
    qrels: Mapping[str, Mapping[str, int]],
    run: Run,
    *,
    id_map: Mapping[str, str] | None = None,
    depth: int | None = None,
) -> Judged:
    """Rank the run trec_eval's way and look up the grade of every ranked id.

    Parameters
    ----------
    qrels
        ``{query_id: {id: grade}}`` in golden order; queries with no positive grade are kept
        (they are out of scope: the evaluation decides what to do with them).
    run
        The run to judge.  Rows of queries not in ``qrels`` are ignored.
    id_map
        Optional id mapping applied *after* ranking, e.g. chunk id -> document id.  The mapped id
        takes the rank of its first (best-ranked) original id; later ones are dropped, so two chunks
        of one relevant document never count twice.  Qrels ids are mapped too (max grade kept), so
        chunk-level labels can be judged at document level.  Unmapped ids are kept as they are.
    depth
        Keep only the first ``depth`` ranked ids of each query (default: all).
    """
    query_ids = tuple(str(q) for q in qrels)
    nq = len(query_ids)
    qindex = pd.Index(query_ids)
    if not qindex.is_unique:
        dup = qindex[qindex.duplicated()][0]
        raise ValueError(f"duplicate query id {dup!r} in qrels; query ids must be unique")

    # --- qrels: ideal grades and (query, id) -> grade lookup ------------------------------
    rels = [qrels[qid] for qid in query_ids]
    if id_map is not None:
        mapped_rels = []
        for rel in rels:
            mapped: dict[str, int] = {}
            for i, g in rel.items():
                m = id_map.get(i, i)
                mapped[m] = max(int(g), mapped.get(m, int(g)))
            mapped_rels.append(mapped)
        rels = mapped_rels
    sizes = np.fromiter((len(r) for r in rels), dtype=np.int64, count=nq)
    q_rows = np.repeat(np.arange(nq, dtype=np.int64), sizes)
    q_ids = [str(i) for r in rels for i in r]
    q_grades = np.fromiter((g for r in rels for g in r.values()), dtype=np.int64, count=int(sizes.sum()))
    qr_rows = np.asarray(q_rows, dtype=np.int64)
    qr_grades = np.asarray(q_grades, dtype=np.int64)
    pos_counts = np.bincount(qr_rows[qr_grades > 0], minlength=nq) if nq else np.zeros(0, np.int64)
    m = int(pos_counts.max()) if nq and len(pos_counts) else 0
    ideal = np.zeros((nq, max(m, 1)), dtype=np.int32)
    if m:
        pos = qr_grades > 0
        rows, grades = qr_rows[pos], qr_grades[pos]
        o = np.lexsort((-grades, rows))
        rows, grades = rows[o], grades[o]
        starts = np.cumsum(pos_counts) - pos_counts
        ideal[rows, np.arange(len(rows)) - starts[rows]] = grades

    # --- run rows of golden queries, ranked ----------------------------------------------
    qc_run, qun = run.factorized_qids()
    ic_run, iun = run.factorized_ids()
    golden_pos = {q: i for i, q in enumerate(query_ids)}
    qmap = np.fromiter((golden_pos.get(q, -1) for q in qun.tolist()), dtype=np.int32, count=len(qun))
    qcodes = qmap[qc_run] if len(qc_run) else np.zeros(0, np.int32)
    scores = run.scores
    rows = None
    if len(qcodes) and (qcodes < 0).any():
        rows = np.flatnonzero(qcodes >= 0)
        qcodes, scores, ic_run = qcodes[rows], scores[rows], ic_run[rows]
    nan = np.isnan(scores)
    if nan.any():
        scores = np.where(nan, -np.inf, scores)
    order = rank_order(qcodes, ic_run, iun, scores)
    if order is None:
        sq, sic, sscores = qcodes, ic_run, scores
    else:
        sq, sic, sscores = qcodes[order], ic_run[order], scores[order]
    del order, qcodes
    if id_map is not None and len(sic):
        # map the unique ids, then re-code: two chunks of one document share a code
        mapped = np.asarray([id_map.get(x, x) for x in iun.tolist()], dtype=object)
        codes2, iun = pd.factorize(mapped)
        iun = np.asarray(iun, dtype=object)
        sic = codes2[sic].astype(np.int64)
    nu = max(len(iun), 1)
    sq = sq.astype(np.int64, copy=False) if nq * nu > 2**31 - 1 else sq
    counts = np.bincount(sq, minlength=nq).astype(np.int64) if nq else np.zeros(0, np.int64)
    starts, pos_in_q = _positions(sq, nq)
    # Drop repeated (query, id) after ranking: the first occurrence is the best-ranked one.
    if len(sic) and _may_have_duplicates(sq, sic, nq, counts, pos_in_q):
        dup = pd.Index(sq * nu + sic).duplicated(keep="first")
        if dup.any():
            nd = ~dup
            sq, sic, sscores = sq[nd], sic[nd], sscores[nd]
            counts = np.bincount(sq, minlength=nq).astype(np.int64)
            starts, pos_in_q = _positions(sq, nq)
    in_run = counts > 0
    if depth is not None and len(sq) and counts.max() > depth:
        d = pos_in_q < depth
        sq, sic, sscores = sq[d], sic[d], sscores[d]
        counts = np.minimum(counts, depth)
        starts, pos_in_q = _positions(sq, nq)
    max_depth = int(counts.max()) if nq and len(sq) else 0

    # --- grade of every ranked id: only rows whose id is judged somewhere need a lookup ----
    grades = np.zeros((nq, max(max_depth, 1)), dtype=np.int32)
    is_judged = np.zeros(grades.shape, dtype=bool)
    if len(sic) and len(q_ids):
        qr_codes = pd.Index(iun).get_indexer(np.asarray(q_ids, dtype=object))
        known = qr_codes >= 0
        if known.any():
            judged_id = np.zeros(nu, dtype=bool)
            judged_id[qr_codes[known]] = True
            qrel_keys = qr_rows[known] * nu + qr_codes[known]
            s_g = pd.Series(qr_grades[known]).groupby(qrel_keys).max()  # same id twice: max grade
            lookup = pd.Index(s_g.index.to_numpy())
            g_values = s_g.to_numpy()
            flat = grades.reshape(-1)
            width = grades.shape[1]
            step = 1 << 18  # bounded temporaries: look up and place a block of rows at a time
            for lo in range(0, len(sic), step):
                blk_ic = sic[lo:lo + step]
                cand = np.flatnonzero(judged_id[blk_ic])
                if cand.size == 0:
                    continue
                blk_q = sq[lo:lo + step][cand].astype(np.int64)
                hit = lookup.get_indexer(blk_q * nu + blk_ic[cand])
                found = hit >= 0
                at = blk_q[found] * width + pos_in_q[lo:lo + step][cand[found]]
                flat[at] = g_values[hit[found]]
                is_judged.reshape(-1)[at] = True
    top = np.full(nq, np.nan)
    if len(sq):
        top[sq[pos_in_q == 0]] = sscores[pos_in_q == 0]
    return Judged(
        query_ids=query_ids,
        grades=grades,
        n_retrieved=counts,
        ideal_grades=ideal,
        top_score=top,
        in_run=in_run,
        starts=starts,
        ranked_codes=sic,
        id_uniques=iun,
        ranked_scores=sscores,
        is_judged=is_judged,
    )
