"""The sweep's labels: one evidence golden set, judged under every chunking by :mod:`rag_metrics.metrics.evidence`.

A sweep scores every configuration on the **same** labels, so they must not name chunks of one
chunking.  They are evidence (passages of the corpus with a grade), judged by the lab's one
relevance rule (:func:`rag_metrics.metrics.evidence.held_grade`; docs/evidence.md):

- an evidence golden set (the sample's ``golden_evidence.jsonl``) is used as it is;
- a chunk-id golden set becomes evidence on the chunking it was labelled on: each labelled chunk's
  own text (:func:`rag_metrics.metrics.evidence.query_passages`), written as a character span.  On that
  chunking evidence judging then equals chunk judging (tested).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from rag_metrics.errors import InputError
from rag_metrics.retrieval.chunking import chunk_corpus
from rag_metrics.types import Chunk, Corpus, Evidence, GoldenSet

__all__ = ["as_evidence", "load_labels", "has_evidence"]


def has_evidence(golden: GoldenSet) -> bool:
    """True when some question is labelled with reviewed evidence."""
    return any(q.reviewed_evidence for q in golden)


def as_evidence(golden: GoldenSet, chunks: Sequence[Chunk], corpus: Corpus) -> GoldenSet:
    """``golden`` with every chunk or document label written as evidence spans (reviewed evidence is
    kept as given).  Labels that name no chunk of ``chunks`` nor a document raise
    :class:`InputError` naming them (pass the chunking the set was labelled on)."""
    from rag_metrics.metrics.evidence import CorpusIndex, _cores, query_passages

    index = CorpusIndex.of(corpus)
    cores = _cores(chunks)
    out = []
    problems: list[str] = []
    for q in golden:
        if q.reviewed_evidence or not q.relevant:
            out.append(q)
            continue
        passages = query_passages(q, index, cores, problems)
        ev = tuple(Evidence(doc=p.doc, grade=p.grade, start=p.start, end=p.end) for p in passages if p.grade > 0)
        out.append(replace(q, relevant={}, evidence=ev, label_origin={}))
    if problems:
        raise InputError(f"{len(problems)} label(s) cannot be placed in the corpus (first: {problems[0]}); pass "
                         "the chunking the golden set was labelled on (--labelled-chunking SIZE/OVERLAP), or "
                         "label evidence.")
    return GoldenSet(tuple(out), name=golden.name)


def load_labels(path: str | Path, corpus: Corpus, labelled_chunking: tuple[int, int]) -> GoldenSet:
    """The sweep's labels from a golden file (any format :func:`rag_metrics.io.golden.load_golden` reads):
    its evidence as given, and its chunk labels as evidence on ``labelled_chunking``."""
    from rag_metrics.io.golden import load_golden

    golden = load_golden(path)
    if not any(q.relevant for q in golden) and not has_evidence(golden):
        raise InputError(f"{path}: no question has a label or reviewed evidence; label some (or propose evidence "
                         "from reference answers with `rag-metrics validate --propose-evidence` and review it).")
    return as_evidence(golden, chunk_corpus(corpus, *labelled_chunking), corpus)
