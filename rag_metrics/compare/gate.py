"""The regression gate: pass, fail or inconclusive, for CI.

A current run is compared with a baseline on the questions both answer, by the decision rule of
:mod:`rag_metrics.compare.paired` (paired t-test per metric, Benjamini-Hochberg across metrics, the
false-coverage-adjusted interval).  Each metric gets one of three answers:

``fail``
    The current run is significantly worse (the interval of current - baseline lies below 0).
``inconclusive``
    Not significantly worse, but the set is too small to see a drop of the size asked
    (``min_change``, default :data:`~rag_metrics.compare.paired.MIN_EFFECT` = 0.05): the smallest change
    it can detect -- the minimum detectable effect of the paired t-test at the rule's alpha and
    :data:`~rag_metrics.compare.paired.POWER` (80 %), from the spread of the per-question differences -- is
    larger than ``min_change``; or fewer than 3 questions (:data:`~rag_metrics.evaluation.MIN_CI_N`).
``pass``
    Not significantly worse, and a drop of ``min_change`` or more would have been detected (80 % of
    the time).

The whole gate fails when one metric fails, else is inconclusive when one is, else passes.  Exit
codes (:data:`EXIT_CODES`): 0 pass, 1 fail, 3 inconclusive (2 is bad input, as for every command).

For an inconclusive metric :func:`questions_needed` says about how many questions would detect
``min_change``: the smallest ``n`` with ``(t(1 - alpha/2, n-1) + t(power, n-1)) * sd / sqrt(n) <=
min_change`` for the observed ``sd`` of the differences (an estimate: the spread of a larger set
may differ).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from rag_metrics.compare.paired import MIN_EFFECT, POWER, minimum_detectable_effect
from rag_metrics.evaluation import MIN_CI_N

__all__ = ["EXIT_CODES", "GateCheck", "gate_checks", "gate_verdict", "questions_needed"]

#: Exit code of ``rag-metrics gate`` (and ``evaluate --fail-on-regression``) per verdict.
EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}
_MAX_N = 10_000_000


@dataclass(frozen=True)
class GateCheck:
    """One metric's answer: ``verdict`` (pass / fail / inconclusive), the numbers behind it, and a
    sentence for the log.  ``detectable`` is the smallest change this set can detect (nan below
    :data:`~rag_metrics.evaluation.MIN_CI_N` questions: too few); ``needed`` about how many questions
    would detect ``min_change`` (None when the spread is unknown or zero)."""

    key: str
    verdict: str
    n: int
    baseline: float
    current: float
    delta: float
    ci_low: float
    ci_high: float
    alpha: float
    power: float
    min_change: float
    detectable: float
    needed: int | None

    @property
    def more(self) -> int | None:
        """About how many more questions would be needed (None when unknown)."""
        return None if self.needed is None else max(self.needed - self.n, 0)

    @property
    def sentence(self) -> str:
        head = (f"{self.key}: {self.verdict.upper()}: current {self.current:.4f}, baseline {self.baseline:.4f}, "
                f"change {self.delta:+.4f} on {self.n} questions")
        if not math.isnan(self.ci_low):
            head += f" (interval [{self.ci_low:+.4f}, {self.ci_high:+.4f}])"
        test = f"paired t-test, two-sided alpha {self.alpha:.3g}, power {self.power:.0%}"
        if self.verdict == "fail":
            return f"{head}; significantly worse ({test})."
        if math.isnan(self.detectable):
            size = f"fewer than {MIN_CI_N} questions: too few to detect any change"
        else:
            size = f"smallest change this set can detect: {self.detectable:.3f} ({test})"
        if self.verdict == "pass":
            return f"{head}; not significantly worse, and a drop of {self.min_change:g} would have been seen; {size}."
        more = ("" if self.needed is None else
                f"; to detect a change of {self.min_change:g}, about {self.needed} questions ({self.more} more)")
        return f"{head}; cannot tell: {size}, larger than the {self.min_change:g} asked{more}."


def questions_needed(sd: float, min_change: float, alpha: float, power: float = POWER) -> int | None:
    """About how many paired questions a two-sided t-test at ``alpha`` needs to detect a mean
    change of ``min_change`` with ``power``, for differences with standard deviation ``sd``: the
    smallest ``n`` whose :func:`~rag_metrics.compare.paired.minimum_detectable_effect` is at most
    ``min_change`` (at least :data:`~rag_metrics.evaluation.MIN_CI_N`).  None when ``sd`` is unknown
    or 0, or ``min_change`` is not positive."""
    if not (sd > 0) or math.isnan(sd) or not (min_change > 0):
        return None
    lo, hi = MIN_CI_N, MIN_CI_N
    while minimum_detectable_effect(sd, hi, alpha, power) > min_change:  # doubling, then bisection
        lo, hi = hi, hi * 2
        if hi > _MAX_N:
            return None
    while lo < hi:
        mid = (lo + hi) // 2
        if minimum_detectable_effect(sd, mid, alpha, power) <= min_change:
            hi = mid
        else:
            lo = mid + 1
    return hi


def gate_checks(table: pd.DataFrame, min_change: float = MIN_EFFECT, power: float = POWER) -> list[GateCheck]:
    """One :class:`GateCheck` per row of a :func:`rag_metrics.compare.history.compare_runs` table (A =
    baseline, B = current), by the rule of the module docstring."""
    out = []
    for r in table.to_dict("records"):
        n = int(r["n"])
        alpha = 1 - float(r["ci_level"])
        sd = float(r["sd"]) if r["sd"] is not None else math.nan
        mde = minimum_detectable_effect(sd, n, alpha, power) if n >= MIN_CI_N else math.nan  # too few: none
        if r["verdict"] == "A better":
            v = "fail"
        elif n < MIN_CI_N and r["verdict"] != "identical":
            v = "inconclusive"
        elif r["verdict"] == "identical" or (not math.isnan(mde) and mde <= min_change):
            v = "pass"
        else:
            v = "inconclusive"
        if r["verdict"] == "identical":
            mde = 0.0 if n >= 2 else mde
        needed = questions_needed(sd, min_change, alpha, power) if v == "inconclusive" else None
        if v == "inconclusive" and needed is None and n < MIN_CI_N:
            needed = MIN_CI_N
        out.append(GateCheck(str(r.get("key") or r["metric"]), v, n, float(r["mean_a"]), float(r["mean_b"]),
                             float(r["delta"]), float(r["ci_low"]), float(r["ci_high"]), alpha, power, min_change,
                             mde, needed))
    return out


def gate_verdict(checks: list[GateCheck]) -> str:
    """``"fail"`` when one metric fails, else ``"inconclusive"`` when one is, else ``"pass"``."""
    verdicts = {c.verdict for c in checks}
    return "fail" if "fail" in verdicts else "inconclusive" if "inconclusive" in verdicts else "pass"
