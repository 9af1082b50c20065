"""Metric engine: judging (ids -> grades), kernels (every k), registry, options, explain, presets."""
from __future__ import annotations

from rag_metrics.metrics.judge import Judged, judge
from rag_metrics.metrics.kernels import Kernels
from rag_metrics.metrics.registry import (
    DEFAULT_METRICS,
    METRICS,
    MetricKey,
    MetricSpec,
    parse_ks,
    parse_metric,
    parse_metrics,
)

__all__ = ["Judged", "judge", "Kernels", "METRICS", "DEFAULT_METRICS", "MetricKey", "MetricSpec",
           "parse_metric", "parse_metrics", "parse_ks"]
