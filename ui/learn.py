"""Session state and rendering of the Learn page (the metric sandbox).

The sandbox (:class:`rag_metrics.lesson.sandbox.Sandbox`) lives in ``st.session_state[SANDBOX]`` and is
the single source of truth; the grade widgets are keyed by a load *version* and the item id, so a
widget follows its item when the item moves, and a newly loaded list starts fresh widgets.

The convention widgets on the page mirror the sidebar's (``ui.state.KEY_*``): the page widget is
set from the shared key before it is drawn and writes back to it in its ``on_change`` callback
(callbacks run before the sidebar is drawn), so the dashboard and every other page follow.
"""
from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from rag_metrics.lesson import sandbox as S
from ui import sidebar, state
from ui.keys import (
    LEARN_CONV_GAIN,
    LEARN_CONV_LEVEL,
    LEARN_CONV_OOS,
    LEARN_CONV_RECALL,
    LEARN_K_VALUE,
    learn_grade,
    learn_unretrieved,
)
from ui.keys import LEARN_K as K
from ui.keys import LEARN_SANDBOX as SANDBOX
from ui.keys import LEARN_SCENARIO as SCENARIO
from ui.keys import LEARN_SIDE as SIDE
from ui.keys import LEARN_VERSION as VERSION

N_ITEMS = 10

#: (shared sidebar key, page widget key)
MIRRORS = {
    state.KEY_GAIN: LEARN_CONV_GAIN,
    state.KEY_OOS: LEARN_CONV_OOS,
    state.KEY_RECALL: LEARN_CONV_RECALL,
    state.KEY_LEVEL: LEARN_CONV_LEVEL,
}

#: Which tools use which convention (docs/conventions.md).
CONVENTION_HELP = {
    state.KEY_GAIN: "**Linear** gain g is trec_eval's `ndcg_cut` and ranx `ndcg`; **exponential** 2^g − 1 "
                    "(Burges) is ranx `ndcg_burges` and many ML libraries. They agree when every grade is 0 or 1 "
                    "and differ with graded labels: exponential gain rewards a grade-3 chunk much more than a "
                    "grade-1 one.",
    state.KEY_OOS: "A question the corpus cannot answer is marked out of scope (category out_of_scope, no "
                   "judgment). trec_eval never sees it (it is not in the qrels), so we **exclude** it from the "
                   "means and measure it by abstention. The classic "
                   "lesson code divides by **all** questions, counting it as a miss, which lowers every mean.",
    state.KEY_RECALL: "trec_eval's `recall.k` divides by **|R|**, all relevant chunks. BEIR's `R_cap` divides by "
                      "**min(K, |R|)**, so a query with more relevant chunks than K can still reach recall 1.",
    state.KEY_LEVEL: "A chunk is relevant when its grade ≥ L (trec_eval `-l`, ranx `-lN`). Raising L to 2 counts "
                     "only the clearly relevant chunks in hit rate, precision, recall, MRR and MAP. NDCG uses the "
                     "grades themselves and ignores L, as trec_eval does.",
}


# ---- state -------------------------------------------------------------------------------------
def sandbox() -> S.Sandbox:
    ss = st.session_state
    if SANDBOX not in ss:
        ss[SANDBOX] = S.SCENARIOS[0].before
        ss[VERSION] = 0
        ss[SCENARIO] = S.SCENARIOS[0].key
        ss[SIDE] = "before"
        ss[K] = ss[LEARN_K_VALUE] = S.SCENARIOS[0].k_before
    return ss[SANDBOX]


def load(sb: S.Sandbox, k: int | None = None, scenario: str | None = None, side: str = "before") -> None:
    """Replace the list (callbacks only: sets the K slider's state)."""
    ss = st.session_state
    ss[SANDBOX] = sb
    ss[VERSION] = ss.get(VERSION, 0) + 1
    ss[SCENARIO] = scenario
    ss[SIDE] = side
    if k is not None:
        ss[K] = ss[LEARN_K_VALUE] = max(1, min(int(k), max(len(sb.items), 1)))


def load_scenario(key: str, side: str = "before") -> None:
    sc = S.scenario(key)
    sb, k = (sc.before, sc.k_before) if side == "before" else (sc.after, sc.k_after)
    load(sb, k, key, side)


def restore_k(n: int) -> None:
    """Give the K slider its last value back (widget state is dropped while the page is not shown)."""
    ss = st.session_state
    if K not in ss:
        ss[K] = ss.get(LEARN_K_VALUE, 5)
    ss[K] = max(1, min(int(ss[K]), max(n, 1)))
    ss[LEARN_K_VALUE] = ss[K]


def remember_k() -> None:
    st.session_state[LEARN_K_VALUE] = st.session_state[K]


def grade_key(item_id: str) -> str:
    return learn_grade(st.session_state.get(VERSION, 0), item_id)


def unretrieved_key() -> str:
    return learn_unretrieved(st.session_state.get(VERSION, 0))


def store(sb: S.Sandbox) -> None:
    """Keep the list as edited on the page (grades, unretrieved count)."""
    st.session_state[SANDBOX] = sb


def move(index: int, step: int) -> None:
    st.session_state[SANDBOX] = st.session_state[SANDBOX].move(index, step)


def mirror_before_render() -> None:
    """Copy the shared (sidebar) convention values into the page's widgets before they are drawn."""
    ss = st.session_state
    for shared, local in MIRRORS.items():
        ss[local] = ss.get(shared, state.DEFAULTS[shared])


def _write_back(local: str, shared: str) -> None:
    st.session_state[shared] = st.session_state[local]


# ---- widgets -----------------------------------------------------------------------------------
def convention_widgets() -> None:
    """The four convention toggles, mirrored to the sidebar's keys, each with its explanation."""
    mirror_before_render()
    cols = st.columns(len(MIRRORS), gap="medium")
    for col, (shared, local) in zip(cols, MIRRORS.items()):
        with col:
            _convention_widget(shared, local)


def _convention_widget(shared: str, local: str) -> None:
    kw = dict(key=local, on_change=_write_back, args=(local, shared))
    if shared == state.KEY_GAIN:
        st.radio("NDCG gain", list(sidebar.GAIN_LABELS), format_func=sidebar.GAIN_LABELS.get, **kw)
    elif shared == state.KEY_OOS:
        st.radio("Out-of-scope queries", list(sidebar.OOS_LABELS), format_func=sidebar.OOS_LABELS.get, **kw)
    elif shared == state.KEY_RECALL:
        st.radio("Recall denominator", list(sidebar.RECALL_LABELS), format_func=sidebar.RECALL_LABELS.get, **kw)
    else:
        st.number_input("Relevance level L (grade ≥ L is relevant)", min_value=1, max_value=10, step=1, **kw)
    st.caption(CONVENTION_HELP[shared])


# ---- charts ------------------------------------------------------------------------------------
def curve_chart(curve: pd.DataFrame, k: int, highlight: tuple[str, ...] = ("precision", "recall")) -> alt.LayerChart:
    """Every metric against K for the sandbox list; precision and recall drawn bold."""
    from ui.views import k_x, label, metric_scale

    df = curve.copy()
    df["Metric"] = [label(m) for m in df["metric"]]
    df["bold"] = df["metric"].isin(highlight)
    metrics = list(dict.fromkeys(df["metric"]))
    scale = metric_scale(metrics)
    base = alt.Chart(df).encode(
        x=k_x(int(df["k"].max()) if len(df) else 2),
        y=alt.Y("value:Q", title="value", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("Metric:N", scale=scale, legend=alt.Legend(orient="bottom", title=None, columns=2)),
        tooltip=["Metric", "k", alt.Tooltip("value:Q", format=".3f")])
    lines = base.mark_line(point=True).encode(
        strokeWidth=alt.condition("datum.bold", alt.value(3.5), alt.value(1.2)),
        opacity=alt.condition("datum.bold", alt.value(1.0), alt.value(0.45)))
    rule = alt.Chart(pd.DataFrame({"k": [k]})).mark_rule(strokeDash=[4, 4], color="#555").encode(x="k:Q")
    return (lines + rule).properties(height=260)
