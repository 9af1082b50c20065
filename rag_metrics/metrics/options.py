"""Evaluation options: :class:`EvalOptions` (the conventions, typed and validated on creation) and
``--gains`` parsing."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rag_metrics.errors import InputError
from rag_metrics.limits import grade_error


@dataclass(frozen=True)
class EvalOptions:
    """Evaluation conventions.  Defaults follow trec_eval (``-c``); alternatives are labelled options.

    Attributes
    ----------
    relevance_level
        Grade at or above which an id is relevant (trec_eval ``-l``).  NDCG ignores it.
    out_of_scope
        What to do with out-of-scope queries (see ``out_of_scope_rule`` for which those are).
        ``"exclude"``: left out of ranking-metric means and reported separately (measured by
        abstention).  ``"miss"``: they enter every mean (with no relevant id they score 0: the
        classic lesson code that divides by all queries).
    out_of_scope_rule
        Which queries are out of scope.  ``"golden_set"`` (default): what the golden set says,
        category ``out_of_scope`` or a question with no judgment at all; a query that is judged
        but has no relevant id (every grade <= 0, common in TREC qrels) is **in scope** and
        scores 0, as trec_eval counts it in every mean.  ``"no_relevant_id"``: a query with no
        positive grade is out of scope (this library's reading before issue 12; the same set of
        queries RAGAS drops from ID-based context recall, which is NaN without a reference id and
        left out by ``ragas.evaluate``'s ``nanmean``).
    recall_denominator
        ``"all"``: ``h_k / |R|`` (trec_eval).  ``"cap"``: ``h_k / min(k, |R|)`` (BEIR ``R_cap``).
    recall_empty
        A query with no relevant id in recall's mean: ``"zero"`` (default: it scores 0 wherever the
        other options let it in, trec_eval) or ``"skip"`` (left out of recall's mean only, as the
        lesson's ``recall_at_k`` skips a question whose list of relevant chunks is empty; every other
        metric keeps it).  See :meth:`EvaluationResult.included_for`.
    missing_queries
        Golden queries absent from the run: ``"zero"`` (0 in the mean, trec_eval ``-c``) or
        ``"skip"`` (left out, plain trec_eval and BEIR ``evaluate``).  ``"skip"`` is also the
        "only the answered questions" reading of a RAG log that covers part of the golden set
        (CLI ``--only-answered``); :attr:`EvaluationResult.n_answered` and ``n_absent`` count both
        sides whichever is chosen.
    level
        ``"chunk"`` (labels and run ids are chunk ids) or ``"document"`` (both collapsed to
        documents through ``chunk_to_doc``; a document takes the rank of its first chunk).

    Peer conventions (off by default; each named after the tool that uses it):

    gains
        Custom gain per grade for ``ndcg`` (trec_eval's gain parameters, ir_measures
        ``nDCG(gains={0: 0, 1: 1, 2: 3})``): ``{grade: gain}`` or ``((grade, gain), ...)``.  Grades not
        listed keep gain = grade, as ir_measures maps ``gains.get(grade, grade)``; the ideal ranking
        sorts the gains.  Gains are finite numbers >= 0; a grade <= 0 may only have gain 0 (the
        ideal ranking is built from the positive grades).  Empty (default): linear gain = grade.
        ``ndcg_exp`` keeps Burges' ``2^g - 1``.
    judged_only
        Drop unlabelled ids from every ranking before computing the metrics, the rest moving up
        (trec_eval ``-J``, ir_measures ``judged_only=True``).  ``|R|`` is unchanged.
    mrr
        ``"first"`` (default): ``1 / rank`` of the first relevant id (trec_eval ``recip_rank``).
        ``"granular"``: the mean of ``1 / rank`` over the relevant ids retrieved in the top k
        (LlamaIndex ``MRR(use_granular_mrr=True)``).
    nonpositive_scores
        ``"retrieved"`` (default, trec_eval: every ranked id counts).  ``"not_retrieved"``: ids
        scored ``<= 0`` are not retrieved (torchmetrics' rule, as issue 19 quotes it from its tests).
    ndcg_relevance
        What NDCG's gain is made of.  ``"graded"`` (default): the grade itself (trec_eval
        ``ndcg_cut``; NDCG ignores the relevance level).  ``"binary"``: 1 for a relevant id (grade
        >= ``relevance_level``), 0 otherwise, in DCG and in the ideal DCG alike: the lesson's code,
        which only knows a list of relevant chunk ids (linear and exponential gain are then equal).
    """

    relevance_level: int = 1
    out_of_scope: Literal["exclude", "miss"] = "exclude"
    out_of_scope_rule: Literal["golden_set", "no_relevant_id"] = "golden_set"
    recall_denominator: Literal["all", "cap"] = "all"
    recall_empty: Literal["zero", "skip"] = "zero"
    missing_queries: Literal["zero", "skip"] = "zero"
    level: Literal["chunk", "document"] = "chunk"
    gains: tuple[tuple[int, float], ...] = ()
    judged_only: bool = False
    mrr: Literal["first", "granular"] = "first"
    nonpositive_scores: Literal["retrieved", "not_retrieved"] = "retrieved"
    ndcg_relevance: Literal["graded", "binary"] = "graded"

    def __post_init__(self) -> None:
        object.__setattr__(self, "gains", _check_gains(self.gains))
        if not isinstance(self.judged_only, (bool, np.bool_)):
            raise InputError(f"option judged_only must be True or False (trec_eval -J); got {self.judged_only!r}")
        rl = self.relevance_level
        if isinstance(rl, bool) or not isinstance(rl, (int, np.integer)) or rl < 1:
            raise InputError(f"relevance level must be an integer >= 1, got {rl!r}")
        for name, allowed in [("out_of_scope", ("exclude", "miss")),
                              ("out_of_scope_rule", ("golden_set", "no_relevant_id")),
                              ("recall_denominator", ("all", "cap")), ("recall_empty", ("zero", "skip")),
                              ("missing_queries", ("zero", "skip")), ("level", ("chunk", "document")),
                              ("mrr", ("first", "granular")),
                              ("nonpositive_scores", ("retrieved", "not_retrieved")),
                              ("ndcg_relevance", ("graded", "binary"))]:
            v = getattr(self, name)
            if v not in allowed:
                raise InputError(f"option {name} must be one of {', '.join(allowed)}; got {v!r}")


def _check_gains(gains: object) -> tuple[tuple[int, float], ...]:
    """``{grade: gain}`` or ``((grade, gain), ...)`` as a sorted tuple; :class:`InputError` names a bad entry."""
    if gains is None:
        return ()
    if isinstance(gains, Mapping):
        items = list(gains.items())
    elif isinstance(gains, (tuple, list)):
        items = list(gains)
    else:
        raise InputError(f"option gains must be a {{grade: gain}} mapping, e.g. {{1: 1, 2: 3}} (ir_measures "
                         f"nDCG(gains=...)); got {type(gains).__name__}")
    out: dict[int, float] = {}
    for item in items:
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise InputError(f"option gains: cannot read {item!r}; write {{grade: gain}}, e.g. {{1: 1, 2: 3}}")
        g_raw, v_raw = item
        grade, msg = grade_error(int(g_raw) if isinstance(g_raw, np.integer) else g_raw)
        if msg is not None or grade is None:
            raise InputError(f"option gains: {msg}")
        ok = isinstance(v_raw, (int, float, np.integer, np.floating)) and not isinstance(v_raw, bool)
        v = float(v_raw) if ok else float("nan")
        if not (np.isfinite(v) and v >= 0):
            raise InputError(f"option gains: gain {v_raw!r} of grade {grade} must be a finite number >= 0")
        if grade <= 0 and v != 0:
            raise InputError(f"option gains: grade {grade} is not relevant and must keep gain 0, got {v_raw!r}; "
                             "raise the grade of those labels instead")
        if grade in out:
            raise InputError(f"option gains: grade {grade} is given twice")
        out[grade] = v
    return tuple(sorted(out.items()))


def parse_gains(text: str, where: str = "--gains") -> tuple[tuple[int, float], ...]:
    """``"0=0,1=1,2=3"`` (trec_eval's gain parameter syntax) as :class:`EvalOptions` ``gains``."""
    items = []
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        g, sep, v = part.partition("=")
        try:
            if not sep:
                raise ValueError
            items.append((int(g.strip()), float(v.strip())))
        except ValueError:
            raise InputError(f"{where}: cannot read {part!r}; write GRADE=GAIN pairs, e.g. {where} 1=1,2=3") from None
    try:
        return _check_gains(items)
    except InputError as e:
        raise InputError(f"{where}: {str(e).removeprefix('option gains: ')}") from None
