"""One tie rule (docs/conventions.md#ranking): every path that orders ids gives trec_eval's order.

Paths: judging (``evaluate`` -> ``Judged.ranking``), ``Run.rankings``, the retrievers' ``top_k``,
and a TREC run written by us and read back.  Reference: score descending, then id descending by
UTF-8 bytes (trec_eval ``strcmp(b, a)``), written out by hand below.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_metrics import GoldenSet, Run
from rag_metrics.evaluation import evaluate
from rag_metrics.io.trec import parse_trec_run, run_to_text
from rag_metrics.ordering import desc_id_rank, order_rows, trec_order
from rag_metrics.retrieval.ranking import top_k


def reference(ids, scores):
    """trec_eval's comparison written plainly: higher score first, then strcmp(b, a) on bytes."""
    items = sorted(zip(ids, scores), key=lambda t: t[0].encode("utf-8"), reverse=True)
    items.sort(key=lambda t: -float(t[1]))  # stable: keeps id-descending among equal scores
    return [i for i, _ in items]


def every_path(ids, scores):
    """The order each path produces for one query."""
    ids = list(ids)
    run = Run(np.array(["q"] * len(ids), dtype=object), np.array(ids, dtype=object), np.asarray(scores, np.float64))
    golden = GoldenSet.from_qrels({"q": {ids[0]: 1}})
    judged = evaluate(golden, run).judged.ranking(0)[0]
    rankings = [i for i, _ in run.rankings()["q"]]
    topk = [ids[j] for j in top_k(np.asarray(scores), desc_id_rank(ids), len(ids))]
    paths = {"judge": judged, "Run.rankings": rankings, "top_k": topk}
    if not np.isnan(run.scores).any():  # TREC files cannot hold NaN (the reader rejects it)
        back, rep = parse_trec_run(run_to_text(run))
        assert rep.ok
        paths["TREC round trip"] = [i for i, _ in back.rankings()["q"]]
    return paths


def assert_all(ids, scores, expected):
    assert reference(ids, scores) == expected  # the reference agrees with the hand-written order
    for path, got in every_path(ids, scores).items():
        assert got == expected, path


def test_numeric_like_ids_compare_as_strings():
    # all scores equal: "9" > "10" > "1" byte-wise (trec_eval does not compare numbers)
    assert_all(["1", "10", "9"], [1.0, 1.0, 1.0], ["9", "10", "1"])


def test_ties_inside_a_ranking_of_distinct_scores():
    # b and a tie at 2.0 (b first); x alone at 3.0; 10 and 9 tie at 1.0 (9 first)
    assert_all(["a", "10", "x", "b", "9"], [2.0, 1.0, 3.0, 2.0, 1.0], ["x", "b", "a", "9", "10"])


def test_non_ascii_ids_by_utf8_bytes():
    # UTF-8 first bytes: "日" e6 > "é" c3 > "z" 7a > "Z" 5a > "#" 23; "é" (c3 a9) > "e\u0301" (65 cc 81)
    ids = ["Z", "é", "z", "日本", "#1", "e\u0301"]
    assert_all(ids, [0.5] * 6, ["日本", "é", "z", "e\u0301", "Z", "#1"])


def test_float32_scores_rank_as_their_exact_float64_values():
    s32 = np.array([0.1, 0.1, 0.3, 0.2], dtype=np.float32)
    ids = ["a", "b", "c", "d"]
    # float32 0.1 promoted exactly (0.100000001490116...) still ties with itself: b before a
    expected = ["c", "d", "b", "a"]
    assert [ids[j] for j in top_k(s32, desc_id_rank(ids), 4)] == expected
    assert [ids[j] for j in top_k(s32.astype(np.float64), desc_id_rank(ids), 4)] == expected
    assert_all(ids, s32.astype(np.float64).tolist(), expected)
    # a float32 0.1 and a float64 0.1 are different numbers: the promoted float32 is larger
    mixed = np.array([np.float64(0.1), np.float64(np.float32(0.1))])
    assert trec_order(mixed, desc_id_rank(["z", "a"])).tolist() == [1, 0]


def test_nan_ranks_last_in_every_path():
    ids, scores = ["a", "b", "c"], [float("nan"), 1.0, -5.0]
    for path, got in every_path(ids, scores).items():
        assert got == ["b", "c", "a"], path


def test_desc_id_rank_hand_values():
    assert desc_id_rank(["10", "9", "1", "b", "a"]).tolist() == [3, 2, 4, 0, 1]
    assert desc_id_rank([]).tolist() == []
    # repeated ids: distinct ranks, earlier occurrence first
    assert desc_id_rank(["a", "b", "a"]).tolist() == [1, 0, 2]


def test_order_rows_sorts_only_queries_out_of_order_and_keeps_query_places():
    # query 1 first in the file, then query 0; query 0 is out of order (9 must precede 10 on a tie)
    uniques = np.array(["10", "9", "x"], dtype=object)
    groups = np.array([1, 1, 0, 0, 0])
    codes = np.array([2, 0, 0, 1, 2])
    scores = np.array([2.0, 1.0, 1.0, 1.0, 3.0])
    order = order_rows(groups, codes, uniques, scores)
    assert order.tolist() == [0, 1, 4, 3, 2]
    assert order_rows(groups[order], codes[order], uniques, scores[order]) is None


ID = st.text(alphabet=st.sampled_from(list("ab9 10Zé日#") + ["\u00ff", "\u0100"]), min_size=1, max_size=3).map(
    lambda s: s.replace(" ", "_"))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(ID, st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0])), min_size=1, max_size=25,
                unique_by=lambda t: t[0]))
def test_every_path_matches_the_reference_on_random_ties(rows):
    ids = [i for i, _ in rows]
    scores = [s for _, s in rows]
    expected = reference(ids, scores)
    for path, got in every_path(ids, scores).items():
        assert got == expected, path


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_many_queries_judged_order_equals_rankings(dtype):
    rng = np.random.default_rng(5)
    n_q, depth = 40, 30
    qids = np.repeat(np.array([f"q{i}" for i in range(n_q)], dtype=object), depth)
    ids = np.array([f"d{j}" for j in rng.integers(0, 60, n_q * depth)], dtype=object)
    scores = np.round(rng.random(n_q * depth), 1).astype(dtype).astype(np.float64)  # many ties
    perm = rng.permutation(len(qids))  # rows shuffled: queries not contiguous
    run = Run(qids[perm], ids[perm], scores[perm])
    golden = GoldenSet.from_qrels({f"q{i}": {"d1": 1} for i in range(n_q)})
    judged = evaluate(golden, run).judged
    rk = run.rankings()
    for qi in range(n_q):
        q = f"q{qi}"
        sel = qids == q
        ref = list(dict.fromkeys(reference(ids[sel].tolist(), scores[sel].tolist())))
        assert [i for i, _ in rk[q]] == ref
        assert judged.ranking(qi)[0] == ref
