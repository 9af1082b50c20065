"""Locating a context in the corpus: step 1 of evidence judging (:mod:`rag_metrics.metrics.evidence`).

:class:`CorpusIndex` finds where a retrieved context comes from: a lab chunk id is its span, a
document id the whole document; a text is found exactly (after normalisation: NFKC, case folded,
whitespace collapsed, with an offset map back to the original characters), else by fuzzy alignment
(word-trigram anchors, then ``rapidfuzz.fuzz.partial_ratio_alignment`` >= :data:`FUZZY_THRESHOLD`)
to a document and a character span.  A context found nowhere is :data:`UNLOCATED`.  The names are
importable from :mod:`rag_metrics.metrics.evidence` too.
"""
from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rag_metrics.types import Chunk, Corpus, content_hash

__all__ = ["FUZZY_THRESHOLD", "UNLOCATED", "CorpusIndex", "Location", "normalised"]

#: Least similarity (``rapidfuzz`` partial ratio, 0-100) of a fuzzy location.
FUZZY_THRESHOLD = 90.0


# ---- normalisation with an offset map ----------------------------------------------------------
_TOKEN = re.compile(r"\S+")
_ASCII_SPACE = np.array([9, 10, 11, 12, 13, 28, 29, 30, 31, 32], dtype=np.uint8)  # what str.split() splits on
_WORD = re.compile(r"\w+")


def _normalise(text: str) -> tuple[str, list[int] | np.ndarray]:
    """NFKC, case folded, whitespace collapsed to one space; and for each output character the
    offset of the input character it comes from (a space: the whitespace it replaces)."""
    if text.isascii():  # the common case, vectorised: lower-cased tokens joined by one space
        b = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        ws = np.isin(b, _ASCII_SPACE)
        edges = np.diff(np.concatenate(([True], ws, [True])).astype(np.int8))
        starts, ends = np.flatnonzero(edges == -1), np.flatnonzero(edges == 1)
        if not len(starts):
            return "", []
        lengths = ends - starts
        seg = lengths + 1  # each token and the space after it
        out_start = np.cumsum(seg) - seg
        fast = np.repeat(starts - out_start, seg) + np.arange(int(seg.sum()))
        fast[out_start[:-1] + lengths[:-1]] = starts[1:] - 1  # a space: the whitespace before the next token
        return " ".join(text.split()).lower(), fast[:-1]
    parts: list[str] = []
    pos: list[int] = []
    for m in _TOKEN.finditer(text):
        tok, s = m.group(), m.start()
        if parts:
            parts.append(" ")
            pos.append(s - 1)
        if tok.isascii():
            parts.append(tok.lower())
            pos.extend(range(s, s + len(tok)))
        else:
            for j, ch in enumerate(tok):
                n = unicodedata.normalize("NFKC", ch).casefold()
                parts.append(n)
                pos.extend([s + j] * len(n))
    return "".join(parts), pos


def normalised(text: str) -> str:
    """The text as locating compares it (NFKC, case folded, whitespace collapsed)."""
    return _normalise(text)[0]


# ---- locating ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Location:
    """Where a context is in the corpus: ``doc`` and ``[start, end)`` of its text (None when
    unlocated), how it was found (``chunk``, ``document``, ``exact``, ``fuzzy``, ``unlocated``) and
    the similarity (100 for exact)."""

    doc: str | None
    start: int
    end: int
    kind: str
    score: float = 100.0

    @property
    def located(self) -> bool:
        return self.doc is not None


UNLOCATED = Location(None, 0, 0, "unlocated", 0.0)


class CorpusIndex:
    """A corpus indexed once for locating texts: normalised documents with offset maps, and a
    word-trigram index for fuzzy candidates.  Results are memoised per text.

    Build with :meth:`of` (cached per content fingerprint), from a :class:`Corpus`, a
    ``{doc_id: text}`` mapping or chunks (documents rebuilt from their spans).
    """

    def __init__(self, docs: Mapping[str, str], threshold: float = FUZZY_THRESHOLD) -> None:
        self.texts: dict[str, str] = dict(docs)
        self.threshold = float(threshold)
        self.ids = list(self.texts)
        self._norm: list[str] = []
        self._pos: list[np.ndarray] = []
        self._offsets: list[int] = []
        self._words: list[list[tuple[int, int]]] = []  # (start, end) of each word in the normalised doc
        self._grams_built: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        off = 0
        for doc_id in self.ids:
            n, pos = _normalise(self.texts[doc_id])
            self._norm.append(n)
            self._pos.append(np.asarray(pos, dtype=np.int64 if len(n) > 2**31 - 2 else np.int32))
            self._offsets.append(off)
            off += len(n) + 1
        self._big = "\x00".join(self._norm)
        self._memo: dict[str, Location] = {}
        self._lock = threading.Lock()
        self.fingerprint = content_hash(x for d in self.ids for x in (d, self.texts[d]))

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def of(cls, source: Corpus | Mapping[str, str] | Sequence[Chunk]) -> CorpusIndex:
        """The index of ``source`` (a corpus, ``{doc_id: text}`` or chunks), built once per content."""
        docs = _documents(source)
        fp = content_hash(x for d, t in docs.items() for x in (d, t))
        with _INDEX_LOCK:
            hit = _INDEXES.get(fp)
            if hit is not None:
                _INDEXES.move_to_end(fp)
                return hit
        index = cls(docs)
        with _INDEX_LOCK:
            _INDEXES[fp] = index
            while len(_INDEXES) > 4:
                _INDEXES.popitem(last=False)
        return index

    def __len__(self) -> int:
        return len(self.ids)

    def _gram_index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Word-trigram index for fuzzy candidates, built on the first fuzzy search (exact locating
        never needs it): the hash of every three-word key, sorted, with its document row and word
        position.  Built with one pass of C-level string work per document (about 1 s per 10 MB)."""
        if self._grams_built is None:
            with self._lock:
                if self._grams_built is None:
                    keys, rows, poss = [], [], []
                    for d, n in enumerate(self._norm):
                        toks = _WORD.findall(n)
                        self._words.append([(m.start(), m.end()) for m in _WORD.finditer(n)])
                        h = [hash(x) for x in map(" ".join, zip(toks, toks[1:], toks[2:]))]
                        keys.append(np.asarray(h, dtype=np.int64))
                        rows.append(np.full(len(h), d, dtype=np.int32))
                        poss.append(np.arange(len(h), dtype=np.int32))
                    k = np.concatenate(keys) if keys else np.zeros(0, np.int64)
                    o = np.argsort(k, kind="stable")
                    self._grams_built = (k[o], np.concatenate(rows)[o] if rows else np.zeros(0, np.int32),
                                         np.concatenate(poss)[o] if poss else np.zeros(0, np.int32))
        return self._grams_built

    def _to_original(self, d: int, a: int, b: int) -> tuple[int, int]:
        pos = self._pos[d]
        return int(pos[a]), int(pos[b - 1]) + 1

    # -- locating -------------------------------------------------------------------------------
    def locate(self, text: str) -> Location:
        """Where ``text`` is in the corpus: exact (normalised) first, then fuzzy; memoised."""
        n, _ = _normalise(text)
        hit = self._memo.get(n)
        if hit is not None:
            return hit
        hit = self._locate(n)
        with self._lock:
            self._memo[n] = hit
        return hit

    def _locate(self, n: str) -> Location:
        if not n or not self.ids:
            return UNLOCATED
        at = self._big.find(n)
        if at >= 0:
            d = int(np.searchsorted(self._offsets, at, side="right")) - 1
            a = at - self._offsets[d]
            s, e = self._to_original(d, a, a + len(n))
            return Location(self.ids[d], s, e, "exact")
        return self._fuzzy(n)

    def _fuzzy(self, n: str) -> Location:
        toks = _WORD.findall(n)
        grams = {hash(x) for x in map(" ".join, zip(toks, toks[1:], toks[2:]))}
        if not grams:
            return UNLOCATED
        keys, rows, poss = self._gram_index()
        q = np.fromiter(grams, dtype=np.int64, count=len(grams))
        left, right = np.searchsorted(keys, q, "left"), np.searchsorted(keys, q, "right")
        sel = np.concatenate([np.arange(a, b) for a, b in zip(left.tolist(), right.tolist()) if b > a]
                             or [np.zeros(0, np.int64)])
        hits: dict[int, list[int]] = {}
        for d, w in zip(rows[sel].tolist(), poss[sel].tolist()):
            hits.setdefault(d, []).append(w)
        # a context holding a whole document (a ragas context "Title by Author: <the document>", a
        # document pasted amid other text): every word trigram of that document is one of the
        # context's, and its normalised text is in the context.  The longest such document wins.
        whole = [d for d, ws in hits.items()
                 if len(set(ws)) >= max(1, len(self._words[d]) - 2) and self._norm[d] in n]
        if whole:
            d = max(whole, key=lambda x: len(self._norm[x]))
            return Location(self.ids[d], 0, len(self.texts[self.ids[d]]), "document", 100.0)
        need = max(1, int(0.2 * len(grams)))
        cands = sorted(((len(set(ws)), d) for d, ws in hits.items() if len(set(ws)) >= need), reverse=True)[:3]
        from rapidfuzz import fuzz

        best = UNLOCATED
        width = len(toks)
        for _, d in cands:
            ws = sorted(set(hits[d]))
            # the densest run of anchors within one context length of words
            lo = 0
            best_run = (0, 0, 0)
            for hi in range(len(ws)):
                while ws[hi] - ws[lo] > width:
                    lo += 1
                if hi - lo + 1 > best_run[0]:
                    best_run = (hi - lo + 1, lo, hi)
            words = self._words[d]
            w0, w1 = ws[best_run[1]], min(ws[best_run[2]] + 2, len(words) - 1)
            slack = max(0, width - (w1 - w0))  # words of the context the anchors do not cover
            pad = max(20, len(n) // 4)
            a = max(0, words[max(0, w0 - slack)][0] - pad)
            b = min(len(self._norm[d]), words[min(len(words) - 1, w1 + slack)][1] + pad)
            window = self._norm[d][a:b]
            al = fuzz.partial_ratio_alignment(n, window)
            if al is None or al.score < self.threshold or al.score <= best.score:
                continue
            da, db = (al.dest_start, al.dest_end) if len(n) <= len(window) else (0, len(window))
            if db <= da:
                continue
            s, e = self._to_original(d, a + da, a + db)
            best = Location(self.ids[d], s, e, "fuzzy", float(al.score))
        return best

    def find_quote(self, doc: str, quote: str) -> Location:
        """Where ``quote`` is: in document ``doc`` when given (exact, normalised, then fuzzy inside
        it), else anywhere in the corpus."""
        if not doc:
            return self.locate(quote)
        text = self.texts.get(doc)
        if text is None:
            return UNLOCATED
        at = text.find(quote)
        if at >= 0:
            return Location(doc, at, at + len(quote), "exact")
        d = self.ids.index(doc)
        n, _ = _normalise(quote)
        if not n:
            return UNLOCATED
        at = self._norm[d].find(n)
        if at >= 0:
            s, e = self._to_original(d, at, at + len(n))
            return Location(doc, s, e, "exact")
        from rapidfuzz import fuzz

        al = fuzz.partial_ratio_alignment(n, self._norm[d])
        if al is None or al.score < self.threshold or len(n) > len(self._norm[d]):
            return UNLOCATED
        s, e = self._to_original(d, al.dest_start, al.dest_end)
        return Location(doc, s, e, "fuzzy", float(al.score))


_INDEXES: OrderedDict[str, CorpusIndex] = OrderedDict()
_INDEX_LOCK = threading.Lock()


def _documents(source: Corpus | Mapping[str, str] | Sequence[Chunk]) -> dict[str, str]:
    """``{doc_id: text}`` of a corpus, a mapping, or chunks (each document rebuilt from its chunks'
    spans; characters no chunk covers, only whitespace, become spaces)."""
    if isinstance(source, Corpus):
        return {d.id: d.text for d in source}
    if isinstance(source, Mapping):
        return {str(k): str(v) for k, v in source.items()}
    by_doc: dict[str, list[Chunk]] = {}
    for c in source:
        by_doc.setdefault(c.doc_id, []).append(c)
    out = {}
    for doc, cs in by_doc.items():
        buf = [" "] * max(c.end for c in cs)
        for c in cs:
            buf[c.start:c.end] = c.text
        out[doc] = "".join(buf)
    return out
