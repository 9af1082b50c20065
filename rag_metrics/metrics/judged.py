"""Judged@k: the share of the first k that carry a label, grade 0 included (ir_measures ``Judged@k``).

Per question ``j_k / min(k, n)``, with ``j_k`` the labelled ids among the first k and ``n`` the ids
retrieved (ir_measures' ``JudgedProvider``); no cutoff divides by n.  It says how complete the judgments
are for a run, not how good the run is.  A question that retrieved nothing scores 0.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.metrics.prefixes import Prefixes, check_optional_k, safe_div
from rag_metrics.metrics.spec import MetricSpec

if TYPE_CHECKING:
    from rag_metrics.metrics.options import EvalOptions

__all__ = ["SPEC", "judged_at"]


def judged_at(p: Prefixes, k: int | None = None) -> NDArray[np.float64]:
    """Share of the top k that carry a label, any grade (ir_measures ``Judged@k``).

    The divisor is ``min(k, n)`` (n = ids retrieved), as in ir_measures' ``JudgedProvider``;
    no cutoff divides by n.  A query that retrieved nothing gets 0.
    """
    k = check_optional_k(k)
    n = p.judged.n_retrieved.astype(np.float64)
    den = n if k is None else np.minimum(n, float(k))
    return safe_div(p.judged_prefix[:, p.col(k)].astype(np.float64), den)


def _kernel(p: Prefixes, k: int | None, options: EvalOptions | None) -> NDArray[np.float64]:
    return judged_at(p, k)


SPEC = MetricSpec("judged", "Judged", "optional", "- (ir_measures Judged@k)",
                  "j_k / min(k, n), j_k = ids with a label (any grade) in the top k",
                  "Share of the top k that carry a label, grade 0 included: how complete the judgments "
                  "are for this run (ir_measures Judged@k; divides by n when fewer than k were retrieved).",
                  _kernel)
