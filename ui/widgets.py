"""Streamlit rendering primitives that need no session (re-exported by :mod:`ui.views`): an input error,
a validation report, a section header.  Low enough for :mod:`ui.identity` and :mod:`ui.state` to use."""
from __future__ import annotations

import streamlit as st

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.insights.readouts import report_table
from ui.context import esc

__all__ = ["input_error", "report", "section"]


def input_error(err: InputError, title: str | None = None) -> None:
    """One clear error box (and the validation report's lines when there is one)."""
    st.error(f"{title + ': ' if title else ''}{esc(str(err))}", icon=":material/error:")
    rep = getattr(err, "report", None)
    if rep:
        report(rep, show_ok=False)


def report(rep: ValidationReport, *, show_ok: bool = True, title: str = "Problems") -> None:
    """A validation report as a compact table (errors first)."""
    if not rep:
        if show_ok:
            st.success("No problems found.", icon=":material/check_circle:")
        return
    table = report_table(rep)
    st.caption(f"{title}: {rep.summary()}")
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={"severity": st.column_config.TextColumn("", width="small"),
                                "where": st.column_config.TextColumn("Where", width="medium"),
                                "message": st.column_config.TextColumn("Problem", width="large")})


def section(title: str, caption: str | None = None) -> None:
    st.subheader(title, divider="gray")
    if caption:
        st.caption(caption)
