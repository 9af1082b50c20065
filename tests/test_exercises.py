"""Code exercises (issue 26), library side: the catalogue, the checks' expected values from the engine,
the harness (run in a separate process, as the CLI does), grading with the diagnosis of typical mistakes,
the browser payload (no expected value, no reference code) and grade() against a hostile report."""
from __future__ import annotations

import ast
import json
import math
import re

import pytest

from app_helpers import library_result
from rag_metrics.errors import InputError
from rag_metrics.exercises import (
    HARNESS,
    LESSON_OPTIONS,
    browser_payload,
    build_checks,
    exercise,
    golden_dataset,
    grade,
)
from rag_metrics.exercises.catalogue import exercises_for_lesson
from rag_metrics.exercises.mistakes import MISTAKES
from rag_metrics.exercises.reference import REFERENCE
from rag_metrics.exercises.runner import TimedOut, run_harness
from rag_metrics.lesson import STEPS
from rag_metrics.metrics.presets import preset_of

#: Lesson 2's exercises (the other lessons' exercises have their own tests: tests/test_lesson_generation.py, ...).
EXERCISES = exercises_for_lesson("retrieval")


@pytest.fixture(scope="module")
def result():
    return library_result("dense")


@pytest.fixture(scope="module")
def checks(result):
    return {ex.name: build_checks(ex.name, result.golden, result.run) for ex in EXERCISES}


def _verdict(name, checks, code, lang="en"):
    payload = browser_payload(name, checks[name], lang)
    return grade(name, checks[name], run_harness(code, payload), lang)


# ---- the catalogue ---------------------------------------------------------------------------------
def test_one_exercise_per_lesson_function_in_the_lessons_order():
    assert [e.name for e in EXERCISES] == ["hit_rate_at_k", "mean_reciprocal_rank", "precision_at_k", "ndcg_at_k",
                                           "recall_at_k", "evaluate_by_category", "analyze_failures"]
    order = [s.key for s in STEPS]
    assert [order.index(e.step) for e in EXERCISES] == sorted(order.index(e.step) for e in EXERCISES)
    assert exercise("ndcg_at_k").extra_functions == ("dcg_at_k", "mean_ndcg_at_k")
    with pytest.raises(InputError, match="hit_rate_at_k"):
        exercise("nope")


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.name)
def test_every_exercise_speaks_english_and_danish(ex):
    for table in (ex.title, ex.prompt):
        assert set(table) == {"en", "da"} and all(v.strip() for v in table.values())
    for table in (ex.examples, ex.hints, ex.conventions):
        assert set(table) == {"en", "da"} and len(table["en"]) == len(table["da"]) >= 1
    assert len(ex.hints["en"]) >= 2
    assert ex.prompt["en"] != ex.prompt["da"]
    for source in (ex.starter, ex.lesson_code, REFERENCE[ex.name]):
        tree = ast.parse(source)
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert {ex.name, *ex.extra_functions} <= defined


# ---- expected values from the engine ---------------------------------------------------------------
def test_the_current_data_check_is_the_dashboards_lesson_number(checks, result):
    lesson = result.with_options(**{k: getattr(LESSON_OPTIONS, k) for k in
                                    ("out_of_scope", "ndcg_relevance", "recall_empty")})
    assert preset_of(LESSON_OPTIONS) == "lesson"
    current = {name: next(c for c in cs if c.id == "current") for name, cs in checks.items()}
    assert round(current["hit_rate_at_k"].expected, 4) == 0.7237       # issue 26's figures
    assert round(current["precision_at_k"].expected, 4) == 0.2263
    assert round(current["ndcg_at_k"].expected, 4) == 0.4967
    assert round(current["recall_at_k"].expected, 3) == 0.651          # the lesson skips out of scope
    assert current["mean_reciprocal_rank"].expected == pytest.approx(lesson.mean("mrr", 10))
    assert current["hit_rate_at_k"].metric == "hit_rate@5" and current["mean_reciprocal_rank"].metric == "mrr@10"
    cats = current["evaluate_by_category"].expected
    assert sum(c["count"] for c in cats.values()) == 76 and cats["out_of_scope"]["hits"] == 0
    assert sum(c["hits"] for c in cats.values()) == 55                 # 55 of 76, as hit rate@5
    fails = current["analyze_failures"].expected
    assert len(fails) == 76 - 55 and sum(not f["expected_ids"] for f in fails) == 12  # out of scope listed


def _expected(checks, name, cid):
    return next(c for c in checks[name] if c.id == cid).expected


def test_edge_cases_by_hand(checks):
    """The engine's values on the edge cases equal the lesson's arithmetic worked by hand."""
    e = lambda name, cid: _expected(checks, name, cid)  # noqa: E731
    # first relevant at rank K = 3 counts, at K + 1 it does not
    assert e("hit_rate_at_k", "rank_k") == 1 and e("hit_rate_at_k", "rank_k_plus_1") == 0
    assert e("mean_reciprocal_rank", "rank_k") == pytest.approx(1 / 3)
    assert e("mean_reciprocal_rank", "rank_k_plus_1") == 0
    assert e("ndcg_at_k", "rank_k") == pytest.approx(0.5)
    # a duplicate: positions for precision and NDCG, a set for recall
    assert e("precision_at_k", "duplicates") == pytest.approx(2 / 3)
    assert e("recall_at_k", "duplicates") == pytest.approx(1 / 2)
    assert e("ndcg_at_k", "duplicates") == pytest.approx(1.0)
    # K larger than the list: precision divides by K; the ideal DCG has min(|R|, K) ones
    assert e("precision_at_k", "k_larger") == pytest.approx(0.1)
    assert e("ndcg_at_k", "k_larger") == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    # several relevant
    assert e("recall_at_k", "several_relevant") == pytest.approx(3 / 4)
    assert e("mean_reciprocal_rank", "several_relevant") == pytest.approx(1 / 2)
    # graded labels: the lesson's NDCG is binary
    assert e("ndcg_at_k", "graded") == pytest.approx(1.5 / (1 + 1 / math.log2(3) + 0.5))
    # out of scope: a miss everywhere but recall, which skips it
    assert e("hit_rate_at_k", "out_of_scope") == 0.5 and e("recall_at_k", "out_of_scope") == 1.0
    assert e("ndcg_at_k", "out_of_scope") == 0.5
    # DCG itself
    assert e("ndcg_at_k", "dcg_binary") == pytest.approx(1.5)
    assert e("ndcg_at_k", "dcg_graded") == pytest.approx(3 + 2 / math.log2(3) + 1 / math.log2(5))
    assert e("ndcg_at_k", "dcg_cutoff") == pytest.approx(1 / math.log2(3))
    cats = e("evaluate_by_category", "mixed")
    assert cats == {"factual": {"hits": 1, "count": 2, "hit_rate": 0.5},
                    "out_of_scope": {"hits": 0, "count": 1, "hit_rate": 0.0},
                    "unknown": {"hits": 1, "count": 1, "hit_rate": 1.0}}
    fails = e("analyze_failures", "mixed")
    assert [f["question"] for f in fails] == ["Which plan includes support?", "What is the capital of France?"]
    assert fails[0]["retrieved_ids"] == ["c1", "c2", "c3"] and fails[1]["expected_ids"] == []


def test_every_check_names_its_input_and_covers_the_issues_edge_cases(checks):
    ids = {name: [c.id for c in cs] for name, cs in checks.items()}
    for name in ("hit_rate_at_k", "mean_reciprocal_rank", "precision_at_k", "ndcg_at_k", "recall_at_k"):
        assert {"current", "rank_k", "rank_k_plus_1", "none_retrieved", "duplicates", "k_larger",
                "several_relevant", "out_of_scope"} <= set(ids[name]), name
    assert "graded" in ids["ndcg_at_k"] and ids["ndcg_at_k"][:3] == ["dcg_binary", "dcg_graded", "dcg_cutoff"]
    for cs in checks.values():
        assert len({c.id for c in cs}) == len(cs)
        assert all(c.label["en"] and c.label["da"] and c.summary for c in cs)


def test_golden_dataset_is_the_lessons_shape(result):
    data, questions = golden_dataset(result.golden)
    assert len(data) == len(result.golden) == len(set(questions))
    item = data[0]
    assert set(item) >= {"question", "relevant_chunk_ids", "category"}
    assert all(isinstance(i, str) for i in item["relevant_chunk_ids"])
    oos = [d for d in data if d.get("category") == "out_of_scope"]
    assert oos and all(d["relevant_chunk_ids"] == [] for d in oos)


def test_build_checks_refuses_bad_input(result):
    with pytest.raises(InputError, match="one of"):
        build_checks("nope", result.golden, result.run)
    with pytest.raises(InputError):
        build_checks("hit_rate_at_k", {"q": {}}, result.run)  # type: ignore[arg-type]


# ---- the payload -----------------------------------------------------------------------------------
@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.name)
def test_payload_holds_no_expected_value_and_no_reference(ex, checks):
    payload = browser_payload(ex.name, checks[ex.name], "da")
    text = json.dumps(payload, allow_nan=False)          # JSON-safe
    assert set(payload) == {"exercise", "function", "lang", "harness", "checks", "limits"}
    assert payload["harness"] == HARNESS and payload["function"] == ex.name
    assert [c["id"] for c in payload["checks"]] == [c.id for c in checks[ex.name]]
    assert all(set(c) == {"id", "args"} for c in payload["checks"])
    assert '"expected' not in text.replace('"expected_ids', "") and "hint" not in json.dumps(payload["checks"])
    assert REFERENCE[ex.name].strip() not in text and ex.lesson_code.strip() not in text
    for c in checks[ex.name]:
        if isinstance(c.expected, float) and len(repr(c.expected)) > 8:
            assert repr(c.expected) not in text, c.id
        if isinstance(c.expected, (dict, list)) and c.expected:
            assert json.dumps(c.expected) not in text, c.id
    assert payload["limits"]["timeout_s"] > 0 and payload["limits"]["max_output_chars"] > 0


def test_harness_is_plain_stdlib_python():
    tree = ast.parse(HARNESS)
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"builtins", "io", "json", "math", "sys", "traceback", "gc", "importlib", "_imp"}, imported
    assert "def run_checks(student_code, payload_json)" in HARNESS


# ---- right solutions pass ----------------------------------------------------------------------------
@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.name)
def test_reference_and_lesson_code_pass_every_check(ex, checks):
    for code in (REFERENCE[ex.name], ex.lesson_code):
        v = _verdict(ex.name, checks, code)
        assert v.error is None and v.passed == v.total == len(checks[ex.name]), v.first_failure
        assert v.first_failure is None and v.all_passed
        assert v.headline("en") == f"Passed {v.total} of {v.total} checks"
        assert v.headline("da") == f"Bestod {v.total} af {v.total} tjek"
        if ex.name in ("evaluate_by_category", "analyze_failures"):
            assert v.dashboard is None
        else:   # the student's mean beside the Dashboard's
            d = v.dashboard
            assert d is not None and d["questions"] == 76 and d["student"] == pytest.approx(d["dashboard"])


# ---- wrong solutions fail with the intended hint ---------------------------------------------------
def _sub(code: str, old: str, new: str) -> str:
    assert old in code, old
    return code.replace(old, new)


L = {e.name: e.lesson_code for e in EXERCISES}

#: (exercise, what is wrong, code, the mistake diagnosed or a phrase of the hint)
WRONG = [
    ("hit_rate_at_k", "off by one", _sub(L["hit_rate_at_k"], "top_k=k)", "top_k=k + 1)"), "k_plus_one"),
    ("hit_rate_at_k", "skips out of scope",
     _sub(L["hit_rate_at_k"], "return hits / len(golden_dataset)",
          "return hits / len([i for i in golden_dataset if i['relevant_chunk_ids']])"), "in_scope_only"),
    ("hit_rate_at_k", "counts every relevant chunk",
     _sub(L["hit_rate_at_k"], "        if any(rid in item[\"relevant_chunk_ids\"] for rid in retrieved_ids):\n"
                              "            hits += 1\n",
          "        hits += sum(rid in item[\"relevant_chunk_ids\"] for rid in retrieved_ids)\n"),
     "count_every_relevant"),
    ("hit_rate_at_k", "k - 1", _sub(L["hit_rate_at_k"], "top_k=k)", "top_k=k - 1)"), "k_minus_one"),
    ("mean_reciprocal_rank", "last relevant", _sub(L["mean_reciprocal_rank"], "                break\n", ""),
     "last_relevant"),
    ("mean_reciprocal_rank", "rank + 1", _sub(L["mean_reciprocal_rank"], "1.0 / rank", "1.0 / (rank + 1)"),
     "rank_plus_one"),
    ("mean_reciprocal_rank", "ranks from 0", _sub(L["mean_reciprocal_rank"], "start=1", "start=0"),
     "Division by zero"),
    ("precision_at_k", "divides by the results", _sub(L["precision_at_k"], "n_relevant / k", "n_relevant / "
                                                      "max(len(retrieved_ids), 1)"), "divide_by_retrieved"),
    ("precision_at_k", "duplicates once",
     _sub(L["precision_at_k"], "sum(1 for rid in retrieved_ids if rid in relevant)",
          "len(set(retrieved_ids) & relevant)"), "dedup"),
    ("precision_at_k", "divides by |R|", _sub(L["precision_at_k"], "n_relevant / k",
                                              "n_relevant / max(len(relevant), 1)"), "divide_by_relevant"),
    ("ndcg_at_k", "natural log", _sub(L["ndcg_at_k"], "math.log2(i + 2)", "math.log(i + 2)"), "log_e"),
    ("ndcg_at_k", "ranks from 1", _sub(L["ndcg_at_k"], "enumerate(relevances[:k])",
                                       "enumerate(relevances[:k], start=1)"), "shift"),
    ("ndcg_at_k", "ideal of k ones", _sub(L["ndcg_at_k"], "[1] * min(len(relevant), k)", "[1] * k"), "ideal_k"),
    ("ndcg_at_k", "not normalised",
     _sub(L["ndcg_at_k"], "return dcg_at_k(relevances, k) / dcg_at_k(ideal, k)", "return dcg_at_k(relevances, k)"),
     "no_normalise"),
    ("ndcg_at_k", "log2(i + 1) from 0", _sub(L["ndcg_at_k"], "math.log2(i + 2)", "math.log2(i + 1)"),
     "Division by zero"),
    ("recall_at_k", "divides by k", _sub(L["recall_at_k"], "/ len(relevant))", "/ k)"), "divide_by_k"),
    ("recall_at_k", "duplicates twice",
     _sub(L["recall_at_k"], "len(retrieved & relevant)", 'sum(r["id"] in relevant for r in results[:k])'),
     "duplicates_twice"),
    ("recall_at_k", "out of scope as 0",
     _sub(L["recall_at_k"], "        if not relevant:\n            continue\n",
          "        if not relevant:\n            recalls.append(0.0)\n            continue\n"), "oos_as_zero"),
    ("evaluate_by_category", "no 'unknown'",
     _sub(L["evaluate_by_category"], 'item.get("category", "unknown")', 'item["category"]'), "'unknown'"),
    ("evaluate_by_category", "skips out of scope",
     _sub(L["evaluate_by_category"], "        category = ", "        if not item['relevant_chunk_ids']:\n"
                                                         "            continue\n        category = "),
     "Out-of-scope questions count too"),
    ("analyze_failures", "skips out of scope",
     _sub(L["analyze_failures"], "        results = ", "        if not item['relevant_chunk_ids']:\n"
                                                      "            continue\n        results = "),
     "always a failure"),
    ("analyze_failures", "not cut to k",
     _sub(_sub(L["analyze_failures"], "top_k=k)", "top_k=k + 3)"), '"retrieved_ids": retrieved_ids[:k]',
          '"retrieved_ids": retrieved_ids'), "retrieved_ids[:k]"),
    ("analyze_failures", "worst score", _sub(L["analyze_failures"], 'results[0]["score"]', 'results[-1]["score"]'),
     "results[0]['score']"),
]


def test_the_catalogue_has_two_wrong_solutions_per_exercise():
    for ex in EXERCISES:
        assert sum(w[0] == ex.name for w in WRONG) >= 2, ex.name


@pytest.mark.parametrize("name,what,code,intended", WRONG, ids=[f"{w[0]}:{w[1]}" for w in WRONG])
def test_wrong_solution_fails_with_the_intended_hint(name, what, code, intended, checks):
    v = _verdict(name, checks, code)
    assert v.error is None and v.passed < v.total
    f = v.first_failure
    assert f is not None and not f.passed and f.hint
    assert f.input and f.message
    if re.fullmatch(r"[a-z_0-9]+", intended):
        assert f.mistake is not None and f.mistake.startswith(intended), (f.id, f.message, f.hint)
        assert f.hint == MISTAKES[f.mistake][0]   # the mistake's own hint leads, not the check's generic one
    else:
        assert intended in f.hint, (f.id, f.message, f.hint)
    assert v.dashboard is None
    da = _verdict(name, checks, code, "da")
    assert da.first_failure is not None and da.first_failure.hint != f.hint   # the Danish hint


# ---- errors in plain words ---------------------------------------------------------------------------
def test_syntax_error_exception_and_missing_function_name_the_line(checks):
    v = _verdict("hit_rate_at_k", checks, "def hit_rate_at_k(golden_dataset, retriever, k=5)\n    return 1\n")
    assert v.passed == 0 and v.error.startswith("Your code has a syntax error on line 1")
    # one message: no check counted, no per-check copy of the error, no "Passed 0 of 8 checks"
    assert v.total == 0 and v.results == () and v.first_failure is None
    assert v.headline("en") == "Not checked" and "Passed" not in v.headline("en")
    assert "Traceback" not in v.error
    da = _verdict("hit_rate_at_k", checks, "def hit_rate_at_k(:\n", "da")
    assert da.error.startswith("Din kode har en syntaksfejl i linje 1")
    v = _verdict("hit_rate_at_k", checks, "def hit_rate_at_k(golden_dataset, retriever, k=5):\n    x = 1\n"
                                          "    return x / 0\n")
    assert v.passed == 0 and v.error is None
    assert v.first_failure.message == "Your code stopped on line 3 with ZeroDivisionError: division by zero."
    v = _verdict("hit_rate_at_k", checks, "def hit_rate(golden_dataset, retriever, k=5):\n    return 0\n")
    assert v.passed == 0 and "no function named hit_rate_at_k" in v.error
    v = _verdict("ndcg_at_k", checks, REFERENCE["ndcg_at_k"].replace("def dcg_at_k", "def dcg"))
    assert "dcg_at_k" in v.error
    v = _verdict("hit_rate_at_k", checks, "raise SystemExit(3)\n")
    assert v.error == "Your code stopped on line 1 with SystemExit: 3."


def test_prints_are_captured_and_capped(checks):
    payload = browser_payload("hit_rate_at_k", checks["hit_rate_at_k"], "en")
    code = L["hit_rate_at_k"] + "\nprint('x' * 10**6)\nimport sys\nsys.stderr.write('y' * 10**6)\n"
    report = json.loads(run_harness(code, payload))
    assert report["ok"] and len(report["stdout"]) <= payload["limits"]["max_output_chars"] + 20
    assert report["stdout"].endswith("[output cut]")


def test_an_endless_loop_is_stopped(checks):
    payload = browser_payload("hit_rate_at_k", checks["hit_rate_at_k"], "en")
    with pytest.raises(TimedOut):
        run_harness("def hit_rate_at_k(golden_dataset, retriever, k=5):\n    while True:\n        pass\n",
                    payload, timeout=2)


# ---- grade() against a hostile report ----------------------------------------------------------------
def _hostile(checks):
    ids = [c.id for c in checks]
    big = "x" * 3_000_000
    yield from [None, 5, 3.5, True, [], "", "{", "null", "[1, 2]", big, b"\xff\xfe", "[" * 100_000 + "]" * 100_000,
                {"results": []}, {"results": None}, {"error": 7}, {"error": {"kind": "syntax", "line": "x",
                                                                          "message": {"a": 1}}},
                {"error": {"kind": "exception", "line": 10**30, "message": "\x00\x1b[31m" + "m" * 10_000}},
                {"ok": True, "results": {"nope": {"value": 1}}}]
    for value in (float("nan"), float("inf"), -float("inf"), 10**400, "0.72", None, [0.7], {"a": 1}, True,
                  "z" * 1_000_000, [[[]]] * 1000):
        yield {"ok": True, "results": {i: {"value": value} for i in ids}}
    yield {"ok": True, "results": {i: "value" for i in ids}}
    yield {"ok": True, "results": {i: {"error": {"kind": None, "line": -1, "message": None}} for i in ids}}
    yield {"ok": True, "results": {i: {"error": "boom"} for i in ids}}
    yield json.dumps({"ok": True, "results": {i: {"value": float("nan")} for i in ids}})  # NaN as JSON text


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.name)
def test_grade_survives_a_hostile_report(ex, checks):
    cs = checks[ex.name]
    for n, reported in enumerate(_hostile(cs)):
        for lang in ("en", "da", "xx"):
            v = grade(ex.name, cs, reported, lang)  # type: ignore[arg-type]
            assert v.passed == 0 and v.dashboard is None, (n, lang)
            if v.error is not None:   # the run as a whole failed: one message, no check counted
                assert v.total == 0 and v.first_failure is None, (n, lang)
                assert v.headline(lang) in ("Not checked", "Ikke tjekket")
            else:
                assert v.total == len(cs) and v.first_failure is not None, (n, lang)
                assert v.headline(lang).endswith(("checks", "tjek"))
            texts = [v.error or "", *(r.message for r in v.results),
                     (v.first_failure.hint if v.first_failure else "") or ""]
            assert all(len(t) < 2000 for t in texts), n
            assert all(r.got is None or len(json.dumps(r.got, default=str)) < 5000 for r in v.results), n


def test_grade_reads_a_partly_right_report(checks):
    cs = checks["precision_at_k"]
    results = {c.id: {"value": c.expected} for c in cs}
    results["duplicates"] = {"value": 1 / 3}
    v = grade("precision_at_k", cs, {"ok": True, "results": results}, "en")
    assert v.passed == v.total - 1 and v.first_failure.id == "duplicates"
    assert v.first_failure.mistake == "dedup" and "counts twice" in v.first_failure.hint
    assert v.first_failure.input == {"k": 3, "ranking": ["c2", "c2", "c5", "c7", "c3"], "relevant": ["c2", "c3"]}
    assert v.first_failure.expected == pytest.approx(2 / 3) and v.first_failure.got == pytest.approx(1 / 3)


def test_the_harness_as_main_without_the_flag_only_defines_functions():
    """Pyodide runs the source as ``__main__``: without the CLI's flag it must not read stdin."""
    import subprocess
    import sys

    call = ("\nimport json as _j\nprint(run_checks('def f(a, b):\\n    return a + b\\n', _j.dumps("
            "{'function': 'f', 'checks': [{'id': 'c', 'args': {'params': [1, 2]}}]})))\n")
    p = subprocess.run([sys.executable, "-I", "-c", HARNESS + call], input="not json", capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"ok": True, "error": None, "results": {"c": {"value": 3}}, "stdout": ""}


def test_verdict_as_json_shows_only_the_first_failures_expected_value(checks):
    cs = checks["precision_at_k"]
    results = {c.id: {"value": c.expected} for c in cs}
    results["duplicates"] = {"value": float("nan")}
    v = grade("precision_at_k", cs, {"ok": True, "results": results}, "da")
    d = v.to_dict("da")
    text = json.dumps(d, allow_nan=False)
    assert d["headline"] == f"Bestod {v.total - 1} af {v.total} tjek" and d["first_failure"]["id"] == "duplicates"
    assert d["first_failure"]["expected"] == pytest.approx(2 / 3)
    assert all(set(r) == {"id", "label", "passed", "message"} for r in d["results"])
    current = next(c for c in cs if c.id == "current").expected
    assert repr(current) not in text


def test_the_ndcg_exercise_asks_for_the_lessons_three_functions(checks):
    """Issue 48: the lesson defines dcg_at_k, ndcg_at_k for one question and mean_ndcg_at_k; the exercise
    asks for exactly those, and the lesson's code as printed passes every check."""
    ex = exercise("ndcg_at_k")
    lesson = {"dcg_at_k": ["relevances", "k"], "ndcg_at_k": ["retrieved_ids", "relevant_ids", "k"],
              "mean_ndcg_at_k": ["golden_dataset", "retriever", "k"]}
    for code in (ex.lesson_code, ex.starter):
        tree = ast.parse(code)
        assert {f.name: [a.arg for a in f.args.args] for f in tree.body if isinstance(f, ast.FunctionDef)} == lesson
    for lang in ("en", "da"):
        for sig in ("dcg_at_k(relevances, k)", "ndcg_at_k(retrieved_ids, relevant_ids, k)",
                    "mean_ndcg_at_k(golden_dataset, retriever, k=5)"):
            assert f"`{sig}`" in ex.text("prompt", lang)
    called = {c.args.get("function", ex.name) for c in checks["ndcg_at_k"]}
    assert called == set(lesson)
    v = _verdict("ndcg_at_k", checks, ex.lesson_code)
    assert v.all_passed and v.total == len(checks["ndcg_at_k"]) >= 12


def test_a_none_result_is_named_as_python_names_it():
    """A function that returns ``None`` is told "got None", not JSON's "null" (issue 48)."""
    from rag_metrics.exercises.grading import _fmt

    assert (_fmt(None), _fmt(True), _fmt(0.5), _fmt([1, 2])) == ("None", "True", "0.5", "[1, 2]")
