"""Precision@k: the share of the first k that is relevant (trec_eval ``P.k``).

Per question ``h_k / k``, with ``h_k`` the relevant ids among the first k.  The divisor is k even when
fewer than k ids were retrieved, as trec_eval's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.metrics.prefixes import Prefixes, check_k
from rag_metrics.metrics.spec import MetricExplanation, MetricSpec, OneList, number

if TYPE_CHECKING:
    from rag_metrics.metrics.options import EvalOptions

__all__ = ["SPEC", "precision", "explain"]


def precision(p: Prefixes, k: int) -> NDArray[np.float64]:
    """``h_k / k`` per question."""
    k = check_k(k)
    return p.hits_at(k) / float(k)


def _kernel(p: Prefixes, k: int | None, options: EvalOptions | None) -> NDArray[np.float64]:
    return precision(p, check_k(k))


SPEC = MetricSpec("precision", "Precision", "required", "P.k",
                  "h_k / k",
                  "Share of the top k that is relevant; the divisor is k even when fewer were retrieved.",
                  _kernel)


def explain(one: OneList) -> list[MetricExplanation]:
    v = float(precision(one.kn, one.k)[0])
    return [MetricExplanation("precision", one.k, v, "hits@k / k", f"{one.h} / {one.k} = {number(v)}")]
