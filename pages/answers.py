"""Answers: faithfulness and answer relevancy with an LLM judge, offline approximations (context
support, answer-question similarity), reference similarity, and how each judge agrees with people
on the shipped labelled answers."""
from __future__ import annotations

import streamlit as st

from rag_metrics.answers import agreement as ag
from rag_metrics.answers.data import items_fingerprint
from rag_metrics.answers.summary import answer_section
from rag_metrics.compare.paired import comparison_summary
from rag_metrics.metrics.answer_registry import ANSWER_METRICS
from ui import answer_views, cache_answers, encoding, state, views
from ui import answers as ua
from ui.shell import ensure_shell

ensure_shell()

st.title("Answers")
st.caption("Does the answer stick to the retrieved context, and does it answer the question? With an LLM judge "
           "(any OpenAI-compatible endpoint): **faithfulness** and **answer relevancy** as ragas 0.4 defines "
           "them. Without one: two offline approximations, **context support** and **answer-question "
           "similarity**, which are cheaper and cruder, and are never called faithfulness or relevancy.")

settings = state.settings()
source, system = ua.source_choice(answer_views.stored_answer_systems(settings.corpus), settings.system)
labels: dict = {}
if source == ua.SAMPLE:
    items, labels = cache_answers.answers_sample()
    origin = "Shipped sample answers"
    st.caption("128 answers written for this project: a *careful* and a *sloppy* imaginary system answer each of "
               "the 64 in-scope golden questions from the dense retriever's top-5 chunks; every sentence carries a "
               "person's label (supported / unsupported / not a claim).")
elif source == ua.STORED:
    found = answer_views.system_answers(settings.corpus, system or "")
    if found is None:
        st.info(f"{views.esc(system or '')} holds no generated answers (its log has no answer column or output "
                "span); its retrieval is evaluated on every page.", icon=":material/info:")
        st.stop()
    items, _, origin, rep = found
    items = list(items)
    if rep:
        views.report(rep, show_ok=False)
    st.caption(f"The answers of {views.esc(system or '')}, added once on the Systems page: its retrieval shows on "
               "every page when it is the sidebar's system, and its answers are judged here.")
else:
    up = st.file_uploader("RAG log (.jsonl, .json, .csv) or trace export (Phoenix, Langfuse, LangSmith) with "
                          "question, answer, contexts and optionally ground_truth",
                          type=["jsonl", "json", "csv", "tsv", "ndjson"], key="answers_upload")
    if up is None:
        st.info("Upload a RAG log to score its answers, or add it once on the Systems page to see its retrieval "
                "too.", icon=":material/upload_file:")
        st.stop()
    items, rep = cache_answers.answers_upload(up.getvalue(), up.name)
    origin = f"Uploaded {up.name}"
    if rep:
        views.report(rep, show_ok=False)
    if not items:
        st.stop()
items_key = items_fingerprint(items)
answer_views.publish(items, items_key, origin)  # for the other pages

model = encoding.answers_model(items, items_key)  # the answers' language picks the model (rag_metrics.retrieval.choice)
support_threshold = encoding.thresholds(model).support  # the model's own cut-off (calibrated per encoder)
with st.spinner("Scoring the answers offline (sentence embeddings, cached on disk)…"):
    offline = cache_answers.answers_offline(tuple(items), items_key, support_threshold, model)
st.caption(f"Offline scores embed with {views.esc(encoding.label(model))} (the model for the answers' language); "
           f"context support's 'supported' threshold for this model: {support_threshold:g}.")

# ---- LLM judge ---------------------------------------------------------------------------------
with st.expander("LLM judge: faithfulness and answer relevancy (ragas 0.4 definitions)",
                 icon=":material/gavel:", expanded=False):
    st.caption("Every call is cached on disk by (endpoint, model, prompt, input): a rerun costs nothing. "
               "Switching page or pressing Stop (top right) cancels a run; what was paid for stays cached.")
    submitted = ua.judge_form()
    if submitted is not None:
        ua.run_llm(list(items), items_key, *submitted)
llm = ua.llm_result(items_key)
llm_ev = llm[0] if llm else None
if llm:
    p = llm[1]
    st.caption(f"LLM judge {views.esc(llm_ev.judge)}: {p.done} calls, {p.cache_hits} from cache, "
               f"{p.tokens:,} tokens, {p.elapsed:.1f} s.")

# ---- one summary first ---------------------------------------------------------------------------
views.section("Summary", "Each metric in one sentence, with its likely range (95% confidence interval); the "
              "details open below.")
for ev in [e for e in (llm_ev, offline) if e is not None]:
    section = answer_section(ev, "")
    for line in section.lines:
        st.markdown(f"- {views.esc(line)}")
    if section.comparison is not None and len(section.comparison):
        x, y = section.comparison_names
        st.markdown(f"**{views.esc(comparison_summary(section.comparison, x, y, plain=True))}**")

# ---- details, on demand ----------------------------------------------------------------------------
with st.expander("Means with 95% confidence intervals", icon=":material/table:"):
    st.caption("Percentile bootstrap over answers. Answers a metric could not score (empty answer, no context, "
               "judge error) are counted in 'n_failed' and never averaged in as 0.")
    for ev in [e for e in (llm_ev, offline) if e is not None]:
        st.dataframe(ua.summary_table(ev), hide_index=True, width="stretch", column_config=ua.NUMBER_COLUMNS)
    by = st.segmented_control("Break down by", ["system", "category"], default="system", key="answers_by")
    if by:
        for ev in [e for e in (llm_ev, offline) if e is not None]:
            st.dataframe(ua.summary_table(ev, by), hide_index=True, width="stretch",
                         column_config=ua.NUMBER_COLUMNS)

# ---- does context support order careful above sloppy --------------------------------------------
if labels:
    otab = ag.ordering_table(offline, "context_support", labels=labels)
    order, unsup = ag.ordering_summary(otab), ag.ordering_summary(otab, only_unsupported=True)
    with st.expander("Careful vs sloppy: does context support tell them apart?", icon=":material/compare:"):
        st.markdown(f"Context support scores the careful answer above the sloppy one for **{order['ordered']} of "
                    f"{order['n']}** questions ({views.fmt(order['fraction'], 2)}), and for **{unsup['ordered']} of "
                    f"{unsup['n']}** of those where people found an unsupported claim in the sloppy answer "
                    f"({views.fmt(unsup['fraction'], 2)}). Where it fails (worse_has_unsupported False: the sloppy "
                    "answer is supported but dodges or drifts, which context support does not measure):")
        st.dataframe(order["failures"], hide_index=True, width="stretch", column_config=ua.NUMBER_COLUMNS)

# ---- failures ------------------------------------------------------------------------------------
with st.expander("Lowest-scoring answers", icon=":material/trending_down:"):
    metrics = (llm_ev.metrics if llm_ev else []) + offline.metrics
    metric = st.selectbox("Metric", metrics, format_func=ua.label, key="answers_fail_metric")
    fail_ev = llm_ev if llm_ev is not None and metric in llm_ev.metrics else offline
    st.dataframe(fail_ev.failures(metric, limit=15)[["item_id", "system", "value", "status", "question", "answer"]],
                 hide_index=True, width="stretch", column_config=ua.NUMBER_COLUMNS)

# ---- one answer ----------------------------------------------------------------------------------
with st.expander("One answer, statement by statement", icon=":material/format_list_bulleted:"):
    st.caption("Green: supported; red: unsupported; grey: not a claim. For context support, a sentence is "
               f"'supported' when its best cosine to a context sentence is at least {support_threshold:g} "
               f"({views.esc(encoding.label(model))}'s threshold).")
    ids = [it.id for it in items]
    item_id = st.selectbox("Answer", ids, key="answers_item",
                           format_func=lambda i: f"{i}: {offline.item(i).question[:80]}")
    it = offline.item(item_id)
    st.markdown(f"**Question**: {views.esc(it.question)}  \n**Answer**: {views.esc(it.answer)}")
    if it.ground_truth:
        st.caption(f"Ground truth: {views.esc(it.ground_truth)}")
    human = dict(labels[item_id].sentences) if item_id in labels else None
    if item_id in labels:
        st.caption(f"People's relevancy label: {labels[item_id].relevancy}")
    cols = st.columns(2 if llm_ev else 1)
    with cols[0]:
        for m in offline.metrics:
            ua.score_block(ua.label(m), offline.scores[item_id].get(m), human if m == "context_support" else None)
    if llm_ev:
        with cols[1]:
            for m in llm_ev.metrics:
                ua.score_block(ua.label(m), llm_ev.scores[item_id].get(m))
    st.markdown("**Retrieved contexts**")
    for n, c in enumerate(it.contexts, 1):
        st.markdown(f"**[{n}]** {views.esc(c)}")

# ---- judge vs people -----------------------------------------------------------------------------
if labels:
    with st.expander("Judge vs people", icon=":material/groups:"):
        st.caption("Agreement with the people's labels of the shipped answers; precision and recall of "
                   "'unsupported' (the judge's unsupported calls that people also call unsupported, and the "
                   "people's unsupported sentences the judge finds).")
        st_tab = ag.sentence_table(offline, labels)
        rows = [{"judge": "context support (offline), per sentence", **ag.agreement_stats(st_tab)},
                {"judge": "context support (offline), per answer",
                 **ag.agreement_stats(ag.answer_table(offline, labels, "context_support"))}]
        if llm_ev is not None:
            rows.append({"judge": "faithfulness (LLM), per answer",
                         **ag.agreement_stats(ag.answer_table(llm_ev, labels, "faithfulness"))})
        st.dataframe(rows, hide_index=True, width="stretch")
        st.dataframe(ag.confusion(st_tab), width="stretch")
        st.markdown("**Where the offline judge and people disagree**")
        st.dataframe(st_tab[st_tab.human != st_tab.judge], hide_index=True, width="stretch")
        st.markdown("**Answer-question similarity by the people's relevancy label**")
        st.dataframe(ag.relevancy_table(offline, labels, "answer_question_similarity"), hide_index=True)
        if llm_ev is not None and "answer_relevancy" in llm_ev.metrics:
            st.dataframe(ag.relevancy_table(llm_ev, labels, "answer_relevancy"), hide_index=True)

    with st.expander("What the offline approximations catch and miss", icon=":material/troubleshoot:"):
        ex = ag.catch_and_miss(offline, labels)
        st.markdown("They **catch** invented facts far from every context sentence (unsupported, low cosine):")
        st.dataframe(ex["caught"], hide_index=True, width="stretch")
        st.markdown("They **miss** contradictions built from the context's own words (a changed number, a swapped "
                    "plan or a negation stays close to its source sentence):")
        st.dataframe(ex["missed"], hide_index=True, width="stretch")
        st.markdown("They **flag** some true sentences that paraphrase the context loosely (false alarms):")
        st.dataframe(ex["false_alarms"], hide_index=True, width="stretch")
        st.markdown("Answer-question similarity **cannot tell** noncommittal or off-topic answers from real ones "
                    "when they repeat the question's words (highest similarity first):")
        st.dataframe(ex["noncommittal"], hide_index=True, width="stretch")

with st.expander("What each metric means", icon=":material/menu_book:"):
    for m in ANSWER_METRICS.values():
        st.markdown(f"**{views.esc(m.label)}** ({m.kind}): {views.esc(m.definition)}")
