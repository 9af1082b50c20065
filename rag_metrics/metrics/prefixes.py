"""The shared prefix arrays every metric reads: one pass over a judged grade matrix gives every cutoff k.

Prefix sums over the rank axis are computed once (lazily, per relevance level); a metric at
cutoff k then only reads column ``min(k, depth) - 1``.  The metrics themselves are one module per
family (:mod:`rag_metrics.metrics.spec` lists them); conventions follow trec_eval exactly
(``docs/conventions.md``).  Per query, never averaged here.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from rag_metrics.errors import InputError
from rag_metrics.metrics.judge import Judged

__all__ = ["Prefixes", "check_k", "check_optional_k", "safe_div"]


def check_k(k: object, where: str = "k") -> int:
    """Validate a required cutoff wherever it enters the library: a whole number >= 1 (NumPy
    integers accepted; ``None``, ``True``, floats and strings refused).

    Raises :class:`InputError` naming the setting, the value received and the fix.
    """
    if k is None:
        raise InputError(f"{where}: this metric needs a cutoff, got None; pass a whole number >= 1, e.g. {where}=10")
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise InputError(f"{where}: cutoff must be a whole number >= 1, got {k!r} ({type(k).__name__}); "
                         f"pass e.g. {where}=10")
    if k < 1:
        raise InputError(f"{where}: cutoff must be >= 1, got {k!r}; pass e.g. {where}=10")
    return int(k)


def check_optional_k(k: object, where: str = "k") -> int | None:
    """:func:`check_k` for metrics whose cutoff is optional: ``None`` means the whole ranking."""
    return None if k is None else check_k(k, where)


def safe_div(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    """``num / den`` where ``den > 0``, else 0 (a query with nothing to divide by scores 0, as trec_eval)."""
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


class Prefixes:
    """The prefix arrays of a :class:`Judged` that every metric family reads, for any cutoff.

    Parameters
    ----------
    judged
        The judged run.
    relevance_level
        An id is relevant when its grade is ``>= relevance_level`` (trec_eval ``-l``).  NDCG uses
        the grades themselves and ignores the level, as trec_eval does.
    """

    def __init__(self, judged: Judged, relevance_level: int = 1) -> None:
        if int(relevance_level) != relevance_level or relevance_level < 1:
            raise ValueError(f"relevance_level must be an integer >= 1, got {relevance_level!r}")
        self.judged = judged
        self.level = int(relevance_level)
        d = judged.depth
        self._ranks = np.arange(1, d + 1, dtype=np.float64)
        self._discount = np.log2(self._ranks + 1.0)
        self._custom: dict[tuple[tuple[int, float], ...], tuple[NDArray[np.float64], NDArray[np.float64]]] = {}

    # ---- shared prefix arrays ------------------------------------------------------------
    @cached_property
    def relevant(self) -> NDArray[np.bool_]:
        return self.judged.grades >= self.level

    @cached_property
    def hits(self) -> NDArray[np.int32]:
        """``hits[q, k-1]`` = relevant ids among the first k (k <= depth)."""
        return np.cumsum(self.relevant, axis=1, dtype=np.int32)

    @cached_property
    def n_relevant(self) -> NDArray[np.int64]:
        """``|R|`` per query: judged ids with grade >= level, retrieved or not."""
        return (self.judged.ideal_grades >= self.level).sum(axis=1).astype(np.int64)

    @cached_property
    def first_relevant_rank(self) -> NDArray[np.int64]:
        """1-based rank of the first relevant id, 0 when none was retrieved."""
        rel = self.relevant
        any_rel = rel.any(axis=1)
        return np.where(any_rel, rel.argmax(axis=1) + 1, 0).astype(np.int64)

    @cached_property
    def judged_prefix(self) -> NDArray[np.int32]:
        """``judged_prefix[q, k-1]`` = ids with a label (any grade, 0 included) among the first k."""
        mask = self.judged.is_judged
        if mask is None:
            raise InputError("judged@k needs to know which retrieved ids carry a label; build the Judged "
                             "with rag_metrics.metrics.judge (grades alone cannot tell grade 0 from unjudged)")
        return np.cumsum(mask, axis=1, dtype=np.int32)

    @cached_property
    def ap_prefix(self) -> NDArray[np.float64]:
        """cumsum over ranks of (h_i / i if rank i is relevant else 0); in place to bound memory."""
        a = self.hits.astype(np.float64)
        a /= self._ranks
        a *= self.relevant
        np.cumsum(a, axis=1, out=a)
        return a

    def _gains(self, grades: NDArray[np.integer], gain: str) -> NDArray[np.float64]:
        if gain == "binary":  # 1 for a relevant id, 0 otherwise (the lesson's code)
            return (grades >= self.level).astype(np.float64)
        g = grades.astype(np.float64)
        np.maximum(g, 0.0, out=g)  # non-positive grades give no gain
        if gain == "exponential":
            np.exp2(g, out=g)
            g -= 1.0
        return g

    def _dcg_prefix(self, gain: str) -> NDArray[np.float64]:
        g = self._gains(self.judged.grades, gain)
        g /= self._discount
        np.cumsum(g, axis=1, out=g)
        return g

    def _idcg_prefix(self, gain: str) -> NDArray[np.float64]:
        g = self._gains(self.judged.ideal_grades, gain)
        g /= np.log2(np.arange(2, g.shape[1] + 2, dtype=np.float64))
        np.cumsum(g, axis=1, out=g)
        return g

    def custom_prefixes(self, gains: tuple[tuple[int, float], ...]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """DCG and ideal-DCG prefix sums with a custom gain per grade (unlisted grades keep gain = grade,
        as ir_measures maps ``gains.get(grade, grade)``); the ideal ranking sorts the gains, not the grades."""
        cached = self._custom.get(gains)
        if cached is not None:
            return cached

        def mapped(grades: NDArray[np.integer]) -> NDArray[np.float64]:
            g = grades.astype(np.float64)
            for grade, gain in gains:
                g[grades == grade] = gain
            np.maximum(g, 0.0, out=g)
            return g

        dcg = mapped(self.judged.grades)
        dcg /= self._discount
        np.cumsum(dcg, axis=1, out=dcg)
        ideal = -np.sort(-mapped(self.judged.ideal_grades), axis=1)
        ideal /= np.log2(np.arange(2, ideal.shape[1] + 2, dtype=np.float64))
        np.cumsum(ideal, axis=1, out=ideal)
        self._custom[gains] = (dcg, ideal)
        return dcg, ideal

    @cached_property
    def rr_prefix(self) -> NDArray[np.float64]:
        """cumsum over ranks of (1 / i if rank i is relevant else 0)."""
        a = self.relevant / self._ranks
        np.cumsum(a, axis=1, out=a)
        return a

    @cached_property
    def dcg_linear(self) -> NDArray[np.float64]:
        return self._dcg_prefix("linear")

    @cached_property
    def dcg_exp(self) -> NDArray[np.float64]:
        return self._dcg_prefix("exponential")

    @cached_property
    def idcg_linear(self) -> NDArray[np.float64]:
        return self._idcg_prefix("linear")

    @cached_property
    def idcg_exp(self) -> NDArray[np.float64]:
        return self._idcg_prefix("exponential")

    @cached_property
    def dcg_binary(self) -> NDArray[np.float64]:
        return self._dcg_prefix("binary")

    @cached_property
    def idcg_binary(self) -> NDArray[np.float64]:
        return self._idcg_prefix("binary")

    def col(self, k: int | None) -> int:
        """Column of cutoff ``k`` (already validated; None = the last column)."""
        d = self.judged.depth
        return d - 1 if k is None else min(int(k), d) - 1

    def hits_at(self, k: int) -> NDArray[np.int64]:
        k = check_k(k)
        return self.hits[:, self.col(k)].astype(np.int64)
