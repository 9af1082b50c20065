"""Judge versus people on relevance labels: confusion matrix, Cohen's kappa, ranking change.

Cohen's kappa (``sklearn.metrics.cohen_kappa_score``) is reported three ways:

``kappa_binary``
    On relevant / not relevant at the relevance level L (grade >= L, default 1; docs/conventions.md#one-query):
    the agreement that decides hit rate, recall, MRR and MAP.
``kappa_quadratic``
    Graded 0-3, quadratically weighted (a 1-vs-3 disagreement costs four times a 1-vs-2): the
    usual choice for ordinal scales, and what NDCG's gains are sensitive to.
``kappa_plain``
    Graded 0-3, unweighted (every disagreement counts the same).

Kappa is NaN when it is undefined (fewer than two pairs, or both raters gave one single class:
the expected agreement is 1).  Ranking change: Kendall's tau-b (``scipy.stats.kendalltau``)
between the systems' ranking by a metric under people's labels and under other labels (completed
by the judge, or the judge's instead of people's).  UMBRELA reports tau about 0.89 on TREC DL
while its label-level kappa is much lower; on a handful of systems tau moves in big steps
(3 systems: -1, -1/3, 1/3 or 1).
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.metrics.registry import parse_metric
from rag_metrics.types import GoldenSet, Run

__all__ = ["GRADES", "RankingChange", "RelevanceAgreement", "ranking_change", "relevance_agreement"]

GRADES = (0, 1, 2, 3)


def _kappa(a: Sequence[int], b: Sequence[int], labels: Sequence[int], weights: str | None = None) -> float:
    try:
        from sklearn.metrics import cohen_kappa_score
    except ImportError:
        raise InputError("Cohen's kappa needs scikit-learn; install it with `pip install scikit-learn` "
                         "(or `pip install rag-metrics[answers]`)") from None

    if len(a) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 0/0 when both raters used one class: NaN, said in the doc
        with np.errstate(all="ignore"):
            v = float(cohen_kappa_score(a, b, labels=list(labels), weights=weights))
    return v


@dataclass(frozen=True)
class RelevanceAgreement:
    """Agreement of the judge with people over ``n`` pairs both graded.

    ``confusion`` has people's grades as rows and the judge's as columns (0-3); ``binary`` the
    same at the relevance level (rows/columns ``not relevant``, ``relevant``).
    """

    n: int
    relevance_level: int
    confusion: pd.DataFrame
    binary: pd.DataFrame
    kappa_binary: float
    kappa_quadratic: float
    kappa_plain: float
    exact: float            # share of pairs with the same grade
    n_unusable: int = 0     # pairs people graded where the judge gave no usable grade

    def as_dict(self) -> dict[str, float | int]:
        return {"n": self.n, "relevance_level": self.relevance_level, "kappa_binary": self.kappa_binary,
                "kappa_quadratic": self.kappa_quadratic, "kappa_plain": self.kappa_plain, "exact": self.exact,
                "n_unusable": self.n_unusable}


def relevance_agreement(pairs: Iterable[tuple[int | None, int | None]], relevance_level: int = 1) -> RelevanceAgreement:
    """Agreement over ``(people grade, judge grade)`` pairs (``None`` on the judge's side: no usable
    grade, counted in ``n_unusable``; ``None`` on the people's side: not judged, skipped).

    >>> a = relevance_agreement([(0, 0), (3, 3), (2, 1), (0, 2)])
    >>> a.n, round(a.exact, 2)
    (4, 0.5)
    """
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int) or relevance_level < 1:
        raise InputError(f"relevance level must be an integer >= 1, got {relevance_level!r}")
    people: list[int] = []
    judge: list[int] = []
    unusable = 0
    for p, j in pairs:
        if p is None:
            continue
        if j is None:
            unusable += 1
            continue
        people.append(max(0, min(3, int(p))))
        judge.append(int(j))
    conf = pd.DataFrame(0, index=pd.Index(GRADES, name="people"), columns=pd.Index(GRADES, name="judge"))
    for p, j in zip(people, judge):
        conf.loc[p, j] += 1
    pb = [int(g >= relevance_level) for g in people]
    jb = [int(g >= relevance_level) for g in judge]
    names = ["not relevant", "relevant"]
    binary = pd.DataFrame(0, index=pd.Index(names, name="people"), columns=pd.Index(names, name="judge"))
    for p, j in zip(pb, jb):
        binary.iloc[p, j] += 1
    n = len(people)
    return RelevanceAgreement(
        n, relevance_level, conf, binary,
        _kappa(pb, jb, (0, 1)), _kappa(people, judge, GRADES, "quadratic"), _kappa(people, judge, GRADES),
        (sum(int(p == j) for p, j in zip(people, judge)) / n) if n else math.nan, unusable)


@dataclass(frozen=True)
class RankingChange:
    """Systems' means of ``metric`` under each set of labels, their ranks, and Kendall's tau of
    each alternative against ``people``.

    ``table``: one row per system; columns ``system``, then for each labels name ``<name>`` (the
    mean) and ``<name> rank`` (1 = best; ties share the best rank).  ``tau``: ``{name: tau-b}``
    (NaN with fewer than two systems or when a ranking is all ties).
    """

    metric: str
    table: pd.DataFrame
    tau: Mapping[str, float]


def ranking_change(labels: Mapping[str, GoldenSet], runs: Mapping[str, Run], metric: str = "ndcg@10",
                   options: object | None = None, reference: str = "people") -> RankingChange:
    """How system rankings change when the labels change.

    Parameters
    ----------
    labels
        ``{name: GoldenSet}``; must hold ``reference`` (people's labels), e.g. also
        ``"completed"`` (:func:`~rag_metrics.authoring.relevance_judge.completed_golden`) and ``"judge"``
        (:func:`~rag_metrics.authoring.relevance_judge.judge_golden`).
    runs
        ``{system: Run}`` (the bundled retrievers, stored systems).
    metric
        ``name@k`` (the registry's names).
    options
        :class:`~rag_metrics.metrics.options.EvalOptions` (default options when ``None``).
    """
    from scipy.stats import kendalltau


    if reference not in labels:
        raise InputError(f"ranking_change needs the reference labels {reference!r}; got {', '.join(labels)}")
    if not runs:
        raise InputError("ranking_change needs at least one system's run")
    key = parse_metric(metric)
    opts = options if options is not None else EvalOptions()
    data: dict[str, list[object]] = {"system": list(runs)}
    for name, golden in labels.items():
        data[name] = [evaluate(golden, run, opts).mean(key) for run in runs.values()]  # type: ignore[arg-type]  # options: EvalOptions
    table = pd.DataFrame(data)
    for name in labels:
        table[f"{name} rank"] = table[name].rank(ascending=False, method="min").astype("Int64")
    taus: dict[str, float] = {}
    ref = np.asarray(table[reference], dtype=float)
    for name in labels:
        if name == reference:
            continue
        other = np.asarray(table[name], dtype=float)
        if len(ref) < 2 or np.ptp(ref) == 0 or np.ptp(other) == 0:
            taus[name] = math.nan
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            taus[name] = float(kendalltau(ref, other).statistic)
    return RankingChange(str(key), table[["system"] + [c for n in labels for c in (n, f"{n} rank")]], taus)
