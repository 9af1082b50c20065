"""A metric you can find by its name (issue 51): one module per family holds its kernel as a named function, its
formula and its explanation; the registry lists the families."""
from __future__ import annotations

import importlib
import inspect

import pytest

from rag_metrics.metrics.explain import explain_ranking
from rag_metrics.metrics.registry import METRICS

#: registry name -> the family module a newcomer opens
FAMILY = {"hit_rate": "hit_rate", "mrr": "mrr", "precision": "precision", "recall": "recall", "ndcg": "ndcg",
          "ndcg_exp": "ndcg", "map": "average_precision", "judged": "judged"}


def test_every_metric_has_a_family_module() -> None:
    assert set(METRICS) == set(FAMILY)


@pytest.mark.parametrize("name", sorted(FAMILY))
def test_the_kernel_is_a_named_function_of_its_family(name: str) -> None:
    module = importlib.import_module(f"rag_metrics.metrics.{FAMILY[name]}")
    spec = METRICS[name]
    assert spec in (getattr(module, "SPEC", None), getattr(module, "SPEC_EXP", None))
    kernel = spec.kernel
    assert inspect.isfunction(kernel) and kernel.__name__ != "<lambda>"
    assert kernel.__module__ == module.__name__
    assert module.__doc__ and spec.formula


@pytest.mark.parametrize("name", ["hit_rate", "precision", "recall", "mrr", "map", "ndcg", "ndcg_exp"])
def test_the_explanation_comes_from_the_family(name: str) -> None:
    module = importlib.import_module(f"rag_metrics.metrics.{FAMILY[name]}")
    assert callable(module.explain)
    e = explain_ranking([0, 1, 0, 2], [1, 2, 1], 3)[name]
    assert e.metric == name and e.substituted
