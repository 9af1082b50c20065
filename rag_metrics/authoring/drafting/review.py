"""Drafting end to end (draft, check answerability, badges) and the review a person does.

:func:`draft_golden_questions` is the one pipeline behind ``rag-metrics draft`` and the app:
one call per draft, then one UMBRELA call per source chunk (the answerable badge), then the
lab's badges.  :class:`DraftReview` is the queue of drafts a person goes through: **accept**
(optionally edited) adds the question to the golden set with its provenance (``origin="drafted"``,
the drafting record, its source chunks labelled with ``label_origin="source"``), **reject** needs
a reason; nothing is added without a person.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rag_metrics.answers.llm import JudgeConfig
from rag_metrics.answers.types import CancelCheck, JudgeProgress
from rag_metrics.authoring.drafting.badges import DEFAULT_BADGES, BadgeSettings, add_badges, local_badges
from rag_metrics.authoring.drafting.questions import CATEGORIES, Draft, QuestionDrafter, draft_prompt, sample_sources
from rag_metrics.authoring.judge_calls import approx_tokens
from rag_metrics.authoring.relevance_judge import RelevanceJudge, RelevancePair, umbrela_prompt
from rag_metrics.errors import InputError
from rag_metrics.io.free_ids import free_id
from rag_metrics.io.golden import stable_query_id
from rag_metrics.types import DRAFTED, OUT_OF_SCOPE, SOURCE, Chunk, GoldenQuery, GoldenSet

__all__ = ["ACCEPTED", "PENDING", "REJECTED", "DraftReview", "DraftingResult", "answerability_pairs",
           "draft_golden_questions", "planned_calls", "planned_prompt_tokens"]

PENDING, ACCEPTED, REJECTED = "pending", "accepted", "rejected"
#: ``progress(phase, JudgeProgress)``; phases ``"drafting"`` then ``"answerable"``.
PhaseProgress = Callable[[str, JudgeProgress], None]


def planned_calls(chunks: Sequence[Chunk], n: int, categories: Sequence[str] = CATEGORIES, seed: int = 0,
                  check_answerable: bool = True) -> int:
    """Judge calls :func:`draft_golden_questions` makes at most: one per draft, plus one per source
    chunk of every draft for the answerable badge (known before running: sampling is seeded)."""
    plan = sample_sources(chunks, n, categories, seed)
    return len(plan) + (sum(len(src) for _, src, _ in plan) if check_answerable else 0)


def planned_prompt_tokens(chunks: Sequence[Chunk], n: int, categories: Sequence[str] = CATEGORIES,
                          seed: int = 0, check_answerable: bool = True) -> int:
    """Approximate prompt tokens of :func:`draft_golden_questions` (the answerability prompts are
    counted with a question of 20 tokens)."""
    total = 0
    for cat, src, _ in sample_sources(chunks, n, categories, seed):
        total += approx_tokens(draft_prompt(cat, [c.text for c in src]))
        if check_answerable:
            total += sum(approx_tokens(umbrela_prompt("x" * 80, c.text)) for c in src)
    return total


def answerability_pairs(drafts: Sequence[Draft], texts: Mapping[str, str]) -> list[RelevancePair]:
    """One (draft question, source chunk) pair per source of every usable draft."""
    return [RelevancePair(d.id, d.question or "", i, texts.get(i, "")) for d in drafts if d.ok
            for i in d.source_chunk_ids]


@dataclass(frozen=True)
class DraftingResult:
    drafts: tuple[Draft, ...]
    planned: int
    drafting: JudgeProgress
    answerable: JudgeProgress | None

    @property
    def calls(self) -> int:
        """Calls that went to the endpoint (cache hits excluded)."""
        return sum(p.done - p.cache_hits for p in (self.drafting, self.answerable) if p is not None)

    @property
    def cache_hits(self) -> int:
        return sum(p.cache_hits for p in (self.drafting, self.answerable) if p is not None)

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in (self.drafting, self.answerable) if p is not None)


def draft_golden_questions(chunks: Sequence[Chunk], n: int, config: JudgeConfig, *,
                           categories: Sequence[str] = CATEGORIES, seed: int = 0, golden: GoldenSet | None = None,
                           encoder: Any = None, rankings: Mapping[str, Any] | None = None,
                           settings: BadgeSettings = DEFAULT_BADGES, check_answerable: bool = True,
                           api_key: str | None = None, cache: Any = None, client: Any = None,
                           progress: PhaseProgress | None = None, cancel: CancelCheck | None = None,
                           policy: Any = None) -> DraftingResult:
    """Draft ``n`` questions from ``chunks`` and badge them (arguments: :class:`QuestionDrafter`,
    :func:`~rag_metrics.authoring.drafting.badges.add_badges`).  Cancelling keeps the drafts made so far;
    the others carry status ``cancelled``."""
    texts = {c.id: c.text for c in chunks}
    drafter = QuestionDrafter(config, api_key=api_key, cache=cache, client=client, policy=policy)
    planned = planned_calls(chunks, n, categories, seed, check_answerable)
    drafts = drafter.draft(chunks, n, categories, seed=seed, cancel=cancel,
                           progress=(lambda p: progress("drafting", p)) if progress else None)
    grades: dict[str, list[int | None]] = {}
    check_progress = None
    if check_answerable and not (cancel is not None and cancel()):
        judge = RelevanceJudge(config, api_key=api_key, cache=drafter.caller.cache if drafter.caller.cache is not None
                               else False, client=drafter.caller._client, policy=policy)
        pairs = answerability_pairs(drafts, texts)
        sugg = judge.grade(pairs, cancel=cancel, progress=(lambda p: progress("answerable", p)) if progress else None)
        for s in sugg:
            grades.setdefault(s.query_id, []).append(s.grade if s.ok else None)
        check_progress = judge.last_progress
    badged = add_badges(drafts, texts, golden=golden, encoder=encoder, rankings=rankings, answer_grades=grades,
                        settings=settings)
    return DraftingResult(tuple(badged), planned, drafter.last_progress, check_progress)


@dataclass
class DraftReview:
    """The person's pass over the drafts (Streamlit-free; the app keeps one per corpus)."""

    drafts: list[Draft] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)      # draft id -> pending/accepted/rejected
    reasons: dict[str, str] = field(default_factory=dict)     # draft id -> why rejected
    edits: dict[str, str] = field(default_factory=dict)       # draft id -> question as edited
    query_ids: dict[str, str] = field(default_factory=dict)   # draft id -> golden query id once accepted
    settings: BadgeSettings = field(default_factory=BadgeSettings)

    def add(self, drafts: Sequence[Draft]) -> int:
        """Queue the reviewable drafts (a usable question) not queued yet; returns how many."""
        have = {d.id for d in self.drafts}
        new = [d for d in drafts if d.ok and d.id not in have]
        self.drafts.extend(new)
        for d in new:
            self.status[d.id] = PENDING
        return len(new)

    def get(self, draft_id: str) -> Draft:
        for d in self.drafts:
            if d.id == draft_id:
                return d
        raise InputError(f"draft {draft_id!r} is not in the review queue")

    def pending(self) -> list[Draft]:
        return [d for d in self.drafts if self.status.get(d.id) == PENDING]

    def progress(self) -> dict[str, int]:
        out = {PENDING: 0, ACCEPTED: 0, REJECTED: 0}
        for d in self.drafts:
            out[self.status.get(d.id, PENDING)] += 1
        return {**out, "total": len(self.drafts)}

    def question(self, draft_id: str) -> str:
        """The question as it stands (the person's edit, else the draft)."""
        return self.edits.get(draft_id) or self.get(draft_id).question or ""

    def edit(self, draft_id: str, text: str, texts: Mapping[str, str] | None = None) -> Draft:
        """Change the question; the local badges (self-contained, overlap) follow the edit."""
        d = self.get(draft_id)
        text = " ".join(text.split())
        if not text:
            raise InputError("the edited question is empty; type the question or reject the draft")
        if text == (d.question or ""):
            self.edits.pop(draft_id, None)
            return d
        self.edits[draft_id] = text
        if texts is not None:
            b = {**d.badges, **local_badges(text, d.category, [texts.get(i, "") for i in d.source_chunk_ids],
                                            self.settings), "edited": True}
            d = replace(d, badges=b)
            self.drafts = [d if x.id == draft_id else x for x in self.drafts]
        return d

    def reject(self, draft_id: str, reason: str) -> None:
        reason = reason.strip()
        if not reason:
            raise InputError("say why the draft is rejected (e.g. 'not answerable', 'duplicate', 'too easy')")
        self.get(draft_id)
        self.status[draft_id] = REJECTED
        self.reasons[draft_id] = reason

    def accept(self, draft_id: str, golden: GoldenSet) -> GoldenSet:
        """``golden`` with the draft added as a drafted question (its provenance kept).

        Its source chunks are labelled (grade: the judge's answer grade when at least 1, else 2)
        and marked ``label_origin="source"``; an out-of-scope draft gets no label.  The queue's
        pooled candidates from every system then offer the other relevant chunks."""
        d = self.get(draft_id)
        if self.status.get(draft_id) == ACCEPTED and self.query_ids.get(draft_id) in set(golden.ids):
            return golden
        text = self.question(draft_id)
        qid = free_id(stable_query_id(text), golden.ids)
        grades = dict(d.badges.get("answer_grades") or {})
        rel = {} if d.category == OUT_OF_SCOPE else {
            i: (int(grades[i]) if isinstance(grades.get(i), int) and grades[i] >= 1 else 2) for i in d.source_chunk_ids}
        record: dict[str, Any] = {"draft_id": d.id, "source_chunk_ids": list(d.source_chunk_ids),
                                  "generation": dict(d.generation), "badges": dict(d.badges)}
        if draft_id in self.edits:
            record["drafted_question"] = d.question
        q = GoldenQuery(qid, text, d.category, rel, None, origin=DRAFTED, draft=record,
                        label_origin={i: SOURCE for i in rel})
        self.status[draft_id] = ACCEPTED
        self.query_ids[draft_id] = qid
        return GoldenSet(tuple(golden.queries) + (q,), golden.name)
