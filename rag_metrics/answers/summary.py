"""Answer metrics next to the retrieval metrics: which answers belong to a golden set, the summary
rows (mean with its 95 % CI per system and metric), the paired comparison of two answer systems
(the one decision rule of :mod:`rag_metrics.compare.paired`) and plain-words lines for stakeholders.

The offline approximations keep their own names (context support, answer-question similarity):
they are never reported as faithfulness or answer relevancy.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rag_metrics.answers.scoring import AnswerEvaluation
from rag_metrics.answers.types import AnswerItem
from rag_metrics.compare.paired import compare_paired
from rag_metrics.errors import InputError
from rag_metrics.evaluation import CI_RESAMPLES
from rag_metrics.metrics.answer_registry import ANSWER_METRICS, metric_order

__all__ = [
    "AnswerSection",
    "answer_section",
    "answers_for_golden",
    "combine",
    "compare_systems",
    "plain_lines",
    "restrict",
    "summary_rows",
    "systems",
]

#: Metrics shown next to the retrieval metrics (registry order); the reference metrics need a
#: ground truth and stay on the Answers page.
HEADLINE_METRICS = ("faithfulness", "answer_relevancy", "context_support", "answer_question_similarity")


def _norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def answers_for_golden(items: Iterable[AnswerItem], golden: Any) -> list[AnswerItem]:
    """The items that answer a question of ``golden`` (a :class:`~rag_metrics.io.golden.GoldenSet`).

    An item belongs when its question text equals (spaces and case aside) the golden question's
    text: with a ``question_id``, that question's text; without one, any question's (the item then
    takes that question's id and category).  Out-of-scope questions are kept (an answer system may
    answer them).  Items of other golden sets (same id, other text) are left out.
    """
    by_id = {q.id: q for q in golden}
    by_text: dict[str, Any] = {}
    for q in golden:
        by_text.setdefault(_norm(q.question), q)
    out = []
    for it in items:
        if it.question_id:
            q = by_id.get(it.question_id)
            if q is not None and _norm(q.question) == _norm(it.question):
                out.append(it)
            continue
        q = by_text.get(_norm(it.question))
        if q is not None:
            from dataclasses import replace

            out.append(replace(it, question_id=q.id, category=it.category or (q.category or "")))
    return out


def restrict(ev: AnswerEvaluation, items: Sequence[AnswerItem]) -> AnswerEvaluation:
    """``ev`` limited to the ids of ``items`` (scored once on the full file, shown per golden set);
    the kept items are ``items`` themselves (with the question ids :func:`answers_for_golden` set)."""
    keep = [it for it in items if it.id in ev.scores]
    return AnswerEvaluation(tuple(keep), ev.judge, {it.id: ev.scores[it.id] for it in keep})


def combine(evaluations: Iterable[AnswerEvaluation | None]) -> AnswerEvaluation | None:
    """One evaluation from several judges' runs on the same items (LLM judge first, then offline)."""
    evs = [e for e in evaluations if e is not None]
    if not evs:
        return None
    ids = [it.id for it in evs[0].items]
    scores: dict[str, dict] = {i: {} for i in ids}
    for e in evs:
        for i in ids:
            scores[i].update(e.scores.get(i, {}))
    return AnswerEvaluation(evs[0].items, " + ".join(e.judge for e in evs), scores)


def systems(ev: AnswerEvaluation) -> list[str]:
    """Answer systems in first-seen order."""
    return list(dict.fromkeys(it.system for it in ev.items))


def _headline(ev: AnswerEvaluation, metrics: Sequence[str] | None) -> list[str]:
    have = set(ev.metrics)
    return [m for m in (metrics or HEADLINE_METRICS) if m in have]


def summary_rows(ev: AnswerEvaluation, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (system, metric): ``system, metric, label, kind, mean, ci_low, ci_high, n,
    n_failed``; means over the items the metric scored, 95 % percentile-bootstrap CIs with the
    library's constants (:data:`rag_metrics.evaluation.CI_RESAMPLES`, ``CI_SEED``)."""
    cols = ["system", "metric", "label", "kind", "mean", "ci_low", "ci_high", "n", "n_failed"]
    keep = _headline(ev, metrics)
    if not keep:
        return pd.DataFrame(columns=cols)
    s = ev.summary(by="system", n_resamples=CI_RESAMPLES)
    s = s[s["metric"].isin(keep)].copy()
    order = {name: i for i, name in enumerate(systems(ev))}
    s["_s"] = s["system"].map(order)
    s["_m"] = s["metric"].map({m: i for i, m in enumerate(metric_order(keep))})
    s = s.sort_values(["_s", "_m"], kind="stable")
    s["label"] = [ANSWER_METRICS[m].label for m in s["metric"]]
    s["kind"] = [ANSWER_METRICS[m].kind for m in s["metric"]]
    return s[cols].reset_index(drop=True)


def compare_systems(ev: AnswerEvaluation, system_a: str, system_b: str,
                    metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Verdict table of answer system B against A (the columns of
    :func:`rag_metrics.compare.paired.compare`): per metric, the questions both systems answered and the
    metric scored for both are paired by question id; then :func:`rag_metrics.compare.paired.compare_paired`
    (paired t-test, Benjamini-Hochberg across the metrics, the matching interval, the MDE)."""
    names = systems(ev)
    for s in (system_a, system_b):
        if s not in names:
            raise InputError(f"no answer system {s!r}; the answers name {', '.join(map(repr, names)) or 'none'}")
    if system_a == system_b:
        raise InputError(f"pick two different answer systems (both are {system_a!r})")
    t = ev.table()
    pairs = []
    for m in _headline(ev, metrics):
        g = t[(t.metric == m) & (t.status == "ok") & (t.question_id != "")]
        a = g[g.system == system_a].drop_duplicates("question_id").set_index("question_id")["value"]
        b = g[g.system == system_b].drop_duplicates("question_id").set_index("question_id")["value"]
        common = sorted(set(a.index) & set(b.index))
        pairs.append((m, None, a.loc[common].to_numpy(dtype=np.float64), b.loc[common].to_numpy(dtype=np.float64)))
    return compare_paired(pairs, name_a=system_a, name_b=system_b)


def plain_lines(rows: pd.DataFrame) -> list[str]:
    """One sentence per answer metric for stakeholders, no p-values: each system's mean and the
    range its true mean likely lies in (:func:`summary_rows` rows)."""
    out = []
    for m, g in rows.groupby("metric", sort=False):
        meta = ANSWER_METRICS[str(m)]
        what = {"faithfulness": "share of the answers' statements backed by the retrieved context",
                "answer_relevancy": "how directly the answers address the question",
                "context_support": "how close each answer sentence is to some retrieved sentence "
                                   "(not faithfulness)",
                "answer_question_similarity": "how close the answer is to the question in meaning "
                                              "(not answer relevancy)"}.get(str(m), "")
        parts = []
        for r in g.to_dict("records"):
            if r["n"] == 0 or math.isnan(r["mean"]):
                parts.append(f"{r['system']}: not scored")
                continue
            rng = ("" if math.isnan(r["ci_low"]) else
                   f", likely between {r['ci_low']:.2f} and {r['ci_high']:.2f}")
            parts.append(f"{r['system'] or 'answers'} {r['mean']:.2f}{rng} ({r['n']} answers)")
        out.append(f"{meta.label}, {what}: " + "; ".join(parts) + ".")
    return out


@dataclass(frozen=True)
class AnswerSection:
    """What the report and the Presenter view show about answers."""

    source: str
    judge: str
    summary: pd.DataFrame
    lines: tuple[str, ...]
    comparison: pd.DataFrame | None = None
    comparison_names: tuple[str, str] = ("A", "B")


def answer_section(ev: AnswerEvaluation, source: str) -> AnswerSection:
    """The answer section of a report: summary rows, plain lines and, with two systems or more,
    the first two compared (B = the second against A = the first)."""
    rows = summary_rows(ev)
    names = systems(ev)
    comp = None
    pair = ("A", "B")
    if len(names) >= 2:
        pair = (names[0], names[1])
        comp = compare_systems(ev, *pair)
    return AnswerSection(source, ev.judge, rows, tuple(plain_lines(rows)), comp, pair)
