"""Reference answers become labels: evidence proposed from the corpus, then reviewed by a person.

A golden set with reference answers and no ids (ragas ``reference`` / ``ground_truth``, DeepEval
``expected_output``) has nothing to judge a retrieval by.  :func:`propose_evidence` proposes, for
each such question (:attr:`~rag_metrics.types.GoldenQuery.awaiting_labels`), the passages of the
corpus that support its reference answer:

1. the corpus is cut into candidate passages: runs of one or two sentences (:func:`passages_of`);
2. BM25 (the lab's :class:`~rag_metrics.retrieval.lexical.BM25Retriever` on bm25s) ranks them with
   the reference answer and the question as the query; the best :data:`CANDIDATES` are kept;
3. each is scored ``score = LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * bm25``: ``lexical`` is
   rapidfuzz's ``partial_ratio`` of each reference sentence against the passage, averaged, in
   [0, 1]; ``bm25`` is the BM25 score over the question's best BM25 score;
4. the :data:`TOP` best non-overlapping passages become :class:`~rag_metrics.types.Evidence` with
   ``status="proposed"`` and a suggested grade (3 from :data:`GRADE_CUTS` [0], 2 from [1], else 1).

Proposals are **never labels**: judging ignores them (:func:`rag_metrics.metrics.evidence.query_passages`)
until :func:`review` marks them accepted; a question with only proposals stays "awaiting review",
neither in nor out of scope.  :func:`with_chunk_labels` then writes the reviewed evidence onto the
lab's chunks (by THE rule, :func:`rag_metrics.metrics.evidence.held_grade`) so chunk-id views work too.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from rag_metrics.answers.text import split_sentences
from rag_metrics.errors import InputError
from rag_metrics.metrics.evidence import CorpusIndex, held_grade, query_passages
from rag_metrics.types import PROPOSED, REVIEWED, Chunk, Corpus, Evidence, GoldenQuery, GoldenSet

__all__ = ["CANDIDATES", "GRADE_CUTS", "LEXICAL_WEIGHT", "TOP", "chunk_labels", "passages_of", "propose_evidence",
           "review", "with_chunk_labels"]

#: Passages proposed per question.
TOP = 3
#: Passages (best by BM25) scored with the sentence match.
CANDIDATES = 30
#: Weight of the sentence match in the score (the rest is the normalised BM25 score).
LEXICAL_WEIGHT = 0.6
#: Score from which a proposal suggests grade 3, and grade 2 (below: 1).
GRADE_CUTS = (0.75, 0.55)

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")


def _sentences(text: str) -> list[tuple[int, int]]:
    """Spans of the sentences (and lines) of ``text``, stripped, with at least one word character."""
    out = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        out.append((start, m.start()))
        start = m.end()
    out.append((start, len(text)))
    spans = []
    for a, b in out:
        seg = text[a:b]
        a2 = a + len(seg) - len(seg.lstrip())
        b2 = a + len(seg.rstrip())
        if b2 > a2 and re.search(r"\w", text[a2:b2]):
            spans.append((a2, b2))
    return spans


def passages_of(index: CorpusIndex, max_sentences: int = 2) -> list[Chunk]:
    """Candidate passages: every run of 1 .. ``max_sentences`` consecutive sentences of one paragraph
    of every document (markdown heading lines are skipped), as spans (``Chunk`` objects, ids ``doc@start-end``)."""
    out = []
    for doc in index.ids:
        text = index.texts[doc]
        spans = [(a, b) for a, b in _sentences(text) if not text[a:b].lstrip().startswith("#")]
        for i in range(len(spans)):
            for n in range(1, max_sentences + 1):
                if i + n > len(spans):
                    break
                if n > 1 and "\n\n" in text[spans[i + n - 2][1]:spans[i + n - 1][0]]:
                    break  # never across a paragraph or a heading
                a, b = spans[i][0], spans[i + n - 1][1]
                out.append(Chunk(f"{doc}@{a}-{b}", doc, text[a:b], a, b))
    return out


def _grade(score: float) -> int:
    return 3 if score >= GRADE_CUTS[0] else 2 if score >= GRADE_CUTS[1] else 1


def propose_evidence(golden: GoldenSet, corpus: Corpus | Mapping[str, str] | Sequence[Chunk], top: int = TOP,
                     only_awaiting: bool = True) -> GoldenSet:
    """``golden`` with proposed evidence on every question awaiting labels (or, with
    ``only_awaiting=False``, every question with a reference answer that is not out of scope).

    Proposals already there are replaced; reviewed evidence and ids are kept as they are.
    """
    from rapidfuzz import fuzz

    from rag_metrics.retrieval.lexical import BM25Retriever

    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise InputError(f"top must be a whole number >= 1, got {top!r}")
    index = CorpusIndex.of(corpus)
    todo = [q for q in golden.queries
            if (q.awaiting_labels if only_awaiting else (q.expected_answer and q.category != "out_of_scope"))
            and (q.expected_answer or "").strip()]
    if not todo:
        return golden
    cands = passages_of(index)
    if not cands:
        raise InputError("the corpus has no text to propose evidence from; load the corpus the answers come from")
    by_id = {c.id: c for c in cands}
    bm25 = BM25Retriever()
    bm25.index(cands)
    run = bm25.retrieve({q.id: f"{q.expected_answer} {q.question}" for q in todo}, k=CANDIDATES)
    ranked: dict[str, list[tuple[str, float]]] = {}
    for qid, cid, s in zip(run.qids.tolist(), run.ids.tolist(), run.scores.tolist()):
        ranked.setdefault(str(qid), []).append((str(cid), float(s)))
    new: dict[str, GoldenQuery] = {}
    for q in todo:
        ref = (q.expected_answer or "").strip()
        sentences = [s for s in split_sentences(ref) if s.strip()] or [ref]
        items = ranked.get(q.id, [])
        best_bm25 = max((s for _, s in items), default=0.0) or 1.0
        scored = []
        for cid, s in items:
            text = by_id[cid].text.lower()
            lex = sum(fuzz.partial_ratio(x.lower(), text) for x in sentences) / (100.0 * len(sentences))
            scored.append((LEXICAL_WEIGHT * lex + (1 - LEXICAL_WEIGHT) * max(s, 0.0) / best_bm25, cid))
        scored.sort(key=lambda t: (-t[0], t[1]))
        chosen: list[tuple[float, Chunk]] = []
        for score, cid in scored:
            c = by_id[cid]
            if any(o.doc_id == c.doc_id and o.start < c.end and c.start < o.end for _, o in chosen):
                continue
            chosen.append((score, c))
            if len(chosen) == top:
                break
        proposals = tuple(Evidence(c.doc_id, _grade(score), c.text, c.start, c.end, PROPOSED, round(score, 4))
                          for score, c in chosen)
        new[q.id] = replace(q, evidence=q.reviewed_evidence + proposals)
    return GoldenSet(tuple(new.get(q.id, q) for q in golden.queries), golden.name)


def review(query: GoldenQuery, decisions: Mapping[int, bool], grades: Mapping[int, int] | None = None) -> GoldenQuery:
    """``query`` with its proposals decided: ``decisions[i]`` True accepts proposal ``i`` (index into
    :attr:`~rag_metrics.types.GoldenQuery.proposed_evidence`; it becomes reviewed evidence, with
    ``grades[i]`` when given), False rejects it (dropped); undecided ones stay proposed."""
    kept: list[Evidence] = list(query.reviewed_evidence)
    pending: list[Evidence] = []
    for i, e in enumerate(query.proposed_evidence):
        d = decisions.get(i)
        if d is True:
            g = (grades or {}).get(i, e.grade)
            kept.append(replace(e, status=REVIEWED, grade=int(g)))
        elif d is None:
            pending.append(e)
    return replace(query, evidence=tuple(kept + pending))


def chunk_labels(query: GoldenQuery, index: CorpusIndex, chunks: Iterable[Chunk]) -> dict[str, int]:
    """The query's reviewed evidence written onto ``chunks`` by THE rule (each chunk keeps the best
    grade it earns from any passage; a passage no chunk holds by the rule labels the chunk that
    overlaps it most, as ``sample_corpus/build_golden.py`` does)."""
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    evidence_only = replace(query, relevant={})
    out: dict[str, int] = {}
    for p in query_passages(evidence_only, index, {}):
        overlaps = [(min(p.end, c.end) - max(p.start, c.start), c) for c in by_doc.get(p.doc, ())
                    if c.start < p.end and p.start < c.end]
        got = False
        for ov, c in overlaps:
            g = held_grade(p.grade, ov, p.length)
            if g is not None:
                out[c.id] = max(out.get(c.id, g), g)
                got = True
        if not got and overlaps:
            c = max(overlaps, key=lambda t: t[0])[1]
            out[c.id] = max(out.get(c.id, p.grade), p.grade)
    return out


def with_chunk_labels(golden: GoldenSet, chunks: Sequence[Chunk], corpus: Corpus | None = None) -> GoldenSet:
    """``golden`` with every query that has reviewed evidence labelled on ``chunks`` too
    (:func:`chunk_labels`), so views that judge chunk ids read the same relevance."""
    index = CorpusIndex.of(corpus if corpus is not None else chunks)
    out = []
    for q in golden.queries:
        if q.reviewed_evidence:
            q = q.relabelled(chunk_labels(q, index, chunks))
        out.append(q)
    return GoldenSet(tuple(out), golden.name)
