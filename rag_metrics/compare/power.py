"""How small a change a comparison must be able to see: the power and the smallest effect worth
detecting.  Plain numbers in a module of their own, so that the CLI's option defaults
(``rag-metrics gate --min-change``) read them without loading the comparison's pandas and SciPy."""
from __future__ import annotations

__all__ = ["POWER", "MIN_EFFECT"]

#: Power of the minimum-detectable-effect computation.
POWER = 0.8
#: The smallest difference worth detecting on a 0-1 metric: above it, a set whose ``mde`` is
#: larger is "too small to tell".
MIN_EFFECT = 0.05
