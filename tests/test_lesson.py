"""The lesson library: steps in the lesson's order, every task's check (a right and a wrong answer),
the translations table, progress round trips, the teacher's class table, the lesson preset and
honest targets (issue 17)."""
from __future__ import annotations

import math
import re
import string

import pandas as pd
import pytest

from app_helpers import library_result
from rag_metrics import GoldenSet, Run
from rag_metrics.evaluation import evaluate
from rag_metrics.insights import readouts
from rag_metrics.lesson import (
    LANGUAGES,
    NONE,
    QUIZ,
    STEPS,
    TASKS,
    TEXTS,
    LessonContext,
    Progress,
    ProgressStore,
    check,
    choices,
    store_for_space,
    teacher,
    text,
)
from rag_metrics.lesson import steps as L
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.metrics.presets import PRESETS, apply_preset, describe_conventions, preset_of
from rag_metrics.types import GoldenQuery


@pytest.fixture(scope="module")
def result():
    return library_result("dense")


@pytest.fixture(scope="module")
def ctx(result):
    return LessonContext(result, 5, baseline=result.golden)


# ---- steps -------------------------------------------------------------------------------------------
def test_steps_follow_the_lessons_order():
    assert [s.key for s in STEPS] == ["why", "hit_rate", "mrr", "precision", "ndcg", "recall", "ragas",
                                      "categories", "disagree", "failures", "quiz"]
    assert all(s.tasks for s in STEPS)                      # at least one task per step
    assert [n for _, n in STEPS[1].numbers] == [1, 3, 5, 10]  # hit rate at 1, 3, 5, 10
    assert len(QUIZ) >= 5 and all(t.kind == "choice" and t.answer in t.options for t in QUIZ)
    assert len(TASKS) == sum(len(s.tasks) for s in STEPS)   # task keys are unique


def test_live_numbers_are_the_dashboards_means(result):
    nums = L.live_numbers(L.step("hit_rate"), result, 5)
    assert nums == [("hit_rate", k, result.mean("hit_rate", k)) for k in (1, 3, 5, 10)]
    mrr = L.live_numbers(L.step("mrr"), result, 3)
    assert mrr == [("mrr", None, result.mean("mrr")), ("mrr", 3, result.mean("mrr", 3))]
    # the precision step names P@5 and P@K: at K = 5 that is one number, shown once
    assert L.live_numbers(L.step("precision"), result, 5) == [("precision", 5, result.mean("precision", 5))]
    assert L.live_numbers(L.step("precision"), result, 10) == [
        ("precision", 5, result.mean("precision", 5)), ("precision", 10, result.mean("precision", 10))]


# ---- each check: right and wrong ---------------------------------------------------------------------
def test_fixed_choices(ctx):
    for t in TASKS.values():
        if t.answer is not None:
            wrong = next(o for o in t.options if o != t.answer)
            assert check(t, t.answer, ctx) and not check(t, wrong, ctx), t.key


def test_hit_count(ctx, result):
    inc = result.included
    n = int(result.values("hit_rate", 10)[inc].sum() - result.values("hit_rate", 1)[inc].sum())
    assert check("hit_count", n, ctx) and check("hit_count", str(n), ctx)
    assert not check("hit_count", n + 1, ctx) and not check("hit_count", "many", ctx)


def test_mrr_sandbox_move_the_relevant_result_to_rank_2(ctx):
    assert L.sandbox_start() == [1, 0, 0, 0, 0]
    assert not check("mrr_sandbox", L.sandbox_start(), ctx)        # MRR = 1
    assert check("mrr_sandbox", [0, 1, 0, 0, 0], ctx)              # 1/2 = 0.5
    assert not check("mrr_sandbox", [0, 0, 1, 0, 0], ctx)          # 1/3
    assert not check("mrr_sandbox", [0, 1, 1, 0, 0], ctx)          # relabelled, not moved
    assert not check("mrr_sandbox", "nonsense", ctx)


def test_mrr_row_reads_the_live_mrr(ctx, result):
    mrr = result.mean("mrr")  # 0.703 on the sample: "good"
    assert L.mrr_row(mrr) == "good" and check("mrr_row", "good", ctx) and not check("mrr_row", "perfect", ctx)
    assert [L.mrr_row(v) for v in (1.0, 0.5, 0.4999, 0.25, 0.1, 0.05)] == [
        "perfect", "good", "acceptable", "weak", "poor", "very_poor"]
    assert [v for v, _ in choices(TASKS["mrr_row"], ctx)][-1] == "very_poor"


def test_p5_best_is_the_ideal_ranking(ctx):
    assert check("p5_best", "0.431", ctx) and check("p5_best", "0,431", ctx)
    assert not check("p5_best", "0.6", ctx) and not check("p5_best", "", ctx)


def test_ndcg_worked_example(ctx):
    # binary, relevant at ranks 2 and 4 of 4, two relevant: (1/log2 3) / (1 + 1/log2 3) = 0.3869
    expected = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert check("ndcg_calc", f"{expected:.3f}", ctx) and check("ndcg_calc", "0,387", ctx)
    assert not check("ndcg_calc", "0.631", ctx)


def test_k_predict(ctx, result):
    moving = L.changing_metrics(result, 5, 10)
    assert "recall" in moving and "precision" in moving
    assert check("k_predict", {"k": 10, "metrics": moving}, ctx)
    assert not check("k_predict", {"k": 10, "metrics": moving[:-1]}, ctx)
    assert not check("k_predict", {"k": 5, "metrics": []}, ctx)   # the same K is not a change
    assert not check("k_predict", [10], ctx)


def test_label_a_missing_chunk_and_watch_recall(result):
    base = result.golden
    q = next(q for q in base if q.in_scope)
    ranking = result.ranking(q.id)
    new_id = next(i for i, g in zip(ranking["id"], ranking["grade"]) if g == 0)
    labelled = GoldenSet(tuple(GoldenQuery(x.id, x.question, x.category,
                                           {**x.relevant, new_id: 1} if x.id == q.id else x.relevant)
                               for x in base))
    after = evaluate(labelled, result.run)
    ctx = LessonContext(after, 5, baseline=base)
    recall = float(after.values("recall", 5)[after.query_ids.index(q.id)])
    assert check("label_missing", {"query_id": q.id, "recall": f"{recall:.3f}"}, ctx)
    assert not check("label_missing", {"query_id": q.id, "recall": recall + 0.1}, ctx)
    # without a new label the task is not solved, even with the right recall
    unchanged = LessonContext(result, 5, baseline=base)
    r0 = float(result.values("recall", 5)[result.query_ids.index(q.id)])
    assert not check("label_missing", {"query_id": q.id, "recall": r0}, unchanged)
    assert not check("label_missing", {"query_id": "nope", "recall": 0}, ctx)


def test_weakest_category(ctx, result):
    cats = result.by_category(["hit_rate"], ks=[5], ci=False)
    low = cats.sort_values("mean").iloc[0]
    high = cats.sort_values("mean").iloc[-1]
    assert check("weakest_category", low["category"], ctx)
    assert low["mean"] == high["mean"] or not check("weakest_category", high["category"], ctx)
    assert {v for v, _ in choices(TASKS["weakest_category"], ctx)} == set(cats["category"])


def test_hit_but_low_ndcg(ctx, result):
    found = L.hit_not_ndcg(result)
    assert found, "the sample has such questions"
    q = result.query_ids.index(found[0])
    assert result.values("hit_rate", 5)[q] == 1 and result.values("ndcg", 5)[q] < 0.5
    assert check("hit_not_ndcg", found[0], ctx) and not check("hit_not_ndcg", NONE, ctx)
    good = next(i for i, h, n in zip(result.query_ids, result.values("hit_rate", 5), result.values("ndcg", 5))
                if h == 1 and n >= 0.5)
    assert not check("hit_not_ndcg", good, ctx)


def test_why_a_failure_failed(ctx, result):
    f = result.failures(5)
    assert len(f)
    for row in f.itertuples():
        reason = L.failure_reason(result, row.query_id, 5)
        if not pd.isna(row.first_relevant_rank):  # retrieved, below K
            assert reason == "below_k"
        assert reason in ("below_k", "not_retrieved", "no_relevant_label")
        assert check("why_failed", {"query_id": row.query_id, "reason": reason}, ctx)
        other = next(o for o in TASKS["why_failed"].options if o != reason)
        assert not check("why_failed", {"query_id": row.query_id, "reason": other}, ctx)
    hit = next(q for q, h in zip(result.query_ids, result.values("hit_rate", 5)) if h == 1)
    assert L.failure_reason(result, hit, 5) is None and not check("why_failed", {"query_id": hit,
                                                                                  "reason": "below_k"}, ctx)
    assert not check("why_failed", {"query_id": NONE}, ctx)  # there are failures


def test_failure_reasons_on_a_hand_table():
    golden = GoldenSet.from_qrels({"below": {"a": 1}, "gone": {"z": 1}, "zero": {"a": 0}})
    run = Run.from_rankings({"below": ["x", "y", "a"], "gone": ["x", "y"], "zero": ["a", "x"]})
    res = evaluate(golden, run)
    assert [L.failure_reason(res, q, 2) for q in ("below", "gone", "zero")] == [
        "below_k", "not_retrieved", "no_relevant_label"]
    assert L.failure_reason(res, "below", 3) is None


def test_every_task_has_an_answer_kind_and_tolerates_garbage(ctx):
    for t in TASKS.values():
        assert t.kind in ("choice", "number", "sandbox", "k_predict", "label", "query", "failure")
        for junk in (None, 3.5, {"x": 1}, [], "zzz"):
            check(t, junk, ctx)  # never raises


# ---- translations ----------------------------------------------------------------------------------
def _fields(s: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(s) if f}


def test_every_text_in_both_languages_with_the_same_placeholders():
    assert set(LANGUAGES) == {"en", "da"}
    for key, by_lang in TEXTS.items():
        assert set(by_lang) == set(LANGUAGES), key
        assert all(v.strip() for v in by_lang.values()), key
        assert _fields(by_lang["en"]) == _fields(by_lang["da"]), key


def test_every_key_the_lesson_uses_has_a_text(ctx):
    for s in STEPS:
        assert s.title in TEXTS and s.body in TEXTS
        for t in s.tasks:
            assert {t.prompt, t.hint, t.ok} <= set(TEXTS), t.key
            for _, key in choices(t, ctx):
                assert key is None or key in TEXTS, key
    for o in TASKS["why_failed"].options:
        assert TASKS["why_failed"].option_key(o) in TEXTS


def test_danish_is_danish():
    assert text("ui.check", "da") == "Tjek" and text("ui.step_of", "da", n=2, total=11) == "Trin 2 af 11"
    da = " ".join(v["da"] for v in TEXTS.values())
    unquoted = re.sub(r'"[^"]*"', "", da)  # the app's own (English) labels are quoted
    assert re.search(r"[æøå]", da) and " the " not in unquoted and " and " not in unquoted
    with pytest.raises(Exception, match="language"):
        text("ui.check", "de")


# ---- progress ----------------------------------------------------------------------------------------
def test_progress_round_trip(tmp_path):
    store = ProgressStore(tmp_path)
    assert store.load() == Progress() and store.problem is None
    p = (Progress().with_answer("why_pick", "hit_rate", False).with_answer("why_pick", "mrr", True)
         .with_answer("k_predict", {"k": 10, "metrics": ["recall"]}, False).with_step(3).with_language("da"))
    store.save(p)
    assert store.path == tmp_path / "lesson" / "progress.json"
    back = ProgressStore(tmp_path).load()
    assert back.step == 3 and back.language == "da"
    assert back.answers == {"why_pick": "mrr", "k_predict": {"k": 10, "metrics": ["recall"]}}
    assert back.done == {"why_pick": True, "k_predict": False}
    assert back.steps_done()[0] and not any(back.steps_done()[1:])
    assert back.fraction() == pytest.approx(1 / len(STEPS))
    # a solved task stays solved when a later answer is wrong
    assert back.with_answer("why_pick", "recall", False).done["why_pick"]


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b'{"format": "other"}',
                                     b'{"format": "rag-metrics-lesson-progress", "step": "x"}'])
def test_a_bad_progress_file_is_a_fresh_start_with_a_reason(tmp_path, content):
    store = ProgressStore(tmp_path)
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(content)
    assert store.load() == Progress() and store.problem


def test_progress_per_space(tmp_path):
    a, b = store_for_space("private-a", tmp_path), store_for_space("private-b", tmp_path)
    a.save(Progress().with_step(4))
    assert store_for_space("private-a", tmp_path).load().step == 4 and b.load().step == 0
    assert store_for_space("shared", tmp_path).path == tmp_path / "lesson" / "progress.json"


# ---- the teacher's view ----------------------------------------------------------------------------
def test_class_table_csv_reset_and_push(tmp_path):
    store_for_space("private-a", tmp_path).save(
        Progress().with_answer("why_pick", "mrr", True).with_answer("quiz_mrr", "2", False).with_step(2))
    seats = [("Seat A", "private-a"), ("Seat B", "private-b")]
    table = teacher.class_progress(seats, tmp_path, metrics=lambda space: {"hit_rate@5": 0.5})
    assert table["seat"].tolist() == ["Seat A", "Seat B"]
    assert table["step"].tolist() == [3, 1] and table["steps_done"].tolist() == [1, 0]
    assert table["1 why"].tolist() == [True, False] and table["quiz mrr"].tolist() == ["2", ""]
    assert table["quiz"].tolist() == [0, 0] and table["hit_rate@5"].tolist() == [0.5, 0.5]
    csv = teacher.progress_csv(table)
    assert csv.splitlines()[0].startswith("seat,space,step,steps_done,1 why") and "Seat A" in csv
    assert teacher.class_progress([], tmp_path).empty
    teacher.reset_progress(["private-a"], tmp_path)
    assert store_for_space("private-a", tmp_path).load() == Progress()
    from rag_metrics.workspace.store import Workspace

    g = GoldenSet.from_qrels({"q1": {"a": 1}})
    assert teacher.push_golden(g, "sample_corpus", ["shared", "private-a"], tmp_path) == ["private-a"]
    loaded = Workspace("sample_corpus", tmp_path, space="private-a").load()
    assert loaded is not None and [q.id for q in loaded[0]] == ["q1"]
    assert Workspace("sample_corpus", tmp_path).load() is None  # the shared space is not written


# ---- the lesson preset -----------------------------------------------------------------------------
def test_lesson_preset_on_the_sample(result):
    lesson = result.with_options(**{k: v for k, v in PRESETS["lesson"].items() if k != "ndcg_gain"})
    assert round(result.mean("hit_rate", 5), 3) == 0.859     # trec_eval: 55 of 64 in scope
    assert round(lesson.mean("hit_rate", 5), 3) == 0.724     # the lesson's code: 55 of 76
    assert lesson.options == apply_preset(result.options, "lesson")
    assert preset_of(lesson.options) == "lesson" and preset_of(result.options) == "trec_eval"
    assert preset_of(lesson.options, "exponential") == "custom"
    assert describe_conventions(lesson.options) == ("Conventions: as in the lesson (out-of-scope questions counted "
                                                   "as misses, recall skips questions with no relevant id, binary "
                                                   "relevance for NDCG)")
    # docs/conventions.md#options (the lesson's recall_at_k): recall skips the questions with no relevant id
    assert round(lesson.mean("recall", 5), 3) == 0.651 and round(result.mean("recall", 5), 3) == 0.651
    assert round(lesson.with_options(recall_empty="zero").mean("recall", 5), 3) == 0.548   # the former preset
    assert round(lesson.mean("precision", 5), 4) == 0.2263 and round(lesson.mean("ndcg", 5), 4) == 0.4967
    assert lesson.included_for("recall@5").sum() == 64 and lesson.included_for("hit_rate@5").sum() == 76


def test_binary_ndcg_hand_table():
    # grades [3, 0, 1], judged {3, 1, 2 (not retrieved)}; binary: gains [1, 0, 1], ideal [1, 1, 1]
    golden = GoldenSet.from_qrels({"q": {"a": 3, "c": 1, "d": 2}})
    run = Run.from_rankings({"q": ["a", "b", "c"]})
    graded = evaluate(golden, run)
    binary = evaluate(golden, run, EvalOptions(ndcg_relevance="binary"))
    dcg = 1 + 1 / math.log2(4)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert binary.mean("ndcg", 3) == pytest.approx(dcg / idcg)
    assert binary.mean("ndcg_exp", 3) == pytest.approx(dcg / idcg)  # the same for 0/1 gains
    assert graded.mean("ndcg", 3) == pytest.approx((3 + 1 / 2) / (3 + 2 / math.log2(3) + 1 / 2))
    assert binary.mean("mrr") == graded.mean("mrr") and binary.mean("map", 3) == graded.mean("map", 3)
    e = binary.explain("q", 3)["ndcg"]
    assert e.value == pytest.approx(dcg / idcg) and "1/log2(4)" in e.substituted
    # relevance level 2: grade 1 is not relevant, so it gives no binary gain
    lvl2 = evaluate(golden, run, EvalOptions(ndcg_relevance="binary", relevance_level=2))
    assert lvl2.mean("ndcg", 3) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    with pytest.raises(Exception, match="ndcg_relevance"):
        EvalOptions(ndcg_relevance="yes")  # type: ignore[arg-type]


# ---- honest targets --------------------------------------------------------------------------------
def test_achievable_is_the_ideal_ranking(result):
    assert readouts.achievable(result, "precision", 5) == pytest.approx(0.43125)   # 27.6 / 64
    assert readouts.achievable(result.golden, "precision", 5) == pytest.approx(0.43125)
    assert readouts.achievable(result, "mrr") == 1.0 and readouts.achievable(result, "ndcg", 10) == 1.0
    miss = result.with_options(out_of_scope="miss")
    assert readouts.achievable(miss, "mrr") == pytest.approx(64 / 76)
    g = GoldenSet.from_qrels({"q1": {"a": 1}, "q2": {"a": 1, "b": 2, "c": 1}})
    assert readouts.achievable(g, "precision", 2) == pytest.approx((1 / 2 + 2 / 2) / 2)
    assert readouts.achievable(g, "recall", 2) == pytest.approx((1 + 2 / 3) / 2)


def test_targets_at_the_lessons_k_with_the_reason(result):
    t = readouts.target_checks(result, 1).set_index("metric")   # the sidebar's K does not move them
    assert t.loc["precision", "k"] == 5 and t.loc["mrr", "k"] is pd.NA
    assert t.loc["precision", "value"] == pytest.approx(result.mean("precision", 5))
    assert t.loc["mrr", "value"] == pytest.approx(result.mean("mrr"))
    assert not t.loc["precision", "reachable"] and t.loc["mrr", "reachable"]
    assert t.loc["precision", "why"] == ("41 of 64 in-scope questions have fewer than 3 relevant chunks, so even a "
                                         "perfect ranking gives Precision@5 = 0.431.")
    assert t.loc["mrr", "why"] == ""
    assert readouts.targets_caption() == "MRR > 0.7 and Precision@5 > 0.6"


def test_mrr_reading_makes_sense_at_every_k():
    assert "rank 2" not in readouts.mrr_reading(0.5, k=1) and "rank 1" in readouts.mrr_reading(0.5, k=1)
    assert readouts.mrr_reading(0.5, k=2) == readouts.mrr_reading(0.5)
    assert "rank 4" not in readouts.mrr_reading(0.3, k=3).split("(")[0]
    assert readouts.mrr_reading(1.0, k=1).startswith("Perfect")
    for k in (1, 2, 3, 5, 10, None):
        for v in (0.0, 0.05, 0.1, 0.25, 0.33, 0.5, 0.9, 1.0):
            reading = readouts.mrr_reading(v, k=k).split("(")[0]
            ranks = [int(r) for r in re.findall(r"around rank (\d+)", reading)]
            assert all(k is None or r <= k for r in ranks), (v, k, reading)


def test_cli_conventions_preset(tmp_path, capsys, result):
    import json

    from rag_metrics.cli import main
    from rag_metrics.io.trec import write_trec_run
    from rag_metrics.sample import sample_paths

    run = tmp_path / "run.trec"
    write_trec_run(result.run, run)
    qrels = str(sample_paths().golden)
    out = {}
    for extra in ([], ["--conventions", "lesson"], ["--ndcg-relevance", "binary"]):
        assert main(["evaluate", "--qrels", qrels, "--run", str(run), "--k", "5", "--format", "json", *extra]) == 0
        out[" ".join(extra)] = json.loads(capsys.readouterr().out)["metrics"]
    assert round(out[""]["hit_rate@5"], 3) == 0.859 and round(out["--conventions lesson"]["hit_rate@5"], 3) == 0.724
    binary = result.with_options(ndcg_relevance="binary")
    assert out["--ndcg-relevance binary"]["ndcg@5"] == pytest.approx(binary.mean("ndcg", 5))
