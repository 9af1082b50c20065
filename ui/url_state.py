"""The view in the URL: page, K, corpus and system as query parameters, so a link reproduces the view.

Called by the shell (:func:`ui.shell.main`) around the shared sidebar:

- :func:`apply_once` (before the sidebar widgets are drawn, once per session): reads
  ``?page=…&k=…&corpus=…&system=…`` into the session state.  A value that is not valid (``k=abc``,
  ``k=0``, ``system=foo``, a corpus not loaded, an unknown page) is ignored with a gentle warning;
  never a traceback.  ``system`` is a bundled retriever (dense, bm25, hybrid) or the name of a
  system stored for the corpus (Systems page); the older ``retriever=`` is read as ``system=``.
  Names only: a system's settings, and never a secret, stay in the workspace.
- :func:`write` (after the sidebar, every run): writes the current page, K, corpus and system back,
  only when they differ from what the URL already says (no needless browser history entries).

``conventions=lesson`` opens the view with the lesson's conventions preset (and is written while
that preset is on), so a teacher can hand the class one link with the lesson's numbers.

The page is also in the URL path (``/failures``); the ``page`` parameter lets a link to the root
(``/?page=failures&k=3``) open another page.  Other query parameters are left alone.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import streamlit as st

from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, RETRIEVER_KINDS
from ui import session, state
from ui.keys import URL_APPLIED as _APPLIED
from ui.keys import URL_WARNINGS as _WARNINGS

PARAM_PAGE = "page"
PARAM_K = "k"
PARAM_RETRIEVER = "retriever"   # older links; read as PARAM_SYSTEM
PARAM_CORPUS = "corpus"
PARAM_SYSTEM = "system"
PARAM_CONVENTIONS = "conventions"   # a conventions preset (rag_metrics.metrics.presets); written only for "lesson"



def _shown(value: str) -> str:
    """A URL value quoted for a message: at most 40 characters, markdown escaped (shown as text)."""
    from ui.views import esc

    return esc(repr(value[:40]))


def parse(params: Mapping[str, Any], pages: Mapping[str, str], corpora: Sequence[str] = (state.SAMPLE,),
          systems: Callable[[str], Sequence[str]] | None = None) -> tuple[dict[str, Any], list[str]]:
    """Validate URL parameters.  Returns ``(values, warnings)``: ``values`` has the valid ones
    (``page`` as the page's url path, ``k`` as an int, ``corpus``, ``system``), ``warnings`` one
    line per ignored value.  ``pages`` maps url paths to page titles; ``corpora`` are the corpus
    names loaded; ``systems(corpus)`` the system names of a corpus (default: the bundled ones)."""
    values: dict[str, Any] = {}
    warnings: list[str] = []

    def one(name: str) -> str | None:
        v = params.get(name)
        if isinstance(v, (list, tuple)):
            v = v[-1] if v else None
        return None if v is None else str(v).strip()

    k = one(PARAM_K)
    if k is not None and k != "":
        try:
            kv = int(k)
        except ValueError:
            kv = None
        if kv is None or not 1 <= kv <= DEFAULT_DEPTH:
            warnings.append(f"Ignored k={_shown(k)} from the link: K must be a whole number from 1 to {DEFAULT_DEPTH}.")
        else:
            values["k"] = kv
    c = one(PARAM_CORPUS)
    corpus = state.SAMPLE
    if c is not None and c != "":
        if c in corpora:
            values["corpus"] = corpus = c
        else:
            warnings.append(f"Ignored corpus={_shown(c)} from the link: it is not loaded here; load it on the "
                            "Corpus explorer page.")
    param = PARAM_SYSTEM if one(PARAM_SYSTEM) not in (None, "") else PARAM_RETRIEVER
    r = one(param)
    if r is not None and r != "":
        names = list(systems(corpus) if systems is not None else RETRIEVER_KINDS)
        if r in names:
            values["system"] = r
        else:
            warnings.append(f"Ignored {param}={_shown(r)} from the link: use one of {', '.join(RETRIEVER_KINDS)}"
                            " or a system added on the Systems page for this corpus.")
    cv = one(PARAM_CONVENTIONS)
    if cv is not None and cv != "":
        from rag_metrics.metrics.presets import PRESETS

        if cv in PRESETS:
            values["conventions"] = cv
        else:
            warnings.append(f"Ignored conventions={_shown(cv)} from the link: use one of {', '.join(PRESETS)}.")
    p = one(PARAM_PAGE)
    if p is not None and p != "":
        if p in pages:
            values["page"] = p
        else:
            warnings.append(f"Ignored page={_shown(p)} from the link: no such page.")
    return values, warnings


def apply_once(current_page: str, pages: Mapping[str, str], page_files: Mapping[str, str]) -> None:
    """First run of a session: read the query parameters into the state (and open the page named
    by ``page`` when it is not the current one).  ``pages``: url path -> title; ``page_files``:
    url path -> script path (for ``st.switch_page``)."""
    ss = session.store()
    if ss.get(_APPLIED):
        return
    ss[_APPLIED] = True
    try:
        values, warnings = parse(st.query_params.to_dict(), pages, state.corpus_names(), state.system_names)
    except Exception as err:  # noqa: BLE001 - a malformed URL must never stop the app
        values, warnings = {}, [f"Ignored the link's parameters ({type(err).__name__})."]
    if "k" in values:
        ss[state.KEY_K] = values["k"]
    if "corpus" in values:
        ss[state.KEY_CORPUS] = values["corpus"]
    if "system" in values:
        ss[state.KEY_SYSTEM] = values["system"]
        if values["system"] in RETRIEVER_KINDS:
            ss[state.KEY_RETRIEVER] = values["system"]
    if "conventions" in values:
        state.apply_preset(values["conventions"])
    if warnings:
        ss[_WARNINGS] = warnings
    target = values.get("page")
    if target and target != current_page and target in page_files:
        keep = {k: v for k, v in st.query_params.to_dict().items()}
        st.switch_page(page_files[target], query_params=keep)


def show_warnings() -> None:
    """Show (once) what was ignored in the link."""
    for msg in session.pop(_WARNINGS, []):
        st.warning(msg, icon=":material/link_off:")


def wanted(page: str) -> dict[str, str]:
    """The query parameters of the current view."""
    ss = session.store()
    return {PARAM_PAGE: page, PARAM_K: str(int(ss.get(state.KEY_K, state.DEFAULTS[state.KEY_K]))),
            PARAM_CORPUS: str(ss.get(state.KEY_CORPUS, state.SAMPLE)),
            PARAM_SYSTEM: str(ss.get(state.KEY_SYSTEM, state.DEFAULTS[state.KEY_SYSTEM]))}


def write(page: str) -> None:
    """Write page, K, corpus and system into the URL when they differ from it (an older
    ``retriever=`` is replaced by ``system=``)."""
    try:
        want = wanted(page)
        qp = st.query_params
        if PARAM_RETRIEVER in qp:
            del qp[PARAM_RETRIEVER]
        for name, value in want.items():
            if qp.get(name) != value:
                qp[name] = value
        if state.preset() == "lesson":  # a shared link opens with the lesson's numbers
            if qp.get(PARAM_CONVENTIONS) != "lesson":
                qp[PARAM_CONVENTIONS] = "lesson"
        elif PARAM_CONVENTIONS in qp:
            del qp[PARAM_CONVENTIONS]
    except Exception:  # noqa: BLE001 - the URL is a convenience; never break the page for it
        pass
