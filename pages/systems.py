"""Systems: evaluate your own retriever (uploaded runs and RAG logs, live HTTP / pgvector / Qdrant)
beside the bundled one, with judged@K and the pooled labelling queue."""
from __future__ import annotations

import streamlit as st

from ui import state, systems, views
from ui.shell import ensure_shell

ensure_shell()

ctx = state.current_or_stop()
st.title("Systems")
views.conventions_caption()
st.caption(f"Every system ranks the same {len(ctx.golden)} golden questions of "
           f"{views.esc(ctx.corpus.label or ctx.settings.corpus)} and is judged the same way (K = {ctx.k} and the "
           "conventions come from the sidebar).")
msg = state.notice()
if msg:
    getattr(st, msg[0])(msg[1])

add_upload, add_conn = st.tabs(["Add by upload", "Add by connection"])
with add_upload:
    systems.add_upload_form(ctx)
with add_conn:
    systems.add_connection_form(ctx)

evals = systems.evaluations(ctx)
if systems.retry_button(evals):
    evals = systems.evaluations(ctx, retry_failed=True)
views.section("Metrics", f"Means at K = {ctx.k}, with judged@{ctx.k} (the share of the top {ctx.k} that carries a "
              "label) beside them when the golden set records non-relevant labels.")
systems.systems_table(ctx, evals)
views.section("Coverage and matching", "How each system's rows were matched to the golden questions.")
systems.system_details(ctx, evals)
views.section("Pooled labelling queue", "Unjudged chunks in the top K of every system.")
systems.pool_section(ctx, evals)
