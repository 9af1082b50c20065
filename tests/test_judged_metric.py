"""judged@k: share of the top k with a label (any grade, 0 included), as ir_measures Judged@k."""
from __future__ import annotations

import random

import numpy as np
import pytest

from rag_metrics import Run
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.explain import judged_from_grades
from rag_metrics.metrics.kernels import Kernels
from rag_metrics.metrics.options import EvalOptions


def test_hand_table():
    # qrels: q1 judges a (2), b (0), c (-1); ranking [a, x, b, y, c]
    #   judged pattern 1 0 1 0 1 -> judged@1 = 1/1, @2 = 1/2, @3 = 2/3, @4 = 2/4, @5 = 3/5
    #   @10: only 5 retrieved -> divisor min(10, 5) = 5 -> 3/5 (ir_measures); no cutoff: 3/5
    # q2: judges only z (0); ranking [u, z] -> @1 = 0, @2 = 1/2, @5 = 1/2 (divisor 2)
    # q3: nothing retrieved -> 0;  q4: no judgments at all, ranking [a] -> 0
    qrels = {"q1": {"a": 2, "b": 0, "c": -1}, "q2": {"z": 0}, "q3": {"a": 1}, "q4": {}}
    run = Run.from_rankings({"q1": ["a", "x", "b", "y", "c"], "q2": ["u", "z"], "q4": ["a"]})
    res = evaluate(qrels, run)
    table = {1: [1, 0, 0, 0], 2: [1 / 2, 1 / 2, 0, 0], 3: [2 / 3, 1 / 2, 0, 0], 4: [2 / 4, 1 / 2, 0, 0],
             5: [3 / 5, 1 / 2, 0, 0], 10: [3 / 5, 1 / 2, 0, 0]}
    for k, want in table.items():
        np.testing.assert_allclose(res.values("judged", k), want, err_msg=f"judged@{k}")
    np.testing.assert_allclose(res.values("judged"), [3 / 5, 1 / 2, 0, 0])
    # grade 0 counts as judged, the relevance level does not matter
    np.testing.assert_allclose(res.with_options(relevance_level=3).values("judged", 3), [2 / 3, 1 / 2, 0, 0])


def test_document_level_judged_after_collapse():
    # chunks d1#0, d1#1, d2#0; qrels judge d2 (0) at document level; ranking d1#0 d2#0 d1#1 -> docs d1 d2
    res = evaluate({"q": {"d2": 0, "d9": 1}}, Run.from_rankings({"q": ["d1#0", "d2#0", "d1#1"]}),
                   EvalOptions(level="document"), chunk_to_doc={"d1#0": "d1", "d1#1": "d1", "d2#0": "d2"})
    np.testing.assert_allclose(res.values("judged", 1), [0])
    np.testing.assert_allclose(res.values("judged", 3), [1 / 2])


def test_grades_without_ids_cannot_tell_judged():
    kn = Kernels(judged_from_grades([[1, 0]], [[1]]))
    with pytest.raises(InputError, match="judged@k needs"):
        kn.judged_at(2)


@pytest.mark.parametrize("seed", range(6))
def test_matches_ir_measures_on_random_runs(seed):
    ir_measures = pytest.importorskip("ir_measures")
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(40)]
    qrels, run = {}, {}
    for q in range(25):
        qid = f"q{q}"
        judged = rng.sample(docs, rng.randint(1, 15))
        qrels[qid] = {d: rng.choice([-1, 0, 0, 1, 2]) for d in judged}
        n = rng.randint(1, 30)
        if q % 7 == 3:
            continue  # not in the run
        # distinct scores: ir_measures breaks ties by id ascending, trec_eval descending
        scores = rng.sample(range(1000), n)
        run[qid] = {d: float(s) for d, s in zip(rng.sample(docs, n), scores)}
    res = evaluate(qrels, run)
    for k in (1, 3, 5, 10, 20, 50):
        ref = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Judged @ k], qrels, run)}
        ours = dict(zip(res.query_ids, res.values("judged", k)))
        for qid in qrels:
            assert ours[qid] == pytest.approx(ref.get(qid, 0.0), abs=1e-12), (qid, k)
    ref = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Judged], qrels, run)}
    for qid, v in zip(res.query_ids, res.values("judged")):
        assert v == pytest.approx(ref.get(qid, 0.0), abs=1e-12)
