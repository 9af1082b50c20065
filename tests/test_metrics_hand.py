"""Hand-computed metric values, the arithmetic written out (relevance pattern in comments)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rag_metrics import GoldenQuery, GoldenSet, Run
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.explain import explain_ranking
from rag_metrics.metrics.options import EvalOptions

L2 = math.log2


def test_conventions_worked_example():
    # relevant = {a, c}; ranking [b, a, d, c]; pattern at k=3: 0 1 0
    res = evaluate({"q": {"a": 1, "c": 1}}, Run.from_rankings({"q": ["b", "a", "d", "c"]}))
    assert res.mean("hit_rate", 3) == 1
    assert res.mean("precision", 3) == pytest.approx(1 / 3)
    assert res.mean("recall", 3) == pytest.approx(1 / 2)
    assert res.mean("mrr", 3) == pytest.approx(1 / 2)
    assert res.mean("map", 3) == pytest.approx((1 / 2) * (1 / 2))
    assert res.mean("ndcg", 3) == pytest.approx((1 / L2(3)) / (1 + 1 / L2(3)))
    assert res.mean("ndcg", 3) == pytest.approx(0.3869, abs=5e-5)
    # uncut: pattern 0 1 0 1 -> AP = (1/2)(1/2 + 2/4)
    assert res.mean("map") == pytest.approx(0.5 * (1 / 2 + 2 / 4))
    assert res.mean("mrr") == pytest.approx(1 / 2)


def test_precision_divides_by_k_even_when_fewer_retrieved():
    # 15 retrieved, 4 relevant among them: P@20 = 4/20 = 0.2 (trec_eval's own example)
    ids = [f"d{i}" for i in range(15)]
    rel = {ids[0]: 1, ids[3]: 1, ids[7]: 1, ids[14]: 1}
    res = evaluate({"q": rel}, Run.from_rankings({"q": ids}))
    assert res.mean("precision", 20) == pytest.approx(4 / 20)
    assert res.mean("recall", 20) == 1.0


def test_recall_counts_relevant_never_retrieved_and_cap_option():
    # |R| = 5, 2 found in the top 3
    rel = {x: 1 for x in "abcde"}
    run = Run.from_rankings({"q": ["a", "z", "b", "y"]})
    res = evaluate({"q": rel}, run)
    assert res.mean("recall", 3) == pytest.approx(2 / 5)
    cap = res.with_options(recall_denominator="cap")
    assert cap.mean("recall", 3) == pytest.approx(2 / min(3, 5))
    assert cap.mean("recall", 10) == pytest.approx(2 / 5)


def test_mrr_cutoff():
    # first relevant at rank 5: MRR@3 = 0, MRR@5 = 1/5, MRR = 1/5
    res = evaluate({"q": {"e": 1}}, Run.from_rankings({"q": list("abcde")}))
    assert res.mean("mrr", 3) == 0
    assert res.mean("mrr", 5) == pytest.approx(1 / 5)
    assert res.mean("mrr") == pytest.approx(1 / 5)


def test_map_at_k_keeps_full_denominator():
    # R = {a, b, c, d}; ranking a x b y; pattern 1 0 1 0: AP@4 = (1/4)(1/1 + 2/3)
    res = evaluate({"q": {x: 1 for x in "abcd"}}, Run.from_rankings({"q": ["a", "x", "b", "y"]}))
    assert res.mean("map", 4) == pytest.approx((1 / 4) * (1 + 2 / 3))


def test_graded_ndcg_linear_and_exponential():
    # grades: a=3, b=1, c=2; ranking [b, x, a]; ideal [3, 2, 1]
    rel = {"a": 3, "b": 1, "c": 2}
    res = evaluate({"q": rel}, Run.from_rankings({"q": ["b", "x", "a"]}))
    dcg = 1 / L2(2) + 0 + 3 / L2(4)
    idcg = 3 / L2(2) + 2 / L2(3) + 1 / L2(4)
    assert res.mean("ndcg", 3) == pytest.approx(dcg / idcg)
    dcg_e = (2**1 - 1) / L2(2) + (2**3 - 1) / L2(4)
    idcg_e = (2**3 - 1) / L2(2) + (2**2 - 1) / L2(3) + (2**1 - 1) / L2(4)
    assert res.mean("ndcg_exp", 3) == pytest.approx(dcg_e / idcg_e)
    # @1: b (grade 1) against ideal a (grade 3)
    assert res.mean("ndcg", 1) == pytest.approx(1 / 3)


def test_ndcg_ideal_uses_all_judged_even_unretrieved_and_ignores_level():
    rel = {"a": 1, "b": 2}
    res = evaluate({"q": rel}, Run.from_rankings({"q": ["a"]}), EvalOptions(relevance_level=2))
    # a has grade 1 < L: not relevant for binary metrics, but NDCG uses its gain
    assert res.mean("hit_rate", 1) == 0
    assert res.mean("ndcg", 1) == pytest.approx(1 / 2)
    assert res.mean("recall", 5) == 0


def test_tie_break_by_id_descending_bytewise():
    # all scores equal: order is "b" > "a" and "9" > "10" (string comparison)
    run = Run.from_dict({"q": {"a": 1.0, "b": 1.0, "10": 1.0, "9": 1.0}})
    res = evaluate({"q": {"a": 1}}, run)
    assert res.ranking("q")["id"].tolist() == ["b", "a", "9", "10"]
    assert res.mean("mrr") == pytest.approx(1 / 2)


def test_rank_column_ignored_score_decides():
    run = Run.from_dict({"q": {"a": 0.1, "b": 0.9}})
    res = evaluate({"q": {"a": 1}}, run)
    assert res.mean("mrr") == pytest.approx(1 / 2)


def test_duplicate_ids_in_a_ranking_keep_best_occurrence():
    run = Run(np.array(["q"] * 3, dtype=object), np.array(["a", "b", "a"], dtype=object), np.array([1.0, 3.0, 2.0]))
    res = evaluate({"q": {"a": 1}}, run)
    assert res.ranking("q")["id"].tolist() == ["b", "a"]
    assert res.mean("precision", 2) == pytest.approx(1 / 2)


def test_nan_scores_rank_last():
    run = Run.from_dict({"q": {"a": float("nan"), "b": 0.1}})
    res = evaluate({"q": {"a": 1}}, run)
    assert res.ranking("q")["id"].tolist() == ["b", "a"]


def test_out_of_scope_excluded_by_default_and_counted_as_miss_option():
    golden = GoldenSet((
        GoldenQuery("q1", "in scope", "factual", {"a": 1}),
        GoldenQuery("q2", "capital of France?", "out_of_scope", {}),
    ))
    run = Run.from_rankings({"q1": ["a"], "q2": ["a"]})
    res = evaluate(golden, run)
    assert res.n_queries == 1 and res.n_out_of_scope == 1
    assert res.mean("hit_rate", 1) == 1.0
    lesson = res.with_options(out_of_scope="miss")
    assert lesson.n_queries == 2
    assert lesson.mean("hit_rate", 1) == 0.5  # 1 hit / 2 questions, the classic lesson code


def test_missing_query_zero_by_default_or_skipped():
    res = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, Run.from_rankings({"q1": ["a"]}))
    assert res.mean("mrr", 10) == 0.5
    assert res.with_options(missing_queries="skip").mean("mrr", 10) == 1.0


def test_run_queries_not_in_golden_are_ignored():
    res = evaluate({"q1": {"a": 1}}, Run.from_rankings({"q1": ["a"], "zzz": ["a", "b"]}))
    assert res.n_queries == 1 and res.mean("precision", 1) == 1.0


def test_k_beyond_depth():
    res = evaluate({"q": {"a": 1, "b": 1}}, Run.from_rankings({"q": ["a", "x"]}))
    assert res.mean("precision", 100) == pytest.approx(1 / 100)
    assert res.mean("recall", 100) == pytest.approx(1 / 2)
    assert res.mean("hit_rate", 100) == 1.0
    # IDCG@100 keeps both relevant ids: 1 + 1/log2(3)
    assert res.mean("ndcg", 100) == pytest.approx(1 / (1 + 1 / L2(3)))


def test_empty_run_for_all_queries():
    res = evaluate({"q": {"a": 1}}, Run.from_rankings({}))
    for m in ["hit_rate", "precision", "recall", "mrr", "map", "ndcg"]:
        assert res.mean(m, 5) == 0.0


def test_document_level_collapse_first_chunk_wins():
    # chunks d1#0, d1#1 belong to d1 (relevant); d2#0 to d2.  Chunk ranking d1#1, d1#0, d2#0
    c2d = {"d1#0": "d1", "d1#1": "d1", "d2#0": "d2"}
    run = Run.from_rankings({"q": ["d1#1", "d1#0", "d2#0"]})
    res = evaluate({"q": {"d1": 1}}, run, EvalOptions(level="document"), chunk_to_doc=c2d)
    assert res.ranking("q")["id"].tolist() == ["d1", "d2"]
    assert res.mean("precision", 2) == pytest.approx(1 / 2)  # not 2/2: one document, one hit
    # chunk labels collapse to their documents too (max grade)
    res2 = evaluate({"q": {"d1#0": 1, "d1#1": 2}}, run, EvalOptions(level="document"), chunk_to_doc=c2d)
    assert res2.mean("recall", 1) == 1.0


def test_failures_report_first_relevant_rank_beyond_k():
    golden = GoldenSet((GoldenQuery("q1", "how?", "procedural", {"g": 2}),
                        GoldenQuery("q2", "what?", "factual", {"zz": 1})))
    run = Run.from_rankings({"q1": list("abcdefg"), "q2": ["a"]})
    f = evaluate(golden, run).failures(5)
    assert f["query_id"].tolist() == ["q1", "q2"]
    assert f["first_relevant_rank"].iloc[0] == 7  # "would hit at K=7"
    assert f["first_relevant_rank"].isna().iloc[1]
    assert f["retrieved_ids"].iloc[0] == list("abcde")


def test_abstention_counts():
    golden = GoldenSet((GoldenQuery("q1", "x", "", {"a": 1}), GoldenQuery("q2", "y", "out_of_scope", {})))
    run = Run.from_dict({"q1": {"a": 0.8}, "q2": {"a": 0.3}})
    res = evaluate(golden, run)
    assert res.abstention(0.5) == {"out_of_scope_refused": 1, "out_of_scope_answered": 0,
                                   "in_scope_refused": 0, "in_scope_answered": 1}
    assert res.abstention(0.9)["in_scope_refused"] == 1


def test_explain_matches_kernels_and_shows_arithmetic():
    ex = explain_ranking([0, 1, 0, 1], [1, 1], 3)
    assert ex["precision"].substituted == "1 / 3 = 0.3333"
    assert ex["recall"].substituted == "1 / 2 = 0.5"
    assert ex["mrr"].substituted.startswith("first relevant at rank 2: 1 / 2")
    assert ex["map"].substituted == "(1/2) x (1/2) = 0.25"
    assert ex["ndcg"].value == pytest.approx(0.38685280723454163)
    assert "1/log2(3)" in ex["ndcg"].substituted


def test_category_means_and_counts():
    golden = GoldenSet((GoldenQuery("q1", "a", "x", {"a": 1}), GoldenQuery("q2", "b", "x", {"b": 1}),
                        GoldenQuery("q3", "c", "y", {"c": 1})))
    run = Run.from_rankings({"q1": ["a"], "q2": ["z"], "q3": ["c"]})
    bc = evaluate(golden, run).by_category(["hit_rate"], [1], ci=False).set_index("category")
    assert bc.loc["x", "mean"] == 0.5 and bc.loc["x", "n"] == 2
    assert bc.loc["y", "mean"] == 1.0 and bc.loc["y", "n"] == 1


def test_bootstrap_ci_contains_mean_and_is_degenerate_for_constant():
    from rag_metrics.evaluation import bootstrap_ci

    v = np.array([0, 1, 1, 0, 1, 1, 1, 0, 1, 1], dtype=float)
    lo, hi = bootstrap_ci(v)
    assert lo <= v.mean() <= hi and 0 <= lo < hi <= 1
    assert bootstrap_ci(np.ones(5)) == (1.0, 1.0)
