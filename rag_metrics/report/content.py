"""What a stakeholder report shows: :func:`report_content` gathers it into a :class:`ReportContent`
of DataFrames, Altair charts and dataclasses, which :func:`rag_metrics.report.html.render_report`
turns into one offline HTML page and the app's presenter view renders as it is.
"""
from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from rag_metrics.errors import InputError
from rag_metrics.evaluation import CI_RESAMPLES, EvaluationResult
from rag_metrics.metrics.presets import describe_conventions
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS
from rag_metrics.report.chart_style import K_TITLE, k_axis, k_scale, metric_scale

if TYPE_CHECKING:  # pragma: no cover
    import altair as alt

    from rag_metrics.insights.projection import CorpusMap

__all__ = ["Passage", "QueryExample", "ReportContent", "best_and_worst", "category_chart", "metric_curve_chart",
           "report_content"]


@dataclass(frozen=True)
class Passage:
    """One retrieved chunk of an example query."""

    rank: int
    chunk_id: str
    score: float
    grade: int
    relevant: bool
    text: str


@dataclass(frozen=True)
class QueryExample:
    """A best or worst query with its top-k passages."""

    query_id: str
    question: str
    category: str
    metric: str
    value: float
    first_relevant_rank: int  # 0: no relevant chunk retrieved
    expected_ids: tuple[str, ...]
    expected_answer: str | None
    passages: tuple[Passage, ...]


@dataclass(frozen=True, eq=False)
class ReportContent:
    """Everything a report shows; charts are Altair objects, tables DataFrames."""

    title: str
    k: int
    generated_at: str
    headline: pd.DataFrame
    curve_chart: alt.Chart | alt.LayerChart
    category_chart: alt.Chart | alt.LayerChart
    by_category: pd.DataFrame
    best: tuple[QueryExample, ...]
    worst: tuple[QueryExample, ...]
    ranking_metric: str
    n_queries: int
    n_in_scope: int
    n_out_of_scope: int
    config: Mapping[str, Any]
    context_metrics: pd.DataFrame | None = None
    comparison: pd.DataFrame | None = None
    verdicts: tuple[str, ...] = ()
    comparison_names: tuple[str, str] = ("A", "B")
    notes: tuple[str, ...] = field(default_factory=tuple)
    map_chart: alt.LayerChart | None = None
    answers: Any = None  # rag_metrics.answers.summary.AnswerSection, when answers exist
    story: Any = None  # rag_metrics.report.story.Story: what the report and the Presenter view lead with
    #: The "no verdict" sentence (:attr:`EvaluationResult.no_verdict`) when the numbers are no verdict,
    #: else the system's unlocated-context line (:meth:`rag_metrics.metrics.evidence.LocateReport.line`), ""
    #: when every context was placed; ``comparable`` False when no verdict (the report then says so
    #: first and shows no headline number or verdict).
    located_line: str = ""
    comparable: bool = True


def _label(metric: str, k: int | None) -> str:
    spec = METRICS.get(metric)
    name = spec.label if spec else metric
    return name if k is None or (isinstance(k, float) and math.isnan(k)) or k is pd.NA else f"{name}@{k}"


def metric_curve_chart(result: EvaluationResult, metrics: Sequence[str] = DEFAULT_METRICS,
                       max_k: int | None = None, k: int | None = None, width: int | str = 820,
                       height: int = 320) -> alt.LayerChart:
    """Mean of each metric for k = 1..max_k, one line per metric, with a rule at the chosen ``k``."""
    import altair as alt


    curve = result.curve(metrics, max_k).assign(label=lambda d: d["metric"].map(lambda m: METRICS[m].label))
    order = [METRICS[m].label for m in metrics]
    top = int(curve["k"].max()) if len(curve) else 2
    lines = alt.Chart(curve).mark_line(point=alt.OverlayMarkDef(size=28)).encode(
        x=alt.X("k:Q", title=K_TITLE, axis=alt.Axis(**k_axis(top)), scale=alt.Scale(**k_scale(top))),
        y=alt.Y("value:Q", title="mean over in-scope queries", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("label:N", title="metric", sort=order,
                        scale=alt.Scale(**metric_scale(metrics, lambda m: METRICS[m].label))),
        tooltip=[alt.Tooltip("label:N", title="metric"), "k:Q", alt.Tooltip("value:Q", format=".3f")])
    layers: list[Any] = [lines]
    if k is not None:
        rule = alt.Chart(pd.DataFrame({"k": [k], "text": [f"k = {k}"]}))
        layers += [rule.mark_rule(strokeDash=[4, 4], color="#666").encode(x="k:Q"),
                   rule.mark_text(align="left", dx=4, dy=-6, color="#444", baseline="top").encode(
                       x="k:Q", y=alt.value(0), text="text:N")]
    return cast(alt.LayerChart, alt.layer(*layers).properties(width=width, height=height))


def category_chart(result: EvaluationResult, metrics: Sequence[str] = ("hit_rate", "ndcg"), k: int = 5,
                   by_category: pd.DataFrame | None = None, width: int | str = 700) -> alt.LayerChart:
    """Mean with 95 % CI per category (horizontal bars with error bars), one bar per metric."""
    import altair as alt

    df = by_category if by_category is not None else result.by_category(metrics, ks=(k,))
    df = df[df["metric"].isin(list(metrics))].copy()
    df["label"] = [_label(m, kk) for m, kk in zip(df["metric"], df["k"])]
    df["category_n"] = [f"{c} (n={n})" for c, n in zip(df["category"], df["n"])]
    df["k"] = df["k"].astype(float)

    order = [_label(m, k) for m in metrics]
    y = alt.Y("category_n:N", title=None, sort=list(dict.fromkeys(df["category_n"])))
    color = alt.Color("label:N", title="metric", sort=order,
                      scale=alt.Scale(**metric_scale(metrics, lambda m: _label(m, k))))
    tip: list[str | alt.Tooltip] = [
        "category:N", alt.Tooltip("label:N", title="metric"), alt.Tooltip("mean:Q", format=".3f"),
        alt.Tooltip("ci_low:Q", format=".3f", title="95% CI low"),
        alt.Tooltip("ci_high:Q", format=".3f", title="95% CI high"), "n:Q"]
    base = alt.Chart(df).encode(y=y, yOffset=alt.YOffset("label:N", sort=order), color=color, tooltip=tip)
    bars = base.mark_bar(opacity=0.85, height={"band": 0.9}).encode(
        x=alt.X("mean:Q", title="mean (bars) with 95% CI (whiskers)", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(tickCount=10, format=".1f")))
    err = base.mark_errorbar(ticks=alt.TickConfig(size=8), thickness=1.5).encode(
        x=alt.X("ci_low:Q", title="mean (bars) with 95% CI (whiskers)"), x2="ci_high:Q", color=alt.value("#222"))
    n_cat = max(df["category"].nunique(), 1)
    return cast(alt.LayerChart, alt.layer(bars, err).properties(width=width, height=max(120, 26 * len(order) * n_cat)))


def best_and_worst(result: EvaluationResult, k: int, chunk_text: Mapping[str, str] | None = None,
                   metric: str = "ndcg", n: int = 3) -> tuple[tuple[QueryExample, ...], tuple[QueryExample, ...]]:
    """The ``n`` best and ``n`` worst in-scope queries by ``metric@k`` (ties: golden order), with
    their top-``k`` passages.  The two lists never share a query."""
    inc = np.flatnonzero(result.included & result.in_scope)
    if inc.size == 0:
        return (), ()
    v = result.values(metric, k)
    order = inc[np.argsort(-v[inc], kind="stable")]
    best = order[: min(n, (len(order) + 1) // 2)]
    rest = [q for q in order[::-1] if q not in set(best.tolist())]
    worst = rest[:n]
    first = result.first_relevant_rank()
    texts = chunk_text or {}
    level = result.options.relevance_level

    def example(q: int) -> QueryExample:
        gq = result.golden.queries[q]
        ids, scores, grades = result.judged.ranking(int(q))
        passages = tuple(Passage(r, i, float(s), int(g), g >= level, texts.get(i, ""))
                         for r, (i, s, g) in enumerate(zip(ids[:k], scores[:k], grades[:k]), 1))
        return QueryExample(gq.id, gq.question, gq.category or "(none)", f"{metric}@{k}", float(v[q]), int(first[q]),
                            tuple(i for i in gq.relevant_ids if gq.relevant[i] >= level), gq.expected_answer,
                            passages)

    return tuple(example(q) for q in best), tuple(example(q) for q in worst)


def report_content(
    result: EvaluationResult,
    *,
    k: int = 5,
    chunk_text: Mapping[str, str] | None = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    category_metrics: Sequence[str] = ("hit_rate", "ndcg"),
    ranking_metric: str = "ndcg",
    n_examples: int = 3,
    max_k: int | None = None,
    comparison: pd.DataFrame | None = None,
    comparison_names: tuple[str, str] = ("A", "B"),
    config: Mapping[str, Any] | None = None,
    title: str = "Retrieval evaluation report",
    context_metrics: bool = True,
    n_resamples: int = CI_RESAMPLES,
    generated_at: str | None = None,
    corpus_map: CorpusMap | None = None,
    answers: Any = None,
    system: str = "",
) -> ReportContent:
    """Gather the report's content (also what the app's presenter view shows).

    ``comparison`` is a :func:`rag_metrics.compare.paired.compare` table; its verdicts are written in
    plain language with ``comparison_names``.  ``corpus_map`` (from
    :func:`rag_metrics.insights.projection.project_corpus`) adds the corpus map, with the worst question
    preselected.  ``answers`` (a :class:`rag_metrics.answers.summary.AnswerSection`) adds the
    "Answer quality" section.  ``config`` is shown as given, after the
    evaluation options, which are always listed.  The report leads with the story of
    :func:`rag_metrics.report.story.presenter_story` (``system`` names the system evaluated, default the
    run's name; the comparison's A is that system and B the baseline).
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be an integer >= 1, got {k!r}")
    for m in list(metrics) + list(category_metrics) + [ranking_metric]:
        if m not in METRICS:
            raise InputError(f"unknown metric {m!r}; known metrics: {', '.join(METRICS)}")
    k = int(k)
    max_k = max_k or max(result.depth, k, 1)
    headline = result.summary(metrics, ks=(k,), ci=True, n_resamples=n_resamples)
    by_cat = result.by_category(list(dict.fromkeys(list(category_metrics))), ks=(k,), ci=True,
                                n_resamples=n_resamples)
    best, worst = best_and_worst(result, k, chunk_text, ranking_metric, n_examples)
    verdicts: tuple[str, ...] = ()
    if comparison is not None and len(comparison):
        from rag_metrics.compare.paired import comparison_summary, plain_verdict

        verdicts = (comparison_summary(comparison, *comparison_names, plain=True),) + tuple(
            plain_verdict(r, *comparison_names) for _, r in comparison.iterrows())
    ctx = None
    if context_metrics and result.n_queries:
        from rag_metrics.insights.ragas import context_metrics_summary

        ctx = context_metrics_summary(result, k, ci=True, n_resamples=n_resamples)
    opts = result.options

    cfg: dict[str, Any] = {
        "conventions": describe_conventions(opts, "exponential" if "ndcg_exp" in metrics else "linear")
        .removeprefix("Conventions: "),
        "cutoff k": k,
        "run": result.run.name,
        "relevance level": opts.relevance_level,
        "out-of-scope queries": opts.out_of_scope,
        "recall denominator": opts.recall_denominator,
        "NDCG relevance": opts.ndcg_relevance,
        "golden queries missing from the run": opts.missing_queries,
        "evaluation level": opts.level,
        "confidence intervals": f"95% percentile bootstrap, {n_resamples} resamples",
    }
    cfg.update(dict(config or {}))
    notes = []
    if result.n_out_of_scope:
        notes.append(f"{result.n_out_of_scope} out-of-scope question(s) (category out_of_scope, or no judgment) are "
                     + ("left out of the means." if opts.out_of_scope == "exclude" else "counted as misses."))
    from rag_metrics.report.story import presenter_story

    story = presenter_story(result, k, system=system or result.run.name, chunk_text=chunk_text,
                            comparison=comparison, comparison_names=tuple(comparison_names))  # type: ignore[arg-type]
    if result.n_absent:
        notes.append(f"{result.n_answered} question(s) answered, {result.n_absent} not in the system's results (not "
                     "in the log): " + ("left out of the means (only the answered questions are evaluated)."
                                        if opts.missing_queries == "skip" else
                                        "each counts 0 in the means (trec_eval -c)."))
    return ReportContent(
        title=title, k=k,
        generated_at=generated_at or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        headline=headline,
        curve_chart=metric_curve_chart(result, metrics, max_k, k),
        category_chart=category_chart(result, category_metrics, k, by_cat),
        by_category=by_cat, best=best, worst=worst, ranking_metric=f"{ranking_metric}@{k}",
        n_queries=len(result.query_ids), n_in_scope=result.n_in_scope, n_out_of_scope=result.n_out_of_scope,
        config=cfg, context_metrics=ctx, comparison=comparison, verdicts=verdicts,
        comparison_names=tuple(comparison_names), notes=tuple(notes),  # type: ignore[arg-type]  # tuple() widens the 2-tuple
        map_chart=_map_chart(corpus_map, worst), answers=answers, story=story,
        located_line=(result.no_verdict.line() if result.no_verdict is not None else
                      result.located.line() if result.located is not None else ""),
        comparable=result.comparable,
    )


def _map_chart(cmap: CorpusMap | None, worst: Sequence[QueryExample]) -> alt.LayerChart | None:
    if cmap is None:
        return None
    from rag_metrics.insights.projection import corpus_map_chart

    known = set(cmap.queries["query_id"])
    pre = next((e.query_id for e in worst if e.query_id in known), None)
    return corpus_map_chart(cmap, query_id=pre, width=620, height=480, title=None)
