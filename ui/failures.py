"""Failures at K, first-relevant-rank histogram, and a per-query drill-down with each metric's arithmetic.

``pages/failures.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.insights import readouts
from ui import cache_insights, state, views
from ui import systems as systems_ui
from ui.keys import DRILL
from ui.keys import FAIL_INSPECT as INSPECT


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    SHOW_RETRIEVED = 5

    ctx = state.current_or_stop()
    k = ctx.k
    res = ctx.result
    texts = ctx.context_text  # chunk texts, and the logged text of contexts that are not chunks (never an empty box)
    views.page_header("Failures and drill-down", ctx)
    if res.no_verdict is not None and res.no_verdict.kind != "unlocated":  # the banner above says why and the fix
        st.stop()  # no failure list computed from nothing (unlocated contexts still show in place, with their text)


    def _drill(qid: str) -> None:
        state.set_value(DRILL, qid)


    unit = ctx.unit  # labels name documents (BEIR) or chunks
    fails = readouts.failures_with_text(res, k, texts)
    hist = readouts.first_rank_histogram(res)

    # ---- failures ---------------------------------------------------------------------------------------
    left, right = st.columns([3, 2], gap="large")
    with left:
        views.section(f"Failures at K = {k}",
                      f"In-scope questions with no relevant {unit} in the top K: what was expected, what came back, "
                      f"and at which K the first relevant {unit} would have counted.")
        n_in = res.n_answered if res.n_absent else res.n_in_scope  # questions not in the log are not misses
        c1, c2 = st.columns(2)
        c1.metric(f"Missed at K = {k}", f"{len(fails)} / {n_in}", border=True,
                  help=f"In-scope queries whose top K holds no relevant {unit} (hit rate = 0)"
                       + (", of those the system answered (the others are not in its log, listed below)."
                          if res.n_absent else "."))
        beyond = cache_insights.failures_found_lower(res, ctx.key, k)
        c2.metric(f"Found lower in the top {ctx.memo.depth}", f"{beyond} / {len(fails)}", border=True,
                  help=f"Failures whose first relevant {unit} was retrieved below K: a larger K or a reranker would "
                       f"fix "
                       "them.")
    with right:
        views.section("First relevant rank", f"Where the first relevant {unit} lands, per in-scope query.")
        if hist.empty:
            st.info("No in-scope query.")
        else:
            views.chart(views.rank_histogram(hist, k))

    absent = res.absent()
    if len(absent):
        views.section(f"Not in the log: {len(absent)} question(s)",
                      f"The system's results have no entry for these golden questions (a RAG log or run that covers "
                      f"part of the golden set). They are not retrieval failures and are not listed below: "
                      f"{views.answered_absent(res)}; the sidebar's conventions switch.")
        with st.expander(f"The {len(absent)} question(s) not in the log", icon=":material/help:"):
            st.dataframe(absent, hide_index=True, width="stretch")

    if len(fails) == 0:
        st.success(f"No failure at K = {k}: every in-scope question has a relevant {unit} in its top {k}.",
                   icon=":material/check_circle:")
    else:
        st.markdown(f"**The {len(fails)} failure(s) at K = {k}**")
        st.dataframe(
            readouts.failure_table(fails), hide_index=True, width="stretch",
            height=min(38 + 35 * len(fails), 458),  # up to 12 rows without an inner scroll
            column_config={"query_id": st.column_config.TextColumn("Query", width="small"),
                           # widths: the table fits a projector's 1024 px (columns grow on a wider screen)
                           "question": st.column_config.TextColumn("Question", width=300),
                           "category": st.column_config.TextColumn("Category", width="small"),
                           "top_score": st.column_config.NumberColumn("Top score", format="%.3f", width="small"),
                           "would_hit_at": st.column_config.NumberColumn(
                               "Would hit at K", width=110,
                               help=f"The rank of the first relevant {unit} below K (empty: none retrieved)")})


    @st.fragment
    def inspect_failure(records: dict[str, dict]) -> None:
        """Expected against retrieved for one failure (a fragment: picking another reruns only this)."""
        state.keep_choice(INSPECT, list(records), next(iter(records)))
        qid = st.selectbox("Inspect a failure", list(records), key=INSPECT,
                           format_func=lambda i: f"{i} · {records[i]['question']}")
        f = records[qid]
        st.caption(f"Category: {views.esc(f['category'] or '—')} · top score {views.fmt(f['top_score'])} · "
                   f"{readouts.failure_verdict(f['first_relevant_rank'], unit)}")
        a, b = st.columns(2, gap="medium")
        with a:
            st.markdown("**Expected (labelled relevant)**")
            for cid, text in zip(f["expected_ids"], f["expected_text"]):
                st.caption(views.esc(cid))
                views.plain_text(text, height=160)
        with b:
            shown = min(k, SHOW_RETRIEVED)
            st.markdown(f"**Retrieved (top {shown}{' of ' + str(k) if k > shown else ''})**")
            for r in res.ranking(qid).head(shown).to_dict("records"):
                st.caption(f"{r['rank']}. {views.esc(r['id'])} · score {views.fmt(r['score'])}")
                views.plain_text(texts.get(r["id"], ""), height=160)
        if st.button("Open in the drill-down", key="fail_drill", on_click=_drill, args=(qid,),
                     icon=":material/zoom_in:"):
            st.rerun()  # the drill-down below is outside this fragment


    if len(fails):
        inspect_failure({f["query_id"]: f for f in fails.to_dict("records")})

    # ---- drill-down -----------------------------------------------------------------------------------
    views.section("Per-query drill-down",
                  "The ranked list with relevance, and each metric's arithmetic at the current K.")
    qs = {q.id: q for q in ctx.golden}
    if not qs:
        st.info("The golden set is empty.")
        st.stop()
    state.keep_choice(DRILL, list(qs), fails["query_id"].iloc[0] if len(fails) else next(iter(qs)))
    qid = st.selectbox("Query", list(qs), key=DRILL, format_func=lambda i: f"{i} · {qs[i].question}")
    q = qs[qid]
    c1, c2 = st.columns([3, 2], gap="large")
    with c1:
        st.markdown("**Question**")
        views.plain_text(q.question)
        if q.expected_answer:
            st.markdown("**Expected answer**")
            views.plain_text(q.expected_answer)
    with c2:
        st.markdown("**Labels**")
        if q.relevant:
            st.dataframe({"id": list(q.relevant), "grade": list(q.relevant.values())}, hide_index=True, width="stretch",
                         column_config={"id": st.column_config.TextColumn(unit.capitalize(), width=160),  # 1024 px
                                        "grade": st.column_config.NumberColumn("Grade", width=60)})
        else:
            st.caption(f"No relevant {unit}: an out-of-scope question (measured by abstention on the Dashboard).")
    try:
        ranked = readouts.ranking_with_text(res, qid, k, texts, ctx.chunks.doc)
        expl = readouts.explanation_table(res.explain(qid, k), ctx.settings.metrics)
    except InputError as err:
        views.input_error(err)
        st.stop()
    ranked["relevance"] = [views.relevance_chip(int(g), bool(r)) for g, r in zip(ranked["grade"], ranked["relevant"])]
    st.markdown(f"**Top {k} retrieved**")
    st.dataframe(
        ranked[["rank", "relevance", "id", "score", "text"]], hide_index=True, width="stretch",
        height=min(38 + 35 * len(ranked), 420),
        column_config={"rank": st.column_config.NumberColumn("Rank", width=60),  # widths: fits 1024 px, grows wider
                       "relevance": st.column_config.TextColumn("Relevance", width=150),
                       "id": st.column_config.TextColumn("Chunk", width="medium"),
                       "score": st.column_config.NumberColumn("Score", format="%.3f", width=65),
                       "text": st.column_config.TextColumn("Text", width=160)})
    unmatched = systems_ui.unmatched_contexts(ctx, ranked["id"])
    if len(unmatched):
        st.markdown(f"**Contexts that match no chunk ({len(unmatched)} in the top {k})**")
        st.caption("The log's context text, the closest chunk of this corpus and its similarity (rapidfuzz ratio, "
                   "0-100). Below the match threshold, the context matches no chunk and keeps its rank; it is then "
                   "judged on evidence: located in the corpus, it is relevant when it holds a labelled passage "
                   "(docs/evidence.md); found nowhere, it counts as non-relevant and the banner above counts it.")
        st.dataframe(unmatched[["id", "context", "closest_chunk", "similarity", "closest_text"]], hide_index=True,
                     width="stretch",
                     column_config={"id": st.column_config.TextColumn("Context", width="small"),
                                    "context": st.column_config.TextColumn("Logged text", width="large"),
                                    "closest_chunk": st.column_config.TextColumn("Closest chunk", width="medium"),
                                    "similarity": st.column_config.NumberColumn("Similarity", format="%.1f"),
                                    "closest_text": st.column_config.TextColumn("Its text", width="large")})
    st.markdown(f"**The arithmetic at K = {k}**")
    expl["metric"] = [f"{views.label(m)}@{kk}" if kk else views.label(m) for m, kk in zip(expl["metric"], expl["k"])]
    expl["value"] = [views.fmt(v) for v in expl["value"]]
    views.wrapped_table(expl[["metric", "formula", "substituted", "value"]].rename(columns={
        "metric": "Metric", "formula": "Formula", "substituted": "With this query's numbers", "value": "Value"}))
