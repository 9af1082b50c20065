"""AppTest of the course on the Lesson page (issue 49): the lesson picker with each lesson's progress,
``?lesson=<key>`` (and ``&step=``) in the URL, any lesson drawn generically (its steps, tasks, live figures),
the way on from a lesson's last step, the Exercises page grouped by lesson, and the teacher's column per
lesson.  A made-up lesson 9 (``extra``) is added to the course: the page must draw any Lesson of COURSE."""
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
    "lesson.extra.title": ("Extra metrics", "Ekstra mål"),
    "lesson.extra.intro": ("Faithfulness and answer relevancy.", "Faithfulness og svarrelevans."),
    "step.l9_t_one.title": ("Claims", "Påstande"),
    "step.l9_t_one.body": ("Split the answer into claims.", "Del svaret op i påstande."),
    "step.l9_t_two.title": ("Share", "Andel"),
    "step.l9_t_two.body": ("The share supported.", "Andelen, der er understøttet."),
    "task.l9_t_pick.prompt": ("Which is a claim? (K = {k}, {unknown})", "Hvad er en påstand? (K = {k}, {unknown})"),
    "task.l9_t_pick.hint": ("One fact.", "Ét faktum."),
    "task.l9_t_pick.ok": ("One fact is one claim.", "Ét faktum er én påstand."),
    "opt.l9_t_pick.a": ("A fact", "Et faktum"),
    "opt.l9_t_pick.b": ("A paragraph", "Et afsnit"),
    "task.l9_t_n.prompt": ("How many questions?", "Hvor mange spørgsmål?"),
    "task.l9_t_n.hint": ("Count them.", "Tæl dem."),
    "task.l9_t_n.ok": ("Right count.", "Rigtigt antal."),
}


def _figures(ctx, lang):
    return [("Spørgsmål" if lang == "da" else "Questions", str(ctx.result.n_queries)), ("*Share*", "0.5")]


FAKE = Lesson("extra", 9, (
    Step("l9_t_one", (Task("l9_t_pick", "choice", options=("a", "b"), answer="a"),), figures=_figures),
    Step("l9_t_two", (Task("l9_t_n", "number", lambda a, ctx: float(a) == ctx.result.n_queries),))),
    texts=MappingProxyType(_TEXTS))


@pytest.fixture
def with_extra(monkeypatch):
    monkeypatch.setattr(course, "COURSE", (*course.COURSE, FAKE))
    for key, (en, da) in _TEXTS.items():
        monkeypatch.setitem(texts.TEXTS, key, {"en": en, "da": da})
    return FAKE


def _titles(at) -> list[str]:
    return [t.value for t in at.title]


def test_the_picker_opens_any_lesson_with_its_own_progress_and_the_url_says_which(app, app_env, with_extra):
    at = goto(app, PAGE)
    assert _titles(at) == [text("ui.title")]                       # lesson 2, as it always was
    buttons = {b.key: b for b in at.button if str(b.key).startswith("lesson_course_")}
    assert set(buttons) == {f"lesson_course_{x.key}" for x in course.COURSE}
    assert any(c.value.startswith(text("ui.course_progress", done=0, total=len(STEPS))) for c in at.caption)
    at.button(key="lesson_course_extra").click().run()
    no_exception(at)
    assert _titles(at) == [text("ui.course_lesson", n=9, title="Extra metrics")]
    assert at.query_params["lesson"] == "extra"
    # the step's live figures, like the live numbers (the label shown as text)
    cards = {m.label: m.value for m in at.metric}
    assert cards["Questions"] == str(library_n()) and cards["\\*Share\\*"] == "0.5"
    # a placeholder the page does not know stays as written; K is filled in
    assert any("(K = 5, {unknown})" in m.value for m in at.markdown)
    at.radio(key="lesson_ans_l9_t_pick").set_value("a").run()
    at.button(key="lesson_check_l9_t_pick").click().run()
    no_exception(at)
    saved = store_for_space("shared", app_env, lesson="extra")
    assert saved.path.name == "progress-extra.json" and saved.load().done == {"l9_t_pick": True}
    assert store_for_space("shared", app_env).load().done == {}    # lesson 2's progress untouched
    assert any(c.value.startswith(text("ui.course_progress", done=1, total=2)) for c in at.caption)
    at.button(key="lesson_course_retrieval").click().run()
    assert _titles(at) == [text("ui.title")] and at.query_params["lesson"] == "retrieval"


def library_n() -> int:
    from app_helpers import library_result

    return library_result("dense").n_queries


def test_a_link_opens_a_lesson_at_a_step_in_danish(app, app_env, with_extra):
    store_for_space("shared", app_env).save(store_for_space("shared", app_env).load().with_language("da"))
    app.query_params["lesson"] = "extra"
    app.query_params["step"] = "2"
    at = goto(app, PAGE)
    assert _titles(at) == [text("ui.course_lesson", "da", n=9, title="Ekstra mål")]
    assert any(s.value == "2. Andel" for s in at.subheader)
    assert "step" not in at.query_params and at.query_params["lesson"] == "extra"   # a reload: where they are
    assert at.button(key="lesson_course_retrieval").label == "Lektion 2"
    # the last step: finished once every step is done, and lesson 9 is the course's last (no way on)
    assert not [b for b in at.button if b.key == "lesson_next_lesson"]
    at.text_input(key="lesson_ans_l9_t_n").input(str(library_n())).run()
    at.button(key="lesson_check_l9_t_n").click().run()
    no_exception(at)
    assert store_for_space("shared", app_env, lesson="extra").load().done == {"l9_t_n": True}


def test_a_bad_link_is_ignored_with_a_note(app, app_env, with_extra):
    app.query_params["lesson"] = "nope"
    at = goto(app, PAGE)
    assert _titles(at) == [text("ui.title")]
    assert any("lesson='nope'" in w.value for w in at.warning)
    at.query_params["lesson"] = "retrieval"
    at.query_params["step"] = "99"
    at.run()
    assert any("step='99'" in w.value and f"1 to {len(STEPS)}" in w.value for w in at.warning)
    assert any(s.value == f"1. {text(STEPS[0].title)}" for s in at.subheader)


def test_lesson_twos_last_step_leads_on_to_the_next_lesson(app, app_env, monkeypatch, with_extra):
    monkeypatch.setattr(course, "COURSE", (RETRIEVAL, FAKE))     # the next lesson after 2 is the made-up one
    app.query_params["lesson"] = "retrieval"
    app.query_params["step"] = "quiz"
    at = goto(app, PAGE)
    assert any(s.value == f"{len(STEPS)}. {text(STEPS[-1].title)}" for s in at.subheader)
    at.button(key="lesson_next_lesson").click().run()
    no_exception(at)
    assert _titles(at) == [text("ui.course_lesson", n=9, title="Extra metrics")]
    assert any(s.value == "1. Claims" for s in at.subheader)


def test_one_lesson_draws_no_picker(app, monkeypatch):
    monkeypatch.setattr(course, "COURSE", (RETRIEVAL,))
    at = goto(app, PAGE)
    assert not [b for b in at.button if str(b.key).startswith("lesson_course_")]
    assert _titles(at) == [text("ui.title")]


def test_the_teacher_sees_a_column_per_lesson(app, app_env, with_extra):
    store_for_space("shared", app_env, lesson="extra").save(
        store_for_space("shared", app_env, lesson="extra").load().with_answer("l9_t_pick", "a", True))
    at = goto(app, "pages/class_progress.py")
    row = at.dataframe[0].value.set_index("seat").loc["shared"]
    assert row["lesson 9 extra"] == "1 / 2" and row["lesson 2 retrieval"] == f"0 / {len(STEPS)}"


def test_the_exercises_page_groups_the_exercises_by_lesson(app, monkeypatch, with_extra):
    both = MappingProxyType({"en": "Faithfulness", "da": "Faithfulness"})
    ex = catalogue.Exercise(name="faithfulness_t", step="l9_t_one", title=both, prompt=both, starter="def f(): ...",
                            examples={}, hints=MappingProxyType({"en": ("h",), "da": ("h",)}), lesson_code="",
                            lesson="extra")
    import rag_metrics.exercises as EX

    monkeypatch.setattr(catalogue, "EXERCISES", (*catalogue.EXERCISES, ex))
    monkeypatch.setattr(EX, "EXERCISES", catalogue.EXERCISES)
    monkeypatch.setitem(checks.BUILDERS, ex.name, lambda name, golden, run, **kw: (
        Check("one", {"en": "One", "da": "Én"}, {"function": "f", "params": []}, 0.5),))
    at = goto(app, "pages/exercises.py")
    pick = at.selectbox(key="ex_lesson")
    with_exercises = [x for x in course.COURSE if x.exercises or x is FAKE]
    assert pick.options == [text("ui.course_lesson", n=x.number, title=text(x.title)) for x in with_exercises]
    assert with_exercises[0] is RETRIEVAL and with_exercises[-1] is FAKE
    assert len(at.selectbox(key="ex_pick").options) == len(RETRIEVAL.exercises)
    pick.set_value("extra").run()
    no_exception(at)
    assert at.selectbox(key="ex_pick").value == "faithfulness_t"
    assert at.query_params["exercise"] == "faithfulness_t"
