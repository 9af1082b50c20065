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

from ui import navigation
from ui.navigation import CLASS_PAGE, DEFAULT_PAGE, PAGES, TEACHER_PAGES  # noqa: F401 - where they were read

_LOCAL = threading.local()

# Our own static styling (no user content): tighter top padding, tabular figures in cards.
_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.2rem; }
[data-testid="stMetricValue"] { font-variant-numeric: tabular-nums; }
[data-testid="stCaptionContainer"] { font-variant-numeric: tabular-nums; }
/* Readable on a projector (1024x768, 1280x720): a metric's label and value are never cut to "Hi… 0…";
   rows of cards wrap onto more rows instead of squeezing six cards into 700 px. */
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * { white-space: normal !important;
  overflow: visible !important; text-overflow: clip !important; }
/* ... and wrapped between words, never inside one ("Unk|now|n ids"): a word is broken only when it
   cannot fit a line of its own. */
[data-testid="stMetricLabel"] p { word-break: normal !important; overflow-wrap: break-word !important; }
/* A projector's width for the tables: Streamlit's wide layout keeps 5rem each side. */
@media (max-width: 1400px) {
  [data-testid="stMainBlockContainer"] { padding-left: 2.5rem; padding-right: 2.5rem; }
}
[data-testid="stMetricValue"], [data-testid="stMetricValue"] * { overflow: visible !important;
  text-overflow: clip !important; }
[class*="st-key-cards_"] [data-testid="stHorizontalBlock"] { flex-wrap: wrap; }
[class*="st-key-cards_"] [data-testid="stColumn"] { min-width: 9.5rem; flex: 1 1 9.5rem; }
[data-testid="stTable"] td, [data-testid="stTable"] th { white-space: normal; overflow-wrap: break-word; }
/* A button's label wraps onto a second line in a narrow column instead of ending in "…". */
[data-testid^="stBaseButton"] [data-testid="stMarkdownContainer"],
[data-testid^="stBaseButton"] [data-testid="stMarkdownContainer"] * { white-space: normal !important;
  overflow: visible !important; text-overflow: clip !important; overflow-wrap: break-word; }
</style>"""

# The tab's icon: an emoji, which the browser draws from a data: URL. A ``:material/...:`` page icon makes
# Streamlit's frontend load the favicon from Google's font server (broken offline, a request outside the lab).
PAGE_ICON = "📊"


def main() -> None:
    """Navigation, shared sidebar, then the selected page: within this session's rerun rate
    (:mod:`ui.rerun_rate`), every file read for the browser within the upload limit
    (:func:`rag_metrics.io.containers.read_budget`)."""
    from rag_metrics.io.containers import read_budget
    from ui import rerun_rate

    st.set_page_config(page_title="RAG Metrics Lab", page_icon=PAGE_ICON, layout="wide")
    rerun_rate.guard()
    with read_budget(int(st.get_option("server.maxUploadSize")) * 1024 * 1024):
        _main()


def _main() -> None:
    from rag_metrics.config import class_mode_on
    from ui import sidebar

    teacher, seated = False, True
    if class_mode_on():  # who this browser is, before anything reads a workspace
        from rag_metrics.server.policy import allowed
        from ui import identity, state

        seated = identity.gate()
        teacher = seated and allowed(state.caller(), "manage-class")
        from ui import embed_budget

        embed_budget.install()  # a student's seat pays for what it embeds (lab.budgets.embed_*)
    page = st.navigation(navigation.sections(teacher), position="sidebar" if seated else "hidden")
    if not seated:  # a full class: a message, the rejoin code and the teacher's sign-in, nothing else
        identity.no_seat_page()
    st.html(_CSS)
    from ui import report_ui, url_state

    shown = navigation.shown_pages(teacher)  # a link to a teacher's page is "no such page" for a student
    stems = {title: path.rsplit("/", 1)[-1].removesuffix(".py") for path, title, _ in shown}
    files = {path.rsplit("/", 1)[-1].removesuffix(".py"): path for path, _, _ in shown}
    here = stems.get(page.title, "")
    url_state.apply_once(here, {v: k for k, v in stems.items()}, files)  # a link's page, K, retriever
    sidebar.render()
    url_state.write(here)
    report_slot = st.sidebar.container()
    _LOCAL.in_shell = True
    try:
        url_state.show_warnings()
        from ui import workspace_ui

        workspace_ui.health_banner()
        page.run()
    finally:
        _LOCAL.in_shell = False
    with report_slot:  # after the page: it needs the page's evaluation (cached by then)
        report_ui.sidebar_button()
    from ui import cache

    cache.warm_in_background()  # once per process, after the first page: the model loads meanwhile


def ensure_shell() -> None:
    """First line of every page: when the page was run without the shell, run the shell (which runs
    this page again inside it) and stop the outer run."""
    if getattr(_LOCAL, "in_shell", False):
        return
    main()
    st.stop()
