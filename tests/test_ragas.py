"""RAGAS context metrics: hand-computed values, invariants, export, and ragas itself when importable.

Formulas (ragas 0.4.3 source, ragas/metrics/_context_precision.py and _context_recall.py):
  IDBasedContextPrecision = |set(retrieved) & set(reference)| / |set(retrieved)|  (NaN if none retrieved)
  IDBasedContextRecall    = |set(reference) & set(retrieved)| / |set(reference)|  (NaN if no reference)
  context precision       = sum_i (sum(v[:i+1]) / (i+1)) * v[i] / (sum(v) + 1e-10)
"""
from __future__ import annotations

import asyncio
import csv
import io
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_metrics import GoldenQuery, GoldenSet, Run
from rag_metrics.evaluation import evaluate
from rag_metrics.insights.ragas import (
    JUDGE_METRICS_NOTE,
    RELATION,
    context_metrics,
    context_metrics_summary,
    id_context_precision,
    id_context_recall,
    ragas_csv,
    ragas_jsonl,
    ragas_rows,
    rank_weighted_context_precision,
)
from rag_metrics.metrics.options import EvalOptions


@pytest.fixture()
def result():
    golden = GoldenSet((
        GoldenQuery("q1", "where is a?", "factual", {"a": 1, "c": 1}, "A is here."),
        GoldenQuery("q2", "what is x?", "factual", {"x": 1}),
        GoldenQuery("q3", "capital of France?", "out_of_scope", {}),
        GoldenQuery("q4", "z and y?", "comparison", {"z": 2, "y": 1}),
    ))
    run = Run.from_rankings({
        "q1": ["b", "a", "d", "c"],   # relevant at ranks 2 and 4
        "q2": ["x"],                  # one retrieved, relevant
        "q3": ["a"],
        # q4: nothing retrieved
    })
    return evaluate(golden, run)


TEXTS = {i: f"text of {i}" for i in "abcdxyz"}


def test_hand_values_at_3(result):
    df = context_metrics(result, 3).set_index("query_id")
    # q1, top 3 = [b, a, d], relevant {a, c}: h_3 = 1
    assert df.loc["q1", "ragas_id_context_precision"] == pytest.approx(1 / 3)   # 1 hit / 3 retrieved
    assert df.loc["q1", "precision@3"] == pytest.approx(1 / 3)
    assert df.loc["q1", "ragas_id_context_recall"] == pytest.approx(1 / 2)      # 1 of 2 references
    assert df.loc["q1", "recall@3"] == pytest.approx(1 / 2)
    assert df.loc["q1", "ragas_context_precision"] == pytest.approx((1 / 2) / 1)  # P@2 * v2 / h_3
    assert df.loc["q1", "map@3"] == pytest.approx((1 / 2) / 2)                  # same sum / |R|
    # q2: one id retrieved and relevant; RAGAS divides by 1 retrieved, P@3 by 3
    assert df.loc["q2", "ragas_id_context_precision"] == 1.0
    assert df.loc["q2", "precision@3"] == pytest.approx(1 / 3)
    assert df.loc["q2", "ragas_context_precision"] == 1.0 and df.loc["q2", "map@3"] == 1.0
    # q3 out of scope: no reference -> RAGAS recall NaN; one retrieved, none relevant -> precision 0
    assert math.isnan(df.loc["q3", "ragas_id_context_recall"])
    assert df.loc["q3", "ragas_id_context_precision"] == 0.0
    assert not df.loc["q3", "included"]
    # q4: nothing retrieved -> RAGAS precision NaN, recall 0/2 = 0; context precision 0
    assert math.isnan(df.loc["q4", "ragas_id_context_precision"])
    assert df.loc["q4", "ragas_id_context_recall"] == 0.0
    assert df.loc["q4", "ragas_context_precision"] == 0.0


def test_hand_values_at_4_all_found(result):
    df = context_metrics(result, 4).set_index("query_id")
    # q1 top 4 = [b, a, d, c]: both relevant found -> CP == AP = (1/2 + 2/4) / 2
    assert df.loc["q1", "ragas_context_precision"] == pytest.approx(0.5)
    assert df.loc["q1", "map@4"] == pytest.approx(0.5)
    assert df.loc["q1", "ragas_id_context_precision"] == pytest.approx(2 / 4)


def test_summary_means(result):
    s = context_metrics_summary(result, 3, ci=False).set_index("ragas_metric")
    # included = q1, q2, q4 (q3 out of scope). RAGAS precision: q4 NaN -> mean of (1/3, 1)
    assert s.loc["ragas_id_context_precision", "mean"] == pytest.approx((1 / 3 + 1) / 2)
    assert s.loc["ragas_id_context_precision", "n"] == 2
    assert s.loc["ragas_id_context_precision", "ours_mean"] == pytest.approx((1 / 3 + 1 / 3 + 0) / 3)
    # recall: identical per query
    assert s.loc["ragas_id_context_recall", "mean"] == pytest.approx((1 / 2 + 1 + 0) / 3)
    assert s.loc["ragas_id_context_recall", "n_equal"] == 3
    assert s.loc["ragas_context_precision", "ours"] == "map@3"
    assert "min(K, n)" in RELATION and "judge model" in JUDGE_METRICS_NOTE


def test_ragas_evaluate_aggregate_scores_out_of_scope_zero(result):
    """ragas.evaluate = nanmean over every exported row: q3 (out of scope, 'a' retrieved) scores 0
    for ID precision and NaN for ID recall (left out)."""
    s = context_metrics_summary(result, 3, ci=False).set_index("ragas_metric")
    # ID precision: q1 1/3, q2 1, q3 0, q4 NaN -> (1/3 + 1 + 0) / 3; in-scope mean (1/3 + 1) / 2
    assert s.loc["ragas_id_context_precision", "ragas_evaluate_mean"] == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert s.loc["ragas_id_context_precision", "ragas_evaluate_n"] == 3
    assert s.loc["ragas_id_context_precision", "mean"] == pytest.approx((1 / 3 + 1) / 2)
    # ID recall: q3 NaN -> both aggregates cover q1, q2, q4
    assert s.loc["ragas_id_context_recall", "ragas_evaluate_mean"] == pytest.approx((1 / 2 + 1 + 0) / 3)
    assert s.loc["ragas_id_context_recall", "ragas_evaluate_n"] == 3
    # rank-weighted: q1 1/2, q2 1, q3 0, q4 0 -> 1.5 / 4; in scope (q1, q2, q4) 1.5 / 3
    assert s.loc["ragas_context_precision", "ragas_evaluate_mean"] == pytest.approx(1.5 / 4)
    assert s.loc["ragas_context_precision", "mean"] == pytest.approx(1.5 / 3)
    # the aggregate is over the export's rows
    rows = ragas_rows(result, TEXTS, 3, columns="ragas")
    p = [id_context_precision(r["retrieved_context_ids"], r["reference_context_ids"]) for r in rows]
    assert float(np.nanmean(p)) == pytest.approx(s.loc["ragas_id_context_precision", "ragas_evaluate_mean"])


@pytest.fixture()
def dup_result():
    # q: relevant {a, c}; the run repeats 'a' (scores 3, 2): raw ranking a a b c, deduplicated a b c
    golden = GoldenSet((GoldenQuery("q", "?", "", {"a": 1, "c": 1}),))
    run = Run(["q"] * 4, ["a", "a", "b", "c"], [3.0, 2.0, 1.0, 0.5])
    return evaluate(golden, run)


def test_duplicates_raw_like_ragas(dup_result):
    raw = context_metrics(dup_result, 2).iloc[0]
    # raw top 2 = [a, a]: set {a} -> ID precision 1/1; recall 1/2; verdicts [1, 1] -> (1/1 + 2/2) / 2 = 1
    assert raw["ragas_id_context_precision"] == 1.0
    assert raw["ragas_id_context_recall"] == 0.5
    assert raw["ragas_context_precision"] == 1.0
    first = context_metrics(dup_result, 2, duplicates="first").iloc[0]
    # deduplicated top 2 = [a, b]: 1/2; recall 1/2; verdicts [1, 0] -> 1
    assert first["ragas_id_context_precision"] == 0.5
    assert first["ragas_context_precision"] == 1.0
    # our trec_eval metrics always use the deduplicated ranking: P@2 = 1/2
    assert raw["precision@2"] == first["precision@2"] == 0.5
    # k = 3: raw [a, a, b] -> set {a, b}: 1/2, verdicts [1, 1, 0] -> 1; dedup [a, b, c] -> 2/3,
    # verdicts [1, 0, 1] -> (1 + 2/3) / 2
    raw3, first3 = context_metrics(dup_result, 3).iloc[0], context_metrics(dup_result, 3, duplicates="first").iloc[0]
    assert raw3["ragas_id_context_precision"] == 0.5 and raw3["ragas_context_precision"] == 1.0
    assert first3["ragas_id_context_precision"] == pytest.approx(2 / 3)
    assert first3["ragas_context_precision"] == pytest.approx((1 + 2 / 3) / 2)
    # k = 4: the raw list holds every id -> recall 1 both ways
    assert context_metrics(dup_result, 4).iloc[0]["ragas_id_context_recall"] == 1.0


def test_duplicates_export_matches_scores(dup_result):
    texts = {"a": "A", "b": "B", "c": "C"}
    row = ragas_rows(dup_result, texts, 3, columns="ragas")[0]
    assert row["retrieved_context_ids"] == ["a", "a", "b"] and row["retrieved_contexts"] == ["A", "A", "B"]
    m = context_metrics(dup_result, 3).iloc[0]
    assert id_context_precision(row["retrieved_context_ids"], row["reference_context_ids"]) == \
        m["ragas_id_context_precision"]
    assert rank_weighted_context_precision([i in row["reference_context_ids"] for i in row["retrieved_context_ids"]]) \
        == m["ragas_context_precision"]
    assert ragas_rows(dup_result, texts, 3, duplicates="first")[0]["retrieved_context_ids"] == ["a", "b", "c"]
    from rag_metrics.errors import InputError
    with pytest.raises(InputError, match="duplicates must be 'raw'"):
        context_metrics(dup_result, 3, duplicates="dedup")  # type: ignore[arg-type]  # a bad value on purpose


def test_duplicates_tie_order_as_trec_eval():
    # equal scores: id descending ("b" before "a"); the repeated 'b' keeps both positions
    golden = GoldenSet((GoldenQuery("q", "?", "", {"a": 1}),))
    run = Run(["q"] * 3, ["a", "b", "b"], [1.0, 1.0, 1.0])
    res = evaluate(golden, run)
    row = ragas_rows(res, {"a": "A", "b": "B"}, 2, columns="ragas")[0]
    assert row["retrieved_context_ids"] == ["b", "b"]
    assert context_metrics(res, 2).iloc[0]["ragas_id_context_precision"] == 0.0


def test_id_functions_worked_example():
    # ranking [b, a, d, c], relevant {a, c}
    assert id_context_precision(["b", "a", "d", "c"], {"a", "c"}) == 0.5
    assert id_context_recall(["b", "a", "d"], ["a", "c"]) == 0.5
    assert id_context_precision(["a", "a"], ["a"]) == 1.0          # set semantics
    assert id_context_precision([1, 2], ["1"]) == 0.5               # ids compared as strings
    assert math.isnan(id_context_precision([], ["a"]))
    assert math.isnan(id_context_recall(["a"], []))
    assert rank_weighted_context_precision([0, 1, 0, 1]) == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert rank_weighted_context_precision([1, 0]) == 1.0
    assert rank_weighted_context_precision([1, 0], epsilon=1e-10) == pytest.approx(0.9999999999, abs=1e-12)
    assert rank_weighted_context_precision([0, 0]) == 0.0
    assert rank_weighted_context_precision([]) == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2), max_size=8), min_size=1, max_size=6),
       st.integers(1, 10), st.lists(st.integers(0, 3), min_size=6, max_size=6))
def test_kernel_agrees_with_id_definitions(grade_lists, k, extra_relevant):
    """Array version == RAGAS id definitions on random runs; recall@k == RAGAS recall when |R| > 0."""
    qrels, rankings = {}, {}
    for n, grades in enumerate(grade_lists):
        q = f"q{n}"
        ids = [f"d{n}_{i}" for i in range(len(grades))]
        rel = {i: g for i, g in zip(ids, grades) if g > 0}
        for j in range(extra_relevant[n]):  # relevant ids never retrieved
            rel[f"miss{n}_{j}"] = 1
        qrels[q], rankings[q] = rel, ids
    res = evaluate(GoldenSet.from_qrels(qrels), Run.from_rankings({q: r for q, r in rankings.items() if r}))
    df = context_metrics(res, k).set_index("query_id")
    for q, ids in rankings.items():
        ref = [i for i, g in qrels[q].items() if g >= 1]
        top = ids[:k]
        exp_p = id_context_precision(top, ref)
        exp_r = id_context_recall(top, ref)
        exp_cp = rank_weighted_context_precision([i in ref for i in top])
        got = df.loc[q]
        assert (math.isnan(exp_p) and math.isnan(got["ragas_id_context_precision"])) or \
            got["ragas_id_context_precision"] == pytest.approx(exp_p)
        assert (math.isnan(exp_r) and math.isnan(got["ragas_id_context_recall"])) or \
            got["ragas_id_context_recall"] == pytest.approx(exp_r)
        assert got["ragas_context_precision"] == pytest.approx(exp_cp)
        if ref:
            assert got["ragas_id_context_recall"] == pytest.approx(got[f"recall@{k}"])
            # CP@K * h_K == AP@K * |R|
            assert got["ragas_context_precision"] * got["hits"] == pytest.approx(got[f"map@{k}"] * len(ref))
            assert got["ragas_context_precision"] >= got[f"map@{k}"] - 1e-12
        if len(ids) >= k:
            assert got["ragas_id_context_precision"] == pytest.approx(got[f"precision@{k}"])


def test_relevance_level_applies():
    golden = GoldenSet((GoldenQuery("q", "?", "", {"a": 1, "b": 2}),))
    res = evaluate(golden, Run.from_rankings({"q": ["a", "b"]}), EvalOptions(relevance_level=2))
    row = context_metrics(res, 2).iloc[0]
    assert row["ragas_id_context_precision"] == 0.5 and row["ragas_id_context_recall"] == 1.0
    assert row["ragas_context_precision"] == 0.5       # only rank 2 relevant: (1/2) / 1
    assert ragas_rows(res, {"a": "A", "b": "B"}, 2)[0]["reference_context_ids"] == ["b"]


def test_k_validation(result):
    from rag_metrics.errors import InputError
    with pytest.raises(InputError, match="cutoff must be >= 1, got 0"):
        context_metrics(result, 0)


def test_export_rows_jsonl_csv(result):
    rows = ragas_rows(result, TEXTS, 3)
    assert [r["query_id"] for r in rows] == ["q1", "q2", "q3", "q4"]
    r1 = rows[0]
    assert r1["user_input"] == r1["question"] == "where is a?"
    assert r1["retrieved_context_ids"] == ["b", "a", "d"]
    assert r1["retrieved_contexts"] == r1["contexts"] == ["text of b", "text of a", "text of d"]
    assert r1["reference_context_ids"] == ["a", "c"]
    assert r1["reference_contexts"] == ["text of a", "text of c"]
    assert r1["reference"] == r1["ground_truth"] == "A is here."
    assert r1["response"] is None
    assert rows[3]["retrieved_contexts"] == []

    lines = ragas_jsonl(result, TEXTS, 3, answers={"q1": "It's at \"a\"."}).splitlines()
    assert len(lines) == 4
    assert json.loads(lines[0])["answer"] == json.loads(lines[0])["response"] == "It's at \"a\"."

    text = ragas_csv(result, TEXTS, 3, columns="ragas", include_out_of_scope=False)
    got = list(csv.DictReader(io.StringIO(text)))
    assert [g["query_id"] for g in got] == ["q1", "q2", "q4"]
    assert json.loads(got[0]["retrieved_contexts"]) == ["text of b", "text of a", "text of d"]
    assert json.loads(got[0]["reference_context_ids"]) == ["a", "c"]
    assert got[1]["reference"] == ""
    assert "question" not in got[0]

    legacy = ragas_rows(result, TEXTS, 2, columns="legacy")[0]
    assert set(legacy) == {"query_id", "category", "question", "contexts", "ground_truth", "answer",
                           "retrieved_context_ids", "reference_context_ids"}


def test_export_missing_text(result):
    from rag_metrics.errors import InputError
    with pytest.raises(InputError, match="has no text"):
        ragas_rows(result, {"a": "A"}, 3)


# ---- against ragas itself (skipped unless ragas is importable) ----------------------------------
def test_against_ragas(result):
    ragas_metrics = pytest.importorskip("ragas.metrics", reason="ragas is not installed (pip install ragas)")
    from ragas.dataset_schema import EvaluationDataset, SingleTurnSample

    prec_m = ragas_metrics.IDBasedContextPrecision()
    rec_m = ragas_metrics.IDBasedContextRecall()
    # The rank-weighted formula itself, without the string-similarity verdicts (needs rapidfuzz);
    # the method does not use self.
    cp_formula = ragas_metrics.NonLLMContextPrecisionWithReference._calculate_average_precision
    for k in (1, 2, 3, 4, 10):
        rows = ragas_rows(result, TEXTS, k, columns="ragas")
        ours = context_metrics(result, k).set_index("query_id")
        for row in rows:
            sample = SingleTurnSample(user_input=row["user_input"],
                                      retrieved_context_ids=row["retrieved_context_ids"],
                                      reference_context_ids=row["reference_context_ids"])
            p = asyncio.run(prec_m.single_turn_ascore(sample))
            r = asyncio.run(rec_m.single_turn_ascore(sample))
            verdicts = [1 if i in row["reference_context_ids"] else 0 for i in row["retrieved_context_ids"]]
            cp = cp_formula(None, verdicts)
            o = ours.loc[row["query_id"]]
            for theirs, mine in ((p, o["ragas_id_context_precision"]), (r, o["ragas_id_context_recall"])):
                assert (np.isnan(theirs) and np.isnan(mine)) or theirs == pytest.approx(mine, abs=1e-12)
            assert cp == pytest.approx(o["ragas_context_precision"], abs=1e-9)
    # the JSONL export loads as a ragas dataset
    rows = [json.loads(line) for line in ragas_jsonl(result, TEXTS, 3, columns="ragas").splitlines()]
    ds = EvaluationDataset.from_list(rows)
    assert len(ds) == 4


def test_document_level_export_and_metrics():
    # chunk labels, document-level evaluation: a document takes the rank of its best chunk
    c2d = {"a#0": "a", "a#1": "a", "b#0": "b", "c#0": "c"}
    golden = GoldenSet((GoldenQuery("q", "?", "", {"a#1": 1, "c#0": 1}),))
    run = Run.from_rankings({"q": ["b#0", "a#0", "a#1", "c#0"]})
    res = evaluate(golden, run, EvalOptions(level="document"), chunk_to_doc=c2d)
    texts = {i: f"text {i}" for i in c2d}
    row = ragas_rows(res, texts, 3, chunk_to_doc=c2d)[0]
    assert row["retrieved_context_ids"] == ["b", "a", "c"]              # documents: b, a (a#0), c
    assert row["retrieved_contexts"] == ["text b#0", "text a#0", "text c#0"]
    assert row["reference_context_ids"] == ["a", "c"]
    m = context_metrics(res, 3).iloc[0]
    assert m["ragas_id_context_precision"] == id_context_precision(row["retrieved_context_ids"],
                                                                   row["reference_context_ids"]) == 2 / 3
    assert m["ragas_context_precision"] == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_ragas_evaluate_on_our_export_gives_ragas_evaluate_mean():
    """ragas.evaluate on the export = ragas_evaluate_mean (out-of-scope 0, a duplicate scored raw)."""
    pytest.importorskip("ragas.metrics", reason="ragas is not installed (pip install ragas)")
    from ragas import EvaluationDataset
    from ragas import evaluate as ragas_evaluate
    from ragas.metrics import IDBasedContextPrecision, IDBasedContextRecall

    golden = GoldenSet((
        GoldenQuery("q1", "where is a?", "factual", {"a": 1, "c": 1}),
        GoldenQuery("q2", "what is x?", "factual", {"x": 1}),
        GoldenQuery("q3", "capital of France?", "out_of_scope", {}),
        GoldenQuery("q4", "z and y?", "comparison", {"z": 2, "y": 1}),
        GoldenQuery("q5", "dup?", "factual", {"a": 1, "c": 1}),
    ))
    run = Run(["q1"] * 4 + ["q2", "q3"] + ["q5"] * 4, ["b", "a", "d", "c", "x", "a", "a", "a", "b", "c"],
              [4, 3, 2, 1, 1, 1, 3, 2, 1, 0.5])
    res = evaluate(golden, run)
    for k, want_p in ((2, (1 / 2 + 1 + 0 + 1) / 4), (3, (1 / 3 + 1 + 0 + 1 / 2) / 4)):
        rows = [json.loads(line) for line in ragas_jsonl(res, TEXTS, k, columns="ragas").splitlines()]
        for r in rows:
            del r["query_id"], r["category"]
        out = ragas_evaluate(EvaluationDataset.from_list(rows), metrics=[IDBasedContextPrecision(),
                                                                         IDBasedContextRecall()],
                             show_progress=False)
        ours = context_metrics_summary(res, k, ci=False).set_index("ragas_metric")
        assert float(np.nanmean(out["id_based_context_precision"])) == pytest.approx(want_p)  # ragas prints this
        for name, col in (("id_based_context_precision", "ragas_id_context_precision"),
                          ("id_based_context_recall", "ragas_id_context_recall")):
            theirs = float(np.nanmean(out[name]))
            assert theirs == pytest.approx(ours.loc[col, "ragas_evaluate_mean"], abs=1e-12)
