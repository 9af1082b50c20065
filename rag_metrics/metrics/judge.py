"""Judging: the one place where retrieved ids meet relevance labels.

Over 500 lines: the one place where retrieved ids meet relevance labels; its conventions are read
together.

:func:`judge` turns a run and qrels into a per-rank grade matrix, in the spirit of trec_eval's
``form_res_rels``: every metric kernel afterwards is arithmetic over integers and never compares ids.

Ranking rule (trec_eval): :mod:`rag_metrics.ordering` (score descending, ties by id descending
byte-wise, NaN last).  The rank column of a TREC run file is ignored, as trec_eval ignores it.
A duplicate id inside one query keeps its best-ranked occurrence.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from itertools import chain

import numpy as np
from numpy.typing import NDArray

from rag_metrics.errors import InputError
from rag_metrics.limits import GRADE_MAX, GRADE_MIN  # the one grade range (re-exported here)
from rag_metrics.ordering import may_have_duplicates, order_rows, query_positions
from rag_metrics.types import Run

__all__ = ["GRADE_MAX", "GRADE_MIN", "Judged", "judge"]


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
    ranked_codes: NDArray[np.integer]
    id_uniques: NDArray[np.object_]
    ranked_scores: NDArray[np.float64]
    is_judged: NDArray[np.bool_] | None = None

    @property
    def depth(self) -> int:
        return int(self.grades.shape[1])

    def restricted(self, *, judged_only: bool = False, positive_scores_only: bool = False) -> Judged:
        """The same judged run with some ranked ids removed and the rest moved up (ranks renumbered).

        ``judged_only``: ids with no label are dropped (trec_eval ``-J``, ir_measures
        ``judged_only=True``).  ``positive_scores_only``: ids scored ``<= 0`` (or NaN) are not retrieved
        (torchmetrics' rule).  ``|R|`` and the ideal ranking are unchanged.  The grade matrix, the
        label mask and the counts change; :meth:`ranking` still lists the full ranking.
        """
        if not (judged_only or positive_scores_only):
            return self
        nq, d = self.grades.shape
        pos = np.arange(d)[None, :]
        keep = pos < self.n_retrieved[:, None]
        if judged_only:
            if self.is_judged is None:
                raise InputError("judged-only evaluation needs to know which ids carry a label; build the Judged "
                                 "with rag_metrics.metrics.judge")
            keep &= self.is_judged
        if positive_scores_only and len(self.ranked_scores):
            at = np.minimum(self.starts[:, None] + pos, len(self.ranked_scores) - 1)
            keep &= self.ranked_scores[at] > 0  # NaN > 0 is False
        order = np.argsort(~keep, axis=1, kind="stable")
        kept = np.take_along_axis(keep, order, axis=1)
        grades = np.where(kept, np.take_along_axis(self.grades, order, axis=1), 0).astype(np.int32)
        is_judged = None if self.is_judged is None else np.take_along_axis(self.is_judged, order, axis=1) & kept
        return replace(self, grades=grades, is_judged=is_judged, n_retrieved=keep.sum(axis=1).astype(np.int64))

    def ranking(self, q: int) -> tuple[list[str], list[float], list[int]]:
        """Ids, scores and grades of query row ``q`` in ranked order."""
        lo = int(self.starts[q])
        hi = lo + int(self.n_retrieved[q])
        ids = self.id_uniques[self.ranked_codes[lo:hi]].tolist()
        scores = self.ranked_scores[lo:hi].tolist()
        return ids, scores, self.grades[q, : hi - lo].tolist()


#: Accepted grades (inclusive): every integer grade trec_eval collections use (about -2..4) with a
#: wide margin, small enough that ``2**g - 1`` (exponential NDCG gain) stays finite in float64
#: and every grade fits the int32 grade matrix.  Readers reject grades outside it with file:line.

_BLOCK = 1 << 18  # rows looked up and placed at a time (bounded temporaries)


class _CodeTable(dict):
    """``{string: code}``; a missing string reads as -1 (lookups stay in C for the hits)."""

    def __missing__(self, key: object) -> int:
        return -1


@dataclass(frozen=True)
class _Qrels:
    """Judgments flattened to columns: entry ``j`` grades id ``ids[j]`` for query row ``rows[j]``."""

    rows: NDArray[np.int64]
    ids: NDArray[np.object_]
    grades: NDArray[np.int64]


@dataclass(frozen=True)
class _Ranked:
    """Run rows of golden queries in ranked order (duplicates dropped, cut at depth)."""

    rows: NDArray[np.integer]  # query row of each ranked entry
    codes: NDArray[np.integer]  # id code into ``uniques``
    scores: NDArray[np.float64]
    uniques: NDArray[np.object_]
    counts: NDArray[np.int64]  # entries per query row
    starts: NDArray[np.int64]  # first entry of each query row
    positions: NDArray[np.int32]  # 0-based rank of each entry inside its query


def _golden_query_ids(qrels: Mapping[str, Mapping[str, int]]) -> tuple[str, ...]:
    """The qrels' query ids as strings, in order (one matrix row each); a repeat is an error."""
    query_ids = tuple(str(q) for q in qrels)
    if len(set(query_ids)) != len(query_ids):
        seen: set[str] = set()
        dup = next(q for q in query_ids if q in seen or seen.add(q))  # type: ignore[func-returns-value]  # set.add() is None: records q
        raise InputError(f"duplicate query id {dup!r} in qrels; query ids must be unique")
    return query_ids


def _bad_grade(qrels: Mapping[str, Mapping[str, int]]) -> InputError:
    """The first grade that is not an integer in [GRADE_MIN, GRADE_MAX], as an error to raise."""
    for q, rel in qrels.items():
        for i, g in rel.items():
            ok = isinstance(g, (int, np.integer)) and not isinstance(g, bool) and GRADE_MIN <= g <= GRADE_MAX
            if not ok:
                return InputError(f"query {q!r}: grade {g!r} of id {i!r} is not an integer in "
                                  f"[{GRADE_MIN}, {GRADE_MAX}]; use small whole numbers (0 = not relevant)")
    return InputError("a grade is not an integer; use small whole numbers (0 = not relevant)")


def _flatten_qrels(qrels: Mapping[str, Mapping[str, int]], id_map: Mapping[str, str] | None) -> _Qrels:
    """One entry per judgment, in golden order; ids mapped through ``id_map`` when given."""
    rels = list(qrels.values())
    sizes = np.fromiter(map(len, rels), dtype=np.int64, count=len(rels))
    total = int(sizes.sum())
    kinds = set(map(type, chain.from_iterable(r.values() for r in rels)))
    if not all(k is int or issubclass(k, np.integer) for k in kinds):  # bool, float, str, None: rejected
        raise _bad_grade(qrels)
    try:
        grades = np.fromiter(chain.from_iterable(r.values() for r in rels), dtype=np.int64, count=total)
    except OverflowError:
        raise _bad_grade(qrels) from None
    if total and (grades.min() < GRADE_MIN or grades.max() > GRADE_MAX):
        raise _bad_grade(qrels)
    ids = np.fromiter(chain.from_iterable(rels), dtype=object, count=total)
    if total and set(map(type, ids)) != {str}:
        ids = np.asarray([str(i) for i in ids], dtype=object)
    if id_map is not None and total:
        import pandas as pd

        codes, uniques = pd.factorize(ids)
        ids = np.asarray([id_map.get(i, i) for i in uniques.tolist()], dtype=object)[codes]
    return _Qrels(np.repeat(np.arange(len(rels), dtype=np.int64), sizes), ids, grades)


def _ideal_grades(qrels: _Qrels, nq: int) -> NDArray[np.int32]:
    """Positive grades of each query row, sorted descending, zero padded (shape ``(nq, >= 1)``)."""
    pos = qrels.grades > 0
    rows, grades = qrels.rows[pos], qrels.grades[pos]
    counts = np.bincount(rows, minlength=nq) if nq else np.zeros(0, np.int64)
    width = int(counts.max()) if len(rows) else 0
    ideal = np.zeros((nq, max(width, 1)), dtype=np.int32)
    if width:
        # one sort of packed keys (row, GRADE_MAX - grade): rows ascending, grades descending
        span = GRADE_MAX + 1
        key = np.sort(rows * span + (GRADE_MAX - grades))
        rows, grades = key // span, GRADE_MAX - key % span
        starts = np.cumsum(counts) - counts
        ideal[rows, np.arange(len(rows)) - starts[rows]] = grades
    return ideal


def _ranked_rows(run: Run, query_ids: tuple[str, ...], id_map: Mapping[str, str] | None,
                 depth: int | None) -> _Ranked:
    """Rows of golden queries, ranked by :func:`rag_metrics.ordering.order_rows`, ids mapped after
    ranking, repeated (query, id) pairs dropped after the first, each query cut at ``depth``."""
    nq = len(query_ids)
    qc_run, qun = run.factorized_qids()
    ic, uniques = run.factorized_ids()
    row_of = _CodeTable(zip(query_ids, range(nq)))
    golden_row = np.fromiter(map(row_of.__getitem__, qun.tolist()), dtype=np.int64, count=len(qun))
    sq = golden_row.astype(np.int32)[qc_run] if len(qc_run) else np.zeros(0, np.int32)
    scores = run.scores
    if len(sq) and (sq < 0).any():
        keep = np.flatnonzero(sq >= 0)
        sq, scores, ic = sq[keep], scores[keep], ic[keep]
    order = order_rows(sq, ic, uniques, scores)
    if order is not None:
        sq, ic, scores = sq[order], ic[order], scores[order]
    del order
    if id_map is not None and len(ic):
        import pandas as pd

        # map the unique ids, then re-code: two chunks of one document share a code
        mapped = np.asarray([id_map.get(x, x) for x in uniques.tolist()], dtype=object)
        codes2, uniques = pd.factorize(mapped)
        uniques = np.asarray(uniques, dtype=object)
        ic = codes2[ic].astype(np.int64)
    nu = max(len(uniques), 1)
    sq = sq.astype(np.int64, copy=False) if nq * nu > 2**31 - 1 else sq
    counts = np.bincount(sq, minlength=nq).astype(np.int64) if nq else np.zeros(0, np.int64)
    starts, positions = query_positions(sq, nq)
    # the first occurrence of a repeated (query, id) is the best-ranked one
    if len(ic) and may_have_duplicates(sq, ic, nq, counts, positions):
        import pandas as pd

        dup = pd.Index(sq * nu + ic).duplicated(keep="first")
        if dup.any():
            keep_mask = ~dup
            sq, ic, scores = sq[keep_mask], ic[keep_mask], scores[keep_mask]
            counts = np.bincount(sq, minlength=nq).astype(np.int64)
            starts, positions = query_positions(sq, nq)
    if depth is not None and len(sq) and counts.max() > depth:
        cut = positions < depth
        sq, ic, scores = sq[cut], ic[cut], scores[cut]
        counts = np.minimum(counts, depth)
        starts, positions = query_positions(sq, nq)
    return _Ranked(sq, ic, np.asarray(scores, dtype=np.float64), np.asarray(uniques, dtype=object), counts, starts,
                   positions)


def _grade_matrix(qrels: _Qrels, ranked: _Ranked, nq: int, *,
                  unique_pairs: bool) -> tuple[NDArray[np.int32], NDArray[np.bool_]]:
    """``grades[q, i]``: grade of the id at rank ``i + 1`` of query row ``q`` (0 when unjudged),
    and ``is_judged[q, i]``: whether that id has a label for the query (any grade).

    Ids become integer codes (one dict lookup per judgment, in C for the hits); judgments of ids
    never retrieved are dropped.  Then one of two joins on ``(query row, id code)``:

    - dense (``unique_pairs``, the usual case): queries in blocks; a block's judgments are written
      into a small ``(block, n_ids)`` table, its ranked entries read their grades from it, and the
      table is cleared again.  Two passes over the entries, no sort, no search.
    - sorted: judgment keys ``row * n_ids + code`` sorted once (an id judged twice, possible after
      ``id_map``, keeps its highest grade), each ranked entry found by binary search.  Also used
      when the blocks would be too many (millions of distinct ids).
    """
    width = int(ranked.counts.max()) if nq and len(ranked.rows) else 0
    grades = np.zeros((nq, max(width, 1)), dtype=np.int32)
    judged = np.zeros(grades.shape, dtype=bool)
    if not (len(ranked.codes) and len(qrels.ids)):
        return grades, judged
    nu = len(ranked.uniques)
    code_of = _CodeTable(zip(ranked.uniques.tolist(), range(nu)))
    codes = np.fromiter(map(code_of.__getitem__, qrels.ids.tolist()), dtype=np.int64, count=len(qrels.ids))
    known = np.flatnonzero(codes >= 0)  # judged ids that were never retrieved cannot be looked up
    if known.size == 0:
        return grades, judged
    rows, codes, values = qrels.rows[known], codes[known], qrels.grades[known]
    span = max(1, _DENSE_CELLS // nu)  # query rows per block
    if unique_pairs and -(-nq // span) <= _MAX_BLOCKS:
        _dense_join(grades, judged, rows, codes, values, ranked, nu, span)
    else:
        _sorted_join(grades, judged, rows * nu + codes, values, ranked, nu)
    return grades, judged


_DENSE_CELLS = 1 << 22  # cells of the dense join's table (int16: 8 MiB)
_MAX_BLOCKS = 512  # more blocks than this (a huge id vocabulary): the sorted join


def _dense_join(grades: NDArray[np.int32], judged: NDArray[np.bool_], rows: NDArray[np.int64],
                codes: NDArray[np.int64], values: NDArray[np.int64], ranked: _Ranked, nu: int, span: int) -> None:
    """Block-wise table join (see :func:`_grade_matrix`); ``rows`` ascending, pairs unique.

    The table holds ``grade - GRADE_MIN + 1`` (1 .. 2001 in int16), so 0 means "no label" and a
    label of grade 0 is told apart from an unjudged id.
    """
    nq, width = grades.shape
    flat, flat_judged = grades.reshape(-1), judged.reshape(-1)
    shift = 1 - GRADE_MIN
    table = np.zeros((span, nu), dtype=np.int16)
    edges = np.arange(0, nq + span, span)
    j_bounds = np.searchsorted(rows, edges)
    sq = ranked.rows
    if len(sq) < 2 or bool(np.all(sq[1:] >= sq[:-1])):  # ranked rows in golden order: slices
        order = None
        r_bounds = np.searchsorted(sq, edges)
    else:  # queries in another order: group entries by block (a radix sort on small integers)
        block = (sq // span).astype(np.int16 if nq // span < 2**15 else np.int32)
        order = np.argsort(block, kind="stable")
        r_bounds = np.searchsorted(block[order], np.arange(len(edges)))
    for b in range(len(edges) - 1):
        ja, jb = j_bounds[b], j_bounds[b + 1]
        ra, rb = r_bounds[b], r_bounds[b + 1]
        if ja == jb or ra == rb:
            continue
        r0 = edges[b]
        t_rows, t_codes = rows[ja:jb] - r0, codes[ja:jb]
        table[t_rows, t_codes] = values[ja:jb] + shift
        sel = slice(ra, rb) if order is None else order[ra:rb]
        q = sq[sel].astype(np.int64)
        g = table[q - r0, ranked.codes[sel]]
        hit = np.flatnonzero(g)
        at = q[hit] * width + ranked.positions[sel][hit]
        flat[at] = g[hit].astype(np.int32) - shift
        flat_judged[at] = True
        table[t_rows, t_codes] = 0


def _sorted_join(grades: NDArray[np.int32], judged: NDArray[np.bool_], keys: NDArray[np.int64],
                 values: NDArray[np.int64], ranked: _Ranked, nu: int) -> None:
    """Sort-and-search join (see :func:`_grade_matrix`); repeated keys keep the highest grade."""
    o = np.argsort(keys)
    keys, values = keys[o], values[o]
    if np.any(keys[1:] == keys[:-1]):  # only after id_map merged two judged ids
        o = np.lexsort((values, keys))
        keys, values = keys[o], values[o]
        last = np.ones(len(keys), dtype=bool)
        last[:-1] = keys[1:] != keys[:-1]  # the highest grade of a repeated key sorts last
        keys, values = keys[last], values[last]
    values = values.astype(np.int32)
    flat, flat_judged = grades.reshape(-1), judged.reshape(-1)
    width = grades.shape[1]
    for lo in range(0, len(ranked.codes), _BLOCK):
        q = ranked.rows[lo:lo + _BLOCK].astype(np.int64)
        k = q * nu + ranked.codes[lo:lo + _BLOCK]
        at = np.searchsorted(keys, k)
        np.minimum(at, len(keys) - 1, out=at)
        hit = np.flatnonzero(keys[at] == k)
        where = q[hit] * width + ranked.positions[lo:lo + _BLOCK][hit]
        flat[where] = values[at[hit]]
        flat_judged[where] = True


def _top_scores(ranked: _Ranked, nq: int) -> NDArray[np.float64]:
    """Score of each query row's first ranked entry (NaN when it retrieved nothing)."""
    top = np.full(nq, np.nan)
    first = ranked.positions == 0
    top[ranked.rows[first]] = ranked.scores[first]
    return top


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
        (they are out of scope: the evaluation decides what to do with them).  Grades are
        integers in ``[GRADE_MIN, GRADE_MAX]``.
    run
        The run to judge.  Rows of queries not in ``qrels`` are ignored.
    id_map
        Optional id mapping applied *after* ranking, e.g. chunk id -> document id.  The mapped id
        takes the rank of its first (best-ranked) original id; later ones are dropped, so two chunks
        of one relevant document never count twice.  Qrels ids are mapped too (max grade kept), so
        chunk-level labels can be judged at document level.  Unmapped ids are kept as they are.
    depth
        Keep only the first ``depth`` ranked ids of each query (default: all).

    Returns
    -------
    Judged
        Per golden query (rows in ``qrels`` order): the grade of every ranked position, the ideal
        grades, the number retrieved, the top score and the ranked ids.

    Raises
    ------
    InputError
        A query id occurs twice, or a grade is not an integer in ``[GRADE_MIN, GRADE_MAX]``.

    Notes
    -----
    Steps: golden query rows; judgments flattened to columns; ideal grades; run rows ranked
    (:mod:`rag_metrics.ordering`), mapped, de-duplicated and cut; one join gives the grade
    matrix (:func:`_grade_matrix`); the top score per query.
    """
    query_ids = _golden_query_ids(qrels)
    nq = len(query_ids)
    flat = _flatten_qrels(qrels, id_map)
    ranked = _ranked_rows(run, query_ids, id_map, depth)
    grades, is_judged = _grade_matrix(flat, ranked, nq, unique_pairs=id_map is None)
    return Judged(
        query_ids=query_ids,
        grades=grades,
        n_retrieved=ranked.counts,
        ideal_grades=_ideal_grades(_max_per_id(flat) if id_map is not None else flat, nq),
        top_score=_top_scores(ranked, nq),
        in_run=ranked.counts > 0,
        starts=ranked.starts,
        ranked_codes=ranked.codes,
        id_uniques=ranked.uniques,
        ranked_scores=ranked.scores,
        is_judged=is_judged,
    )


def _max_per_id(qrels: _Qrels) -> _Qrels:
    """One entry per (query row, id) with the highest grade (ids merged by ``id_map``)."""
    if len(qrels.ids) == 0:
        return qrels
    import pandas as pd

    codes, _ = pd.factorize(qrels.ids)
    key = qrels.rows * (int(codes.max()) + 1) + codes
    o = np.lexsort((qrels.grades, key))
    key = key[o]
    last = np.ones(len(key), dtype=bool)
    last[:-1] = key[1:] != key[:-1]
    sel = o[last]
    sel.sort()  # keep golden order
    return _Qrels(qrels.rows[sel], qrels.ids[sel], qrels.grades[sel])
