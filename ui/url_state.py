"""The view in the URL: page, K and retriever as query parameters, so a link reproduces the view.

Called by the shell (:func:`ui.shell.main`) around the shared sidebar:

- :func:`apply_once` (before the sidebar widgets are drawn, once per session): reads
  ``?page=…&k=…&retriever=…`` into the session state.  A value that is not valid (``k=abc``,
  ``k=0``, ``retriever=foo``, an unknown page) is ignored with a gentle warning; never a traceback.
- :func:`write` (after the sidebar, every run): writes the current page, K and retriever back,
  only when they differ from what the URL already says (no needless browser history entries).

The page is also in the URL path (``/failures``); the ``page`` parameter lets a link to the root
(``/?page=failures&k=3``) open another page.  Other query parameters are left alone.
"""
from __future__ import annotations

from typing import Any, Mapping

import streamlit as st

from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, RETRIEVER_KINDS
from ui import state

PARAM_PAGE = "page"
PARAM_K = "k"
PARAM_RETRIEVER = "retriever"

_APPLIED = "_url_applied"        # session flag: the URL was read into the state
_WARNINGS = "_url_warnings"      # messages shown once, on the page the link opened


def _shown(value: str) -> str:
    """A URL value quoted for a message: at most 40 characters, markdown escaped (shown as text)."""
    from ui.views import esc

    return esc(repr(value[:40]))


def parse(params: Mapping[str, Any], pages: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Validate URL parameters.  Returns ``(values, warnings)``: ``values`` has the valid ones
    (``page`` as the page's url path, ``k`` as an int, ``retriever``), ``warnings`` one line per
    ignored value.  ``pages`` maps url paths to page titles."""
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
    r = one(PARAM_RETRIEVER)
    if r is not None and r != "":
        if r in RETRIEVER_KINDS:
            values["retriever"] = r
        else:
            warnings.append(f"Ignored retriever={_shown(r)} from the link: use one of {', '.join(RETRIEVER_KINDS)}.")
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
    ss = st.session_state
    if ss.get(_APPLIED):
        return
    ss[_APPLIED] = True
    try:
        values, warnings = parse(st.query_params.to_dict(), pages)
    except Exception as err:  # noqa: BLE001 - a malformed URL must never stop the app
        values, warnings = {}, [f"Ignored the link's parameters ({type(err).__name__})."]
    if "k" in values:
        ss[state.KEY_K] = values["k"]
    if "retriever" in values:
        ss[state.KEY_RETRIEVER] = values["retriever"]
    if warnings:
        ss[_WARNINGS] = warnings
    target = values.get("page")
    if target and target != current_page and target in page_files:
        keep = {k: v for k, v in st.query_params.to_dict().items()}
        st.switch_page(page_files[target], query_params=keep)


def show_warnings() -> None:
    """Show (once) what was ignored in the link."""
    for msg in st.session_state.pop(_WARNINGS, []):
        st.warning(msg, icon=":material/link_off:")


def wanted(page: str) -> dict[str, str]:
    """The query parameters of the current view."""
    ss = st.session_state
    return {PARAM_PAGE: page, PARAM_K: str(int(ss.get(state.KEY_K, state.DEFAULTS[state.KEY_K]))),
            PARAM_RETRIEVER: str(ss.get(state.KEY_RETRIEVER, state.DEFAULTS[state.KEY_RETRIEVER]))}


def write(page: str) -> None:
    """Write page, K and retriever into the URL when they differ from it."""
    try:
        want = wanted(page)
        qp = st.query_params
        for name, value in want.items():
            if qp.get(name) != value:
                qp[name] = value
    except Exception:  # noqa: BLE001 - the URL is a convenience; never break the page for it
        pass
