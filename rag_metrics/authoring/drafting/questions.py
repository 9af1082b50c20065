"""Draft golden questions from the corpus's own chunks through the judge endpoint.

- **Which chunks** (:func:`sample_sources`): evenly across documents (round-robin over the
  documents in a seeded order, each document's chunks in a seeded order), skipping near-empty
  chunks; a comparison pairs the chunk with the chunk of *another* document that shares the most
  content words with it.
- **Which categories**: the lesson's four (:data:`CATEGORIES`), assigned in turn.
- **Each draft keeps** its source chunk ids and its generation settings (model, endpoint,
  sampling, prompt version, seed, sample number), so a golden question drafted today can be
  traced and re-drafted.
- Replies are read tolerantly (:func:`~rag_metrics.authoring.judge_replies.parse_question`); a reply
  without a usable question is a draft with status ``unusable_reply`` (kept, with the reply, so
  the person can see why).

Badges are the lab's, not the model's: :mod:`rag_metrics.authoring.drafting.badges`.
"""
from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rag_metrics.answers.types import CancelCheck, JudgeProgress, ProgressCallback
from rag_metrics.authoring.judge_replies import parse_question
from rag_metrics.errors import InputError
from rag_metrics.types import OUT_OF_SCOPE, Chunk

if TYPE_CHECKING:  # pragma: no cover - the client (openai) is imported when a drafter is made
    from rag_metrics.answers.llm import JudgeConfig

__all__ = ["CATEGORIES", "DRAFT_PROMPT_VERSION", "Draft", "QuestionDrafter", "content_words", "draft_prompt",
           "sample_sources"]

#: The lesson's question categories, in the order drafts cycle through them.
CATEGORIES: tuple[str, ...] = ("factual", "comparison", "procedural", OUT_OF_SCOPE)
DRAFT_PROMPT_VERSION = "draft/v1"
#: Chunks shorter than this (headings, fragments) are not used as sources when others exist.
MIN_SOURCE_CHARS = 120
_MAX_SOURCE_CHARS = 3000
_WORD = re.compile(r"[a-z0-9]+")
#: Words too common to say anything about overlap (and the suffix-free forms of a few).
STOP_WORDS = frozenset((
    "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "to", "in", "on", "at", "by", "for",
    "with", "from", "into", "onto", "over", "under", "about", "as", "is", "are", "was", "were", "be", "been",
    "being", "am", "do", "does", "did", "done", "have", "has", "had", "having", "i", "me", "my", "we", "our",
    "you", "your", "he", "she", "it", "its", "they", "them", "their", "this", "that", "these", "those",
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "can", "could", "should", "would",
    "will", "shall", "may", "might", "must", "not", "no", "yes", "there", "here", "than", "too", "very",
    "just", "also", "any", "some", "all", "each", "every", "more", "most", "other", "such", "only", "own",
    "same", "few", "many", "much", "get", "got", "gets", "make", "makes", "one", "two",
))

_INTRO = "You write test questions for evaluating a search system over a product's help center."
_RULES = ("Rules: write the question the way a real user would type it, in your own words rather than copying "
          "phrases from the passage; the question must make sense on its own, without seeing the passage "
          "(never say 'the passage', 'the text', 'this document' or 'above'); one question only.\n"
          'Reply with only a JSON object: {"question": "..."}')
_TASKS = {
    "factual": "Category: factual. Write one question that the passage answers with a specific fact "
               "(a number, a limit, a name, a yes/no).",
    "comparison": "Category: comparison. Write one question whose answer needs BOTH passages (compare, contrast "
                  "or combine what they say).",
    "procedural": "Category: procedural. Write one how-to question that the passage answers with steps, a "
                  "setting or a procedure.",
    OUT_OF_SCOPE: "Category: out_of_scope. Write one question a user of this product might plausibly ask on the "
                  "same topic, which the passage does NOT answer (a feature, limit or detail it never mentions). "
                  "Do not ask about something the passage says.",
}


def _stem(w: str) -> str:
    """A light English stem: plurals, -ing, -ed, a final e (include/includes/included/including)."""
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed") or len(w) > 4 and w.endswith(("sses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def content_words(text: str) -> list[str]:
    """Lower-cased words of ``text`` without stop words, with a light plural/-ing/-ed strip (the
    one tokenisation of drafting: word overlap and comparison pairing)."""
    out = []
    for w in _WORD.findall(text.lower()):
        if w in STOP_WORDS or len(w) < 2:
            continue
        out.append(_stem(w))
    return out


def draft_prompt(category: str, sources: Sequence[str]) -> str:
    """The drafting prompt for ``category`` over the source passage(s)."""
    if category not in _TASKS:
        raise InputError(f"unknown question category {category!r}; use one of {', '.join(CATEGORIES)}")
    if category == "comparison" and len(sources) != 2:
        raise InputError(f"a comparison question needs two passages, got {len(sources)}")
    if len(sources) == 1:
        body = f"Passage:\n{sources[0].strip()[:_MAX_SOURCE_CHARS]}"
    else:
        body = "\n\n".join(f"Passage {n}:\n{s.strip()[:_MAX_SOURCE_CHARS]}" for n, s in enumerate(sources, 1))
    return f"{_INTRO}\n{_TASKS[category]}\n{_RULES}\n\n{body}\n"


@dataclass(frozen=True)
class Draft:
    """One drafted question (``question`` is ``None`` unless ``status`` is ``"ok"``).

    ``badges`` are filled by :func:`rag_metrics.authoring.drafting.badges.add_badges`; ``generation`` holds
    the settings it was drafted with; ``reply`` the start of the judge's reply.
    """

    id: str
    question: str | None
    category: str
    source_chunk_ids: tuple[str, ...]
    generation: Mapping[str, Any] = field(default_factory=dict)
    status: str = "ok"
    message: str = ""
    badges: Mapping[str, Any] = field(default_factory=dict)
    reply: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.question)

    def to_json(self) -> dict[str, Any]:
        """The CLI's and the review's record: one JSON object per draft."""
        return {"id": self.id, "question": self.question, "category": self.category,
                "source_chunk_ids": list(self.source_chunk_ids), "badges": dict(self.badges),
                "generation": dict(self.generation), "status": self.status,
                **({"message": self.message} if self.message else {}),
                **({"reply": self.reply} if self.status != "ok" else {})}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Draft:
        q = obj.get("question")
        try:
            return cls(str(obj["id"]), " ".join(q.split()) if isinstance(q, str) and q.strip() else None,
                       str(obj.get("category", "")),
                       tuple(str(i) for i in obj.get("source_chunk_ids", ())), dict(obj.get("generation") or {}),
                       str(obj.get("status", "ok")), str(obj.get("message", "")), dict(obj.get("badges") or {}),
                       str(obj.get("reply", "")))
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"not a draft record ({err}); expected the objects `rag-metrics draft` writes") from None


def _pick_partner(chunk: Chunk, pool: Sequence[Chunk], words: Mapping[str, set[str]]) -> Chunk | None:
    mine = words[chunk.id]
    best, best_score = None, -1.0
    for c in pool:
        if c.doc_id == chunk.doc_id:
            continue
        other = words[c.id]
        score = len(mine & other) / (len(mine | other) or 1)
        if score > best_score:
            best, best_score = c, score
    return best


def sample_sources(chunks: Sequence[Chunk], n: int, categories: Sequence[str] = CATEGORIES,
                   seed: int = 0) -> list[tuple[str, tuple[Chunk, ...], int]]:
    """``n`` (category, source chunks, sample number) triples, evenly across documents.

    Documents are visited round-robin (seeded order), each contributing its chunks in a seeded
    order, so every document gives ``n // D`` or ``n // D + 1`` sources (``D`` documents).  A chunk
    used twice (``n`` above the number of chunks) gets a higher sample number, so the judge is
    asked anew rather than answered from the cache.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"the number of questions must be an integer >= 1, got {n!r}")
    cats = list(categories)
    if not cats:
        raise InputError(f"give at least one category ({', '.join(CATEGORIES)})")
    for name in cats:
        if name not in CATEGORIES:
            raise InputError(f"unknown question category {name!r}; use one of {', '.join(CATEGORIES)}")
    usable = [c for c in chunks if len(c.text.strip()) >= MIN_SOURCE_CHARS] or [c for c in chunks if c.text.strip()]
    if not usable:
        raise InputError("the corpus has no chunk with text to draft questions from")
    rng = random.Random(seed)
    by_doc: dict[str, list[Chunk]] = {}
    for c in usable:
        by_doc.setdefault(c.doc_id, []).append(c)
    docs = list(by_doc)
    rng.shuffle(docs)
    for d in docs:
        rng.shuffle(by_doc[d])
    order: list[Chunk] = []
    depth = max(len(v) for v in by_doc.values())
    for j in range(depth):
        order.extend(by_doc[d][j] for d in docs if j < len(by_doc[d]))
    words = {c.id: set(content_words(c.text)) for c in usable} if "comparison" in cats else {}
    partner_pool = usable if len(usable) <= 600 else rng.sample(usable, 600)
    uses: dict[tuple[str, ...], int] = {}
    out = []
    for i in range(n):
        cat = cats[i % len(cats)]
        c = order[i % len(order)]
        src: tuple[Chunk, ...] = (c,)
        if cat == "comparison":
            other = _pick_partner(c, partner_pool, words)
            if other is None:  # a one-document corpus: the farthest chunk of the same document
                same = [x for x in by_doc[c.doc_id] if x.id != c.id]
                other = same[-1] if same else None
            src = (c, other) if other is not None else (c,)
            if other is None:
                cat = "factual"
        key = (cat,) + tuple(x.id for x in src)
        sample = uses.get(key, 0)
        uses[key] = sample + 1
        out.append((cat, src, sample))
    return out


def _draft_id(category: str, ids: Sequence[str], sample: int) -> str:
    return "d-" + hashlib.sha1("\x00".join([category, *ids, str(sample)]).encode()).hexdigest()[:10]


class QuestionDrafter:
    """Drafts questions through an OpenAI-compatible endpoint (one call per draft).

    Parameters
    ----------
    config : JudgeConfig
        The judge endpoint (the operator's in class mode); JSON mode is asked when it is on.
    api_key, cache, client, policy
        As for :class:`~rag_metrics.authoring.judge_calls.ChatCaller`.
    """

    def __init__(self, config: JudgeConfig, *, api_key: str | None = None, cache: Any = None,
                 client: Any = None, policy: Any = None) -> None:
        from rag_metrics.authoring.judge_calls import ChatCaller

        self.config = config
        self.caller = ChatCaller(config, api_key=api_key, cache=cache, client=client, policy=policy)

    def planned_calls(self, n: int) -> int:
        return n

    def generation(self, category: str, seed: int, sample: int) -> dict[str, Any]:
        cfg = self.config
        return {"model": cfg.chat_model, "endpoint": cfg.base_url, "temperature": cfg.temperature,
                "top_p": cfg.top_p, "max_tokens": cfg.max_tokens, "json_mode": cfg.json_mode,
                "prompt_version": DRAFT_PROMPT_VERSION, "category": category, "seed": seed, "sample": sample}

    def draft(self, chunks: Sequence[Chunk], n: int, categories: Sequence[str] = CATEGORIES, *, seed: int = 0,
              progress: ProgressCallback | None = None, cancel: CancelCheck | None = None) -> list[Draft]:
        """``n`` drafts (in sampling order), each with its sources and generation settings."""
        from rag_metrics.authoring.judge_calls import CALL_STATUSES, Prompt

        plan = sample_sources(chunks, n, categories, seed)
        prompts = [Prompt(draft_prompt(cat, [c.text for c in src]), sample=sample, json_mode=True)
                   for cat, src, sample in plan]
        replies = self.caller.ask(prompts, progress=progress, cancel=cancel)
        out = []
        for (cat, src, sample), r in zip(plan, replies):
            ids = tuple(c.id for c in src)
            d = Draft(_draft_id(cat, ids, sample), None, cat, ids, self.generation(cat, seed, sample))
            if not r.ok:
                out.append(replace(d, status=r.status, message=r.message))
                continue
            q = parse_question(r.content)
            if q is None:
                out.append(replace(d, status="unusable_reply", reply=r.content[:300],
                                   message=f"{CALL_STATUSES['unusable_reply']}: {r.content[:120]!r}"))
            else:
                out.append(replace(d, question=q))
        return out

    @property
    def last_progress(self) -> JudgeProgress:
        return self.caller.last_progress
