"""Evidence: relevance judged on passages of the corpus, whatever the chunking.

A golden question may label *evidence* (the document and the passage that answers it, as a quote
or a character span, with a grade) instead of chunk ids.  Any ranked list of contexts (lab chunk
ids, document ids, or texts from any chunking: markdown sections, whole documents, overlapping
windows) is judged against it:

1. **locate** every context in the corpus (:class:`CorpusIndex`, in :mod:`rag_metrics.metrics.evidence_locate`):
   a lab chunk id is its span, a document id the whole document; a text is found exactly (after
   normalisation: NFKC, case folded, whitespace collapsed), else by fuzzy alignment (word-trigram anchors, then
   ``rapidfuzz.fuzz.partial_ratio_alignment`` >= :data:`FUZZY_THRESHOLD`) to a document and a
   character span; a text holding a whole document (every word trigram of it, and its normalised
   text) is that whole document.  A context found nowhere is *unlocated*;
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

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rag_metrics.metrics.evidence_locate import (  # noqa: F401 (the locator's names, importable from here)
    _INDEX_LOCK,
    _INDEXES,
    FUZZY_THRESHOLD,
    UNLOCATED,
    CorpusIndex,
    Location,
    _documents,
    _normalise,
    normalised,
)
from rag_metrics.metrics.judge import judge
from rag_metrics.types import Chunk, Corpus, Evidence, GoldenQuery, GoldenSet, Run

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
    #: True at document level: contexts were placed in their documents, not judged on passages.
    by_document: bool = False

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
        how = "placed in their documents" if self.by_document else "judged on evidence"
        s = (f"{self.total} context(s) {how}: {self.chunk} lab chunk(s), {self.document} whole "
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

    def document_map(self, golden: GoldenSet, run: Run, chunk_to_doc: Mapping[str, str],
                     depth: int | None = None) -> tuple[dict[str, str], LocateReport]:
        """Document level: ``({context id: document id}, LocateReport)`` for every context ranked for
        a golden question.  A lab chunk (or an id in ``chunk_to_doc``) is its document; any other
        context is located (:meth:`place`): a document id is itself, a text found in a document, or
        holding a whole document, is that document.  Contexts found nowhere stay unmapped (not
        relevant) and are counted, so the :data:`UNLOCATED_LIMIT` rule holds at document level too."""
        empty: dict[str, dict[str, int]] = {q.id: {} for q in golden.queries}
        ranked = judge(empty, run, depth=depth)
        seen: Counter[str] = Counter()
        for row in range(len(ranked.query_ids)):
            seen.update(str(i) for i in ranked.ranking(row)[0])
        report = LocateReport(texts=self.texts, by_document=True)
        # every chunk id maps to its document (the labels' chunk ids too, so |R| counts documents)
        id_map: dict[str, str] = {cid: span[0] for cid, span in self.spans.items()}
        id_map.update(chunk_to_doc)
        for cid, n in seen.items():
            doc = chunk_to_doc.get(cid)
            if doc is not None and cid not in self.texts:
                id_map[cid] = doc
                report.chunk += n
                continue
            loc = self.place(cid)
            if loc.located and loc.doc is not None:
                id_map[cid] = loc.doc
                if loc.kind == "chunk":
                    report.chunk += n
                elif loc.kind == "document":
                    report.document += n
                elif loc.kind == "exact":
                    report.exact += n
                else:
                    report.fuzzy += n
                continue
            if cid in self.texts:
                report.unlocated_texts += n
            else:
                report.unlocated_ids += n
            if len(report.examples) < 20:
                report.examples.append((cid, self.texts.get(cid, "")))
        return id_map, report


def judge_evidence(golden: GoldenSet, run: Run, judge_with: EvidenceJudge, depth: int | None = None):
    """Rank ``run`` as :func:`~rag_metrics.metrics.judge.judge` does, derive the qrels of its ranked
    contexts from the evidence (:meth:`EvidenceJudge.qrels`) and judge it with them.

    Returns ``(Judged, LocateReport)``.
    """
    empty: dict[str, dict[str, int]] = {q.id: {} for q in golden.queries}
    ranked = judge(empty, run, depth=depth)
    rankings = {q: ranked.ranking(row)[0] for row, q in enumerate(ranked.query_ids)}
    qrels, report = judge_with.qrels(golden, rankings)
    return judge(qrels, run, depth=depth), report

