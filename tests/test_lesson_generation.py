"""Lesson 3, "Generation metrics" (issue 49): its steps and texts (English and Danish), every check right and wrong
on the sample's live data, the recorded judge's arithmetic by the lab's own LLMJudge, and its three exercises: the
reference and the lesson's code pass every check through the harness, typical wrong versions fail with their own
hint, and no expected value reaches the browser."""
from __future__ import annotations

import json
import math
import string

import pytest

from app_helpers import library_result
from rag_metrics.answers.recorded import GENERATED, faithfulness_score, record, relevancy_score, sample_records
from rag_metrics.exercises import browser_payload, build_checks, exercise, grade
from rag_metrics.exercises.catalogue import exercises_for_lesson
from rag_metrics.exercises.mistakes import MISTAKES
from rag_metrics.exercises.reference_generation import REFERENCE
from rag_metrics.exercises.runner import run_harness
from rag_metrics.lesson import LessonContext, check
from rag_metrics.lesson import generation as G
from rag_metrics.lesson.course import lesson
from rag_metrics.lesson.texts import TEXTS

NAMES = ("unsupported_claims", "faithfulness", "answer_relevancy")


@pytest.fixture(scope="module")
def ctx():
    return LessonContext(library_result("dense"), 5)


@pytest.fixture(scope="module")
def checks():
    return {n: build_checks(n, None, None, lang="da" if n == "faithfulness" else "en") for n in NAMES}


def _task(key: str):
    return next(t for s in G.LESSON.steps for t in s.tasks if t.key == key)


def _cos(a, b):
    return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


# ---- the lesson -------------------------------------------------------------------------------------------
def test_the_lesson_is_lesson_three_in_the_course_with_its_exercises():
    assert lesson("generation") is G.LESSON and G.LESSON.number == 3
    assert [s.key for s in G.LESSON.steps] == ["l3_two", "l3_claims", "l3_share", "l3_relevancy", "l3_judge",
                                               "l3_quiz"]
    assert all(s.tasks for s in G.LESSON.steps) and G.LESSON.quiz == G.LESSON.steps[-1].tasks
    keys = [t.key for s in G.LESSON.steps for t in s.tasks]
    assert len(keys) == len(set(keys)) and all(k.startswith("l3_") for k in keys)
    assert G.LESSON.exercises == NAMES == tuple(e.name for e in exercises_for_lesson("generation"))
    steps = [s.key for s in G.LESSON.steps]
    assert all(exercise(n).step in steps and exercise(n).lesson == "generation" for n in NAMES)


def test_every_text_is_english_and_danish_with_the_same_placeholders():
    needed = {G.LESSON.title, G.LESSON.intro}
    for s in G.LESSON.steps:
        needed |= {s.title, s.body}
        for t in s.tasks:
            needed |= {t.prompt, t.hint, t.ok} | {t.option_key(o) for o in t.options}
    assert needed <= set(G.TEXTS)
    fields = string.Formatter()
    for key, (en, da) in G.TEXTS.items():
        assert en.strip() and da.strip() and TEXTS[key] == {"en": en, "da": da}, key
        assert {f for _, f, _, _ in fields.parse(en) if f} == {f for _, f, _, _ in fields.parse(da) if f}, key
        if key.endswith((".body", ".prompt", ".hint", ".ok")):
            assert en != da, key
    for n in NAMES:   # the exercises' texts too
        ex = exercise(n)
        assert ex.prompt["en"] != ex.prompt["da"] and len(ex.hints["da"]) == len(ex.hints["en"]) >= 2


def test_the_recorded_judge_follows_the_peoples_labels():
    from rag_metrics.answers.data import load_sample_answers

    items, labels = load_sample_answers()
    recs = sample_records()
    assert [r.item.id for r in recs] == [it.id for it in items]
    for r in recs:
        claims = [(s, v) for s, v in labels[r.item.id].sentences if v != "not a claim"]
        assert list(r.claims) == [s for s, _ in claims]
        assert r.supported == [v == "supported" for _, v in claims]
        assert all(len(row) == len(r.item.contexts) for row in r.supports)
    assert {r.item.id for r in recs if r.generated} == set(GENERATED)


def test_the_figures_are_the_lab_judges_arithmetic():
    from rag_metrics.answers.data import load_sample_answers

    items, labels = load_sample_answers()
    for name, mean, n, none in G.system_faithfulness():
        shares = []
        for it in items:
            if it.system != name:
                continue
            lab = [v for _, v in labels[it.id].sentences if v != "not a claim"]
            if lab:
                shares.append(lab.count("supported") / len(lab))
        assert mean == pytest.approx(sum(shares) / len(shares)) and n - none == len(shares)
    by_system = {name: mean for name, mean, _, _ in G.system_faithfulness()}
    assert by_system["careful"] > by_system["sloppy"]
    zero = [r.item.id for r, s in G.relevancy_rows() if s.value == 0.0]
    assert zero == [i for i, gen in GENERATED.items() if all(f for _, f in gen)]


def test_the_claims_checks_are_live(ctx):
    ex = G.example()
    n, s = len(ex.claims), sum(any(row) for row in ex.supports)
    assert 0 < s < n
    t = _task("l3_supported_n")
    assert check(t, str(s), ctx) and not check(t, str(s + 1), ctx) and not check(t, "", ctx)
    t = _task("l3_share")
    want = (s + 1) / (n + 1)
    assert check(t, f"{want:.3f}", ctx) and check(t, f"{want:.3f}".replace(".", ","), ctx)
    assert not check(t, f"{s / n:.3f}", ctx) and not check(t, None, ctx)


def test_the_relevancy_checks_are_live(ctx):
    from rag_metrics.answers.recorded import sample_vectors

    r = record(G.RELEVANCY_EXAMPLE)
    vec = sample_vectors()
    want = sum(_cos(vec[r.item.question], vec[q]) for q, _ in r.generated) / len(r.generated)
    t = _task("l3_rel_value")
    assert check(t, f"{want:.3f}", ctx) and not check(t, f"{want + 0.01:.3f}", ctx) and not check(t, "0", ctx)
    t = _task("l3_rel_zero")
    assert check(t, "noncommittal", ctx) and not check(t, "far", ctx) and not check(t, "none", ctx)


def test_the_judge_step_passes_with_a_run_or_without_a_judge(ctx):
    t = _task("l3_judge_run")
    assert check(t, {"configured": False}, ctx)
    assert check(t, {"configured": True, "ran": True, "faithfulness": 0.5, "faithfulness_status": "ok"}, ctx)
    assert check(t, {"configured": True, "ran": True, "faithfulness": None, "faithfulness_status": "no_statements"},
                 ctx)
    for bad in ({"configured": True, "ran": False}, {"configured": True}, {}, None, "configured", {"ran": True}):
        assert not check(t, bad, ctx), bad


def test_the_quiz_has_one_right_option_each(ctx):
    for key, right in [("l3_which", "relevancy"), ("l3_quiz_none", "none"), ("l3_quiz_flags", "mean"),
                       ("l3_quiz_part", "judge")]:
        t = _task(key)
        assert check(t, right, ctx) and not any(check(t, o, ctx) for o in t.options if o != right), key


# ---- the exercises ----------------------------------------------------------------------------------------
def _verdict(name, checks, code, lang="en"):
    return grade(name, checks[name], run_harness(code, browser_payload(name, checks[name], lang)), lang)


def test_expected_values_are_the_lab_judges_on_the_sample_and_the_edge_cases(checks):
    faith = {c.id: c for c in checks["faithfulness"]}
    assert {"sample_mixed", "sample_all", "sample_none", "sample_no_claims", "more_chunks", "no_claims"} <= set(faith)
    assert faith["no_claims"].expected is None and faith["sample_no_claims"].expected is None
    assert faith["more_chunks"].expected == pytest.approx(2 / 3) and faith["sample_none"].expected == 0.0
    assert faith["more_chunks"].args["params"][0][0] == "Free har 2 GB."   # the made-up claims in Danish
    unsup = {c.id: c for c in checks["unsupported_claims"]}
    assert unsup["more_chunks"].expected == ["Team has unlimited storage."] and unsup["no_claims"].expected == []
    assert all(c.unordered for c in checks["unsupported_claims"])
    rel = {c.id: c for c in checks["answer_relevancy"]}
    assert rel["all_noncommittal"].expected == 0.0 and rel["no_questions"].expected == 0.0
    assert rel["some_noncommittal"].expected == pytest.approx((1 + 0.64 + 0.48) / 3)
    assert rel["sample_q003-sloppy"].expected == 0.0
    q, gen, flags = rel[f"sample_{G.RELEVANCY_EXAMPLE}"].args["params"]
    assert len(q) == 384 and not any(flags)
    assert rel[f"sample_{G.RELEVANCY_EXAMPLE}"].expected == pytest.approx(sum(_cos(q, g) for g in gen) / len(gen))
    assert relevancy_score(q, gen, flags).value == rel[f"sample_{G.RELEVANCY_EXAMPLE}"].expected
    assert faithfulness_score([], {}).status == "no_statements"


@pytest.mark.parametrize("name", NAMES)
def test_the_payload_holds_no_expected_value_and_no_reference(name, checks):
    text = json.dumps(browser_payload(name, checks[name], "da"), allow_nan=False)
    assert REFERENCE[name].strip() not in text and exercise(name).lesson_code.strip() not in text
    assert '"expected' not in text and "hint" not in text
    for c in checks[name]:
        if isinstance(c.expected, float) and len(repr(c.expected)) > 8:
            assert repr(c.expected) not in text, c.id


@pytest.mark.parametrize("name", NAMES)
def test_reference_and_lesson_code_pass_every_check(name, checks):
    for code in (REFERENCE[name], exercise(name).lesson_code):
        v = _verdict(name, checks, code)
        assert v.error is None and v.all_passed and v.total == len(checks[name]) >= 7, v.first_failure


def _sub(code: str, old: str, new: str) -> str:
    assert old in code, old
    return code.replace(old, new)


L = {n: exercise(n).lesson_code for n in NAMES}
WRONG = [
    ("faithfulness", _sub(L["faithfulness"], "return supported / len(claims)",
                          "return supported / len(supports[claims[0]])"), "faith_divide_chunks"),
    ("faithfulness", _sub(L["faithfulness"], "        if any(supports[claim]):\n            supported += 1",
                          "        supported += sum(supports[claim])"), "faith_count_pairs"),
    ("faithfulness", _sub(L["faithfulness"], "any(supports[claim])", "all(supports[claim])"), "faith_all_chunks"),
    ("faithfulness", _sub(L["faithfulness"], "return None  #", "return 0.0  #"), "faith_no_claims_zero"),
    ("faithfulness", _sub(L["faithfulness"], "return supported / len(claims)",
                          "return (len(claims) - supported) / len(claims)"), "faith_unsupported_share"),
    ("unsupported_claims", _sub(L["unsupported_claims"], "if not any(", "if any("), "unsup_supported"),
    ("unsupported_claims", _sub(L["unsupported_claims"], "if not any(", "if not all("), "unsup_any_zero"),
    ("answer_relevancy", _sub(L["answer_relevancy"], "    if all(noncommittal):\n        return 0.0\n", ""),
     "rel_ignore_noncommittal"),
    ("answer_relevancy", _sub(L["answer_relevancy"], "if all(noncommittal)", "if any(noncommittal)"),
     "rel_any_noncommittal"),
    ("answer_relevancy", _sub(L["answer_relevancy"], "return dot / (len_a * len_b)", "return dot"), "rel_dot"),
    ("answer_relevancy", _sub(L["answer_relevancy"], "score = sum(cosines) / len(cosines)", "score = sum(cosines)"),
     "rel_sum"),
    ("answer_relevancy", _sub(L["answer_relevancy"], "        return 0.0  # the judge", "        return None  #"),
     "no_questions"),   # no mistake computes None: the check's own hint says what the lab gives
]


def test_every_exercise_has_wrong_versions():
    assert all(w[2] in MISTAKES or w[2] == "no_questions" for w in WRONG)
    assert {w[0] for w in WRONG} == set(NAMES)


@pytest.mark.parametrize("name,code,mistake", WRONG, ids=[w[2] for w in WRONG])
def test_a_wrong_version_fails_with_its_own_hint(name, code, mistake, checks):
    for lang in ("en", "da"):
        v = _verdict(name, checks, code, lang)
        assert v.error is None and v.passed < v.total
        f = v.first_failure
        if mistake in MISTAKES:
            assert f is not None and f.mistake == mistake, (f.id, f.mistake, f.message)
            assert f.hint == MISTAKES[mistake][1 if lang == "da" else 0]
        else:
            check_ = next(c for c in checks[name] if c.id == mistake)
            assert f is not None and f.id == mistake and f.hint == check_.hint[lang], (f.id, f.hint)
