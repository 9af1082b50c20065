"""Answer metrics next to the retrieval metrics: the answer-quality blocks of the Dashboard, the
Compare page and the Presenter view, and the answer section of the report.

Where the answers come from (:func:`current`): the RAG log last uploaded on the Answers page in this
session (:func:`publish`), else the shipped sample answers; only the answers to questions of the
current golden set count (:func:`rag_metrics.answers.summary.answers_for_golden`).  Scores are the
Answers page's cached offline run (the shipped sentence vectors: nothing is re-embedded) and, when
the LLM judge ran in this session, its scores.  Every number comes from ``ui.cache`` wrappers of
:mod:`rag_metrics.answers.summary`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics.answers.scoring import AnswerEvaluation
from rag_metrics.answers.summary import systems
from rag_metrics.compare.paired import DECISION_RULE, comparison_summary, interval_note
from rag_metrics.evaluation import CI_CONFIDENCE, CI_RESAMPLES, CI_SEED
from rag_metrics.metrics.answer_registry import ANSWER_METRICS
from rag_metrics.systems.ownership import system_stores
from ui import cache_answers, compare_views, encoding, session, state, views
from ui.keys import ANSWERS_CMP_A as KEY_A
from ui.keys import ANSWERS_CMP_B as KEY_B
from ui.keys import ANSWERS_PUBLISHED as _PUBLISHED

__all__ = ["CurrentAnswers", "compare_section", "current", "dashboard_section", "presenter_section", "publish",
           "report_inputs", "stored_answer_systems", "stored_answers", "system_answers"]

ANSWERS_PAGE = "pages/answers.py"
HOW_TO_ADD = ("No generated answers for this golden set. To see answer quality here, open the **Answers** page "
              "and upload a RAG log (question, answer, contexts) whose questions are this golden set's; the "
              "shipped sample answers cover the sample golden set.")


@dataclass(frozen=True, eq=False)
class CurrentAnswers:
    """The answers to the current golden set and their scores."""

    ev: AnswerEvaluation
    key: str        # cache key of ``ev`` (items, golden set, LLM judge run)
    source: str
    has_llm: bool


def publish(items: Any, items_key: str, source: str) -> None:
    """Called by the Answers page: the answers it shows become the other pages' answers."""
    session.set_value(_PUBLISHED, (tuple(items), items_key, source))


def _answer_logs(corpus_name: str) -> list[tuple[Any, Any]]:
    """``(SystemStore, SystemSpec)`` of every stored RAG log or trace export with answers this session
    sees for a corpus: its own space first, then the shared one, never another student's
    (:func:`rag_metrics.systems.ownership.system_stores`); a name once."""
    seen: dict[str, tuple[Any, Any]] = {}
    for _, store in system_stores(state.caller(), corpus_name):
        for spec in store.answer_logs():
            seen.setdefault(spec.name, (store, spec))
    return list(seen.values())


def stored_answer_systems(corpus_name: str) -> list[str]:
    """Systems stored for a corpus whose upload is a RAG log or trace export (answers to judge)."""
    return [spec.name for _, spec in _answer_logs(corpus_name)]


def system_answers(corpus_name: str, name: str, logs: list | None = None) -> tuple[tuple, str, str, Any] | None:
    """``(items, items key, source, reader report)`` of the stored system ``name`` when its upload is
    a RAG log or trace export with answers; None otherwise (one upload on Systems, no second one).
    ``logs``: :func:`_answer_logs` of the corpus, when the caller has it."""
    found = next(((store, spec) for store, spec in (logs if logs is not None else _answer_logs(corpus_name))
                  if spec.name == name), None)
    if found is None:
        return None
    store, spec = found
    version = store.upload_version(spec)
    if version is None:
        return None
    return cache_answers.stored_answers(corpus_name, name, (str(store.folder), spec.file, *version))


def stored_answers(corpus_name: str, first: str) -> tuple[tuple, str, str] | None:
    """``(items, items key, source)``: the answers of the stored system ``first`` and of every other
    stored RAG log or trace export with answers (so Compare can pair two systems' answers), ``first``
    first; None when ``first`` has no answers."""
    logs = _answer_logs(corpus_name)
    mine = system_answers(corpus_name, first, logs)
    if mine is None:
        return None
    sets = [(first, mine)]
    for name in [spec.name for _, spec in logs]:
        other = system_answers(corpus_name, name, logs) if name != first else None
        if other is not None:
            sets.append((name, other))
    if len(sets) == 1:
        return mine[:3]
    items, key = cache_answers.merged_answers(tuple((n, found[0]) for n, found in sets),
                                              "|".join(f[1] for _, f in sets))
    return items, key, f"Systems {', '.join(n for n, _ in sets)}"


def _sources(ctx: Any = None) -> list[tuple[tuple, str, str, Any, str]]:
    """``(items, items key, source, LLM judge run or None, its key)``: the sidebar system's answers
    (a stored RAG log or trace export), the published answers, then the shipped sample (cheap: reads
    the session and cached files, scores nothing)."""
    found = []
    settings = getattr(ctx, "settings", None)
    if settings is not None and settings.system:
        mine = stored_answers(settings.corpus, settings.system)
        if mine is not None:
            found.append(mine)
    pub = session.value(_PUBLISHED)
    if isinstance(pub, tuple) and len(pub) == 3 and all(pub[1] != f[1] for f in found):
        found.append(pub)
    items, _ = cache_answers.answers_sample()
    sample = tuple(items)
    key = cache_answers.answers_sample_key()
    if all(f[1] != key for f in found):
        found.append((sample, key, "Shipped sample answers"))
    out = []
    for its, k, source in found:
        llm = cache_answers.llm_result(k)
        llm_ev = llm[0] if llm else None
        # keyed by the run's content, not the judge's name: another session's run of the same judge on the
        # same answers is never shown here
        out.append((its, k, source, llm_ev, llm_ev.fingerprint() if llm_ev is not None else ""))
    return out


def _resolve(sources: list, golden: Any, golden_fp: str) -> CurrentAnswers | None:
    """The first source with answers to ``golden`` (``ui.cache`` calls only: safe off the script thread)."""
    for items, items_key, source, llm_ev, llm_key in sources:
        ev = cache_answers.answers_for_golden(items, items_key, golden, golden_fp, llm_ev, llm_key,
                                              encoding.answers_model(items, items_key))  # the one encoder rule
        if ev is not None:
            return CurrentAnswers(ev, f"{items_key}:{golden_fp}:{llm_key}", source, llm_ev is not None)
    return None


def current(ctx: Any) -> CurrentAnswers | None:
    """The answers to ``ctx``'s golden set (see the module doc), or ``None``."""
    with st.spinner("Scoring the answers offline (cached sentence vectors)…"):
        return _resolve(_sources(ctx), ctx.golden, ctx.key.golden)


def _ci(r: dict) -> str:
    if math.isnan(r["ci_low"]):
        return f"n = {r['n']}"
    return f"{CI_CONFIDENCE:.0%} CI {views.fmt(r['ci_low'])} – {views.fmt(r['ci_high'])} · n = {r['n']}"


# ---- Dashboard ---------------------------------------------------------------------------------------
def dashboard_section(ctx: Any) -> None:
    """A compact "Answer quality" row of cards per answer system, or how to add answers."""
    views.section("Answer quality", "The generated answers to this golden set, next to the retrieval metrics.")
    cur = current(ctx)
    if cur is None:
        st.caption(HOW_TO_ADD)
        return
    rows = cache_answers.answers_summary_rows(cur.ev, cur.key)
    recs = rows.to_dict("records")
    systems = list(dict.fromkeys(r["system"] or "answers" for r in recs))
    for system in systems:
        mine = [r for r in recs if (r["system"] or "answers") == system]
        st.markdown(f"**{views.esc(system)}**" + (" (answer system)" if len(systems) > 1 else ""))
        cols = st.columns(max(len(mine), 4))
        for col, r in zip(cols, mine):
            meta = ANSWER_METRICS[r["metric"]]
            short = meta.label.replace(" (offline approximation)", "")
            kind = " An offline approximation." if meta.label != short else ""
            col.metric(short, views.fmt(r["mean"]), help=meta.definition + kind, border=True)
            col.caption(_ci(r) + (f" · {r['n_failed']} not scored" if r["n_failed"] else ""))
    judge = ("LLM judge and offline approximations" if cur.has_llm else
             "offline approximations only (no LLM judge has run in this session: faithfulness and answer "
             "relevancy need one, on the Answers page)")
    st.caption(f"{views.esc(cur.source)}: {len(cur.ev.items)} answers · {judge}. Means over the answers each metric "
               f"scored, {CI_CONFIDENCE:.0%} percentile-bootstrap CIs ({CI_RESAMPLES:,} resamples, seed {CI_SEED}). "
               "Context support and answer-question similarity are embedding approximations, not faithfulness or "
               "answer relevancy.")
    st.page_link(ANSWERS_PAGE, label="Answers page: each answer statement by statement, judge vs people",
                 icon=":material/forum:")


# ---- Compare -----------------------------------------------------------------------------------------
def verdict_rows(table: pd.DataFrame) -> dict[str, list[str]]:
    """The retrieval verdict table's columns (:func:`ui.compare_views.verdict_rows`), answer metrics named
    (an offline approximation as "… (offline)": the table then fits the page)."""
    names = [ANSWER_METRICS[m].short_label if m in ANSWER_METRICS else m for m in table["metric"]]
    return compare_views.verdict_rows(table, names)


def compare_section(ctx: Any) -> None:
    """Two answer systems compared on the questions both answered: the retrieval verdict table's
    shape and decision rule."""
    views.section("Answer systems: A vs B", "Two systems' answers to the same golden questions, paired by "
                  "question; the same decision rule as the retrieval table.")
    cur = current(ctx)
    if cur is None:
        st.caption(HOW_TO_ADD)
        return
    names = systems(cur.ev)
    if len(names) < 2:
        st.info(f"The answers come from one system ({views.esc(names[0] if names else '-')}); a comparison needs "
                "answers from two (a `system` field per row, or one uploaded file per system).",
                icon=":material/info:")
        return
    c1, c2 = st.columns(2)
    for key, fallback in ((KEY_A, names[0]), (KEY_B, names[1])):
        if session.value(key) not in names:
            session.set_value(key, fallback)
    a = c1.selectbox("Answer system A", names, key=KEY_A)
    b = c2.selectbox("Answer system B", names, key=KEY_B)
    if a == b:
        st.warning("Pick two different answer systems.", icon=":material/warning:")
        return
    table = cache_answers.answers_comparison(cur.ev, cur.key, a, b)
    st.markdown(f"**{views.esc(comparison_summary(table, a, b))}**")
    st.dataframe(verdict_rows(table), hide_index=True, width="stretch", column_config=compare_views.verdict_columns())
    st.caption("Paired over the questions both systems answered; decided as the retrieval table above. "
               "(offline): an embedding approximation, not faithfulness or answer relevancy.",
               help=f"{interval_note(table)} n = questions both systems answered and the metric scored.\n\n"
                    f"{DECISION_RULE}\n\nContext support and answer-question similarity are offline "
                    "approximations, not faithfulness or answer relevancy.")
    with st.expander("Each verdict in a sentence (the same numbers)", icon=":material/notes:"):
        st.markdown("\n".join(f"- {views.esc(t)}" for t in table["sentence"]))


# ---- report and Presenter view -----------------------------------------------------------------------
def report_inputs(ctx: Any) -> tuple[str, Callable[[], Any]]:
    """``(cache key, compute)`` of the report's answer section: the key is cheap (which answers, which
    golden set, which LLM run); ``compute()`` returns the
    :class:`~rag_metrics.answers.summary.AnswerSection` or ``None`` (it scores on first use, cached)."""
    sources, golden, golden_fp = _sources(ctx), ctx.golden, ctx.key.golden
    key = golden_fp + "|" + "|".join(f"{s[1]}:{s[4]}" for s in sources)

    def compute() -> Any:
        cur = _resolve(sources, golden, golden_fp)
        return None if cur is None else cache_answers.answers_report_section(cur.ev, cur.key, cur.source)

    return key, compute


def presenter_section(content: Any) -> None:
    """One plain-words line per answer metric (and the first two systems compared), no p-values."""
    a = getattr(content, "answers", None)
    if a is None:
        return
    st.header("Answer quality", divider="gray")
    st.caption(f"{views.esc(a.source)} · judge: {views.esc(a.judge)}. Likely ranges are 95% confidence intervals.")
    for line in a.lines:
        st.markdown(f"- {views.esc(line)}")
    if a.comparison is not None and len(a.comparison):
        from rag_metrics.compare.paired import comparison_summary

        x, y = a.comparison_names
        st.markdown(f"**{views.esc(comparison_summary(a.comparison, x, y, plain=True))}**  \n"
                    + "\n".join(f"- {views.esc(t)}" for t in a.comparison["plain"]))
