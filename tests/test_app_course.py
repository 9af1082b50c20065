"""AppTest of the course on the Lesson page (issue 49): the lesson picker with each lesson's progress,
``?lesson=<key>`` (and ``&step=``) in the URL, any lesson drawn generically (its steps, tasks, live figures),
the way on from a lesson's last step, the Exercises page grouped by lesson, and the teacher's column per
lesson.  A made-up lesson 3 stands in for a lesson module (the page must draw any Lesson of COURSE)."""
from __future__ import annotations

from types import MappingProxyType

import pytest

from app_helpers import goto, no_exception
from rag_metrics.exercises import catalogue, checks
from rag_metrics.exercises.checks import Check
from rag_metrics.lesson import STEPS, course, store_for_space, text, texts
from rag_metrics.lesson.course import RETRIEVAL, Lesson
from rag_metrics.lesson.steps import Step, Task

PAGE = "pages/lesson.py"
_TEXTS = {
    "lesson.generation.title": ("Generation metrics", "Genereringsmål"),
    "lesson.generation.intro": ("Faithfulness and answer relevancy.", "Faithfulness og svarrelevans."),
    "step.l3_t_one.title": ("Claims", "Påstande"),
    "step.l3_t_one.body": ("Split the answer into claims.", "Del svaret op i påstande."),
    "step.l3_t_two.title": ("Share", "Andel"),
    "step.l3_t_two.body": ("The share supported.", "Andelen, der er understøttet."),
    "task.l3_t_pick.prompt": ("Which is a claim? (K = {k}, {unknown})", "Hvad er en påstand? (K = {k}, {unknown})"),
    "task.l3_t_pick.hint": ("One fact.", "Ét faktum."),
    "task.l3_t_pick.ok": ("One fact is one claim.", "Ét faktum er én påstand."),
    "opt.l3_t_pick.a": ("A fact", "Et faktum"),
    "opt.l3_t_pick.b": ("A paragraph", "Et afsnit"),
    "task.l3_t_n.prompt": ("How many questions?", "Hvor mange spørgsmål?"),
    "task.l3_t_n.hint": ("Count them.", "Tæl dem."),
    "task.l3_t_n.ok": ("Right count.", "Rigtigt antal."),
}


def _figures(ctx, lang):
    return [("Spørgsmål" if lang == "da" else "Questions", str(ctx.result.n_queries)), ("*Share*", "0.5")]


FAKE = Lesson("generation", 3, (
    Step("l3_t_one", (Task("l3_t_pick", "choice", options=("a", "b"), answer="a"),), figures=_figures),
    Step("l3_t_two", (Task("l3_t_n", "number", lambda a, ctx: float(a) == ctx.result.n_queries),))),
    texts=MappingProxyType(_TEXTS))


@pytest.fixture
def with_lesson3(monkeypatch):
    monkeypatch.setattr(course, "COURSE", (*course.COURSE, FAKE))
    for key, (en, da) in _TEXTS.items():
        monkeypatch.setitem(texts.TEXTS, key, {"en": en, "da": da})
    return FAKE


def _titles(at) -> list[str]:
    return [t.value for t in at.title]


def test_the_picker_opens_any_lesson_with_its_own_progress_and_the_url_says_which(app, app_env, with_lesson3):
    at = goto(app, PAGE)
    assert _titles(at) == [text("ui.title")]                       # lesson 2, as it always was
    buttons = {b.key: b for b in at.button if str(b.key).startswith("lesson_course_")}
    assert set(buttons) == {f"lesson_course_{x.key}" for x in course.COURSE}
    assert any(c.value.startswith(text("ui.course_progress", done=0, total=len(STEPS))) for c in at.caption)
    at.button(key="lesson_course_generation").click().run()
    no_exception(at)
    assert _titles(at) == [text("ui.course_lesson", n=3, title="Generation metrics")]
    assert at.query_params["lesson"] == "generation"
    # the step's live figures, like the live numbers (the label shown as text)
    cards = {m.label: m.value for m in at.metric}
    assert cards["Questions"] == str(library_n()) and cards["\\*Share\\*"] == "0.5"
    # a placeholder the page does not know stays as written; K is filled in
    assert any("(K = 5, {unknown})" in m.value for m in at.markdown)
    at.radio(key="lesson_ans_l3_t_pick").set_value("a").run()
    at.button(key="lesson_check_l3_t_pick").click().run()
    no_exception(at)
    saved = store_for_space("shared", app_env, lesson="generation")
    assert saved.path.name == "progress-generation.json" and saved.load().done == {"l3_t_pick": True}
    assert store_for_space("shared", app_env).load().done == {}    # lesson 2's progress untouched
    assert any(c.value.startswith(text("ui.course_progress", done=1, total=2)) for c in at.caption)
    at.button(key="lesson_course_retrieval").click().run()
    assert _titles(at) == [text("ui.title")] and at.query_params["lesson"] == "retrieval"


def library_n() -> int:
    from app_helpers import library_result

    return library_result("dense").n_queries


def test_a_link_opens_a_lesson_at_a_step_in_danish(app, app_env, with_lesson3):
    store_for_space("shared", app_env).save(store_for_space("shared", app_env).load().with_language("da"))
    app.query_params["lesson"] = "generation"
    app.query_params["step"] = "2"
    at = goto(app, PAGE)
    assert _titles(at) == [text("ui.course_lesson", "da", n=3, title="Genereringsmål")]
    assert any(s.value == "2. Andel" for s in at.subheader)
    assert "step" not in at.query_params and at.query_params["lesson"] == "generation"   # a reload: where they are
    assert at.button(key="lesson_course_retrieval").label == "Lektion 2"
    # the last step: finished once every step is done, and lesson 3 is the course's last (no way on)
    assert not [b for b in at.button if b.key == "lesson_next_lesson"]
    at.text_input(key="lesson_ans_l3_t_n").input(str(library_n())).run()
    at.button(key="lesson_check_l3_t_n").click().run()
    no_exception(at)
    assert store_for_space("shared", app_env, lesson="generation").load().done == {"l3_t_n": True}


def test_a_bad_link_is_ignored_with_a_note(app, app_env, with_lesson3):
    app.query_params["lesson"] = "nope"
    at = goto(app, PAGE)
    assert _titles(at) == [text("ui.title")]
    assert any("lesson='nope'" in w.value for w in at.warning)
    at.query_params["lesson"] = "retrieval"
    at.query_params["step"] = "99"
    at.run()
    assert any("step='99'" in w.value and f"1 to {len(STEPS)}" in w.value for w in at.warning)
    assert any(s.value == f"1. {text(STEPS[0].title)}" for s in at.subheader)


def test_lesson_twos_last_step_leads_on_to_lesson_three(app, app_env, with_lesson3):
    app.query_params["lesson"] = "retrieval"
    app.query_params["step"] = "quiz"
    at = goto(app, PAGE)
    assert any(s.value == f"{len(STEPS)}. {text(STEPS[-1].title)}" for s in at.subheader)
    at.button(key="lesson_next_lesson").click().run()
    no_exception(at)
    assert _titles(at) == [text("ui.course_lesson", n=3, title="Generation metrics")]
    assert any(s.value == "1. Claims" for s in at.subheader)


def test_one_lesson_draws_no_picker(app, monkeypatch):
    monkeypatch.setattr(course, "COURSE", (RETRIEVAL,))
    at = goto(app, PAGE)
    assert not [b for b in at.button if str(b.key).startswith("lesson_course_")]
    assert _titles(at) == [text("ui.title")]


def test_the_teacher_sees_a_column_per_lesson(app, app_env, with_lesson3):
    store_for_space("shared", app_env, lesson="generation").save(
        store_for_space("shared", app_env, lesson="generation").load().with_answer("l3_t_pick", "a", True))
    at = goto(app, "pages/class_progress.py")
    row = at.dataframe[0].value.set_index("seat").loc["shared"]
    assert row["lesson 3 generation"] == "1 / 2" and row["lesson 2 retrieval"] == f"0 / {len(STEPS)}"


def test_the_exercises_page_groups_the_exercises_by_lesson(app, monkeypatch, with_lesson3):
    both = MappingProxyType({"en": "Faithfulness", "da": "Faithfulness"})
    ex = catalogue.Exercise(name="faithfulness_t", step="l3_t_one", title=both, prompt=both, starter="def f(): ...",
                            examples={}, hints=MappingProxyType({"en": ("h",), "da": ("h",)}), lesson_code="",
                            lesson="generation")
    import rag_metrics.exercises as EX

    monkeypatch.setattr(catalogue, "EXERCISES", (*catalogue.EXERCISES, ex))
    monkeypatch.setattr(EX, "EXERCISES", catalogue.EXERCISES)
    monkeypatch.setitem(checks.BUILDERS, ex.name, lambda name, golden, run, **kw: (
        Check("one", {"en": "One", "da": "Én"}, {"function": "f", "params": []}, 0.5),))
    at = goto(app, "pages/exercises.py")
    pick = at.selectbox(key="ex_lesson")
    assert [pick.format_func(o) for o in pick.options] == [
        text("ui.course_lesson", n=2, title=text("lesson.retrieval.title")),
        text("ui.course_lesson", n=3, title="Generation metrics")]
    assert len(at.selectbox(key="ex_pick").options) == len(RETRIEVAL.exercises)
    pick.set_value("generation").run()
    no_exception(at)
    assert at.selectbox(key="ex_pick").value == "faithfulness_t"
    assert at.query_params["exercise"] == "faithfulness_t"
