"""Run judges over answer items and aggregate: means with 95 % bootstrap CIs, per system and per
category, failures, and the JSON shape of the CLI.

Only items whose status is ``"ok"`` enter a mean; failed items are counted separately
(``n_failed``) and listed with their status, never averaged in as 0.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from rag_metrics.answers.types import (
    AnswerItem,
    CancelCheck,
    Judge,
    MetricScore,
    ProgressCallback,
)
from rag_metrics.errors import InputError
from rag_metrics.evaluation import bootstrap_ci
from rag_metrics.metrics.answer_registry import metric_order

__all__ = ["AnswerEvaluation", "evaluate_answers"]

_COLUMNS = ["item_id", "question_id", "system", "category", "metric", "value", "status", "message"]


@dataclass
class AnswerEvaluation:
    """Scores of every item by every judge.

    Attributes
    ----------
    items : tuple of AnswerItem
    judge : str
        Names of the judges that ran, joined with " + ".
    scores : dict
        ``{item_id: {metric: MetricScore}}``.
    """

    items: tuple[AnswerItem, ...]
    judge: str
    scores: dict[str, dict[str, MetricScore]] = field(default_factory=dict)

    @property
    def metrics(self) -> list[str]:
        return metric_order({m for s in self.scores.values() for m in s})

    def fingerprint(self) -> str:
        """A key of this run's content (judge, items, every score and its reasons): two runs with the
        same judge name but different scores (another session's run, a rerun) never share a cache entry.

        >>> AnswerEvaluation((), "j").fingerprint() == AnswerEvaluation((), "j").fingerprint()
        True
        """
        import hashlib

        h = hashlib.sha256(self.judge.encode("utf-8"))
        for item_id in sorted(self.scores):
            h.update(b"\x00" + item_id.encode("utf-8"))
            for metric in sorted(self.scores[item_id]):
                h.update(b"\x01" + metric.encode("utf-8") + repr(self.scores[item_id][metric]).encode("utf-8"))
        h.update(repr(tuple(it.id for it in self.items)).encode("utf-8"))
        return h.hexdigest()[:24]

    def item(self, item_id: str) -> AnswerItem:
        for it in self.items:
            if it.id == item_id:
                return it
        raise InputError(f"no answer item with id {item_id!r}")

    def table(self) -> pd.DataFrame:
        """Long table: item_id, question_id, system, category, metric, value (NaN unless ok),
        status, message."""
        rows = []
        for it in self.items:
            for m in self.metrics:
                s = self.scores.get(it.id, {}).get(m)
                if s is None:
                    continue
                rows.append((it.id, it.question_id, it.system, it.category, m,
                             s.value if s.ok else np.nan, s.status, s.message))
        return pd.DataFrame(rows, columns=_COLUMNS)

    def values(self, metric: str) -> np.ndarray:
        t = self.table()
        t = t[(t.metric == metric) & (t.status == "ok")]
        return t["value"].to_numpy(dtype=np.float64)

    def summary(self, by: str | None = None, n_resamples: int = 2000) -> pd.DataFrame:
        """metric, [by], mean, ci_low, ci_high, n (ok items), n_failed: 95 % percentile bootstrap
        CIs from :func:`rag_metrics.evaluation.bootstrap_ci` (its defaults)."""
        t = self.table()
        keys = ["metric"] + ([by] if by else [])
        if by and by not in ("system", "category", "question_id"):
            raise InputError(f"group by 'system', 'category' or 'question_id', got {by!r}")
        rows = []
        order = {m: i for i, m in enumerate(self.metrics)}
        for key, g in t.groupby(keys, sort=False):
            key = key if isinstance(key, tuple) else (key,)
            ok = g[g.status == "ok"]["value"].to_numpy(dtype=np.float64)
            lo, hi = bootstrap_ci(ok, n_resamples=n_resamples)
            rows.append({**dict(zip(keys, key)), "mean": float(ok.mean()) if ok.size else math.nan,
                         "ci_low": lo, "ci_high": hi, "n": int(ok.size),
                         "n_failed": int((g.status != "ok").sum())})
        out = pd.DataFrame(rows, columns=keys + ["mean", "ci_low", "ci_high", "n", "n_failed"])
        if not out.empty:
            out = out.sort_values(keys, key=lambda c: c.map(order) if c.name == "metric" else c,
                                  kind="stable").reset_index(drop=True)
        return out

    def failures(self, metric: str, limit: int | None = None) -> pd.DataFrame:
        """Items by lowest ``metric`` first (ok items), then items where it failed (by status)."""
        t = self.table()
        t = t[t.metric == metric].copy()
        t["_failed"] = t.status != "ok"
        t = t.sort_values(["_failed", "value", "item_id"], kind="stable").drop(columns="_failed")
        t["question"] = [self.item(i).question for i in t.item_id]
        t["answer"] = [self.item(i).answer for i in t.item_id]
        t = t.reset_index(drop=True)
        return t.head(limit) if limit else t

    def means(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for m in self.metrics:
            v = self.values(m)
            out[m] = float(v.mean()) if v.size else None
        return out

    def per_item(self) -> dict[str, dict[str, float | None]]:
        return {it.id: {m: (s.value if s.ok else None)
                        for m, s in ((m, self.scores[it.id][m]) for m in self.metrics
                                     if m in self.scores.get(it.id, {}))}
                for it in self.items}

    def statuses(self) -> dict[str, dict[str, str]]:
        """``{item_id: {metric: status}}`` for every score that is not ok."""
        out: dict[str, dict[str, str]] = {}
        for it in self.items:
            bad = {m: s.status for m, s in self.scores.get(it.id, {}).items() if not s.ok}
            if bad:
                out[it.id] = dict(sorted(bad.items(), key=lambda kv: metric_order(bad).index(kv[0])))
        return out

    def to_json(self, per_item: bool = True) -> dict[str, Any]:
        """``{"n_items", "judge", "metrics": {name: mean or null}, "per_item": {id: {name: value}},
        "not_scored": {id: {name: status}}}``."""
        out: dict[str, Any] = {"n_items": len(self.items), "judge": self.judge, "metrics": self.means()}
        if per_item:
            out["per_item"] = self.per_item()
        out["not_scored"] = self.statuses()
        return out


def evaluate_answers(items: Sequence[AnswerItem], judges: Sequence[Judge],
                     progress: ProgressCallback | None = None, cancel: CancelCheck | None = None
                     ) -> AnswerEvaluation:
    """Run every judge over ``items`` and collect the scores.

    Raises
    ------
    InputError
        When two items share an id (the message names it and the rows' positions).
    """
    seen: dict[str, int] = {}
    for n, it in enumerate(items, start=1):
        if it.id in seen:
            raise InputError(f"item id {it.id!r} is used by items {seen[it.id]} and {n}; give every "
                             "answer a unique id (or drop the id column to number the rows).")
        seen[it.id] = n
    scores: dict[str, dict[str, MetricScore]] = {it.id: {} for it in items}
    for judge in judges:
        for j in judge.judge(items, progress=progress, cancel=cancel):
            scores[j.item_id].update(j.scores)
    return AnswerEvaluation(tuple(items), " + ".join(j.name for j in judges), scores)
