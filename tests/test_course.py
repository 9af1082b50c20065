"""The course (issue 49): lessons as data (course.py), every lesson's texts in English and Danish with the
same placeholders and unique keys, progress per lesson, the teacher's column per lesson and reset of every
lesson, the exercises' lesson and registries (BUILDERS, DIAGNOSES) and the generic comparison of grading."""
from __future__ import annotations

import string
from types import MappingProxyType

import pytest

from rag_metrics.errors import InputError
from rag_metrics.exercises import catalogue, checks, grading, mistakes
from rag_metrics.exercises.checks import Check
from rag_metrics.exercises.grading import compare_values, grade
from rag_metrics.lesson import course, teacher, texts
from rag_metrics.lesson.course import COURSE, RETRIEVAL, Lesson, lesson, merge_texts
from rag_metrics.lesson.progress import Progress, store_for_space
from rag_metrics.lesson.steps import QUIZ, STEPS, Step, Task


def _fields(s: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(s) if f}


# ---- the course ---------------------------------------------------------------------------------------
def test_lesson_two_is_the_labs_lesson_unchanged():
    assert lesson("retrieval") is RETRIEVAL and RETRIEVAL.number == 2
    assert RETRIEVAL.steps == STEPS and RETRIEVAL.quiz == QUIZ
    assert [x.number for x in COURSE] == sorted(x.number for x in COURSE)
    assert {x.key for x in COURSE} <= set(course.LESSON_KEYS)
    with pytest.raises(InputError, match="no lesson 'nope'"):
        lesson("nope")


def test_every_lessons_texts_in_english_and_danish_with_the_same_placeholders_and_unique_keys():
    base = set(texts._T)
    seen: dict[str, str] = {}
    for x in COURSE:
        for key, pair in x.texts.items():
            assert key not in base and key not in seen, (x.key, key, seen.get(key))
            seen[key] = x.key
            en, da = pair
            assert en.strip() and da.strip() and _fields(en) == _fields(da), key
            assert texts.TEXTS[key] == {"en": en, "da": da}
        assert {x.title, x.intro} <= set(texts.TEXTS), x.key
        for s in x.steps:
            assert {s.title, s.body} <= set(texts.TEXTS), (x.key, s.key)
            for t in s.tasks:
                assert {t.prompt, t.hint, t.ok} <= set(texts.TEXTS), (x.key, t.key)
                for o in t.options:
                    assert t.option_key(o) in texts.TEXTS, (x.key, t.option_key(o))
    steps = [s.key for x in COURSE for s in x.steps]
    tasks = [t.key for x in COURSE for s in x.steps for t in s.tasks]
    assert len(steps) == len(set(steps)) and len(tasks) == len(set(tasks))


def test_a_text_key_two_lessons_use_is_refused():
    merge_texts({"ui.check": ("Check", "Tjek")}, "same")       # the same text again: no change
    with pytest.raises(InputError, match="ui.check.*prefix"):
        merge_texts({"ui.check": ("Test it", "Prøv det")}, "l9")
    with pytest.raises(InputError, match="pair"):
        merge_texts({"ui.l9.x": ("only English",)}, "l9")        # type: ignore[dict-item]
    assert "ui.l9.x" not in texts.TEXTS


def test_a_missing_lesson_module_is_left_out_but_other_import_errors_surface(monkeypatch):
    assert course._load("no_such_lesson_module") is None

    def broken(name: str):
        raise ModuleNotFoundError("No module named 'numpyy'", name="numpyy")

    monkeypatch.setattr(course.importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError, match="numpyy"):
        course._load("why")


# ---- a made-up second lesson, for progress and the teacher -------------------------------------------
FAKE = Lesson("generation", 3, (Step("l3_a", (Task("l3_a_pick", "choice", options=("x", "y"), answer="x"),)),
                                Step("l3_b", (Task("l3_b_pick", "choice", options=("x", "y"), answer="y"),))),
              texts=MappingProxyType({}))


@pytest.fixture
def two_lessons(monkeypatch):
    monkeypatch.setattr(course, "COURSE", (RETRIEVAL, FAKE))
    return FAKE


def test_progress_is_kept_per_lesson(tmp_path, two_lessons):
    l2, l3 = store_for_space("private-a", tmp_path), store_for_space("private-a", tmp_path, lesson="generation")
    assert l2.path.name == "progress.json" and l3.path.name == "progress-generation.json"
    l3.save(Progress().with_answer("l3_a_pick", "x", True).with_step(5, FAKE.steps))
    back = store_for_space("private-a", tmp_path, lesson="generation").load()
    assert back.step == 1 and back.steps_done(FAKE.steps) == [True, False]
    assert l2.load() == Progress()
    # a step index beyond the lesson's steps is read as its last step
    l3.path.write_text(back.to_json().replace('"step": 1', '"step": 9'), encoding="utf-8")
    assert store_for_space("private-a", tmp_path, lesson="generation").load().step == 1
    with pytest.raises(InputError, match="no lesson"):
        store_for_space("private-a", tmp_path, lesson="nope")


def test_class_progress_has_a_column_per_lesson_and_reset_clears_every_lesson(tmp_path, two_lessons):
    store_for_space("private-a", tmp_path).save(Progress().with_answer("why_pick", "mrr", True))
    store_for_space("private-a", tmp_path, lesson="generation").save(
        Progress().with_answer("l3_a_pick", "x", True).with_answer("l3_b_pick", "y", True))
    table = teacher.class_progress([("Seat A", "private-a"), ("Seat B", "private-b")], tmp_path)
    assert teacher.lesson_columns() == ["lesson 2 retrieval", "lesson 3 generation"]
    assert table["lesson 2 retrieval"].tolist() == [f"1 / {len(STEPS)}", f"0 / {len(STEPS)}"]
    assert table["lesson 3 generation"].tolist() == ["2 / 2", "0 / 2"]
    header = teacher.progress_csv(table).splitlines()[0].split(",")
    assert "lesson 3 generation" in header and header[:5] == ["seat", "space", "step", "steps_done", "1 why"]
    assert "lesson 3 generation" in teacher.class_progress([], tmp_path).columns
    teacher.reset_progress(["private-a"], tmp_path)
    assert not store_for_space("private-a", tmp_path, lesson="generation").path.exists()
    assert store_for_space("private-a", tmp_path).load() == Progress()
    store_for_space("private-a", tmp_path, lesson="generation").save(Progress().with_answer("l3_a_pick", "x", True))
    assert teacher.reset_student("private-a", "sample_corpus", golden=False, root=tmp_path) == ["progress"]
    assert not store_for_space("private-a", tmp_path, lesson="generation").path.exists()


# ---- exercises: lesson, registries --------------------------------------------------------------------
def test_every_exercise_belongs_to_a_lesson_that_lists_it():
    for x in COURSE:
        assert tuple(e.name for e in catalogue.exercises_for_lesson(x.key)) == x.exercises, x.key
    assert all(course.lesson_of_exercise(e.name) is not None for e in catalogue.EXERCISES)
    assert {e.lesson for e in catalogue.EXERCISES} <= {x.key for x in COURSE}


def _fake_exercise(name: str) -> catalogue.Exercise:
    both = MappingProxyType({"en": "x", "da": "x"})
    return catalogue.Exercise(name=name, step="l3_a", title=both, prompt=both, starter="", examples={}, hints=
                              MappingProxyType({"en": ("hint en",), "da": ("hint da",)}), lesson_code="",
                              lesson="generation")


@pytest.fixture
def registered(monkeypatch):
    ex = _fake_exercise("unsupported_claims")
    monkeypatch.setattr(catalogue, "EXERCISES", (*catalogue.EXERCISES, ex))
    built = (Check("claims", MappingProxyType({"en": "Claims", "da": "Påstande"}),
                   {"function": "unsupported_claims", "params": [["a", "b", "c"]]}, ["a", "c"], unordered=True),
             Check("share", MappingProxyType({"en": "Share", "da": "Andel"}),
                   {"function": "share", "params": []}, {"share": 0.5, "claims": ["b"], "ok": True}))
    monkeypatch.setitem(checks.BUILDERS, ex.name, lambda name, golden, run, **kw: built)
    monkeypatch.setitem(mistakes.MISTAKES, "l3_kept_supported", ("You listed the supported claims.", "Du listede de "
                                                                 "understøttede påstande."))
    monkeypatch.setitem(mistakes.DIAGNOSES, ex.name,
                        lambda name, args, expected, got: "l3_kept_supported" if got == ["b"] else None)
    return ex, built


def test_build_checks_and_grade_dispatch_to_a_lessons_registries(registered):
    ex, built = registered
    assert checks.build_checks(ex.name, None, None) == built    # type: ignore[arg-type]  no golden set needed
    ok = grade(ex.name, built, {"results": {"claims": {"value": ["c", "a"]},
                                            "share": {"value": {"claims": ["b"], "ok": True, "share": 0.5000000001}}}})
    assert ok.all_passed
    wrong = grade(ex.name, built, {"results": {"claims": {"value": ["b"]}, "share": {"value": {"share": 1}}}}, "da")
    claims, share = wrong.results
    assert claims.mistake == "l3_kept_supported" and claims.hint == "Du listede de understøttede påstande."
    assert "forventede en liste med 2 elementer, fik 1" in claims.message.lower()
    assert share.message == "Nøglen \"claims\" mangler."
    assert grading.browser_payload(ex.name, built)["checks"][0]["args"]["function"] == "unsupported_claims"


@pytest.mark.parametrize("expected, got, unordered, diff", [
    (0.5, 0.5000001, False, None),
    (0.5, 0.51, False, ("value", "", 0.5, 0.51)),
    (1, True, False, ("value", "", 1, True)),
    (True, 1, False, ("value", "", True, 1)),
    ("Paris", "paris", False, ("value", "", "Paris", "paris")),
    (None, 0, False, ("value", "", None, 0)),
    ([0.25, [1, 2]], [0.25, [1, 2.0000000001]], False, None),
    (["a", "b"], ["b", "a"], False, ("value", "[0]", "a", "b")),
    (["a", "b"], ["b", "a"], True, None),
    (["a", "a", "b"], ["a", "b", "b"], True, ("item_missing", "", "a", None)),
    ([[1, 2]], [[2, 1]], True, ("item_missing", "", [1, 2], None)),   # nested lists keep their order
    ({"a": {"b": [0.1, 0.2]}}, {"a": {"b": [0.1, 0.3]}}, False, ("value", '["a"]["b"][1]', 0.2, 0.3)),
    ({"a": 1}, {"a": 1, "b": 2}, False, ("key_extra", "", None, "b")),
    ({1: "x"}, {"1": "x"}, False, None),                               # JSON's keys are text
    ([1, 2], "[1, 2]", False, ("value", "", [1, 2], "[1, 2]")),
    ((1, 2), [1, 2], False, None),
    (0.5, float("nan"), False, ("value", "", 0.5, float("nan"))),
])
def test_generic_compare(expected, got, unordered, diff):
    found = compare_values(expected, got, unordered=unordered)
    if diff is None or diff[3] != diff[3]:       # NaN is not equal to itself: compare the kind only
        assert (found is None) if diff is None else found[:3] == diff[:3]
    else:
        assert found == diff


def test_summary_unordered_flag_is_read_too():
    c = Check("c", {"en": "c"}, {}, ["x", "y"], summary={"unordered": True})
    assert grading._compare_generic(c, "any", ["y", "x"], "en")[0]
    assert not grading._compare_generic(Check("c", {"en": "c"}, {}, ["x", "y"]), "any", ["y", "x"], "en")[0]
