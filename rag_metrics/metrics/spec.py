"""What every metric family module defines (:mod:`rag_metrics.metrics.hit_rate`, ``.mrr``, ``.precision``,
``.recall``, ``.ndcg``, ``.average_precision``, ``.judged``): its registry entry (:class:`MetricSpec`) and the
arithmetic of one ranked list for people (:class:`MetricExplanation` from a :class:`OneList`).

A family module holds the metric's kernel as a named function over the shared prefix arrays
(:class:`~rag_metrics.metrics.prefixes.Prefixes`), its formula and its explanation; the registry
(:mod:`rag_metrics.metrics.registry`) lists the families.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.errors import InputError

if TYPE_CHECKING:
    from rag_metrics.metrics.options import EvalOptions
    from rag_metrics.metrics.prefixes import Prefixes

__all__ = ["Kernel", "MetricSpec", "MetricExplanation", "OneList", "option", "number"]

#: ``kernel(prefixes, k, options) -> per-query values``; ``k`` is None for "whole ranking".
Kernel = Callable[["Prefixes", "int | None", "EvalOptions | None"], NDArray[np.float64]]


@dataclass(frozen=True)
class MetricSpec:
    """One metric: its names and formula for people, and its computation.

    Attributes
    ----------
    name, label
        Registry name (``ndcg``) and display label (``NDCG``).
    cutoff
        ``"required"`` (``precision@k`` has no meaning without k) or ``"optional"`` (no k = the
        whole ranking).
    trec_eval, formula, description
        The trec_eval measure it equals, the formula, and a one-line description.
    kernel
        ``kernel(kernels, k, options)``: per-query values from the shared prefix arrays.
    """

    name: str
    label: str
    cutoff: str  # "required" or "optional"
    trec_eval: str
    formula: str
    description: str
    kernel: Kernel = field(repr=False, compare=False)

    def compute(self, kernels: Prefixes, k: int | None, options: EvalOptions | None = None) -> NDArray[np.float64]:
        """Per-query values (golden order) of this metric at cutoff ``k`` (None: whole ranking).

        Raises :class:`InputError` when ``k`` is missing for a metric that needs a cutoff.
        """
        if k is None and self.cutoff == "required":
            raise InputError(f"{self.name} needs a cutoff, e.g. {self.name}@10")
        return self.kernel(kernels, k, options)


@dataclass(frozen=True)
class MetricExplanation:
    metric: str          # registry name
    k: int | None
    value: float
    formula: str         # symbolic
    substituted: str     # the same with this list's numbers, ending in "= value"


@dataclass(frozen=True)
class OneList:
    """One ranked list at cutoff ``k``, as every family's ``explain`` reads it: ``kn`` its prefix arrays (one
    query), ``topk`` the grades of its first k ids, ``rel_ranks`` the ranks of the relevant ones, ``h`` their
    number, ``R`` the relevant ids of the question (retrieved or not), ``judged_grades`` every judged grade."""

    kn: Prefixes
    k: int
    topk: Sequence[int]
    rel_ranks: Sequence[int]
    h: int
    R: int
    judged_grades: Sequence[int]
    recall_denominator: str = "all"


def option(options: EvalOptions | None, name: str, default: str) -> str:
    """The convention ``name`` of ``options`` (``default`` when no options are given)."""
    return default if options is None else str(getattr(options, name))


def number(x: float) -> str:
    """A value as the explanations write it: ``0.5``, ``1``, ``0.3333``."""
    return f"{x:.4f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))
