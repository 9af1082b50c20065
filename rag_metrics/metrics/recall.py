"""Recall@k: the share of the question's relevant ids found in the first k (trec_eval ``recall.k``).

Per question ``h_k / |R|``: ``|R|`` counts every relevant id of the question, retrieved or not
(``EvalOptions(recall_denominator="cap")`` divides by ``min(k, |R|)`` instead, the "R-capped" recall).
A question with no relevant id scores 0.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.metrics.prefixes import Prefixes, check_k, safe_div
from rag_metrics.metrics.spec import MetricExplanation, MetricSpec, OneList, number, option

if TYPE_CHECKING:
    from rag_metrics.metrics.options import EvalOptions

__all__ = ["SPEC", "recall", "explain"]


def recall(p: Prefixes, k: int, denominator: str = "all") -> NDArray[np.float64]:
    """``h_k / |R|`` (``denominator="all"``) or ``h_k / min(k, |R|)`` (``"cap"``) per question."""
    k = check_k(k)
    r = p.n_relevant.astype(np.float64)
    if denominator == "cap":
        r = np.minimum(r, float(k))
    elif denominator != "all":
        raise ValueError(f"recall denominator must be 'all' or 'cap', got {denominator!r}")
    return safe_div(p.hits_at(k).astype(np.float64), r)


def _kernel(p: Prefixes, k: int | None, options: EvalOptions | None) -> NDArray[np.float64]:
    return recall(p, check_k(k), option(options, "recall_denominator", "all"))


SPEC = MetricSpec("recall", "Recall", "required", "recall.k",
                  "h_k / |R|",
                  "Share of all relevant ids found in the top k (|R| counts relevant ids never retrieved).",
                  _kernel)


def explain(one: OneList) -> list[MetricExplanation]:
    v = float(recall(one.kn, one.k, one.recall_denominator)[0])
    den = one.R if one.recall_denominator == "all" else min(one.k, one.R)
    den_txt = "|R|" if one.recall_denominator == "all" else "min(k, |R|)"
    return [MetricExplanation("recall", one.k, v, f"hits@k / {den_txt}",
                              f"{one.h} / {den} = {number(v)}" if den else "no relevant id: 0")]
