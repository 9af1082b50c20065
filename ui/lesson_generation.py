"""Lesson 3's own drawings on the Lesson page (the lesson is data in :mod:`rag_metrics.lesson.generation`): the
example tables of its steps (an answer's claims with a verdict per chunk; the questions written back from answers,
with their cosines), and the real judge on the student's own question (task kind ``judge``).

Every text from the sample or the student is escaped; every label is in the lesson's language."""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.lesson import generation as G
from rag_metrics.lesson import text
from ui import server, state, views

#: Session key of the last judge run of this page: ``{"key": (question id, answer, k), "faith", "rel", "model"}``.
JUDGE_RESULT = "lesson_l3_judge_result"


def _num(v: float | None, lang: str) -> str:
    s = views.fmt(v, 3)
    return s.replace(".", ",") if lang == "da" else s


def _cell(value: str) -> str:
    """A text as one cell of a Markdown table: escaped (a pipe too), on one line."""
    return views.esc(" ".join(str(value).split()))


def show(step: str, lang: str) -> None:
    """The step's example, drawn under its live figures (nothing for a step without one)."""
    if step not in ("l3_claims", "l3_share", "l3_relevancy"):
        return
    try:
        if step == "l3_relevancy":
            _relevancy(lang)
        else:
            _claims(lang)
    except InputError:
        st.info(text("ui.l3.no_data", lang), icon=":material/info:")


def _claims(lang: str) -> None:
    r = G.example()
    with st.container(border=True, key="lesson_l3_example"):
        st.markdown(f"**{text('ui.l3.question', lang)}:** {views.esc(G.sample_text(r.item.question, lang))}")
        st.markdown(f"**{text('ui.l3.the_answer', lang)} ({views.esc(r.item.id)}):** "
                    f"{views.esc(G.sample_text(r.item.answer, lang))}")
        n = len(r.item.contexts)
        head = [text("ui.l3.claim", lang), *(text("ui.l3.chunk_n", lang, n=j + 1) for j in range(n)),
                text("ui.l3.supported", lang)]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for c, row in zip(r.claims, r.supports):
            cells = [_cell(G.sample_text(c, lang)), *("✓" if v else "·" for v in row),
                     text("ui.l3.yes" if any(row) else "ui.l3.no", lang)]
            lines.append("| " + " | ".join(cells) + " |")
        st.markdown("\n".join(lines))
        if lang == "da":
            st.caption(text("ui.l3.translated", lang))
            return   # the chunks are the English handbook's: not quoted on the Danish path
        with st.expander(text("ui.l3.chunk_texts", lang)):
            for j, c in enumerate(r.item.contexts[:n]):
                st.markdown(f"**{text('ui.l3.chunk_n', lang, n=j + 1)}** · {views.esc(' '.join(c.split())[:600])}")


def _relevancy(lang: str) -> None:
    if lang == "da":
        st.caption(text("ui.l3.translated", lang))
    for r, score in G.relevancy_rows():
        with st.container(border=True, key=f"lesson_l3_rel_{r.item.id}"):
            st.markdown(f"**{views.esc(r.item.id)}** · {text('ui.l3.question', lang)}: "
                        f"{views.esc(G.sample_text(r.item.question, lang))}")
            st.caption(f"{text('ui.l3.the_answer', lang)}: {views.esc(G.sample_text(r.item.answer, lang))}")
            head = [text("ui.l3.generated_q", lang), text("ui.l3.noncommittal", lang), text("ui.l3.cosine", lang)]
            lines = ["| " + " | ".join(head) + " |", "|---|---|---|"]
            for (question, _), q in zip(r.generated, score.questions):   # the recorded question, its cosine
                flag = text("ui.l3.yes" if q.noncommittal else "ui.l3.no", lang)
                lines.append(f"| {_cell(G.sample_text(question, lang))} | {flag} | {_num(q.cosine, lang)} |")
            st.markdown("\n".join(lines))
            if r.item.id == G.RELEVANCY_EXAMPLE:
                st.markdown(text("ui.l3.relevancy_task", lang))
            else:
                st.markdown(text("ui.l3.relevancy_is", lang, value=_num(score.value, lang)))


# ---- the real judge ----------------------------------------------------------------------------------------
def _judge_config() -> Any:
    """The class's judge (``lab.judge`` in the operator's configuration) as a JudgeConfig, else ``None``."""
    from rag_metrics.answers.llm import JudgeConfig

    judge = server.config().judge
    if not judge:
        return None
    embed = judge.get("embed_model")
    extra = {k: judge[k] for k in ("timeout", "max_retries", "temperature", "top_p", "max_tokens", "json_mode")
             if k in judge}
    return JudgeConfig(str(judge["base_url"]), str(judge["chat_model"]), str(embed) if embed else None,
                       concurrency=1, **extra)


def judge_widget(ctx: Any, key: str, lang: str) -> dict[str, Any]:
    """Task ``l3_judge_run``: pick a golden question, write an answer, run the class's judge on it with the current
    system's first K chunks; the judge's part and the arithmetic's part shown apart.  Returns the task's answer:
    ``{"configured": False}`` without a judge (said so), else ``{"configured": True, "ran": ..., ...}``."""
    try:
        cfg = _judge_config()
    except (InputError, TypeError) as err:
        st.warning(views.esc(f"{err}"), icon=":material/warning:")
        cfg = None
    if cfg is None:
        st.info(text("ui.l3.no_judge", lang), icon=":material/info:")
        return {"configured": False}
    questions = {q.id: q.question for q in ctx.golden}
    if not questions:
        st.info(text("ui.l3.no_questions", lang))
        return {"configured": True, "ran": False}
    qid = st.selectbox(text("ui.l3.pick_question", lang), list(questions), key=key + "_q",
                       format_func=lambda i: f"{i} · {questions.get(i, '')}")
    answer = st.text_area(text("ui.l3.your_answer", lang), key=key + "_a", height=100, max_chars=2000)
    ranking = ctx.result.ranking(qid).head(ctx.k) if qid in ctx.result.query_ids else None
    contexts = tuple(ctx.id_text.get(i, "") for i in (ranking["id"] if ranking is not None else []))
    run_key = (qid, answer, ctx.k, contexts)
    if st.button(text("ui.l3.run_judge", lang), key=key + "_run", icon=":material/gavel:"):
        if not answer.strip():
            st.warning(text("ui.l3.no_answer", lang))
        else:
            _run(cfg, qid, questions[qid], answer, contexts, run_key)
    kept = state.value(JUDGE_RESULT)
    if not kept or kept.get("key") != run_key:
        return {"configured": True, "ran": False}
    _show_run(kept, ctx.k, lang)
    faith, rel = kept["faith"], kept.get("rel")
    return {"configured": True, "ran": True, "faithfulness": faith.value, "faithfulness_status": faith.status,
            "answer_relevancy": None if rel is None else rel.value}


def _run(cfg: Any, qid: str, question: str, answer: str, contexts: tuple[str, ...], run_key: tuple) -> None:
    from rag_metrics.answers.llm import LLMJudge
    from rag_metrics.answers.types import AnswerItem
    from rag_metrics.server.budgets import estimate_tokens
    from rag_metrics.server.connections import judge_api_key
    from ui.drafting import account, judge_gate

    env = server.env()
    try:
        judge = LLMJudge(cfg, api_key=judge_api_key(env, cfg.base_url), policy=env.policy)
    except InputError as err:
        views.input_error(err, "LLM judge")
        return
    item = AnswerItem(f"lesson:{qid}", question, answer, contexts)
    planned = judge.planned_calls(1)
    chars = len(question) + len(answer) + sum(len(c) for c in contexts)
    if not judge_gate("lesson_l3", planned, estimate_tokens(planned, chars)):
        return
    with st.spinner("…"):
        out = judge.judge([item])[0].scores
    spent = judge.last_progress
    if spent is not None:
        account(spent.done - spent.cache_hits, spent.tokens)
    state.set_value(JUDGE_RESULT, {"key": run_key, "faith": out["faithfulness"], "rel": out.get("answer_relevancy"),
                                   "model": cfg.chat_model})


def _show_run(kept: dict[str, Any], k: int, lang: str) -> None:
    from rag_metrics.answers.types import SUPPORTED

    faith, rel = kept["faith"], kept.get("rel")
    st.caption(text("ui.l3.judged_with", lang, model=views.esc(str(kept.get("model", ""))), k=k))
    left, right = st.columns(2)
    with left.container(border=True):
        st.markdown(f"**{text('ui.l3.judge_part', lang)}**")
        if faith.statements:
            st.dataframe(pd.DataFrame([{text("ui.l3.claim", lang): s.statement,
                                        text("ui.l3.supported", lang): text("ui.l3.yes" if s.verdict == SUPPORTED
                                                                            else "ui.l3.no", lang)}
                                       for s in faith.statements]), hide_index=True, width="stretch")
        if rel is not None and rel.questions:
            st.dataframe(pd.DataFrame([{text("ui.l3.generated_q", lang): q.question,
                                        text("ui.l3.noncommittal", lang): text("ui.l3.yes" if q.noncommittal
                                                                               else "ui.l3.no", lang)}
                                       for q in rel.questions]), hide_index=True, width="stretch")
    with right.container(border=True):
        st.markdown(f"**{text('ui.l3.arith_part', lang)}**")
        for score in (faith, rel):
            if score is None:
                continue
            if not score.ok:
                st.markdown(text("ui.l3.not_scored", lang, status=views.esc(score.status),
                                 message=views.esc(score.message)))
            elif score is faith:
                n = len(score.statements)
                sup = sum(s.verdict == SUPPORTED for s in score.statements)
                st.markdown(text("ui.l3.faith_arith", lang, supported=sup, claims=n, value=_num(score.value, lang)))
            elif score.questions and all(q.noncommittal for q in score.questions):
                st.markdown(text("ui.l3.rel_zero", lang))
            else:
                cos = " + ".join(_num(q.cosine, lang) for q in score.questions)
                st.markdown(text("ui.l3.rel_arith", lang, cosines=cos or "0", n=max(1, len(score.questions)),
                                 value=_num(score.value, lang)))
