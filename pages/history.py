"""History: evaluations saved as named runs, each metric over runs with CIs, and a paired
comparison of any two runs by the one decision rule (the CLI's --save-run / --baseline gate)."""
from __future__ import annotations

import streamlit as st

from rag_metrics.compare.paired import DECISION_RULE
from ui import history as hist
from ui import state, views
from ui.shell import ensure_shell

ensure_shell()

ctx = state.current_or_stop()
views.page_header("History", ctx)
msg = state.notice()
if msg:
    getattr(st, msg[0])(msg[1])

views.section("Save this evaluation",
              f"The sidebar's system ({views.esc(ctx.settings.system_name)}), conventions, the golden set's "
              "fingerprint and every query's value of each metric at 1, 3, 5, 10 and K, with the time. The same file "
              "as `rag-metrics evaluate ... --save-run FILE.json`.")
hist.save_form(ctx)
hist.add_saved_file()

runs = hist.history(ctx).runs()
if not runs:
    st.info("No run saved yet for this corpus.", icon=":material/history:")
    st.stop()
views.section("Saved runs")
st.dataframe(hist.runs_table(runs), hide_index=True, width="stretch")
views.section("Each metric over runs", "Mean with its 95% bootstrap confidence interval, oldest run first.")
hist.over_runs(runs)
views.section("Compare two runs", "Paired on the queries both runs include. " + DECISION_RULE)
hist.comparison(runs)
with st.expander("Remove a run", icon=":material/delete:"):
    hist.remove_buttons(ctx, runs)
