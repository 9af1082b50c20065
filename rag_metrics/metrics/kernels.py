"""Per-query metric values for any cutoff from a judged run: :class:`Kernels`, the shared prefix arrays
(:class:`~rag_metrics.metrics.prefixes.Prefixes`) with every metric family as a method.

Each metric's arithmetic lives in its family's module, found by its name: :mod:`~rag_metrics.metrics.hit_rate`,
:mod:`~rag_metrics.metrics.mrr`, :mod:`~rag_metrics.metrics.precision`, :mod:`~rag_metrics.metrics.recall`,
:mod:`~rag_metrics.metrics.ndcg`, :mod:`~rag_metrics.metrics.average_precision` (MAP) and
:mod:`~rag_metrics.metrics.judged`.  Conventions follow trec_eval exactly; see ``docs/conventions.md``.
Per query, never averaged here.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rag_metrics.metrics import average_precision as _ap
from rag_metrics.metrics import hit_rate as _hit
from rag_metrics.metrics import judged as _judged
from rag_metrics.metrics import mrr as _mrr
from rag_metrics.metrics import ndcg as _ndcg
from rag_metrics.metrics import precision as _precision
from rag_metrics.metrics import recall as _recall
from rag_metrics.metrics.prefixes import Prefixes, check_k, check_optional_k

__all__ = ["Kernels", "check_k", "check_optional_k"]


class Kernels(Prefixes):
    """Per-query metric values for any cutoff, from a :class:`~rag_metrics.metrics.judge.Judged`.

    Parameters
    ----------
    judged
        The judged run.
    relevance_level
        An id is relevant when its grade is ``>= relevance_level`` (trec_eval ``-l``).  NDCG uses
        the grades themselves and ignores the level, as trec_eval does.
    """

    # ---- metrics (every cutoff validated by check_k); each one's arithmetic is in its family's module -------
    def hit_rate(self, k: int) -> NDArray[np.float64]:
        return _hit.hit_rate(self, k)

    def precision(self, k: int) -> NDArray[np.float64]:
        return _precision.precision(self, k)

    def recall(self, k: int, denominator: str = "all") -> NDArray[np.float64]:
        return _recall.recall(self, k, denominator)

    def mrr(self, k: int | None = None) -> NDArray[np.float64]:
        return _mrr.mrr(self, k)

    def mrr_granular(self, k: int | None = None) -> NDArray[np.float64]:
        return _mrr.mrr_granular(self, k)

    def map(self, k: int | None = None) -> NDArray[np.float64]:
        return _ap.average_precision(self, k)

    def ndcg(self, k: int | None = None, gain: str = "linear",
             gains: tuple[tuple[int, float], ...] = (), binary: bool = False) -> NDArray[np.float64]:
        return _ndcg.ndcg(self, k, gain, gains, binary)

    def ndcg_exp(self, k: int | None = None) -> NDArray[np.float64]:
        return _ndcg.ndcg(self, k, gain="exponential")

    def judged_at(self, k: int | None = None) -> NDArray[np.float64]:
        return _judged.judged_at(self, k)

    @property
    def _dcg_linear(self) -> NDArray[np.float64]:   # the old private name (rag_metrics.exercises.checks reads it)
        return self.dcg_linear
