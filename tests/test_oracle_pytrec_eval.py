"""Oracle tests: every metric, every k, per query, against pytrec_eval (trec_eval) to 1e-9.

pytrec_eval is a hard requirement (requirements-test.txt): without it this file fails to import.
"""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from rag_metrics import Run
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.options import EvalOptions

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
KS = [1, 2, 3, 5, 10, 20, 50, 100, 150]


def trec_values(qrels, run, ks, level=1):
    """pytrec_eval per-query values in our naming.  MRR@k cuts the run to k (recip_rank has no cutoff)."""
    kstr = ",".join(map(str, ks))
    measures = {f"P.{kstr}", f"recall.{kstr}", f"success.{kstr}", f"ndcg_cut.{kstr}", f"map_cut.{kstr}",
                "recip_rank", "map", "ndcg"}
    ev = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level)
    res = ev.evaluate(run)
    out = {}
    for q, vals in res.items():
        d = {}
        for k in ks:
            d[("precision", k)] = vals[f"P_{k}"]
            d[("recall", k)] = vals[f"recall_{k}"]
            d[("hit_rate", k)] = vals[f"success_{k}"]
            d[("ndcg", k)] = vals[f"ndcg_cut_{k}"]
            d[("map", k)] = vals[f"map_cut_{k}"]
        d[("mrr", None)] = vals["recip_rank"]
        d[("map", None)] = vals["map"]
        d[("ndcg", None)] = vals["ndcg"]
        out[q] = d
    # MRR@k: evaluate the run cut to its first k (in trec_eval order) with recip_rank.
    ranked = Run.from_dict(run).rankings()
    for k in ks:
        cut = {q: {i: float(len(items) - r) for r, (i, _) in enumerate(items[:k])} for q, items in ranked.items()}
        cut = {q: v for q, v in cut.items() if v}
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=level)
        for q, vals in ev.evaluate(cut).items():
            out[q][("mrr", k)] = vals["recip_rank"]
    return out


def assert_parity(qrels, run, ks=KS, level=1):
    res = evaluate(qrels, run, EvalOptions(relevance_level=level))
    expected = trec_values(qrels, run, ks, level)
    assert expected, "pytrec_eval evaluated no query"
    idx = {q: i for i, q in enumerate(res.query_ids)}
    checked = 0
    for (name, k) in next(iter(expected.values())):
        ours = res.values(name, k)
        for q, d in expected.items():
            assert ours[idx[q]] == pytest.approx(d[(name, k)], abs=1e-9), (q, name, k)
            checked += 1
    return checked


def random_case(rng: random.Random, n_queries=30, n_docs=60, numeric_ids=True):
    ids = [str(i) for i in range(1, n_docs + 1)] if numeric_ids else [f"d{rng.randrange(10**6)}" for _ in range(n_docs)]
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = str(q + 1)
        judged = rng.sample(ids, rng.randint(1, 12))
        qrels[qid] = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}
        if not any(g > 0 for g in qrels[qid].values()):
            qrels[qid][judged[0]] = 1
        r = rng.random()
        if r < 0.1:
            continue  # missing from the run
        n = rng.randint(1, 40)
        docs = rng.sample(ids, n)
        # rank-derived scores with exact ties in groups (pytrec_eval compares float32)
        run[qid] = {d: float(rng.randint(0, max(1, n // 3))) for d in docs}
    return qrels, run


@pytest.mark.parametrize("seed", range(12))
def test_random_runs_match_trec_eval(seed):
    rng = random.Random(seed)
    qrels, run = random_case(rng, numeric_ids=seed % 2 == 0)
    assert assert_parity(qrels, run) > 0


@pytest.mark.parametrize("level", [1, 2, 3])
def test_relevance_level_matches_trec_eval(level):
    qrels, run = random_case(random.Random(100 + level))
    assert_parity(qrels, run, level=level)


def test_tie_break_numeric_like_ids():
    # All scores tie: trec_eval ranks by id descending as strings: "9" > "10" > "1".
    qrels = {"q": {"10": 1}}
    run = {"q": {"1": 1.0, "9": 1.0, "10": 1.0}}
    res = evaluate(qrels, run)
    assert res.ranking("q")["id"].tolist() == ["9", "10", "1"]
    assert res.values("mrr", None)[0] == pytest.approx(1 / 2)
    assert_parity(qrels, run, ks=[1, 2, 3])


def test_means_match_trec_eval_with_c_flag():
    """Mean over all golden (in-scope) queries; queries missing from the run count 0 (trec_eval -c)."""
    qrels, run = random_case(random.Random(7))
    res = evaluate(qrels, run)
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "P.5"})
    per = ev.evaluate(run)
    assert len(per) < len(qrels)  # some queries are missing from the run
    assert res.mean("ndcg", 10) == pytest.approx(sum(v["ndcg_cut_10"] for v in per.values()) / len(qrels), abs=1e-12)
    skip = res.with_options(missing_queries="skip")
    assert skip.mean("precision", 5) == pytest.approx(sum(v["P_5"] for v in per.values()) / len(per), abs=1e-12)


def _bm25ish_run(corpus_path: Path, queries_path: Path, depth=100):
    """A cheap lexical run (tf-idf overlap) to get realistic rankings without extra dependencies."""
    import json
    import math
    from collections import Counter, defaultdict

    docs = [json.loads(line) for line in corpus_path.open(encoding="utf-8")]
    qs = [json.loads(line) for line in queries_path.open(encoding="utf-8")]
    index = defaultdict(list)
    for d in docs:
        for t, c in Counter((d.get("title", "") + " " + d["text"]).lower().split()).items():
            index[t].append((d["id"], c))
    n = len(docs)
    run = {}
    for q in qs:
        scores = Counter()
        for t in set(q["text"].lower().split()):
            post = index.get(t, [])
            if not post:
                continue
            idf = math.log(1 + n / len(post))
            for did, c in post:
                scores[did] += idf * c / (c + 1.2)
        top = scores.most_common(depth)
        if top:
            # round to create real score ties
            run[q["id"]] = {d: round(s, 1) for d, s in top}
    return run


@pytest.mark.parametrize("name", ["adi", "med", "cranfield", "cisi", "cacm"])
def test_real_collections_match_trec_eval(name):
    folder = DATASETS / name
    if not folder.exists():
        pytest.skip(f"{folder} not present")
    from rag_metrics.io.trec import read_qrels

    golden = read_qrels(folder / "qrels.tsv")
    qrels = golden.qrels()
    run = _bm25ish_run(folder / "corpus.jsonl", folder / "queries.jsonl")
    # pytrec_eval wants Python ints and scores; ranks -> scores already floats
    assert_parity(qrels, run, ks=[1, 3, 5, 10, 20, 100, 200])
    if name == "cranfield":
        assert_parity(qrels, run, ks=[1, 5, 10], level=2)


@pytest.mark.parametrize("layout", ["shuffled", "sorted", "sorted_groups_reversed", "rank_by_rank_worst_first"])
def test_row_layout_does_not_matter(layout):
    """Same run given as shuffled rows, trec-sorted rows, sorted groups in another query order, or
    rank by rank across the queries, worst first (the queries take turns)."""
    rng = random.Random(42)
    qrels, run = random_case(rng, n_queries=25)
    rows = [(q, d, s) for q, r in run.items() for d, s in r.items()]
    if layout == "shuffled":
        rng.shuffle(rows)
    elif layout == "rank_by_rank_worst_first":
        ranked = Run.from_dict(run).rankings()
        deepest = max(len(items) for items in ranked.values())
        rows = [(q, *ranked[q][::-1][r]) for r in range(deepest) for q in ranked if r < len(ranked[q])]
    else:
        ranked = Run.from_dict(run).rankings()
        qs = list(ranked)[::-1] if layout == "sorted_groups_reversed" else list(ranked)
        rows = [(q, d, s) for q in qs for d, s in ranked[q]]
    r = Run(np.array([x[0] for x in rows], dtype=object), np.array([x[1] for x in rows], dtype=object),
            np.array([x[2] for x in rows]))
    res = evaluate(qrels, r)
    expected = trec_values(qrels, run, [1, 5, 10])
    idx = {q: i for i, q in enumerate(res.query_ids)}
    for q, d in expected.items():
        for (name, k), v in d.items():
            assert res.values(name, k)[idx[q]] == pytest.approx(v, abs=1e-9), (layout, q, name, k)
        assert res.ranking(q)["id"].tolist() == [i for i, _ in Run.from_dict(run).rankings()[q]]


def test_queries_that_take_turns_row_by_row_are_ranked():
    """No two neighbouring rows of one query (every row starts a new stretch of rows): the rows are
    still ranked per query, as trec_eval ranks them, not taken in file order."""
    rows = [("a", "x3", 0.1), ("b", "y3", 0.1), ("a", "x2", 0.5), ("b", "y2", 0.5), ("a", "x1", 0.9), ("b", "y1", 0.9)]
    r = Run(*(np.array(col, dtype=dtype) for col, dtype in zip(zip(*rows), (object, object, float))))
    qrels = {"a": {"x3": 1}, "b": {"y3": 1}}
    assert r.rankings() == {"a": [("x1", 0.9), ("x2", 0.5), ("x3", 0.1)], "b": [("y1", 0.9), ("y2", 0.5), ("y3", 0.1)]}
    res = evaluate(qrels, r)
    assert res.mean("hit_rate", 1) == 0.0 and res.mean("mrr") == pytest.approx(1 / 3)
    # every metric and K of the rows in that order against pytrec_eval
    expected = trec_values(qrels, {q: {i: s for qq, i, s in rows if qq == q} for q in "ab"}, [1, 2, 3])
    idx = {q: i for i, q in enumerate(res.query_ids)}
    for q, d in expected.items():
        for (name, k), v in d.items():
            assert res.values(name, k)[idx[q]] == pytest.approx(v, abs=1e-9), (q, name, k)


def test_presorted_with_wrong_tie_order_is_resorted():
    # scores sorted but tied ids in ascending order: must be re-ranked "b" before "a"
    r = Run(np.array(["q", "q"], dtype=object), np.array(["a", "b"], dtype=object), np.array([1.0, 1.0]))
    assert evaluate({"q": {"b": 1}}, r).mean("mrr") == 1.0


def test_queries_judged_only_non_relevant_count_zero_in_every_mean_like_trec_eval():
    """A query whose every grade is 0 is in scope: trec_eval reports it (0) and -c counts it in the mean."""
    rng = random.Random(21)
    qrels, run = random_case(rng)
    for qid in ("2", "5", "9"):
        qrels[qid] = {d: 0 for d in qrels[qid]}
    run.pop("5", None)  # one all-zero query also missing from the run
    assert_parity(qrels, run, ks=[1, 3, 5, 10])
    res = evaluate(qrels, run)
    assert res.n_queries == len(qrels) and res.n_out_of_scope == 0
    kstr = "1,3,5,10"
    per = pytrec_eval.RelevanceEvaluator(qrels, {f"P.{kstr}", f"recall.{kstr}", f"success.{kstr}",
                                                 f"ndcg_cut.{kstr}", f"map_cut.{kstr}"}).evaluate(run)
    assert "2" in per and per["2"]["P_5"] == 0.0  # trec_eval reports the all-zero query
    for name, te in [("precision", "P"), ("recall", "recall"), ("hit_rate", "success"), ("ndcg", "ndcg_cut"),
                     ("map", "map_cut")]:
        for k in (1, 3, 5, 10):
            c_mean = sum(v[f"{te}_{k}"] for v in per.values()) / len(qrels)  # -c: missing queries count 0
            assert res.mean(name, k) == pytest.approx(c_mean, abs=1e-12), (name, k)
    # the old reading (labelled option) leaves them out and shifts the mean
    old = res.with_options(out_of_scope_rule="no_relevant_id")
    assert old.n_queries == len(qrels) - 3
    assert old.mean("precision", 5) == pytest.approx(res.mean("precision", 5) * len(qrels) / (len(qrels) - 3))
