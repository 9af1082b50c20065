"""Chart conventions shared by the app and the HTML report: one colour per metric, one K axis.

A metric keeps its colour on every chart of every page and in the report, and every
metric-against-K chart uses the same K scale (logarithmic from 1 to the depth, the same ticks), so
a reader who learnt a colour or a position on one chart reads the next one the same way.  The app
(``ui/views.py``) and :mod:`rag_metrics.report.html` both build their Altair encodings from here; the
library never imports Streamlit, so this lives in the library.

Examples
--------
>>> metric_color("mrr")
'#F58518'
>>> k_ticks(10)
[1, 2, 3, 5, 10]
>>> k_scale(100)
{'type': 'log', 'domain': [1, 100], 'nice': False}
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "FALLBACK_COLOR",
    "K_TICKS",
    "K_TITLE",
    "METRIC_COLORS",
    "k_axis",
    "k_scale",
    "k_ticks",
    "metric_color",
    "metric_scale",
]

#: One colour per metric (Vega's tableau10 hues).  NDCG's two gains share a colour: they are two
#: readings of one metric and never drawn together (the gain setting picks one).
METRIC_COLORS: dict[str, str] = {
    "hit_rate": "#4C78A8",
    "mrr": "#F58518",
    "precision": "#54A24B",
    "recall": "#B279A2",
    "ndcg": "#E45756",
    "ndcg_exp": "#E45756",
    "map": "#72B7B2",
    "judged": "#9D755D",
}
#: Colour of a metric missing from :data:`METRIC_COLORS` (a test keeps the registry covered).
FALLBACK_COLOR = "#79706E"

#: Tick values of the K axis (those up to the depth are shown).
K_TICKS: tuple[int, ...] = (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 500, 1000)
#: Title of the K axis.
K_TITLE = "K (cutoff, log scale)"


def metric_color(metric: str) -> str:
    """The colour of ``metric`` (a registry name such as ``"ndcg"``; ``"ndcg@5"`` is read as ``"ndcg"``)."""
    return METRIC_COLORS.get(metric.split("@", 1)[0], FALLBACK_COLOR)


def metric_scale(metrics: Sequence[str], label: Callable[[str], str] | None = None) -> dict[str, Any]:
    """A Vega-Lite colour scale (``{"domain": [...], "range": [...]}``) giving each metric its colour.

    ``label`` maps a metric name to the text the chart's colour field holds (default: the name)."""
    names = list(dict.fromkeys(metrics))
    return {"domain": [label(m) if label else m for m in names], "range": [metric_color(m) for m in names]}


def k_scale(max_k: int) -> dict[str, Any]:
    """The K scale of every metric-against-K chart: logarithmic, from 1 to ``max_k`` (at least 2)."""
    return {"type": "log", "domain": [1, max(int(max_k), 2)], "nice": False}


def k_ticks(max_k: int) -> list[int]:
    """The K axis ticks up to ``max_k``."""
    return [v for v in K_TICKS if v <= max(int(max_k), 2)]


def k_axis(max_k: int) -> dict[str, Any]:
    """Axis properties of the K axis (``values`` and integer labels)."""
    return {"values": k_ticks(max_k), "format": "d"}
