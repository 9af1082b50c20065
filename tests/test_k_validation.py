"""k is validated wherever it enters the library: InputError naming the value and the fix."""
from __future__ import annotations

import numpy as np
import pytest

from rag_metrics import Run
from rag_metrics.compare.ab import comparison_keys
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.insights.ragas import context_metrics
from rag_metrics.metrics.explain import explain_ranking
from rag_metrics.metrics.kernels import check_k
from rag_metrics.metrics.registry import METRICS, MetricKey

BAD = [(0, "got 0"), (-1, "got -1"), (True, "got True"), (2.5, "got 2.5"), ("3", "got '3'"),
       (np.float64(3.0), "got np.float64\\(3.0\\)|got 3.0")]


@pytest.fixture
def res():
    return evaluate({"q": {"a": 1, "c": 1}}, Run.from_rankings({"q": ["b", "a", "d", "c"]}))


@pytest.mark.parametrize("k, shown", BAD)
def test_kernels_refuse_bad_k(res, k, shown):
    kn = res.kernels
    for call in (kn.hit_rate, kn.precision, kn.recall, kn.mrr, kn.map, kn.ndcg, kn.ndcg_exp, kn.judged_at,
                 kn.hits_at):
        with pytest.raises(InputError, match=f"cutoff must be .*{shown}.*pass e.g. k=10"):
            call(k)


@pytest.mark.parametrize("k, shown", BAD)
def test_every_entry_point_refuses_bad_k(res, k, shown):
    for name in METRICS:
        with pytest.raises(InputError, match=shown):
            res.values(name, k)
        with pytest.raises(InputError, match=shown):
            res.values(MetricKey(name, k))  # type: ignore[arg-type]  # a bad k on purpose
    with pytest.raises(InputError, match=shown):
        res.failures(k)
    with pytest.raises(InputError, match=shown):
        explain_ranking([0, 1, 0, 1], [1, 1], k)
    with pytest.raises(InputError, match=shown):
        context_metrics(res, k)
    with pytest.raises(InputError, match=f"K: .*{shown}"):
        comparison_keys(["hit_rate"], k)
    with pytest.raises(InputError, match=shown):
        res.summary(["precision"], ks=(k,), ci=False)


def test_none_where_a_cutoff_is_required(res):
    kn = res.kernels
    for call in (kn.hit_rate, kn.precision, kn.recall, kn.hits_at):
        with pytest.raises(InputError, match="needs a cutoff, got None"):
            call(None)
    for name in ("hit_rate", "precision", "recall"):
        with pytest.raises(InputError, match="needs a cutoff"):
            res.values(MetricKey(name, None))
    with pytest.raises(InputError, match="needs a cutoff"):
        res.failures(None)  # type: ignore[arg-type]  # a bad k on purpose
    # optional cutoffs: None is the whole ranking (mrr = 1/2, map = (1/2)(1/2 + 2/4))
    assert kn.mrr(None)[0] == pytest.approx(0.5)
    assert kn.map(None)[0] == pytest.approx(0.5)


def test_good_k_forms(res):
    assert check_k(np.int64(3)) == 3 and isinstance(check_k(np.int64(3)), int)
    # k = 0 used to read the last column (hit_rate) and divide by zero (precision)
    assert res.values("precision", np.int32(20))[0] == pytest.approx(2 / 20)
    assert res.values("hit_rate", 1)[0] == 0.0
