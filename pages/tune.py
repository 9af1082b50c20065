"""Tune the retriever: a sweep over chunking and retrievers, a Pareto chart of quality against cost,
and an honest held-out check (rag_metrics.tuning; the CLI's `rag-metrics sweep`)."""
from __future__ import annotations

import streamlit as st

from rag_metrics.errors import InputError
from ui import state, views
from ui import tune as tv
from ui.keys import TUNE_CANCEL, TUNE_RESULT
from ui.shell import ensure_shell

ensure_shell()

ctx = state.current_or_stop()
views.page_header("Tune the retriever", ctx)
views.show_notice()
st.caption("Which chunk size, which retriever, which fusion weight? Every configuration is scored on the same labels "
           "(evidence located in each chunking), its cost measured on this machine, and the choice re-checked on "
           "questions it never saw. The same as `rag-metrics sweep`.")
try:
    evidence, labels_line = tv.evidence_for(ctx)
except InputError as e:
    views.input_error(e, "No sweep on this corpus yet")
    st.stop()
st.caption(labels_line)

views.section("The sweep")
grid = tv.form(ctx)
if grid is not None:
    st.caption(views.esc(tv.plan_line(grid, ctx, evidence)))
    views.cancelled_notice(TUNE_CANCEL, "The sweep")
    if st.button("Run the sweep", type="primary", icon=":material/tune:", key="tune_run"):
        tv.run(grid, ctx, evidence)
tv.upload()

views.section("Results", "Quality against cost. Click a point (or pick below) to see its wins and losses against the "
              "current system and its configuration.")
if st.session_state.get(TUNE_RESULT) is None:
    st.info("No sweep yet: run one above, or load a sweep.json.", icon=":material/tune:")
else:
    tv.results(ctx)
