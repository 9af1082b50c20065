"""Reference solutions of lesson 4's exercises (:mod:`rag_metrics.exercises.system`): **server only**, never sent to
a browser.  Source text run by the tests through the same harness as a student's code; expected values never come
from here (the lab's gate computes them)."""
from __future__ import annotations

from rag_metrics.exercises.system import T_HELPERS

__all__ = ["REFERENCE"]

REFERENCE: dict[str, str] = {
    "paired_difference": '''
from statistics import mean, stdev


def paired_difference(scores_a, scores_b):
    diffs = [b - a for a, b in zip(scores_a, scores_b)]
    return {
        "mean_difference": mean(diffs),
        "sd": stdev(diffs) if len(diffs) >= 2 else None,
        "wins": len([x for x in diffs if x > 0]),
        "losses": len([x for x in diffs if x < 0]),
        "ties": diffs.count(0),
    }
''',
    "gate_decision": '''
def gate_decision(comparison, min_change):
    worse = comparison["ci_high"] is not None and comparison["ci_high"] < 0
    sees = comparison["detectable"] is not None and comparison["detectable"] <= min_change
    return "fail" if worse else "pass" if sees else "inconclusive"
''',
    "questions_needed": T_HELPERS + '''

def _mde(n, sd, alpha, power):
    return (t_quantile(1 - alpha / 2, n - 1) + t_quantile(power, n - 1)) * sd / n ** 0.5


def questions_needed(min_change, sd, alpha=0.05, power=0.8):
    if not (sd > 0 and min_change > 0):
        return None
    lo = hi = 3
    while _mde(hi, sd, alpha, power) > min_change:   # doubling, then bisection (as the lab does)
        lo, hi = hi, hi * 2
    while lo < hi:
        mid = (lo + hi) // 2
        if _mde(mid, sd, alpha, power) <= min_change:
            hi = mid
        else:
            lo = mid + 1
    return hi
''',
}
