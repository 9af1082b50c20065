"""Badges of drafted questions, computed by the lab (never by the model that wrote them).

``answerable``
    The judge grades (UMBRELA 0-3) the question against each source chunk: answerable when every
    source gets at least 1 and one gets at least :attr:`BadgeSettings.answerable_grade` (2). For an
    ``out_of_scope`` draft the badge is good when it is **False**.  ``None`` when the judge gave
    no usable grade.
``self_contained``
    No reference to a text the user cannot see ("the passage", "this document", "above", "the
    following", "mentioned"...) and no opening pronoun without a referent ("it", "they", "this").
``near_duplicate``
    Cosine similarity (the encoder given: the corpus's model) with the most similar existing golden
    question or earlier draft is at least :attr:`BadgeSettings.near_duplicate`, by default the
    encoder's own threshold (:func:`rag_metrics.retrieval.choice.thresholds_for`: 0.9 for the bundled
    all-MiniLM-L6-v2); ``nearest`` names it.
``word_overlap`` / ``too_easy``
    Share of the question's content words (stop words removed) that occur in its sources; at or
    above :attr:`BadgeSettings.too_easy_overlap` (0.7) the question is flagged "too easy for
    keyword search": BM25 finds it by copying, real users paraphrase.
``found_within_k``
    ``{system: bool}``: does each bundled retriever return a source chunk in its top K?
    (Not for out-of-scope drafts.)
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rag_metrics.authoring.drafting.questions import Draft, content_words
from rag_metrics.errors import InputError
from rag_metrics.types import OUT_OF_SCOPE, GoldenSet

__all__ = ["DEFAULT_BADGES", "BadgeSettings", "add_badges", "answerable_from", "local_badges", "near_duplicates",
           "self_contained", "word_overlap"]

_REFERS = re.compile(
    r"\b(?:the|this|that|these|those|above|following|given|provided)\s+(?:passage|text|document|excerpt|paragraph|"
    r"section|article|context|snippet|page|passages)\b|\b(?:mentioned|described|stated|listed)\s+(?:above|here|in "
    r"the)\b|\baccording to (?:the|this) (?:passage|text|document|context)\b|\bas (?:above|below)\b", re.IGNORECASE)
_OPENING_PRONOUN = re.compile(r"^\s*(?:it|they|this|that|these|those|he|she)\b(?!\s+(?:is|are)\s+(?:possible|"
                              r"true))", re.IGNORECASE)


@dataclass(frozen=True)
class BadgeSettings:
    """Thresholds of the badges (each documented in the module); ``near_duplicate`` ``None``: the
    encoder's (:func:`rag_metrics.retrieval.choice.thresholds_for`)."""

    near_duplicate: float | None = None
    too_easy_overlap: float = 0.7
    k: int = 5
    answerable_grade: int = 2

    def __post_init__(self) -> None:
        for name in ("near_duplicate", "too_easy_overlap"):
            v = getattr(self, name)
            if v is None and name == "near_duplicate":
                continue
            if not 0.0 <= float(v) <= 1.0:
                raise InputError(f"badge threshold {name} must be in [0, 1], got {v!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise InputError(f"badge K must be an integer >= 1, got {self.k!r}")
        if self.answerable_grade not in (1, 2, 3):
            raise InputError(f"answerable grade must be 1, 2 or 3, got {self.answerable_grade!r}")


#: The default thresholds.
DEFAULT_BADGES = BadgeSettings()


def self_contained(question: str) -> tuple[bool, str]:
    """``(True, "")``, or ``(False, why)`` when the question leans on a text the user cannot see."""
    m = _REFERS.search(question)
    if m:
        return False, f"refers to {m.group(0)!r}"
    m = _OPENING_PRONOUN.match(question)
    if m:
        return False, f"opens with {m.group(0).strip()!r} without saying what it is"
    return True, ""


def word_overlap(question: str, sources: Sequence[str]) -> float:
    """Share of the question's distinct content words found in the sources (0 when it has none)."""
    q = set(content_words(question))
    if not q:
        return 0.0
    src = set(w for s in sources for w in content_words(s))
    return len(q & src) / len(q)


def answerable_from(grades: Sequence[int | None], settings: BadgeSettings | None = None) -> bool | None:
    """The answerable badge from the judge's grades of the source chunks (``None``: no usable grade)."""
    settings = settings or DEFAULT_BADGES
    if not grades or any(g is None for g in grades):
        return None
    got = [int(g) for g in grades if g is not None]
    return min(got) >= 1 and max(got) >= settings.answerable_grade


def near_duplicates(questions: Sequence[str], existing: Sequence[tuple[str, str]], encoder: Any
                    ) -> list[tuple[str | None, float]]:
    """For each question, the most similar of ``existing`` ``(id, text)`` **and of the questions
    before it**: ``(id or "draft:<n>", cosine)``; ``(None, 0.0)`` when there is nothing to compare."""
    if not questions:
        return []
    texts = [t for _, t in existing] + list(questions)
    vecs = np.asarray(encoder.encode(texts), dtype=np.float64)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.maximum(norms, 1e-12)
    n_old = len(existing)
    sims = vecs[n_old:] @ vecs.T
    out: list[tuple[str | None, float]] = []
    for i in range(len(questions)):
        row = sims[i, : n_old + i]  # existing questions and earlier drafts only
        if row.size == 0:
            out.append((None, 0.0))
            continue
        j = int(np.argmax(row))
        out.append((existing[j][0] if j < n_old else f"draft:{j - n_old}", float(row[j])))
    return out


def local_badges(question: str, category: str, sources: Sequence[str], settings: BadgeSettings | None = None
                 ) -> dict[str, Any]:
    """The badges that need neither the judge nor a model (recomputed when a person edits a draft)."""
    settings = settings or DEFAULT_BADGES
    ok, why = self_contained(question)
    ov = word_overlap(question, sources)
    return {"self_contained": ok, "self_contained_reason": why, "word_overlap": round(ov, 4),
            "too_easy": bool(ov >= settings.too_easy_overlap and category != OUT_OF_SCOPE)}


def add_badges(drafts: Sequence[Draft], texts: Mapping[str, str], *, golden: GoldenSet | None = None,
               encoder: Any = None, rankings: Mapping[str, Callable[[Sequence[str]], Sequence[Sequence[str]]]]
               | None = None, answer_grades: Mapping[str, Sequence[int | None]] | None = None,
               settings: BadgeSettings | None = None) -> list[Draft]:
    """The drafts with their badges (drafts without a question are returned unchanged).

    Parameters
    ----------
    texts
        ``{chunk id: text}`` of the sources.
    golden
        The existing questions (near-duplicate check); ``None``: drafts are compared among themselves.
    encoder
        An :class:`~rag_metrics.retrieval.encoders.Encoder`; ``None`` skips the near-duplicate badge.
    rankings
        ``{system: search}`` where ``search(questions)`` returns each question's ranked ids (at
        least ``settings.k``); ``None`` skips ``found_within_k``.
    answer_grades
        ``{draft id: judge grades of its sources, in order}``
        (:func:`rag_metrics.authoring.drafting.review.answerability_pairs` builds the pairs to grade).
    """
    settings = settings or DEFAULT_BADGES
    live = [d for d in drafts if d.ok]
    dup: dict[str, tuple[str | None, float]] = {}
    near = settings.near_duplicate
    if near is None:
        from rag_metrics.retrieval.choice import thresholds_for

        near = thresholds_for(getattr(encoder, "name", None)).question_duplicate
    if encoder is not None and live:
        existing = [(q.id, q.question) for q in golden if q.question.strip()] if golden is not None else []
        for d, hit in zip(live, near_duplicates([d.question or "" for d in live], existing, encoder)):
            dup[d.id] = hit
    found: dict[str, dict[str, bool]] = {d.id: {} for d in live}
    scoped = [d for d in live if d.category != OUT_OF_SCOPE]
    if rankings and scoped:
        for name, search in rankings.items():
            ranked = search([d.question or "" for d in scoped])
            for d, ids in zip(scoped, ranked):
                found[d.id][name] = bool(set(list(ids)[: settings.k]) & set(d.source_chunk_ids))
    out = []
    for d in drafts:
        if not d.ok:
            out.append(d)
            continue
        b: dict[str, Any] = local_badges(d.question or "", d.category, [texts.get(i, "") for i in d.source_chunk_ids],
                                         settings)
        grades = list((answer_grades or {}).get(d.id, ()))
        b["answer_grades"] = dict(zip(d.source_chunk_ids, grades)) if grades else {}
        b["answerable"] = answerable_from(grades, settings) if grades else None
        if d.id in dup:
            nid, sim = dup[d.id]
            b["near_duplicate"] = bool(nid is not None and sim >= near)
            if nid is not None and nid.startswith("draft:"):
                nid = live[int(nid[6:])].id
            b["nearest"] = {"id": nid, "similarity": round(sim, 4)}
        else:
            b["near_duplicate"] = None
        b["found_within_k"] = found.get(d.id, {}) if d.category != OUT_OF_SCOPE else {}
        b["k"] = settings.k
        out.append(replace(d, badges=b))
    return out
