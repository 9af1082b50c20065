"""The app's pages: the menu's sections, the default page, who may see which page, and the ``st.navigation``
sections built from them.  The shell draws the menu from here; a feature that links to a page (the Lesson's link
to the Exercises) reads it here too, so no feature sits above the shell.
"""
from __future__ import annotations

import streamlit as st

__all__ = ["PAGES", "CLASS_PAGE", "DEFAULT_PAGE", "TEACHER_PAGES", "registered", "sections", "shown_pages"]


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


def shown_pages(teacher: bool = False) -> list[tuple[str, str, str]]:
    """Every ``(path, title, icon)`` of :data:`PAGES` this session may open (:data:`TEACHER_PAGES`
    only for the teacher, or the operator in single-user mode)."""
    from rag_metrics.config import class_mode_on

    teacher = teacher or not class_mode_on()  # single-user mode: the operator runs the class
    return [item for items in PAGES.values() for item in items if teacher or item[0] not in TEACHER_PAGES]


def sections(teacher: bool = False) -> dict[str, list[st.Page]]:
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
    shown = shown_pages(teacher)
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


def registered(path: str) -> bool:
    """Whether ``path`` (``"pages/<stem>.py"``) is a page of the menu (``st.page_link`` needs a registered page)."""
    return any(p == path for items in PAGES.values() for p, _, _ in items)
