"""NDCG@k: graded gain, discounted by position, relative to the ideal ranking (trec_eval ``ndcg_cut.k``).

Per question ``DCG@k / IDCG@k`` with ``DCG@k = sum over ranks i <= k of gain(g_i) / log2(i + 1)`` and
IDCG the DCG of the question's judged grades sorted best first.  The gain is the grade itself (``ndcg``,
trec_eval's), or ``2^g - 1`` (``ndcg_exp``, Burges' exponential gain, ranx ``ndcg_burges``).
``EvalOptions(gains=...)`` maps grades to gains (trec_eval's gain parameters); ``ndcg_relevance="binary"``
gives every relevant id gain 1 (the lesson's code).  A question with no positive grade scores 0.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.metrics.prefixes import Prefixes, check_optional_k, safe_div
from rag_metrics.metrics.spec import MetricExplanation, MetricSpec, OneList, number, option

if TYPE_CHECKING:
    from rag_metrics.metrics.options import EvalOptions

__all__ = ["SPEC", "SPEC_EXP", "ndcg", "explain"]


def ndcg(p: Prefixes, k: int | None = None, gain: str = "linear",
         gains: tuple[tuple[int, float], ...] = (), binary: bool = False) -> NDArray[np.float64]:
    """NDCG at k with ``gain`` (``"linear"`` or ``"exponential"``) over the grades.

    ``gains`` (``((grade, gain), ...)``) replaces the linear gain of the listed grades (trec_eval's
    gain parameters, ir_measures ``nDCG(gains=...)``); ``binary``: gain 1 for a relevant id (grade
    >= level) and 0 otherwise, whatever ``gain`` says (the lesson's code; it wins over ``gains``)."""
    k = check_optional_k(k)
    if binary:
        dcg, idcg = p.dcg_binary, p.idcg_binary
    elif gains and gain == "linear":
        dcg, idcg = p.custom_prefixes(tuple(gains))
    elif gain == "linear":
        dcg, idcg = p.dcg_linear, p.idcg_linear
    elif gain == "exponential":
        dcg, idcg = p.dcg_exp, p.idcg_exp
    else:
        raise ValueError(f"gain must be 'linear' or 'exponential', got {gain!r}")
    m = idcg.shape[1]
    icol = m - 1 if k is None else min(int(k), m) - 1
    return safe_div(dcg[:, p.col(k)], idcg[:, icol])


def _binary(options: EvalOptions | None) -> bool:
    """NDCG over 0/1 relevance (``EvalOptions(ndcg_relevance="binary")``, the lesson's code)."""
    return option(options, "ndcg_relevance", "graded") == "binary"


def _kernel(p: Prefixes, k: int | None, options: EvalOptions | None) -> NDArray[np.float64]:
    return ndcg(p, k, "linear", options.gains if options is not None else (), _binary(options))


def _kernel_exp(p: Prefixes, k: int | None, options: EvalOptions | None) -> NDArray[np.float64]:
    return ndcg(p, k, "exponential", binary=_binary(options))


SPEC = MetricSpec("ndcg", "NDCG", "optional", "ndcg_cut.k",
                  "DCG@k / IDCG@k, gain(g) = g, discount log2(i + 1)",
                  "Graded, position-discounted gain relative to the ideal ranking (linear gain, trec_eval).",
                  _kernel)
SPEC_EXP = MetricSpec("ndcg_exp", "NDCG (exp. gain)", "optional", "-",
                      "DCG@k / IDCG@k, gain(g) = 2^g - 1",
                      "NDCG with Burges' exponential gain (ranx ndcg_burges, many ML libraries).",
                      _kernel_exp)


def explain(one: OneList) -> list[MetricExplanation]:
    out = []
    for name, gain in (("ndcg", "linear"), ("ndcg_exp", "exponential")):
        v = float(ndcg(one.kn, one.k, gain)[0])

        def g_of(g: int, gain: str = gain) -> float:
            return float(g) if gain == "linear" else 2.0 ** g - 1.0

        def g_txt(g: int, gain: str = gain) -> str:
            return str(g) if gain == "linear" else f"(2^{g}-1)"

        dterms = [f"{g_txt(g)}/log2({i + 2})" for i, g in enumerate(one.topk) if g > 0]
        ideal = sorted([g for g in one.judged_grades if g > 0], reverse=True)[:one.k]
        iterms = [f"{g_txt(g)}/log2({i + 2})" for i, g in enumerate(ideal)]
        dcg = sum(g_of(g) / math.log2(i + 2) for i, g in enumerate(one.topk) if g > 0)
        idcg = sum(g_of(g) / math.log2(i + 2) for i, g in enumerate(ideal))
        sub = (f"DCG = {' + '.join(dterms) or '0'} = {number(dcg)}; IDCG = {' + '.join(iterms) or '0'} = "
               f"{number(idcg)}; {number(dcg)} / {number(idcg)} = {number(v)}" if idcg else "no positive grade: 0")
        formula = "DCG@k / IDCG@k, DCG = sum gain(g_i) / log2(i + 1)" + ("" if gain == "linear" else ", gain = 2^g - 1")
        out.append(MetricExplanation(name, one.k, v, formula, sub))
    return out
