"""The "as in the lesson" preset, metric by metric (docs/conventions.md#options): recall skips the
questions with no relevant id (``recall_empty="skip"``) in every mean the library gives, while the
other metrics count them as misses; failure analysis lists out-of-scope questions under "miss"."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rag_metrics import GoldenSet, Run
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.metrics.presets import apply_preset, describe_conventions, preset_of
from rag_metrics.types import OUT_OF_SCOPE, GoldenQuery


@pytest.fixture
def tiny():
    golden = GoldenSet((GoldenQuery("q1", "a?", "factual", {"a": 1, "b": 1}),
                        GoldenQuery("q2", "b?", "factual", {"c": 1}),
                        GoldenQuery("q3", "c?", OUT_OF_SCOPE, {}),
                        GoldenQuery("q4", "d?", "factual", {"z": 0})))   # judged, none relevant
    run = Run.from_rankings({"q1": ["a", "x", "y"], "q2": ["x", "y", "c"], "q3": ["a", "c"], "q4": ["z", "a"]})
    return golden, run


def test_recall_skips_questions_with_no_relevant_id_only_under_the_lesson_preset(tiny):
    golden, run = tiny
    lesson = evaluate(golden, run, apply_preset(EvalOptions(), "lesson"))
    trec = evaluate(golden, run)
    assert lesson.options.recall_empty == "skip" and trec.options.recall_empty == "zero"
    assert lesson.mean("recall", 2) == pytest.approx((1 / 2 + 0) / 2)          # q3, q4 skipped
    assert lesson.mean("hit_rate", 2) == pytest.approx(1 / 4)                  # every question
    assert trec.mean("recall", 2) == pytest.approx((1 / 2 + 0 + 0) / 3)        # q4 in scope, scores 0
    assert lesson.with_options(recall_empty="zero").mean("recall", 2) == pytest.approx(1 / 8)
    s = lesson.summary(["recall", "hit_rate"], [2], ci=True).set_index("metric")
    assert s.loc["recall", "n"] == 2 and s.loc["hit_rate", "n"] == 4
    assert s.loc["recall", "mean"] == pytest.approx(lesson.mean("recall", 2))
    # two questions enter recall's mean: too few for an interval (issue 29: no interval below 3 values)
    assert np.isnan(s.loc["recall", "ci_low"]) and np.isnan(s.loc["recall", "ci_high"])
    cats = lesson.by_category(["recall", "hit_rate"], [2], ci=False)
    assert set(cats[cats.metric == "recall"].category) == {"factual"}
    assert set(cats[cats.metric == "hit_rate"].category) == {"factual", OUT_OF_SCOPE}
    pq = lesson.per_query(["recall", "hit_rate"], [2])
    assert list(pq[pq.metric == "recall"].query_id) == ["q1", "q2"] and len(pq[pq.metric == "hit_rate"]) == 4
    assert len(lesson.per_query(["recall"], [2], all_queries=True)) == 4
    curve = lesson.curve(["recall"], max_k=3).set_index("k")
    assert curve.loc[3, "value"] == pytest.approx((1 / 2 + 1) / 2)
    with pytest.raises(Exception, match="recall_empty"):
        EvalOptions(recall_empty="never")  # type: ignore[arg-type]


def test_the_preset_is_named_and_recognised():
    lesson = apply_preset(EvalOptions(), "lesson")
    assert preset_of(lesson) == "lesson" and preset_of(EvalOptions(recall_empty="skip")) == "custom"
    assert "recall skips questions with no relevant id" in describe_conventions(lesson)
    assert preset_of(apply_preset(lesson, "trec_eval")) == "trec_eval"


def test_default_summary_is_unchanged_by_the_grouping(tiny):
    golden, run = tiny
    res = evaluate(golden, run)
    s = res.summary(["hit_rate", "recall", "ndcg"], [1, 2], ci=True)
    assert list(s.n) == [3] * 6 and all(not math.isnan(v) for v in s.ci_low)


def test_failures_list_out_of_scope_questions_under_miss(tiny):
    golden, run = tiny
    trec = evaluate(golden, run)
    lesson = evaluate(golden, run, apply_preset(EvalOptions(), "lesson"))
    assert list(trec.failures(2).query_id) == ["q2", "q4"]
    f = lesson.failures(2)
    assert list(f.query_id) == ["q2", "q3", "q4"]
    row = f.set_index("query_id").loc["q3"]
    assert row.expected_ids == [] and row.retrieved_ids == ["a", "c"] and row.first_relevant_rank is pd_na()


def pd_na():
    import pandas as pd

    return pd.NA


def test_compare_and_achievable_use_recalls_own_questions(tiny):
    from rag_metrics.compare.paired import compare, per_query_deltas
    from rag_metrics.insights import readouts

    golden, run = tiny
    opts = apply_preset(EvalOptions(), "lesson")
    a = evaluate(golden, run, opts)
    b = evaluate(golden, Run.from_rankings({"q1": ["a", "b"], "q2": ["c"], "q3": ["x"], "q4": ["x"]}), opts)
    table = compare(a, b, ["recall@2", "hit_rate@2"]).set_index("metric")
    assert table.loc["recall", "n"] == 2 and table.loc["hit_rate", "n"] == 4
    assert table.loc["recall", "mean_a"] == pytest.approx(a.mean("recall", 2))
    assert list(per_query_deltas(a, b, "recall@2").query_id) == ["q1", "q2"]
    assert readouts.achievable(a, "recall", 2) == pytest.approx(1.0)      # over q1, q2 only
    assert readouts.achievable(a, "hit_rate", 2) == pytest.approx(2 / 4)  # q3, q4 can never hit


def test_cli_evaluate_lesson_conventions_recall(tmp_path, capsys, tiny):
    import json

    from rag_metrics.cli import main
    from rag_metrics.io.trec import write_trec_run

    golden, run = tiny
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q.id} 0 {i} {g}\n" for q in golden for i, g in q.relevant.items()), encoding="utf-8")
    path = tmp_path / "run.trec"
    write_trec_run(run, path)
    assert main(["evaluate", "--qrels", str(qrels), "--run", str(path), "--k", "2", "--metrics", "recall,hit_rate",
                 "--format", "json", "--conventions", "lesson", "--per-query", "--ci"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # q3 has no line in the qrels file, so it is no golden question; q4 is judged with none relevant
    assert doc["metrics"]["recall@2"] == pytest.approx(1 / 4)     # q1 1/2, q2 0; q3 and q4 skipped
    assert math.isnan(doc["per_query"]["q4"]["recall@2"]) and doc["per_query"]["q4"]["hit_rate@2"] == 0
