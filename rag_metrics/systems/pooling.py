"""Unjudged results: judged@K beside every system's metrics, and the pooled labelling queue.

A new system returns chunks nobody has labelled, and every metric counts them as non-relevant.
``judged@k`` (the registry's ``judged`` metric: share of the top k that carry a label, grade 0
included) says how far to trust the numbers; :func:`pooled_queue` lists what to label next, the
way TREC builds its pools: the union of every system's top K per question, minus what is already
judged, the chunks retrieved by the most systems first.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rag_metrics.errors import InputError
from rag_metrics.metrics.judge import judge
from rag_metrics.metrics.kernels import check_k
from rag_metrics.systems.textmatch import UNMATCHED_PREFIX
from rag_metrics.types import GoldenSet, Run

__all__ = ["JUDGED_WARNING", "POOL_COLUMNS", "JudgedReadout", "apply_label", "judged_readout", "judged_warning",
           "pooled_queue", "records_nonrelevant", "system_table"]

#: Below this mean judged@K the metrics of a system are flagged as likely underestimates.
JUDGED_WARNING = 0.7
POOL_COLUMNS = ("query_id", "question", "chunk_id", "n_systems", "systems", "best_rank", "text")


def records_nonrelevant(golden: GoldenSet) -> bool:
    """The one rule deciding whether judged@K means something for ``golden``.

    True when the golden set records non-relevant judgments: at least one label with grade <= 0
    (TREC-style pooled qrels judge every pooled result, relevant or not; a chunk labelled "not
    relevant" from the pooled labelling queue is stored as grade 0, so pooled labels count too).
    Then an unlabelled chunk in the top K is *unknown*, and judged@K says how far to trust the
    metrics.  When every label is a positive grade (the shipped sample, the lesson's
    ``relevant_chunk_ids``), an unlabelled chunk simply means "not relevant": judged@K then equals
    the share of relevant results and a warning about it would be a false alarm.
    """
    return any(g <= 0 for q in golden for g in q.relevant.values())


#: What an unlabelled chunk means when the golden set labels only relevant chunks.
UNLABELLED_NOTE = ("This golden set labels only relevant chunks (no grade-0 label), so an unlabelled chunk in the "
                   "top {k} counts as not relevant, as trec_eval reads it. Label chunks as not relevant (grade 0) "
                   "or from the pooled labelling queue (Systems page) to measure how complete the labels are "
                   "(judged@K).")


@dataclass(frozen=True)
class JudgedReadout:
    """How to show judged@K for one system: the value and a warning when they mean something
    (:func:`records_nonrelevant`), otherwise a plain note on what an unlabelled chunk means."""

    meaningful: bool
    value: float
    note: str
    warning: str | None


def judged_readout(golden: GoldenSet, value: float, k: int, name: str) -> JudgedReadout:
    """judged@K of system ``name`` (mean ``value``) as the Dashboard, Systems and the report show it."""
    k = check_k(k)
    if not records_nonrelevant(golden):
        return JudgedReadout(False, value, UNLABELLED_NOTE.format(k=k), None)
    note = (f"judged@{k} = {value:.3f}: the share of the top {k} that carry a label (any grade). "
            "Unlabelled results count as non-relevant.")
    return JudgedReadout(True, value, note, judged_warning(value, k, name))


def judged_warning(value: float, k: int, name: str) -> str | None:
    """A sentence when ``value`` (mean judged@k) is below :data:`JUDGED_WARNING`, else None.

    Use :func:`judged_readout`, which applies :func:`records_nonrelevant` first: the warning means
    something only for judgments that record non-relevant results.
    """
    if math.isnan(value) or value >= JUDGED_WARNING:
        return None
    return (f"only {value:.0%} of {name}'s top {k} carry a label; unlabelled chunks count as non-relevant, so its "
            "metrics are likely underestimates. Label the pooled queue to fix it")


def system_table(results: Mapping[str, object], metrics: Sequence[str], k: int) -> pd.DataFrame:
    """One row per system: the mean of each metric at ``k`` and ``judged@k`` beside them.

    Parameters
    ----------
    results
        ``{system name: EvaluationResult}``.
    metrics
        Metric names (``"ndcg"``, ``"mrr"``...); ``judged`` is always added last.
    k
        Cutoff.

    Returns
    -------
    DataFrame
        Columns ``system``, one per ``name@k``, ``judged@k``, ``answered`` and ``absent`` (golden
        questions of the means the system has results for, and those not in its results:
        :attr:`~rag_metrics.evaluation.EvaluationResult.n_answered` / ``n_absent``), ``warning``
        (text or None; only when the system's golden set records non-relevant judgments,
        :func:`records_nonrelevant`).
    """
    k = check_k(k)
    names = [m for m in metrics if m != "judged"] + ["judged"]
    rows = []
    for sname, res in results.items():
        row: dict[str, object] = {"system": sname}
        for m in names:
            row[f"{m}@{k}"] = res.mean(m, k)  # type: ignore[attr-defined]  # results: EvaluationResult-like (duck-typed)
        row["answered"] = res.n_answered  # type: ignore[attr-defined]  # EvaluationResult-like (duck-typed)
        row["absent"] = res.n_absent  # type: ignore[attr-defined]  # EvaluationResult-like (duck-typed)
        readout = judged_readout(res.golden, float(row[f"judged@{k}"]), k, sname)  # type: ignore[attr-defined, arg-type]  # EvaluationResult-like; judged@k: the float set above
        row["warning"] = readout.warning
        rows.append(row)
    return pd.DataFrame(rows, columns=["system"] + [f"{m}@{k}" for m in names] + ["answered", "absent", "warning"])


def pooled_queue(golden: GoldenSet, runs: Mapping[str, Run], k: int,
                 texts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The unjudged chunks in the top ``k`` of every system, grouped by question.

    Parameters
    ----------
    golden
        The golden set; an id is *judged* for a question when it has a label there (any grade).
    runs
        ``{system name: Run}`` keyed by golden query ids.
    k
        Pool depth (each system contributes its top ``k``, trec_eval order).
    texts
        Optional ``{chunk_id: text}`` for the ``text`` column.

    Returns
    -------
    DataFrame
        Columns :data:`POOL_COLUMNS`: one row per (question, unjudged chunk), questions in golden
        order, inside a question the chunks retrieved by the most systems first, then by best
        rank, then by id.  Contexts of RAG logs that match no corpus chunk (``unmatched:`` ids)
        are left out: they cannot be labelled as chunks.
    """
    k = check_k(k)
    if not runs:
        raise InputError("pooled_queue needs at least one system's run")
    qrels = golden.qrels()
    names = list(runs)
    if len(names) > 62:
        raise InputError(f"pooled_queue takes at most 62 systems at once, got {len(names)}")
    parts = []
    for n, run in enumerate(runs.values()):
        j = judge(qrels, run, depth=k)
        width = min(k, j.grades.shape[1])
        pos = np.arange(width)[None, :]
        judged = j.is_judged if j.is_judged is not None else j.grades != 0  # grades alone miss grade-0 labels
        mask = (pos < j.n_retrieved[:, None]) & ~judged[:, :width]
        rows, cols = np.nonzero(mask)
        if rows.size == 0:
            continue
        ids = j.id_uniques[j.ranked_codes[j.starts[rows] + cols]]
        parts.append((rows, ids, cols + 1, np.full(rows.size, 1 << n, dtype=np.int64)))
    if not parts:
        return pd.DataFrame(columns=list(POOL_COLUMNS))
    q = np.concatenate([p[0] for p in parts])
    ids = np.concatenate([p[1] for p in parts])
    rank = np.concatenate([p[2] for p in parts])
    bit = np.concatenate([p[3] for p in parts])
    codes, uniq = pd.factorize(ids)
    uniq = np.asarray(uniq, dtype=object)
    keep_u = ~pd.Series(uniq).astype(str).str.startswith(UNMATCHED_PREFIX).to_numpy()
    keep = keep_u[codes]
    q, codes, rank, bit = q[keep], codes[keep], rank[keep], bit[keep]
    # one group per (question, chunk): systems as a bit mask (each system lists a chunk once)
    key = q.astype(np.int64) * len(uniq) + codes
    g = pd.DataFrame({"key": key, "bit": bit, "rank": rank}).groupby("key", sort=False).agg(
        mask=("bit", "sum"), best_rank=("rank", "min"))
    gkey = g.index.to_numpy()
    gq, gc = gkey // len(uniq), gkey % len(uniq)
    masks = g["mask"].to_numpy()
    n_sys = sum(((masks >> n) & 1) for n in range(len(names))).astype(int)
    umask, inv = np.unique(masks, return_inverse=True)
    labels = np.array([", ".join(nm for n, nm in enumerate(names) if (int(m) >> n) & 1) for m in umask], dtype=object)
    chunk = uniq[gc]
    order = np.lexsort((chunk.astype(str), g["best_rank"].to_numpy(), -n_sys, gq))
    qids = np.asarray(golden.ids, dtype=object)
    questions = golden.questions()
    lookup = texts or {}
    out = pd.DataFrame({
        "query_id": qids[gq[order]],
        "chunk_id": chunk[order],
        "n_systems": n_sys[order],
        "systems": labels[inv.ravel()[order]],
        "best_rank": g["best_rank"].to_numpy()[order].astype(int),
    })
    out.insert(1, "question", out["query_id"].map(questions).fillna(""))
    out["text"] = out["chunk_id"].map(lookup).fillna("") if lookup else ""
    return out[list(POOL_COLUMNS)]


def apply_label(golden: GoldenSet, query_id: str, item_id: str, grade: int) -> GoldenSet:
    """``golden`` with ``item_id`` judged for ``query_id``: relevant with ``grade`` (> 0), or judged
    not relevant (grade 0 is kept as a judgement, so the chunk leaves the pool).  Other queries and
    labels are unchanged; the caller saves it like any golden-set edit."""

    if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
        raise InputError(f"grade must be 0, 1, 2 or 3, got {grade!r}")
    found = False
    out = []
    for q in golden:
        if q.id == query_id:
            found = True
            rel = dict(q.relevant)
            rel[item_id] = grade
            cat = "" if grade > 0 and q.category == "out_of_scope" else q.category
            q = q.relabelled(rel, category=cat)
        out.append(q)
    if not found:
        raise InputError(f"query {query_id!r} is no longer in the golden set; refresh the queue")
    return GoldenSet(tuple(out), golden.name)
