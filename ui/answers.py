"""Streamlit pieces of the Answers page: the judge settings form, the LLM judge run with progress
and cancel, and the per-answer view (statements highlighted by verdict)."""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics.answers.scoring import AnswerEvaluation, evaluate_answers
from rag_metrics.answers.types import (
    NOT_A_CLAIM,
    SUPPORTED,
    UNSUPPORTED,
    AnswerItem,
    MetricScore,
)
from rag_metrics.budgets import estimate_tokens
from rag_metrics.config import variable
from rag_metrics.errors import InputError
from rag_metrics.metrics.answer_registry import ANSWER_METRICS
from rag_metrics.server.connections import judge_api_key
from ui import server, views
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
                          n_questions=int(st.session_state[KEY_NQ]), concurrency=int(st.session_state[KEY_CONC]),
                          json_mode=bool(st.session_state[KEY_JSON]), **extra)
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
    var = (st.session_state.get(KEY_KEYVAR) or DEFAULT_KEY_ENV).strip()
    try:
        cfg = JudgeConfig(st.session_state.get(KEY_URL) or "", st.session_state.get(KEY_MODEL) or "",
                          st.session_state.get(KEY_EMBED) or None, api_key_env=var,
                          n_questions=int(st.session_state[KEY_NQ]), concurrency=int(st.session_state[KEY_CONC]),
                          json_mode=bool(st.session_state[KEY_JSON]))
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
    st.session_state[_RESULT] = (items_key, cfg.name, ev, spent)
    bar.empty()


def llm_result(items_key: str) -> tuple[AnswerEvaluation, Any] | None:
    """The last LLM judge result for these items in this session, if any."""
    r = st.session_state.get(_RESULT)
    if r is None or r[0] != items_key:
        return None
    return r[2], r[3]


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
    st.session_state[key] = st.session_state.get(key, st.session_state.get(_kept(key), fallback))
    if st.session_state[key] not in options:
        st.session_state[key] = fallback


def keep(key: str) -> None:
    """Remember the widget ``key``'s value for the next visit (see :func:`remembered`)."""
    st.session_state[_kept(key)] = st.session_state.get(key)


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
