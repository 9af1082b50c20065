"""Character-based chunking on paragraph, sentence or word boundaries.

Conventions
-----------
- ``size`` and ``overlap`` count **characters** (Python ``str`` code points), not tokens.
- Every chunk is an exact span: ``chunk.text == doc.text[chunk.start:chunk.end]``.  Chunks never
  begin or end with whitespace; whitespace-only documents give no chunks.
- Chunk ids are ``<doc_id>#<n>``, ``n`` counting from 0 in document order.  The same text, size
  and overlap always give the same chunks (pure function, no randomness).
- Where a chunk ends (searched backwards from ``start + size``):

  1. the last paragraph break (a blank line) that leaves the chunk at least ``size / 2`` long;
  2. else the last sentence end (``.``, ``!`` or ``?``, optionally followed by closing quotes or
     brackets, then whitespace) or line break, with the same ``size / 2`` minimum;
  3. else the last whitespace;
  4. else a hard cut at ``start + size`` (a single word longer than ``size``).

- Where the next chunk starts: the earliest sentence (or line) start inside the last ``overlap``
  characters of the previous chunk, else the earliest word start there, else the end of the
  previous chunk (no overlap).  So consecutive chunks share **at most** ``overlap`` characters,
  and the shared text begins on a sentence boundary when one is available.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from rag_metrics.errors import InputError
from rag_metrics.types import Chunk, Corpus, Document, content_hash

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_CHUNK_OVERLAP",
    "MIN_CHUNK_SIZE",
    "chunk_spans",
    "chunk_document",
    "chunk_corpus",
    "chunk_to_doc",
    "chunks_fingerprint",
    "validate_chunk_args",
]

#: Default maximum chunk length in characters.
DEFAULT_CHUNK_SIZE = 500
#: Default maximum overlap between consecutive chunks, in characters.
DEFAULT_CHUNK_OVERLAP = 100
#: Smallest accepted ``size``.
MIN_CHUNK_SIZE = 50

# The look-behinds start a match only at the beginning of a run of blanks: without them, finditer
# re-scans the rest of the run from every position (quadratic: 20,000 blanks took 2 s).
_PARAGRAPH = re.compile(r"(?<![ \t\r\f\v])[ \t\r\f\v]*\n[ \t\r\f\v]*\n\s*")
_SENTENCE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(\s+)")
_LINE = re.compile(r"(?<![ \t\r\f\v])[ \t\r\f\v]*\n\s*")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class _Cuts:
    """Candidate cut points of one boundary kind, sorted by position.

    ``ends[i]`` is where a chunk may end (just before the separator) and ``starts[i]`` where the
    text after the separator begins (the separator's end).
    """

    ends: list[int]
    starts: list[int]

    @classmethod
    def find(cls, text: str, patterns: Iterable[tuple[re.Pattern[str], int]]) -> _Cuts:
        """Cuts at every match of each ``(pattern, group)``: the group is the separator."""
        found = [[m.span(group) for m in pattern.finditer(text)] for pattern, group in patterns]
        # one pattern's matches come sorted and apart; several are merged and their repeats dropped
        ordered = found[0] if len(found) == 1 else sorted(set().union(*found))
        return cls([a for a, _ in ordered], [b for _, b in ordered])

    def last_end(self, lo: int, hi: int) -> int | None:
        """Largest cut end in ``[lo, hi]`` or None."""
        i = bisect_right(self.ends, hi) - 1
        if i >= 0 and self.ends[i] >= lo:
            return self.ends[i]
        return None

    def first_start(self, lo: int, hi: int) -> int | None:
        """Smallest next-text start in ``[lo, hi]`` or None (``starts`` is sorted with ``ends``)."""
        i = bisect_left(self.starts, lo)
        if i < len(self.starts) and self.starts[i] <= hi:
            return self.starts[i]
        return None


def validate_chunk_args(size: object, overlap: object) -> tuple[int, int]:
    """Check ``size`` and ``overlap`` and return them as ints.

    Raises
    ------
    InputError
        When either is not an integer, ``size < MIN_CHUNK_SIZE``, ``overlap < 0`` or
        ``overlap >= size``.
    """
    for name, value in (("size", size), ("overlap", overlap)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(
                f"chunk {name} must be a whole number of characters, got {value!r}; "
                f"e.g. --chunk-size {DEFAULT_CHUNK_SIZE} --chunk-overlap {DEFAULT_CHUNK_OVERLAP}."
            )
    assert isinstance(size, int) and isinstance(overlap, int)
    if size < MIN_CHUNK_SIZE:
        raise InputError(
            f"chunk size must be at least {MIN_CHUNK_SIZE} characters, got {size}; "
            f"the default is {DEFAULT_CHUNK_SIZE}."
        )
    if overlap < 0:
        raise InputError(f"chunk overlap must be 0 or more characters, got {overlap}.")
    if overlap >= size:
        raise InputError(
            f"chunk overlap ({overlap}) must be smaller than chunk size ({size}); "
            f"e.g. size {size} with overlap {size // 5}."
        )
    return size, overlap


def chunk_spans(
    text: str, size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_CHUNK_OVERLAP
) -> list[tuple[int, int]]:
    """Split ``text`` into ``(start, end)`` character spans (see the module docstring for rules).

    Parameters
    ----------
    text : str
        The document text.
    size : int
        Maximum span length in characters (``>= MIN_CHUNK_SIZE``).
    overlap : int
        Maximum number of characters shared by consecutive spans (``0 <= overlap < size``).

    Returns
    -------
    list of (int, int)
        Spans in document order, each non-empty, without leading or trailing whitespace,
        at most ``size`` long, with strictly increasing starts and ends.
    """
    size, overlap = validate_chunk_args(size, overlap)
    n = len(text)
    first = _SPACE.match(text)
    start = first.end() if first else 0
    # trailing whitespace is never part of a chunk
    stop = n
    while stop > start and text[stop - 1].isspace():
        stop -= 1
    if start >= stop:
        return []

    paragraphs = _Cuts.find(text, [(_PARAGRAPH, 0)])
    sentences = _Cuts.find(text, [(_SENTENCE, 1), (_LINE, 0)])
    words = _Cuts.find(text, [(_SPACE, 0)])
    half = size // 2

    spans: list[tuple[int, int]] = []
    prev_end = start
    while True:
        limit = start + size
        if limit >= stop:
            spans.append((start, stop))
            break
        lo = max(start + half, prev_end + 1)
        end = paragraphs.last_end(lo, limit)
        if end is None:
            end = sentences.last_end(lo, limit)
        if end is None:
            end = words.last_end(max(start + 1, prev_end + 1), limit)
        if end is None:
            end = limit  # hard cut inside a very long word
        spans.append((start, end))
        prev_end = end
        # next start: inside the last `overlap` characters if possible, else after the separator
        nxt: int | None = None
        if overlap > 0:
            lo_start = max(end - overlap, start + 1)
            nxt = sentences.first_start(lo_start, end - 1)
            if nxt is None:
                nxt = words.first_start(lo_start, end - 1)
        if nxt is None:
            sep = _SPACE.match(text, end)
            nxt = sep.end() if sep else end
        start = nxt
        if start >= stop:
            break
    return spans


def chunk_document(
    doc: Document, size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_CHUNK_OVERLAP
) -> list[Chunk]:
    """Chunk one document; ids ``<doc.id>#<n>``, ``text == doc.text[start:end]``.

    Raises
    ------
    InputError
        On invalid ``size``/``overlap`` (see :func:`validate_chunk_args`).
    """
    return [
        Chunk(id=f"{doc.id}#{i}", doc_id=doc.id, text=doc.text[s:e], start=s, end=e)
        for i, (s, e) in enumerate(chunk_spans(doc.text, size, overlap))
    ]


def chunk_corpus(
    corpus: Corpus | Iterable[Document],
    size: int = DEFAULT_CHUNK_SIZE,
    overlap: int = DEFAULT_CHUNK_OVERLAP,
) -> list[Chunk]:
    """Chunk every document in corpus order (documents with no text give no chunks)."""
    size, overlap = validate_chunk_args(size, overlap)
    out: list[Chunk] = []
    for doc in corpus:
        out.extend(chunk_document(doc, size, overlap))
    return out


def chunk_to_doc(chunks: Iterable[Chunk]) -> dict[str, str]:
    """``{chunk_id: doc_id}`` for :func:`rag_metrics.retrieval.collapse_to_documents`."""
    return {c.id: c.doc_id for c in chunks}


def chunks_fingerprint(chunks: Iterable[Chunk]) -> str:
    """Content hash of a chunk list: ids and texts in order (a cache key for indexes and memos)."""
    return content_hash(x for c in chunks for x in (c.id, c.text))
