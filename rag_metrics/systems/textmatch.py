"""Match logged context texts to chunks of the current corpus.

A RAG log often holds the retrieved *texts* but not their ids.  Each context is matched to a
chunk in two steps:

1. **exact**: equal after normalisation (Unicode NFKC, case folded, whitespace collapsed);
2. **fuzzy**: otherwise the chunk with the best ``rapidfuzz.fuzz.ratio`` (normalised Indel
   similarity, 0-100, on the normalised texts) if it reaches :data:`DEFAULT_THRESHOLD` (90);
   ties go to the chunk listed first.

A context that matches no chunk is *unmatched*: it stays in the ranking as a retrieved item with
the id ``unmatched:<12 hex of sha1(normalised text)>`` that no label carries, so it counts as
non-relevant (and it keeps its rank, so the contexts after it keep theirs).
"""
from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_metrics.errors import InputError
from rag_metrics.types import Chunk

__all__ = [
    "DEFAULT_THRESHOLD",
    "UNMATCHED_PREFIX",
    "ContextMatchReport",
    "ContextMatcher",
    "normalise_text",
    "unmatched_id",
]

#: Least ``rapidfuzz.fuzz.ratio`` (0-100) for a fuzzy match.
DEFAULT_THRESHOLD = 90.0
#: Id prefix of contexts that match no chunk.
UNMATCHED_PREFIX = "unmatched:"


def normalise_text(text: str) -> str:
    """NFKC, case folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def unmatched_id(text: str) -> str:
    """The stable placeholder id of a context that matches no chunk."""
    return UNMATCHED_PREFIX + hashlib.sha1(normalise_text(text).encode("utf-8")).hexdigest()[:12]


@dataclass
class ContextMatchReport:
    """How the contexts of a RAG log were matched to chunks.

    Counts are over contexts (a question with 5 contexts adds 5).  ``fuzzy_examples`` and
    ``unmatched_examples`` keep up to 20 ``(row where, context start, matched id, score)`` items
    for display.
    """

    threshold: float
    exact: int = 0
    fuzzy: int = 0
    unmatched: int = 0
    fuzzy_examples: list[tuple[str, str, str, float]] = field(default_factory=list)
    unmatched_examples: list[tuple[str, str, str, float]] = field(default_factory=list)
    #: Full text of every unmatched context, by its placeholder id (for the drill-down).
    texts: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.exact + self.fuzzy + self.unmatched

    def note(self) -> str:
        """One sentence for the user."""
        s = (f"{self.total} context(s) matched to corpus chunks by text: {self.exact} exact, "
             f"{self.fuzzy} fuzzy (similarity >= {self.threshold:g}/100), {self.unmatched} unmatched")
        if self.unmatched:
            s += ("; unmatched contexts stay in their rank as retrieved items that no label carries, so they count "
                  "as non-relevant unless they are judged on evidence (located in the corpus: docs/evidence.md)")
        return s


class ContextMatcher:
    """Exact-then-fuzzy matcher of context texts to the chunks of one corpus.

    Parameters
    ----------
    chunks
        The chunks to match against (``Chunk`` objects or a ``{chunk_id: text}`` mapping).
    threshold
        Least ``rapidfuzz.fuzz.ratio`` score (0-100) of a fuzzy match.

    Results are memoised per normalised text (the same context logged for many questions is
    matched once).
    """

    def __init__(self, chunks: Sequence[Chunk] | Mapping[str, str], threshold: float = DEFAULT_THRESHOLD) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < float(threshold) <= 100:
            raise InputError(f"match threshold must be a number in (0, 100], got {threshold!r}; 90 is the default")
        self.threshold = float(threshold)
        items = chunks.items() if isinstance(chunks, Mapping) else ((c.id, c.text) for c in chunks)
        self.ids: list[str] = []
        self.norm: list[str] = []
        self._exact: dict[str, str] = {}
        for cid, text in items:
            n = normalise_text(text)
            self.ids.append(str(cid))
            self.norm.append(n)
            self._exact.setdefault(n, str(cid))
        self._memo: dict[str, tuple[str, str, float]] = {}
        self._closest: dict[str, tuple[str | None, float]] = {}

    def match(self, text: str) -> tuple[str, str, float]:
        """``(chunk id or unmatched id, kind, score)`` with kind ``exact``, ``fuzzy`` or ``unmatched``."""
        n = normalise_text(text)
        hit = self._memo.get(n)
        if hit is not None:
            return hit
        cid = self._exact.get(n)
        if cid is not None:
            hit = (cid, "exact", 100.0)
        else:
            hit = (unmatched_id(text), "unmatched", 0.0)
            if self.norm and n:
                from rapidfuzz import fuzz, process

                best = process.extractOne(n, self.norm, scorer=fuzz.ratio, score_cutoff=self.threshold)
                if best is not None:
                    hit = (self.ids[best[2]], "fuzzy", float(best[1]))
        self._memo[n] = hit
        return hit

    def closest(self, text: str) -> tuple[str | None, float]:
        """The chunk most similar to ``text`` whatever the threshold: ``(chunk id, rapidfuzz ratio)``,
        ``(None, 0.0)`` without chunks.  For showing why a context matched nothing (memoised)."""
        n = normalise_text(text)
        hit = self._closest.get(n)
        if hit is None:
            hit = (None, 0.0)
            if self.norm and n:
                from rapidfuzz import fuzz, process

                best = process.extractOne(n, self.norm, scorer=fuzz.ratio)
                if best is not None:
                    hit = (self.ids[best[2]], float(best[1]))
            self._closest[n] = hit
        return hit

    def match_all(self, contexts: Sequence[str], where: str, report: ContextMatchReport) -> list[str]:
        """Ids of ``contexts`` in order, counting each into ``report``."""
        out = []
        for ctx in contexts:
            cid, kind, score = self.match(ctx)
            short = " ".join(ctx.split())[:80]
            if kind == "exact":
                report.exact += 1
            elif kind == "fuzzy":
                report.fuzzy += 1
                if len(report.fuzzy_examples) < 20:
                    report.fuzzy_examples.append((where, short, cid, score))
            else:
                report.unmatched += 1
                report.texts.setdefault(cid, ctx)
                if len(report.unmatched_examples) < 20:
                    report.unmatched_examples.append((where, short, cid, score))
            out.append(cid)
        return out
