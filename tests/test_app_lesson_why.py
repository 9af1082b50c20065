"""AppTest of lesson 1, "Why evaluation matters in RAG" (issue 49): a student opens it from the course picker and
walks its six steps, each with its live figures (the library's, for the sample and the dense system), answers each
task (a wrong answer first for the computed ones: the hint, nothing saved), and finishes with 6 of 6 saved in the
lesson's own progress file; then the same lesson in Danish."""
from __future__ import annotations

import pytest

from app_helpers import goto, library_result, no_exception
from rag_metrics.lesson import LessonContext, store_for_space, text
from rag_metrics.lesson import steps as LSteps
from rag_metrics.lesson import why as W

PAGE = "pages/lesson.py"
STEPS = W.LESSON.steps


@pytest.fixture(scope="module")
def ctx():
    return LessonContext(library_result("dense"), 5)


def _open(app):
    at = goto(app, PAGE)
    at.button(key="lesson_course_why").click().run()
    no_exception(at)
    return at


def _step(at, i: int):
    at.selectbox(key="lesson_step_pick").set_value(i).run()
    no_exception(at)
    return at


def _check(at, key: str):
    at.button(key=f"lesson_check_{key}").click().run()
    no_exception(at)
    return at


def _right(at, key: str, lang: str = "en") -> None:
    t = W.LESSON.tasks[key]
    assert any(text(t.ok, lang) in s.value for s in at.success), (key, [s.value for s in at.success],
                                                                 [w.value for w in at.warning])


def _wrong(at, key: str) -> None:
    t = W.LESSON.tasks[key]
    assert any(text(t.hint) in w.value for w in at.warning), (key, [w.value for w in at.warning])


def _answer(at, ctx, key: str, right: bool) -> None:
    t = W.LESSON.tasks[key]
    res = ctx.result
    if t.kind == "choice":
        wrong = next(o for o in t.options if o != t.answer)
        at.radio(key=f"lesson_ans_{key}").set_value(t.answer if right else wrong).run()
    elif key == "l1_found_not_top":
        n = W.found_not_top(res)
        at.text_input(key=f"lesson_ans_{key}").set_value(str(n if right else n + 1)).run()
    elif key == "l1_lost":
        n = W.fall_when_reversed(res)
        at.text_input(key=f"lesson_ans_{key}").set_value(str(n if right else n - 1)).run()
    elif key == "l1_why_missed":
        qid = res.failures(5)["query_id"].iloc[0]
        reason = LSteps.failure_reason(res, qid, 5)
        at.selectbox(key=f"lesson_ans_{key}_q").set_value(qid).run()
        at.radio(key=f"lesson_ans_{key}_r").set_value(reason if right else next(
            o for o in t.options if o != reason)).run()
    else:
        raise AssertionError(f"no answer for {key}")
    no_exception(at)


def test_a_student_walks_lesson_one(app, app_env, ctx):
    at = _open(app)
    assert [x.value for x in at.title] == [text("ui.course_lesson", n=1, title=text("lesson.why.title"))]
    assert at.query_params["lesson"] == "why"
    saved = store_for_space("shared", app_env, lesson="why")
    for i, s in enumerate(STEPS):
        at = _step(at, i)
        assert any(h.value == f"{i + 1}. {text(s.title)}" for h in at.subheader), [h.value for h in at.subheader]
        if s.figures is not None:   # the step's live figures, as the library computes them
            cards = {m.label.replace("\\", ""): m.value for m in at.metric}
            for label, value in s.figures(ctx, "en"):
                assert cards.get(label) == value, (label, value, cards)
        for t in s.tasks:
            if t.check_fn is not None:          # a computed check: a wrong answer first
                _answer(at, ctx, t.key, right=False)
                _check(at, t.key)
                _wrong(at, t.key)
                assert not saved.load().done.get(t.key)
            _answer(at, ctx, t.key, right=True)
            _check(at, t.key)
            _right(at, t.key)
            assert saved.load().done.get(t.key), t.key
    assert saved.path.name == "progress-why.json"
    assert set(saved.load().done) == set(W.LESSON.tasks) and all(saved.load().done.values())
    assert store_for_space("shared", app_env).load().done == {}    # lesson 2's progress untouched
    assert any(c.value.startswith(text("ui.course_progress", done=len(STEPS), total=len(STEPS))) for c in at.caption)
    # the teacher's class table (and its CSV) says so in lesson 1's column
    from rag_metrics.lesson import teacher

    table = teacher.class_progress([("Seat", "shared")], app_env)
    assert table.loc[0, teacher.lesson_column("why")] == f"{len(STEPS)} / {len(STEPS)}"
    assert f"{len(STEPS)} / {len(STEPS)}" in teacher.progress_csv(table)


def test_lesson_one_in_danish(app, ctx):
    at = _open(app)
    at.segmented_control(key="lesson_lang").set_value("da").run()
    no_exception(at)
    for i, s in enumerate(STEPS):
        at = _step(at, i)
        assert any(h.value == f"{i + 1}. {text(s.title, 'da')}" for h in at.subheader)
        shown = " ".join(m.value for m in at.markdown).replace("\\", "")
        assert text(s.body, "da").split("\n")[0][:60] in shown
        assert text(s.body, "en").split("\n")[0][:60] not in shown
        # the figures' labels are Danish (the Danish sample's numbers; the labels do not depend on them)
        labels = {m.label.replace("\\", "") for m in at.metric}
        assert labels == {label for label, _ in (s.figures(ctx, "da") if s.figures else ())}, labels
    assert [x.value for x in at.title] == [text("ui.course_lesson", "da", n=1, title=text("lesson.why.title", "da"))]
