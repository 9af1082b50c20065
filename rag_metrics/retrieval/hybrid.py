"""Hybrid retrieval: reciprocal rank fusion and weighted score fusion of two (or more) runs.

Conventions
-----------
- Ranks are 1-based positions in trec_eval order (score desc, id desc) of each input run.
- **RRF** (Cormack, Clarke & Buettcher 2009): ``score(d) = sum_r w_r / (rrf_k + rank_r(d))`` over
  the runs that retrieved ``d`` (``w_r = 1`` by default, ``rrf_k = 60``).
- **Weighted fusion**: each run's scores are normalised per query, then
  ``score(d) = sum_r w_r * norm_r(d)``; a run that did not retrieve ``d`` contributes 0 (the
  bottom of the min-max scale).  With two runs ``weight`` is the weight of the first and
  ``1 - weight`` that of the second.
- Normalisations (per query, over the rows retrieved): ``"minmax"`` ``(s - min) / (max - min)``
  (all equal -> 1); ``"zscore"`` ``(s - mean) / std`` (std 0 -> 0); ``"max"`` ``s / max``
  (max <= 0 -> 1); ``"none"``.
- The fused run keeps the top ``k`` in trec_eval order.  Each input run is asked for
  ``depth = max(k, candidate_depth)`` rows.
"""
from __future__ import annotations

from typing import Literal, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from rag_metrics.errors import InputError
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH
from rag_metrics.retrieval.dense import check_k
from rag_metrics.retrieval.encoders import Progress
from rag_metrics.retrieval.ranking import RunBuilder
from rag_metrics.types import Chunk, Run

__all__ = ["HybridRetriever", "rrf_fuse", "weighted_fuse", "normalise_scores", "NORMALISATIONS"]

Normalisation = Literal["minmax", "zscore", "max", "none"]
NORMALISATIONS: tuple[str, ...] = ("minmax", "zscore", "max", "none")


def normalise_scores(scores: NDArray[np.floating], method: Normalisation = "minmax"
                     ) -> NDArray[np.float64]:
    """Normalise one query's scores (see the module docstring)."""
    s = np.asarray(scores, dtype=np.float64)
    if method not in NORMALISATIONS:
        raise InputError(f"unknown score normalisation {method!r}; use one of {NORMALISATIONS}.")
    if s.size == 0 or method == "none":
        return s.copy()
    if method == "minmax":
        lo, hi = s.min(), s.max()
        return np.ones_like(s) if hi == lo else (s - lo) / (hi - lo)
    if method == "zscore":
        sd = s.std()
        return np.zeros_like(s) if sd == 0 else (s - s.mean()) / sd
    hi = s.max()
    return np.ones_like(s) if hi <= 0 else s / hi


def _ranked(run: Run) -> dict[str, list[tuple[str, float]]]:
    return run.rankings()


def _finish(fused: dict[str, dict[str, float]], qids: Sequence[str], k: int | None,
            name: str) -> Run:
    b = RunBuilder()
    for q in qids:
        items = sorted(fused.get(q, {}).items(), key=lambda t: t[0].encode("utf-8"), reverse=True)
        items.sort(key=lambda t: t[1], reverse=True)
        if k is not None:
            items = items[:k]
        b.add(q, [i for i, _ in items], [s for _, s in items])
    return b.build(name)


def _check_weights(runs: Sequence[Run], weights: Sequence[float] | None) -> list[float]:
    if weights is None:
        return [1.0] * len(runs)
    if len(weights) != len(runs):
        raise InputError(f"{len(weights)} fusion weights for {len(runs)} runs; give one per run.")
    if any(w < 0 for w in weights):
        raise InputError(f"fusion weights must be >= 0, got {list(weights)}.")
    return [float(w) for w in weights]


def _all_qids(runs: Sequence[Run]) -> list[str]:
    return list(dict.fromkeys(q for r in runs for q in r.query_ids()))


def rrf_fuse(runs: Sequence[Run], rrf_k: float = 60, weights: Sequence[float] | None = None,
             k: int | None = None, name: str = "rrf") -> Run:
    """Reciprocal rank fusion; ``score = sum_r w_r / (rrf_k + rank_r)``, rank from 1.

    Example: a document ranked 1st by one run and 3rd by the other, ``rrf_k = 60``:
    ``1/61 + 1/63 = 0.032266``.
    """
    if rrf_k < 0:
        raise InputError(f"rrf_k must be >= 0, got {rrf_k}; the usual value is 60.")
    w = _check_weights(runs, weights)
    fused: dict[str, dict[str, float]] = {}
    for run, wr in zip(runs, w):
        for q, items in _ranked(run).items():
            acc = fused.setdefault(q, {})
            for rank, (i, _) in enumerate(items, start=1):
                acc[i] = acc.get(i, 0.0) + wr / (rrf_k + rank)
    return _finish(fused, _all_qids(runs), k, name)


def weighted_fuse(runs: Sequence[Run], weights: Sequence[float] | None = None,
                  normalisation: Normalisation = "minmax", k: int | None = None,
                  name: str = "weighted") -> Run:
    """Weighted sum of per-query normalised scores (missing -> 0)."""
    w = _check_weights(runs, weights)
    fused: dict[str, dict[str, float]] = {}
    for run, wr in zip(runs, w):
        for q, items in _ranked(run).items():
            acc = fused.setdefault(q, {})
            norm = normalise_scores(np.array([s for _, s in items]), normalisation)
            for (i, _), s in zip(items, norm.tolist()):
                acc[i] = acc.get(i, 0.0) + wr * s
    return _finish(fused, _all_qids(runs), k, name)


class HybridRetriever:
    """Fuses two retrievers (typically dense and BM25) over the same chunks.

    Parameters
    ----------
    a, b : Retriever
        The two retrievers; both are indexed on the same chunks.
    method : {"rrf", "weighted"}
    rrf_k : float
        RRF constant.
    weight : float
        Weight of ``a`` in weighted fusion (``b`` gets ``1 - weight``); in RRF, ``a`` gets
        ``2 * weight`` and ``b`` ``2 * (1 - weight)`` (so 0.5 is plain RRF).
    normalisation : {"minmax", "zscore", "max", "none"}
        Score normalisation for weighted fusion.
    candidate_depth : int
        Each retriever returns ``max(k, candidate_depth)`` rows before fusion.
    """

    def __init__(self, a: object, b: object, method: Literal["rrf", "weighted"] = "rrf",
                 rrf_k: float = 60, weight: float = 0.5, normalisation: Normalisation = "minmax",
                 candidate_depth: int = 100) -> None:
        if method not in ("rrf", "weighted"):
            raise InputError(f"unknown fusion method {method!r}; use 'rrf' or 'weighted'.")
        if not 0.0 <= float(weight) <= 1.0:
            raise InputError(f"hybrid weight must be between 0 and 1, got {weight}.")
        if normalisation not in NORMALISATIONS:
            raise InputError(f"unknown score normalisation {normalisation!r}; use one of "
                             f"{NORMALISATIONS}.")
        self.a, self.b = a, b
        self.method, self.rrf_k, self.weight = method, float(rrf_k), float(weight)
        self.normalisation: Normalisation = normalisation
        self.candidate_depth = int(candidate_depth)
        self.name = f"hybrid-{method}({getattr(a, 'name', 'a')}+{getattr(b, 'name', 'b')})"

    def index(self, chunks: Sequence[Chunk], progress: Progress | None = None) -> None:
        self.a.index(chunks, progress)  # type: ignore[attr-defined]
        self.b.index(chunks, None)  # type: ignore[attr-defined]

    def retrieve(self, queries: Mapping[str, str], k: int = DEFAULT_DEPTH,
                 progress: Progress | None = None) -> Run:
        k = check_k(k)
        depth = max(k, self.candidate_depth)
        ra = self.a.retrieve(queries, depth, progress)  # type: ignore[attr-defined]
        rb = self.b.retrieve(queries, depth, None)  # type: ignore[attr-defined]
        if self.method == "rrf":
            run = rrf_fuse([ra, rb], self.rrf_k, [2 * self.weight, 2 * (1 - self.weight)], k,
                           self.name)
        else:
            run = weighted_fuse([ra, rb], [self.weight, 1 - self.weight], self.normalisation, k,
                                self.name)
        return run
