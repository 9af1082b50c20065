"""AppTest of lesson 4, "Building an automated evaluation system" (issue 49): a student opens it from the course
picker and walks its six steps, each with its live figures (the library's, for the sample and the dense system),
answers each task (a wrong answer first for the computed ones: the hint, nothing saved), sees the CI job for the
lab's setup (the library's :func:`ci_workflow`, following the minimum change typed), and finishes with 6 of 6 saved
in the lesson's own progress file; then the same lesson in Danish, with no English body, figure or job comment."""
from __future__ import annotations

import re

import pytest

from app_helpers import goto, library_result, no_exception
from rag_metrics.lesson import LessonContext, store_for_space, text
from rag_metrics.lesson import system as S

PAGE = "pages/lesson.py"
STEPS = S.LESSON.steps


@pytest.fixture(scope="module")
def ctx():
    return LessonContext(library_result("dense"), 5)


def _open(app):
    at = goto(app, PAGE)
    at.button(key="lesson_course_system").click().run()
    no_exception(at)
    return at


def _step(at, i: int):
    at.selectbox(key="lesson_step_pick").set_value(i).run()
    no_exception(at)
    return at


def _check(at, key: str, right: bool, lang: str = "en"):
    at.button(key=f"lesson_check_{key}").click().run()
    no_exception(at)
    t = S.LESSON.tasks[key]
    if right:
        assert any(text(t.ok, lang) in s.value for s in at.success), (key, [w.value for w in at.warning])
    else:
        assert any(text(t.hint, lang) in w.value for w in at.warning), (key, [w.value for w in at.warning])


def _answer(at, ctx, key: str, right: bool) -> None:
    t = S.LESSON.tasks[key]
    cmp = S.comparison(ctx)
    if t.kind == "choice":
        good = cmp.gate.verdict if key == "l4_verdict" else t.answer
        at.radio(key=f"lesson_ans_{key}").set_value(good if right else next(o for o in t.options if o != good)).run()
    elif key == "l4_mean_diff":
        d = float(cmp.row["delta"])
        at.text_input(key=f"lesson_ans_{key}").set_value(f"{d if right else -d:.3f}").run()
    elif key == "l4_more":
        more = max(S.needed(ctx) - cmp.gate.n, 0)
        at.text_input(key=f"lesson_ans_{key}").set_value(str(more if right else more + 1)).run()
    else:
        raise AssertionError(f"no answer for {key}")
    no_exception(at)


def test_a_student_walks_lesson_four(app, app_env, ctx):
    at = _open(app)
    assert [x.value for x in at.title] == [text("ui.course_lesson", n=4, title=text("lesson.system.title"))]
    assert at.query_params["lesson"] == "system"
    saved = store_for_space("shared", app_env, lesson="system")
    for i, s in enumerate(STEPS):
        at = _step(at, i)
        assert any(h.value == f"{i + 1}. {text(s.title)}" for h in at.subheader), [h.value for h in at.subheader]
        if s.figures is not None:   # the step's live figures, as the library computes them
            cards = {m.label.replace("\\", ""): m.value for m in at.metric}
            for label, value in s.figures(ctx, "en"):
                assert cards.get(label) == value, (label, value, cards)
        if s.key == "l4_ci":        # the CI job for the lab's setup: the sample, dense, K = 5
            job = S.ci_workflow(S.CiSetup(retriever="dense", metrics=("mrr", "ndcg"), k=5), "en")
            assert [c.value for c in at.code] == [job.rstrip("\n")]
            at.number_input(key="lesson_l4_min_change").set_value(0.1).run()
            assert "--min-change 0.1" in at.code[0].value and "--k 5" in at.code[0].value
        for t in s.tasks:
            if t.check_fn is not None:          # a computed check: a wrong answer first
                _answer(at, ctx, t.key, right=False)
                _check(at, t.key, right=False)
                assert not saved.load().done.get(t.key)
            _answer(at, ctx, t.key, right=True)
            _check(at, t.key, right=True)
            assert saved.load().done.get(t.key), t.key
    assert saved.path.name == "progress-system.json"
    assert set(saved.load().done) == set(S.LESSON.tasks) and all(saved.load().done.values())
    assert store_for_space("shared", app_env).load().done == {}    # lesson 2's progress untouched
    assert any(c.value.startswith(text("ui.course_progress", done=len(STEPS), total=len(STEPS))) for c in at.caption)


def test_lesson_four_in_danish(app, ctx):
    at = _open(app)
    at.segmented_control(key="lesson_lang").set_value("da").run()
    no_exception(at)
    for i, s in enumerate(STEPS):
        at = _step(at, i)
        assert any(h.value == f"{i + 1}. {text(s.title, 'da')}" for h in at.subheader)
        shown = " ".join(m.value for m in at.markdown).replace("\\", "")
        assert text(s.body, "da").split("\n")[0][:60] in shown
        assert text(s.body, "en").split("\n")[0][:60] not in shown
        # the figures' labels are Danish (the Danish sample's numbers: a label naming n is compared without it)
        labels = {re.sub(r"\d+", "#", m.label.replace("\\", "")) for m in at.metric}
        assert labels == {re.sub(r"\d+", "#", label) for label, _ in (s.figures(ctx, "da") if s.figures else ())}
        if s.key == "l4_ci":   # the job's comments in Danish
            assert text("ui.l4.yaml_gate", "da") in at.code[0].value
            assert text("ui.l4.yaml_gate", "en") not in at.code[0].value
    assert [x.value for x in at.title] == [text("ui.course_lesson", "da", n=4, title=text("lesson.system.title", "da"))]
