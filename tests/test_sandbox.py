"""The metric sandbox (Learn page) and the A/B helpers (Compare page), against the library."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rag_metrics import GoldenQuery, GoldenSet, Run
from rag_metrics.compare import ab
from rag_metrics.compare.paired import compare, per_query_deltas
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.lesson import sandbox as S
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.types import Chunk


def _values(sb, k, **kw):
    return S.metric_table(sb, k, **kw).set_index("metric")["value"].to_dict()


# ---- the lesson's scenarios, written out ------------------------------------------------------------
def test_rank5_vs_rank1_same_hit_rate_mrr_02_vs_1():
    t = S.scenario_table(S.scenario("rank5_vs_rank1")).set_index("metric")
    assert t.loc["hit_rate", "before"] == t.loc["hit_rate", "after"] == 1.0
    assert t.loc["mrr", "before"] == pytest.approx(1 / 5)
    assert t.loc["mrr", "after"] == 1.0
    assert set(t.index[t["highlighted"]]) == {"hit_rate", "mrr"}


def test_rank6_to_rank2_raises_ndcg_not_hit_rate():
    sc = S.scenario("rank6_to_rank2")
    t = S.scenario_table(sc).set_index("metric")
    assert t.loc["hit_rate", "before"] == t.loc["hit_rate", "after"] == 1.0
    # before: DCG@5 = 1/log2(2); IDCG@5 = 1 + 1/log2(3)
    assert t.loc["ndcg", "before"] == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert t.loc["ndcg", "after"] == pytest.approx(1.0)
    # moving the item is exactly the sandbox's move(): rank 6 -> rank 2 in four steps up
    moved = sc.before
    for i in (5, 4, 3, 2):
        moved = moved.move(i, -1)
    assert moved.grades == sc.after.grades


def test_three_relevant_two_in_top5_recall_two_thirds():
    sc = S.scenario("recall_two_of_three")
    assert sc.before.n_relevant() == 3 and sc.k_before == 5
    v = _values(sc.before, 5)
    assert v["recall"] == pytest.approx(2 / 3)
    ex = S.explain(sc.before, 5)
    assert ex["recall"].substituted == "2 / 3 = 0.6667"
    assert _values(sc.before, 2, recall_denominator="cap")["recall"] == pytest.approx(1 / 2)
    assert _values(sc.before, 2)["recall"] == pytest.approx(1 / 3)


def test_larger_k_recall_up_precision_down():
    sc = S.scenario("larger_k")
    t = S.scenario_table(sc).set_index("metric")
    assert (t.loc["recall", "before"], t.loc["recall", "after"]) == (pytest.approx(2 / 4), pytest.approx(3 / 4))
    assert (t.loc["precision", "before"], t.loc["precision", "after"]) == (pytest.approx(2 / 3), pytest.approx(3 / 10))
    c = S.curve(sc.before)
    rec = c[c.metric == "recall"]["value"].to_numpy()
    assert np.all(np.diff(rec) >= 0) and len(rec) == 10


def test_every_scenario_key_and_sides():
    assert len(S.SCENARIOS) == 4
    for sc in S.SCENARIOS:
        assert S.scenario(sc.key) is sc
        assert 1 <= sc.k_before <= len(sc.before.items) and 1 <= sc.k_after <= len(sc.after.items)
    with pytest.raises(InputError):
        S.scenario("nope")


# ---- the sandbox equals evaluate() on the same list ----------------------------------------------------
def _as_eval(sb: S.Sandbox, options: EvalOptions):
    labels = {it.id: it.grade for it in sb.items if it.grade > 0}
    labels.update({f"missing {i}": g for i, g in enumerate(sb.unretrieved)})
    golden = GoldenSet((GoldenQuery("q", "question", "factual", labels),))
    run = Run.from_rankings({"q": [(it.id, float(len(sb.items) - i)) for i, it in enumerate(sb.items)]})
    return evaluate(golden, run, options)


@settings(max_examples=60, deadline=None)
@given(grades=st.lists(st.integers(0, 3), min_size=1, max_size=10),
       missing=st.lists(st.integers(1, 3), max_size=3), k=st.integers(1, 12), level=st.integers(1, 3),
       recall=st.sampled_from(["all", "cap"]))
def test_sandbox_values_equal_evaluate(grades, missing, k, level, recall):
    sb = S.Sandbox.from_grades(grades, missing)
    if sb.n_relevant(level) == 0:
        return
    res = _as_eval(sb, EvalOptions(relevance_level=level, recall_denominator=recall))
    for gain in ("linear", "exponential"):
        got = _values(sb, k, relevance_level=level, recall_denominator=recall, gain=gain)
        for m, v in got.items():
            assert v == pytest.approx(res.mean(m, k), abs=1e-12), m


def test_term_table_adds_up_to_the_metrics():
    sb = S.Sandbox.from_grades([0, 3, 0, 1, 2, 0], [2])
    k = 5
    t = S.term_table(sb, k)
    v = _values(sb, k)
    assert t["ap_term"].sum() / sb.n_relevant() == pytest.approx(v["map"])
    ideal = sorted(sb.judged_grades, reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal) if g > 0)
    assert t["dcg_term"].sum() / idcg == pytest.approx(v["ndcg"])
    assert list(t["in_top_k"]) == [True] * 5 + [False]


def test_manipulations_are_pure_and_validated():
    sb = S.free_form(4)
    sb2 = sb.with_grade(2, 3).move(2, -5)
    assert sb.grades == [0, 0, 0, 0]
    assert sb2.grades == [3, 0, 0, 0] and sb2.items[0].id == "result 3"
    assert sb2.move(0, 99).items[-1].id == "result 3"
    assert sb2.with_unretrieved(2, 2).unretrieved == (2, 2)
    assert sb2.with_unretrieved(2, 2).with_unretrieved(3).unretrieved == (2, 2, 1)
    assert sb2.with_grades({"result 1": 2}).items[1].grade == 2
    for bad in (lambda: sb.with_grade(0, 4), lambda: sb.with_grade(9, 1), lambda: sb.move(7, 1),
                lambda: sb.with_unretrieved(-1), lambda: S.explain(sb, 0), lambda: S.metrics_for("log"),
                lambda: S.Sandbox.from_grades([1, 5]), lambda: S.explain(sb, 3, recall_denominator="x")):
        with pytest.raises(InputError):
            bad()


def test_out_of_scope_list_gives_zeros():
    v = _values(S.free_form(5), 3)
    assert all(x == 0 for x in v.values())


def test_from_ranking_keeps_golden_labels_and_counts_unretrieved():
    golden = GoldenSet((GoldenQuery("q1", "how?", "factual", {"a": 3, "c": 1, "z": 2}),
                        GoldenQuery("q2", "what?", "factual", {"b": 1})))
    run = Run.from_rankings({"q1": ["b", "a", "d", "c"], "q2": ["b"]})
    res = evaluate(golden, run)
    sb = S.from_ranking(res, "q1", 3, {"a": "text of a"})
    assert [it.id for it in sb.items] == ["b", "a", "d"] and sb.grades == [0, 3, 0]
    assert sorted(sb.unretrieved) == [1, 2]  # c (rank 4, outside the top 3) and z (never retrieved)
    assert sb.items[1].text == "text of a" and sb.question == "how?" and sb.source == "q1"
    # the sandbox's numbers on its top 3 equal the evaluation's at K <= 3
    for m, v in _values(sb, 3).items():
        assert v == pytest.approx(res.values(m, 3)[0])


def test_convention_effects_match_with_options():
    golden = GoldenSet((GoldenQuery("q1", "a", "factual", {"a": 3, "c": 1}),
                        GoldenQuery("q2", "b", "factual", {"b": 1}),
                        GoldenQuery("q3", "c", "out_of_scope", {})))
    run = Run.from_rankings({"q1": ["c", "x", "a"], "q2": ["y", "b"], "q3": ["a"]})
    res = evaluate(golden, run)
    eff = S.convention_effects(res, 2).set_index("convention")
    assert eff.loc["NDCG gain", "default_value"] == pytest.approx(res.mean("ndcg", 2))
    assert eff.loc["NDCG gain", "alternative_value"] == pytest.approx(res.mean("ndcg_exp", 2))
    assert eff.loc["Out-of-scope queries", "alternative_value"] == pytest.approx(
        res.with_options(out_of_scope="miss").mean("hit_rate", 2))
    assert eff.loc["Out-of-scope queries", "n_alternative"] == 3
    assert eff.loc["Recall denominator", "alternative_value"] == pytest.approx(
        res.with_options(recall_denominator="cap").mean("recall", 2))
    assert eff.loc["Relevance level", "alternative_value"] == pytest.approx(
        res.with_options(relevance_level=2).mean("precision", 2))
    # the peer conventions (issue 19), each against its EvalOptions
    peers = [("Gain per grade (trec_eval gains, ir_measures nDCG(gains=))", "ndcg", {"gains": {3: 10}}),
             ("Judged results only (trec_eval -J)", "precision", {"judged_only": True}),
             ("MRR (LlamaIndex granular)", "mrr", {"mrr": "granular"}),
             ("Results scored <= 0 (torchmetrics)", "recall", {"nonpositive_scores": "not_retrieved"})]
    for conv, metric, opts in peers:
        assert eff.loc[conv, "default_value"] == pytest.approx(res.mean(metric, 2))
        assert eff.loc[conv, "alternative_value"] == pytest.approx(res.with_options(**opts).mean(metric, 2)), conv
    assert eff.loc["Judged results only (trec_eval -J)", "alternative_value"] > res.mean("precision", 2)


# ---- A/B helpers ---------------------------------------------------------------------------------------
def test_config_validation_and_levels():
    a = ab.Config("dense", 500, 100)
    b = ab.Config("bm25", 300, 50, model="ignored")
    assert b.model_name == "" and a.uses_default_model
    assert ab.comparison_level(a, a) == "chunk"
    assert ab.comparison_level(a, b) == "document"
    assert ab.comparison_level(a, b, prefer="chunk") == "chunk"
    assert ab.comparison_level(a, a, corpus_level="document") == "document"
    for bad in (dict(retriever="tfidf"), dict(chunk_size=500, chunk_overlap=500), dict(depth=0),
                dict(depth=101), dict(model="a\nb")):
        with pytest.raises(InputError):
            ab.Config(**bad)


def test_golden_for_carries_labels_only_at_chunk_level_on_another_chunking():
    text = "x" * 100
    old = [Chunk("d#0", "d", text[:50], 0, 50), Chunk("d#1", "d", text[50:], 50, 100)]
    new = [Chunk("d#0", "d", text[:30], 0, 30), Chunk("d#1", "d", text[30:60], 30, 60),
           Chunk("d#2", "d", text[60:], 60, 100)]
    golden = GoldenSet((GoldenQuery("q", "?", "factual", {"d#1": 2}),))
    same, rep = ab.golden_for(golden, "chunk", old, old)
    assert same is golden and rep is None
    doc, rep = ab.golden_for(golden, "document", old, new)
    assert doc is golden and rep is None
    carried, rep = ab.golden_for(golden, "chunk", old, new)
    assert carried.queries[0].relevant == {"d#2": 2} and rep is not None
    assert ab.chunk_to_doc(old, new) == {"d#0": "d", "d#1": "d", "d#2": "d"}


def _pair():
    cats = ["factual", "comparison", "procedural"]
    golden = GoldenSet(tuple(GoldenQuery(f"q{i}", f"question {i}", cats[i % 3], {f"r{i}": 1}) for i in range(24)))
    def run(seed):
        r = np.random.default_rng(seed)
        return Run.from_rankings({f"q{i}": [f"x{j}" for j in range(int(r.integers(0, 6)))] + [f"r{i}"]
                                  for i in range(24)})
    return evaluate(golden, run(1)), evaluate(golden, run(2))


def test_category_deltas_and_outcomes():
    a, b = _pair()
    cat = ab.category_deltas(a, b, "mrr", 5).set_index("category")
    d = per_query_deltas(a, b, "mrr@5")
    assert list(cat.index) == ["factual", "comparison", "procedural", "(all)"]
    assert cat.loc["(all)", "delta"] == pytest.approx(b.mean("mrr", 5) - a.mean("mrr", 5))
    for c in ("factual", "comparison", "procedural"):
        sel = d[d.category == c]
        assert cat.loc[c, "n"] == len(sel) == 8
        assert cat.loc[c, "delta"] == pytest.approx(sel["delta"].mean())
        assert cat.loc[c, "wins"] + cat.loc[c, "losses"] + cat.loc[c, "ties"] == 8
        assert cat.loc[c, "ci_low"] <= cat.loc[c, "delta"] <= cat.loc[c, "ci_high"]
    counts = ab.outcome_counts(d)
    assert sum(counts.values()) == 24 and counts["B better"] == int((d.delta > 0).sum())
    assert ab.comparison_keys(["hit_rate", "ndcg"], 5) == ["hit_rate@5", "ndcg@5"]


def test_compare_p_values_and_bh_match_scipy_on_known_inputs():
    a, b = _pair()
    keys = ["hit_rate@1", "mrr@5", "ndcg@5"]
    df = compare(a, b, keys)
    for row, key in zip(df.itertuples(), keys):
        va, vb = a.values(key)[a.included], b.values(key)[b.included]
        if np.all(vb == va):
            continue
        assert row.p_ttest == pytest.approx(stats.ttest_rel(vb, va).pvalue)
    ok = ~np.isnan(df["p_ttest"].to_numpy())
    assert np.allclose(df["p_ttest_adj"].to_numpy()[ok],
                       stats.false_discovery_control(df["p_ttest"].to_numpy()[ok], method="bh"))
    # one decision rule (rag_metrics.compare.paired): significant <=> adjusted p <= 0.05 <=> the interval excludes 0
    sig = df["p_ttest_adj"].fillna(1.0) <= 0.05
    assert list(df["significant"]) == list(sig)
    assert list(sig) == list((df["ci_low"] > 0) | (df["ci_high"] < 0))
