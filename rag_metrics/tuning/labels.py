"""Labels that survive re-chunking: evidence spans -> chunk labels for any chunking of the corpus.

A sweep scores every chunking on the **same** labels.  The labels are evidence: for each question,
character spans of documents with a grade.  They come from

- an evidence golden set (``golden_evidence.jsonl``: ``{"id", "question", "category", "evidence":
  [{"doc", "quote", "grade"}]}``); each quote is located in its document, or
- a chunk-id golden set labelled on one chunking (the sample's ``golden.jsonl``): each labelled
  chunk's span is its evidence ("a chunk's text is its quote").

A chunk of another chunking then gets a label by the rule the sample's labels were built with
(``sample_corpus/build_golden.py``), so that on the lab's own chunking evidence labels reproduce
chunk labels: for one evidence span of length ``L`` that a chunk overlaps by ``ov`` characters,

* the chunk holds the whole span, or ``ov >= 0.3 * L``, or ``ov >= 60`` -> the span's grade;
* else ``ov >= 20`` -> ``max(grade - 1, 1)`` (a fragment of the evidence);
* else (a sliver) -> no label; a span whose overlaps are all slivers labels its largest overlap.

Evidence that came from a chunk label (a whole labelled chunk) follows the rule of
:mod:`rag_metrics.retrieval.relabel` instead: a chunk gets the grade when the overlap is at least
half of the labelled span or half of the chunk (so a neighbour that shares only the chunk overlap
gets nothing); a chunking that holds the labelled chunk itself (same document and span) gives the
label to that chunk alone, so the labelled chunking reproduces its own labels exactly.

When several spans label one chunk it keeps the highest grade.  Questions without evidence keep no
label (out of scope, as before).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rag_metrics.errors import InputError
from rag_metrics.retrieval.relabel import MIN_COVER
from rag_metrics.types import Chunk, Corpus, GoldenQuery, GoldenSet

__all__ = ["Span", "EvidenceSet", "evidence_from_rows", "load_evidence", "evidence_from_golden",
           "labels_for_chunks", "span_grade", "FULL_FRACTION", "FULL_CHARS", "SLIVER_CHARS"]

FULL_FRACTION, FULL_CHARS, SLIVER_CHARS = 0.3, 60, 20


@dataclass(frozen=True)
class Span:
    """Evidence: ``doc_id`` text ``[start, end)`` with a grade."""

    doc_id: str
    start: int
    end: int
    grade: int
    #: "quote" (a passage that answers) or "chunk" (a whole labelled chunk; see the module docstring)
    kind: str = "quote"


@dataclass(frozen=True)
class EvidenceSet:
    """A golden set whose labels are evidence spans (``spans[query_id]``), not chunk ids."""

    golden: GoldenSet                       # questions and categories (``relevant`` is ignored)
    spans: Mapping[str, tuple[Span, ...]]

    def __len__(self) -> int:
        return len(self.golden)


def span_grade(grade: int, overlap: int, length: int) -> int | None:
    """The label a chunk gets from one evidence span of ``length`` it overlaps by ``overlap``."""
    if overlap >= length or overlap >= FULL_FRACTION * length or overlap >= FULL_CHARS:
        return grade
    if overlap >= SLIVER_CHARS:
        return max(grade - 1, 1)
    return None


def _locate(text: str, quote: str) -> int:
    i = text.find(quote)
    if i >= 0:
        return i
    # whitespace-insensitive fallback: the quote with its whitespace runs matching any whitespace
    import re

    words = quote.split()
    if not words:
        return -1
    m = re.search(r"\s+".join(map(re.escape, words)), text)
    return m.start() if m else -1


def evidence_from_rows(rows: Iterable[tuple[int, Mapping]], corpus: Corpus, source: str) -> EvidenceSet:
    """Evidence rows (``{"id", "question", "category", "evidence": [{"doc", "quote"|"start"/"end", "grade"}]}``)
    located in ``corpus``.  Errors name ``source:line`` and the query."""
    texts = {d.id: d.text for d in corpus}
    queries: list[GoldenQuery] = []
    spans: dict[str, tuple[Span, ...]] = {}
    for line, row in rows:
        where = f"{source}:{line}"
        if not isinstance(row, Mapping) or "question" not in row:
            raise InputError(f"{where}: expected an object with \"question\" and \"evidence\".")
        qid = str(row.get("id") or f"q{line}")
        items: list[Span] = []
        for j, ev in enumerate(row.get("evidence") or [], start=1):
            at = f"{where} ({qid}, evidence {j})"
            doc = ev.get("doc") if isinstance(ev, Mapping) else None
            if doc not in texts:
                raise InputError(f"{at}: document {doc!r} is not in the corpus; load the corpus the evidence "
                                 "was written for.")
            grade = ev.get("grade", 1)
            if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
                raise InputError(f"{at}: grade must be an integer >= 1; got {grade!r}.")
            if "quote" in ev:
                start = _locate(texts[doc], str(ev["quote"]))
                if start < 0:
                    raise InputError(f"{at}: quote not found in {doc}: {str(ev['quote'])[:80]!r}; copy it from "
                                     "the document exactly.")
                end = start + len(str(ev["quote"]))
                if texts[doc][start:end] != ev["quote"]:  # matched with other whitespace: span of the match
                    import re

                    m = re.compile(r"\s+".join(map(re.escape, str(ev["quote"]).split()))).match(texts[doc], start)
                    end = m.end() if m else end
            else:
                start, end = ev.get("start"), ev.get("end")
                if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(texts[doc])):
                    raise InputError(f"{at}: give a \"quote\", or \"start\" < \"end\" inside the document "
                                     f"(0..{len(texts[doc])}); got start={start!r}, end={end!r}.")
            items.append(Span(doc, start, end, grade))
        queries.append(GoldenQuery(id=qid, question=str(row["question"]), category=str(row.get("category") or ""),
                                   relevant={}, expected_answer=row.get("expected_answer")))
        spans[qid] = tuple(items)
    if not queries:
        raise InputError(f"{source}: no questions found.")
    return EvidenceSet(GoldenSet(tuple(queries)), spans)


def load_evidence(path: str | Path, corpus: Corpus) -> EvidenceSet:
    """Read an evidence golden set (JSONL) against ``corpus``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{p}: evidence file not found.") from None
    except UnicodeDecodeError:
        raise InputError(f"{p}: not UTF-8 text; re-save the file as UTF-8.") from None
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append((n, json.loads(line)))
            except json.JSONDecodeError as e:
                raise InputError(f"{p}:{n}: not valid JSON ({e.msg}).") from None
    return evidence_from_rows(rows, corpus, str(p))


def evidence_from_golden(golden: GoldenSet, chunks: Sequence[Chunk]) -> EvidenceSet:
    """Chunk-id labels as evidence: each labelled chunk's span is a span of evidence with its grade.

    Ids that are not chunks of ``chunks`` raise :class:`InputError` naming them (label evidence, or
    pass the chunking the set was labelled on).
    """
    by_id = {c.id: c for c in chunks}
    spans: dict[str, tuple[Span, ...]] = {}
    unknown: list[str] = []
    for q in golden:
        items = []
        for cid, grade in q.relevant.items():
            c = by_id.get(cid)
            if c is None:
                unknown.append(f"{q.id}: {cid}")
                continue
            if grade > 0:
                items.append(Span(c.doc_id, c.start, c.end, int(grade), kind="chunk"))
        spans[q.id] = tuple(items)
    if unknown:
        raise InputError(f"{len(unknown)} label(s) name no chunk of the labelled chunking (first: "
                         f"{', '.join(unknown[:3])}); pass the chunking the golden set was labelled on, "
                         "or an evidence file.")
    bare = GoldenSet(tuple(replace(q, relevant={}) for q in golden))
    return EvidenceSet(bare, spans)


def labels_for_chunks(evidence: EvidenceSet, chunks: Sequence[Chunk]) -> GoldenSet:
    """The golden set of ``evidence`` labelled on ``chunks`` (any chunking of the same corpus)."""
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    out = []
    for q in evidence.golden:
        rel: dict[str, int] = {}
        for s in evidence.spans.get(q.id, ()):
            overlaps = [(min(s.end, c.end) - max(s.start, c.start), c) for c in by_doc.get(s.doc_id, ())
                        if c.start < s.end and c.end > s.start]
            if s.kind == "chunk":
                same = [c for _, c in overlaps if (c.start, c.end) == (s.start, s.end)]
                if same:
                    rel[same[0].id] = max(rel.get(same[0].id, 0), s.grade)
                    continue
            labelled = 0
            for ov, c in overlaps:
                if s.kind == "chunk":
                    g = s.grade if (ov >= MIN_COVER * (s.end - s.start) or ov >= MIN_COVER * (c.end - c.start)) \
                        else None
                else:
                    g = span_grade(s.grade, ov, s.end - s.start)
                if g is not None:
                    rel[c.id] = max(rel.get(c.id, 0), g)
                    labelled += 1
            if not labelled and overlaps:
                _, c = max(overlaps, key=lambda t: t[0])
                rel[c.id] = max(rel.get(c.id, 0), s.grade)
        out.append(replace(q, relevant=rel))
    return GoldenSet(tuple(out))
