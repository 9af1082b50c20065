"""Dashboard: the metrics at K with confidence intervals, against K, per category, hit rates and abstention.

``pages/dashboard.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import streamlit as st

from rag_metrics.evaluation import CI_RESAMPLES, CI_SEED
from rag_metrics.insights import readouts
from rag_metrics.metrics.registry import METRICS
from ui import answer_views, cache, state, views
from ui import systems as systems_ui


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    ctx = state.current_or_stop()
    k = ctx.k
    res = ctx.result
    unit = ctx.unit  # labels name documents (BEIR) or chunks
    views.page_header("Dashboard", ctx)
    start_left, start_right = st.columns(2)  # the first screen: where a student and an engineer each start
    start_left.page_link("pages/lesson.py", label="Learning the metrics? Start with the Lesson",
                         icon=":material/school:")
    start_right.page_link("pages/bring_your_system.py", label="Your own RAG system? Bring your system",
                          icon=":material/upload_file:")

    if res.no_verdict is not None and res.no_verdict.kind != "unlocated":  # the banner above says why and the fix
        st.stop()  # nothing matched, no retrieval or no in-scope question answered: every number would be a 0
    if res.n_queries == 0:
        st.warning("No query enters the means yet: label at least one relevant chunk on the Golden set editor page.",
                   icon=":material/info:")
        st.stop()

    summary = ctx.summary()
    if res.comparable:
        views.metric_cards(summary)
    else:  # the banner above says why: the numbers are no verdict
        with st.expander("Not comparable: show the numbers anyway (computed mostly from contexts found nowhere)"):
            views.metric_cards(summary)
    systems_ui.judged_note(ctx)
    st.caption(f"Means over {res.n_queries} queries"
               + (f" ({views.answered_absent(res)}; the sidebar's conventions switch)" if res.n_absent else "")
               + (" (out-of-scope queries excluded: they are measured by abstention below)."
                  if ctx.settings.options.out_of_scope == "exclude" else
                  " (out-of-scope queries counted as misses, as in the lesson code).")
               + f" 95% bootstrap confidence intervals ({CI_RESAMPLES:,} resamples, seed {CI_SEED}: the same intervals "
                 "as the Presenter view, the report and the CLI).")
    with st.expander("What each metric measures", icon=":material/help:"):
        views.wrapped_table(readouts.metric_glossary(ctx.settings.metrics).rename(columns={
            "metric": "Metric", "description": "What it measures", "formula": "Formula", "trec_eval": "trec_eval"}))
        st.caption("Conventions follow trec_eval; the sidebar's “Evaluation conventions” switch to the alternatives "
                   "other tools use.")
    answer_views.dashboard_section(ctx)  # answer quality next to the retrieval metrics (when answers exist)

    # ---- reading and targets ----------------------------------------------------------------------
    left, right = st.columns([3, 2], gap="large")
    with left:
        views.section("Every metric against K", "Retrieval is done once to depth "
                      f"{ctx.memo.depth}; K only reads another column. The dashed line marks the current K.")
        views.chart(views.curve_chart(ctx.curve_records(), k, ctx.settings.metrics))
    with right:
        views.section("Reading the numbers")
        mrr = res.mean("mrr", k)
        st.markdown(f"**MRR@{k} = {views.fmt(mrr)}.** {readouts.mrr_reading(mrr, unit, k)}")
        views.target_cards(ctx.targets())
        with st.expander("What MRR values mean (the lesson's table)"):
            views.wrapped_table(readouts.mrr_reading_rows(unit))
            st.caption(f"Typical rank of the first relevant {unit} ≈ 1 / MRR (when that rank is within K). Targets "
                       f"from the lesson, at the cutoffs it sets them for: {readouts.targets_caption()}.")

    # ---- per category and hit rates -----------------------------------------------------------------
    left, right = st.columns([3, 2], gap="large")
    with left:
        views.section("Per category", "Mean at K with 95% CI error bars; n = queries in the category.")
        metric = st.selectbox("Metric", ctx.settings.metrics, format_func=views.label, key="dash_cat_metric",
                              label_visibility="collapsed")
        cat = ctx.by_category(metric)
        if cat.empty:
            st.info("No category has queries in the mean.")
        else:
            views.chart(views.category_chart(cat, metric))
            st.caption(METRICS[metric].description)
    with right:
        views.section("Hit rate at 1, 3, 5, 10", f"Did any relevant {unit} appear in the top K?")
        views.chart(views.hit_rate_chart(ctx.hit_rates()))

    # ---- out-of-scope abstention -----------------------------------------------------------------------
    views.section("Out-of-scope questions: would the system refuse?",
                  "A RAG system can refuse to answer when the best retrieval score is below a threshold. "
                  "Out-of-scope questions should be refused; in-scope ones should not.")
    if res.n_out_of_scope == 0:
        st.info("The golden set has no out-of-scope question (category out_of_scope, or a question with no judgment).")
    else:
        setup = ctx.abstention_setup()  # range and Youden's-J start, cached per evaluation
        key = f"abstain_{ctx.key.system}"
        c1, c2 = st.columns([2, 3], gap="large")
        with c1:
            threshold = st.slider("Refuse when the top score is below", min_value=float(setup["lo"]),
                                  max_value=float(setup["hi"]), value=setup["start"], step=0.001, format="%.3f",
                                  key=key)
            a = cache.abstention_counts(res, ctx.key, threshold)
            m1, m2 = st.container(key="cards_abstention").columns(2)  # wraps when narrow (ui.shell's CSS)
            m1.metric("Correct refusals", f"{a['out_of_scope_refused']} / {a['out_of_scope']}", border=True,
                      help="Out-of-scope questions whose top score is below the threshold (refused, as they should "
                           "be).")
            m2.metric("Wrong refusals", f"{a['in_scope_refused']} / {a['in_scope']}", border=True,
                      help="In-scope questions whose top score is below the threshold (refused although the corpus "
                           "answers them).")
            scale = ("cosine similarities" if ctx.settings.system_name == "dense" else
                     "this system's own scores, not on the cosine scale")
            st.caption(f"Top scores range from {views.fmt(setup['lo'])} to {views.fmt(setup['hi'])} with this "
                       f"retriever "
                       f"({scale}). The slider starts at the threshold that best "
                       f"separates the two groups (Youden's J): {views.fmt(setup['suggested'])}.")
        with c2:
            views.chart(views.abstention_chart(ctx.abstention_records(), threshold))
