"""MAP: average precision, the mean over the questions (trec_eval ``map_cut.k``).

Per question ``(1 / |R|) * sum over relevant ranks i <= k of h_i / i``: the precision at each relevant
rank, summed, over every relevant id of the question (retrieved or not).  A question with no relevant
id scores 0.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.metrics.prefixes import Prefixes, check_optional_k, safe_div
from rag_metrics.metrics.spec import MetricExplanation, MetricSpec, OneList, number

if TYPE_CHECKING:
    from rag_metrics.metrics.options import EvalOptions

__all__ = ["SPEC", "average_precision", "explain"]


def average_precision(p: Prefixes, k: int | None = None) -> NDArray[np.float64]:
    """Average precision at ``k`` (None: the whole ranking) per question."""
    k = check_optional_k(k)
    return safe_div(p.ap_prefix[:, p.col(k)], p.n_relevant.astype(np.float64))


def _kernel(p: Prefixes, k: int | None, options: EvalOptions | None) -> NDArray[np.float64]:
    return average_precision(p, k)


SPEC = MetricSpec("map", "MAP", "optional", "map_cut.k",
                  "(1/|R|) * sum over relevant ranks i <= k of h_i / i",
                  "Average precision at each relevant rank, over all relevant ids (denominator |R|).",
                  _kernel)


def explain(one: OneList) -> list[MetricExplanation]:
    v = float(average_precision(one.kn, one.k)[0])
    terms = [f"{n + 1}/{r}" for n, r in enumerate(one.rel_ranks)]
    R = one.R
    sub = (f"(1/{R}) x ({' + '.join(terms)}) = {number(v)}" if terms and R else
           ("no relevant id in the top k: 0" if R else "no relevant id: 0"))
    return [MetricExplanation("map", one.k, v, "(1/|R|) x sum over relevant ranks i <= k of hits@i / i", sub)]
