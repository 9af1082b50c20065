"""Presenter view: the stakeholder report's content (rag_metrics.report.html.report_content), large and clean.

``pages/presenter.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.evaluation import CI_CONFIDENCE, CI_RESAMPLES, CI_SEED
from rag_metrics.insights import readouts
from ui import answer_views, cache_insights, report_ui, state, views


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    # Static styling of this page only (no user content): larger numbers and text for a projector.
    _CSS = """<style>
[data-testid="stMainBlockContainer"] { max-width: 1280px; }
.st-key-presenter [data-testid="stMarkdownContainer"] p { font-size: 1.12rem; }
.st-key-presenter [data-testid="stMetricValue"] p { font-size: 3.2rem; line-height: 1.15; font-weight: 600; }
.st-key-presenter [data-testid="stMetricLabel"] p { font-size: 1.2rem; }
.st-key-presenter [data-testid="stCaptionContainer"] p { font-size: 0.95rem; }
.st-key-presenter h2 { font-size: 1.9rem; }
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"] {
  display: none; }
</style>"""
    KIND_ICONS = {"win": ":material/check_circle:", "miss": ":material/cancel:", "near miss": ":material/adjust:"}

    ctx = state.current_or_stop()
    res = ctx.result
    if res.n_queries == 0:
        st.title("Presenter view")
        st.warning("No query enters the means yet: label at least one relevant chunk on the Golden set editor page.",
                   icon=":material/info:")
        st.stop()

    try:
        with st.spinner("Preparing the report…"):
            content = report_ui.content(ctx)
            rkey = report_ui.inputs(ctx).key  # charts of this content are cached under it
    except InputError as err:
        views.input_error(err, "Cannot build the report")
        st.stop()

    st.html(_CSS)
    with st.container(key="presenter"):
        report_ui.inputs(ctx)
        st.page_link("pages/dashboard.py", label="Back to the controls (Dashboard)", icon=":material/arrow_back:")
        top, btn = st.columns([3, 1], vertical_alignment="center")
        top.title("Retrieval report")
        with btn:
            report_ui.download_button(ctx, key="report_download_presenter", type="primary")
        st.markdown(f"**{views.esc(ctx.corpus.label or ctx.settings.corpus)}** · system "
                    f"**{views.esc(ctx.settings.system_name)}** · cutoff **K = {content.k}**")
        st.caption(f"{content.n_queries} questions · {content.n_in_scope} in scope · {content.n_out_of_scope} out of "
                   f"scope · generated {content.generated_at}")
        comparable = views.verdict_banner(res, ctx.settings.system_name)
        views.conventions_caption()

        # ---- the story: verdict, baseline, three questions -------------------------------------------------
        story = content.story
        st.header("The verdict", divider="gray")
        all_met = all(t.met for t in story.targets)
        if not comparable:  # the banner above says why and the fix; no target, no card, no number as a result
            st.error("No verdict: the banner above says why and the fix. No target or number is shown as a result.",
                     icon=":material/block:")
            st.stop()
        else:
            (st.success if all_met else st.warning)(views.esc(story.verdict),
                                                    icon=":material/check_circle:" if all_met else ":material/flag:")
        tcols = st.columns(len(story.targets))
        for col, t in zip(tcols, story.targets):
            with col, st.container(border=True):
                state_word = "met" if t.met else ("missed" if t.reachable else "missed, out of reach with these labels")
                name = readouts.target_label(t.metric, t.k)
                st.markdown(f"**{name} = {views.fmt(t.value)}** · target > {t.target:g} · "
                            f"{state_word}  \nbest possible with these labels: **{views.fmt(t.best)}**")
        st.caption("Targets from the lesson. “Best possible” ranks every relevant chunk first: precision@K cannot "
                   "exceed the share of a question's top K that its labels can fill.")
        if story.baseline:
            a, b = story.baseline_names
            st.header(f"{views.esc(a)} against {views.esc(b)}", divider="gray")
            st.caption("In plain words, from the one decision rule (the Compare page's table gives the test, the "
                       "adjusted p-values and the rule).")
            for v in story.baseline:
                st.info(views.esc(v), icon=":material/balance:")
            if story.baseline_more:
                with st.expander("The other metrics", icon=":material/more_horiz:"):
                    for v in story.baseline_more:
                        st.info(views.esc(v), icon=":material/balance:")
        else:
            st.caption("No baseline to compare with: the bundled BM25 retriever is the system shown. Compare it with "
                       "another configuration on the Compare page; its verdicts then appear here.")
        if story.examples:
            st.header("Three questions", divider="gray")
            ecols = st.columns(len(story.examples), gap="medium")
            for col, ex in zip(ecols, story.examples):
                with col, st.container(border=True):
                    st.markdown(f"{KIND_ICONS.get(ex.kind, '')} **{ex.kind.capitalize()}**")
                    st.markdown(f"#### {views.esc(ex.question)}")
                    st.caption(views.esc(ex.sentence))
                    for c in ex.chunks:
                        where = f"#{c.rank}" if c.rank else "expected (not retrieved)"
                        mark = ":green[relevant]" if c.relevant else ":gray[not relevant]"
                        st.markdown(f"{where} · {mark}  \n{views.highlight_md(c.segments)}")

        # ---- headline -------------------------------------------------------------------------------------
        rows = content.headline.to_dict("records")
        per_row = 3 if len(rows) > 4 else max(len(rows), 1)
        cols = [c for _ in range(0, len(rows), per_row) for c in st.columns(per_row)]
        for col, r in zip(cols, rows):
            kk = None if pd.isna(r["k"]) else int(r["k"])
            col.metric(f"{views.label(r['metric'])}" + (f"@{kk}" if kk is not None else ""), views.fmt(r["mean"]),
                       border=True)
            col.caption(f"{CI_CONFIDENCE:.0%} CI {views.ci_text(r['ci_low'], r['ci_high'], r.get('n'))}")
        n_inc = int(content.headline["n"].iloc[0]) if len(content.headline) else 0
        notes = " ".join(content.notes)
        st.caption(f"Means over {n_inc} questions; {CI_CONFIDENCE:.0%} percentile-bootstrap confidence intervals "
                   f"({CI_RESAMPLES:,} resamples, seed {CI_SEED}: the Dashboard's, the report's and the CLI's). "
                   f"{notes}")

        answer_views.presenter_section(content)  # answer quality in plain words (when answers exist)

        # ---- charts -----------------------------------------------------------------------------------------
        st.header("Every metric against K", divider="gray")
        views.chart(cache_insights.chart_spec(content.curve_chart, ("curve", rkey)))
        st.header("Per category", divider="gray")
        views.chart(cache_insights.chart_spec(content.category_chart, ("category", rkey)))

        # ---- best and worst ---------------------------------------------------------------------------------
        def examples(title: str, exs) -> None:
            st.subheader(title)
            if not exs:
                st.caption("No in-scope question.")
            for ex in exs:
                with st.container(border=True):
                    st.markdown(f"#### {views.esc(ex.question)}")
                    hit = ex.first_relevant_rank
                    where = (f"first relevant at rank {hit}" if 0 < hit <= content.k else
                             f"first relevant at rank {hit}, beyond the top {content.k}" if hit > 0 else
                             "no relevant chunk retrieved")
                    st.caption(f"{views.esc(ex.query_id)} · {views.esc(ex.category)} · "
                               f"{views.label(ex.metric.split('@')[0])}"
                               f"@{content.k} = {views.fmt(ex.value)} · {where}")
                    for p in ex.passages[:3]:
                        mark = f":green[**relevant** (grade {p.grade})]" if p.relevant else ":gray[not relevant]"
                        text = " ".join(p.text.split())
                        text = text[:200] + ("…" if len(text) > 200 else "")
                        st.markdown(f"**#{p.rank}** · {views.esc(p.chunk_id)} · {mark}  \n{views.esc(text)}")
                    if len(ex.passages) > 3:
                        st.caption(f"+ {len(ex.passages) - 3} more retrieved passage(s) in the top {content.k}.")

        st.header(f"Best and worst questions by {views.label(content.ranking_metric.split('@')[0])}@{content.k}",
                  divider="gray")
        with st.expander("Show them with their retrieved passages", icon=":material/list:"):
            left, right = st.columns(2, gap="large")
            with left:
                examples("Best", content.best)
            with right:
                examples("Worst", content.worst)

        # ---- RAGAS and configuration -----------------------------------------------------------------------
        if content.context_metrics is not None and len(content.context_metrics):
            st.header("RAGAS context metrics (from the labels, no LLM)", divider="gray")
            cm = content.context_metrics
            st.dataframe(cm[["label", "mean", "ci_low", "ci_high", "ragas_evaluate_mean", "ours", "ours_mean",
                             "n_equal"]],
                         hide_index=True, width="stretch",
                         column_config={"label": "RAGAS metric",
                                        "mean": st.column_config.NumberColumn("Mean (in scope)", format="%.3f"),
                                        "ragas_evaluate_mean": st.column_config.NumberColumn(
                                            "ragas.evaluate", format="%.3f",  # short: the table fits 1024 px
                                            help="ragas.evaluate (every row): what ragas.evaluate reports on the "
                                                 "export: every question, out-of-scope ones included (ID precision "
                                                 "scores them 0)."),
                                        "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
                                        "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
                                        "ours": "Our metric",
                                        "ours_mean": st.column_config.NumberColumn("Our mean", format="%.3f"),
                                        "n_equal": st.column_config.NumberColumn(
                                            "Equal", help="Queries where equal: how many questions get the same "
                                                          "value from our metric and from RAGAS.")})
            st.caption("Faithfulness and answer relevancy judge the answers: see the Answers page.")

        st.header("Configuration", divider="gray")
        cfg = pd.DataFrame({"setting": list(content.config), "value": [str(v) for v in content.config.values()]})
        st.dataframe(cfg, hide_index=True, width="stretch", height="content",  # every row, no inner scroll box
                     column_config={"setting": st.column_config.TextColumn("Setting", width="medium"),
                                    "value": st.column_config.TextColumn("Value", width="large")})
