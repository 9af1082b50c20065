"""Golden-set health checks on small hand-made data."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rag_metrics import Chunk, GoldenQuery, GoldenSet, Run
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.insights.health import (
    ALL_CATEGORIES,
    ci_width_by_category,
    ci_width_chart,
    ci_width_curve,
    content_words,
    exact_duplicates,
    health_checks,
    judging_candidates,
    near_duplicates,
    too_easy_queries,
    unknown_ids,
    unlabelled_queries,
)


def ch(cid: str, text: str) -> Chunk:
    return Chunk(cid, cid.split("#")[0], text, 0, len(text))


CHUNKS = [
    ch("refund#0", "The refund window for annual plans is 30 days after purchase."),
    ch("refund#1", "Monthly plans are not refundable."),
    ch("export#0", "Export your notes as Markdown or PDF from the File menu."),
    ch("export#1", "Export   your notes as markdown or PDF from the file menu."),  # exact dup (normalised)
    ch("sync#0", "Sync runs every five minutes when you are online."),
]

GOLDEN = GoldenSet((
    GoldenQuery("q1", "What is the refund window for annual plans?", "factual", {"refund#0": 1}),
    GoldenQuery("q2", "can i get my money back on a monthly subscription", "factual", {"refund#1": 2, "sync#0": 0}),
    GoldenQuery("q3", "How do I save a copy of everything?", "procedural", {"export#0": 1, "exprt#2": 1}),
    GoldenQuery("q4", "Capital of France?", "out_of_scope", {}),
    GoldenQuery("q5", "Is there a dark mode?", "factual", {}),          # unlabelled, not out of scope
))


def test_content_words():
    assert content_words("What is the refund window for annual plans?") == {"refund", "window", "annual", "plans"}
    assert content_words("I don't know") == {"know"}


def test_unknown_ids_with_suggestion():
    t = unknown_ids(GOLDEN, {c.id for c in CHUNKS})
    assert t[["query_id", "id", "grade"]].values.tolist() == [["q3", "exprt#2", 1]]
    assert t.loc[0, "suggestion"] in {"export#0", "export#1"}   # closest known id


def test_exact_duplicates():
    t = exact_duplicates(CHUNKS)
    assert t["chunk_id"].tolist() == ["export#0", "export#1"]
    assert t["group"].tolist() == [0, 0] and t["n_copies"].tolist() == [2, 2]
    assert exact_duplicates(CHUNKS, normalise=False).empty


def test_near_duplicates_hand_vectors():
    emb = np.array([[1, 0, 0], [0.99, 0.141, 0], [0, 1, 0], [0, 0, 0], [2, 0, 0]], dtype=np.float32)
    ids = ["a", "b", "c", "zero", "e"]
    t = near_duplicates(emb, ids, threshold=0.95, doc_ids=["d1", "d1", "d2", "d3", "d2"], block=2)
    # cos(a, e) = 1 (e is a scaled copy); cos(a, b) = 0.99 / |b|; cos(b, e) equal to cos(a, b)
    cab = 0.99 / math.hypot(0.99, 0.141)
    assert t[["chunk_a", "chunk_b"]].values.tolist() == [["a", "e"], ["a", "b"], ["b", "e"]]
    assert t["cosine"].tolist() == pytest.approx([1.0, cab, cab], abs=1e-6)
    assert t["same_doc"].tolist() == [False, True, False]
    assert near_duplicates(emb, ids, 0.999).shape[0] == 1
    with pytest.raises(InputError, match="one row per chunk"):
        near_duplicates(emb, ids[:2])


def test_unlabelled_queries():
    t = unlabelled_queries(GOLDEN)
    assert t["query_id"].tolist() == ["q5"]


def test_judging_candidates():
    golden = GoldenSet((
        GoldenQuery("a", "qa", "", {"x": 1}),
        GoldenQuery("b", "qb", "", {"y": 1, "hub2": 0}),   # hub2 judged non-relevant: labelled
        GoldenQuery("c", "qc", "", {"z": 1}),
    ))
    run = Run.from_rankings({"a": ["hub", "x", "hub2", "rare"], "b": ["y", "hub", "hub2"], "c": ["w", "z", "hub"]})
    res = evaluate(golden, run)
    t = judging_candidates(res, k=3, min_queries=2, chunk_text={"hub": "the hub   text"})
    assert t["id"].tolist() == ["hub"]
    row = t.iloc[0]
    assert row["n_queries"] == 3 and row["best_rank"] == 1 and row["mean_rank"] == pytest.approx((1 + 2 + 3) / 3)
    assert row["query_ids"] == ["a", "b", "c"] and row["questions"] == ["qa", "qb", "qc"]
    assert row["ranks"] == [1, 2, 3]  # hub's rank in a, b and c
    assert row["preview"] == "the hub text"
    # at k=2, hub is seen by a and b only
    assert judging_candidates(res, k=2, min_queries=3).empty
    assert set(judging_candidates(res, k=4, min_queries=1)["id"]) == {"hub", "rare", "w"}


def test_too_easy_queries():
    t = too_easy_queries(GOLDEN, CHUNKS, threshold=0.8)
    assert t["query_id"].tolist() == ["q1"]
    assert t.loc[0, "overlap"] == 1.0 and t.loc[0, "chunk_id"] == "refund#0"
    assert t.loc[0, "shared_words"] == ["annual", "plans", "refund", "window"]
    every = too_easy_queries(GOLDEN, CHUNKS, threshold=0.8, all_queries=True).set_index("query_id")
    # q2 content words {money, back, monthly, subscription} ("get" is a stop word):
    # only "monthly" is in refund#1 -> 1/4
    assert every.loc["q2", "overlap"] == pytest.approx(1 / 4)
    assert every.loc["q2", "missing_words"] == ["back", "money", "subscription"]
    assert not every.loc["q2", "too_easy"]
    assert "q4" not in every.index and "q5" not in every.index


def _result_for_ci():
    qs, ranks = [], {}
    # category A: 8 queries, half hit at rank 1, half miss; category B: 3 queries, all hit
    for n in range(8):
        qs.append(GoldenQuery(f"a{n}", "?", "A", {"r": 1}))
        ranks[f"a{n}"] = ["r"] if n % 2 == 0 else ["x"]
    for n in range(3):
        qs.append(GoldenQuery(f"b{n}", "?", "B", {"r": 1}))
        ranks[f"b{n}"] = ["r"]
    return evaluate(GoldenSet(tuple(qs)), Run.from_rankings(ranks))


def test_ci_width_by_category():
    res = _result_for_ci()
    t = ci_width_by_category(res, "hit_rate", 1, target_half_width=0.1).set_index("category")
    assert list(t.index) == [ALL_CATEGORIES, "A", "B"]
    a = t.loc["A"]
    sd = np.std([1, 0] * 4, ddof=1)
    assert a["n"] == 8 and a["mean"] == 0.5 and a["sd"] == pytest.approx(sd)
    assert a["half_width_normal"] == pytest.approx(1.959964 * sd / math.sqrt(8), rel=1e-5)
    assert a["n_needed"] == math.ceil(8 * (a["half_width"] / 0.1) ** 2 - 1e-9)
    assert a["more_needed"] == a["n_needed"] - 8 > 0
    # B has no spread (3/3 hits): Bernoulli stand-in p = 3.5/4
    b = t.loc["B"]
    assert b["no_spread"] and b["sd"] == pytest.approx(math.sqrt(3.5 / 4 * 0.5 / 4))
    assert b["half_width"] == pytest.approx(b["half_width_normal"]) and b["more_needed"] > 0
    with pytest.raises(InputError):
        ci_width_by_category(res, "hit_rate", 1, target_half_width=0)


def test_ci_width_curve_and_chart():
    res = _result_for_ci()
    curve = ci_width_curve(res, "hit_rate", 1, n_values=[2, 8, 32], target_half_width=0.1)
    a = curve[curve["category"] == "A"].set_index("n_queries")
    # half-width ~ 1/sqrt(n): quadrupling n halves it
    assert a.loc[32, "half_width"] == pytest.approx(a.loc[8, "half_width"] / 2)
    assert a.loc[8, "current"] and not a.loc[32, "current"]
    spec = ci_width_chart(curve, 0.1).to_dict()
    assert len(spec["layer"]) == 3


def test_health_checks_bundle():
    res = evaluate(GOLDEN, Run.from_rankings({"q1": ["refund#0"], "q2": ["sync#0", "refund#1"],
                                              "q3": ["export#1", "export#0"], "q5": ["export#1"]}))
    emb = np.eye(len(CHUNKS), dtype=np.float32)
    emb[3] = emb[2]
    checks = {c.name: c for c in health_checks(GOLDEN, CHUNKS, res, emb, k=2, min_queries=2)}
    assert set(checks) == {"unknown_ids", "exact_duplicates", "near_duplicates", "unlabelled",
                           "judging_candidates", "too_easy", "ci_width"}
    assert checks["unknown_ids"].count == 1 and checks["unknown_ids"].severity == "error"
    assert checks["exact_duplicates"].count == 1
    assert checks["near_duplicates"].table[["chunk_a", "chunk_b"]].values.tolist() == [["export#0", "export#1"]]
    assert checks["judging_candidates"].table["id"].tolist() == ["export#1"]
    assert all(isinstance(c.table, pd.DataFrame) for c in checks.values())
    # without a result or chunks only the label checks run
    assert [c.name for c in health_checks(GOLDEN)] == ["unlabelled"]


def test_judging_candidates_never_offer_an_out_of_scope_question():
    """A chunk retrieved for out-of-scope questions is not a labelling candidate for them (labelling
    it would quietly bring the question into scope); shares are over the in-scope questions."""
    from rag_metrics.evaluation import evaluate
    from rag_metrics.insights.health import judging_candidates
    from rag_metrics.types import GoldenQuery, GoldenSet, Run

    golden = GoldenSet((GoldenQuery("q1", "a?", "factual", {"a": 1}), GoldenQuery("q2", "b?", "factual", {"b": 1}),
                        GoldenQuery("q3", "capital of France?", "out_of_scope", {}),
                        GoldenQuery("q4", "weather?", "out_of_scope", {})))
    run = Run.from_rankings({"q1": ["hub", "a"], "q2": ["hub", "b"], "q3": ["hub"], "q4": ["hub", "x"]})
    cand = judging_candidates(evaluate(golden, run), k=2, min_queries=2)
    assert cand["id"].tolist() == ["hub"]
    assert cand.loc[0, "query_ids"] == ["q1", "q2"] and cand.loc[0, "share"] == 1.0
    assert judging_candidates(evaluate(golden, run), k=2, min_queries=3).empty  # x and q3/q4 never count
