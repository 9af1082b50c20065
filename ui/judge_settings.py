"""Which LLM judge a session may use, asked in one place (drafting, relevance suggestions).

The rule: in class mode (:attr:`rag_metrics.server.access.Caller.class_mode`) only the operator's judge
(``[lab.judge]`` of :func:`rag_metrics.config.load_server_config`) is used, with its key,
and nothing typed in a browser reaches a server secret or another host; in single-user mode a
small form (base URL, model) is used and the key comes from ``$RAG_METRICS_JUDGE_KEY`` or the
Streamlit secret of that name.  The Answers page follows the same rule (ui/answers.py); when the
two are merged, :func:`session_judge` is the one to keep.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from rag_metrics.config import load_server_config, variable
from rag_metrics.errors import InputError
from rag_metrics.server.policy import allowed
from ui import session, state, views
from ui.keys import JUDGE_MODEL as KEY_MODEL
from ui.keys import JUDGE_URL as KEY_URL


def _operator_judge() -> tuple[Any, str | None] | None:
    from rag_metrics.answers.llm import JudgeConfig

    spec = load_server_config().judge
    if not spec:
        return None
    spec = dict(spec)
    key = spec.pop("api_key", None)
    spec.pop("embed_model", None)
    allowed = {"base_url", "chat_model", "api_key_env", "concurrency", "timeout", "max_retries", "temperature",
               "top_p", "max_tokens", "json_mode"}
    return JudgeConfig(**{k: v for k, v in spec.items() if k in allowed}), key


def session_judge() -> tuple[Any, str | None] | None:
    """``(JudgeConfig, api_key)`` this session may use, or ``None`` (nothing configured yet).

    Raises :class:`InputError` for bad settings (the caller shows it)."""
    from rag_metrics.answers.llm import DEFAULT_KEY_ENV, JudgeConfig

    if not allowed(state.caller(), "choose-judge"):
        return _operator_judge()
    url = (session.value(KEY_URL) or "").strip()
    model = (session.value(KEY_MODEL) or "").strip()
    if not url or not model:
        return None
    key = variable(DEFAULT_KEY_ENV)
    if not key:
        try:
            key = st.secrets.get(DEFAULT_KEY_ENV)  # type: ignore[assignment]
        except Exception:  # noqa: BLE001 - no secrets file
            key = None
    return JudgeConfig(url, model), key


def judge_settings(where: str) -> tuple[Any, str | None] | None:
    """Render the judge settings (a form in single-user mode, the operator's judge named in class
    mode) and return :func:`session_judge`; ``where`` keys the widgets per view."""
    if not allowed(state.caller(), "choose-judge"):
        try:
            got = _operator_judge()
        except InputError as err:
            views.input_error(err, "The operator's judge")
            return None
        if got is None:
            st.info("No judge is configured for this class: the operator adds `[lab.judge]` (base_url, chat_model) "
                    "to the server configuration.", icon=":material/gavel:")
            return None
        st.caption(f":material/gavel: Judge: the class's `{views.esc(got[0].chat_model)}` (set by the operator).")
        return got
    with st.expander("Judge endpoint", expanded=not (session.value(KEY_URL) and
                                                     session.value(KEY_MODEL))):
        a, b = st.columns(2)
        a.text_input("Base URL", key=KEY_URL, placeholder="http://localhost:11434/v1",
                     help="Any OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server, OpenAI). The key, if "
                          "any, is read from $RAG_METRICS_JUDGE_KEY or the Streamlit secret of that name.")
        b.text_input("Chat model", key=KEY_MODEL, placeholder="llama3.1:8b")
    try:
        return session_judge()
    except InputError as err:
        views.input_error(err, "Judge settings")
        return None
