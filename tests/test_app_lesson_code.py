"""AppTest: each Lesson step with a function shows the lesson's code, the conventions it implies and
a link to its exercise (issue 26), in English and Danish."""
from __future__ import annotations

import pytest

from app_helpers import goto, no_exception
from rag_metrics.exercises import UI_TEXT
from rag_metrics.exercises.catalogue import exercises_for_lesson
from rag_metrics.lesson import STEPS

#: Lesson 2's exercises (the catalogue holds every lesson's; their steps are lesson 2's STEPS).
EXERCISES = exercises_for_lesson("retrieval")

PAGE = "pages/lesson.py"


@pytest.fixture
def lesson(app):
    return goto(app, PAGE)


def _step(at, key: str):
    at.selectbox(key="lesson_step_pick").set_value([s.key for s in STEPS].index(key)).run()
    no_exception(at)
    return at


def _link_target(at) -> str:
    """Where the exercise link of the page points: the page link's page, or the plain link's target."""
    links = at.get("page_link")
    if links:
        return " ".join(str(link.proto) for link in links)
    return " ".join(m.value for m in at.markdown)


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.name)
def test_the_steps_function_is_shown_with_its_conventions_and_exercise(lesson, ex):
    _step(lesson, ex.step)
    assert [c.value for c in lesson.code] == [ex.lesson_code.strip()]
    assert any(UI_TEXT["conventions"]["en"] in m.value and ex.conventions["en"][0] in m.value
               for m in lesson.markdown)
    target = _link_target(lesson)
    assert f"exercise={ex.name}" in target or (ex.name in target and "exercises" in target)


def test_steps_without_a_function_show_no_code_and_danish_labels(lesson):
    _step(lesson, "why")
    assert not lesson.code
    lesson.get("button_group")[0].set_value("da").run()
    _step(lesson, "ndcg")
    assert "dcg_at_k" in lesson.code[0].value
    assert any(UI_TEXT["conventions"]["da"] in m.value for m in lesson.markdown)
    assert UI_TEXT["open"]["da"] in _link_target(lesson)


def test_the_lesson_preset_shows_the_lessons_recall_on_the_dashboard(app):
    """docs/conventions.md#options: the lesson's recall skips out-of-scope questions (0.651, not 0.548)."""
    from app_helpers import shown_cards

    app.radio(key="conventions_preset").set_value("lesson").run()
    no_exception(app)
    cards = shown_cards(app)
    assert cards["Recall@5"] == "0.651" and cards["Hit rate@5"] == "0.724"
    assert any("recall skips questions with no relevant id" in c.value for c in app.caption)
    app.radio(key="conventions_preset").set_value("trec_eval").run()
    assert shown_cards(app)["Recall@5"] == "0.651"   # trec_eval: the 64 in-scope questions, the same value
