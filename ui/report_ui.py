"""The stakeholder report in the app: the "Download report (HTML)" button and the report's inputs.

The report is :func:`rag_metrics.report.html.build_report` of the current view (K, retriever, chunking,
evaluation options, golden set); the presenter page shows :func:`rag_metrics.report.html.report_content`
of exactly the same inputs (:func:`inputs`).

Comparison hook
---------------
A page that compares two configurations (the Compare page) publishes its result for the report
by calling :func:`publish_comparison` (or by setting ``st.session_state[COMPARISON_KEY]`` to a dict
``{"table": <rag_metrics.compare.paired.compare DataFrame>, "names": ("A name", "B name"),
"golden_fp": <golden fingerprint the runs were evaluated on>}``).  The report and the presenter
view include its verdicts while the golden set is unchanged; :func:`clear_comparison` removes it.

The HTML is built only when the button is clicked (``st.download_button`` with a callable, run by
Streamlit on its own thread), so drawing the button costs nothing on a rerun.
"""
from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics.errors import InputError
from ui import encoding, session, state
from ui.keys import REPORT_COMPARISON as COMPARISON_KEY

_HTML_CACHE: dict[tuple, str] = {}
_HTML_LOCK = threading.Lock()
_HTML_MAX = 8


@dataclass(frozen=True, eq=False)
class ReportInputs:
    """Everything the report of the current view is made of."""

    key: tuple                     # cache key: evaluation (EvalKey), K, gain, comparison, title
    k: int
    title: str
    config: dict[str, Any]
    comparison: pd.DataFrame | None
    names: tuple[str, str]
    metrics: tuple[str, ...]
    ndcg_metric: str
    file_name: str
    answers: Callable[[], Any] = lambda: None  # the answer section (ui.answer_views.report_inputs)
    system: str = ""               # the system evaluated (the story's name for it)


def _comparison_key(table: pd.DataFrame, names: tuple[str, str]) -> str:
    """A fingerprint of a comparison's content (not ``id()``: a page republishes an equal copy on
    every rerun, and a freed table's id can be reused by a different one)."""
    h = hashlib.sha256(repr((list(table.columns), tuple(names))).encode())
    try:
        h.update(pd.util.hash_pandas_object(table, index=True).to_numpy().tobytes())
    except TypeError:  # a cell that pandas cannot hash (e.g. a list): hash its text
        h.update(table.to_csv().encode())
    return h.hexdigest()[:16]


def publish_comparison(table: pd.DataFrame, names: tuple[str, str], golden_fp: str | None = None) -> None:
    """Make a comparison (a :func:`rag_metrics.compare.paired.compare` table) part of the report."""
    if golden_fp is None:
        golden_fp = state.golden_session().fingerprint
    names = (str(names[0]), str(names[1]))
    session.set_value(COMPARISON_KEY, {"table": table, "names": names, "golden_fp": golden_fp,
                                        "key": _comparison_key(table, names)})


def clear_comparison() -> None:
    session.pop(COMPARISON_KEY, None)


def comparison_for(ctx) -> tuple[pd.DataFrame | None, tuple[str, str]]:
    """The published comparison when it was made on the current golden set, else ``(None, …)``."""
    c = session.value(COMPARISON_KEY)
    if not isinstance(c, dict) or not isinstance(c.get("table"), pd.DataFrame) or not len(c["table"]):
        return None, ("A", "B")
    if c.get("golden_fp") not in (None, ctx.golden_session.fingerprint):
        return None, ("A", "B")
    names = tuple(c.get("names") or ("A", "B"))
    return c["table"], (str(names[0]), str(names[1]))  # type: ignore[index]


BASELINE = "bm25 baseline"


def baseline_comparison(ctx) -> tuple[pd.DataFrame | None, tuple[str, str]]:
    """The sidebar's system (A) against the bundled BM25 retriever (B, the baseline: no embedding,
    cheap on any corpus) at K, with the one decision rule (:func:`rag_metrics.compare.paired.compare`);
    ``(None, …)`` when the system is BM25 itself or the baseline cannot be computed."""
    from rag_metrics.compare import ab
    from ui import cache_insights
    from ui import compare_views as cv

    s = ctx.settings
    if s.retriever == "bm25" and not s.system:
        return None, ("A", "B")
    cfg_b = cv.defaults(ctx)["B"]
    if cfg_b.retriever != "bm25":
        return None, ("A", "B")
    try:
        eb = cv.evaluate_config(ctx, cfg_b, ctx.corpus.level)
        keys = tuple(ab.comparison_keys(s.metrics, ctx.k))
        table = cache_insights.comparison(ctx.result, eb.result, ctx.key, eb.key, keys)
    except InputError:
        return None, ("A", "B")
    return (table if len(table) else None), (s.system_name, BASELINE)


def resolved_comparison(ctx, inp: ReportInputs) -> tuple[pd.DataFrame | None, tuple[str, str]]:
    """The published comparison of ``inp``, else the baseline (computed only when a report or the
    Presenter view is built, never for the button alone)."""
    if inp.comparison is not None:
        return inp.comparison, inp.names
    return baseline_comparison(ctx)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60] or "report"


def _judged(ctx) -> tuple[str, str]:
    """judged@K of the report's system with the warning when it is low, where it means something
    (:func:`rag_metrics.systems.pooling.records_nonrelevant`); otherwise what an unlabelled chunk means."""
    from rag_metrics.systems.pooling import judged_readout

    r = judged_readout(ctx.golden, float(ctx.result.mean("judged", ctx.k)), ctx.k, ctx.settings.system_name)
    if not r.meaningful:
        return "unlabelled chunks", r.note
    return f"judged@{ctx.k}", f"{r.value:.3f}" + (f" ({r.warning})" if r.warning else "")


def inputs(ctx) -> ReportInputs:
    """The report inputs of the current view (``ctx`` from :func:`ui.state.current`)."""
    s = ctx.settings
    comparison, names = comparison_for(ctx)
    corpus_label = ctx.corpus.label or s.corpus
    config: dict[str, Any] = {
        "corpus": corpus_label,
        "documents": len(ctx.corpus.corpus),
        "chunks": len(ctx.chunks.chunks),
        "chunk size / overlap (characters)": f"{s.chunk_size} / {s.chunk_overlap}",
        "golden set": f"{len(ctx.golden)} questions ({ctx.result.n_in_scope} in scope, "
                      f"{ctx.result.n_out_of_scope} out of scope)",
        "system": s.system_name if not s.system else f"{s.system} (yours)",
        "embedding model": "-" if s.retriever == "bm25" or s.system else encoding.label(ctx.corpus.model),
        "retrieval depth": ctx.memo.depth,
        "NDCG gain": s.ndcg_gain,
        **dict([_judged(ctx)]),
    }
    if comparison is not None:
        config["compared"] = f"{names[0]} vs {names[1]}"
    title = f"Retrieval report: {corpus_label} ({s.system_name}, K = {ctx.k})"
    cmp_key = ""
    if comparison is not None:
        published = session.value(COMPARISON_KEY) or {}
        cmp_key = published.get("key") or _comparison_key(comparison, names)
    from ui.answer_views import report_inputs as answer_inputs

    ans_key, answers = answer_inputs(ctx)
    key = (ctx.key, ctx.k, s.ndcg_gain, cmp_key, title, ans_key)
    file_name = f"rag-metrics-report-{_slug(s.corpus)}-{_slug(s.system_name)}-k{ctx.k}.html"
    return ReportInputs(key, ctx.k, title, config, comparison, names, tuple(s.metrics), s.ndcg_metric, file_name,
                        answers, s.system_name)


def _options(inp: ReportInputs) -> dict[str, Any]:
    return {"metrics": inp.metrics, "category_metrics": ("hit_rate", inp.ndcg_metric),
            "ranking_metric": inp.ndcg_metric, "system": inp.system}


def _config(inp: ReportInputs, comparison: pd.DataFrame | None, names: tuple[str, str]) -> dict[str, Any]:
    if comparison is None or inp.comparison is not None:
        return inp.config
    return {**inp.config, "compared": f"{names[0]} vs {names[1]}"}


def content(ctx):
    """The :class:`~rag_metrics.report.html.ReportContent` of the current view (cached per inputs)."""
    from ui import cache_insights

    inp = inputs(ctx)
    comparison, names = resolved_comparison(ctx, inp)
    return cache_insights.report_content_for(ctx.result, ctx.context_text, _config(inp, comparison, names), comparison,
                                             inp.key, inp.k, names, inp.title, tuple(sorted(_options(inp).items())),
                                             inp.answers())


def html_builder(ctx) -> tuple[Callable[[], str], ReportInputs]:
    """A no-argument function returning the report HTML of the current view (built once per
    inputs, on first call), for ``st.download_button(data=...)``."""
    inp = inputs(ctx)
    result, text = ctx.result, ctx.context_text  # a context that is not a chunk shows its logged text
    published = inp.comparison is not None

    def build() -> str:
        with _HTML_LOCK:
            hit = _HTML_CACHE.get(inp.key)
        if hit is not None:
            return hit
        from rag_metrics.report.html import build_report

        comparison, names = (inp.comparison, inp.names) if published else baseline_comparison(ctx)
        html = build_report(result, k=inp.k, chunk_text=text, config=_config(inp, comparison, names),
                            comparison=comparison, comparison_names=names, title=inp.title, answers=inp.answers(),
                            **_options(inp))
        with _HTML_LOCK:
            _HTML_CACHE[inp.key] = html
            while len(_HTML_CACHE) > _HTML_MAX:
                _HTML_CACHE.pop(next(iter(_HTML_CACHE)))
        return html

    return build, inp


def download_button(ctx, *, key: str, width: str = "stretch", type: str = "secondary") -> None:
    """The one-click "Download report (HTML)" button of the current view."""
    build, inp = html_builder(ctx)
    st.download_button("Download report (HTML)", build, file_name=inp.file_name, mime="text/html", key=key,
                       icon=":material/summarize:", width=width, type=type, on_click="ignore",  # type: ignore[arg-type]
                       help="One self-contained HTML file that opens offline: headline metrics with 95% CIs, "
                            "metric-vs-K and per-category charts, best and worst questions with their passages, "
                            "the comparison verdict (when the Compare page made one), answer quality (when answers "
                            "exist for the golden set) and the configuration.")


def sidebar_button() -> None:
    """The report button at the bottom of the shared sidebar (drawn after the page ran)."""
    try:
        ctx = state.current()
    except InputError:
        return
    if ctx.result.n_queries == 0:
        return
    download_button(ctx, key="report_download_sidebar")
