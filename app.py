"""RAG Metrics Lab: entry point (``streamlit run app.py``).

Builds the shared sidebar and runs ``st.navigation`` over the files in ``pages/``.  Every page
reads the same choices through ``ui.state.current()``.
"""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import streamlit as st  # noqa: E402

st.set_page_config(page_title="RAG Metrics Lab", page_icon=":material/query_stats:", layout="wide")

from ui import sidebar  # noqa: E402

#: Pages by section.  Later pages (Learn, Compare, RAGAS, health, corpus map, presenter) add
#: entries here; each is a thin script in pages/ that calls ``ui.state.current()``.
PAGES = {
    "Evaluate": [
        st.Page("pages/dashboard.py", title="Dashboard", icon=":material/dashboard:", url_path="dashboard",
                default=True),
        st.Page("pages/failures.py", title="Failures and drill-down", icon=":material/troubleshoot:",
                url_path="failures"),
    ],
    "Data": [
        st.Page("pages/golden_set.py", title="Golden set editor", icon=":material/edit_note:", url_path="golden"),
        st.Page("pages/corpus_explorer.py", title="Corpus explorer", icon=":material/library_books:",
                url_path="corpus"),
    ],
}

page = st.navigation(PAGES)
with st.sidebar:
    st.markdown("**RAG Metrics Lab**")
sidebar.render()
page.run()
