"""Typical mistakes, to name the likely one behind a failing check (diagnosis only, server side).

Each mistake is a small variation of the lesson's arithmetic (off by one in K, dividing by K instead
of ``|R|``, the log base, a duplicate counted twice, ...).  :func:`diagnose` recomputes a failing
check's value under each mistake of the exercise and returns the first one that gives the student's
value.  Expected values never come from here (see :mod:`rag_metrics.exercises.checks`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["DIAGNOSES", "MISTAKES", "diagnose", "close"]

#: Mistake key -> (English hint, Danish hint).
MISTAKES: dict[str, tuple[str, str]] = {
    "count_every_relevant": ("A hit rate cannot exceed 1: count each question once. A question is a hit (1) when "
                             "any of its first k ids is relevant, however many are: `if any(...): hits += 1`.",
                             "En hit rate kan ikke blive over 1: tæl hvert spørgsmål én gang. Et spørgsmål er et hit "
                             "(1), når et af dets første k id'er er relevant, uanset hvor mange: "
                             "`if any(...): hits += 1`."),
    "k_plus_one": ("Off by one in K: your value is what K + 1 results give. Take exactly the first k, e.g. "
                   "`results[:k]` and `top_k=k`.",
                   "En off-by-one-fejl i K: din værdi er, hvad K + 1 resultater giver. Tag præcis de første k, fx "
                   "`results[:k]` og `top_k=k`."),
    "k_minus_one": ("Off by one in K: your value is what K - 1 results give. `results[:k]` already includes "
                    "position k; `range(k - 1)` or `[:k - 1]` stops one short.",
                    "En off-by-one-fejl i K: din værdi er, hvad K - 1 resultater giver. `results[:k]` tager allerede "
                    "position k med; `range(k - 1)` eller `[:k - 1]` stopper én for tidligt."),
    "in_scope_only": ("You left out the questions with no relevant chunk. The lesson divides by every question: "
                      "an out-of-scope question counts as 0.",
                      "Du har udeladt spørgsmålene uden relevant chunk. Lektionen dividerer med alle spørgsmål: "
                      "et spørgsmål uden for emnet tæller som 0."),
    "oos_as_zero": ("You counted the questions with no relevant chunk as 0. The lesson's recall skips them "
                    "(`if not relevant: continue`): the mean is over the others.",
                    "Du har talt spørgsmålene uden relevant chunk som 0. Lektionens recall springer dem over "
                    "(`if not relevant: continue`): gennemsnittet er over de andre."),
    "sum_not_mean": ("You returned a sum over the questions: divide by the number of questions for the mean.",
                     "Du har returneret en sum over spørgsmålene: divider med antallet af spørgsmål for at få "
                     "gennemsnittet."),
    "last_relevant": ("Your value is 1 / rank of the last relevant chunk: stop at the first one (`break`).",
                      "Din værdi er 1 / rang af den sidste relevante chunk: stop ved den første (`break`)."),
    "sum_reciprocal": ("You added 1 / rank of every relevant chunk: MRR takes the first relevant chunk only.",
                       "Du har lagt 1 / rang sammen for alle relevante chunks: MRR tager kun den første."),
    "rank_plus_one": ("Ranks counted from 0 and then shifted once too often: your value is 1 / (rank + 1). The "
                      "best result has rank 1: `enumerate(results, start=1)` and `1 / rank`.",
                      "Rang talt fra 0 og forskudt én gang for meget: din værdi er 1 / (rang + 1). Det bedste "
                      "resultat har rang 1: `enumerate(results, start=1)` og `1 / rang`."),
    "divide_by_retrieved": ("You divided by the number of results that came back: precision@k divides by k, "
                            "even when fewer than k came back.",
                            "Du har divideret med antallet af resultater, der kom tilbage: precision@k dividerer "
                            "med k, også når der kom færre end k."),
    "divide_by_relevant": ("You divided by the number of relevant chunks |R|: that is recall. Precision divides "
                           "by k.",
                           "Du har divideret med antallet af relevante chunks |R|: det er recall. Precision "
                           "dividerer med k."),
    "dedup": ("You counted a chunk listed twice once. The lesson's code counts positions: a relevant chunk at "
              "two positions counts twice.",
              "Du har talt en chunk, der står to gange, én gang. Lektionens kode tæller positioner: en relevant "
              "chunk på to positioner tæller to gange."),
    "duplicates_twice": ("A duplicate counted twice: a chunk listed twice is still one relevant chunk found. "
                         "Take the first k ids as a set: `set(ids[:k]) & relevant`.",
                         "En dublet talt to gange: en chunk, der står to gange, er stadig én fundet relevant "
                         "chunk. Tag de første k id'er som en mængde: `set(ids[:k]) & relevant`."),
    "divide_by_k": ("You divided by k: recall divides by the number of relevant chunks, `len(relevant)`.",
                    "Du har divideret med k: recall dividerer med antallet af relevante chunks, `len(relevant)`."),
    "divide_by_cap": ("You divided by min(k, |R|) (BEIR's capped recall). The lesson divides by |R|, "
                      "`len(relevant)`.",
                      "Du har divideret med min(k, |R|) (BEIRs afskårne recall). Lektionen dividerer med |R|, "
                      "`len(relevant)`."),
    "log_e": ("The log base: you used the natural log. DCG uses `math.log2`.",
              "Logaritmens grundtal: du har brugt den naturlige logaritme. DCG bruger `math.log2`."),
    "log_10": ("The log base: you used log10. DCG uses `math.log2`.",
               "Logaritmens grundtal: du har brugt log10. DCG bruger `math.log2`."),
    "shift": ("Ranks counted from 1 and then + 2: every position is discounted one step too much. With "
              "`enumerate(...)` (from 0) use `log2(i + 2)`; with `start=1` use `log2(rank + 1)`.",
              "Rang talt fra 1 og så + 2: hver position får én rabat for meget. Med `enumerate(...)` (fra 0) brug "
              "`log2(i + 2)`; med `start=1` brug `log2(rang + 1)`."),
    "no_cutoff": ("Your DCG used every relevance, not only the first k: slice `relevances[:k]`.",
                  "Din DCG brugte alle relevanser, ikke kun de første k: tag `relevances[:k]`."),
    "ideal_k": ("The ideal list has `min(len(relevant), k)` ones, not k ones: a question with 2 relevant chunks "
                "can at best fill 2 positions.",
                "Den ideelle liste har `min(len(relevant), k)` ettaller, ikke k: et spørgsmål med 2 relevante "
                "chunks kan højst fylde 2 positioner."),
    "ideal_retrieved": ("Your ideal list is the retrieved list sorted; the ideal DCG counts every relevant chunk, "
                        "also the ones not retrieved: `[1] * min(len(relevant), k)`.",
                        "Din ideelle liste er den hentede liste sorteret; den ideelle DCG tæller alle relevante "
                        "chunks, også dem der ikke blev hentet: `[1] * min(len(relevant), k)`."),
    "graded": ("You used the grades as gains. The lesson's NDCG is binary: 1 if the chunk is in "
               "`relevant_chunk_ids`, else 0.",
               "Du har brugt karaktererne som gevinst. Lektionens NDCG er binær: 1 hvis chunken er i "
               "`relevant_chunk_ids`, ellers 0."),
    "graded_dcg_only": ("You used the grades as gains in DCG (the ideal list has ones, so NDCG can pass 1). The "
                        "lesson's NDCG is binary: 1 if the chunk is in `relevant_chunk_ids`, else 0.",
                        "Du har brugt karaktererne som gevinst i DCG (den ideelle liste har ettaller, så NDCG kan "
                        "blive over 1). Lektionens NDCG er binær: 1 hvis chunken er i `relevant_chunk_ids`, ellers "
                        "0."),
    "no_normalise": ("You returned DCG: NDCG divides it by the DCG of the ideal list.",
                     "Du har returneret DCG: NDCG dividerer den med DCG af den ideelle liste."),
}

_ORDER: dict[str, tuple[str, ...]] = {
    "hit_rate_at_k": ("count_every_relevant", "k_plus_one", "k_minus_one", "in_scope_only", "sum_not_mean"),
    "mean_reciprocal_rank": ("last_relevant", "sum_reciprocal", "rank_plus_one", "k_plus_one", "k_minus_one",
                             "in_scope_only", "sum_not_mean"),
    "precision_at_k": ("divide_by_retrieved", "divide_by_relevant", "dedup", "k_plus_one", "k_minus_one",
                       "in_scope_only", "sum_not_mean"),
    "ndcg_at_k": ("log_e", "log_10", "shift", "ideal_k", "ideal_retrieved", "graded", "graded_dcg_only", "dedup",
                  "no_normalise", "k_plus_one", "k_minus_one", "in_scope_only", "sum_not_mean"),
    "recall_at_k": ("divide_by_k", "divide_by_cap", "duplicates_twice", "oos_as_zero", "k_plus_one",
                    "k_minus_one", "sum_not_mean"),
    "dcg_at_k": ("log_e", "log_10", "shift", "no_cutoff", "k_plus_one", "k_minus_one"),
}


def close(a: float, b: float) -> bool:
    """The tolerance of every numeric comparison."""
    return abs(a - b) <= 1e-6 + 1e-6 * abs(b)


def _dcg(gains: list[float], k: int | None, mistake: str) -> float:
    log = {"log_e": math.log, "log_10": math.log10}.get(mistake, math.log2)
    shift = 3 if mistake == "shift" else 2
    use = gains if k is None else gains[:k]
    return sum(g / log(i + shift) for i, g in enumerate(use))


def _one(name: str, item: Mapping[str, Any], ranking: list[str], k: int, m: str) -> float | None:
    rel = {str(x) for x in item.get("relevant_chunk_ids", [])}
    ids = ranking[:k]
    if name == "hit_rate_at_k":
        if m == "count_every_relevant":
            return float(sum(i in rel for i in ids))
        return float(any(i in rel for i in ids))
    if name == "mean_reciprocal_rank":
        ranks = [r for r, i in enumerate(ids, start=1) if i in rel]
        if not ranks:
            return 0.0
        return {"last_relevant": 1 / ranks[-1], "sum_reciprocal": sum(1 / r for r in ranks),
                "rank_plus_one": 1 / (ranks[0] + 1)}.get(m, 1 / ranks[0])
    if name == "precision_at_k":
        n = len(set(ids) & rel) if m == "dedup" else sum(i in rel for i in ids)
        den = {"divide_by_retrieved": len(ids), "divide_by_relevant": len(rel)}.get(m, k)
        return n / den if den else 0.0
    if name == "recall_at_k":
        if not rel:
            return 0.0 if m == "oos_as_zero" else None
        n = sum(i in rel for i in ids) if m == "duplicates_twice" else len(set(ids) & rel)
        den = {"divide_by_k": k, "divide_by_cap": min(k, len(rel))}.get(m, len(rel))
        return n / den
    if name == "ndcg_at_k":
        if not rel:
            return 0.0
        grades = {str(i): float(g) for i, g in dict(item.get("grades") or {}).items()}
        seen: set[str] = set()
        gains = []
        for i in ids:
            g = (grades.get(i, 1.0) if i in rel else 0.0) if m.startswith("graded") else float(i in rel)
            gains.append(0.0 if (m == "dedup" and i in seen) else g)
            seen.add(i)
        if m == "ideal_retrieved":
            ideal = sorted(gains, reverse=True)
        elif m == "ideal_k":
            ideal = [1.0] * k
        elif m == "graded":
            ideal = sorted((grades.get(i, 1.0) for i in rel), reverse=True)
        else:
            ideal = [1.0] * min(len(rel), k)
        dcg, idcg = _dcg(gains, k, m), _dcg(ideal, k, m)
        if m == "no_normalise":
            return dcg
        return dcg / idcg if idcg else 0.0
    return None


def _value(name: str, args: Mapping[str, Any], mistake: str) -> float | None:
    if name == "dcg_at_k":
        rel, k = args["params"]
        k = int(k) + {"k_plus_one": 1, "k_minus_one": -1}.get(mistake, 0)
        return _dcg([float(x) for x in rel], None if mistake == "no_cutoff" else k, mistake)
    if name == "ndcg_at_k" and "params" in args:   # one question: ndcg_at_k(retrieved_ids, relevant_ids, k)
        ids, rel, k = args["params"]
        k = int(k) + {"k_plus_one": 1, "k_minus_one": -1}.get(mistake, 0)
        if k < 1:
            return None
        return _one(name, {"relevant_chunk_ids": list(rel)}, [str(i) for i in ids], k, mistake)
    k = int(args["k"]) + {"k_plus_one": 1, "k_minus_one": -1}.get(mistake, 0)
    if k < 1:
        return None
    rankings = {q: [str(p[0]) for p in r] for q, r in dict(args["rankings"]).items()}
    values = []
    for item in args["dataset"]:
        v = _one(name, item, rankings.get(item["question"], []), k, mistake)
        if mistake == "in_scope_only" and not item.get("relevant_chunk_ids"):
            continue
        if v is not None:
            values.append(v)
    if not values:
        return None
    return sum(values) if mistake == "sum_not_mean" else sum(values) / len(values)


#: Exercise name -> its own diagnosis, with :func:`diagnose`'s signature
#: (``fn(name, args, expected, got) -> mistake key | None``; ``expected`` and ``got`` may be any JSON value).
#: The exercises of lessons 3 and 4 register here as their modules load, and add their mistakes' hints to
#: :data:`MISTAKES` (key -> (English, Danish)).
DIAGNOSES: dict[str, Callable[[str, Mapping[str, Any], Any, Any], str | None]] = {}


def diagnose(name: str, args: Mapping[str, Any], expected: Any, got: Any) -> str | None:
    """The key of the first mistake of exercise ``name`` (or ``dcg_at_k``) that turns the check's
    input ``args`` into the student's value ``got`` (and not into ``expected``), else ``None``.  An
    exercise of :data:`DIAGNOSES` is diagnosed by its own function (an error in it is no diagnosis)."""
    if name in DIAGNOSES:
        try:
            found = DIAGNOSES[name](name, args, expected, got)
        except (ArithmeticError, KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None
        return found if isinstance(found, str) and found in MISTAKES else None
    if isinstance(got, bool) or not isinstance(got, (int, float)) or isinstance(expected, bool) \
            or not isinstance(expected, (int, float)):
        return None
    fn = str(args.get("function", name))
    fn = "ndcg_at_k" if fn == "mean_ndcg_at_k" else fn   # the mean of the per-question NDCG
    for mistake in _ORDER.get(fn, ()):
        try:
            v = _value(fn, args, mistake)
        except (ArithmeticError, KeyError, TypeError, ValueError):
            continue
        if v is not None and close(got, v) and not close(expected, v):
            return mistake
    return None
