"""Issue 50: the teacher's per-student reset holds against the student's open tabs.

The student keeps the Lesson page open in one tab and the golden set editor in another; the teacher
resets her progress and golden set on Class progress.  Her next click ("Previous step") and her next cell
edit used to save her old progress and her whole old set back, with no word; now each tab takes the reset
and tells her."""
from __future__ import annotations

from app_helpers import edit_table, goto, lesson_progress, no_exception
from rag_metrics.lesson import Progress, store_for_space, text
from rag_metrics.server.seats import seat_space
from rag_metrics.workspace.store import Workspace
from tests.test_app_class import KEY, SAMPLE, edit_first, klass, seat_of, sign_in  # noqa: F401

LESSON, PROGRESS = "pages/lesson.py", "pages/class_progress.py"


def _warnings(at) -> str:
    return "\n".join(str(w.value) for w in at.warning)


def test_a_reset_holds_against_the_students_open_tabs(klass):  # noqa: F811
    golden_tab = klass.tab("ada")
    edit_first(golden_tab, "my own answer")              # a private golden set, the editor left open
    space = seat_space(seat_of(golden_tab))
    own = Workspace(SAMPLE, klass.root, space=space)
    assert own.path.exists()
    store = store_for_space(space, klass.root)
    store.save(lesson_progress(2))                        # 2 of 11 steps done, on step 3
    lesson_tab = goto(klass.tab("ada"), LESSON)           # the Lesson page, left open
    assert lesson_tab.session_state["_lesson_progress"][1].step == 2

    t = sign_in(klass.tab("teacher"), KEY)
    goto(t, PROGRESS)
    t.selectbox(key="class_one_pick").set_value(space).run()
    t.selectbox(key="class_one_what").set_value("both").run()
    t.button(key="class_one_reset").click().run()
    no_exception(t)
    assert store.load() == Progress() and not own.path.exists()

    lesson_tab.button(key="lesson_prev_top").click().run()  # her next click
    no_exception(lesson_tab)
    assert store.load() == Progress()                      # the reset holds
    assert text("ui.teacher_reset_progress") in _warnings(lesson_tab)
    assert text("ui.progress", done=0, total=11) in [p.text for p in lesson_tab.get("progress")][0]
    assert lesson_tab.subheader[0].value.startswith("1. ")

    edit_table(golden_tab, {"edited_rows": {1: {"expected_answer": "an edit on the old set"}}})  # her next edit
    assert not own.path.exists()                           # her old set was not saved back
    assert text("ui.teacher_reset_golden") in _warnings(golden_tab)
    edit_table(golden_tab, {"edited_rows": {1: {"expected_answer": "an edit on the shared set"}}})
    saved = own.load()
    assert saved is not None and "my own answer" not in {q.expected_answer for q in saved[0]}  # saves on from the reset
