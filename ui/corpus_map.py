"""Corpus map: chunk embeddings in 2-D (PCA; UMAP when installed) with the golden questions placed in
the same plane; selecting a question draws lines to its relevant and retrieved chunks.

``pages/corpus_map.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.insights.projection import NOT_COVERED, available_methods
from ui import cache, cache_insights, encoding, paging, state, views
from ui.keys import MAP_CHART as KEY_CHART
from ui.keys import MAP_COLOR as KEY_COLOR
from ui.keys import MAP_METHOD as KEY_METHOD
from ui.keys import MAP_QUERY as KEY_QUERY
from ui.keys import MAP_UNCOVERED_PAGE


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    NONE = "__none__"
    COLORS = {"doc_id": "Document", "category": "Question category", "cluster": "Embedding cluster"}
    METHODS = {"pca": "PCA (scikit-learn)", "umap": "UMAP (umap-learn)"}


    def _on_chart_select() -> None:
        """A click on a question in the chart selects it in the question box."""
        event = state.value(KEY_CHART)
        try:
            picked = event["selection"]["query"]
        except (KeyError, TypeError):
            return
        if picked:
            qid = picked[0].get("query_id")
            if qid:
                state.set_value(KEY_QUERY, qid)
        else:  # double-click cleared the selection
            state.set_value(KEY_QUERY, NONE)


    ctx = state.current_or_stop()
    k = ctx.k
    golden = ctx.golden
    views.page_header("Corpus map", ctx)

    if ctx.corpus.level == "document":
        st.info("This corpus is labelled at document level; the map shows chunks, and a question's lines go to the "
                "chunks of its relevant documents only where chunk and document ids coincide.", icon=":material/info:")

    methods = available_methods()
    method = state.keep_choice(KEY_METHOD, methods, methods[0])
    qids = [q.id for q in golden]
    qtext = {q.id: q.question for q in golden}
    if state.value(KEY_QUERY) not in (NONE, *qids):
        # default: the worst in-scope question by NDCG@K (the most instructive picture)
        state.set_value(KEY_QUERY, cache.worst_query(ctx.result, ctx.key, ctx.settings.ndcg_metric, k) or NONE)

    c1, c2, c3 = st.columns([4, 2, 2])
    c1.selectbox("Question", [NONE, *qids], key=KEY_QUERY,
                 format_func=lambda q: "(none selected)" if q == NONE else f"{q} · "
                                                                           f"{views.one_line(qtext.get(q, ''), 30)}",
                 help="Or click a question (◆) in the map.")
    c2.radio("Colour chunks by", list(COLORS), key=KEY_COLOR, format_func=COLORS.get, horizontal=False)
    c3.radio("Projection", methods, key=KEY_METHOD, format_func=lambda m: METHODS.get(m, m),
             help="PCA: deterministic, distances along the two main axes are meaningful. UMAP (when umap-learn is "
                  "installed): keeps neighbourhoods, distorts global distances.")
    if "umap" not in methods:
        c3.caption("UMAP: `pip install umap-learn` to enable.")

    query = state.value(KEY_QUERY)
    query = None if query == NONE else query
    try:
        with st.spinner("Projecting the chunk embeddings (once per chunking and golden set)…"):
            cmap = cache_insights.corpus_map(ctx.chunks, golden, ctx.result, ctx.chunks.fingerprint, ctx.key, k, method,
                                             ctx.settings.options.relevance_level, ctx.corpus.model)
        spec = cache_insights.map_spec(cmap, ctx.key, k, method, query, state.value(KEY_COLOR, "doc_id"))
    except InputError as err:
        views.input_error(err, "Cannot draw the corpus map")
        st.stop()

    chunks_df = cmap.chunks
    n_unc = cache_insights.uncovered_count(cmap, ctx.key, k, method)
    m = st.columns(4)
    m[0].metric("Chunks", len(chunks_df), border=True)
    m[1].metric("Questions", len(cmap.queries), border=True)
    m[2].metric("Chunks no question labels", n_unc, border=True,
                help="Drawn as hollow squares. Questions about them would test retrieval where the set is blind.")
    if cmap.explained_variance is not None:
        a, b = cmap.explained_variance
        m[3].metric("Variance shown (PC 1 + 2)", f"{a + b:.0%}", border=True,
                    help="Share of the embedding variance the two PCA axes keep; the rest is flattened away.")
    else:
        m[3].metric("Projection", method.upper(), border=True)

    st.vega_lite_chart(spec=spec, width="stretch", key=KEY_CHART, on_select=_on_chart_select,
                       selection_mode=["query"])
    st.caption("◆ questions · ● chunks some question labels relevant · □ chunks no question covers. Lines from the "
               "selected question: green = relevant and retrieved in the top K, red dashed = relevant but missed, "
               "orange dotted = retrieved but not relevant. Drag to pan, scroll to zoom, double-click to clear. "
               f"Embeddings: {views.esc(encoding.label(ctx.corpus.model))} (chunks as passages, questions as queries).")

    # ---- the selected question's chunks -----------------------------------------------------------------------
    if query is not None:
        links = cmap.links[cmap.links["query_id"] == query]
        q = next(x for x in golden if x.id == query)
        views.section("Selected question", None)
        st.markdown(f"**{views.esc(q.id)}** · {views.esc(q.category or '(no category)')}")
        views.plain_text(q.question)
        if links.empty:
            st.info("No relevant chunk and nothing retrieved for this question.")
        else:
            kinds = links["kind"].value_counts().to_dict()
            st.caption(" · ".join(f"{n} {kind}" for kind, n in kinds.items()))
            labels = {q.id: q.relevant for q in ctx.golden}
            table = links[["chunk_id", "kind", "rank"]].rename(columns={"chunk_id": "chunk", "kind": "link"})
            table = table.assign(
                label=[f"grade {labels[q][c]}" if c in labels.get(q, {}) else "unlabelled"
                       for q, c in zip(links["query_id"], links["chunk_id"])],
                text=[ctx.chunks.text.get(c, "") for c in links["chunk_id"]]).sort_values("rank", na_position="last")
            table["rank"] = [f"{int(r)}" if pd.notna(r) else "not retrieved" for r in table["rank"]]
            st.dataframe(table, hide_index=True, width="stretch",
                         column_config={"rank": st.column_config.TextColumn(f"Rank (top {k})"),
                                        "text": st.column_config.TextColumn("Text", width=150)})  # fits 1024 px, grows

    with st.expander(f"Chunks no question labels ({n_unc})", icon=":material/crop_square:"):
        unc = chunks_df[~chunks_df["covered_by_any_question"]][["chunk_id", "doc_id", "preview"]]
        st.dataframe(paging.page(unc, MAP_UNCOVERED_PAGE, what="chunks"), hide_index=True, width="stretch",
                     column_config={"preview": st.column_config.TextColumn("Text", width="large")})
        st.caption(f"Category '{NOT_COVERED}' in the colour-by-category view.")
