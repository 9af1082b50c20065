"""RAGAS context metrics: RAGAS's ID-based (LLM-free) context precision and recall from the golden
labels, next to precision@K, recall@K and AP@K; the RAGAS-ready export; what needs a judge model.

``pages/ragas.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import math

import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.evaluation import CI_CONFIDENCE
from rag_metrics.insights.ragas import JUDGE_METRICS, JUDGE_METRICS_NOTE, RAGAS_VERSION_CHECKED, RELATION
from ui import cache_insights, state, views


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    RAGAS_IN_SCOPE = "in-scope mean"
    RAGAS_EVALUATE = "every-row mean (ragas.evaluate)"
    #: Short names of the RAGAS metrics inside their card (the card's title is the full name), so each
    #: card label stays unique on the page without repeating the title.
    SHORT = {"ragas_id_context_precision": "ID precision", "ragas_id_context_recall": "ID recall",
             "ragas_context_precision": "Context precision"}

    ctx = state.current_or_stop()
    k = ctx.k
    res = ctx.result
    views.page_header("RAGAS context metrics", ctx)

    if res.n_queries == 0:
        st.warning("No query enters the means yet: label at least one relevant chunk on the Golden set editor page.",
                   icon=":material/info:")
        st.stop()

    try:
        summary = cache_insights.context_summary(res, ctx.key, k)
        table = cache_insights.context_table(res, ctx.key, k)
    except InputError as err:
        views.input_error(err, "Cannot compute the RAGAS metrics")
        st.stop()

    st.caption(f"RAGAS's ID-based context metrics need no model: they compare the top {k} retrieved ids with the "
               f"golden labels (definitions checked against ragas {RAGAS_VERSION_CHECKED}).")

    # ---- means side by side ---------------------------------------------------------------------------------
    views.section(f"Means at K = {k}, with {CI_CONFIDENCE:.0%} confidence intervals",
                  "Each RAGAS metric, two ways, beside the trec_eval-style metric it resembles.")
    cols = st.container(key="cards_ragas").columns(len(summary), gap="medium")  # wraps when narrow (ui.shell)
    for col, r in zip(cols, summary.to_dict("records")):
        ours = r["ours"]
        with col, st.container(border=True):
            st.markdown(f"**{views.esc(r['label'])}**")
            a, e, b = st.columns(3)
            short = SHORT.get(r["ragas_metric"], r["label"])
            a.metric(f"{short}, {RAGAS_IN_SCOPE}", views.fmt(r["mean"]),
                     help=f"{r['ragas_metric']}: mean over the {r['n']} in-scope questions of our means (NaN left "
                          f"out).")
            a.caption(f"{CI_CONFIDENCE:.0%} CI {views.fmt(r['ci_low'])} – {views.fmt(r['ci_high'])}")
            e.metric(f"{short}, {RAGAS_EVALUATE}", views.fmt(r["ragas_evaluate_mean"]),
                     help="ragas.evaluate's own aggregate on the export at this K: the mean over every row with a "
                          "value (np.nanmean), out-of-scope questions included.")
            e.caption(f"over {r['ragas_evaluate_n']} of {len(table)} rows")
            metric, _, kk = ours.partition("@")
            n_eq, n = int(r["n_equal"]), int(r["ours_n"])
            rel = str(r["relation"])
            b.metric(f"{views.label(metric)}@{kk}" if kk else ours, views.fmt(r["ours_mean"]),
                     help=f"n = {r['ours_n']} queries")
            b.caption(f"{CI_CONFIDENCE:.0%} CI {views.fmt(r['ours_ci_low'])} – {views.fmt(r['ours_ci_high'])}")
            st.caption(f"Equal on {n_eq} of {n} queries.", help=rel[:1].upper() + rel[1:] + ".")
    st.caption(f"**In-scope mean**: over the questions of P@{k}, R@{k} and AP@{k}. **Every-row mean**: what "
               "`ragas.evaluate` prints for this page's export, over every row (out-of-scope rows score 0 on ID "
               "precision, NaN on recall). RAGAS "
               "scores the list as ranked, a repeated id included.",
               help="P@K, R@K and AP@K keep each id's best-ranked occurrence, as trec_eval does, so the two can differ "
                    "on a run that repeats an id. An out-of-scope question has no reference id: something was "
                    "retrieved and nothing matches (precision 0), and recall is undefined (NaN, left out).")

    # ---- relation --------------------------------------------------------------------------------------------
    with st.expander("How the RAGAS context metrics relate to precision@K, recall@K and AP@K",
                     icon=":material/function:"):
        paragraphs = [p.strip() for p in RELATION.strip().split("\n\n") if p.strip()]
        for p in paragraphs:
            text = " ".join(line.strip() for line in p.splitlines())
            if text.startswith("- "):
                st.markdown("- " + views.esc(text[2:]))
            else:
                st.markdown(views.esc(text))

    # ---- per query ---------------------------------------------------------------------------------------
    views.section("Per query", "Each RAGAS value beside its counterpart. Empty: NaN in RAGAS (no reference id, or "
                  "nothing retrieved).")
    qtext = {q.id: q.question for q in ctx.golden}
    show = table.copy()
    show.insert(1, "question", [qtext.get(q, "") for q in show["query_id"]])
    diff_only = st.toggle("Only queries where a RAGAS value differs from ours", key="ragas_diff_only")
    if diff_only:
        def _differs(a, b) -> bool:
            fa, fb = float(a), float(b)
            if math.isnan(fa) or math.isnan(fb):
                return not (math.isnan(fa) and math.isnan(fb))
            return abs(fa - fb) > 1e-12

        mask = [any(_differs(r[x], r[y]) for x, y in ((f"precision@{k}", "ragas_id_context_precision"),
                                                       (f"recall@{k}", "ragas_id_context_recall"),
                                                       (f"map@{k}", "ragas_context_precision")))
                for r in show.to_dict("records")]
        show = show[mask]
    num = st.column_config.NumberColumn
    st.dataframe(
        show, hide_index=True, width="stretch", height=420,
        column_order=["query_id", "question", f"precision@{k}", "ragas_id_context_precision", f"recall@{k}",
                      "ragas_id_context_recall", f"map@{k}", "ragas_context_precision", "n_relevant", "n_retrieved",
                      "hits", "category", "in_scope", "included"],
        column_config={
            "query_id": st.column_config.TextColumn("Query", width="small"),
            "question": st.column_config.TextColumn("Question", width="medium"),
            "category": st.column_config.TextColumn("Category", width="small"),
            "in_scope": st.column_config.CheckboxColumn("In scope", width="small"),
            "included": st.column_config.CheckboxColumn("In the mean", width=95),
            "n_relevant": num("|R|", width="small", help="Relevant ids (grade ≥ the relevance level)."),
            "n_retrieved": num("Retrieved", width="small", help=f"Ids in the top {k}."),
            "hits": num("Hits", width="small", help=f"Relevant ids in the top {k}."),
            f"precision@{k}": num(f"P@{k}", format="%.3f"),
            "ragas_id_context_precision": num("RAGAS ID prec.", format="%.3f"),
            f"recall@{k}": num(f"R@{k}", format="%.3f"),
            "ragas_id_context_recall": num("RAGAS ID recall", format="%.3f"),
            f"map@{k}": num(f"AP@{k}", format="%.3f"),
            "ragas_context_precision": num("RAGAS CP", format="%.3f", help="Rank-weighted context precision."),
        })
    st.caption(f"{len(show)} of {len(table)} queries shown.")

    # ---- export ---------------------------------------------------------------------------------------
    views.section("RAGAS-ready dataset",
                  f"One sample per golden question with its top {k} contexts and the labels; load it with "
                  "ragas.EvaluationDataset.from_list.")
    with st.expander("The dataset's fields", icon=":material/data_object:"):
        st.markdown(f"- **user_input**: the question\n- **retrieved_contexts**, **retrieved_context_ids**: the top "
                    f"{k} chunks, in rank order\n- **reference_context_ids**, **reference_contexts**: the labels\n"
                    "- **reference**: the expected answer\n- **response**: empty (a retrieval export carries no "
                    "generated answer; the Answers page judges answers)\n- the legacy names too: question, contexts, "
                    "ground_truth, answer\n\nAdd a judge model in ragas to score the answer-side metrics.")
    doc_level = ctx.corpus.level == "document"
    c1, c2, _ = st.columns([1, 1, 2])
    for col, fmt, mime in ((c1, "jsonl", "application/jsonl"), (c2, "csv", "text/csv")):
        try:
            data = cache_insights.ragas_export(res, ctx.chunks, ctx.key, k, fmt, doc_level)
            col.download_button(f"Download {fmt.upper()}", data, file_name=f"ragas_dataset_k{k}.{fmt}", mime=mime,
                                key=f"ragas_export_{fmt}", icon=":material/download:", width="stretch",
                                on_click="ignore")
        except InputError as err:
            col.button(f"Download {fmt.upper()}", disabled=True, key=f"ragas_export_{fmt}", width="stretch")
            col.caption(str(err))

    # ---- judge metrics -------------------------------------------------------------------------------------
    views.section("Faithfulness and answer relevancy: on the Answers page")
    st.info(JUDGE_METRICS_NOTE.split("\n")[0], icon=":material/gavel:")
    c = st.columns(len(JUDGE_METRICS))
    for col, (name, text) in zip(c, JUDGE_METRICS.items()):
        with col, st.container(border=True):
            st.markdown(f"**{name.replace('_', ' ').capitalize()}**  \n{text}")
    st.page_link("pages/answers.py", label="Open the Answers page", icon=":material/forum:")
