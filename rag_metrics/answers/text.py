"""Sentence splitting and the "does this sentence carry a claim" rule (offline judges).

Rules
-----
- Paragraph breaks, line breaks and Markdown list markers separate sentences; a Markdown heading
  line (``## Title``) is one sentence without its ``#`` marks.
- Inside a line, a sentence ends at ``.``, ``!`` or ``?`` (optionally followed by a closing quote or
  bracket) followed by white space and an upper-case letter, a digit or an opening quote; so
  ``1.5 GB``, ``v5.0`` and ``example.com`` never split.  Common abbreviations (``e.g.``, ``i.e.``,
  ``etc.``, ``vs.``, ``Dr.`` ...) do not end a sentence.
- A sentence carries **no claim** when it is a question (ends with ``?``), has fewer than three
  words, or opens with conversational filler (:data:`FILLER_OPENINGS`: "Hope this helps", "Let me
  know", "Great question", ...).  Everything else is treated as a claim.  This is a deliberately
  simple rule: hedges such as "It depends on your setup." count as claims.
"""
from __future__ import annotations

import re

__all__ = ["ABBREVIATIONS", "FILLER_OPENINGS", "carries_claim", "split_sentences"]

#: Tokens ending with a period that do not end a sentence (compared lower-cased).
ABBREVIATIONS = frozenset({
    "e.g.", "i.e.", "etc.", "vs.", "approx.", "mr.", "mrs.", "ms.", "dr.", "no.", "inc.", "ltd.",
    "co.", "st.", "fig.", "cf.", "al.", "min.", "max.", "sec.",
})

#: Lower-cased openings of sentences that carry no claim (conversational filler).
FILLER_OPENINGS: tuple[str, ...] = (
    "hope this helps", "i hope this helps", "let me know", "great question", "good question",
    "happy to help", "glad to help", "thanks", "thank you", "feel free", "sure!", "sure,",
    "of course!", "hello", "hi ", "hi,", "i hope that helps",
)

_BLOCK = re.compile(r"\n+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_BOUNDARY = re.compile(r"(?<=[.!?])([\"'\u201d\u2019)\]]?)\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9])")
_WORD = re.compile(r"\w+", re.UNICODE)


def _split_line(line: str) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(line):
        end = m.start() + len(m.group(1))
        piece = line[start:end]
        last = piece.rsplit(None, 1)[-1].lower() if piece.strip() else ""
        if last in ABBREVIATIONS:
            continue
        out.append(piece)
        start = m.end()
    out.append(line[start:])
    return [p.strip() for p in out if p.strip()]


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` in order (white space inside a sentence collapsed to one space).

    Examples
    --------
    >>> split_sentences("Free has 2 GB. Plus has 100 GB, e.g. for 1.5 GB videos!\\n- Sync is on.")
    ['Free has 2 GB.', 'Plus has 100 GB, e.g. for 1.5 GB videos!', 'Sync is on.']
    """
    sentences: list[str] = []
    for line in _BLOCK.split(text or ""):
        line = _HEADING.sub("", _LIST_MARK.sub("", line))
        line = " ".join(line.split())
        if not line:
            continue
        sentences.extend(s for s in _split_line(line) if _WORD.search(s))
    return sentences


def carries_claim(sentence: str) -> bool:
    """Whether an answer sentence states something checkable (see the module rules)."""
    s = sentence.strip()
    if not s or s.endswith("?"):
        return False
    if len(_WORD.findall(s)) < 3:
        return False
    low = s.lower()
    return not any(low.startswith(f) for f in FILLER_OPENINGS)
