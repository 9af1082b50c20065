"""Evidence: relevance judged on passages of the corpus, whatever the chunking.

Over 500 lines: locating a context (normalisation with an offset map, exact and fuzzy alignment) and
the one relevance rule that judges it are read together; the locator could move to its own module
next.

A golden question may label *evidence* (the document and the passage that answers it, as a quote
or a character span, with a grade) instead of chunk ids.  Any ranked list of contexts (lab chunk
ids, document ids, or texts from any chunking: markdown sections, whole documents, overlapping
windows) is judged against it:

1. **locate** every context in the corpus (:class:`CorpusIndex`): a lab chunk id is its span, a
   document id the whole document; a text is found exactly (after normalisation: NFKC, case
   folded, whitespace collapsed), else by fuzzy alignment (word-trigram anchors, then
   ``rapidfuzz.fuzz.partial_ratio_alignment`` >= :data:`FUZZY_THRESHOLD`) to a document and a
   character span.  A context found nowhere is *unlocated*;
2. **hold**: a located context holds an evidence passage by :func:`held_grade`, THE relevance rule
   (the same rule ``sample_corpus/build_golden.py`` uses to turn the sample's quotes into chunk
   labels);
3. **credit once**: walking the ranking best first, each passage credits the first context that
   holds it; a later context holding only passages already credited is not relevant (two contexts
   holding the same passage never count as two hits, as two chunks of one document never do at
   document level).  Passages no context holds stay in ``|R|``.

The result is an ordinary ``{query: {id: grade}}`` qrels over the ranked ids, judged by
:func:`rag_metrics.metrics.judge.judge`: the same relevance arrays every metric kernel reads.

Chunk-id labels convert to evidence (:func:`query_passages`): a chunk label's passage is the text
only that chunk holds, its span minus what it shares with the chunks before and after it, so a
neighbour that shares the overlap does not inherit the label.  With the lab's own chunking,
evidence judging therefore equals chunk judging (tested).

The share of contexts that cannot be located is carried on the result (:class:`LocateReport`);
above :data:`UNLOCATED_LIMIT` the verdict is "not comparable".  Worked examples: docs/evidence.md.
"""
from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rag_metrics.types import Chunk, Corpus, Evidence, GoldenQuery, GoldenSet, Run, content_hash

__all__ = [
    "FRAGMENT_CHARS",
    "FUZZY_THRESHOLD",
    "HOLD_CHARS",
    "HOLD_FRACTION",
    "UNLOCATED_LIMIT",
    "CorpusIndex",
    "Evidence",
    "EvidenceJudge",
    "Location",
    "LocateReport",
    "Passage",
    "held_grade",
    "judge_evidence",
    "query_passages",
]

#: A context holds a passage fully when it holds at least this share of its characters ...
HOLD_FRACTION = 0.3
#: ... or at least this many of them (a whole sentence of the passage).
HOLD_CHARS = 60
#: A context holding fewer characters than :data:`HOLD_CHARS` but at least this many holds a
#: fragment: relevant one grade lower (never below 1).  Fewer: a sliver, not relevant.
FRAGMENT_CHARS = 20
#: Least similarity (``rapidfuzz`` partial ratio, 0-100) of a fuzzy location.
FUZZY_THRESHOLD = 90.0
#: THE comparability threshold: when more than this share of a system's retrieved contexts cannot
#: be located in the corpus, its numbers are computed *mostly* from contexts judged non-relevant by
#: default (they may hold the answer), and every view says "not comparable" instead of showing them
#: as a verdict.  At or below it the numbers stand, with the share and the fix beside them.
UNLOCATED_LIMIT = 0.5


def held_grade(grade: int, overlap: int, length: int) -> int | None:
    """THE relevance rule: the grade a context earns from a passage of ``length`` characters graded
    ``grade`` when it holds ``overlap`` of them; None when it does not hold the passage.

    - holds the whole passage, or ``>= HOLD_FRACTION`` of it, or ``>= HOLD_CHARS`` characters of it:
      the passage's grade;
    - else holds ``>= FRAGMENT_CHARS`` characters (a fragment): ``max(grade - 1, 1)``;
    - else (a sliver, or nothing): None.

    A non-positive grade (judged not relevant) is never raised: it is returned as is when held.

    >>> held_grade(3, 40, 40), held_grade(3, 70, 400), held_grade(3, 25, 400), held_grade(3, 10, 400)
    (3, 3, 2, None)
    """
    if overlap <= 0 or length <= 0:
        return None
    if overlap >= length or overlap >= HOLD_FRACTION * length or overlap >= HOLD_CHARS:
        return grade
    if overlap >= FRAGMENT_CHARS:
        return grade if grade <= 0 else max(grade - 1, 1)
    return None


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


# ---- passages of a golden query -----------------------------------------------------------------
@dataclass(frozen=True)
class Passage:
    """A located evidence passage: document, ``[start, end)``, grade."""

    doc: str
    start: int
    end: int
    grade: int

    @property
    def length(self) -> int:
        return self.end - self.start


def _cores(chunks: Iterable[Chunk]) -> dict[str, tuple[str, int, int]]:
    """``{chunk_id: (doc, start, end)}`` of the text only that chunk holds (its span minus the
    overlap with the chunks before and after it in its document)."""
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    out = {}
    for doc, cs in by_doc.items():
        cs.sort(key=lambda c: (c.start, c.end))
        for i, c in enumerate(cs):
            s = max(c.start, cs[i - 1].end) if i else c.start
            e = min(c.end, cs[i + 1].start) if i + 1 < len(cs) else c.end
            out[c.id] = (doc, s, e) if e > s else (doc, c.start, c.end)
    return out


def query_passages(query: GoldenQuery, index: CorpusIndex, cores: Mapping[str, tuple[str, int, int]],
                   problems: list[str] | None = None) -> list[Passage]:
    """The passages a query's labels name: its reviewed evidence when it has some (its chunk labels
    are then the evidence written onto one chunking, and are not counted again); otherwise its
    chunk labels (each chunk's own core text) and document labels (the whole document).  Labels that
    cannot be placed are listed in ``problems``.  Proposed (unreviewed) evidence is never included."""
    out: list[Passage] = []
    relevant = {} if query.reviewed_evidence else query.relevant
    for e in query.reviewed_evidence:
        if e.start is not None and e.end is not None:
            text = index.texts.get(e.doc)
            if text is None or e.end > len(text):
                if problems is not None:
                    problems.append(f"query {query.id!r}: evidence span {e.start}-{e.end} of {e.doc!r} is not in "
                                    "the corpus")
                continue
            out.append(Passage(e.doc, e.start, e.end, int(e.grade)))
            continue
        loc = index.find_quote(e.doc, e.quote)
        if loc.doc is None:
            if problems is not None:
                where = f"document {e.doc!r}" if e.doc else "the corpus"
                problems.append(f"query {query.id!r}: evidence quote not found in {where}: {e.quote[:60]!r}")
            continue
        out.append(Passage(loc.doc, loc.start, loc.end, int(e.grade)))
    for i, g in relevant.items():
        core = cores.get(i)
        if core is not None:
            out.append(Passage(core[0], core[1], core[2], int(g)))
        elif i in index.texts:
            out.append(Passage(i, 0, len(index.texts[i]), int(g)))
        elif problems is not None:
            problems.append(f"query {query.id!r}: label {i!r} is neither a chunk nor a document of the corpus")
    return out


# ---- judging -------------------------------------------------------------------------------------
#: Id prefix of a passage no retrieved context holds (it stays in ``|R|``).
UNHELD_PREFIX = "evidence:"


@dataclass
class LocateReport:
    """How the retrieved contexts of one evaluation were placed in the corpus.

    Counts are over ranked contexts of golden queries (a question with 5 contexts adds 5).
    ``unlocated_ids`` are ids with no text that are neither chunks nor documents of the corpus
    (another chunking's ids); ``unlocated_texts`` are texts found nowhere in the corpus.
    """

    chunk: int = 0
    document: int = 0
    exact: int = 0
    fuzzy: int = 0
    unlocated_ids: int = 0
    unlocated_texts: int = 0
    examples: list[tuple[str, str]] = field(default_factory=list)  # (context id, text or "") of unlocated ones
    label_problems: list[str] = field(default_factory=list)
    #: Text of every context that is not a lab chunk or a document, by its id (shown in its place).
    texts: Mapping[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.chunk + self.document + self.exact + self.fuzzy + self.unlocated

    @property
    def unlocated(self) -> int:
        return self.unlocated_ids + self.unlocated_texts

    @property
    def share(self) -> float:
        """Share of contexts that could not be located (0.0 without contexts)."""
        return self.unlocated / self.total if self.total else 0.0

    @property
    def comparable(self) -> bool:
        """False when more than :data:`UNLOCATED_LIMIT` of the contexts could not be located."""
        return self.share <= UNLOCATED_LIMIT

    @property
    def fix(self) -> str:
        """The likely fix, from what the unlocated contexts are."""
        if not self.unlocated:
            return ""
        if self.unlocated_texts >= self.unlocated_ids:
            return "your corpus differs: load it"
        return "your chunking differs: label evidence, or evaluate at document level"

    def note(self) -> str:
        """How the contexts were placed, in one sentence (for notes and stderr)."""
        s = (f"{self.total} context(s) judged on evidence: {self.chunk} lab chunk(s), {self.document} whole "
             f"document(s), {self.exact} text(s) found exactly and {self.fuzzy} by fuzzy alignment "
             f"(>= {FUZZY_THRESHOLD:g}/100) in the corpus, {self.unlocated} not found")
        if self.label_problems:
            s += f"; {len(self.label_problems)} label(s) could not be placed (first: {self.label_problems[0]})"
        return s

    def line(self) -> str:
        """One sentence: the share, what it means and the fix ("" when every context was located)."""
        if not self.unlocated:
            return ""
        pct = f"{100 * self.share:.0f}%"
        head = (f"{self.unlocated} of {self.total} contexts ({pct}) could not be located in the corpus and count "
                "as not relevant")
        if not self.comparable:
            return (f"Not comparable: {head}, more than the {100 * UNLOCATED_LIMIT:.0f}% limit; {self.fix}")
        return f"{head}; {self.fix}"


def locate_report_of(match_report: object) -> LocateReport | None:
    """A :class:`LocateReport` from a RAG log's context -> chunk match report
    (:class:`rag_metrics.systems.textmatch.ContextMatchReport`), for runs judged on chunk labels
    without the corpus at hand: a context that matches no chunk counts as unlocated, with the
    chunking fix (label evidence, or judge on evidence with the corpus)."""
    if match_report is None:
        return None
    total = int(getattr(match_report, "total", 0))
    un = int(getattr(match_report, "unmatched", 0))
    if not total:
        return None
    texts = getattr(match_report, "texts", {}) or {}
    return LocateReport(chunk=total - un, unlocated_ids=un,
                        examples=[(i, t) for i, t in list(texts.items())[:20]], texts=dict(texts))


class EvidenceJudge:
    """Judge runs against evidence (and chunk / document labels converted to evidence).

    Parameters
    ----------
    index
        The corpus index (:meth:`CorpusIndex.of`).
    chunks
        The lab's chunks: their ids locate without text, and chunk labels become their core passages.
    texts
        ``{context id: text}`` for ids that are not chunks or documents (e.g. a RAG log's
        ``unmatched:...`` placeholders): located by text.
    """

    def __init__(self, index: CorpusIndex, chunks: Sequence[Chunk] = (), texts: Mapping[str, str] | None = None
                 ) -> None:
        self.index = index
        self.spans = {c.id: (c.doc_id, c.start, c.end) for c in chunks}
        self.cores = _cores(chunks)
        self.texts = dict(texts or {})

    @classmethod
    def for_chunks(cls, chunks: Sequence[Chunk], texts: Mapping[str, str] | None = None,
                   corpus: Corpus | None = None) -> EvidenceJudge:
        return cls(CorpusIndex.of(corpus if corpus is not None else chunks), chunks, texts)

    def place(self, context_id: str) -> Location:
        """Where the context ``context_id`` is (a chunk id, a document id, or an id with a text)."""
        span = self.spans.get(context_id)
        if span is not None:
            return Location(span[0], span[1], span[2], "chunk")
        text = self.texts.get(context_id)
        if text is not None:
            return self.index.locate(text)
        doc = self.index.texts.get(context_id)
        if doc is not None:
            return Location(context_id, 0, len(doc), "document")
        return UNLOCATED

    def qrels(self, golden: GoldenSet, rankings: Mapping[str, Sequence[str]]
              ) -> tuple[dict[str, dict[str, int]], LocateReport]:
        """Per golden query, ``{ranked id: grade}`` by the rule (a passage credits the first context
        holding it) plus ``evidence:<qid>:<n>`` for each passage no context holds."""
        report = LocateReport(texts=self.texts)
        qrels: dict[str, dict[str, int]] = {}
        counts: Counter[str] = Counter()
        for q in golden.queries:
            passages = query_passages(q, self.index, self.cores, report.label_problems)
            credited = [False] * len(passages)
            rel: dict[str, int] = {}
            for cid in rankings.get(q.id, ()):
                loc = self.place(cid)
                counts[loc.kind] += 1
                if not loc.located:
                    if cid in self.texts:
                        report.unlocated_texts += 1
                    else:
                        report.unlocated_ids += 1
                    if len(report.examples) < 20:
                        report.examples.append((cid, self.texts.get(cid, "")))
                    continue
                best: int | None = None
                for j, p in enumerate(passages):
                    if credited[j] or p.doc != loc.doc:
                        continue
                    ov = min(p.end, loc.end) - max(p.start, loc.start)
                    g = held_grade(p.grade, ov, p.length)
                    if g is None:
                        continue
                    credited[j] = True
                    best = g if best is None else max(best, g)
                if best is not None:
                    rel[cid] = best
            for j, p in enumerate(passages):
                if not credited[j]:
                    rel[f"{UNHELD_PREFIX}{q.id}:{j}"] = p.grade
            if not passages and (q.relevant or q.reviewed_evidence):
                rel[f"{UNHELD_PREFIX}{q.id}:unplaced"] = 0  # labelled, none placeable: judged, stays in scope
            qrels[q.id] = rel
        report.chunk, report.document = counts["chunk"], counts["document"]
        report.exact, report.fuzzy = counts["exact"], counts["fuzzy"]
        return qrels, report

    def judge(self, golden: GoldenSet, run: Run, depth: int | None = None):
        """``(Judged, LocateReport)``: the run judged against the golden set's evidence."""
        return judge_evidence(golden, run, self, depth)


def judge_evidence(golden: GoldenSet, run: Run, judge_with: EvidenceJudge, depth: int | None = None):
    """Rank ``run`` as :func:`~rag_metrics.metrics.judge.judge` does, derive the qrels of its ranked
    contexts from the evidence (:meth:`EvidenceJudge.qrels`) and judge it with them.

    Returns ``(Judged, LocateReport)``.
    """
    from rag_metrics.metrics.judge import judge

    empty: dict[str, dict[str, int]] = {q.id: {} for q in golden.queries}
    ranked = judge(empty, run, depth=depth)
    rankings = {q: ranked.ranking(row)[0] for row, q in enumerate(ranked.query_ids)}
    qrels, report = judge_with.qrels(golden, rankings)
    return judge(qrels, run, depth=depth), report

