"""Peer conventions as labelled options (issue 19), each checked against the peer itself where it is
installed (pytrec_eval for trec_eval ``-J``, ir_measures for ``nDCG(gains=...)`` and
``judged_only=True``) and against the documented examples written as arithmetic otherwise
(LlamaIndex's granular MRR, torchmetrics' "scored <= 0 is not retrieved")."""
from __future__ import annotations

import random

import ir_measures
import pytest
import pytrec_eval

from rag_metrics import GoldenSet, Run
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.options import EvalOptions, parse_gains

KS = [1, 3, 5, 10]


def _random(seed: int, n_q: int = 30, graded: bool = True):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_q):
        docs = [f"d{i}" for i in range(40)]
        judged = rng.sample(docs, rng.randint(1, 15))
        qrels[f"q{q}"] = {d: rng.choice([0, 0, 1, 2, 3] if graded else [0, 1]) for d in judged}
        ranked = rng.sample(docs, rng.randint(1, 25))
        run[f"q{q}"] = {d: float(len(ranked) - r) for r, d in enumerate(ranked)}  # distinct, rank-derived
    return qrels, run


# ---- trec_eval -J / ir_measures judged_only=True --------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_judged_only_equals_trec_eval_minus_J(seed):
    qrels, run = _random(seed)
    kstr = ",".join(map(str, KS))
    ev = pytrec_eval.RelevanceEvaluator(qrels, {f"P.{kstr}", f"recall.{kstr}", f"success.{kstr}",
                                                f"ndcg_cut.{kstr}", f"map_cut.{kstr}", "recip_rank"},
                                        judged_docs_only_flag=True)
    expected = ev.evaluate(run)
    res = evaluate(qrels, run, EvalOptions(judged_only=True))
    plain = evaluate(qrels, run)
    idx = {q: i for i, q in enumerate(res.query_ids)}
    differs = 0
    for q, vals in expected.items():
        i = idx[q]
        for k in KS:
            for ours, theirs in (("precision", "P"), ("recall", "recall"), ("hit_rate", "success"),
                                 ("ndcg", "ndcg_cut"), ("map", "map_cut")):
                assert res.values(ours, k)[i] == pytest.approx(vals[f"{theirs}_{k}"], abs=1e-9), (q, ours, k)
                differs += res.values(ours, k)[i] != plain.values(ours, k)[i]
        assert res.values("mrr")[i] == pytest.approx(vals["recip_rank"], abs=1e-9), q
    assert differs > 0  # the option changes numbers on these runs


def test_judged_only_equals_ir_measures():
    qrels, run = _random(7)
    ms = [ir_measures.P(judged_only=True) @ 5, ir_measures.nDCG(judged_only=True) @ 10,
          ir_measures.AP(judged_only=True) @ 10]
    agg = ir_measures.calc_aggregate(ms, qrels, run)
    res = evaluate(qrels, run, EvalOptions(judged_only=True))
    assert res.mean("precision", 5) == pytest.approx(agg[ms[0]], abs=1e-9)
    assert res.mean("ndcg", 10) == pytest.approx(agg[ms[1]], abs=1e-9)
    assert res.mean("map", 10) == pytest.approx(agg[ms[2]], abs=1e-9)


def test_judged_only_hand_example():
    # relevant = {a}, b judged 0, x, y unjudged; ranking [x, a, y, b] -> judged-only ranking [a, b]
    res = evaluate({"q": {"a": 1, "b": 0}}, Run.from_rankings({"q": ["x", "a", "y", "b"]}),
                   EvalOptions(judged_only=True))
    assert res.mean("mrr") == 1.0           # a moves to rank 1 (1/2 without -J)
    assert res.mean("precision", 2) == 1 / 2  # [a, b]: 1 of 2


# ---- trec_eval gain parameters / ir_measures nDCG(gains=...) ---------------------------------------
@pytest.mark.parametrize("gains", [{0: 0, 1: 1, 2: 3, 3: 7}, {1: 3, 2: 1}, {2: 10}, {1: 0, 2: 1, 3: 2}])
@pytest.mark.parametrize("seed", [3, 4])
def test_gains_equal_ir_measures(gains, seed):
    qrels, run = _random(seed)
    res = evaluate(qrels, run, EvalOptions(gains=gains))
    for k in (3, 10):
        m = ir_measures.nDCG(gains=gains) @ k  # one measure per call (mixing measures in one call can go wrong)
        expected = {x.query_id: x.value for x in ir_measures.iter_calc([m], qrels, run)}
        vals = res.values("ndcg", k)
        for i, q in enumerate(res.query_ids):
            if q in expected:
                assert vals[i] == pytest.approx(expected[q], abs=1e-9), (q, k, gains)


def test_gains_hand_example():
    # grades a=1, c=2; gains {1: 3, 2: 1}; ranking [x, a, y, b, c]
    # DCG@3 = 3 / log2(3); the ideal sorts the gains: [3, 1] -> IDCG@3 = 3 + 1 / log2(3)
    import math

    res = evaluate({"q1": {"a": 1, "b": 0, "c": 2}}, {"q1": {"x": 5, "a": 4, "y": 3, "b": 2, "c": 1}},
                   EvalOptions(gains={1: 3, 2: 1}))
    assert res.mean("ndcg", 3) == pytest.approx((3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert res.mean("ndcg_exp", 3) == evaluate({"q1": {"a": 1, "b": 0, "c": 2}},
                                               {"q1": {"x": 5, "a": 4, "y": 3, "b": 2, "c": 1}}).mean("ndcg_exp", 3)


def test_gains_are_validated_on_creation():
    assert EvalOptions(gains={2: 3, 1: 1}).gains == ((1, 1.0), (2, 3.0))
    assert parse_gains("0=0, 1=1,2=3") == ((0, 0.0), (1, 1.0), (2, 3.0))
    for bad in ({1: -1}, {1: float("nan")}, {0.5: 1}, {0: 2}, {1: "x"}, "1=1"):
        with pytest.raises(InputError, match="gain"):
            EvalOptions(gains=bad)  # type: ignore[arg-type]
    for text in ("1:1", "a=1", "1=x", "1=1,1=2"):
        with pytest.raises(InputError, match="--gains"):
            parse_gains(text)


# ---- LlamaIndex MRR(use_granular_mrr=True) ---------------------------------------------------------
@pytest.mark.parametrize(("expected_ids", "retrieved_ids", "expected"), [
    # LlamaIndex's own test cases for the granular MRR, as arithmetic
    (["id1", "id2", "id3"], ["id3", "id1", "id2", "id4"], (1 / 1 + 1 / 2 + 1 / 3) / 3),
    (["id1", "id2", "id3", "id4"], ["id1", "id2", "id5"], (1 / 1 + 1 / 2) / 2),
    (["id1", "id2"], ["id1", "id7", "id15", "id2"], (1 / 1 + 1 / 4) / 2),
    (["id1", "id2"], ["id3", "id4"], 0.0),
])
def test_granular_mrr_equals_llamaindex(expected_ids, retrieved_ids, expected):
    golden = GoldenSet.from_qrels({"q": {i: 1 for i in expected_ids}})
    run = Run.from_rankings({"q": retrieved_ids})
    assert evaluate(golden, run, EvalOptions(mrr="granular")).mean("mrr") == pytest.approx(expected)
    first = next((1 / (r + 1) for r, i in enumerate(retrieved_ids) if i in expected_ids), 0.0)
    assert evaluate(golden, run).mean("mrr") == pytest.approx(first)  # the default: trec_eval's first


def test_granular_mrr_at_k_reads_the_top_k():
    # relevant {a, c}; ranking [a, b, c]: @2 only a -> 1; @3 (1 + 1/3) / 2
    res = evaluate({"q": {"a": 1, "c": 1}}, Run.from_rankings({"q": ["a", "b", "c"]}), EvalOptions(mrr="granular"))
    assert res.mean("mrr", 2) == 1.0 and res.mean("mrr", 3) == pytest.approx((1 + 1 / 3) / 2)


# ---- torchmetrics: results scored <= 0 are not retrieved ---------------------------------------------
def test_nonpositive_scores_not_retrieved():
    # relevant {a, c}; scores a 0.9, b 0.5, c 0.0, d -0.2: under the rule only [a, b] were retrieved
    qrels = {"q": {"a": 1, "c": 1}}
    run = {"q": {"a": 0.9, "b": 0.5, "c": 0.0, "d": -0.2}}
    tm = evaluate(qrels, run, EvalOptions(nonpositive_scores="not_retrieved"))
    te = evaluate(qrels, run)
    assert tm.mean("recall", 4) == 1 / 2 and te.mean("recall", 4) == 2 / 2
    assert tm.mean("precision", 4) == 1 / 4 and te.mean("precision", 4) == 2 / 4
    assert tm.mean("hit_rate", 4) == 1.0
    # a query whose every score is <= 0 retrieved nothing: 0
    assert evaluate(qrels, {"q": {"a": 0.0, "c": -1.0}},
                    EvalOptions(nonpositive_scores="not_retrieved")).mean("hit_rate", 5) == 0.0


def test_torchmetrics_documented_example_is_unchanged_by_the_rule():
    # torchmetrics' RetrievalPrecision / RetrievalMRR docstring: indexes [0,0,0,1,1,1,1],
    # preds [0.2,0.3,0.5,0.1,0.3,0.5,0.2], target [F,F,T,F,T,F,T] -> P@2 = 0.5, MRR = 0.75 (all scores > 0)
    run = {"0": {"a": 0.2, "b": 0.3, "c": 0.5}, "1": {"d": 0.1, "e": 0.3, "f": 0.5, "g": 0.2}}
    qrels = {"0": {"c": 1}, "1": {"e": 1, "g": 1}}
    res = evaluate(qrels, run, EvalOptions(nonpositive_scores="not_retrieved"))
    assert res.mean("precision", 2) == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert res.mean("mrr") == pytest.approx((1 / 1 + 1 / 2) / 2)


def test_options_off_by_default_and_validated():
    o = EvalOptions()
    assert (o.gains, o.judged_only, o.mrr, o.nonpositive_scores) == ((), False, "first", "retrieved")
    for bad in ({"mrr": "llama"}, {"nonpositive_scores": "drop"}, {"judged_only": "yes"}):
        with pytest.raises(InputError):
            EvalOptions(**bad)  # type: ignore[arg-type]


# ---- the CLI flags ---------------------------------------------------------------------------------
def test_cli_flags_reach_the_options(tmp_path, capsys):
    import json

    from rag_metrics.cli import main

    (tmp_path / "q.txt").write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 2\n")
    (tmp_path / "r.trec").write_text("".join(f"q1 Q0 {d} {r + 1} {s} t\n" for r, (d, s) in
                                             enumerate([("x", 5), ("a", 4), ("y", 3), ("b", 2), ("c", -1)])))

    def run(*flags):
        capsys.readouterr()
        code = main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.trec"),
                     "--metrics", "mrr@5,precision@5,ndcg@5", "--format", "json", *flags])
        assert code == 0
        return json.loads(capsys.readouterr().out)["metrics"]

    qrels = {"q1": {"a": 1, "b": 0, "c": 2}}
    trec = {"q1": {"x": 5.0, "a": 4.0, "y": 3.0, "b": 2.0, "c": -1.0}}
    for flags, opts in [((), EvalOptions()), (("--judged-only",), EvalOptions(judged_only=True)),
                        (("--mrr", "granular"), EvalOptions(mrr="granular")),
                        (("--gains", "1=3,2=1"), EvalOptions(gains={1: 3, 2: 1})),
                        (("--nonpositive-scores", "not-retrieved"), EvalOptions(nonpositive_scores="not_retrieved"))]:
        res = evaluate(qrels, trec, opts)
        assert run(*flags) == pytest.approx({k: res.mean(k) for k in ("mrr@5", "precision@5", "ndcg@5")}), flags
    capsys.readouterr()
    assert main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.trec"),
                 "--gains", "1=-2"]) == 2
    assert "--gains" in capsys.readouterr().err


# ---- invariants ------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_peer_options_keep_every_metric_in_range_and_ordered(seed):
    """Every metric stays in [0, 1] under each option; the granular MRR never exceeds trec_eval's (a mean
    of 1/rank over ranks >= the first), and judged-only precision@k is at least the plain one."""
    qrels, run = _random(seed)
    if seed % 2:  # some scores <= 0
        run = {q: {d: s - 10 for d, s in r.items()} for q, r in run.items()}
    plain = evaluate(qrels, run)
    for opts in (EvalOptions(judged_only=True), EvalOptions(mrr="granular"), EvalOptions(gains={1: 5, 3: 1}),
                 EvalOptions(nonpositive_scores="not_retrieved")):
        res = evaluate(qrels, run, opts)
        for m in ("hit_rate", "mrr", "precision", "recall", "ndcg", "map", "judged"):
            for k in (1, 5, 20):
                v = res.values(m, k)
                assert ((v >= 0) & (v <= 1 + 1e-12)).all(), (opts, m, k)
    gran = evaluate(qrels, run, EvalOptions(mrr="granular"))
    for k in (1, 5, 20, None):
        assert (gran.values("mrr", k) <= plain.values("mrr", k) + 1e-12).all()
    jo = evaluate(qrels, run, EvalOptions(judged_only=True))
    assert (jo.values("precision", 5) >= plain.values("precision", 5) - 1e-12).all()
    # judged-only: every result left carries a label, so judged@k is 1 (0 when nothing judged was retrieved)
    assert ((jo.values("judged", 5) == 1) | (jo.kernels.judged.n_retrieved == 0)).all()
