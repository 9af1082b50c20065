"""The registry computes: each MetricSpec owns its computation; unknown names are errors."""
from __future__ import annotations

import numpy as np
import pytest

from rag_metrics import Run
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.metrics.registry import METRICS, MetricKey, get_metric


@pytest.fixture
def res():
    # q1: relevant {a: 2, c: 1}, ranking [b, a, d, c]; q2: relevant {x: 1}, ranking [x, y]
    return evaluate({"q1": {"a": 2, "c": 1, "d": 0}, "q2": {"x": 1}},
                    Run.from_rankings({"q1": ["b", "a", "d", "c"], "q2": ["x", "y"]}))


@pytest.mark.parametrize("name", ["foo", "ndcg_foo", "NDCG", "", "hit rate"])
def test_unknown_metric_name_is_an_error(res, name):
    with pytest.raises(InputError, match="unknown metric"):
        res.values(name, 3)
    with pytest.raises(InputError, match="unknown metric"):
        res.values(MetricKey(name, 3))
    with pytest.raises(InputError, match="unknown metric"):
        get_metric(name)


def test_unknown_metric_in_tables_is_an_error(res):
    with pytest.raises(InputError, match="unknown metric 'ndcg_expo'"):
        res.summary(["ndcg", "ndcg_expo"], ks=(3,), ci=False)
    with pytest.raises(InputError, match="unknown metric"):
        res.per_query(["bogus"], ks=(3,))


def test_values_is_a_registry_lookup(res):
    kn = res.kernels
    for name, spec in METRICS.items():
        for k in (1, 2, 3, 10):
            np.testing.assert_array_equal(res.values(name, k), spec.compute(kn, k, res.options))
    # hand values at k = 3, q1 then q2 (grades at ranks: q1 0 2 0 | q2 1 0)
    np.testing.assert_allclose(res.values("hit_rate", 3), [1, 1])
    np.testing.assert_allclose(res.values("precision", 3), [1 / 3, 1 / 3])
    np.testing.assert_allclose(res.values("recall", 3), [1 / 2, 1])
    np.testing.assert_allclose(res.values("mrr", 3), [1 / 2, 1])
    np.testing.assert_allclose(res.values("map", 3), [(1 / 2) * (1 / 2), 1])
    idcg = 2 + 1 / np.log2(3)
    np.testing.assert_allclose(res.values("ndcg", 3), [(2 / np.log2(3)) / idcg, 1])
    idcg_e = 3 + 1 / np.log2(3)
    np.testing.assert_allclose(res.values("ndcg_exp", 3), [(3 / np.log2(3)) / idcg_e, 1])


def test_compute_passes_options(res):
    spec = METRICS["recall"]
    cap = EvalOptions(recall_denominator="cap")
    # q1: h_1 = 0; h_2 = 1 -> all: 1/2, cap at k = 1: min(1, 2) = 1 -> 0; at k=2 -> 1/2 vs 1/2
    np.testing.assert_allclose(spec.compute(res.kernels, 2, cap), [1 / 2, 1])
    np.testing.assert_allclose(spec.compute(res.kernels, 4, cap), [2 / 2, 1])
    np.testing.assert_allclose(res.with_options(recall_denominator="cap").values("recall", 1), [0, 1])


def test_cutoff_required_metrics_refuse_none(res):
    for name, spec in METRICS.items():
        if spec.cutoff == "required":
            with pytest.raises(InputError, match="needs a cutoff"):
                spec.compute(res.kernels, None)
            with pytest.raises(InputError, match="needs a cutoff"):
                res.values(name)


def test_trec_eval_names_kept():
    assert METRICS["hit_rate"].trec_eval == "success.k"
    assert METRICS["precision"].trec_eval == "P.k"
    assert METRICS["recall"].trec_eval == "recall.k"
    assert METRICS["ndcg"].trec_eval == "ndcg_cut.k"
    assert METRICS["map"].trec_eval == "map_cut.k"
