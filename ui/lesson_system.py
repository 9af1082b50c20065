"""Lesson 4's own drawing on the Lesson page (the lesson is data in :mod:`rag_metrics.lesson.system`): the CI job
for the student's own setup on its last step before the quiz, copyable (``st.code``), with their golden set to
download.  Every label is in the lesson's language; the job is built by :func:`rag_metrics.lesson.system.ci_workflow`.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from rag_metrics.compare.power import MIN_EFFECT
from rag_metrics.errors import InputError
from rag_metrics.lesson import system as S
from rag_metrics.lesson import text
from ui import views

#: Session keys of the job's two inputs.
KEY_CORPUS = "lesson_l4_corpus"
KEY_MIN_CHANGE = "lesson_l4_min_change"


def setup(ctx: Any, corpus: str = "docs", min_change: float = MIN_EFFECT) -> S.CiSetup:
    """The :class:`~rag_metrics.lesson.system.CiSetup` of the lab's current corpus, system, golden set and K."""
    s = ctx.settings
    o = s.options
    options: list[str] = []
    if o.relevance_level != 1:
        options += ["--relevance-level", str(o.relevance_level)]
    if o.out_of_scope != "exclude":
        options += ["--out-of-scope", o.out_of_scope]
    if o.recall_denominator != "all":
        options += ["--recall-denominator", o.recall_denominator]
    own = bool(s.system)
    return S.CiSetup(corpus=corpus, retriever="" if own else s.retriever,
                     model="" if own or s.retriever == "bm25" else (ctx.corpus.model or ""),
                     chunk_size=int(s.chunk_size), chunk_overlap=int(s.chunk_overlap), level=ctx.corpus.level,
                     metrics=("mrr", s.ndcg_metric), k=int(ctx.k), min_change=float(min_change),
                     options=tuple(options))


def show(step: str, lang: str, ctx: Any) -> None:
    """The CI job under step ``l4_ci`` (nothing for the other steps)."""
    if step != "l4_ci":
        return
    from rag_metrics.io.golden import golden_to_text

    c1, c2 = st.columns(2)
    corpus = c1.text_input(text("ui.l4.corpus_path", lang), value="docs", key=KEY_CORPUS)
    min_change = c2.number_input(text("ui.l4.min_change_input", lang), min_value=0.01, max_value=0.5,
                                 value=MIN_EFFECT, step=0.01, format="%.2f", key=KEY_MIN_CHANGE)
    try:
        s = setup(ctx, corpus.strip() or "docs", float(min_change))
        job = S.ci_workflow(s, lang)
    except InputError as e:
        st.error(views.esc(str(e)), icon=":material/error:")
        return
    st.markdown(f"**{text('ui.l4.job', lang)}**")
    st.code(job, language="yaml")
    if not s.retriever:
        st.info(text("ui.l4.own_system", lang), icon=":material/info:")
    st.download_button(text("ui.l4.download_golden", lang, file=s.golden), golden_to_text(ctx.golden, "jsonl"),
                       file_name=s.golden, mime="application/jsonl", key="lesson_l4_golden",
                       icon=":material/download:")
