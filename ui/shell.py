"""The app shell: navigation over ``pages/`` and the shared sidebar (called by ``app.py``).

Why the guard: Streamlit still has a legacy ("MPA v1") code path for apps with a folder named
``pages/`` next to the entry script.  It is taken for a session run that starts before any
``st.navigation`` call in the process (e.g. the first request after a restart lands directly on
``/failures``, and every ``AppTest`` rerun); it then runs the page file *without* the entry
script, so no sidebar.  Each page therefore starts with :func:`ensure_shell`, which runs the shell
itself when the page was not started by it (cheap: one thread-local flag).
"""
from __future__ import annotations

import threading

import streamlit as st

_LOCAL = threading.local()

# Our own static styling (no user content): tighter top padding, tabular figures in cards.
_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.2rem; }
[data-testid="stMetricValue"] { font-variant-numeric: tabular-nums; }
[data-testid="stCaptionContainer"] { font-variant-numeric: tabular-nums; }
</style>"""

#: Pages by section.  Later pages (Learn, Compare, RAGAS, health, corpus map, presenter) add
#: entries here; each is a thin script in pages/ that starts with ``ensure_shell()`` and then calls
#: ``ui.state.current_or_stop()``.  ``url_path`` must equal the file stem (see the module docstring).
PAGES: dict[str, list[tuple[str, str, str]]] = {
    "Evaluate": [
        ("pages/dashboard.py", "Dashboard", ":material/dashboard:"),
        ("pages/failures.py", "Failures and drill-down", ":material/troubleshoot:"),
    ],
    "Data": [
        ("pages/golden_set.py", "Golden set editor", ":material/edit_note:"),
        ("pages/corpus_explorer.py", "Corpus explorer", ":material/library_books:"),
    ],
}


def _pages() -> dict[str, list[st.Page]]:
    out: dict[str, list[st.Page]] = {}
    first = True
    for section, items in PAGES.items():
        out[section] = []
        for path, title, icon in items:
            stem = path.rsplit("/", 1)[-1].removesuffix(".py")
            out[section].append(st.Page(path, title=title, icon=icon, url_path=stem, default=first))
            first = False
    return out


def main() -> None:
    """Navigation, shared sidebar, then the selected page."""
    from ui import sidebar

    st.set_page_config(page_title="RAG Metrics Lab", page_icon=":material/query_stats:", layout="wide")
    page = st.navigation(_pages())
    st.html(_CSS)
    sidebar.render()
    _LOCAL.in_shell = True
    try:
        page.run()
    finally:
        _LOCAL.in_shell = False


def ensure_shell() -> None:
    """First line of every page: when the page was run without the shell, run the shell (which runs
    this page again inside it) and stop the outer run."""
    if getattr(_LOCAL, "in_shell", False):
        return
    main()
    st.stop()
