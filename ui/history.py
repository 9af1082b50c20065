"""Streamlit parts of the History page: save the current evaluation as a named run, each metric
over the saved runs with its confidence interval, and a paired comparison of two runs by the one
decision rule.  Logic lives in :mod:`rag_metrics.compare.history`; runs are kept beside the corpus's
systems (:meth:`rag_metrics.systems.store.SystemStore.history`)."""
from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from rag_metrics.compare.history import (
    RunHistory,
    SavedRun,
    compare_runs,
    metric_over_runs,
    parse_saved_run,
    regressions,
    saved_run,
)
from rag_metrics.compare.paired import DECISION_RULE
from rag_metrics.errors import InputError
from rag_metrics.formats import sniff
from rag_metrics.systems.store import SystemStore
from ui import compare_views, session, state, views
from ui.keys import HISTORY_A as KEY_A
from ui.keys import HISTORY_ADDED as _ADDED
from ui.keys import HISTORY_B as KEY_B
from ui.keys import HISTORY_METRIC as KEY_METRIC
from ui.keys import HISTORY_NAME as KEY_NAME
from ui.keys import HISTORY_UPLOAD as KEY_UPLOAD

__all__ = ["KEY_A", "KEY_B", "KEY_METRIC", "KEY_NAME", "KEY_UPLOAD", "add_saved_file", "comparison", "history",
           "over_runs", "save_form", "saved_keys"]

#: Cutoffs saved with every run (besides the sidebar's K).
SAVED_KS = (1, 3, 5, 10)


def history(ctx: Any) -> RunHistory:
    """The runs saved for the current corpus."""
    return SystemStore.for_corpus(ctx.settings.corpus).history()


def saved_keys(ctx: Any) -> list[str]:
    """The metric keys a saved run holds: the sidebar's metrics at 1, 3, 5, 10 and the current K."""
    ks = sorted(set(SAVED_KS) | {int(ctx.k)})
    return [f"{m}@{k}" for m in ctx.settings.metrics for k in ks if k <= ctx.memo.depth]


def save_form(ctx: Any) -> None:
    """Name and save the current evaluation (the sidebar's system and conventions)."""
    with st.form("history_save", clear_on_submit=True):
        name = st.text_input("Run name", key=KEY_NAME, placeholder=f"{ctx.settings.system_name} before the reranker")
        submitted = st.form_submit_button("Save this evaluation as a run", type="primary", icon=":material/save:")
    if not submitted:
        return
    if not (name or "").strip():
        st.error("Give the run a name.")
        return
    s = ctx.settings
    settings = {"corpus": s.corpus, "chunk_size": s.chunk_size, "chunk_overlap": s.chunk_overlap, "k": ctx.k,
                "depth": ctx.memo.depth, "system": s.system_name}
    try:
        run = saved_run(ctx.result, saved_keys(ctx), name, s.system_name, settings)
        history(ctx).add(run)
    except InputError as e:
        views.input_error(e, "Not saved")
        return
    for key in (KEY_A, KEY_B):  # compare the new run with the one before it
        state.pop(key)
    state.notice(f"Saved run {views.esc(run.name)} ({len(run.query_ids)} queries, {len(run.metrics)} metric keys).")
    st.rerun()


def add_saved_file() -> None:
    """Add a run saved by the CLI (``--save-run FILE.json``) to this corpus's history."""
    up = st.file_uploader("Add a run saved by the CLI (rag-metrics evaluate ... --save-run FILE.json)",
                          type=["json", "gz"], key=KEY_UPLOAD)
    if up is None or session.value(_ADDED) == (up.name, up.size):
        return
    try:  # the one reader decides what the file is (gzip taken off)
        found = sniff(up.getvalue(), up.name)
    except InputError as e:
        views.input_error(e, "Not added")
        return
    if found.kind not in ("saved_run", "records", "unknown"):  # another tool's file: say what it is
        st.error(f"{views.esc(up.name)}: looks like {views.esc(found.label)}; History takes the JSON written by "
                 "`rag-metrics evaluate --save-run`. Bring a run or log in on the Bring your system page.")
        return
    text = found.data.decode("utf-8-sig", "replace")
    try:
        run = parse_saved_run(text, up.name)
        ctx_history = SystemStore.for_corpus(state.settings().corpus).history()
        ctx_history.add(run)
    except InputError as e:
        views.input_error(e, "Not added")
        return
    session.set_value(_ADDED, (up.name, up.size))
    for key in (KEY_A, KEY_B):
        state.pop(key)
    state.notice(f"Added run {views.esc(run.name)} from {views.esc(up.name)}.")
    st.rerun()


def runs_table(runs: list[SavedRun]) -> pd.DataFrame:
    """One row per saved run: name, system, time, queries, golden fingerprint."""
    return pd.DataFrame([{"run": r.name, "system": r.system, "saved (UTC)": r.created, "queries": len(r.query_ids),
                          "golden set": r.golden_fingerprint[:10]} for r in runs])


def over_runs(runs: list[SavedRun]) -> None:
    """A metric over the saved runs with its 95 % bootstrap CI (chart and table)."""
    keys = list(dict.fromkeys(k for r in runs for k in r.metrics))
    state.keep_choice(KEY_METRIC, keys, keys[0])
    key = st.selectbox("Metric", keys, key=KEY_METRIC)
    df = metric_over_runs(runs, key)
    df["order"] = range(1, len(df) + 1)
    base = alt.Chart(df).encode(x=alt.X("order:O", title="run (oldest first)", axis=alt.Axis(labelAngle=0)),
                                tooltip=["run", "system", "created", alt.Tooltip("mean:Q", format=".3f"),
                                         alt.Tooltip("ci_low:Q", format=".3f"), alt.Tooltip("ci_high:Q", format=".3f"),
                                         "n"])
    chart = (base.mark_rule().encode(y=alt.Y("ci_low:Q", title=key, scale=alt.Scale(domain=[0, 1])), y2="ci_high:Q")
             + base.mark_line(point=True).encode(y="mean:Q"))
    st.altair_chart(chart.properties(height=260), width="stretch")
    shown = df.drop(columns=["order"])
    st.dataframe(shown, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(c, format="%.3f") for c in ("mean", "ci_low",
                                                                                             "ci_high")})


def comparison(runs: list[SavedRun]) -> None:
    """Paired comparison of two saved runs (A: the baseline, B: the later run) by the decision rule."""
    names = [r.name for r in runs]
    state.keep_choice(KEY_A, names, names[-2] if len(names) > 1 else names[0])
    state.keep_choice(KEY_B, names, names[-1])
    c1, c2 = st.columns(2)
    a = c1.selectbox("A (baseline)", names, key=KEY_A)
    b = c2.selectbox("B (compared with A)", names, key=KEY_B)
    ra = next(r for r in runs if r.name == a)
    rb = next(r for r in runs if r.name == b)
    try:
        table, notes = compare_runs(ra, rb)
    except InputError as e:
        views.input_error(e)
        return
    for note in notes:
        st.caption(views.esc(note[0].upper() + note[1:]) + ".")
    st.dataframe(compare_views.verdict_rows(table, list(table["key"])), hide_index=True, width="stretch",
                 column_config=compare_views.verdict_columns())
    bad = regressions(table)
    if len(bad):
        st.error(f"{views.esc(b)} is significantly worse than {views.esc(a)} on "
                 f"{', '.join(bad['key'])} (the CLI's --fail-on-regression would exit 1).",
                 icon=":material/trending_down:")
    else:
        st.success(f"No metric of {views.esc(b)} is significantly worse than {views.esc(a)}.",
                   icon=":material/check_circle:")
    with st.expander("Each verdict in a sentence", icon=":material/notes:"):
        st.markdown("\n".join(f"- {views.esc(t)}" for t in table["sentence"]))


def remove_buttons(ctx: Any, runs: list[SavedRun]) -> None:
    """Remove a saved run."""
    names = [r.name for r in runs]
    c1, c2 = st.columns([3, 1])
    pick = c1.selectbox("Run to remove", names, key="history_remove_pick")
    if c2.button("Remove", key="history_remove"):
        history(ctx).remove(pick)
        state.notice(f"Removed run {views.esc(pick)}.")
        st.rerun()


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    ctx = state.current_or_stop()
    views.page_header("History", ctx)
    msg = state.notice()
    if msg:
        getattr(st, msg[0])(msg[1])

    views.section("Save this evaluation",
                  f"The sidebar's system ({views.esc(ctx.settings.system_name)}), conventions, the golden set's "
                  "fingerprint and every query's value of each metric at 1, 3, 5, 10 and K, with the time. The same "
                  "file "
                  "as `rag-metrics evaluate ... --save-run FILE.json`.")
    save_form(ctx)
    add_saved_file()

    runs = history(ctx).runs()
    if not runs:
        st.info("No run saved yet for this corpus.", icon=":material/history:")
        st.stop()
    views.section("Saved runs")
    st.dataframe(runs_table(runs), hide_index=True, width="stretch")
    views.section("Each metric over runs", "Mean with its 95% bootstrap confidence interval, oldest run first.")
    over_runs(runs)
    views.section("Compare two runs", "Paired on the queries both runs include. " + DECISION_RULE)
    comparison(runs)
    with st.expander("Remove a run", icon=":material/delete:"):
        remove_buttons(ctx, runs)
