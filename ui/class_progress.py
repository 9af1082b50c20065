"""Class progress (the teacher's view): every seat's lesson progress per step, quiz answers and current
metrics; reset progress, push the shared golden set to every private space, export as CSV; then the code
exercises per seat (checks passed as the student's browser reported them / runs; a student's code on
demand, read-only, never run on the server: the teacher can re-run it in their own browser's sandbox); last,
the tutor: on or off, its budget per seat, and each student's questions.

``pages/class_progress.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import streamlit as st

from ui import exercises, lesson, state, tutor, views


def render() -> None:
    """The whole Class progress page (the teacher's; anyone else is told to sign in)."""
    st.title("Class progress")
    if not lesson.may_see_class():
        st.warning("Only the teacher sees the class. Sign in with the teacher key.", icon=":material/lock:")
        st.stop()
    ctx = state.current_or_stop()
    views.conventions_caption()
    lesson.class_view(ctx)

    @st.fragment(run_every=lesson.REFRESH_S)
    def _exercises_table() -> None:  # refreshes itself like the lesson's table, and stops once signed out
        lesson.stop_if_signed_out()
        exercises.class_view()

    _exercises_table()
    tutor.class_view(lesson.lang())
