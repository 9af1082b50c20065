"""Hit rate@k: did any relevant id appear in the first k? (trec_eval ``success.k``, ir_measures ``Success@k``.)

Per question ``1 if h_k > 0 else 0``, with ``h_k`` the relevant ids among the first k; the mean over the
questions is the share of questions with a hit.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.metrics.prefixes import Prefixes, check_k
from rag_metrics.metrics.spec import MetricExplanation, MetricSpec, OneList

if TYPE_CHECKING:
    from rag_metrics.metrics.options import EvalOptions

__all__ = ["SPEC", "hit_rate", "explain"]


def hit_rate(p: Prefixes, k: int) -> NDArray[np.float64]:
    """1 where a relevant id is among the first ``k``, else 0."""
    return (p.hits_at(k) > 0).astype(np.float64)


def _kernel(p: Prefixes, k: int | None, options: EvalOptions | None) -> NDArray[np.float64]:
    return hit_rate(p, check_k(k))


SPEC = MetricSpec("hit_rate", "Hit rate", "required", "success.k",
                  "1 if h_k > 0 else 0",
                  "Did any relevant id appear in the top k? (trec_eval success, ir_measures Success@k.)",
                  _kernel)


def explain(one: OneList) -> list[MetricExplanation]:
    v = float(hit_rate(one.kn, one.k)[0])
    return [MetricExplanation("hit_rate", one.k, v, "1 if hits@k > 0 else 0", f"hits@{one.k} = {one.h} -> {int(v)}")]
