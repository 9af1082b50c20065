"""Metric registry: names (``ndcg@10``), descriptions, trec_eval equivalents, formulas, and
the computation of each metric.

The registry is the single source of metric names: the CLI, the evaluation tables and the app
all read it.  Each metric family is one module, found by its name (:mod:`~rag_metrics.metrics.hit_rate`,
``mrr``, ``precision``, ``recall``, ``ndcg``, ``average_precision`` for MAP, ``judged``): its
:class:`MetricSpec` (``SPEC``), its kernel as a named function over the shared prefix arrays, and its
explanation, so a name cannot drift from the code that computes it.  Adding a metric is one module, its
entry in :data:`METRICS`, and its tests.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from rag_metrics.errors import InputError
from rag_metrics.metrics import average_precision, hit_rate, judged, mrr, ndcg, precision, recall
from rag_metrics.metrics.spec import MetricSpec

__all__ = ["MetricSpec", "METRICS", "DEFAULT_METRICS", "MetricKey", "get_metric", "parse_metric",
           "parse_metrics", "parse_ks"]

#: Every metric, in the order tables list them: one module per family holds its kernel, formula and explanation.
METRICS: dict[str, MetricSpec] = {s.name: s for s in (
    hit_rate.SPEC, mrr.SPEC, precision.SPEC, recall.SPEC, ndcg.SPEC, ndcg.SPEC_EXP, average_precision.SPEC,
    judged.SPEC)}

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
