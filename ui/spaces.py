"""Who this browser session is and which workspace (space) it saves to.

- **Caller** (:func:`caller`, :func:`ui.identity.session_caller`): every permission check asks it.
- **Workspace** (``_space``): the named workspace this browser saves to.  Single-user mode: chosen
  once per session from the URL (``?ws=``, :func:`rag_metrics.workspace.store.choose_space`).  Class
  mode: the caller's own: the shared one for the teacher, the seat's private space for a student, never
  one named by a URL.  Every :class:`Workspace` is built by :func:`workspace`; a private space reads the
  shared files until its first change (:func:`rag_metrics.workspace.store.read_through`).
"""
from __future__ import annotations

import secrets

import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.server.policy import allowed
from rag_metrics.workspace.store import DEFAULT_SPACE, Workspace, choose_space, ensure_space
from ui import session
from ui.context import esc
from ui.identity import session_caller as caller
from ui.keys import CHUNKING, SPACE, TOKEN
from ui.session import drop_golden_sessions, notice

__all__ = ["PARAM_SPACE", "caller", "set_space", "space", "sync_space_param", "workspace"]

PARAM_SPACE = "ws"


def space() -> str:
    """The workspace this session saves to.  Class mode: the caller's own (the shared one for the
    teacher, the seat's for a student; a URL never chooses it).  Single-user mode: chosen once per
    session (URL ``?ws=``, else the shared one)."""
    ss = session.store()
    if not allowed(caller(), "choose-space"):
        return caller().writes_to
    if SPACE not in ss:
        try:
            name, warn = choose_space(st.query_params.get(PARAM_SPACE), ss.get(TOKEN) or secrets.token_hex(4),
                                      class_mode_on=False)
        except (InputError, OSError) as err:
            name, warn = DEFAULT_SPACE, f"Could not open the workspace from the link ({err}); using the shared one."
        ss[SPACE] = name
        if warn:
            notice(esc(warn), "warning")
    return ss[SPACE]


def workspace(name: str) -> Workspace:
    """The saved files of corpus ``name`` in this session's workspace."""
    return Workspace(name, space=space())


def set_space(name: str, *, create: bool = False) -> None:
    """Work in another workspace from now on (``create``: a new one, a copy of the current one)."""
    name = name.strip()
    if create:
        ensure_space(name, copy_from=space())  # raises InputError for a bad name
    ss = session.store()
    ss[SPACE] = name
    ss[CHUNKING] = {}
    drop_golden_sessions()
    sync_space_param()


def sync_space_param() -> None:
    """Carry the workspace in the URL (only when it is not the shared one, and only when it differs).
    Class mode: never (a ``?ws=`` in the URL is removed)."""
    name = space()
    if name == DEFAULT_SPACE or not allowed(caller(), "choose-space"):
        if PARAM_SPACE in st.query_params:
            del st.query_params[PARAM_SPACE]
    elif st.query_params.get(PARAM_SPACE) != name:
        st.query_params[PARAM_SPACE] = name
