"""The session's values, read and set in one place (keys in :mod:`ui.keys`): the lowest Streamlit layer.

The one door to ``st.session_state``: no other module reads or writes it (``tools/check_imports.py`` fails on a
use elsewhere).  Values go through :func:`value` / :func:`item` / :func:`has` / :func:`default` /
:func:`set_value` / :func:`pop` (re-exported by :mod:`ui.state`); code that walks the keys or works on many
values at once takes :func:`store`.  Also here: the one-shot notice shown
after a rerun, a sidebar widget set from a page, and forgetting what the session loaded from its space.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from ui.keys import CHUNKING, CORPORA, GOLDEN, LABEL_QUEUE, NOTICE, PENDING, SPACE

__all__ = ["default", "drop_golden_sessions", "forget_space_state", "has", "item", "keep_choice", "notice",
           "notice_also", "notice_outcome", "notice_saved", "pop", "set_value", "set_widget", "store", "value"]


def value(key: str, default_value: Any = None) -> Any:
    """The value of a widget or page setting (``default_value`` when it has none yet)."""
    return st.session_state.get(key, default_value)


def item(key: str) -> Any:
    """The value of ``key``; ``KeyError`` when the session has none (where its absence is a bug)."""
    return st.session_state[key]


def has(key: str) -> bool:
    """Whether the session holds ``key``."""
    return key in st.session_state


def store() -> Any:
    """The session state itself, for code that walks its keys or sets many values (still this one door)."""
    return st.session_state


def default(key: str, default_value: Any) -> Any:
    """Give a widget its starting value once (before it is drawn); returns its value."""
    return st.session_state.setdefault(key, default_value)


def set_value(key: str, new_value: Any) -> None:
    """Set a page setting (or, before it is drawn, a widget of this page)."""
    st.session_state[key] = new_value


def pop(key: str, default_value: Any = None) -> Any:
    return st.session_state.pop(key, default_value)


def keep_choice(key: str, options: list, fallback: Any) -> Any:
    """Make a selection widget's value one of ``options`` (``fallback`` when it is not); returns it."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = fallback
    return st.session_state[key]


def set_widget(key: str, new_value: Any) -> None:
    """Set a sidebar widget's value from a page: applied at the start of the next run
    (a widget's value cannot change after it was drawn in the current run).  Call st.rerun()."""
    st.session_state.setdefault(PENDING, {})[key] = new_value


def notice(message: str | None = None, kind: str = "success") -> tuple[str, str] | None:
    """Set (or pop, with no argument) a one-shot message shown after a rerun."""
    if message is not None:
        st.session_state[NOTICE] = (kind, message)
        return None
    return st.session_state.pop(NOTICE, None)


def notice_also(message: str, kind: str = "warning") -> None:
    """Add ``message`` to the one-shot notice: after a pending one of the same kind (two things to tell
    at once, e.g. the teacher reset both the progress and the golden set), else in its place."""
    pending = st.session_state.get(NOTICE)
    if pending and pending[0] == kind and message not in pending[1]:
        message = f"{pending[1]}\n\n{message}"
    st.session_state[NOTICE] = (kind, message)


def notice_outcome(outcome: Any, *, escaped: bool = False) -> None:
    """The one notice of a change's :class:`rag_metrics.authoring.golden_change.Outcome` (shown after a rerun):
    green only when everything was done; a refusal is an error, a partial change a warning.  ``escaped``:
    the outcome's texts are markdown already (else they are escaped here)."""
    from ui.context import esc

    text = outcome.message() or "Nothing to do."
    notice(text if escaped else esc(text), outcome.kind)


def notice_saved(session: Any, res: Any, done: str) -> None:
    """The notice of a golden change (``done``, markdown) by what its save returned
    (:func:`rag_metrics.authoring.golden_change.save_outcome`): green only when it was written."""
    from rag_metrics.authoring.golden_change import save_outcome

    notice_outcome(save_outcome(session, res, done), escaped=True)


def drop_golden_sessions() -> None:
    """Forget every golden session and labelling queue (they reload from the workspace when used)."""
    ss = st.session_state
    ss[GOLDEN] = {}
    ss.pop(LABEL_QUEUE, None)


def forget_space_state() -> None:
    """Drop what this session loaded from its space (golden sessions, chunkings, kept corpora):
    called when the caller changes (the teacher signs in or out, a student rejoins a seat)."""
    ss = st.session_state
    ss.pop(SPACE, None)
    ss[CHUNKING] = {}
    ss[CORPORA] = {}
    drop_golden_sessions()
