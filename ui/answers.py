"""Streamlit pieces of the Answers page: the judge settings form, the LLM judge run with progress
and cancel, and the per-answer view (statements highlighted by verdict)."""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics.answers import agreement as ag
from rag_metrics.answers.data import items_fingerprint
from rag_metrics.answers.scoring import AnswerEvaluation, evaluate_answers
from rag_metrics.answers.summary import answer_section
from rag_metrics.answers.types import (
    NOT_A_CLAIM,
    SUPPORTED,
    UNSUPPORTED,
    AnswerItem,
    MetricScore,
)
from rag_metrics.compare.paired import comparison_summary
from rag_metrics.config import variable
from rag_metrics.errors import InputError
from rag_metrics.metrics.answer_registry import ANSWER_METRICS
from rag_metrics.server.budgets import estimate_tokens
from rag_metrics.server.connections import judge_api_key
from ui import answer_views, cache_answers, encoding, server, session, state, views
from ui.keys import ANSWERS_CONC as KEY_CONC
from ui.keys import ANSWERS_EMBED as KEY_EMBED
from ui.keys import ANSWERS_JSON as KEY_JSON
from ui.keys import ANSWERS_KEYVAR as KEY_KEYVAR
from ui.keys import ANSWERS_MODEL as KEY_MODEL
from ui.keys import ANSWERS_NQ as KEY_NQ
from ui.keys import ANSWERS_RESULT as _RESULT
from ui.keys import ANSWERS_SOURCE as KEY_SOURCE
from ui.keys import ANSWERS_SYSTEM as KEY_SYSTEM
from ui.keys import ANSWERS_URL as KEY_URL
from ui.keys import kept as _kept

_COLOR = {SUPPORTED: "green", UNSUPPORTED: "red", NOT_A_CLAIM: "gray"}


def label(metric: str) -> str:
    m = ANSWER_METRICS.get(metric)
    return m.label if m else metric


def _class_judge_form(env: Any) -> Any:
    """Class mode: only the operator's judge (``lab.judge``); no URL, model or key field."""
    from rag_metrics.answers.llm import JudgeConfig

    judge = env.config.judge
    if not judge:
        st.info("The class has no LLM judge; the operator configures one in the server's configuration "
                "([lab.judge]). The offline approximations below need none.", icon=":material/info:")
        return None
    with st.form("answers_judge_form", border=True):
        embed = judge.get("embed_model")
        st.markdown(f"The class's judge: chat model **{views.esc(str(judge['chat_model']))}**" +
                    (f", embeddings model **{views.esc(str(embed))}**" if embed else " (faithfulness only)"))
        c, d, e = st.columns(3)
        c.number_input("Questions per answer", 1, 10, 3, key=KEY_NQ)
        d.number_input("Concurrent calls", 1, 32, 4, key=KEY_CONC)
        e.toggle("JSON mode", value=bool(judge.get("json_mode", True)), key=KEY_JSON,
                 help="Send response_format=json_object.")
        go = st.form_submit_button("Run the LLM judge", icon=":material/gavel:", type="primary")
    if not go:
        return None
    extra = {k: judge[k] for k in ("timeout", "max_retries", "temperature", "top_p", "max_tokens") if k in judge}
    try:
        cfg = JudgeConfig(str(judge["base_url"]), str(judge["chat_model"]), str(embed) if embed else None,
                          n_questions=int(session.item(KEY_NQ)), concurrency=int(session.item(KEY_CONC)),
                          json_mode=bool(session.item(KEY_JSON)), **extra)
    except (InputError, TypeError) as err:
        views.input_error(InputError(f"the class's judge (lab.judge) is misconfigured: {err}"), "Judge settings")
        return None
    return cfg, judge_api_key(env, cfg.base_url)


def judge_form() -> Any:
    """The endpoint settings form; returns ``(JudgeConfig, api_key)`` when submitted, else None.

    Single user: the key is read from the environment variable named in the form, or from
    ``st.secrets`` under that name (or ``lab.judge.api_key`` for the configured judge's URL); it is
    never stored in the session or exported.  Class mode: only the operator's judge is offered."""
    from rag_metrics.answers.llm import DEFAULT_KEY_ENV, JudgeConfig

    env = server.env()
    if env.closed:
        return _class_judge_form(env)
    with st.form("answers_judge_form", border=True):
        a, b = st.columns(2)
        a.text_input("Base URL", key=KEY_URL, placeholder="http://localhost:11434/v1",
                     help="Any OpenAI-compatible endpoint: Ollama, vLLM, llama.cpp server, OpenAI, Azure.")
        b.text_input("Chat model", key=KEY_MODEL, placeholder="llama3.1:8b")
        a.text_input("Embeddings model (for answer relevancy)", key=KEY_EMBED, placeholder="nomic-embed-text")
        b.text_input("API key: environment variable name", key=KEY_KEYVAR, value=None,
                     placeholder=DEFAULT_KEY_ENV,
                     help="The name of the variable (or Streamlit secret) holding the key, never the key.")
        c, d, e = st.columns(3)
        c.number_input("Questions per answer", 1, 10, 3, key=KEY_NQ)
        d.number_input("Concurrent calls", 1, 32, 4, key=KEY_CONC)
        e.toggle("JSON mode", value=True, key=KEY_JSON, help="Send response_format=json_object.")
        go = st.form_submit_button("Run the LLM judge", icon=":material/gavel:", type="primary")
    if not go:
        return None
    var = (session.value(KEY_KEYVAR) or DEFAULT_KEY_ENV).strip()
    try:
        cfg = JudgeConfig(session.value(KEY_URL) or "", session.value(KEY_MODEL) or "",
                          session.value(KEY_EMBED) or None, api_key_env=var,
                          n_questions=int(session.item(KEY_NQ)), concurrency=int(session.item(KEY_CONC)),
                          json_mode=bool(session.item(KEY_JSON)))
    except InputError as err:
        views.input_error(err, "Judge settings")
        return None
    key = variable(var)
    if not key:
        try:
            key = st.secrets.get(var)  # type: ignore[assignment]
        except Exception:  # noqa: BLE001 - no secrets file
            key = None
    return cfg, key or judge_api_key(env, cfg.base_url)


def run_llm(items: list[AnswerItem], items_key: str, cfg: Any, api_key: str | None) -> None:
    """Run the LLM judge with a progress bar (calls, cache hits, tokens, time); a click on Stop or
    any rerun cancels it (replies already paid for stay in the disk cache).  The judge connects only
    where this session's outbound policy allows."""
    from rag_metrics.answers.llm import LLMJudge

    try:
        judge = LLMJudge(cfg, api_key=api_key, policy=server.env().policy)
    except InputError as err:
        views.input_error(err, "LLM judge")
        return
    from ui.drafting import account, judge_gate

    planned = judge.planned_calls(len(items))
    chars = sum(len(it.question) + len(it.answer) + sum(len(c) for c in it.contexts) for it in items)
    if not judge_gate("answers", planned, estimate_tokens(planned, chars)):  # the seat's budget, or confirm first
        st.caption("Nothing was sent to the judge.")
        return
    bar = st.progress(0.0, text="Starting the judge…")

    def progress(p: Any) -> None:
        bar.progress(min(1.0, p.done / max(p.total, 1)),
                     text=f"{p.done}/{p.total} calls · {p.cache_hits} from cache · {p.tokens:,} tokens · "
                          f"{p.elapsed:.1f} s")

    with views.costly("The LLM judge", cancel_key="answers_judge_cancel"):  # a worker slot (lab.budgets.workers)
        ev = evaluate_answers(items, [judge], progress=progress)
    spent = judge.last_progress
    if spent is not None:
        account(spent.done - spent.cache_hits, spent.tokens)
    session.set_value(_RESULT, (items_key, cfg.name, ev, spent))
    bar.empty()


#: Three decimals for every score column of the page's tables (formatting is the UI's job).
NUMBER_COLUMNS = {c: st.column_config.NumberColumn(format="%.3f")
                  for c in ("mean", "ci_low", "ci_high", "value", "careful", "sloppy")}


def summary_table(ev: AnswerEvaluation, by: str | None = None) -> pd.DataFrame:
    s = ev.summary(by)
    s.insert(0, "label", [label(m) for m in s["metric"]])
    return s.drop(columns=["metric"])


def highlighted(score: MetricScore) -> str:
    """The statements as markdown, each on a background coloured by its verdict."""
    parts = []
    for st_ in score.statements:
        parts.append(f":{_COLOR.get(st_.verdict, 'gray')}-background[{views.esc(st_.statement)}]")
    return " ".join(parts)


def statements_frame(score: MetricScore, human: dict[str, str] | None = None) -> pd.DataFrame:
    rows = []
    for s in score.statements:
        row = {"statement": s.statement, "verdict": s.verdict}
        if s.similarity is not None:
            row["best cosine"] = s.similarity
            row["closest context sentence"] = s.evidence
        if s.reason:
            row["judge's reason"] = s.reason
        if human is not None:
            row["people"] = human.get(s.statement, "")
        rows.append(row)
    return pd.DataFrame(rows)


def score_block(title: str, score: MetricScore | None, human: dict[str, str] | None = None) -> None:
    """One metric of one answer: value, highlighted statements, table, arithmetic or status."""
    if score is None:
        return
    st.markdown(f"**{views.esc(title)}**: " + (views.fmt(score.value) if score.ok else
                                               f"not scored ({views.esc(score.status)})"))
    if not score.ok:
        st.caption(views.esc(score.message))
    if score.statements:
        st.markdown(highlighted(score))
        st.dataframe(statements_frame(score, human), hide_index=True, width="stretch")
    if score.questions:
        st.dataframe(pd.DataFrame([{"generated question": q.question, "noncommittal": q.noncommittal,
                                    "cosine to the question": q.cosine} for q in score.questions]),
                     hide_index=True, width="stretch")
    if score.arithmetic:
        st.caption(views.esc(score.arithmetic))


# ---- where the answers come from (remembered across pages) --------------------------------------
SAMPLE, STORED, UPLOAD = "Shipped sample answers", "A system added on Systems", "Upload a RAG log"


def remembered(key: str, options: list, fallback: Any) -> None:
    """Give the widget ``key`` the value it had when the page was last shown (Streamlit drops a
    widget's state when its page is left), else ``fallback``."""
    session.set_value(key, session.value(key, session.value(_kept(key), fallback)))
    if session.item(key) not in options:
        session.set_value(key, fallback)


def keep(key: str) -> None:
    """Remember the widget ``key``'s value for the next visit (see :func:`remembered`)."""
    session.set_value(_kept(key), session.value(key))


def source_choice(stored: list[str], sidebar_system: str) -> tuple[str, str | None]:
    """The source radio (and the stored system's select): ``(source, system name or None)``.

    Default: the sidebar's system when it is a stored RAG log or trace export, else the sample."""
    options = [SAMPLE, STORED, UPLOAD] if stored else [SAMPLE, UPLOAD]
    remembered(KEY_SOURCE, options, STORED if sidebar_system in stored else SAMPLE)
    source = st.radio("Answers", options, horizontal=True, key=KEY_SOURCE)
    keep(KEY_SOURCE)
    name = None
    if source == STORED:
        remembered(KEY_SYSTEM, stored, sidebar_system if sidebar_system in stored else stored[0])
        name = st.selectbox("System (a RAG log or trace export added on the Systems page)", stored, key=KEY_SYSTEM)
        keep(KEY_SYSTEM)
    return source, name


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    st.title("Answers")
    st.caption("Does the answer stick to the retrieved context, and does it answer the question? With an LLM judge "
               "(any OpenAI-compatible endpoint): **faithfulness** and **answer relevancy** as ragas 0.4 defines "
               "them. Without one: two offline approximations, **context support** and **answer-question "
               "similarity**, which are cheaper and cruder, and are never called faithfulness or relevancy.")

    settings = state.settings()
    source, system = source_choice(answer_views.stored_answer_systems(settings.corpus), settings.system)
    labels: dict = {}
    if source == SAMPLE:
        items, labels = cache_answers.answers_sample()
        origin = "Shipped sample answers"
        st.caption("128 answers written for this project: a *careful* and a *sloppy* imaginary system answer each of "
                   "the 64 in-scope golden questions from the dense retriever's top-5 chunks; every sentence carries a "
                   "person's label (supported / unsupported / not a claim).")
    elif source == STORED:
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

    model = encoding.answers_model(items,
                                   items_key)  # the answers' language picks the model (rag_metrics.retrieval.choice)
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
        submitted = judge_form()
        if submitted is not None:
            run_llm(list(items), items_key, *submitted)
    llm = cache_answers.llm_result(items_key)
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
            st.dataframe(summary_table(ev), hide_index=True, width="stretch", column_config=NUMBER_COLUMNS)
        by = st.segmented_control("Break down by", ["system", "category"], default="system", key="answers_by")
        if by:
            for ev in [e for e in (llm_ev, offline) if e is not None]:
                st.dataframe(summary_table(ev, by), hide_index=True, width="stretch",
                             column_config=NUMBER_COLUMNS)

    # ---- does context support order careful above sloppy --------------------------------------------
    if labels:
        otab = ag.ordering_table(offline, "context_support", labels=labels)
        order, unsup = ag.ordering_summary(otab), ag.ordering_summary(otab, only_unsupported=True)
        with st.expander("Careful vs sloppy: does context support tell them apart?", icon=":material/compare:"):
            st.markdown(f"Context support scores the careful answer above the sloppy one for **{order['ordered']} of "
                        f"{order['n']}** questions ({views.fmt(order['fraction'], 2)}), and for "
                        f"**{unsup['ordered']} of "
                        f"{unsup['n']}** of those where people found an unsupported claim in the sloppy answer "
                        f"({views.fmt(unsup['fraction'], 2)}). Where it fails (worse_has_unsupported False: the sloppy "
                        "answer is supported but dodges or drifts, which context support does not measure):")
            st.dataframe(order["failures"], hide_index=True, width="stretch", column_config=NUMBER_COLUMNS)

    # ---- failures ------------------------------------------------------------------------------------
    with st.expander("Lowest-scoring answers", icon=":material/trending_down:"):
        metrics = (llm_ev.metrics if llm_ev else []) + offline.metrics
        metric = st.selectbox("Metric", metrics, format_func=label, key="answers_fail_metric")
        fail_ev = llm_ev if llm_ev is not None and metric in llm_ev.metrics else offline
        st.dataframe(fail_ev.failures(metric, limit=15)[["item_id", "system", "value", "status", "question", "answer"]],
                     hide_index=True, width="stretch", column_config=NUMBER_COLUMNS)

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
                score_block(label(m), offline.scores[item_id].get(m), human if m == "context_support" else None)
        if llm_ev:
            with cols[1]:
                for m in llm_ev.metrics:
                    score_block(label(m), llm_ev.scores[item_id].get(m))
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
