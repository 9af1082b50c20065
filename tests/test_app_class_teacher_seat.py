"""The teacher's browser is never a seat, in any order of sign-in, sign-out and reload (issue 50), so it
is never on Class progress, in its CSV or in "overwrite N private golden sets"; that count counts only
the sets a push would change; the code-exercises table refreshes itself; a name over 40 characters is
refused with why, not cut while typing."""
from __future__ import annotations

import pytest

from app_helpers import goto, no_exception, sample_golden
from rag_metrics.server.seats import COOKIE_NAME, seat_space
from rag_metrics.workspace.store import Workspace
from tests.test_app_class import (  # noqa: F401 - klass is a fixture
    KEY,
    SAMPLE,
    edit_first,
    klass,
    role_of,
    seat_of,
    shown_text,
    sign_in,
)

PROGRESS = "pages/class_progress.py"


def _sign_out(at):
    at.button(key="identity_sign_out").click().run()
    no_exception(at)
    return at


# each plan acts on one browser "t": "open" a new tab (a reload), "in" sign in there, "out" sign out there
PLANS = [
    ["open", "open", "in"],                          # a reload before signing in
    ["open", "in", "out", "open", "in"],             # a sign-out, a reload, a new sign-in
    ["open", "in", "out", "in"],                     # a sign-out and a new sign-in in the same tab
    ["open", "open", "in", "out", "open", "open", "in"],
]


@pytest.mark.parametrize("plan", PLANS, ids=["-".join(p) for p in PLANS])
def test_the_teachers_browser_is_never_a_seat(klass, plan):  # noqa: F811
    student = klass.tab("s")
    at = None
    for step in plan:
        if step == "open":
            at = klass.tab("t")
        elif step == "in":
            sign_in(at, KEY)
            assert role_of(at) == "teacher"
        else:
            _sign_out(at)
            assert role_of(at) is None  # signed out: no seat in this tab until a reload
    assert [s.id for s in klass.registry.seats()] == [seat_of(student)]  # the student's seat only
    assert COOKIE_NAME not in klass.jars["t"]
    goto(at, PROGRESS)
    no_exception(at)
    assert len(at.dataframe[0].value) == 1  # Class progress (and its CSV, the same table): the student only


def test_another_tab_still_in_the_given_back_seat_gets_no_new_seat(klass, monkeypatch):  # noqa: F811
    from ui import identity

    first = klass.tab("t")
    stale = dict(klass.jars["t"])  # what the first tab's request carried: the seat, no teacher cookie
    sign_in(klass.tab("t"), KEY)   # another tab of the same browser signs in: the empty seat is given back
    assert len(klass.registry) == 0
    monkeypatch.setattr(identity, "read_cookies", lambda: dict(stale))
    first.run()
    no_exception(first)
    assert len(klass.registry) == 0 and role_of(first) is None  # not "your seat was removed": a new seat
    assert "signed in as the teacher in another tab" in shown_text(first)


def test_the_push_counts_only_the_sets_it_would_change(klass):  # noqa: F811
    changed, untouched, same = klass.tab("a"), klass.tab("b"), klass.tab("c")
    edit_first(changed, "my own answer")  # a private set that differs from the shared one
    Workspace(SAMPLE, klass.root, space=seat_space(seat_of(same))).save(sample_golden(), None, force=True)
    teacher = sign_in(klass.tab("t"), KEY)
    goto(teacher, PROGRESS)
    no_exception(teacher)
    box = teacher.checkbox(key="class_push_sure")
    assert "overwrite 1 private golden set" in box.label  # was 3: every seat (and the teacher's own, issue 50)
    box.check().run()
    teacher.button(key="class_push").click().run()
    no_exception(teacher)
    assert "to 1 private space" in shown_text(teacher)
    assert not Workspace(SAMPLE, klass.root, space=seat_space(seat_of(untouched))).path.exists()  # still reads through
    pushed = Workspace(SAMPLE, klass.root, space=seat_space(seat_of(changed))).load()[0]
    assert pushed.fingerprint() == sample_golden().fingerprint()


def test_the_exercises_table_refreshes_itself(klass, monkeypatch):  # noqa: F811
    import streamlit as st

    from ui import lesson

    every: dict[str, object] = {}
    real = st.fragment

    def spy(func=None, *, run_every=None):
        def wrap(f):
            every[f.__name__] = run_every
            return real(f, run_every=run_every)
        return wrap(func) if func is not None else wrap

    monkeypatch.setattr(st, "fragment", spy)
    teacher = sign_in(klass.tab("t"), KEY)
    goto(teacher, PROGRESS)
    no_exception(teacher)
    assert any("exercise" in name and run == lesson.REFRESH_S for name, run in every.items()), every


def test_a_long_name_is_refused_with_why_not_cut(klass):  # noqa: F811
    at = klass.tab("s")
    box = at.text_input(key="identity_name")
    assert box.max_chars is None or box.max_chars > 40  # the box no longer stops at 40 without a word
    assert "40" in (box.help or "")
    long = "Maximiliana Alexandrova-Whitfield Smythe-Jones"
    box.input(long).run()
    at.button(key="identity_rename").click().run()
    no_exception(at)
    assert f"the name has {len(long)} characters; a name has at most 40" in shown_text(at)
    assert klass.registry.get(seat_of(at)).name != long


def test_the_one_time_link_signs_the_operator_in_once(klass, monkeypatch):  # noqa: F811
    from rag_metrics.server.teacher_sessions import LINK_ENV, new_link

    link, spec = new_link()
    monkeypatch.setenv(LINK_ENV, spec)  # what ./lab class gives its app processes (the hash and expiry)
    at = klass.tab("op", {"teacher_link": link}, prove=False)  # a fresh browser: no proof asked, no seat made
    assert role_of(at) == "teacher" and "teacher_link" not in at.query_params
    assert len(klass.registry) == 0
    again = klass.tab("someone else", {"teacher_link": link}, prove=False)
    assert role_of(again) is None and "This sign-in link was used already" in shown_text(again)
    assert len(klass.registry) == 0  # the sign-in form, not a seat made for a link


def test_a_40_character_name_is_whole_on_the_teachers_tables(klass):  # noqa: F811
    import json

    long = "Maximiliana Alexandrova-Whitfield Smythe"  # 40 characters
    student = klass.tab("s")
    klass.registry.rename(seat_of(student), long)
    teacher = sign_in(klass.tab("t"), KEY)
    for page, column in ((PROGRESS, "seat"), ("pages/roster.py", "name")):
        goto(teacher, page)
        no_exception(teacher)
        config = json.loads(teacher.dataframe[0].proto.columns)
        width = config[column]["width"]
        assert width >= 6.4 * len(long) + 16, (page, width)  # was 210 px on the Class page ("Maximiliana Alexandro…")
