"""Provenance of golden questions and labels: filter by it, and read metrics per group.

Question origin: ``hand-written`` or ``drafted`` (:attr:`GoldenQuery.origin`).  Label origin of a
query: ``human`` (every label given by a person), ``with judge labels`` (at least one label is
the judge's), ``with source labels`` (a drafted question's source labels, none from the judge).
The groups read the per-query values of an :class:`~rag_metrics.evaluation.EvaluationResult`;
nothing is re-evaluated.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from rag_metrics.errors import InputError
from rag_metrics.types import HUMAN, JUDGE, SOURCE, GoldenQuery, GoldenSet

__all__ = ["GROUPINGS", "filter_golden", "label_group", "metrics_by_provenance", "provenance_counts",
           "without_judge_labels"]

#: What :func:`metrics_by_provenance` can group by.
GROUPINGS = ("question", "labels")
LABEL_GROUPS = ("human", "with judge labels", "with source labels")


def label_group(q: GoldenQuery) -> str:
    """One of :data:`LABEL_GROUPS` for ``q``."""
    kinds = set(q.label_origin.values())
    if JUDGE in kinds:
        return LABEL_GROUPS[1]
    if SOURCE in kinds:
        return LABEL_GROUPS[2]
    return LABEL_GROUPS[0]


def _group(q: GoldenQuery, by: str) -> str:
    return q.origin if by == "question" else label_group(q)


def filter_golden(golden: GoldenSet, *, origin: str | None = None, labels: str | None = None) -> GoldenSet:
    """The queries of ``golden`` with question ``origin`` (``"hand-written"``/``"drafted"``) and/or
    label group ``labels`` (:data:`LABEL_GROUPS`); ``None`` does not filter."""
    if labels is not None and labels not in LABEL_GROUPS:
        raise InputError(f"unknown label group {labels!r}; use one of {', '.join(LABEL_GROUPS)}")
    return GoldenSet(tuple(q for q in golden if (origin is None or q.origin == origin)
                           and (labels is None or label_group(q) == labels)), golden.name)


def without_judge_labels(golden: GoldenSet) -> GoldenSet:
    """``golden`` with the judge's labels removed (people's and source labels kept)."""
    out = []
    for q in golden:
        if JUDGE in q.label_origin.values():
            keep = {i: g for i, g in q.relevant.items() if q.label_source(i) != JUDGE}
            q = q.relabelled(keep, by=HUMAN)
        out.append(q)
    return GoldenSet(tuple(out), golden.name)


def provenance_counts(golden: GoldenSet) -> pd.DataFrame:
    """Counts of questions per origin and of labels per label origin: columns ``what``, ``group``, ``n``."""
    rows: list[tuple[str, str, int]] = []
    for origin in ("hand-written", "drafted"):
        rows.append(("questions", origin, sum(1 for q in golden if q.origin == origin)))
    for lo in (HUMAN, JUDGE, SOURCE):
        rows.append(("labels", lo, sum(1 for q in golden for i in q.relevant if q.label_source(i) == lo)))
    return pd.DataFrame(rows, columns=["what", "group", "n"])


def metrics_by_provenance(result: object, metrics: Iterable[str] = ("hit_rate", "mrr", "ndcg"),
                          ks: Iterable[int | None] = (10,), by: str = "question") -> pd.DataFrame:
    """Mean of each metric per provenance group.

    Parameters
    ----------
    result
        An :class:`~rag_metrics.evaluation.EvaluationResult` (its golden set carries the provenance).
    by
        ``"question"`` (hand-written / drafted) or ``"labels"`` (:data:`LABEL_GROUPS`).

    Returns
    -------
    DataFrame
        ``group``, ``metric``, ``k``, ``mean``, ``n`` (included queries of the group), groups with
        no included query left out.
    """
    if by not in GROUPINGS:
        raise InputError(f"group by {by!r}? use one of {', '.join(GROUPINGS)}")
    golden: GoldenSet = result.golden  # type: ignore[attr-defined]  # EvaluationResult
    per = result.per_query(metrics, ks)  # type: ignore[attr-defined]
    groups = {q.id: _group(q, by) for q in golden}
    if per.empty:
        return pd.DataFrame(columns=["group", "metric", "k", "mean", "n"])
    per = per.assign(group=per["query_id"].map(groups))
    out = per.groupby(["group", "metric", "k"], sort=False, dropna=False)["value"].agg(["mean", "size"]).reset_index()
    out = out.rename(columns={"size": "n"})
    out["mean"] = out["mean"].astype(np.float64)
    return out[["group", "metric", "k", "mean", "n"]]
