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
    order, offsets
        Row indices of the run in ranked order, grouped by query: query ``q``'s ranking is
        ``run.ids[order[offsets[q]:offsets[q + 1]]]`` (original ids, before any id mapping).
    ranked_ids
        The ranked ids after id mapping (e.g. chunk -> document), aligned with ``order``.
    """

    query_ids: tuple[str, ...]
    grades: NDArray[np.int32]
    n_retrieved: NDArray[np.int64]
    ideal_grades: NDArray[np.int32]
    top_score: NDArray[np.float64]
    in_run: NDArray[np.bool_]
    order: NDArray[np.int64]
    offsets: NDArray[np.int64]
    ranked_ids: NDArray[np.object_]
    ranked_scores: NDArray[np.float64]

    @property
    def depth(self) -> int:
        return int(self.grades.shape[1])

    def ranking(self, q: int) -> tuple[list[str], list[float], list[int]]:
        """Ids, scores and grades of query row ``q`` in ranked order."""
        lo, hi = int(self.offsets[q]), int(self.offsets[q + 1])
        ids = self.ranked_ids[lo:hi].tolist()
        scores = self.ranked_scores[lo:hi].tolist()
        return ids, scores, self.grades[q, : hi - lo].tolist()


def _id_sort_keys(ids: NDArray[np.object_]) -> tuple[NDArray[np.int64], NDArray[np.object_]]:
    """Integer codes whose order is the byte-wise order of the ids (UTF-8 order == code point order)."""
    codes, uniques = pd.factorize(ids, sort=False)
    uniques = np.asarray(uniques, dtype=object)
    rank_of_code = np.empty(len(uniques), dtype=np.int64)
    rank_of_code[np.argsort(uniques, kind="stable")] = np.arange(len(uniques), dtype=np.int64)
    return rank_of_code[codes], uniques


def rank_order(qcodes: NDArray[np.int64], ids: NDArray[np.object_], scores: NDArray[np.float64]) -> NDArray[np.int64]:
    """Row order grouping by query code, then score descending, then id descending (trec_eval)."""
    idkey, _ = _id_sort_keys(ids)
    s = np.where(np.isnan(scores), -np.inf, scores)
    return np.lexsort((-idkey, -s, qcodes))


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
    q_rows: list[int] = []
    q_ids: list[str] = []
    q_grades: list[int] = []
    for qi, qid in enumerate(query_ids):
        rel = qrels[qid]
        if id_map is not None:
            mapped: dict[str, int] = {}
            for i, g in rel.items():
                m = id_map.get(i, i)
                mapped[m] = max(int(g), mapped.get(m, int(g)))
            rel = mapped
        for i, g in rel.items():
            q_rows.append(qi)
            q_ids.append(str(i))
            q_grades.append(int(g))
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
    qcodes_all = qindex.get_indexer(run.qids) if len(run) else np.zeros(0, dtype=np.int64)
    keep = np.flatnonzero(qcodes_all >= 0)
    qcodes = qcodes_all[keep].astype(np.int64)
    ids = run.ids[keep]
    scores = run.scores[keep]
    order_local = rank_order(qcodes, ids, scores)
    order = keep[order_local]
    sq = qcodes[order_local]
    sids = ids[order_local]
    sscores = scores[order_local]
    if id_map is not None and len(sids):
        sids = np.asarray(pd.Series(sids, dtype=object).map(lambda x: id_map.get(x, x)).to_numpy(), dtype=object)
    # Drop repeated (query, id) after ranking: the first occurrence is the best-ranked one.
    if len(sids):
        dup = pd.DataFrame({"q": sq, "i": sids}).duplicated().to_numpy()
        if dup.any():
            nd = ~dup
            order, sq, sids, sscores = order[nd], sq[nd], sids[nd], sscores[nd]
    counts = np.bincount(sq, minlength=nq).astype(np.int64) if nq else np.zeros(0, np.int64)
    in_run = counts > 0
    starts = np.cumsum(counts) - counts
    pos_in_q = np.arange(len(sq), dtype=np.int64) - starts[sq] if len(sq) else np.zeros(0, np.int64)
    if depth is not None:
        d = pos_in_q < depth
        order, sq, sids, sscores, pos_in_q = order[d], sq[d], sids[d], sscores[d], pos_in_q[d]
        counts = np.minimum(counts, depth)
        starts = np.cumsum(counts) - counts
    max_depth = int(counts.max()) if nq and len(sq) else 0

    # --- grade of every ranked id --------------------------------------------------------
    grades_flat = np.zeros(len(sids), dtype=np.int32)
    if len(sids) and len(q_ids):
        codes, uniques = pd.factorize(np.concatenate([sids, np.asarray(q_ids, dtype=object)]))
        nu = max(len(uniques), 1)
        run_keys = sq * nu + codes[: len(sids)]
        qrel_keys = qr_rows * nu + codes[len(sids):]
        lookup = pd.Index(qrel_keys)
        if not lookup.is_unique:  # same id twice in one query's labels: keep the max grade
            s = pd.Series(qr_grades).groupby(qrel_keys).max()
            lookup, qr_g = pd.Index(s.index.to_numpy()), s.to_numpy()
        else:
            qr_g = qr_grades
        hit = lookup.get_indexer(run_keys)
        found = hit >= 0
        grades_flat[found] = qr_g[hit[found]]
    grades = np.zeros((nq, max(max_depth, 1)), dtype=np.int32)
    if len(sq):
        grades[sq, pos_in_q] = grades_flat
    top = np.full(nq, np.nan)
    if len(sq):
        top[sq[pos_in_q == 0]] = sscores[pos_in_q == 0]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return Judged(
        query_ids=query_ids,
        grades=grades,
        n_retrieved=counts,
        ideal_grades=ideal,
        top_score=top,
        in_run=in_run,
        order=order,
        offsets=offsets,
        ranked_ids=sids,
        ranked_scores=sscores,
    )
