"""Relevance suggestions from an LLM judge on UMBRELA's 0-3 scale, for pooled (question, chunk) pairs.

The prompt follows the structure of UMBRELA (Upadhyay et al. 2024, "UMBRELA: UMbrela is the
(Open-Source Reproduction of the) Bing RELevance Assessor", castorini/umbrela, its
``qrel_zeroshot_bing`` prompt): the question, the passage, the meaning of each grade 0-3, the
steps (intent, match M, trustworthiness T, final O) and the reply line ``##final score: N``.
Replies are read tolerantly (:func:`rag_metrics.authoring.judge_replies.parse_grade`); a reply without a
grade is a per-pair status, never a guess.

A suggestion is not a label: the queue shows it beside the chunk and a person's label always wins
(:func:`completed_golden` writes judge grades only where no person judged).  With ``n_samples``
2 or more each pair is asked again (another sample number, so another cache entry); pairs whose
samples disagree, then pairs on the 1-2 boundary, are the ones where the judge is least reliable
(:func:`unreliability`), and the queue shows them first.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rag_metrics.answers.llm import JudgeConfig
from rag_metrics.answers.types import CancelCheck, JudgeProgress, ProgressCallback
from rag_metrics.authoring.judge_calls import CALL_STATUSES, ChatCaller, Prompt, approx_tokens
from rag_metrics.authoring.judge_replies import parse_grade
from rag_metrics.errors import InputError
from rag_metrics.types import JUDGE, OUT_OF_SCOPE, GoldenSet, Run

__all__ = [
    "GRADE_MEANINGS", "PROMPT_VERSION", "RelevanceJudge", "RelevancePair", "RelevanceSuggestion",
    "completed_golden", "judge_golden", "least_reliable_first", "planned_prompt_tokens", "pooled_pairs",
    "umbrela_prompt", "unreliability",
]

#: Identifies the prompt below in generation records and cache keys (change it with the text).
PROMPT_VERSION = "umbrela-0-3/v1"
#: UMBRELA's grades (the labelling queue's 1-3 read the same way; 0 = judged not relevant).
GRADE_MEANINGS: Mapping[int, str] = {
    0: "the passage has nothing to do with the question",
    1: "the passage seems related to the question but does not answer it",
    2: "the passage has some answer for the question, but the answer may be a bit unclear or hidden "
       "amongst extraneous information",
    3: "the passage is dedicated to the question and contains the exact answer",
}
#: Passages are cut to this many characters in the prompt.
MAX_PASSAGE_CHARS = 4000


def umbrela_prompt(question: str, passage: str) -> str:
    """The grading prompt for one pair (UMBRELA's structure, 0-3 scale, ``##final score: N``)."""
    scale = "\n".join(f"{g} = {m}" for g, m in GRADE_MEANINGS.items())
    return (
        "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the "
        f"following meanings:\n{scale}\n\n"
        "Important instruction: assign 1 if the passage is somewhat related to the topic but not completely, "
        "2 if the passage presents something very important related to the entire topic but also has some "
        "extra information, and 3 if the passage only and entirely refers to the topic. If none of the above "
        "applies, give 0.\n\n"
        f"Query: {question.strip()}\n"
        f"Passage: {passage.strip()[:MAX_PASSAGE_CHARS]}\n\n"
        "Split this problem into steps:\n"
        "Consider the underlying intent of the search.\n"
        "Measure how well the content matches a likely intent of the query (M).\n"
        "Measure how trustworthy the passage is (T).\n"
        "Consider the aspects above and the relative importance of each, and decide on a final score (O). "
        "The final score must be an integer value only.\n"
        "Do not provide any code in the result. Provide the final score in the format: ##final score: score"
    )


@dataclass(frozen=True)
class RelevancePair:
    """One (question, chunk) pair to grade; ``people`` is the person's grade when one exists."""

    query_id: str
    question: str
    item_id: str
    text: str
    people: int | None = None
    n_systems: int = 1
    best_rank: int = 1


@dataclass(frozen=True)
class RelevanceSuggestion:
    """The judge's grade of one pair (``grade`` is ``None`` unless ``status`` is ``"ok"``).

    ``samples`` holds every sample's grade (``None`` for an unusable one); ``grade`` is their
    median (rounded down), and ``reply`` the start of the first reply (for the per-item status).
    """

    query_id: str
    item_id: str
    grade: int | None
    status: str = "ok"
    message: str = ""
    samples: tuple[int | None, ...] = ()
    reply: str = ""
    people: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def key(self) -> tuple[str, str]:
        return (self.query_id, self.item_id)


def unreliability(s: RelevanceSuggestion) -> float:
    """How little to trust a suggestion (higher first in the queue).

    Unusable (10.0); samples that disagree (1.0 + the spread of the grades, so 2 apart beats 1);
    a grade on the 1-2 boundary, where UMBRELA and people disagree most (0.5); a clear 0 or 3 (0.0).
    """
    if not s.ok or s.grade is None:
        return 10.0
    got = [g for g in s.samples if g is not None]
    if len(got) > 1 and max(got) != min(got):
        return 1.0 + (max(got) - min(got))
    return 0.5 if s.grade in (1, 2) else 0.0


def least_reliable_first(suggestions: Iterable[RelevanceSuggestion]) -> list[RelevanceSuggestion]:
    """Suggestions sorted by :func:`unreliability` (descending), stable otherwise."""
    return sorted(suggestions, key=lambda s: -unreliability(s))


def pooled_pairs(golden: GoldenSet, runs: Mapping[str, Run], k: int, texts: Mapping[str, str], *,
                 unjudged_only: bool = True, unlabelled_as_zero: bool = False) -> list[RelevancePair]:
    """The (question, chunk) pairs in the top ``k`` of any run (TREC pooling), in golden order.

    Parameters
    ----------
    golden
        Questions and people's labels; an id is judged when it has a label (grade 0 included).
    runs
        ``{system: Run}`` keyed by golden query ids.
    k
        Pool depth per system.
    texts
        ``{chunk id: text}``; ids without a text (e.g. ``unmatched:`` contexts of a RAG log) are
        left out.
    unjudged_only
        ``True``: only pairs without a person's label (the holes to fill).  ``False``: every
        pooled pair, with the person's grade in ``people`` (to measure agreement).
    unlabelled_as_zero
        For golden sets whose labels are complete (the sample: every chunk overlapping an evidence
        quote is labelled): an unlabelled pooled chunk of a labelled, in-scope question counts as
        the person's 0.  Off by default: in TREC an unjudged document is not a judgement.

    Returns
    -------
    list of RelevancePair
        Inside a question: retrieved by more systems first, then best rank, then id.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"pool depth k must be an integer >= 1, got {k!r}")
    if not runs:
        raise InputError("pooling needs at least one system's run")
    ranked = {name: run.rankings() for name, run in runs.items()}
    out: list[RelevancePair] = []
    for q in golden:
        if not q.question.strip() or q.category == OUT_OF_SCOPE:
            continue  # people said the corpus cannot answer it: nothing to grade
        seen: dict[str, list[int]] = {}
        for rk in ranked.values():
            for r, (i, _) in enumerate(rk.get(q.id, [])[:k], 1):
                if i in texts:
                    seen.setdefault(i, []).append(r)
        rows = []
        for i, ranks in seen.items():
            people = q.relevant.get(i)
            if people is not None and q.label_source(i) == JUDGE:
                people = None  # a judge's label is not a person's
            if people is None and unlabelled_as_zero and q.in_scope:
                people = 0
            if unjudged_only and people is not None:
                continue
            rows.append(RelevancePair(q.id, q.question, i, texts[i], None if people is None else int(people),
                                      len(ranks), min(ranks)))
        rows.sort(key=lambda p: (-p.n_systems, p.best_rank, p.item_id))
        out.extend(rows)
    return out


def planned_prompt_tokens(pairs: Sequence[RelevancePair], n_samples: int = 1) -> int:
    """Approximate prompt tokens of grading ``pairs`` (before running; see
    :func:`~rag_metrics.authoring.judge_calls.approx_tokens`)."""
    return sum(approx_tokens(umbrela_prompt(p.question, p.text)) for p in pairs) * n_samples


class RelevanceJudge:
    """UMBRELA 0-3 grades for (question, chunk) pairs through an OpenAI-compatible endpoint.

    Parameters
    ----------
    config : JudgeConfig
    n_samples : int
        Samples per pair (2+ measures the judge's own consistency; cost multiplies).
    api_key, cache, client, policy
        As for :class:`~rag_metrics.authoring.judge_calls.ChatCaller`.
    """

    def __init__(self, config: JudgeConfig, *, n_samples: int = 1, api_key: str | None = None,
                 cache: Any = None, client: Any = None, policy: Any = None) -> None:
        if isinstance(n_samples, bool) or not isinstance(n_samples, int) or not 1 <= n_samples <= 5:
            raise InputError(f"n_samples must be an integer from 1 to 5, got {n_samples!r}")
        self.n_samples = n_samples
        self.caller = ChatCaller(config, api_key=api_key, cache=cache, client=client, policy=policy)
        self.name = f"umbrela:{config.chat_model}@{config.base_url}"

    def planned_calls(self, n_pairs: int) -> int:
        """Calls a run over ``n_pairs`` pairs makes at most (cache hits cost nothing)."""
        return n_pairs * self.n_samples

    def planned_prompt_tokens(self, pairs: Sequence[RelevancePair]) -> int:
        return planned_prompt_tokens(pairs, self.n_samples)

    def grade(self, pairs: Sequence[RelevancePair], progress: ProgressCallback | None = None,
              cancel: CancelCheck | None = None) -> list[RelevanceSuggestion]:
        """One suggestion per pair, in order (unusable replies and failures carry a status)."""
        prompts = [Prompt(umbrela_prompt(p.question, p.text), sample=s)
                   for p in pairs for s in range(self.n_samples)]
        replies = self.caller.ask(prompts, progress=progress, cancel=cancel)
        out = []
        for n, p in enumerate(pairs):
            mine = replies[n * self.n_samples:(n + 1) * self.n_samples]
            samples = tuple(parse_grade(r.content) if r.ok else None for r in mine)
            got = sorted(g for g in samples if g is not None)
            first_bad = next((r for r in mine if not r.ok), None)
            snippet = (mine[0].content if mine else "")[:200]
            if got:
                out.append(RelevanceSuggestion(p.query_id, p.item_id, got[(len(got) - 1) // 2], "ok", "",
                                               samples, snippet, p.people))
            elif first_bad is not None:
                out.append(RelevanceSuggestion(p.query_id, p.item_id, None, first_bad.status, first_bad.message,
                                               samples, snippet, p.people))
            else:
                out.append(RelevanceSuggestion(p.query_id, p.item_id, None, "unusable_reply",
                                               f"{CALL_STATUSES['unusable_reply']}: {snippet[:120]!r}",
                                               samples, snippet, p.people))
        return out

    @property
    def last_progress(self) -> JudgeProgress:
        return self.caller.last_progress


def completed_golden(golden: GoldenSet, suggestions: Iterable[RelevanceSuggestion]) -> GoldenSet:
    """People's labels plus the judge's grades for the pairs no person judged (marked
    ``label_origin = "judge"``); a person's label always wins, unusable suggestions add nothing."""
    add: dict[str, dict[str, int]] = {}
    for s in suggestions:
        if s.ok and s.grade is not None:
            add.setdefault(s.query_id, {})[s.item_id] = s.grade
    out = []
    for q in golden:
        new = {i: g for i, g in add.get(q.id, {}).items() if i not in q.relevant}
        if new and q.category != OUT_OF_SCOPE:
            q = q.relabelled({**q.relevant, **new}, by=JUDGE)
        out.append(q)
    return GoldenSet(tuple(out), golden.name)


def judge_golden(golden: GoldenSet, suggestions: Iterable[RelevanceSuggestion]) -> GoldenSet:
    """The judge's labels *instead of* people's on every pair it graded (people's labels remain on
    pairs the judge did not grade, e.g. relevant chunks no system retrieved): the qrels UMBRELA's
    ranking correlation is measured with."""
    grades: dict[str, dict[str, int]] = {}
    for s in suggestions:
        if s.ok and s.grade is not None:
            grades.setdefault(s.query_id, {})[s.item_id] = s.grade
    out = []
    for q in golden:
        g = grades.get(q.id)
        if g:
            rel = {**q.relevant, **g}
            q = replace(q, relevant=rel, label_origin={**q.label_origin, **{i: JUDGE for i in g}})
        out.append(q)
    return GoldenSet(tuple(out), golden.name)
