"""Lesson 4, "Building an automated evaluation system" (issue 49): its steps and texts (English and Danish), every
check right and wrong on the sample's live data (the lab's compare_paired, gate_checks and questions_needed), its
three exercises (the reference and the lesson's code pass every check through the harness; typical wrong versions
fail with their own hint; no expected value reaches the browser), and the CI job: its commands, run by the lab's
CLI on the sample, save a baseline and pass the gate."""
from __future__ import annotations

import json
import shlex
import shutil
import string

import pytest

from app_helpers import library_result
from rag_metrics.compare.gate import gate_checks, questions_needed
from rag_metrics.compare.paired import compare_paired
from rag_metrics.exercises import browser_payload, build_checks, exercise, grade
from rag_metrics.exercises.catalogue import exercises_for_lesson
from rag_metrics.exercises.mistakes import MISTAKES
from rag_metrics.exercises.reference_system import REFERENCE
from rag_metrics.exercises.runner import run_harness
from rag_metrics.exercises.system import sample_pairs
from rag_metrics.lesson import LessonContext, check
from rag_metrics.lesson import system as S
from rag_metrics.lesson.course import lesson
from rag_metrics.lesson.texts import TEXTS

NAMES = ("paired_difference", "gate_decision", "questions_needed")


@pytest.fixture(scope="module")
def ctx():
    return LessonContext(library_result("dense"), 5)


@pytest.fixture(scope="module")
def checks(ctx):
    r = ctx.result
    return {n: build_checks(n, r.golden, r.run, lang="da" if n == "gate_decision" else "en") for n in NAMES}


def _task(key: str):
    return S.LESSON.tasks[key]


# ---- the lesson -------------------------------------------------------------------------------------------
def test_the_lesson_is_lesson_four_in_the_course_with_its_exercises():
    assert lesson("system") is S.LESSON and S.LESSON.number == 4
    assert [s.key for s in S.LESSON.steps] == ["l4_parts", "l4_paired", "l4_gate", "l4_power", "l4_ci", "l4_quiz"]
    assert all(s.tasks for s in S.LESSON.steps) and S.LESSON.quiz == S.LESSON.steps[-1].tasks
    keys = [t.key for s in S.LESSON.steps for t in s.tasks]
    assert len(keys) == len(set(keys)) and all(k.startswith("l4_") for k in keys)
    assert S.LESSON.exercises == NAMES == tuple(e.name for e in exercises_for_lesson("system"))
    steps = [s.key for s in S.LESSON.steps]
    assert all(exercise(n).step in steps and exercise(n).lesson == "system" for n in NAMES)


def test_every_text_is_english_and_danish_with_the_same_placeholders():
    needed = {S.LESSON.title, S.LESSON.intro}
    for s in S.LESSON.steps:
        needed |= {s.title, s.body}
        for t in s.tasks:
            needed |= {t.prompt, t.hint, t.ok} | {t.option_key(o) for o in t.options}
    assert needed <= set(S.TEXTS)
    fields = string.Formatter()
    for key, (en, da) in S.TEXTS.items():
        assert en.strip() and da.strip() and TEXTS[key] == {"en": en, "da": da}, key
        assert {f for _, f, _, _ in fields.parse(en) if f} == {f for _, f, _, _ in fields.parse(da) if f}, key
        if key.endswith((".body", ".prompt", ".hint", ".ok")):
            assert en != da, key
    for n in NAMES:
        ex = exercise(n)
        assert ex.prompt["en"] != ex.prompt["da"] and len(ex.hints["da"]) == len(ex.hints["en"]) >= 2


def test_the_figures_are_the_gates_numbers_on_the_candidate(ctx):
    r = ctx.result
    c = S.candidate_result(r)
    inc = r.included & c.included
    a, b = r.values("mrr", 5)[inc], c.values("mrr", 5)[inc]
    # the candidate: each question's first two results swapped (only a question whose first relevant chunk was
    # first loses, only one whose first relevant chunk was second wins)
    first = r.first_relevant_rank()[inc]
    assert ((b < a) <= (first == 1)).all() and ((b > a) == (first == 2)).all() and (b < a).any()
    g = gate_checks(compare_paired([("mrr", 5, a, b)]))[0]
    cmp = S.comparison(ctx)
    assert cmp.gate.verdict == g.verdict and cmp.gate.ci_high == pytest.approx(g.ci_high)
    figs = dict(S.STEPS[2].figures(ctx, "en"))
    assert figs["Mean change"] == f"{g.delta:+.3f}".replace("-", "−")
    assert figs[f"Smallest detectable, n = {g.n}"] == f"{g.detectable:.3f}"
    power = dict(S.STEPS[3].figures(ctx, "da"))
    sd = float(cmp.row["sd"])
    assert power["Spørgsmål nødvendige for 0,05"] == str(questions_needed(sd, 0.05, g.alpha))
    assert power["Spørgsmål nødvendige for 0,10"] == str(questions_needed(sd, 0.10, g.alpha))


def test_the_computed_checks_are_live(ctx):
    cmp = S.comparison(ctx)
    delta = float(cmp.row["delta"])
    t = _task("l4_mean_diff")
    assert check(t, f"{delta:.3f}", ctx) and check(t, f"{delta:.3f}".replace(".", ",").replace("-", "−"), ctx)
    assert not check(t, f"{-delta:.3f}", ctx) and not check(t, "", ctx) and not check(t, None, ctx)
    t = _task("l4_verdict")
    assert check(t, cmp.gate.verdict, ctx)
    assert not any(check(t, o, ctx) for o in t.options if o != cmp.gate.verdict)
    t = _task("l4_more")
    more = max(questions_needed(float(cmp.row["sd"]), 0.05, cmp.gate.alpha) - cmp.gate.n, 0)
    assert check(t, str(more), ctx) and not check(t, str(more + 1), ctx) and not check(t, "many", ctx)


def test_the_fixed_choices_have_one_right_option_each(ctx):
    for key, right in [("l4_version", "mixed"), ("l4_why_pair", "difficulty"), ("l4_next", "more"),
                       ("l4_exit", "inconclusive"), ("l4_quiz_drop", "fail"), ("l4_quiz_power", "four"),
                       ("l4_quiz_baseline", "rescore")]:
        t = _task(key)
        assert check(t, right, ctx) and not any(check(t, o, ctx) for o in t.options if o != right), key


def test_the_quiz_drop_is_the_gates_rule():
    """The quiz's case (2,000 questions, interval [-0.03, -0.01]) is a fail by the lab's gate, whatever the
    minimum change."""
    import numpy as np

    a = np.full(2000, 0.6)
    b = a - 0.02 + np.tile([0.12, -0.12], 1000) * np.linspace(0.5, 1.5, 2000)
    g = gate_checks(compare_paired([("mrr", 5, a, b)]), 0.05)[0]
    assert g.ci_high < 0 and g.verdict == "fail"


# ---- the exercises ----------------------------------------------------------------------------------------
def _verdict(name, checks, code, lang="en"):
    return grade(name, checks[name], run_harness(code, browser_payload(name, checks[name], lang)), lang)


def test_expected_values_are_the_engines_on_the_sample_the_current_set_and_edge_cases(checks, ctx):
    pairs = sample_pairs()
    assert len(pairs) > 40
    paired = {c.id: c for c in checks["paired_difference"]}
    assert {"sample_systems", "current", "mixed", "identical", "one_question"} <= set(paired)
    e = paired["sample_systems"].expected
    assert e["mean_difference"] < 0 and e["losses"] > e["wins"] and paired["one_question"].expected["sd"] is None
    cmp = S.comparison(ctx)
    assert paired["current"].expected["mean_difference"] == pytest.approx(float(cmp.row["delta"]))
    gate = {c.id: c.expected for c in checks["gate_decision"]}
    assert gate["sample_worse"] == "fail" and gate["current"] == cmp.gate.verdict
    assert {"pass", "fail", "inconclusive"} == set(gate.values())
    assert gate["small_set"] == "inconclusive" and gate["small_set_wide"] == "pass"
    needed = {c.id: c.expected for c in checks["questions_needed"]}
    assert needed["typical"] == questions_needed(0.3, 0.05, 0.05) == 285 and needed["few"] == 3
    assert needed["zero_sd"] is None and needed["zero_change"] is None


@pytest.mark.parametrize("name", NAMES)
def test_the_payload_holds_no_expected_value_and_no_reference(name, checks):
    text = json.dumps(browser_payload(name, checks[name], "da"), allow_nan=False)
    assert REFERENCE[name].strip() not in text and exercise(name).lesson_code.strip() not in text
    assert '"expected' not in text and "hint" not in text


@pytest.mark.parametrize("name", NAMES)
def test_reference_and_lesson_code_pass_every_check(name, checks):
    for code in (REFERENCE[name], exercise(name).lesson_code):
        v = _verdict(name, checks, code)
        assert v.error is None and v.all_passed and v.total == len(checks[name]) >= 6, v.first_failure


def test_the_given_t_quantile_is_scipys():
    from scipy import stats

    ns: dict = {}
    exec(exercise("questions_needed").starter, ns)   # the starter's own helpers
    for df in (1, 2, 5, 30, 447, 10_000):
        for p in (0.6, 0.8, 0.975, 0.995):
            assert ns["t_quantile"](p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-8), (p, df)


def _sub(code: str, old: str, new: str) -> str:
    assert old in code, old
    return code.replace(old, new)


L = {n: exercise(n).lesson_code for n in NAMES}
WRONG = [
    ("paired_difference", _sub(L["paired_difference"], "d = [b - a", "d = [a - b"), "pd_sign"),
    ("paired_difference", _sub(L["paired_difference"], "/ (n - 1))", "/ n)"), "pd_population_sd"),
    ("paired_difference", _sub(L["paired_difference"], "squares = sum((x - mean) ** 2 for x in d)",
                               "squares = (sum((x - sum(scores_a) / n) ** 2 for x in scores_a)"
                               " + sum((x - sum(scores_b) / n) ** 2 for x in scores_b))"),
     "pd_unpaired_sd"),
    ("paired_difference", _sub(L["paired_difference"], "if x > 0", "if x >= 0"), "pd_ties_counted"),
    ("paired_difference", _sub(L["paired_difference"], "sd = None", "sd = 0.0"), "pd_one_sd"),
    ("gate_decision", _sub(L["gate_decision"], "if detectable is not None and detectable <= min_change:",
                           "if True:"), "gate_no_min_change"),
    ("gate_decision", _sub(L["gate_decision"], "if ci_high is not None and ci_high < 0:",
                           "if comparison['change'] < 0:"), "gate_false_fail"),
    ("gate_decision", _sub(L["gate_decision"], "if ci_high is not None and ci_high < 0:",
                           "if comparison['ci_low'] is not None and comparison['ci_low'] < 0:"), "gate_false_fail"),
    ("gate_decision", _sub(L["gate_decision"], "if ci_high is not None and ci_high < 0:",
                           "if abs(comparison['change']) < min_change:\n        return 'pass'\n"
                           "    if ci_high is not None and ci_high < 0:"), "gate_no_min_change"),
    ("gate_decision", _sub(L["gate_decision"], 'return "inconclusive"', 'return "fail"'), "gate_false_fail"),
    ("gate_decision", _sub(L["gate_decision"], "if ci_high is not None and ci_high < 0:",
                           "if ci_high is not None and ci_high < -0.05:"), "gate_missed_fail"),
    ("gate_decision", _sub(L["gate_decision"], "detectable <= min_change", "detectable < min_change / 2"),
     "gate_missed_pass"),
    ("questions_needed", _sub(_sub(L["questions_needed"], "t_quantile(1 - alpha / 2, df)",
                                   "NormalDist().inv_cdf(1 - alpha / 2)"),
                              "t_quantile(power, df)", "NormalDist().inv_cdf(power)"), "qn_z"),
    ("questions_needed", _sub(L["questions_needed"], "t_quantile(1 - alpha / 2, df)", "t_quantile(1 - alpha, df)"),
     "qn_one_sided"),
    ("questions_needed", _sub(L["questions_needed"], "            return n\n", "            return n - 1\n"),
     "qn_last_short"),
    ("questions_needed", _sub(L["questions_needed"], "            return n\n", "            return n + 1\n"),
     "qn_one_more"),
    ("questions_needed", _sub(L["questions_needed"], "df = n - 1", "df = n"), "qn_df_n"),
    ("questions_needed", _sub(L["questions_needed"], "/ math.sqrt(n)\n", "/ n\n"), "qn_no_sqrt"),
    ("questions_needed", _sub(L["questions_needed"], "    n = 3\n", "    n = 2\n"), "qn_below_three"),
    ("questions_needed", _sub(L["questions_needed"], "        return None\n    n = 3", "        return 0\n    n = 3"),
     "qn_none"),
]


def test_every_exercise_has_wrong_versions():
    assert all(w[2] in MISTAKES for w in WRONG) and {w[0] for w in WRONG} == set(NAMES)


@pytest.mark.parametrize("name,code,mistake", WRONG, ids=[w[2] for w in WRONG])
def test_a_wrong_version_fails_with_its_own_hint(name, code, mistake, checks):
    for lang in ("en", "da"):
        v = _verdict(name, checks, code, lang)
        assert v.error is None and v.passed < v.total
        f = v.first_failure
        assert f is not None and f.mistake == mistake, (f.id, f.mistake, f.message)
        assert f.hint == MISTAKES[mistake][1 if lang == "da" else 0]


# ---- the CI job ---------------------------------------------------------------------------------------------
def _run_lines(yaml_text: str) -> list[str]:
    """The commands of a workflow: each step's ``run:`` (the job's YAML is read by PyYAML when installed)."""
    try:
        import yaml
    except ImportError:   # pragma: no cover - the lines as written
        return [ln.split("- run: ", 1)[1] for ln in yaml_text.splitlines() if "- run: " in ln]
    doc = yaml.safe_load(yaml_text)
    assert doc.get("on", doc.get(True)) == ["pull_request"]   # YAML 1.1 reads the key `on` as True
    return [s["run"] for s in doc["jobs"]["gate"]["steps"] if "run" in s]


def _comment_commands(yaml_text: str) -> list[str]:
    """The shell commands in the job's comments (``#   cmd \\`` continued on ``#     ...`` lines)."""
    out, more = [], False
    for line in yaml_text.splitlines():
        if not line.startswith("#   "):
            continue
        body = line[1:].strip()
        cont = body.endswith("\\")
        body = body.removesuffix("\\").strip()
        if more:
            out[-1] += " " + body
        else:
            out.append(body)
        more = cont
    return out


def test_the_ci_job_runs_the_gate_on_the_sample(tmp_path, monkeypatch, capsys):
    from rag_metrics.cli import main
    from rag_metrics.sample import sample_paths

    paths = sample_paths()
    shutil.copytree(paths.docs, tmp_path / "docs")
    shutil.copy(paths.golden, tmp_path / "golden.jsonl")
    monkeypatch.chdir(tmp_path)
    setup = S.CiSetup(retriever="bm25", metrics=("mrr", "ndcg"), k=5, min_change=0.3)
    job = S.ci_workflow(setup, "da")
    run, base, gate = S.ci_commands(setup)
    assert _comment_commands(job) == [run, base]   # how to save the baseline, in the job's comments
    assert max(len(line) for line in job.splitlines()) <= S.WIDTH
    lines = _run_lines(job)
    assert lines[0].startswith("pip install") and lines[1:] == [run, gate]
    for cmd in (run, base):   # once, on the main branch: the baseline
        argv = shlex.split(cmd)
        assert argv[0] == "rag-metrics" and main(argv[1:]) == 0, cmd
    argv = shlex.split(lines[-1])
    assert argv[:2] == ["rag-metrics", "gate"]
    code = main(argv[1:])
    out = capsys.readouterr()
    assert code == 0 and "gate: PASS" in out.out, (code, out.out[-2000:], out.err[-2000:])
    assert "ndcg@5: PASS" in out.out and "mrr@5: PASS" in out.out


def test_the_ci_job_for_an_own_system_and_bad_paths():
    for lang in ("en", "da"):   # nothing wider than a projector shows, whatever the setup
        long = S.CiSetup(retriever="", corpus="handbook/docs", golden="eval/golden-set.jsonl", options=(
            "--out-of-scope", "miss", "--recall-denominator", "cap"))
        assert max(len(line) for line in S.ci_workflow(long, lang).splitlines()) <= S.WIDTH
    job = S.ci_workflow(S.CiSetup(retriever=""), "en")
    assert "rag-metrics retrieve" not in job and "your_rag_system.py" in job and "--run run.jsonl" in job
    from rag_metrics.errors import InputError

    with pytest.raises(InputError, match="plain path"):
        S.ci_commands(S.CiSetup(corpus="docs\nrm -rf /"))
