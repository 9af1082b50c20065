"""Compare A vs B: two retrieval configurations on the same golden set, with paired statistics.

``pages/compare.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import streamlit as st

from rag_metrics.compare import ab
from rag_metrics.compare.paired import DECISION_RULE, comparison_summary, disagreements, interval_note, per_query_deltas
from rag_metrics.errors import InputError
from rag_metrics.evaluation import CI_CONFIDENCE
from rag_metrics.io.trec import qrels_to_text, run_to_text
from ui import answer_views, cache_insights, report_ui, state, views
from ui import compare_views as cv
from ui.keys import CMP_DISAGREE, CMP_LEVEL, CMP_METRIC, DRILL


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    ctx = state.current_or_stop()
    k = ctx.k
    st.title("Compare A vs B")
    views.conventions_caption()
    corpus_label = views.esc(ctx.corpus.label or ctx.settings.corpus)
    st.caption(f"Two retrieval configurations on the same golden set ({corpus_label}, "
               f"{ctx.result.n_in_scope} in-scope questions). K = {k} and the evaluation conventions come from the "
               "sidebar. Configuration A starts as the sidebar's; each configuration is computed once and cached.")

    # ---- the two configurations -------------------------------------------------------------------------
    dflt = cv.defaults(ctx)
    cols = st.columns(2, gap="large")
    configs: dict[str, ab.Config | None] = {}
    for col, side in zip(cols, ("A", "B")):
        with col, st.container(border=True):
            st.markdown(f"**Configuration {side}**")
            configs[side] = cv.config_widgets(side, dflt[side])
    if configs["A"] is None or configs["B"] is None:
        st.stop()
    cfg_a, cfg_b = configs["A"], configs["B"]
    assert cfg_a is not None and cfg_b is not None

    level = ab.comparison_level(cfg_a, cfg_b, ctx.corpus.level)  # type: ignore[arg-type]
    if ctx.corpus.level == "chunk" and cfg_a.chunking != cfg_b.chunking:
        choice = st.radio(
            "A and B chunk the corpus differently. Judge them at", ["document", "chunk"], key=CMP_LEVEL,
            horizontal=True,
            format_func={"document": "document level (recommended)",
                         "chunk": "chunk level, labels carried to each chunking"}.get,
            help="Chunk labels name the chunks of one chunking.")
        level = ab.comparison_level(cfg_a, cfg_b, ctx.corpus.level, prefer=choice)  # type: ignore[arg-type]
        if level == "document":
            st.info("**Evaluated at document level.** A and B chunk the corpus differently, so their chunk ids differ. "
                    "Each ranking is collapsed to documents (a document takes the rank of its first chunk) and the "
                    "chunk labels collapse to their documents (highest grade), so both are judged against the same "
                    "labels.", icon=":material/info:")
        else:
            st.info("**Evaluated at chunk level with carried labels.** Each configuration's labels are carried from "
                    "the "
                    f"labelled chunking ({ctx.settings.chunk_size}/{ctx.settings.chunk_overlap}) to its own chunks "
                    "through document and character span. |R| can differ between A and B when a label splits across "
                    "chunks: read the numbers with that in mind.", icon=":material/info:")
    else:
        st.caption(f"Both use the same chunking: evaluated at **{level} level** against the same labels.")

    if cv.cancelled():
        st.info("Computation cancelled. The chunk texts embedded so far are kept in the embedding cache: changing "
                "anything on this page starts it again from where it stopped.", icon=":material/cancel:")
        st.stop()
    working, cancel = st.empty(), cv.CancelButton(st.empty())  # what is computed, how far; Cancel
    try:
        ea = cv.evaluate_config(ctx, cfg_a, level, cv.progress_step(working, "Configuration A", cancel))
        eb = cv.evaluate_config(ctx, cfg_b, level, cv.progress_step(working, "Configuration B", cancel))
        working.empty()
        cancel.clear()
        for side, e in (("A", ea), ("B", eb)):  # at the top of the comparison: a side judged on contexts found nowhere
            views.verdict_banner(e.result, f"Configuration {side} ({e.config.describe()})")
    except InputError as err:
        working.empty()
        cancel.clear()
        views.input_error(err, "Cannot evaluate this configuration")
        st.stop()
    for e, side in ((ea, "A"), (eb, "B")):
        rep = e.label_report
        if rep is not None:
            lost = sum(1 for c in rep.changes if c.status == "lost")
            if lost or rep.emptied:
                st.warning(f"Configuration {side}: {lost} label(s) could not be carried to its chunks; "
                           f"{len(rep.emptied)} question(s) lost every relevant chunk.", icon=":material/warning:")

    a, b = ea.result, eb.result
    st.caption(f"**A** = {views.esc(cfg_a.describe())}  ·  **B** = {views.esc(cfg_b.describe())}  ·  "
               f"{a.n_queries} questions in the means.")
    if any(r.no_verdict is not None and r.no_verdict.kind != "unlocated" for r in (a, b)):  # nothing to compare
        st.markdown("**No verdict:** one side's results are no verdict (see the banner above): no comparison is shown "
                    "or sent to the report.")
        st.stop()

    if a.n_queries == 0:
        st.warning("No question enters the means: label relevant chunks on the Golden set editor page.",
                   icon=":material/info:")
        st.stop()

    # ---- per metric -------------------------------------------------------------------------------------
    metrics = ctx.settings.metrics
    keys = tuple(ab.comparison_keys(metrics, k))
    table = cache_insights.comparison(a, b, ea.key, eb.key, keys)
    # the stakeholder report and the Presenter view show these verdicts (while the golden set is unchanged)
    report_ui.publish_comparison(table, cv.report_names(cfg_a, cfg_b), ctx.golden_session.fingerprint)
    views.section(f"Per metric at K = {k}", "Delta = B − A over the same questions (paired).")
    if a.comparable and b.comparable:
        st.markdown(f"**{views.esc(comparison_summary(table))}**")
    else:  # no winner is named from numbers computed mostly from contexts found nowhere
        st.markdown("**Not comparable:** one side's contexts could not be located in the corpus (see the banner "
                    "above); "
                    "the table below is no verdict.")
    st.dataframe(cv.verdict_rows(table), hide_index=True, width="stretch", column_config=cv.verdict_columns())
    st.caption(interval_note(table))
    with st.container(border=True):
        st.markdown("**How the verdict is decided**")
        st.caption(DECISION_RULE + f" Here: n = {int(table['n'].iloc[0])} paired questions.")
    with st.expander("Each verdict in a sentence (the same numbers)", icon=":material/notes:"):
        st.markdown("\n".join(f"- {views.esc(t)}" for t in table["sentence"]))
    st.caption("The same numbers as `rag-metrics compare` on these two runs.")

    # ---- per query ---------------------------------------------------------------------------------------
    views.section("Per question: who wins?", "B − A for every question, sorted; green = B better, red = A better.")
    left, right = st.columns([1, 3], gap="large")
    with left:
        state.keep_choice(CMP_METRIC, list(metrics), ctx.settings.ndcg_metric)
        metric = st.selectbox("Metric", list(metrics), key=CMP_METRIC, format_func=lambda m: f"{views.label(m)}@{k}")
        deltas = per_query_deltas(a, b, f"{metric}@{k}")
        counts = ab.outcome_counts(deltas)
        st.metric("B better", counts["B better"], border=True)
        st.metric("A better", counts["A better"], border=True)
        st.metric("Tie", counts["tie"], border=True)
    with right:
        views.chart(cv.per_query_chart(deltas, f"{views.label(metric)}@{k}"))

    views.section(f"Per category: {views.label(metric)}@{k}", "So a gain in one kind of question cannot hide a loss in "
                  f"another. Bars: mean B − A; black lines: {CI_CONFIDENCE:.0%} paired t-interval of each category "
                  "(descriptive: not corrected across categories).")
    cat = cache_insights.ab_category_table(a, b, ea.key, eb.key, metric, k)
    views.chart(cv.category_chart(cat, f"{views.label(metric)}@{k}"))
    st.dataframe(  # below the chart, at the page's width: the interval column is never cut
        {"Category": cat["category"], "n": cat["n"], "A": [views.fmt(v) for v in cat["mean_a"]],
         "B": [views.fmt(v) for v in cat["mean_b"]], "B − A": [f"{v:+.3f}" for v in cat["delta"]],
         f"{CI_CONFIDENCE:.0%} CI": [views.ci_text(lo, hi, n, signed=True)
                                     for lo, hi, n in zip(cat["ci_low"], cat["ci_high"], cat["n"])],
         "W / L / T": [f"{w} / {lo} / {t}" for w, lo, t in zip(cat["wins"], cat["losses"], cat["ties"])]},
        hide_index=True, width="stretch",
        column_config={"W / L / T": st.column_config.TextColumn(help="B wins / loses / ties in the category.")})

    # ---- metrics disagree ----------------------------------------------------------------------------------
    views.section(f"When the metrics disagree (K = {k})",
                  "Newly hit: A missed, B hits. Newly missed: A hit, B misses. Ranking moved: both hit (or both miss) "
                  "so hit rate did not change, but NDCG did: a relevant chunk moved up or down within the list.")
    dis = disagreements(a, b, k)
    if dis.empty:
        st.success("A and B tell the same story on every question: no hit changed and no NDCG moved.",
                   icon=":material/check_circle:")
    else:
        kinds = dis["kind"].value_counts().to_dict()
        st.caption(" · ".join(f"{kinds.get(x, 0)} {x}" for x in ("newly hit", "newly missed", "ranking moved")))
        # the numbers first, the question last: at 1024-1280 px the whole row of numbers is in view
        view = dis[["query_id", "kind", "category", f"hit@{k} A", f"hit@{k} B", f"ndcg@{k} A", f"ndcg@{k} B",
                    "first relevant rank A", "first relevant rank B", "question"]]
        st.dataframe(view, hide_index=True, width="stretch", height=min(38 + 35 * len(view), 400),
                     column_config={"query_id": st.column_config.TextColumn(pinned=True),
                                    f"ndcg@{k} A": st.column_config.NumberColumn(format="%.3f"),
                                    f"ndcg@{k} B": st.column_config.NumberColumn(format="%.3f"),
                                    "first relevant rank A": st.column_config.NumberColumn(
                                        "rank A", help="Rank of the first relevant chunk in A's list."),
                                    "first relevant rank B": st.column_config.NumberColumn(
                                        "rank B", help="Rank of the first relevant chunk in B's list."),
                                    "question": st.column_config.TextColumn(width="large")})
        questions = dict(zip(dis["query_id"], dis["question"]))
        state.keep_choice(CMP_DISAGREE, list(questions), next(iter(questions)))
        pick = st.selectbox("Open a question in the drill-down", list(questions), key=CMP_DISAGREE,
                            format_func=lambda q: f"{q} · {questions[q]}")
        # below the select box at its own width: beside it, a fifth of the row cut the label short
        if st.button("Open in drill-down", key="cmp_open_drill", icon=":material/zoom_in:", width="content"):
            state.set_value(DRILL, pick)
            st.switch_page("pages/failures.py")
        st.caption(f"The drill-down shows the sidebar's configuration ({ctx.settings.system_name}, chunks "
                   f"{ctx.settings.chunk_size}/{ctx.settings.chunk_overlap}), which is A unless you changed A.")

    # ---- reproduce ---------------------------------------------------------------------------------------
    with st.expander("Reproduce with the command line", icon=":material/terminal:"):
        st.caption("Download both runs and the labels, then run the command: it prints the numbers of the table above."
                   + (" (Document level: add --level document.)" if level == "document" else ""))
        d1, d2, d3 = st.columns(3)
        d1.download_button("Run A (TREC)", run_to_text(a.run, "A"), "run_a.trec", key="cmp_dl_a")
        d2.download_button("Run B (TREC)", run_to_text(b.run, "B"), "run_b.trec", key="cmp_dl_b")
        d3.download_button("Labels (qrels)", qrels_to_text(a.golden), "golden.qrels", key="cmp_dl_qrels")
        opts = ctx.settings.options
        flags = [f"--metrics {','.join(metrics)}", f"--k {k}"]
        if opts.relevance_level != 1:
            flags.append(f"--relevance-level {opts.relevance_level}")
        if opts.out_of_scope != "exclude":
            flags.append("--out-of-scope miss")
        if opts.recall_denominator != "all":
            flags.append("--recall-denominator cap")
        if opts.missing_queries != "zero":
            flags.append("--missing skip")
        if level == "document":
            flags.append("--level document")
        st.code("rag-metrics compare --qrels golden.qrels --run run_a.trec --run run_b.trec " + " ".join(flags),
                language="bash", wrap_lines=True)  # the whole command on screen, never behind a scroll

    # ---- answer systems (when answers exist for the golden set) -------------------------------------------
    answer_views.compare_section(ctx)
