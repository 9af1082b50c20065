"""Metric registry: names (``ndcg@10``), descriptions, trec_eval equivalents, formulas, and
the computation of each metric.

The registry is the single source of metric names: the CLI, the evaluation tables and the app
all read it, and each :class:`MetricSpec` owns the call that computes its metric from the
:class:`~rag_metrics.metrics.kernels.Kernels`, so a name cannot drift from the code that computes
it.  Adding a metric is one entry here, its kernel in ``kernels.py``, and its tests.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.errors import InputError
from rag_metrics.metrics.kernels import check_k

if TYPE_CHECKING:
    from rag_metrics.metrics.kernels import Kernels
    from rag_metrics.metrics.options import EvalOptions

__all__ = ["MetricSpec", "METRICS", "DEFAULT_METRICS", "MetricKey", "get_metric", "parse_metric",
           "parse_metrics", "parse_ks"]

#: ``kernel(kernels, k, options) -> per-query values``; ``k`` is None for "whole ranking".
Kernel = Callable[["Kernels", int | None, "EvalOptions | None"], NDArray[np.float64]]


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

    def compute(self, kernels: Kernels, k: int | None, options: EvalOptions | None = None) -> NDArray[np.float64]:
        """Per-query values (golden order) of this metric at cutoff ``k`` (None: whole ranking).

        Raises :class:`InputError` when ``k`` is missing for a metric that needs a cutoff.
        """
        if k is None and self.cutoff == "required":
            raise InputError(f"{self.name} needs a cutoff, e.g. {self.name}@10")
        return self.kernel(kernels, k, options)


def _opt(options: EvalOptions | None, name: str, default: str) -> str:
    return default if options is None else str(getattr(options, name))


def _binary(options: EvalOptions | None) -> bool:
    """NDCG over 0/1 relevance (``EvalOptions(ndcg_relevance="binary")``, the lesson's code)."""
    return _opt(options, "ndcg_relevance", "graded") == "binary"


METRICS: dict[str, MetricSpec] = {
    s.name: s
    for s in [
        MetricSpec("hit_rate", "Hit rate", "required", "success.k",
                   "1 if h_k > 0 else 0",
                   "Did any relevant id appear in the top k? (trec_eval success, ir_measures Success@k.)",
                   lambda kn, k, o: kn.hit_rate(check_k(k))),
        MetricSpec("mrr", "MRR", "optional", "recip_rank (on the run cut to k)",
                   "1 / rank of the first relevant id if rank <= k, else 0",
                   "Reciprocal rank of the first relevant id: rewards putting one right answer high.",
                   lambda kn, k, o: kn.mrr_granular(k) if _opt(o, "mrr", "first") == "granular" else kn.mrr(k)),
        MetricSpec("precision", "Precision", "required", "P.k",
                   "h_k / k",
                   "Share of the top k that is relevant; the divisor is k even when fewer were retrieved.",
                   lambda kn, k, o: kn.precision(check_k(k))),
        MetricSpec("recall", "Recall", "required", "recall.k",
                   "h_k / |R|",
                   "Share of all relevant ids found in the top k (|R| counts relevant ids never retrieved).",
                   lambda kn, k, o: kn.recall(check_k(k), _opt(o, "recall_denominator", "all"))),
        MetricSpec("ndcg", "NDCG", "optional", "ndcg_cut.k",
                   "DCG@k / IDCG@k, gain(g) = g, discount log2(i + 1)",
                   "Graded, position-discounted gain relative to the ideal ranking (linear gain, trec_eval).",
                   lambda kn, k, o: kn.ndcg(k, "linear", o.gains if o is not None else (), _binary(o))),
        MetricSpec("ndcg_exp", "NDCG (exp. gain)", "optional", "-",
                   "DCG@k / IDCG@k, gain(g) = 2^g - 1",
                   "NDCG with Burges' exponential gain (ranx ndcg_burges, many ML libraries).",
                   lambda kn, k, o: kn.ndcg(k, "exponential", binary=_binary(o))),
        MetricSpec("map", "MAP", "optional", "map_cut.k",
                   "(1/|R|) * sum over relevant ranks i <= k of h_i / i",
                   "Average precision at each relevant rank, over all relevant ids (denominator |R|).",
                   lambda kn, k, o: kn.map(k)),
        MetricSpec("judged", "Judged", "optional", "- (ir_measures Judged@k)",
                   "j_k / min(k, n), j_k = ids with a label (any grade) in the top k",
                   "Share of the top k that carry a label, grade 0 included: how complete the judgments "
                   "are for this run (ir_measures Judged@k; divides by n when fewer than k were retrieved).",
                   lambda kn, k, o: kn.judged_at(k)),
    ]
}

#: The metrics shown by default (the CLI's and the dashboard's).
DEFAULT_METRICS = ("hit_rate", "mrr", "precision", "recall", "ndcg", "map")

_KEY = re.compile(r"^([a-z_]+)(?:@(\d+))?$")


def get_metric(name: str, where: str = "metric") -> MetricSpec:
    """The registry entry of ``name``; an unknown name raises :class:`InputError`."""
    spec = METRICS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise InputError(f"{where}: unknown metric {name!r}; known metrics: {', '.join(METRICS)}")
    return spec


@dataclass(frozen=True, order=True)
class MetricKey:
    name: str
    k: int | None

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"


def parse_metric(text: str, where: str = "metric") -> MetricKey:
    """Parse ``"ndcg@10"`` or ``"mrr"``; unknown names and bad cutoffs raise :class:`InputError`."""
    t = text.strip().lower()
    m = _KEY.match(t)
    if not m:
        raise InputError(f"{where}: cannot read {text!r}; write a metric name with an optional cutoff, "
                         "e.g. ndcg@10 or mrr")
    name, k = m.group(1), m.group(2)
    if name not in METRICS:
        raise InputError(f"{where}: unknown metric {name!r}; known metrics: {', '.join(METRICS)}")
    if k is None and METRICS[name].cutoff == "required":
        raise InputError(f"{where}: {name} needs a cutoff, e.g. {name}@10")
    if k is not None and int(k) < 1:
        raise InputError(f"{where}: cutoff must be >= 1 in {text!r}")
    return MetricKey(name, None if k is None else int(k))


def parse_metrics(text: str, where: str = "--metrics") -> list[str]:
    """Comma-separated metric names without cutoffs (``hit_rate,mrr,ndcg``)."""
    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    if not names:
        raise InputError(f"{where}: no metric given; e.g. {where} hit_rate,mrr,ndcg")
    for n in names:
        if n not in METRICS:
            raise InputError(f"{where}: unknown metric {n!r}; known metrics: {', '.join(METRICS)}")
    return list(dict.fromkeys(names))


def parse_ks(text: str, where: str = "--k") -> list[int]:
    """``"1,3,5,10"``, ``"1-100"`` or a mix (``"1-5,10,20"``); sorted, unique, each >= 1."""
    ks: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", part)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise InputError(f"{where}: range {part!r} runs backwards; write it low-high, e.g. 1-100")
            if hi > 100_000:
                raise InputError(f"{where}: cutoff {hi} is too large (max 100000)")
            ks.update(range(lo, hi + 1))
        elif re.fullmatch(r"[+-]?\d+", part):
            ks.add(int(part))
        else:
            raise InputError(f"{where}: cannot read {part!r} as a cutoff; write e.g. 1,3,5,10 or 1-100")
    if not ks:
        raise InputError(f"{where}: no cutoff given; write e.g. 1,3,5,10 or 1-100")
    if min(ks) < 1:
        raise InputError(f"{where}: cutoffs must be >= 1, got {min(ks)}")
    if max(ks) > 100_000:
        raise InputError(f"{where}: cutoff {max(ks)} is too large (max 100000)")
    return sorted(ks)
