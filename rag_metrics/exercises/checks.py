"""The checks of an exercise: inputs from the current golden set and system, plus the edge cases.

Every expected value comes from the lab's own engine (:func:`rag_metrics.evaluation.evaluate` under
the "as in the lesson" preset, :data:`LESSON_OPTIONS`), so an exercise teaches what the Dashboard
shows under that preset; never from a reference solution.

One rule the engine does not meet elsewhere: a ranking that lists an id twice.  Runs never hold
duplicates (the engine keeps an id's best rank, as trec_eval does), but the lesson's code reads
positions, so a check with a duplicate is judged **position by position** with the engine's kernels:
for hit rate, MRR, precision and NDCG each position of the id carries its grade (the lesson counts a
duplicate at each position); for recall and failures the first ``k`` ids are a set (the later
occurrence carries no grade).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from rag_metrics.errors import InputError
from rag_metrics.evaluation import EvaluationResult, evaluate
from rag_metrics.exercises.catalogue import exercise
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.metrics.presets import apply_preset
from rag_metrics.types import OUT_OF_SCOPE, GoldenQuery, GoldenSet, Run

__all__ = ["BUILDERS", "Check", "build_checks", "example_values", "LESSON_OPTIONS", "MAX_CURRENT_QUESTIONS",
           "MEAN_METRICS", "golden_dataset"]

#: The conventions of every expected value: the "as in the lesson" preset.
LESSON_OPTIONS = apply_preset(EvalOptions(), "lesson")
#: The check on the current data uses at most this many golden questions (in the golden set's order).
MAX_CURRENT_QUESTIONS = 400
#: Extra results per question beyond the check's K, so a student who asks for more sees them.
EXTRA_DEPTH = 5
#: The engine's metric behind each exercise that returns a mean.
MEAN_METRICS = {"hit_rate_at_k": "hit_rate", "mean_reciprocal_rank": "mrr", "precision_at_k": "precision",
                "ndcg_at_k": "ndcg", "recall_at_k": "recall"}
#: Exercises whose checks read a duplicated id once (the first ``k`` ids as a set).
_SET_READERS = ("recall_at_k", "analyze_failures")


@dataclass(frozen=True)
class Check:
    """One check: ``args`` go to the browser (JSON); ``expected`` stays on the server.

    ``summary`` is the input in a few words for the failure report (ranking, relevant ids, K);
    ``hint`` (en/da) says what this case is about; ``metric`` names the Dashboard figure the check
    on the current data reproduces (e.g. ``"hit_rate@5"``), else ``""``; ``unordered``: a list the
    student returns is compared as a set (any order; :func:`rag_metrics.exercises.grading.compare_values`;
    ``summary={"unordered": True}`` says the same).
    """

    id: str
    label: Mapping[str, str]
    args: dict[str, Any]
    expected: Any
    summary: Mapping[str, Any] = field(default_factory=dict)
    hint: Mapping[str, str] = field(default_factory=dict)
    metric: str = ""
    unordered: bool = False


def _t(en: str, da: str) -> Mapping[str, str]:
    return MappingProxyType({"en": en, "da": da})


# ---- the engine on small cases -------------------------------------------------------------------
def _positional(res: EvaluationResult, rankings: Sequence[Sequence[str]], once: bool) -> EvaluationResult:
    """``res`` judged position by position (duplicates kept; ``once``: a repeat carries no grade)."""
    depth = max([len(r) for r in rankings] + [1])
    grades = np.zeros((len(rankings), depth), dtype=np.int32)
    for q, (gq, ranking) in enumerate(zip(res.golden.queries, rankings)):
        seen: set[str] = set()
        for i, cid in enumerate(ranking):
            if not (once and cid in seen):
                grades[q, i] = int(gq.relevant.get(cid, 0))
            seen.add(cid)
    judged = replace(res.judged, grades=grades, is_judged=None)
    return EvaluationResult(res.golden, res.run, judged, res.options)


def _engine(queries: Sequence[GoldenQuery], rankings: Sequence[Sequence[tuple[str, float]]],
            name: str) -> EvaluationResult:
    golden = GoldenSet(tuple(queries))
    run = Run.from_rankings({q.id: list(r) for q, r in zip(queries, rankings)})
    res = evaluate(golden, run, LESSON_OPTIONS)
    ids = [[i for i, _ in r] for r in rankings]
    if any(len(set(r)) != len(r) for r in ids):
        res = _positional(res, ids, once=name in _SET_READERS)
    return res


def _expected(name: str, res: EvaluationResult, k: int, questions: Sequence[str]) -> Any:
    """The expected value of exercise ``name`` at ``k`` from the engine's result ``res``."""
    if name in MEAN_METRICS:
        return float(res.mean(MEAN_METRICS[name], k))
    if name == "evaluate_by_category":
        hits = res.values("hit_rate", k)
        out: dict[str, dict[str, Any]] = {}
        for q, gq in enumerate(res.golden.queries):
            cat = gq.category or "unknown"
            s = out.setdefault(cat, {"hits": 0, "count": 0})
            s["count"] += 1
            s["hits"] += int(hits[q] > 0)
        return {c: {**s, "hit_rate": s["hits"] / s["count"]} for c, s in sorted(out.items())}
    if name == "analyze_failures":
        table = res.failures(k)
        by_id = {gq.id: q for q, gq in enumerate(res.golden.queries)}
        rows = []
        for row in table.itertuples(index=False):
            top = float(row.top_score)
            rows.append({"question": questions[by_id[row.query_id]], "expected_ids": sorted(row.expected_ids),
                         "retrieved_ids": list(row.retrieved_ids), "top_score": top if np.isfinite(top) else None})
        return rows
    raise InputError(f"no expected value for exercise {name!r}")  # pragma: no cover - every exercise is listed


def _dcg(relevances: Sequence[int], k: int) -> float:
    """DCG@k of a list of grades, by the engine's kernel (linear gain, discount log2(rank + 1))."""
    ids = [f"p{i}" for i in range(len(relevances))]
    golden = GoldenSet((GoldenQuery("q", "", relevant={i: int(g) for i, g in zip(ids, relevances)}),))
    res = evaluate(golden, Run.from_rankings({"q": ids}), EvalOptions())
    col = min(k, len(ids)) - 1
    return float(res.kernels._dcg_linear[0, col])  # the engine's own DCG prefix sums


# ---- the payload's data --------------------------------------------------------------------------
def _item(question: str, gq: GoldenQuery) -> dict[str, Any]:
    rel = [i for i, g in gq.relevant.items() if g >= LESSON_OPTIONS.relevance_level]
    item: dict[str, Any] = {"question": question, "relevant_chunk_ids": rel}
    if gq.category:
        item["category"] = gq.category
    if any(g > 1 for g in gq.relevant.values()):
        item["grades"] = {i: int(g) for i, g in gq.relevant.items() if g > 0}
    return item


def golden_dataset(golden: GoldenSet) -> tuple[list[dict[str, Any]], list[str]]:
    """The lesson's ``golden_dataset`` of ``golden`` and the question each query is asked as.

    A question text that is empty or repeats an earlier one gets the query id appended, so the
    retriever (which looks rankings up by question) answers each golden query with its own ranking.
    """
    seen: set[str] = set()
    questions = []
    for gq in golden.queries:
        text = gq.question.strip() or "(no question text)"
        if text in seen:
            text = f"{text} [{gq.id}]"
        seen.add(text)
        questions.append(text)
    return [_item(t, gq) for t, gq in zip(questions, golden.queries)], questions


def _collapse(ranking: list[tuple[str, float]], chunk_to_doc: Mapping[str, str] | None) -> list[tuple[str, float]]:
    if chunk_to_doc is None:
        return ranking
    seen: set[str] = set()
    out = []
    for cid, s in ranking:
        d = chunk_to_doc.get(cid, cid)
        if d not in seen:
            seen.add(d)
            out.append((d, s))
    return out


def _current(name: str, golden: GoldenSet, run: Run, k: int, chunk_to_doc: Mapping[str, str] | None) -> Check:
    queries = golden.queries[:MAX_CURRENT_QUESTIONS]
    sub = GoldenSet(tuple(queries), name=golden.name)
    ranked = run.rankings()
    rankings = [_collapse(ranked.get(q.id, []), chunk_to_doc) for q in queries]
    dataset, questions = golden_dataset(sub)
    res = evaluate(sub, Run.from_rankings({q.id: r for q, r in zip(queries, rankings)}), LESSON_OPTIONS)
    depth = k + EXTRA_DEPTH
    args = {"k": k, "dataset": dataset,
            "rankings": {t: [[i, float(s)] for i, s in r[:depth]] for t, r in zip(questions, rankings)}}
    n, total = len(queries), len(golden)
    part = "" if n == total else f" (the first {n} of {total})"
    part_da = "" if n == total else f" (de første {n} af {total})"
    metric = f"{MEAN_METRICS[name]}@{k}" if name in MEAN_METRICS else ""
    return Check("current", _t(f"Your golden set and system: {n} questions{part}, K = {k}",
                               f"Dit guldsæt og system: {n} spørgsmål{part_da}, K = {k}"),
                 args, _expected(name, res, k, questions), {"questions": n, "k": k},
                 _t("This check runs on the class's own data, as the Dashboard does under \"As in the lesson\".",
                    "Dette tjek kører på klassens egne data, som Dashboardet gør under \"As in the lesson\"."),
                 metric)


# ---- the edge cases -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Case:
    id: str
    label: Mapping[str, str]
    hint: Mapping[str, str]
    k: int
    # text (en/da), labels, category, ranking
    questions: tuple[tuple[Mapping[str, str], Mapping[str, int], str, tuple[str, ...]], ...]
    only: tuple[str, ...] = ()      # exercises this case is for (empty: every data exercise)


def _scores(ranking: Sequence[str]) -> list[tuple[str, float]]:
    return [(cid, round(0.9 - 0.05 * r, 4)) for r, cid in enumerate(ranking)]


# The edge cases' questions, in the exercise's language (the student never sees English examples in a Danish class).
_Q = _t("How long is the warranty?", "Hvor længe gælder garantien?")
_Q2 = _t("What is the capital of France?", "Hvad er hovedstaden i Frankrig?")
_Q3 = _t("Which plan includes support?", "Hvilket abonnement har support med?")
_Q4 = _t("Is there a student discount?", "Er der rabat for studerende?")
_MEANS = tuple(MEAN_METRICS)

CASES: tuple[_Case, ...] = (
    _Case("rank_k", _t("First relevant chunk at rank K = 3", "Første relevante chunk på rang K = 3"),
          _t("The relevant chunk is at rank 3 and K = 3: it is inside the top K and must count.",
             "Den relevante chunk er på rang 3, og K = 3: den er inden for top K og skal tælle."),
          3, ((_Q, {"c4": 1}, "factual", ("c1", "c2", "c4", "c5", "c6")),)),
    _Case("rank_k_plus_1", _t("First relevant chunk at rank K + 1 = 4", "Første relevante chunk på rang K + 1 = 4"),
          _t("The relevant chunk is at rank 4 and K = 3: it is outside the top K and must not count.",
             "Den relevante chunk er på rang 4, og K = 3: den er uden for top K og må ikke tælle."),
          3, ((_Q, {"c4": 1}, "factual", ("c1", "c2", "c3", "c4", "c5")),)),
    _Case("none_retrieved", _t("No relevant chunk retrieved", "Ingen relevant chunk hentet"),
          _t("None of the retrieved chunks is relevant: the question scores 0.",
             "Ingen af de hentede chunks er relevante: spørgsmålet giver 0."),
          3, ((_Q, {"c8": 1, "c9": 1}, "factual", ("c1", "c2", "c3", "c4")),)),
    _Case("duplicates", _t("A relevant chunk listed twice", "En relevant chunk, der står to gange"),
          _t("c2 is listed twice. The lesson counts positions for precision and NDCG (twice), the first one for "
             "MRR, and a set for recall (once).",
             "c2 står to gange. Lektionen tæller positioner for precision og NDCG (to gange), den første for MRR "
             "og en mængde for recall (én gang)."),
          3, ((_Q, {"c2": 1, "c3": 1}, "factual", ("c2", "c2", "c5", "c7", "c3")),)),
    _Case("k_larger", _t("K = 10, larger than the 3 results", "K = 10, større end de 3 resultater"),
          _t("Only 3 results come back and K = 10: precision still divides by K; the ideal DCG has min(|R|, K) "
             "ones.",
             "Der kommer kun 3 resultater, og K = 10: precision dividerer stadig med K; den ideelle DCG har "
             "min(|R|, K) ettaller."),
          10, ((_Q, {"c6": 1, "c9": 1}, "factual", ("c1", "c6", "c2")),)),
    _Case("several_relevant", _t("Several relevant chunks", "Flere relevante chunks"),
          _t("Four chunks are relevant, three of them in the top 5 (first at rank 2).",
             "Fire chunks er relevante, tre af dem i top 5 (den første på rang 2)."),
          5, ((_Q3, {"c1": 1, "c3": 1, "c4": 1, "c8": 1}, "comparison", ("c2", "c3", "c1", "c5", "c4", "c6")),)),
    _Case("graded", _t("Graded labels (grades 3, 2 and 1)", "Graduerede etiketter (karakter 3, 2 og 1)"),
          _t("The lesson's NDCG is binary: a chunk is relevant (1) or not (0), whatever its grade.",
             "Lektionens NDCG er binær: en chunk er relevant (1) eller ej (0), uanset karakter."),
          3, ((_Q, {"c1": 3, "c2": 1, "c9": 2}, "factual", ("c2", "c5", "c1", "c3")),), only=("ndcg_at_k",)),
    _Case("out_of_scope", _t("An out-of-scope question beside an answered one",
                             "Et spørgsmål uden for emnet ved siden af et besvaret"),
          _t("The second question has no relevant chunk (out of scope). The lesson counts it as a miss (0) in "
             "the mean, except recall, which skips it.",
             "Det andet spørgsmål har ingen relevant chunk (uden for emnet). Lektionen tæller det som en bom (0) i "
             "gennemsnittet, undtagen recall, der springer det over."),
          3, ((_Q, {"c1": 1}, "factual", ("c1", "c2", "c3", "c4")),
              (_Q2, {}, OUT_OF_SCOPE, ("c5", "c6", "c7", "c8")))),
    _Case("mixed", _t("Four questions: a hit, a miss at rank K + 1, no category, out of scope",
                      "Fire spørgsmål: et hit, en bom på rang K + 1, ingen kategori, uden for emnet"),
          _t("A question without a category belongs to 'unknown'; an out-of-scope question is always a miss.",
             "Et spørgsmål uden kategori hører til 'unknown'; et spørgsmål uden for emnet er altid en bom."),
          3, ((_Q, {"c1": 1}, "factual", ("c1", "c2", "c3", "c4")),
              (_Q3, {"c4": 1}, "factual", ("c1", "c2", "c3", "c4")),
              (_Q4, {"c7": 1}, "", ("c7", "c7", "c2")),
              (_Q2, {}, OUT_OF_SCOPE, ("c5", "c6", "c7"))), only=("evaluate_by_category", "analyze_failures")),
)

#: Direct checks of ``dcg_at_k`` (relevances, k) in the NDCG exercise.
DCG_CASES: tuple[tuple[str, tuple[int, ...], int, Mapping[str, str]], ...] = (
    ("dcg_binary", (1, 0, 1), 3, _t("dcg_at_k([1, 0, 1], 3): the worked example",
                                    "dcg_at_k([1, 0, 1], 3): det gennemregnede eksempel")),
    ("dcg_graded", (3, 2, 0, 1), 4, _t("dcg_at_k([3, 2, 0, 1], 4): grades as gains",
                                       "dcg_at_k([3, 2, 0, 1], 4): karakterer som gevinst")),
    ("dcg_cutoff", (0, 1, 1, 1), 2, _t("dcg_at_k([0, 1, 1, 1], 2): only the first k count",
                                       "dcg_at_k([0, 1, 1, 1], 2): kun de første k tæller")),
)


#: Direct checks of ``ndcg_at_k`` (retrieved ids, relevant ids, k) for one question in the NDCG exercise.
NDCG_CASES: tuple[tuple[str, tuple[str, ...], tuple[str, ...], int, Mapping[str, str]], ...] = (
    ("ndcg_one", ("b", "a", "d", "c"), ("a", "c"), 3,
     _t("ndcg_at_k(['b', 'a', 'd', 'c'], ['a', 'c'], 3): the worked example",
        "ndcg_at_k(['b', 'a', 'd', 'c'], ['a', 'c'], 3): det gennemregnede eksempel")),
    ("ndcg_one_cutoff", ("x", "a", "y", "z", "c"), ("a", "c", "e"), 3,
     _t("ndcg_at_k(['x', 'a', 'y', 'z', 'c'], ['a', 'c', 'e'], 3): only the first k ids count",
        "ndcg_at_k(['x', 'a', 'y', 'z', 'c'], ['a', 'c', 'e'], 3): kun de første k id'er tæller")),
)


def _ndcg_one(ranking: Sequence[str], relevant: Sequence[str], k: int) -> float:
    """NDCG@k of one question by the engine (binary relevance)."""
    gq = GoldenQuery("q", "", "factual", {r: 1 for r in relevant})
    return float(_engine([gq], [_scores(ranking)], "ndcg_at_k").mean("ndcg", k))


def _edge(name: str, case: _Case, lang: str = "en") -> Check:
    queries, rankings, dataset, questions = [], [], [], []
    for n, (texts, labels, cat, ranking) in enumerate(case.questions):
        text = texts.get(lang) or texts["en"]
        gq = GoldenQuery(f"{case.id}-{n + 1}", text, cat, dict(labels))
        queries.append(gq)
        rankings.append(_scores(ranking))
        dataset.append(_item(text, gq))
        questions.append(text)
    res = _engine(queries, rankings, name)
    args = {"k": case.k, "dataset": dataset,
            "rankings": {t: [[i, s] for i, s in r] for t, r in zip(questions, rankings)}}
    first = case.questions[0]
    summary: dict[str, Any] = {"k": case.k}
    if len(case.questions) == 1:
        summary.update(ranking=list(first[3]), relevant=sorted(first[1]))
        if any(g > 1 for g in first[1].values()):
            summary["grades"] = dict(first[1])
    else:
        summary["questions"] = [{"question": t, "ranking": list(r), "relevant": sorted(lab)}
                                for t, (_, lab, _, r) in zip(questions, case.questions)]
    return Check(case.id, case.label, args, _expected(name, res, case.k, questions), summary, case.hint)


def example_values(checks: Sequence[Check]) -> tuple[dict[str, Any], list[dict[str, Any]], int] | None:
    """One real ``golden_dataset`` item and what ``retriever.retrieve(item["question"], top_k=k)`` returns for
    it, with that ``k``: from the check on the current golden set and system (the very data the student's
    function is called with), as the harness builds them.  ``None`` when no check carries the current data.

    >>> item, results, k = example_values([Check("current", {}, {"k": 2, "dataset": [{"question": "q?",
    ...     "relevant_chunk_ids": ["c2"]}], "rankings": {"q?": [["c1", 0.9], ["c2", 0.8], ["c3", 0.1]]}}, 0.5)])
    >>> item, results, k
    ({'question': 'q?', 'relevant_chunk_ids': ['c2']}, [{'id': 'c1', 'score': 0.9}, {'id': 'c2', 'score': 0.8}], 2)
    """
    cur = next((c for c in checks if c.id == "current" and c.args.get("dataset")), None)
    if cur is None:
        return None
    item = dict(cur.args["dataset"][0])
    k = int(cur.args.get("k", 5))
    ranked = cur.args.get("rankings", {}).get(item.get("question"), [])
    return item, [{"id": str(i), "score": float(s)} for i, s in ranked[:k]], k


#: Exercise name -> the builder of its checks, with :func:`build_checks`' signature
#: (``builder(name, golden, run, *, k=None, chunk_to_doc=None, lang="en") -> tuple[Check, ...]``).  The
#: exercises of lessons 3 and 4 register here as their modules load (:mod:`rag_metrics.exercises.generation`,
#: :mod:`rag_metrics.exercises.system`); :func:`build_checks` hands their names to it.
BUILDERS: dict[str, Callable[..., tuple[Check, ...]]] = {}


def build_checks(name: str, golden: GoldenSet, run: Run, *, k: int | None = None,
                 chunk_to_doc: Mapping[str, str] | None = None, lang: str = "en") -> tuple[Check, ...]:
    """The checks of exercise ``name``: the current golden set and ``run`` first, then the edge cases.

    ``k``: the cutoff of the check on the current data (default: the exercise's, 5; MRR's
    ``top_k`` 10).  ``chunk_to_doc``: for a corpus labelled at the document level, maps the run's
    chunk ids to document ids (a document at the rank of its first chunk, as the engine does).
    ``lang``: the language of the edge cases' made-up questions (``"en"`` or ``"da"``; expected values do
    not depend on it).
    """
    ex = exercise(name)
    if ex.name in BUILDERS:
        return tuple(BUILDERS[ex.name](name, golden, run, k=k, chunk_to_doc=chunk_to_doc, lang=lang))
    if not isinstance(golden, GoldenSet) or not isinstance(run, Run):
        raise InputError("build_checks needs a GoldenSet and a Run (the current golden set and system)")
    kk = ex.k if k is None else int(k)
    if kk < 1:
        raise InputError(f"k must be a whole number >= 1, got {k!r}")
    checks: list[Check] = []
    if name == "ndcg_at_k":
        checks += [Check(cid, label, {"function": "dcg_at_k", "params": [list(rel), kk_]}, _dcg(rel, kk_),
                         {"relevances": list(rel), "k": kk_},
                         _t("DCG adds rel / log2(i + 2) over the first k positions, i counted from 0.",
                            "DCG lægger rel / log2(i + 2) sammen over de første k positioner, i talt fra 0."))
                   for cid, rel, kk_, label in DCG_CASES]
        checks += [Check(cid, label, {"function": "ndcg_at_k", "params": [list(ids), list(rel), kk_]},
                         _ndcg_one(ids, rel, kk_), {"ranking": list(ids), "relevant": list(rel), "k": kk_},
                         _t("NDCG = DCG of the first k ids (1 if relevant, else 0) / DCG of min(|R|, k) ones.",
                            "NDCG = DCG af de første k id'er (1 hvis relevant, ellers 0) / DCG af min(|R|, k) "
                            "ettaller."))
                   for cid, ids, rel, kk_, label in NDCG_CASES]
    if len(golden):
        checks.append(_current(name, golden, run, kk, chunk_to_doc))
    for case in CASES:
        if case.only and name not in case.only:
            continue
        if name not in _MEANS and case.id not in ("mixed", "rank_k", "rank_k_plus_1", "k_larger"):
            continue
        checks.append(_edge(name, case, lang))
    if name == "ndcg_at_k":   # the lesson's mean over the golden set is mean_ndcg_at_k
        checks = [replace(c, args={**c.args, "function": "mean_ndcg_at_k"}) if "dataset" in c.args else c
                  for c in checks]
    return tuple(checks)
