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

#: Pages by section.  Later pages (Learn, Compare, RAGAS, health, corpus map, presenter) add
#: entries here; each is a thin script in pages/ that starts with ``ensure_shell()`` and then calls
#: ``ui.state.current_or_stop()``.  ``url_path`` must equal the file stem (see the module docstring).
PAGES: dict[str, list[tuple[str, str, str]]] = {
    "Start here": [
        ("pages/lesson.py", "Lesson", ":material/school:"),
        ("pages/exercises.py", "Exercises: write the metric", ":material/code:"),
        ("pages/class_progress.py", "Class progress", ":material/groups:"),
    ],
    "Evaluate": [
        ("pages/dashboard.py", "Dashboard", ":material/dashboard:"),
        ("pages/bring_your_system.py", "Bring your system", ":material/upload_file:"),
        ("pages/failures.py", "Failures and drill-down", ":material/troubleshoot:"),
        ("pages/compare.py", "Compare A vs B", ":material/compare_arrows:"),
        ("pages/systems.py", "Systems", ":material/hub:"),
        ("pages/history.py", "History", ":material/history:"),
        ("pages/tune.py", "Tune the retriever", ":material/tune:"),
    ],
    "Learn": [
        ("pages/learn.py", "Learn: metric sandbox", ":material/school:"),
    ],
    "Data": [
        ("pages/golden_set.py", "Golden set editor", ":material/edit_note:"),
        ("pages/corpus_explorer.py", "Corpus explorer", ":material/library_books:"),
    ],
    "Insights": [
        ("pages/ragas.py", "RAGAS context metrics", ":material/join_inner:"),
        ("pages/answers.py", "Answers", ":material/fact_check:"),
        ("pages/health.py", "Golden-set health", ":material/health_and_safety:"),
        ("pages/corpus_map.py", "Corpus map", ":material/scatter_plot:"),
        ("pages/presenter.py", "Presenter view", ":material/co_present:"),
    ],
}


#: The teacher's Class page (class mode): in the menu for the teacher only; registered hidden for
#: everyone else, so its URL runs the page, which refuses (:func:`ui.identity.class_page`).
CLASS_PAGE = ("pages/roster.py", "Class", ":material/groups:")
#: The page served at "/" (the Lesson is first in the menu; the Dashboard stays the home page).
DEFAULT_PAGE = "pages/dashboard.py"
#: Pages shown only to the teacher (and, in single-user mode, the operator): ``ui.lesson.may_see_class``.
TEACHER_PAGES = ("pages/class_progress.py",)

#: Internal id of the default page (served at "/"; Streamlit hashes a page by its ``url_path``): not
#: the file stem, which the hidden alias below takes.
_ROOT_ID = "home"


def _shown_pages(teacher: bool = False) -> list[tuple[str, str, str]]:
    """Every ``(path, title, icon)`` of :data:`PAGES` this session may open (:data:`TEACHER_PAGES`
    only for the teacher, or the operator in single-user mode)."""
    from rag_metrics.config import class_mode_on

    teacher = teacher or not class_mode_on()  # single-user mode: the operator runs the class
    return [item for items in PAGES.values() for item in items if teacher or item[0] not in TEACHER_PAGES]


def _pages(teacher: bool = False) -> dict[str, list[st.Page]]:
    """The ``st.navigation`` sections.

    :data:`DEFAULT_PAGE` (the Dashboard) is the default, served at "/" (the Lesson is listed first).
    Streamlit 1.67 gives a default page no other URL (``Page.url_path`` is ``""`` whatever ``url_path``
    was passed, and a URL path is resolved against those paths only), so "/dashboard" showed the "Page
    not found" dialog before running the default page.  A hidden page of the same file at its stem
    serves "/dashboard" too (Streamlit allows one file under several url paths).  It is registered after
    every visible page, so ``st.switch_page("pages/dashboard.py")`` and the menu still open "/".

    The alias renders the page itself rather than ``st.switch_page``-ing to "/": that redirect was
    tried; it costs a rerun, rewrites the URL, and (switching before the sidebar is drawn) dropped
    the sidebar's widget values when an AppTest switched to the file.  The one cosmetic difference:
    opened as "/dashboard", no menu entry is highlighted (the menu marks the running page, and the
    alias is hidden)."""
    out: dict[str, list[st.Page]] = {}
    alias: st.Page | None = None
    shown = _shown_pages(teacher)
    for section, items in PAGES.items():
        out[section] = []
        for path, title, icon in items:
            if (path, title, icon) not in shown:
                continue
            stem = path.rsplit("/", 1)[-1].removesuffix(".py")
            if path == DEFAULT_PAGE:  # the default
                out[section].append(st.Page(path, title=title, icon=icon, url_path=_ROOT_ID, default=True))
                alias = st.Page(path, title=title, icon=icon, url_path=stem, visibility="hidden")
            else:
                out[section].append(st.Page(path, title=title, icon=icon, url_path=stem))
    path, title, icon = CLASS_PAGE
    roster = st.Page(path, title=title, icon=icon, url_path="roster", visibility="visible" if teacher else "hidden")
    if teacher:  # beside Class progress at the top of the menu, never behind "View more"
        out["Start here"].append(roster)
    if alias is not None:
        out[next(reversed(out))].append(alias)  # after every visible page (registration order matters)
    if not teacher:
        out[next(reversed(out))].append(roster)
    return out


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
    page = st.navigation(_pages(teacher), position="sidebar" if seated else "hidden")
    if not seated:  # a full class: a message, the rejoin code and the teacher's sign-in, nothing else
        identity.no_seat_page()
    st.html(_CSS)
    from ui import report_ui, url_state

    shown = _shown_pages(teacher)  # a link to a teacher's page is "no such page" for a student
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
