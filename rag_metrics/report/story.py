"""The presenter's story: the verdict against the lesson's targets next to what the golden set
allows, the chosen system against a baseline in plain words, and three example questions.

- :func:`ideal_run` / :func:`achievable`: the best value any ranking could reach with these labels
  (every relevant id first, highest grade first).  Precision@5 > 0.6 needs at least 4 relevant ids
  in the top 5 on average, which a golden set with one or two labels per question never allows;
  the story says so instead of blaming the retriever.  Also used by the Lesson page.
- :func:`target_readouts` and :func:`verdict_sentence`: each target met or not, and whether it can
  be met at all.
- :func:`pick_examples`: a win (first relevant at rank 1), a miss (nothing relevant in the top K)
  and a near miss (the first relevant just below the cutoff, or else the lowest hit above it), each
  with short chunk snippets whose words shared with the question are marked (:func:`snippet`).
- :func:`presenter_story`: all of it, plus the comparison with a baseline in the words of the one
  decision rule (:func:`rag_metrics.compare.paired.comparison_summary` / ``plain_verdict``).

Formatting (rounding, colours) is left to the UI and the report.  No streamlit import here.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rag_metrics.metrics.kernels import check_k
from rag_metrics.types import Run

if TYPE_CHECKING:
    import pandas as pd

    from rag_metrics.evaluation import EvaluationResult
    from rag_metrics.types import GoldenSet

__all__ = ["Segment", "StoryChunk", "StoryExample", "Story", "TargetReadout", "ideal_run", "achievable",
           "target_readouts", "verdict_sentence", "snippet", "pick_examples", "presenter_story", "SNIPPET_CHARS"]

#: Length of a chunk snippet in the story (characters, before the ellipses).
SNIPPET_CHARS = 180
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(["a", "all", "an", "and", "any", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for",
                   "from", "had", "has", "have", "how", "i", "in", "is", "it", "its", "me", "my", "not", "of", "on",
                   "or", "our", "so", "that", "the", "their", "them", "there", "they", "this", "to", "us", "was",
                   "we", "what", "when", "where", "which", "while", "who", "why", "will", "with", "you", "your"])

#: ``(text, highlighted)``: a piece of a snippet; highlighted pieces are words the question uses.
Segment = tuple[str, bool]


# ---- what is achievable ------------------------------------------------------------------------
def ideal_run(golden: GoldenSet, relevance_level: int = 1) -> Run:
    """The best ranking the labels allow (:func:`rag_metrics.insights.readouts.ideal_run`, the one
    definition: highest grade first, so every relevant id, whatever the level, comes first)."""
    from rag_metrics.insights.readouts import ideal_run as _ideal

    return _ideal(golden)


def achievable(result: EvaluationResult, metric: str, k: int | None) -> float:
    """The best mean of ``metric@k`` any ranking can reach (:func:`rag_metrics.insights.readouts.achievable`)."""
    from rag_metrics.insights.readouts import achievable as _achievable

    return _achievable(result, metric, k)


@dataclass(frozen=True)
class TargetReadout:
    """One lesson target at K: the value, whether it is met, and the best value the labels allow."""

    metric: str
    k: int | None        # the cutoff the lesson sets the target at (None: MRR over the whole ranking)
    value: float
    target: float
    met: bool
    best: float          # the ideal ranking's value (:func:`achievable`)
    reachable: bool      # best > target: some ranking could meet the target with these labels


def target_readouts(result: EvaluationResult, k: int) -> tuple[TargetReadout, ...]:
    """The lesson's targets (:data:`rag_metrics.insights.readouts.TARGETS`, checked by
    :func:`rag_metrics.insights.readouts.target_checks`) at ``k``, with what is achievable."""
    from rag_metrics.insights.readouts import target_checks

    out = []
    for t in target_checks(result, k).to_dict("records"):  # the one rule: the lesson's K, value > target
        tk = int(t["k"]) if isinstance(t["k"], (int, np.integer)) else None  # <NA>: MRR, the whole ranking
        out.append(TargetReadout(t["metric"], tk, float(t["value"]), float(t["target"]), bool(t["met"]),
                                 float(t["best"]), bool(t["reachable"])))
    return tuple(out)


def _name(metric: str, k: int | None) -> str:
    from rag_metrics.insights.readouts import target_label

    return target_label(metric, k)


def verdict_sentence(targets: Sequence[TargetReadout], system: str = "the system") -> str:
    """One sentence: which targets are met, and for a missed one whether any ranking could meet it."""
    met = [t for t in targets if t.met]
    if len(met) == len(targets):
        return f"{system} meets every target: " + "; ".join(
            f"{_name(t.metric, t.k)} = {t.value:.2f} (target > {t.target:g})" for t in targets) + "."
    parts = []
    for t in targets:
        if t.met:
            parts.append(f"{_name(t.metric, t.k)} = {t.value:.2f} meets its target (> {t.target:g})")
        elif t.reachable:
            parts.append(f"{_name(t.metric, t.k)} = {t.value:.2f} misses its target (> {t.target:g}); the labels "
                         f"allow up to {t.best:.2f}, so a better ranking can reach it")
        else:
            parts.append(f"{_name(t.metric, t.k)} = {t.value:.2f} misses its target (> {t.target:g}), but no "
                         f"ranking could meet it with these labels: the best possible is {t.best:.2f} (too few "
                         "relevant chunks per question for this cutoff)")
    return f"{system}: " + "; ".join(parts) + "."


# ---- examples ------------------------------------------------------------------------------------
def _terms(question: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(question) if len(w) > 2 and w.lower() not in _STOP}


def snippet(text: str, question: str, chars: int = SNIPPET_CHARS) -> tuple[Segment, ...]:
    """A short window of ``text`` (about ``chars`` characters) where the question's words are densest,
    split into ``(piece, highlighted)`` segments; ``…`` marks cut ends.  Whitespace is collapsed."""
    flat = " ".join(text.split())
    terms = _terms(question)
    words = list(_WORD.finditer(flat))
    start = 0
    if len(flat) > chars and words and terms:
        hits = [m.start() for m in words if m.group().lower() in terms]
        if hits:  # the window holding the most question words
            best, j = (0, hits[0]), 0
            for i, h in enumerate(hits):
                while hits[j] < h - chars + 20:
                    j += 1
                if i - j + 1 > best[0]:
                    best = (i - j + 1, hits[j])
            start = max(0, best[1] - 30)
            sp = flat.rfind(" ", 0, start)
            start = 0 if sp < 0 else sp + 1
    end = min(len(flat), start + chars)
    if end < len(flat):
        sp = flat.rfind(" ", start, end)
        end = sp if sp > start else end
    window = flat[start:end]
    segs: list[Segment] = [("…", False)] if start > 0 else []
    pos = 0
    for m in _WORD.finditer(window):
        if m.group().lower() in terms:
            if m.start() > pos:
                segs.append((window[pos:m.start()], False))
            segs.append((m.group(), True))
            pos = m.end()
    if pos < len(window):
        segs.append((window[pos:], False))
    if end < len(flat):
        segs.append(("…", False))
    return tuple(segs)


@dataclass(frozen=True)
class StoryChunk:
    """A retrieved (or expected) chunk as the story shows it."""

    rank: int            # 0: expected but not in the top K
    chunk_id: str
    relevant: bool
    grade: int
    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class StoryExample:
    """A win, a miss or a near miss: the question, where its first relevant chunk came, and chunks."""

    kind: str            # "win", "miss" or "near miss"
    query_id: str
    question: str
    k: int
    first_relevant_rank: int  # 0: no relevant chunk retrieved
    sentence: str
    chunks: tuple[StoryChunk, ...]


def _example(result: EvaluationResult, q: int, kind: str, k: int, texts: Mapping[str, str]) -> StoryExample:
    gq = result.golden.queries[q]
    level = result.options.relevance_level
    ids, _, grades = result.judged.ranking(q)
    first = int(result.first_relevant_rank()[q])
    chunks: list[StoryChunk] = []

    def add(rank: int, cid: str, grade: int) -> None:
        chunks.append(StoryChunk(rank, cid, grade >= level, int(grade), snippet(texts.get(cid, ""), gq.question)))

    if kind == "win":
        add(1, ids[0], grades[0])
        sentence = f"The first retrieved chunk answers it (rank 1 of the top {k})."
    elif kind == "miss":
        if ids:
            add(1, ids[0], grades[0])
        if first > 0:
            add(first, ids[first - 1], grades[first - 1])
        else:
            expected = next((i for i in gq.relevant_ids if gq.relevant[i] >= level), None)
            if expected is not None:
                add(0, expected, gq.relevant[expected])
        sentence = (f"No relevant chunk in the top {k}: the answer is at rank {first}." if first > 0 else
                    f"No relevant chunk in the top {k}, nor anywhere in the retrieved list.")
    else:
        if first > k:
            add(1, ids[0], grades[0])
            add(first, ids[first - 1], grades[first - 1])
            sentence = (f"Almost: the first relevant chunk is at rank {first}, just below the cutoff K = {k}; "
                        f"K = {first} would count it.")
        else:
            add(first, ids[first - 1], grades[first - 1])
            sentence = f"A hit, but low: the first relevant chunk is at rank {first} of {k}."
    return StoryExample(kind, gq.id, gq.question, int(k), first, sentence, tuple(chunks))


def pick_examples(result: EvaluationResult, k: int, chunk_text: Mapping[str, str] | None = None,
                  ) -> tuple[StoryExample, ...]:
    """Up to three in-scope questions that enter the means: a win (first relevant at rank 1, the best
    NDCG@k first), a miss (nothing relevant in the top k; preferably found further down) and a near
    miss (the smallest first-relevant rank above k, else the hit with the largest rank below it).
    Golden order breaks ties; a kind with no such question is left out."""
    texts = chunk_text or {}
    inc = np.flatnonzero(result.included & result.in_scope)
    first = result.first_relevant_rank()
    ndcg = result.values("ndcg", k)
    used: set[int] = set()
    out = []
    wins = [q for q in inc if first[q] == 1]
    if wins:
        q = int(max(wins, key=lambda q: (ndcg[q], -q)))
        used.add(q)
        out.append(_example(result, q, "win", k, texts))
    beyond = sorted((q for q in inc if first[q] > k), key=lambda q: (first[q], q))
    low = [q for q in inc if 1 < first[q] <= k and q not in used]
    near = beyond[0] if beyond else (max(low, key=lambda q: (first[q], -q)) if low else None)
    nowhere = [q for q in inc if first[q] == 0]
    miss = nowhere[0] if nowhere else (beyond[-1] if len(beyond) > 1 else None)
    if miss is not None:
        out.append(_example(result, int(miss), "miss", k, texts))
    if near is not None:
        out.append(_example(result, int(near), "near miss", k, texts))
    return tuple(out)


# ---- the story -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Story:
    """What the Presenter view and the report lead with."""

    system: str
    k: int
    targets: tuple[TargetReadout, ...]
    verdict: str
    baseline: tuple[str, ...]      # plain sentences (one decision rule): the summary, then the targets' metrics
    baseline_names: tuple[str, str]
    examples: tuple[StoryExample, ...]
    baseline_more: tuple[str, ...] = ()  # the other metrics' plain sentences


def presenter_story(result: EvaluationResult, k: int, *, system: str = "the system",
                    chunk_text: Mapping[str, str] | None = None, comparison: pd.DataFrame | None = None,
                    comparison_names: tuple[str, str] = ("A", "B")) -> Story:
    """The story of ``result`` at ``k``: targets with what is achievable, the verdict in one sentence,
    the comparison (a :func:`rag_metrics.compare.paired.compare` table, A = ours, B = the baseline) in plain
    words, and the three example questions."""
    k = check_k(k)
    targets = target_readouts(result, k)
    baseline: tuple[str, ...] = ()
    more: tuple[str, ...] = ()
    if comparison is not None and len(comparison):
        from rag_metrics.compare.paired import comparison_summary, plain_verdict

        focus = {t.metric for t in targets}
        rows = [(str(r["metric"]) in focus, plain_verdict(r, *comparison_names)) for _, r in comparison.iterrows()]
        baseline = (comparison_summary(comparison, *comparison_names, plain=True),) + tuple(v for f, v in rows if f)
        more = tuple(v for f, v in rows if not f)
    names = (str(comparison_names[0]), str(comparison_names[1]))
    return Story(system, k, targets, verdict_sentence(targets, system), baseline, names,
                 pick_examples(result, k, chunk_text), more)
