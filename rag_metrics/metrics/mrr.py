"""MRR: the reciprocal rank of the first relevant id (trec_eval ``recip_rank``, on the run cut to k).

Per question ``1 / rank`` of the first relevant id when that rank is at most k, else 0; the mean over the
questions is the mean reciprocal rank.  ``EvalOptions(mrr="granular")`` gives LlamaIndex's granular MRR
instead: the mean of ``1 / rank`` over every relevant id in the first k.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.metrics.prefixes import Prefixes, check_optional_k, safe_div
from rag_metrics.metrics.spec import MetricExplanation, MetricSpec, OneList, number, option

if TYPE_CHECKING:
    from rag_metrics.metrics.options import EvalOptions

__all__ = ["SPEC", "mrr", "mrr_granular", "explain"]


def mrr(p: Prefixes, k: int | None = None) -> NDArray[np.float64]:
    """``1 / rank`` of the first relevant id if it is within the first ``k`` (None: anywhere), else 0."""
    k = check_optional_k(k)
    f = p.first_relevant_rank
    ok = (f > 0) if k is None else (f > 0) & (f <= k)
    return safe_div(ok.astype(np.float64), f.astype(np.float64))


def mrr_granular(p: Prefixes, k: int | None = None) -> NDArray[np.float64]:
    """LlamaIndex's granular MRR (``MRR(use_granular_mrr=True)``): the mean of ``1 / rank`` over the
    relevant ids retrieved in the top k (0 when none is); trec_eval's ``recip_rank`` uses the first only."""
    k = check_optional_k(k)
    col = p.col(k)
    return safe_div(p.rr_prefix[:, col], p.hits[:, col].astype(np.float64))


def _kernel(p: Prefixes, k: int | None, options: EvalOptions | None) -> NDArray[np.float64]:
    return mrr_granular(p, k) if option(options, "mrr", "first") == "granular" else mrr(p, k)


SPEC = MetricSpec("mrr", "MRR", "optional", "recip_rank (on the run cut to k)",
                  "1 / rank of the first relevant id if rank <= k, else 0",
                  "Reciprocal rank of the first relevant id: rewards putting one right answer high.",
                  _kernel)


def explain(one: OneList) -> list[MetricExplanation]:
    k = one.k
    v = float(mrr(one.kn, k)[0])
    first = int(one.kn.first_relevant_rank[0])
    if first and first <= k:
        sub = f"first relevant at rank {first}: 1 / {first} = {number(v)}"
    elif first:
        sub = f"first relevant at rank {first} > k = {k}: 0 (would count 1/{first} at K={first})"
    else:
        sub = "no relevant id retrieved: 0"
    return [MetricExplanation("mrr", k, v, "1 / rank of the first relevant id (if <= k)", sub)]
