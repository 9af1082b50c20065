"""Golden-set health: every check of rag_metrics.insights.health, with one-click labelling of the chunks most
worth judging, duplicate and too-easy thresholds, and how many queries each category needs.

``pages/health.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import streamlit as st

from rag_metrics.authoring.label_suggest import questions_to_propose
from rag_metrics.errors import InputError
from ui import cache_insights, encoding, state, views
from ui.keys import HEALTH_EASY as KEY_EASY
from ui.keys import HEALTH_GRADE as KEY_GRADE
from ui.keys import HEALTH_METRIC as KEY_METRIC
from ui.keys import HEALTH_MIN_Q as KEY_MIN_Q
from ui.keys import HEALTH_NEAR as KEY_NEAR
from ui.keys import HEALTH_NEAR_MODEL as KEY_NEAR_MODEL
from ui.keys import HEALTH_SHOW as KEY_SHOW
from ui.keys import HEALTH_TARGET as KEY_TARGET


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    ctx = state.current_or_stop()
    k = ctx.k
    res = ctx.result
    golden = ctx.golden
    gfp = ctx.golden_session.fingerprint
    unit = ctx.unit
    views.page_header("Golden-set health", ctx)
    views.show_notice()

    texts = ctx.id_text
    level = ctx.settings.options.relevance_level
    near_default = encoding.thresholds(ctx.corpus.model).near_duplicate  # the corpus model's own cut-off
    if state.value(KEY_NEAR_MODEL) != ctx.corpus.model:  # another model's cosines: start again from its default
        state.set_value(KEY_NEAR_MODEL, ctx.corpus.model)
        state.pop(KEY_NEAR)
    near_threshold = float(state.default(KEY_NEAR, near_default))
    easy_threshold = float(state.default(KEY_EASY, 0.8))
    min_queries = int(state.default(KEY_MIN_Q, 2))
    state.default(KEY_TARGET, 0.05)

    try:
        unknown = cache_insights.health_unknown(golden, ctx.known_ids, gfp, ctx.ids_key)
        exact = cache_insights.health_exact_duplicates(ctx.chunks, ctx.chunks.fingerprint)
        unlabelled = cache_insights.health_unlabelled(golden, gfp)
        candidates = cache_insights.health_candidates(res, texts, ctx.key, k, min_queries)
        easy_all = cache_insights.health_too_easy(golden, texts, gfp, ctx.ids_key, easy_threshold, level)
    except InputError as err:
        views.input_error(err, "Cannot run the health checks")
        st.stop()
    near, near_error = None, None
    try:  # needs the chunk embeddings (embedding cache; the model only for chunks never embedded)
        with st.spinner("Embedding the chunks for the near-duplicate check (once per chunking)…"):
            near = cache_insights.health_near_duplicates(ctx.chunks, ctx.chunks.fingerprint, near_threshold,
                                                        ctx.corpus.model)
    except InputError as err:
        near_error = str(err)
    n_groups = cache_insights.health_duplicate_groups(ctx.chunks, ctx.chunks.fingerprint)
    n_easy = cache_insights.health_too_easy_count(golden, texts, gfp, ctx.ids_key, easy_threshold, level)

    # ---- overview ------------------------------------------------------------------------------------------
    cards = [
        ("Unknown ids", len(unknown), "Labelled ids that are not in the corpus: they can never be retrieved."),
        ("Duplicates", n_groups,
         "Groups of chunks with identical text (ignoring case and whitespace)."),
        ("Near duplicates", "—" if near is None else len(near),
         f"Chunk pairs with embedding cosine ≥ {near_threshold:.3g} ({encoding.label(ctx.corpus.model)})."),
        ("Unlabelled", len(unlabelled), "No relevant id and not marked out_of_scope."),
        ("To judge", len(candidates), f"Retrieved in the top {k} of ≥ {min_queries} questions, labelled for none."),
        ("Too easy", n_easy, f"Word overlap with the relevant {unit} ≥ {easy_threshold:.2f}."),
    ]
    cols = st.container(key="cards_health").columns(len(cards))  # wraps when narrow (ui.shell's CSS)
    for col, (name, n, help_) in zip(cols, cards):
        col.metric(name, n, help=help_, border=True)

    # ---- candidates to judge ---------------------------------------------------------------------------------
    views.section("Candidates to judge",
                  f"{unit.capitalize()}s that the retriever puts in the top {k} for several questions but that no "
                  "question labels (with any grade). A relevant one is a missing label that lowers every metric "
                  "unfairly; an irrelevant one is a hub crowding out the answers. One click labels it for that "
                  "question, through the golden set editor's path: the set is autosaved and every metric updates.")
    c1, c2, c3 = st.columns([2, 2, 2])
    c1.slider("Retrieved for at least … questions", 1, 10, key=KEY_MIN_Q)
    c2.radio("Grade given by “Relevant”", [1, 2, 3], index=0, key=KEY_GRADE, horizontal=True,
             help="3 = answers fully, 2 = mostly, 1 = partly (the editor's scale).")
    n_show = c3.number_input("Candidates shown", 1, 50, 3, key=KEY_SHOW)
    grade = int(state.value(KEY_GRADE, 1))
    if candidates.empty:
        st.success(f"No {unit} is retrieved in the top {k} of {min_queries} or more questions without a label.",
                   icon=":material/check_circle:")
    else:
        shown = candidates.head(int(n_show))
        for cand in shown.to_dict("records"):
            cid = cand["id"]
            with st.container(border=True):
                st.markdown(f"**{views.esc(cid)}** · in the top {k} of {cand['n_queries']} questions "
                            f"({cand['share']:.0%} of the set) · best rank {cand['best_rank']}")
                views.plain_text(texts.get(cid, "(text not available)"), height=110)
                for qid, question, rank in zip(cand["query_ids"], cand["questions"], cand["ranks"]):
                    a, b, c, d = st.columns([5, 1, 2, 2.4], vertical_alignment="center")  # buttons never clipped
                    a.markdown(f"{views.esc(qid)} · {views.esc(question)}")
                    b.caption(f"rank {rank}")
                    c.button("Relevant", key=f"judge_rel_{cid}_{qid}", icon=":material/check:", width="stretch",
                             on_click=state.golden_judge, args=(qid, cid, grade))
                    d.button("Not relevant", key=f"judge_not_{cid}_{qid}", icon=":material/close:", width="stretch",
                             on_click=state.golden_judge, args=(qid, cid, 0))
        if len(shown) < len(candidates):
            st.caption(f"{len(candidates) - len(shown)} more candidate(s); raise “Candidates shown” to see them.")

    # ---- labels that cannot work ---------------------------------------------------------------------------
    left, right = st.columns(2, gap="large")
    with left:
        views.section(f"Unknown ids ({len(unknown)})", "Labels naming an id that is not in the corpus (e.g. after "
                      "re-chunking); the suggestion is the most similar known id.")
        if unknown.empty:
            st.success("Every label names a real id.", icon=":material/check_circle:")
        else:
            st.dataframe(unknown, hide_index=True, width="stretch")
    with right:
        views.section(f"Questions with no label ({len(unlabelled)})",
                      "Not marked out_of_scope, so they are silently left out of the means.")
        if unlabelled.empty:
            st.success("Every in-scope question has a label.", icon=":material/check_circle:")
        else:
            st.dataframe(unlabelled, hide_index=True, width="stretch")
        with_reference = questions_to_propose(golden)
        if with_reference:
            st.info(f"{len(with_reference)} question(s) have a reference answer and no chunk label: the labelling "
                    f"helper "
                    "(Golden set editor, Label with retrieval) proposes the chunks that support each reference answer; "
                    "they become labels only when you accept and save them.", icon=":material/lightbulb:")

    # ---- duplicates ------------------------------------------------------------------------------------------
    views.section("Duplicate and near-duplicate chunks",
                  "A label on one copy makes retrieving the other copy count as a miss: label copies together, "
                  "or remove one.")
    left, right = st.columns([1, 2], gap="large")
    with left:
        st.markdown(f"**Identical text** · {n_groups} group(s)")
        if exact.empty:
            st.caption("No two chunks have the same text (ignoring case and whitespace).")
        else:
            st.dataframe(exact, hide_index=True, width="stretch",
                         column_config={"preview": st.column_config.TextColumn("Preview", width="large")})
    with right:
        st.slider("Near-duplicate threshold (embedding cosine)", 0.70, 1.00, step=0.005, key=KEY_NEAR,
                  help="Pairs of chunks at least this similar are listed. Embeddings come from the embedding cache.")
        st.caption(f"Embeddings: {views.esc(encoding.label(ctx.corpus.model))}, the corpus's model. "
                   f"Its calibrated default threshold: {near_default:g}.")
        if near is None:
            st.warning(f"Near duplicates need the chunk embeddings, which are not available: {near_error}",
                       icon=":material/warning:")
        elif near.empty:
            st.markdown(f"**Near duplicates** · 0 pairs with cosine ≥ {near_threshold:.3g}")
            st.caption("No pair at this threshold; lower it to see the closest pairs.")
        else:
            st.markdown(f"**Near duplicates** · {len(near)} pair(s) with cosine ≥ {near_threshold:.3g}")
            st.dataframe(near, hide_index=True, width="stretch", height=min(38 + 35 * len(near), 320),
                         column_config={"cosine": st.column_config.NumberColumn("Cosine", format="%.3f")})

    # ---- too easy --------------------------------------------------------------------------------------------
    views.section("Too easy",
                  f"Share of a question's content words found in its best relevant {unit}. A question copied from "
                  "its passage is found by any keyword search and says little about the retriever; real users "
                  "paraphrase.")
    st.slider("Flag questions whose word overlap is at least", 0.30, 1.00, step=0.05, key=KEY_EASY)
    if easy_all.empty:
        st.caption("No in-scope question to check.")
    else:
        st.caption(f"{n_easy} of {len(easy_all)} in-scope questions at or above {easy_threshold:.2f} "
                   "(all shown, flagged first).")
        st.dataframe(easy_all, hide_index=True, width="stretch", height=300,
                     column_order=["query_id", "question", "overlap", "too_easy", "chunk_id", "shared_words",
                                   "missing_words", "n_words", "category"],
                     column_config={"query_id": st.column_config.TextColumn("Query", width="small"),
                                    "question": st.column_config.TextColumn("Question", width="large"),
                                    "overlap": st.column_config.ProgressColumn("Overlap", min_value=0.0, max_value=1.0,
                                                                               format="%.2f", width="small"),
                                    "too_easy": st.column_config.CheckboxColumn("Too easy", width="small"),
                                    "chunk_id": st.column_config.TextColumn(f"Best relevant {unit}"),
                                    "shared_words": st.column_config.ListColumn("Shared words"),
                                    "missing_words": st.column_config.ListColumn("Words not in the passage"),
                                    "n_words": st.column_config.NumberColumn("Content words", width=110),
                                    "category": st.column_config.TextColumn("Category", width="small")})

    # ---- how many queries ---------------------------------------------------------------------------------
    views.section("How many queries does the set need?",
                  "The 95% CI half-width of a metric's mean shrinks like 1/√n. For each category: today's width, "
                  "and the number of queries needed for the target width.")
    if res.n_queries == 0:
        st.info("No query enters the means yet.")
        st.stop()
    c1, c2 = st.columns([1, 1])
    metric = c1.selectbox("Metric", ctx.settings.metrics, format_func=views.label, key=KEY_METRIC,
                          index=list(ctx.settings.metrics).index(ctx.settings.ndcg_metric))
    target = c2.slider("Target half-width (±)", 0.01, 0.20, step=0.01, key=KEY_TARGET)
    try:
        ci = cache_insights.health_ci_width(res, ctx.key, metric, k, float(target))
        all_row = cache_insights.health_ci_overall(res, ctx.key, metric, k, float(target))
        spec = cache_insights.health_ci_curve_spec(res, ctx.key, metric, k, float(target))
    except InputError as err:
        views.input_error(err)
        st.stop()
    if all_row is not None:
        r = all_row
        m1, m2, m3 = st.container(key="cards_health_ci").columns(3)
        m1.metric(f"{views.label(metric)}@{k} today", f"± {views.fmt(r['half_width'])}", border=True,
                  help=f"Half-width of the 95% bootstrap CI over all {int(r['n'])} queries in the mean.")
        m2.metric(f"Queries needed for ± {target:.2f}", int(r["n_needed"]), border=True,
                  help="n_needed = ceil(n × (half-width / target)²).")
        m3.metric("More queries to add", int(r["more_needed"]), border=True)
    left, right = st.columns([1, 1], gap="large")
    with left:
        views.chart(spec)
    with right:
        show = ci[["category", "n", "mean", "half_width", "n_needed", "more_needed", "no_spread"]]
        st.dataframe(show, hide_index=True, width="stretch",
                     column_config={"mean": st.column_config.NumberColumn("Mean", format="%.3f"),
                                    "half_width": st.column_config.NumberColumn("± today", format="%.3f"),
                                    "n_needed": st.column_config.NumberColumn("n needed"),
                                    "more_needed": st.column_config.NumberColumn("to add"),
                                    "no_spread": st.column_config.CheckboxColumn(
                                        "No spread", help="All values equal so far: a Bernoulli stand-in is used.")})
        st.caption("Per category, the target applies to that category's mean alone; the (all) row is the overall mean.")
