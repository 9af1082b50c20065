"""Honest selection from a sweep: tuning scores with intervals, ties, the Pareto frontier, the
held-out check and how much of the winner's lead may be luck.

Rules (each defined here once)
------------------------------
- **Score.** The grid's metric, averaged over the *tuning* questions in scope; a percentile
  bootstrap interval (:func:`rag_metrics.evaluation.bootstrap_ci`, the lab's one CI setting).
- **Best.** The highest tuning score; a tie on the score goes to the lower p95 latency, then the
  smaller index, then the grid order.
- **Tied with the best.** A paired t-test on the same tuning questions (the lab's one decision rule,
  :mod:`rag_metrics.compare.paired`), Benjamini-Hochberg across the ``N - 1`` comparisons with the best:
  a configuration whose adjusted p is at least :data:`ALPHA` is *tied*, not a loser.
- **Pareto frontier.** Quality up, cost down: a point is on the frontier when no other point is at
  least as good on both axes and better on one.  Points with equal quality and cost are all kept.
- **Held-out check.** The chosen configuration is re-scored on the held-out questions, which no
  choice saw, beside its tuning score.
- **Best of N.** With ``B`` bootstrap resamples of the tuning questions, the best of the ``N``
  configurations on each resample beats the chosen configuration on that resample by an average
  *optimism*; that much of the chosen configuration's lead may be luck.  The note also gives how
  often the choice stays the same.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rag_metrics.compare.paired import ALPHA, _ttest_p
from rag_metrics.evaluation import bootstrap_ci
from rag_metrics.tuning.grid import SweepConfig
from rag_metrics.tuning.run import ConfigResult, SweepResult

if TYPE_CHECKING:
    from rag_metrics.compare.history import SavedRun

__all__ = ["Row", "rows", "best", "ties", "pareto_frontier", "held_out_check", "best_of_n", "BestOfN",
           "wins_losses", "baseline_run", "COST_AXES", "ALPHA", "too_few"]

#: Cost axes a chart may use: attribute of :class:`Row` -> label.
COST_AXES = {"p95_ms": "p95 latency (ms)", "index_mb": "index size (MB)", "build_s": "build time (s)"}
#: Fewer tuning questions than this: no interval or test is shown ("too few").
MIN_QUESTIONS = 3
BOOTSTRAP_RESAMPLES = 2000


def too_few(n: int) -> bool:
    return n < MIN_QUESTIONS


@dataclass(frozen=True)
class Row:
    """One configuration's line of the sweep table."""

    config: SweepConfig
    label: str
    tuning: float
    ci_low: float
    ci_high: float
    held_out: float
    p50_ms: float
    p95_ms: float
    index_mb: float
    build_s: float
    n_chunks: int
    status: str = ""        # "best" | "tied" | "worse" | "" (not tested)
    p_adj: float = math.nan
    on_frontier: bool = False
    is_baseline: bool = False   # the current system, scored beside the grid (not one of its configurations)
    is_current: bool = False    # the current system (in the grid or beside it)


def _values(res: SweepResult, r: ConfigResult, mask: Sequence[bool]) -> np.ndarray:
    v = np.asarray(r.values[res.grid.metric], dtype=np.float64)
    return v[np.asarray(mask, dtype=bool)]


def _order_key(row_tuning: float, r: ConfigResult, i: int) -> tuple[float, float, int, int]:
    return (-row_tuning, r.p95_ms, r.index_bytes, i)


def best(res: SweepResult) -> ConfigResult | None:
    """The chosen configuration (see the module docstring); ``None`` before any result."""
    cands = [r for r in res.results if res.baseline is None or r.config in res.grid.configs]
    if not cands:
        return None
    means = [float(_values(res, r, res.tuning).mean()) if any(res.tuning) else math.nan for r in cands]
    i = min(range(len(cands)), key=lambda j: _order_key(-math.inf if math.isnan(means[j]) else means[j],
                                                        cands[j], j))
    return cands[i]


def ties(res: SweepResult, chosen: ConfigResult) -> dict[SweepConfig, tuple[str, float]]:
    """``{config: (status, adjusted p)}`` for every grid configuration against ``chosen``."""
    from scipy import stats


    a = _values(res, chosen, res.tuning)
    others = [r for r in res.results if r.config != chosen.config and r.config in res.grid.configs]
    out: dict[SweepConfig, tuple[str, float]] = {chosen.config: ("best", math.nan)}
    if too_few(a.size) or not others:
        out.update({r.config: ("", math.nan) for r in others})
        return out
    p = np.array([_ttest_p(_values(res, r, res.tuning) - a) for r in others])
    ok = ~np.isnan(p)
    adj = np.full_like(p, np.nan)
    if ok.any():
        adj[ok] = stats.false_discovery_control(p[ok], method="bh")
    for r, pa in zip(others, adj):
        if math.isnan(pa):
            out[r.config] = ("", math.nan)
        else:
            out[r.config] = ("tied" if pa >= ALPHA else "worse", float(pa))
    return out


def pareto_frontier(quality: Sequence[float], cost: Sequence[float]) -> list[bool]:
    """``True`` for the points no other point dominates (quality higher is better, cost lower)."""
    q = np.asarray(quality, dtype=np.float64)
    c = np.asarray(cost, dtype=np.float64)
    out = []
    for i in range(q.size):
        if math.isnan(q[i]) or math.isnan(c[i]):
            out.append(False)
            continue
        dominated = bool(np.any((q >= q[i]) & (c <= c[i]) & ((q > q[i]) | (c < c[i]))))
        out.append(not dominated)
    return out


def rows(res: SweepResult, cost: str = "p95_ms") -> list[Row]:
    """The sweep table: one :class:`Row` per finished configuration (the baseline last)."""
    if cost not in COST_AXES:
        raise ValueError(f"cost axis must be one of {', '.join(COST_AXES)}; got {cost!r}")
    chosen = best(res)
    status = ties(res, chosen) if chosen is not None else {}
    n_tune = sum(res.tuning)
    out = []
    for r in res.results:
        t = _values(res, r, res.tuning)
        h = _values(res, r, res.held_out)
        lo, hi = (math.nan, math.nan) if too_few(t.size) else bootstrap_ci(t)
        st, pa = status.get(r.config, ("", math.nan))
        out.append(Row(config=r.config, label=r.config.label, tuning=float(t.mean()) if n_tune else math.nan,
                       ci_low=lo, ci_high=hi, held_out=float(h.mean()) if h.size else math.nan,
                       p50_ms=r.p50_ms, p95_ms=r.p95_ms, index_mb=r.index_bytes / 1e6, build_s=r.build_s,
                       n_chunks=r.n_chunks, status=st, p_adj=pa,
                       is_baseline=res.baseline is not None and r.config == res.baseline
                       and r.config not in res.grid.configs,
                       is_current=res.baseline is not None and r.config == res.baseline))
    grid_rows = [i for i, row in enumerate(out) if not row.is_baseline]
    front = pareto_frontier([out[i].tuning for i in grid_rows], [getattr(out[i], cost) for i in grid_rows])
    for i, f in zip(grid_rows, front):
        out[i] = _with(out[i], on_frontier=f)
    return out


def _with(row: Row, **changes: object) -> Row:
    from dataclasses import replace

    return replace(row, **changes)  # type: ignore[arg-type]  # fields of Row


@dataclass(frozen=True)
class HeldOut:
    tuning: float
    held_out: float
    n_tuning: int
    n_held_out: int
    ci_low: float
    ci_high: float


def held_out_check(res: SweepResult, chosen: ConfigResult) -> HeldOut:
    """The chosen configuration's tuning score beside its held-out score (with the held-out CI)."""
    t = _values(res, chosen, res.tuning)
    h = _values(res, chosen, res.held_out)
    lo, hi = (math.nan, math.nan) if too_few(h.size) else bootstrap_ci(h)
    return HeldOut(float(t.mean()) if t.size else math.nan, float(h.mean()) if h.size else math.nan,
                   int(t.size), int(h.size), lo, hi)


@dataclass(frozen=True)
class BestOfN:
    n_configs: int
    optimism: float        # mean over resamples of (best of N) - (chosen), on the resample
    stable: float          # share of resamples whose best is the chosen configuration
    lead: float            # chosen minus the median configuration, on all tuning questions

    def note(self) -> str:
        if self.n_configs < 2:
            return "One configuration: nothing was chosen, so nothing was won by luck."
        return (f"Best of {self.n_configs}: on resampled tuning questions the top configuration beats the "
                f"chosen one by {self.optimism:+.3f} on average, and the choice stays the same in "
                f"{self.stable:.0%} of resamples. About {self.optimism:.3f} of its {self.lead:+.3f} lead over "
                "the median configuration may be luck; the held-out score is the honest figure.")


def best_of_n(res: SweepResult, chosen: ConfigResult, resamples: int = BOOTSTRAP_RESAMPLES,
              seed: int = 0) -> BestOfN | None:
    """How much of the winner's lead may be luck (see the module docstring); ``None`` for too few questions."""
    grid_results = [r for r in res.results if r.config in res.grid.configs]
    m = np.stack([_values(res, r, res.tuning) for r in grid_results]) if grid_results else np.zeros((0, 0))
    if m.size == 0 or too_few(m.shape[1]):
        return None
    ci = next(i for i, r in enumerate(grid_results) if r.config == chosen.config)
    idx = np.random.default_rng(seed).integers(0, m.shape[1], (resamples, m.shape[1]))
    means = m[:, idx].mean(axis=-1)                       # configs x resamples
    top = means.max(axis=0)
    optimism = float((top - means[ci]).mean())
    stable = float((means.argmax(axis=0) == ci).mean())
    full = m.mean(axis=1)
    return BestOfN(len(grid_results), optimism, stable, float(full[ci] - np.median(full)))


def wins_losses(res: SweepResult, a: ConfigResult, b: ConfigResult) -> list[tuple[str, str, float, float]]:
    """Per question in scope: ``(query id, "win"|"loss"|"same", a's value, b's value)`` of ``a`` against ``b``
    (``b`` is usually the current system), wins and losses first, by the size of the change."""
    va = np.asarray(a.values[res.grid.metric])
    vb = np.asarray(b.values[res.grid.metric])
    out = []
    for n, (q, inc) in enumerate(zip(res.query_ids, res.included)):
        if not inc:
            continue
        d = va[n] - vb[n]
        out.append((q, "win" if d > 1e-12 else "loss" if d < -1e-12 else "same", float(va[n]), float(vb[n])))
    out.sort(key=lambda t: (t[1] == "same", -abs(t[2] - t[3])))
    return out


def baseline_run(res: SweepResult, chosen: ConfigResult, name: str | None = None) -> SavedRun:
    """The chosen configuration as a saved run (:mod:`rag_metrics.compare.history`) for the regression gate:
    its per-question values of every reported metric over the questions in scope."""
    from datetime import datetime, timezone

    from rag_metrics.compare.history import SavedRun, _check_name

    inc = np.asarray(res.included, dtype=bool)
    values = {k: tuple(float(x) for x in np.asarray(v)[inc]) for k, v in chosen.values.items()}
    label = chosen.config.label
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    import re

    safe = re.sub(r"[^\w .:()+,#@/-]", " ", f"sweep {label}")[:80]
    return SavedRun(_check_name(name or safe), f"sweep: {label}", when, res.golden_fingerprint,
                    {"sweep": chosen.config.to_dict(), "labels": "evidence"}, tuple(values),
                    tuple(np.asarray(res.query_ids, dtype=object)[inc].tolist()), values)
