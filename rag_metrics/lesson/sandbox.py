"""The metric sandbox (the app's Learn page): one ranked list a student edits, and the lesson's
guided scenarios as data.  No streamlit import here.

A :class:`Sandbox` is a ranked list of :class:`Item` (id, text, grade) plus the grades of the
relevant ids that were *not* retrieved (they count in ``|R|`` and in the ideal DCG).  Every value
and every substituted formula comes from :func:`rag_metrics.metrics.explain.explain_ranking`, i.e. from the
same kernels as :func:`rag_metrics.evaluation.evaluate`.

>>> sb = Sandbox.from_grades([0, 1, 0, 1], unretrieved=())
>>> round(float(metric_table(sb, 3).set_index("metric").loc["ndcg", "value"]), 4)
0.3869
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from rag_metrics.errors import InputError
from rag_metrics.metrics.explain import MetricExplanation, explain_ranking
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS

__all__ = [
    "MAX_GRADE", "Item", "Sandbox", "metrics_for", "explain", "metric_table", "term_table", "curve",
    "from_ranking", "free_form", "Scenario", "SCENARIOS", "scenario", "scenario_table", "convention_effects",
]

#: Grades offered by the sandbox (0 = not relevant; the sample golden set uses 1-3).
MAX_GRADE = 3


@dataclass(frozen=True)
class Item:
    id: str
    text: str = ""
    grade: int = 0


@dataclass(frozen=True)
class Sandbox:
    """A ranked list (rank 1 first) and the grades of relevant ids missing from it."""

    items: tuple[Item, ...]
    unretrieved: tuple[int, ...] = ()
    source: str = "free-form"          # "free-form" or the golden query id it was loaded from
    question: str = ""

    def __post_init__(self) -> None:
        for it in self.items:
            _check_grade(it.grade, f"grade of {it.id!r}")
        for g in self.unretrieved:
            _check_grade(g, "grade of a relevant id not retrieved")
        ids = [it.id for it in self.items]
        if len(set(ids)) != len(ids):
            raise InputError("the sandbox list has the same id twice; ids must be unique")

    @classmethod
    def from_grades(cls, grades: Sequence[int], unretrieved: Sequence[int] = (), **kw: Any) -> Sandbox:
        """Items named ``result 1``, ``result 2``, ... with the given grades (rank order)."""
        return cls(tuple(Item(f"result {i + 1}", "", int(g)) for i, g in enumerate(grades)),
                   tuple(int(g) for g in unretrieved), **kw)

    @property
    def grades(self) -> list[int]:
        return [it.grade for it in self.items]

    @property
    def judged_grades(self) -> list[int]:
        """Every judged grade of the query: the listed items and the relevant ids not retrieved."""
        return self.grades + list(self.unretrieved)

    def n_relevant(self, level: int = 1) -> int:
        """``|R|`` at relevance level ``level`` (retrieved or not)."""
        return sum(1 for g in self.judged_grades if g >= level)

    # ---- manipulations (each returns a new Sandbox) ------------------------------------------
    def move(self, index: int, step: int) -> Sandbox:
        """Move the item at ``index`` (0-based) by ``step`` places (-1 = up); clamped at the ends."""
        items = list(self.items)
        if not 0 <= index < len(items):
            raise InputError(f"no item at position {index + 1}; the list has {len(items)} items")
        j = min(max(index + int(step), 0), len(items) - 1)
        items.insert(j, items.pop(index))
        return replace(self, items=tuple(items))

    def with_grade(self, index: int, grade: int) -> Sandbox:
        if not 0 <= index < len(self.items):
            raise InputError(f"no item at position {index + 1}; the list has {len(self.items)} items")
        _check_grade(grade, "grade")
        items = list(self.items)
        items[index] = replace(items[index], grade=int(grade))
        return replace(self, items=tuple(items))

    def with_grades(self, grades: Mapping[str, int]) -> Sandbox:
        """Set grades by item id (ids not listed keep their grade)."""
        return replace(self, items=tuple(replace(it, grade=int(grades.get(it.id, it.grade))) for it in self.items))

    def with_unretrieved(self, count: int, grade: int = 1) -> Sandbox:
        """``count`` relevant ids that the retriever did not return: the first ones keep their
        grades (e.g. from the golden labels), new ones get ``grade``."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InputError(f"the number of relevant ids not retrieved must be an integer >= 0, got {count!r}")
        _check_grade(grade, "grade")
        kept = self.unretrieved[:count]
        return replace(self, unretrieved=kept + (int(grade),) * (count - len(kept)))


def _check_grade(g: Any, where: str) -> None:
    if isinstance(g, bool) or not isinstance(g, int) or not 0 <= g <= MAX_GRADE:
        raise InputError(f"{where}: a grade must be an integer from 0 to {MAX_GRADE}, got {g!r}")


def _check_k(k: int, n: int | None = None) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"K must be an integer >= 1, got {k!r}")


# ---- metrics ----------------------------------------------------------------------------------
def metrics_for(gain: str = "linear") -> tuple[str, ...]:
    """The dashboard's metrics with NDCG in the chosen gain (``linear`` or ``exponential``)."""
    if gain not in ("linear", "exponential"):
        raise InputError(f"NDCG gain must be 'linear' or 'exponential', got {gain!r}")
    return tuple(("ndcg" if gain == "linear" else "ndcg_exp") if m == "ndcg" else m for m in DEFAULT_METRICS)


def explain(sb: Sandbox, k: int, relevance_level: int = 1, recall_denominator: str = "all"
            ) -> dict[str, MetricExplanation]:
    """Every metric's value and arithmetic at ``k`` (:func:`explain_ranking`)."""
    _check_k(k)
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int) or relevance_level < 1:
        raise InputError(f"relevance level must be an integer >= 1, got {relevance_level!r}")
    if recall_denominator not in ("all", "cap"):
        raise InputError(f"recall denominator must be 'all' or 'cap', got {recall_denominator!r}")
    return explain_ranking(sb.grades, sb.judged_grades, k, relevance_level, recall_denominator)


def metric_table(sb: Sandbox, k: int, relevance_level: int = 1, recall_denominator: str = "all",
                 gain: str = "linear") -> pd.DataFrame:
    """metric, label, k, value, formula, substituted: one row per dashboard metric."""
    ex = explain(sb, k, relevance_level, recall_denominator)
    rows = [{"metric": m, "label": METRICS[m].label, "k": k, "value": ex[m].value, "formula": ex[m].formula,
             "substituted": ex[m].substituted} for m in metrics_for(gain)]
    return pd.DataFrame(rows, columns=["metric", "label", "k", "value", "formula", "substituted"])


def term_table(sb: Sandbox, k: int, relevance_level: int = 1, gain: str = "linear") -> pd.DataFrame:
    """Each rank's part in the arithmetic at ``k``.

    Columns: rank, id, grade, relevant (grade >= level), in_top_k, hits (relevant ids up to this
    rank), ap_term (hits/rank at a relevant rank within k, else NaN), gain, discount (log2(rank+1)),
    dcg_term (gain/discount within k, else NaN).
    """
    _check_k(k)
    rows = []
    hits = 0
    for i, it in enumerate(sb.items):
        rank = i + 1
        rel = it.grade >= relevance_level
        hits += int(rel)
        inside = rank <= k
        g = float(it.grade) if gain == "linear" else 2.0 ** it.grade - 1.0
        disc = math.log2(rank + 1)
        rows.append({"rank": rank, "id": it.id, "grade": it.grade, "relevant": rel, "in_top_k": inside,
                     "hits": hits, "ap_term": hits / rank if (rel and inside) else math.nan,
                     "gain": g, "discount": disc, "dcg_term": g / disc if (inside and it.grade > 0) else math.nan})
    return pd.DataFrame(rows, columns=["rank", "id", "grade", "relevant", "in_top_k", "hits", "ap_term", "gain",
                                       "discount", "dcg_term"])


def curve(sb: Sandbox, relevance_level: int = 1, recall_denominator: str = "all", gain: str = "linear",
          max_k: int | None = None) -> pd.DataFrame:
    """metric, k, value for k = 1..max_k (default: the list length)."""
    max_k = max_k or max(len(sb.items), 1)
    rows = []
    for k in range(1, max_k + 1):
        ex = explain(sb, k, relevance_level, recall_denominator)
        rows += [{"metric": m, "k": k, "value": ex[m].value} for m in metrics_for(gain)]
    return pd.DataFrame(rows, columns=["metric", "k", "value"])


# ---- building a sandbox ----------------------------------------------------------------------
def from_ranking(result: Any, query_id: str, n: int = 10, text: Mapping[str, str] | None = None) -> Sandbox:
    """The top ``n`` of one golden query in an :class:`~rag_metrics.evaluation.EvaluationResult`,
    with its labels; labelled ids outside the top ``n`` become "relevant but not retrieved"."""
    if n < 1:
        raise InputError(f"the list needs at least one result, got n = {n}")
    rank = result.ranking(query_id).head(n)
    q = result.golden.queries[result.query_ids.index(query_id)]
    grades = {i: int(g) for i, g in q.relevant.items()}
    shown = [str(i) for i in rank["id"]]
    items = tuple(Item(i, (text or {}).get(i, ""), min(max(int(g), 0), MAX_GRADE))
                  for i, g in zip(shown, rank["grade"]))
    missing = tuple(min(g, MAX_GRADE) for i, g in grades.items() if g > 0 and i not in set(shown))
    return Sandbox(items, missing, source=query_id, question=q.question)


def free_form(n: int = 10) -> Sandbox:
    """``n`` results, none relevant yet."""
    if n < 1:
        raise InputError(f"the list needs at least one result, got n = {n}")
    return Sandbox.from_grades([0] * n)


# ---- the lesson's scenarios -------------------------------------------------------------------
@dataclass(frozen=True)
class Scenario:
    """One guided scenario: a list (and K) before and after a change, and what to look at."""

    key: str
    title: str
    lesson: str
    before: Sandbox
    k_before: int
    after: Sandbox
    k_after: int
    highlight: tuple[str, ...]
    before_label: str
    after_label: str


def _sb(grades: Sequence[int], unretrieved: Sequence[int] = ()) -> Sandbox:
    return Sandbox.from_grades(grades, unretrieved)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "rank5_vs_rank1", "Rank 5 vs rank 1",
        "The relevant chunk is always at rank 5 for one retriever and always at rank 1 for another. "
        "Both hit at K = 5, so the hit rate is the same; MRR is 1/5 = 0.2 against 1/1 = 1.0. Hit rate "
        "asks *whether* the answer was found, MRR *how high*.",
        _sb([0, 0, 0, 0, 1, 0, 0, 0, 0, 0]), 5, _sb([1, 0, 0, 0, 0, 0, 0, 0, 0, 0]), 5,
        ("hit_rate", "mrr"), "relevant at rank 5", "relevant at rank 1"),
    Scenario(
        "rank6_to_rank2", "Rank 6 → rank 2",
        "A query already hit at rank 1 has a second relevant chunk at rank 6. Moving it to rank 2 raises "
        "NDCG@5 (and MAP, precision, recall), while hit rate@5 stays 1: the query was already hit, so "
        "hit rate cannot see the improvement.",
        _sb([1, 0, 0, 0, 0, 1, 0, 0, 0, 0]), 5, _sb([1, 1, 0, 0, 0, 0, 0, 0, 0, 0]), 5,
        ("hit_rate", "ndcg"), "second relevant at rank 6", "second relevant at rank 2"),
    Scenario(
        "recall_two_of_three", "3 relevant, 2 in the top 5",
        "The query has 3 relevant chunks; the retriever returns 2 of them in the top 5 (ranks 2 and 4) and "
        "the third is not retrieved at all. Recall@5 = 2/3 = 0.67: |R| counts the chunk that was never "
        "retrieved. With the min(K, |R|) denominator (BEIR R_cap) it is still 2/3; at K = 2 it is 1/2 "
        "instead of 1/3.",
        _sb([0, 1, 0, 1, 0, 0, 0, 0, 0, 0], [1]), 5, _sb([0, 1, 0, 1, 0, 0, 0, 0, 0, 0], [1]), 2,
        ("recall", "precision"), "K = 5", "K = 2"),
    Scenario(
        "larger_k", "Larger K: recall up, precision down",
        "Four relevant chunks, three retrieved (ranks 1, 3 and 7). Going from K = 3 to K = 10 finds one more "
        "(recall 2/4 → 3/4) but divides by a larger K (precision 2/3 → 3/10). The chart below shows every "
        "K at once.",
        _sb([1, 0, 1, 0, 0, 0, 1, 0, 0, 0], [1]), 3, _sb([1, 0, 1, 0, 0, 0, 1, 0, 0, 0], [1]), 10,
        ("recall", "precision"), "K = 3", "K = 10"),
)


def scenario(key: str) -> Scenario:
    for sc in SCENARIOS:
        if sc.key == key:
            return sc
    raise InputError(f"unknown scenario {key!r}; known: {', '.join(s.key for s in SCENARIOS)}")


def scenario_table(sc: Scenario, relevance_level: int = 1, recall_denominator: str = "all",
                   gain: str = "linear") -> pd.DataFrame:
    """metric, label, before, after, highlighted: every metric of both sides of a scenario."""
    b = explain(sc.before, sc.k_before, relevance_level, recall_denominator)
    a = explain(sc.after, sc.k_after, relevance_level, recall_denominator)
    rows = []
    for m in metrics_for(gain):
        rows.append({"metric": m, "label": METRICS[m].label, "before": b[m].value, "after": a[m].value,
                     "highlighted": m in sc.highlight or (m == "ndcg_exp" and "ndcg" in sc.highlight)})
    return pd.DataFrame(rows, columns=["metric", "label", "before", "after", "highlighted"])


# ---- conventions on a real golden set -----------------------------------------------------------
def convention_effects(result: Any, k: int) -> pd.DataFrame:
    """What each convention toggle does to the golden-set means at ``k``.

    Columns: convention, metric, k, default (trec_eval), alternative, default_value,
    alternative_value, n_default, n_alternative (queries in each mean).  Both sides are computed
    from the same judged run (:meth:`EvaluationResult.with_options`), starting from ``result``'s
    options for every other setting.
    """
    _check_k(k)
    base = result.with_options(out_of_scope="exclude", recall_denominator="all", relevance_level=1, gains=(),
                               judged_only=False, mrr="first", nonpositive_scores="retrieved")
    rows = []

    def add(conv: str, metric: str, d_label: str, a_label: str, d_res: Any, a_res: Any,
            d_metric: str | None = None, a_metric: str | None = None) -> None:
        rows.append({"convention": conv, "metric": metric, "k": k, "default": d_label, "alternative": a_label,
                     "default_value": d_res.mean(d_metric or metric, k),
                     "alternative_value": a_res.mean(a_metric or metric, k),
                     "n_default": d_res.n_queries, "n_alternative": a_res.n_queries})

    add("NDCG gain", "ndcg", "linear g", "exponential 2^g - 1", base, base, "ndcg", "ndcg_exp")
    add("Out-of-scope queries", "hit_rate", "excluded", "counted as misses", base,
        base.with_options(out_of_scope="miss"))
    add("Recall denominator", "recall", "|R|", "min(K, |R|)", base, base.with_options(recall_denominator="cap"))
    add("Relevance level", "precision", "L = 1", "L = 2", base, base.with_options(relevance_level=2))
    # other tools' conventions (labelled options, off by default)
    add("Gain per grade (trec_eval gains, ir_measures nDCG(gains=))", "ndcg", "gain = grade", "grade 3 gains 10",
        base, base.with_options(gains={3: 10}))
    add("Judged results only (trec_eval -J)", "precision", "every result", "labelled results only", base,
        base.with_options(judged_only=True))
    add("MRR (LlamaIndex granular)", "mrr", "first relevant", "mean over the relevant retrieved", base,
        base.with_options(mrr="granular"))
    add("Results scored <= 0 (torchmetrics)", "recall", "retrieved", "not retrieved", base,
        base.with_options(nonpositive_scores="not_retrieved"))
    return pd.DataFrame(rows)
