"""Evaluate a run against a golden set: per-query values, means, categories, CIs, failures.

>>> from rag_metrics import GoldenSet, Run
>>> golden = GoldenSet.from_qrels({"q1": {"a": 1, "c": 1}})
>>> run = Run.from_rankings({"q1": ["b", "a", "d", "c"]})
>>> res = evaluate(golden, run)
>>> round(res.mean("ndcg", 3), 4), res.mean("map", 3), res.mean("recall", 3)
(0.3869, 0.25, 0.5)
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.errors import InputError
from rag_metrics.metrics.judge import Judged, judge
from rag_metrics.metrics.kernels import Kernels, check_k
from rag_metrics.metrics.registry import DEFAULT_METRICS, MetricKey, get_metric, parse_metric
from rag_metrics.types import GoldenSet, Run
from rag_metrics.verdict import NoVerdict, no_verdict

if TYPE_CHECKING:
    import pandas as pd

    from rag_metrics.metrics.evidence import EvidenceJudge, LocateReport
else:  # imported on first use: `rag-metrics evaluate` never needs pandas
    from rag_metrics.lazy import pandas as pd
from rag_metrics.metrics.options import EvalOptions, parse_gains

__all__ = ["EvalOptions", "EvaluationResult", "evaluate", "bootstrap_ci", "bootstrap_cis", "parse_gains",
           "CI_CONFIDENCE", "CI_RESAMPLES", "CI_SEED"]



#: The one confidence-interval setting of the library: every interval of a mean (the Dashboard's
#: cards, the Presenter view, the report, the CLI, the RAGAS page, Compare's per-category table)
#: uses this level, this many bootstrap resamples and this seed, so one metric shows one interval
#: everywhere.  Compare's verdicts use the same level (``1 - CI_CONFIDENCE`` is their alpha).
CI_CONFIDENCE = 0.95
CI_RESAMPLES = 2000
CI_SEED = 0
#: Fewer values than this give no interval (``nan``): the pages and the CLI say "too few" instead of
#: an interval that is only an artefact (a t-interval of two values is 12.7 standard errors wide).
MIN_CI_N = 3
#: The range of every metric of the registry and every answer metric; intervals of a mean stay in
#: it, and intervals of a difference of two metrics stay in ``(-1, 1)`` (:data:`DIFFERENCE_RANGE`).
METRIC_RANGE = (0.0, 1.0)
DIFFERENCE_RANGE = (METRIC_RANGE[0] - METRIC_RANGE[1], METRIC_RANGE[1] - METRIC_RANGE[0])


def too_few(n: int) -> bool:
    """True when ``n`` values are too few for an interval (below :data:`MIN_CI_N`)."""
    return int(n) < MIN_CI_N


def bootstrap_ci(values: NDArray[np.float64], confidence: float = CI_CONFIDENCE, n_resamples: int = CI_RESAMPLES,
                 seed: int = CI_SEED) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean (scipy.stats.bootstrap).

    Defaults: :data:`CI_CONFIDENCE`, :data:`CI_RESAMPLES`, :data:`CI_SEED` (one setting for
    every page, the report and the CLI).  Returns ``(nan, nan)`` for fewer than :data:`MIN_CI_N`
    values ("too few") and ``(v, v)`` when every value is the same.  A percentile interval of
    means never leaves the range of the values, so it stays inside the metric's range.
    """
    v = np.asarray(values, dtype=np.float64).reshape(1, -1)
    lo, hi = bootstrap_cis(v, confidence, n_resamples, seed)[0]
    return (float(lo), float(hi))


def bootstrap_cis(rows: NDArray[np.float64], confidence: float = CI_CONFIDENCE, n_resamples: int = CI_RESAMPLES,
                  seed: int = CI_SEED) -> NDArray[np.float64]:
    """:func:`bootstrap_ci` of every row of ``rows`` (metrics x queries), drawing the resampled
    query indices once for all rows.

    The draw is scipy.stats.bootstrap's own (``rng.integers(0, n, (n_resamples, n))`` from
    ``default_rng(seed)``, one batch), and each row's interval is the same percentile computation
    on the same resamples, so every value equals ``scipy.stats.bootstrap(..., method="percentile")``
    of that row exactly (tested against scipy).  One draw instead of one per metric is what makes a
    K change cheap.  Returns an array of shape ``(len(rows), 2)``; ``nan`` for fewer than
    :data:`MIN_CI_N` values, ``(v, v)`` for a constant row.
    """
    v = np.asarray(rows, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"rows must be 2-D (metrics x queries), got shape {v.shape}")
    out = np.full((v.shape[0], 2), np.nan)
    n = v.shape[1]
    if v.shape[0] == 0 or too_few(n):
        return out
    alpha = np.asarray((1 - confidence) / 2, dtype=np.float64)
    interval = np.stack((alpha, 1 - alpha), axis=-1)
    idx: NDArray[np.int64] | None = None
    for r, row in enumerate(v):
        if np.all(row == row[0]):
            out[r] = row[0]
            continue
        if idx is None:
            idx = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
        theta = row[idx].mean(axis=-1)
        out[r] = _quantile_linear(theta, interval)
    return out


def _quantile_linear(values: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    """``scipy.stats.quantile(values, p)`` (its default, Hyndman-Fan type 7 "linear") of a 1-D array,
    with scipy's own arithmetic step by step, so the result is bit-for-bit the same (tested) without
    importing ``scipy.stats`` (a second and a half on a fresh server's first page)."""
    y = np.sort(values)
    n = np.asarray(y.shape[-1], dtype=np.float64)
    jg = p * n + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = np.where(j < 0, 0.0, jg % 1)
    j, jp1 = np.clip(j, 0.0, n - 1), np.clip(jp1, 0.0, n - 1)
    return (1 - g) * y[j.astype(np.int64)] + g * y[jp1.astype(np.int64)]


def _as_golden(golden: GoldenSet | Mapping[str, Mapping[str, int]]) -> GoldenSet:
    if isinstance(golden, GoldenSet):
        return golden
    if isinstance(golden, Mapping):
        return GoldenSet.from_qrels(golden)
    raise InputError(f"golden must be a GoldenSet or a {{qid: {{id: grade}}}} dict, got {type(golden).__name__}")


def _as_run(run: Run | Mapping[str, Mapping[str, float]]) -> Run:
    if isinstance(run, Run):
        return run
    if isinstance(run, Mapping):
        return Run.from_dict(run)
    raise InputError(f"run must be a Run or a {{qid: {{id: score}}}} dict, got {type(run).__name__}")


def evaluate(
    golden: GoldenSet | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Mapping[str, float]],
    options: EvalOptions | None = None,
    *,
    chunk_to_doc: Mapping[str, str] | None = None,
    depth: int | None = None,
    evidence: EvidenceJudge | None = None,
    located: LocateReport | None = None,
    unmatched_rows: int = 0,
) -> EvaluationResult:
    """Judge ``run`` against ``golden`` once; metrics at any k are then read from the result.

    Accepts pytrec_eval/ranx-shaped dicts for both arguments.  Run rows whose query is not in the
    golden set are ignored (``validate_run`` reports them).

    ``evidence`` (an :class:`~rag_metrics.metrics.evidence.EvidenceJudge`): judge every ranked context on
    evidence, wherever it is in the corpus (chunk labels are converted); the result carries the
    share of contexts that could not be located (:attr:`EvaluationResult.located`).  Without it,
    ids are judged against the labels as given; ``located`` may then carry a report made elsewhere
    (a RAG log's context -> chunk matching).  A golden set with evidence labels needs ``evidence``.
    At document level, ``evidence`` locates every context that is not a known chunk (a text, a
    document id, another chunking's id) in its document, and the result carries the share that could
    not be located, as at chunk level.

    ``unmatched_rows``: how many questions of the system's file matched no golden question (the
    upload's unmatched rows; a run's rows for other query ids are counted here by themselves), for
    the "no verdict" rule (:mod:`rag_metrics.verdict`).
    """
    options = options or EvalOptions()
    g = _as_golden(golden)
    r = _as_run(run)
    if evidence is not None and options.level == "chunk":
        judged, located = evidence.judge(g, r, depth)
        return EvaluationResult(golden=g, run=r, judged=judged, options=options, located=located,
                                unmatched_rows=unmatched_rows)
    unjudgeable = [q.id for q in g.queries if q.reviewed_evidence and not q.relevant and q.in_scope]
    if unjudgeable:  # judged by ids they would score 0: never a quiet wrong number
        raise InputError(f"{len(unjudgeable)} question(s) (first: {unjudgeable[0]!r}) are labelled with evidence "
                         "(passages of the corpus), not ids: evaluate with the corpus (evaluate(..., "
                         "evidence=EvidenceJudge.for_chunks(chunks)); CLI: --corpus PATH)")
    id_map: Mapping[str, str] | None = None
    if options.level == "document" and evidence is not None:  # every context placed in its document
        id_map, located = evidence.document_map(g, r, chunk_to_doc or {}, depth)
    elif options.level == "document":
        if chunk_to_doc is None:
            raise InputError("document-level evaluation needs chunk_to_doc (a {chunk_id: doc_id} mapping)")
        id_map = chunk_to_doc
    judged = judge(g.qrels(), r, id_map=id_map, depth=depth)
    return EvaluationResult(golden=g, run=r, judged=judged, options=options, located=located,
                            unmatched_rows=unmatched_rows)


@dataclass(frozen=True, eq=False)
class EvaluationResult:
    """Everything needed to read any metric at any k, per query or aggregated."""

    golden: GoldenSet
    run: Run
    judged: Judged
    options: EvalOptions = field(default_factory=EvalOptions)
    #: How the retrieved contexts were placed in the corpus (None when every id was a label id and
    #: nothing was located): the share that could not be, and whether the numbers are comparable.
    located: LocateReport | None = None
    #: Questions of the system's file that matched no golden question (0 when unknown or none).
    unmatched_rows: int = 0

    @property
    def unlocated_share(self) -> float:
        """Share of retrieved contexts that could not be located in the corpus (0.0 when unknown)."""
        return self.located.share if self.located is not None else 0.0

    @cached_property
    def no_verdict(self) -> NoVerdict | None:
        """Why these numbers are no verdict (nothing matched, no retrieval, no in-scope question
        answered, or more than :data:`rag_metrics.metrics.evidence.UNLOCATED_LIMIT` of the contexts found
        nowhere), None when they are one: THE rule, :func:`rag_metrics.verdict.no_verdict`."""
        return no_verdict(self)

    @property
    def comparable(self) -> bool:
        """False when the numbers are no verdict (:attr:`no_verdict`): every view then shows the
        reason and the fix instead of a number."""
        return self.no_verdict is None

    # ---- basic per-query facts --------------------------------------------------------------
    @cached_property
    def kernels(self) -> Kernels:
        o = self.options
        judged = self.judged.restricted(judged_only=o.judged_only,
                                        positive_scores_only=o.nonpositive_scores == "not_retrieved")
        return Kernels(judged, o.relevance_level)

    @property
    def query_ids(self) -> tuple[str, ...]:
        return self.judged.query_ids

    @cached_property
    def categories(self) -> NDArray[np.object_]:
        return np.array([q.category or "(none)" for q in self.golden.queries], dtype=object)

    @cached_property
    def in_scope(self) -> NDArray[np.bool_]:
        """Queries in scope under ``options.out_of_scope_rule``.

        Default (``"golden_set"``): every query except those the golden set marks out of scope,
        category ``out_of_scope`` or no judgment at all.  A query judged with no relevant id is in
        scope and scores 0 (trec_eval counts it in every mean).  With ``"no_relevant_id"``: the
        queries with at least one positive grade.
        """
        if self.options.out_of_scope_rule == "no_relevant_id":
            return self.judged.ideal_grades[:, 0] > 0
        return np.fromiter((q.in_scope for q in self.golden.queries), dtype=bool, count=len(self.golden.queries))

    @cached_property
    def included(self) -> NDArray[np.bool_]:
        """Queries that enter the means under the current options."""
        inc = self.in_scope.copy()
        if self.options.out_of_scope == "miss":
            inc[:] = True
        if self.options.missing_queries == "skip":
            inc &= self.judged.in_run
        return inc

    def included_for(self, metric: str | MetricKey) -> NDArray[np.bool_]:
        """Queries that enter the mean of ``metric``: :attr:`included`, except that under
        ``recall_empty="skip"`` recall leaves out the queries with no relevant id (the lesson's code)."""
        name = metric.name if isinstance(metric, MetricKey) else str(metric).strip().lower().split("@", 1)[0]
        if name == "recall" and self.options.recall_empty == "skip":
            return self.included & (self.kernels.n_relevant > 0)
        return self.included

    @property
    def n_queries(self) -> int:
        return int(self.included.sum())

    @cached_property
    def _scope(self) -> NDArray[np.bool_]:
        """Queries that enter the means before the missing-queries rule (in scope, or all under "miss")."""
        return np.ones_like(self.in_scope) if self.options.out_of_scope == "miss" else self.in_scope

    @property
    def in_run(self) -> NDArray[np.bool_]:
        """Per query (golden order): True when the run has at least one result for it."""
        return self.judged.in_run

    @property
    def n_answered(self) -> int:
        """Queries of the means' scope that the run answers (has results for)."""
        return int((self._scope & self.judged.in_run).sum())

    @property
    def n_absent(self) -> int:
        """Queries of the means' scope absent from the run ("not in the log"): 0 in the means under
        ``missing_queries="zero"`` (trec_eval ``-c``, the default), left out under ``"skip"``."""
        return int((self._scope & ~self.judged.in_run).sum())

    def absent(self) -> pd.DataFrame:
        """The queries counted by :attr:`n_absent`: query_id, category, question (golden order)."""
        rows = [(q.id, q.category, q.question) for q, keep in
                zip(self.golden.queries, self._scope & ~self.judged.in_run) if keep]
        return pd.DataFrame(rows, columns=["query_id", "category", "question"])

    @property
    def n_in_scope(self) -> int:
        return int(self.in_scope.sum())

    @property
    def n_out_of_scope(self) -> int:
        return int((~self.in_scope).sum())

    @property
    def n_awaiting_labels(self) -> int:
        """Queries not in scope only because nobody labelled them yet: a reference answer (or
        proposed evidence) and no label (:attr:`rag_metrics.types.GoldenQuery.awaiting_labels`);
        counted in :attr:`n_out_of_scope`, shown apart so they are never silently "out of scope"."""
        return sum(q.awaiting_labels for q in self.golden.queries)

    @property
    def n_out_of_scope_labelled(self) -> int:
        """Out-of-scope queries other than those awaiting labels (what the golden set says is unanswerable)."""
        return self.n_out_of_scope - self.n_awaiting_labels

    @property
    def depth(self) -> int:
        return int(self.judged.n_retrieved.max()) if len(self.judged.n_retrieved) else 0

    def with_options(self, **changes: object) -> EvaluationResult:
        """Same judged run under other options (no re-judging unless the level changes)."""
        opts = replace(self.options, **changes)  # type: ignore[arg-type]  # EvalOptions checks values
        if opts.level != self.options.level:
            raise InputError("changing the evaluation level needs a new evaluate() call with chunk_to_doc")
        return EvaluationResult(self.golden, self.run, self.judged, opts, self.located, self.unmatched_rows)

    # ---- values -----------------------------------------------------------------------------
    def values(self, metric: str | MetricKey, k: int | None = None) -> NDArray[np.float64]:
        """Per-query values (golden order, every query) of ``metric`` at ``k``.

        Every query gets its value (0 for a query with no relevant id); use :attr:`included` to
        select the queries that enter the mean.
        """
        key = metric if isinstance(metric, MetricKey) else (
            parse_metric(metric) if k is None else MetricKey(metric, k))
        return get_metric(key.name).compute(self.kernels, key.k, self.options)

    def mean(self, metric: str | MetricKey, k: int | None = None) -> float:
        key = metric if isinstance(metric, MetricKey) else (
            parse_metric(metric) if k is None else MetricKey(metric, k))
        v = self.values(key)[self.included_for(key)]
        return float(v.mean()) if v.size else float("nan")

    def curve(self, metrics: Sequence[str] = DEFAULT_METRICS, max_k: int | None = None) -> pd.DataFrame:
        """Mean of each metric for k = 1..max_k (default: the ranking depth): columns metric, k, value."""
        max_k = max(self.depth, 1) if max_k is None else check_k(max_k, "max_k")
        rows = []
        for m in metrics:
            inc = self.included_for(MetricKey(m, 1))
            for k in range(1, max_k + 1):
                v = self.values(m, k)[inc]
                rows.append((m, k, float(v.mean()) if v.size else float("nan")))
        return pd.DataFrame(rows, columns=["metric", "k", "value"])

    # ---- tables -----------------------------------------------------------------------------
    @staticmethod
    def _keys(metrics: Iterable[str], ks: Iterable[int | None]) -> list[MetricKey]:
        keys = []
        ks = list(ks)
        for m in metrics:
            spec = get_metric(m)
            for k in ks:
                if k is None and spec.cutoff == "required":
                    continue
                keys.append(MetricKey(m, k))
        return keys

    def per_query(self, metrics: Iterable[str] = DEFAULT_METRICS, ks: Iterable[int | None] = (10,),
                  all_queries: bool = False) -> pd.DataFrame:
        """Long table: query_id, category, metric, k, value (included queries unless all_queries)."""
        sel = np.ones(len(self.query_ids), bool) if all_queries else self.included
        frames = []
        for key in self._keys(metrics, ks):
            keep = sel if all_queries else self.included_for(key)
            frames.append(pd.DataFrame({"query_id": np.asarray(self.query_ids, dtype=object)[keep],
                                        "category": self.categories[keep], "metric": key.name,
                                        "k": key.k, "value": self.values(key)[keep]}))
        if not frames:
            return pd.DataFrame(columns=["query_id", "category", "metric", "k", "value"])
        out = pd.concat(frames, ignore_index=True)
        out["k"] = out["k"].astype("Int64")
        return out

    def wide(self, keys: Sequence[str | MetricKey]) -> pd.DataFrame:
        """One row per included query, one column per ``name@k``."""
        inc = self.included
        data = {"query_id": np.asarray(self.query_ids, dtype=object)[inc], "category": self.categories[inc]}
        for key in keys:
            mk = key if isinstance(key, MetricKey) else parse_metric(str(key))
            data[str(mk)] = self.values(mk)[inc]
        return pd.DataFrame(data)

    def summary(self, metrics: Iterable[str] = DEFAULT_METRICS, ks: Iterable[int | None] = (10,),
                ci: bool = True, confidence: float = CI_CONFIDENCE, n_resamples: int = CI_RESAMPLES,
                seed: int = CI_SEED) -> pd.DataFrame:
        """metric, k, mean, ci_low, ci_high, n (included queries); intervals from :func:`bootstrap_ci`."""
        keys = self._keys(metrics, ks)
        rows = [(key.name, key.k, float(v.mean()) if v.size else np.nan, float(lo), float(hi), int(v.size))
                for key, (v, lo, hi) in zip(keys, self._values_cis(keys, None, ci, confidence, n_resamples, seed))]
        out = pd.DataFrame(rows, columns=["metric", "k", "mean", "ci_low", "ci_high", "n"])
        out["k"] = out["k"].astype("Int64")
        return out

    def _values_cis(self, keys: Sequence[MetricKey], within: NDArray[np.bool_] | None, ci: bool, confidence: float,
                    n_resamples: int, seed: int) -> list[tuple[NDArray[np.float64], float, float]]:
        """Per key: the values entering its mean (:meth:`included_for`, and ``within``) and their
        interval; keys that share the same queries are resampled together (:func:`bootstrap_cis`)."""
        groups: dict[bytes, list[int]] = {}
        masks = []
        for j, key in enumerate(keys):
            m = self.included_for(key) if within is None else self.included_for(key) & within
            masks.append(m)
            groups.setdefault(m.tobytes(), []).append(j)
        out: list[tuple[NDArray[np.float64], float, float]] = [(np.empty(0), np.nan, np.nan)] * len(keys)
        for idx in groups.values():
            m = masks[idx[0]]
            vals = np.array([self.values(keys[j])[m] for j in idx], dtype=np.float64).reshape(len(idx), -1)
            cis = bootstrap_cis(vals, confidence, n_resamples, seed) if ci else np.full((len(idx), 2), np.nan)
            for j, v, (lo, hi) in zip(idx, vals, cis):
                out[j] = (v, float(lo), float(hi))
        return out

    def by_category(self, metrics: Iterable[str] = DEFAULT_METRICS, ks: Iterable[int | None] = (10,),
                    ci: bool = True, confidence: float = CI_CONFIDENCE, n_resamples: int = CI_RESAMPLES,
                    seed: int = CI_SEED) -> pd.DataFrame:
        """category, metric, k, mean, ci_low, ci_high, n, for each category with included queries."""
        inc = self.included
        cats = self.categories
        rows = []
        keys = self._keys(metrics, ks)
        for cat in dict.fromkeys(cats[inc].tolist()):
            for key, (v, lo, hi) in zip(keys, self._values_cis(keys, cats == cat, ci, confidence, n_resamples, seed)):
                if v.size:
                    rows.append((cat, key.name, key.k, float(v.mean()), float(lo), float(hi), int(v.size)))
        out = pd.DataFrame(rows, columns=["category", "metric", "k", "mean", "ci_low", "ci_high", "n"])
        out["k"] = out["k"].astype("Int64")
        return out

    # ---- failure analysis -------------------------------------------------------------------
    def ranking(self, query_id: str) -> pd.DataFrame:
        """Ranked list of one query: rank, id, score, grade, relevant."""
        try:
            q = self.query_ids.index(query_id)
        except ValueError:
            raise InputError(f"query {query_id!r} is not in the golden set") from None
        ids, scores, grades = self.judged.ranking(q)
        return pd.DataFrame({"rank": np.arange(1, len(ids) + 1), "id": ids, "score": scores,
                             "grade": grades,
                             "relevant": [g >= self.options.relevance_level for g in grades]})

    def first_relevant_rank(self) -> NDArray[np.int64]:
        """1-based rank of the first relevant id per query (0 when none was retrieved)."""
        return self.kernels.first_relevant_rank

    def failures(self, k: int) -> pd.DataFrame:
        """Queries of the means' scope the run answers with no relevant id in the top k: the in-scope
        ones, and with ``out_of_scope="miss"`` (the lesson's code) the out-of-scope ones too, which
        have no relevant id and so are always listed.

        Queries absent from the run are not retrieval failures: they are listed by :meth:`absent`
        ("not in the log"), whatever ``missing_queries`` says about the means.

        Columns: query_id, category, question, expected_ids, retrieved_ids (top k), top_score,
        first_relevant_rank (beyond k, or <NA> when no relevant id was retrieved at all).
        """
        k = check_k(k)
        hits = self.kernels.hit_rate(k)
        first = self.kernels.first_relevant_rank
        rows = []
        for q in np.flatnonzero(self._scope & (hits == 0) & self.judged.in_run):
            gq = self.golden.queries[q]
            ids, _, _ = self.judged.ranking(int(q))
            rows.append({
                "query_id": gq.id, "category": gq.category, "question": gq.question,
                "expected_ids": [i for i, g in gq.relevant.items() if g >= self.options.relevance_level],
                "retrieved_ids": ids[:k],
                "top_score": float(self.judged.top_score[q]),
                "first_relevant_rank": int(first[q]) if first[q] > 0 else pd.NA,
            })
        cols = ["query_id", "category", "question", "expected_ids", "retrieved_ids", "top_score",
                "first_relevant_rank"]
        out = pd.DataFrame(rows, columns=cols)
        out["first_relevant_rank"] = out["first_relevant_rank"].astype("Int64")
        return out

    def abstention(self, threshold: float) -> dict[str, int]:
        """Refuse to answer when the top retrieval score is below ``threshold``.

        Returns counts: out-of-scope refused (correct) / answered, in-scope refused (wrong) /
        answered.  A query with no retrieved id counts as refused.
        """
        top = self.judged.top_score
        refused = ~(top >= threshold)  # NaN (nothing retrieved) -> refused
        oos = ~self.in_scope
        return {
            "out_of_scope_refused": int((oos & refused).sum()),
            "out_of_scope_answered": int((oos & ~refused).sum()),
            "in_scope_refused": int((~oos & refused).sum()),
            "in_scope_answered": int((~oos & ~refused).sum()),
        }

    def explain(self, query_id: str, k: int):
        """Each metric's arithmetic at ``k`` for one query (see :mod:`rag_metrics.metrics.explain`)."""
        from rag_metrics.metrics.explain import explain_ranking

        rank = self.ranking(query_id)
        q = self.query_ids.index(query_id)
        level = self.options.relevance_level
        grades = [int(g) for g in rank["grade"]]
        judged = [int(g) for g in self.judged.ideal_grades[q] if g > 0]
        if self.options.ndcg_relevance == "binary":  # every metric reads only "grade >= level": the 0/1 form shows
            grades = [int(g >= level) for g in grades]  # the same numbers and NDCG's binary gain
            judged = [1 for g in judged if g >= level]
            level = 1
        return explain_ranking(grades, judged, k, level, self.options.recall_denominator)
