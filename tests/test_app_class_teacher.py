"""The teacher in control (issue 27): Class progress never computes a student's work in the
teacher's run (a bounded pool does, the table refreshes itself), one student can be reset, and the
Class page is one click away."""
from __future__ import annotations

import math
import threading

import pytest

from app_helpers import goto, no_exception
from rag_metrics import jobs
from rag_metrics.lesson import store_for_space
from rag_metrics.server.seats import seat_space
from rag_metrics.workspace.store import Workspace
from tests.test_app_class import KEY, SAMPLE, edit_first, klass, seat_of, shown_text, sign_in  # noqa: F401

PROGRESS = "pages/class_progress.py"


class GatedPool(jobs.JobPool):
    """A pool whose jobs wait for ``gate``: what the teacher's run sees before they finish."""

    def __init__(self) -> None:
        super().__init__(workers=1)
        self.gate = threading.Event()

    def result(self, key, compute, wait=0.0):
        def gated():
            self.gate.wait(60)
            return compute()
        return super().result(key, gated, wait)


@pytest.fixture
def gated(monkeypatch):
    pool = GatedPool()
    monkeypatch.setattr(jobs, "_POOL", pool)
    yield pool
    pool.gate.set()


def _row(at, label):
    table = at.dataframe[0].value
    return table.set_index("seat").loc[label]


def test_class_progress_reads_kept_results_and_never_computes_in_the_teachers_run(klass, gated):  # noqa: F811
    student = klass.tab("s")
    edit_first(student, "a student's own answer")
    label = klass.registry.get(seat_of(student)).name
    teacher = sign_in(klass.tab("t"), KEY)
    goto(teacher, PROGRESS)
    no_exception(teacher)
    assert math.isnan(_row(teacher, label)["hit_rate@5"])  # queued, not computed in this run
    assert "being computed" in shown_text(teacher) and "Refreshes every" in shown_text(teacher)
    gated.gate.set()
    for _ in range(600):
        if gated.pending() == 0:
            break
        threading.Event().wait(0.1)
    teacher.run()
    no_exception(teacher)
    assert 0.0 <= _row(teacher, label)["hit_rate@5"] <= 1.0 and "being computed" not in shown_text(teacher)


def test_reset_one_student(klass):  # noqa: F811
    a, b = klass.tab("a"), klass.tab("b")
    for at in (a, b):
        edit_first(at, "mine")
        store = store_for_space(seat_space(seat_of(at)), klass.root)
        store.save(store.load().with_step(3))
    teacher = sign_in(klass.tab("t"), KEY)
    goto(teacher, PROGRESS)
    assert any(link.proto.page.endswith("roster") or "Class page" in link.label for link in teacher.get("page_link"))
    space_a = seat_space(seat_of(a))
    teacher.selectbox(key="class_one_pick").set_value(space_a).run()
    teacher.selectbox(key="class_one_what").set_value("both").run()
    teacher.button(key="class_one_reset").click().run()
    no_exception(teacher)
    assert "Reset" in shown_text(teacher)
    assert store_for_space(space_a, klass.root).load().step == 0
    assert not Workspace(SAMPLE, klass.root, space=space_a).path.exists()  # reads the shared set again
    space_b = seat_space(seat_of(b))  # the other student is untouched
    assert store_for_space(space_b, klass.root).load().step == 3
    assert Workspace(SAMPLE, klass.root, space=space_b).path.exists()


def test_sign_out_ends_the_sign_in_everywhere(klass):  # noqa: F811
    from rag_metrics.server.seats import TEACHER_COOKIE
    from tests.test_app_class import caller_of

    first = sign_in(klass.tab("t"), KEY)
    other_tab = klass.tab("t")
    assert caller_of(other_tab).role == "teacher"
    klass.jars["copy"] = {TEACHER_COOKIE: klass.jars["t"][TEACHER_COOKIE]}  # a copied cookie
    first.button(key="identity_sign_out").click().run()
    no_exception(first)
    assert caller_of(klass.tab("copy")).role == "student"  # revoked on the server, not only forgotten here
    other_tab.run()
    no_exception(other_tab)
    assert "_identity_caller" not in other_tab.session_state  # the tab still open elsewhere too: no teacher,
    assert "_identity_seat" not in other_tab.session_state    # and no seat either (the teacher's browser)
