"""Bring your system: from a RAG app's files (corpus, golden set or reference answers, run / log /
trace) to a verdict on one page; the Corpus explorer, Golden set editor, Systems and the sidebar stay
for details.

``pages/bring_your_system.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import streamlit as st

from ui import bring, bring_mapping, session, state, views
from ui.keys import BRING_FILES, BRING_FROM_LOG, BRING_NAME, BRING_PENDING, BRING_SYSTEM


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    ctx = state.current_or_stop()
    st.title("Bring your system")
    st.caption("Drop what your RAG app has: the corpus (JSONL, .md/.txt files, a LlamaIndex dataset), the golden "
               "set or reference answers (CSV/JSON/JSONL, TREC or BEIR qrels, ranx JSON), and what the system "
               "returned (a TREC or CSV/JSON run, a RAG log, a Phoenix / Langfuse / LangSmith trace export). "
               "Parquet and .gz work too. "
               "docs/your-files.md lists every format.")
    views.show_notice()

    pending = session.pop(BRING_PENDING, None)
    if pending:  # a new corpus was selected on the last run: the golden set and the systems follow now
        from_log = pending["golden_from_log"] or (pending.get("log_corpus", False) and len(ctx.golden) == 0)
        state.notice_outcome(bring.bring_in(ctx, bring.read_dropped(pending["files"]), pending["name"], from_log))
        st.rerun()

    views.section("1. Drop your files")
    files = st.file_uploader("Files", accept_multiple_files=True, key=BRING_FILES, label_visibility="collapsed")
    dropped = [(f.name, f.getvalue()) for f in files or []]

    views.section("2. What the lab read", "One line per file, read by the same reader as the command line.")
    if not dropped:
        st.caption("Nothing dropped yet: each file you drop gets one line here saying what the lab read in it.")
    else:
        items = bring.read_dropped(dropped)
        bring.render_read(items)
        for (fname, fdata), it in zip(dropped, items):  # when sniffing cannot decide, the user says it
            bring_mapping.form(fname, fdata, it.read is not None)
        usable = [it for it in items if it.read is not None]
        with st.form("bring_form"):
            name = st.text_input("System name", key=BRING_NAME, placeholder="my RAG app")
            from_log = st.checkbox("Start the golden set from the log's questions and reference answers (replaces the "
                                   "current golden set)", key=BRING_FROM_LOG) if bring.offers_golden_from_log(items) \
                else False
            go = st.form_submit_button("Bring in and evaluate", type="primary", disabled=not usable)
        if go:
            state.notice_outcome(bring.bring_in(ctx, usable, name or "", bool(from_log)))
            st.rerun()

    views.section("3. Confirm labels", f"The golden set of {views.esc(ctx.corpus.label or ctx.settings.corpus)}.")
    bring.labels_to_confirm(ctx)

    views.section("4. The verdict", f"Means at K = {ctx.k} with 95% bootstrap intervals, by the sidebar's conventions.")
    chosen = session.value(BRING_SYSTEM)
    if bring.pair_verdict(ctx):
        pass
    elif not chosen or not bring.verdict(ctx, chosen):
        st.caption("Bring in a run, RAG log or trace export above to see its verdict here.")
