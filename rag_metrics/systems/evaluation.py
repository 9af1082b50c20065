"""Evaluate several systems on one golden set: one call, whatever their kinds.

Pages and reports call :func:`evaluate_systems` and read :class:`SystemEvaluation` objects; a
system whose settings are wrong (unknown table, wrong dimension, a missing ``${VAR}``) gives an
error on its own row, never a failure of the others.
"""
from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.evaluation import EvaluationResult, evaluate
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.systems.base import SystemRun
from rag_metrics.types import Chunk, GoldenSet

__all__ = ["SystemEvaluation", "coverage", "evaluate_stored", "evaluate_systems", "judging_for"]


@dataclass(frozen=True)
class SystemEvaluation:
    """One system's ranking, its evaluation, or the error that stopped it."""

    name: str
    system_run: SystemRun | None
    result: EvaluationResult | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None


def coverage(system_run: SystemRun, golden: GoldenSet) -> dict[str, int]:
    """Counts for the coverage report: golden questions answered, failed, absent; rows unmatched."""
    answered = set(system_run.run.query_ids())
    ids = golden.ids
    failed = set(system_run.failed_ids)
    return {"questions": len(ids), "answered": sum(q in answered for q in ids),
            "failed": sum(q in failed for q in ids),
            "absent": sum(q not in answered and q not in failed for q in ids),
            "unmatched_rows": len(system_run.unmatched_rows)}


def judging_for(system_run: SystemRun, golden: GoldenSet, options: EvalOptions,
                chunks: Sequence[Chunk] | None) -> dict[str, Any]:
    """How to judge a system's run: the ``evidence`` / ``located`` arguments of :func:`evaluate`.

    At chunk level, with the lab's chunks known: a run whose contexts are not all lab chunks (a RAG
    log's unmatched texts, another chunking's ids), or a golden set with questions labelled only
    with evidence, is judged
    on evidence (:mod:`rag_metrics.metrics.evidence`; chunk labels convert), so any chunking gets a right
    verdict and the share of contexts found nowhere is carried on the result.  Otherwise the ids are
    judged as they are (the same numbers: evidence judging equals chunk judging on lab chunks), and
    a RAG log's match report still says how many contexts matched no chunk.  At document level, a
    run whose contexts are not all chunks or documents (texts, another chunking's ids) gets the judge
    too: it places each context in its document and counts those found nowhere.
    """
    cm = system_run.context_match
    if chunks:  # at document level the judge places each context in its document (EvidenceJudge.document_map)
        from rag_metrics.metrics.evidence import EvidenceJudge

        known = {c.id for c in chunks}
        if options.level == "document":  # document ids need no locating either
            known |= {c.doc_id for c in chunks}
        _, uniques = system_run.run.factorized_ids()
        evidence_only = options.level == "chunk" and any(q.reviewed_evidence and not q.relevant for q in golden.queries)
        if evidence_only or any(str(i) not in known for i in uniques.tolist()):
            texts = {**(system_run.context_texts or {}), **(getattr(cm, "texts", None) or {})}
            return {"evidence": EvidenceJudge.for_chunks(chunks, texts=texts)}
    from rag_metrics.metrics.evidence import locate_report_of

    return {"located": locate_report_of(cm)}


def evaluate_systems(systems: Sequence[tuple[str, Any]], golden: GoldenSet, options: EvalOptions | None = None,
                     depth: int = 100, chunk_to_doc: Mapping[str, str] | None = None,
                     retry_failed: bool = False, chunks: Sequence[Chunk] | None = None) -> list[SystemEvaluation]:
    """Rank the golden questions with every system and evaluate each run the same way.

    Parameters
    ----------
    systems
        ``(name, System)`` pairs, in display order.
    golden
        The golden set (questions and labels).
    options
        Evaluation conventions (``level="document"`` needs ``chunk_to_doc``).
    depth
        Ranking depth asked of every system.
    chunks
        The lab's chunks (the ids the labels name): with them, contexts that are not lab chunks are
        located in the corpus and judged on evidence (:func:`judging_for`).

    Notes
    -----
    Evaluations are memoised in the process per (system fingerprint, golden set, options, depth),
    so a page rerun re-evaluates nothing, not even a backend that failed (a hanging server must
    not cost a timeout per rerun).  ``retry_failed=True`` asks the failed questions again.
    """
    options = options or EvalOptions()
    questions = golden.questions()
    gkey = (golden.fingerprint(), repr(options), int(depth),
            None if chunk_to_doc is None else (len(chunk_to_doc), hash(frozenset(chunk_to_doc.items()))),
            None if not chunks else (len(chunks), chunks[0].id, chunks[-1].id, chunks[-1].end))
    out = []
    for name, system in systems:
        key = (system.fingerprint, name, gkey)
        with _LOCK:
            hit = _RESULTS.get(key)
        if hit is not None and not (retry_failed and hit.system_run is not None and not hit.system_run.ok):
            out.append(hit)
            continue
        try:
            sr = system.rank(questions, depth)
            res = evaluate(golden, sr.run, options, chunk_to_doc=chunk_to_doc,
                           unmatched_rows=len(sr.unmatched_rows), **judging_for(sr, golden, options, chunks))
        except InputError as e:
            out.append(SystemEvaluation(name, None, None, str(e)))
            continue
        ev = SystemEvaluation(name, sr, res)
        with _LOCK:
            _RESULTS.pop(key, None)
            if len(_RESULTS) >= _MAX_RESULTS:
                _RESULTS.pop(next(iter(_RESULTS)))
            _RESULTS[key] = ev
        out.append(ev)
    return out


def evaluate_stored(store: Any, name: str, golden: GoldenSet, options: EvalOptions | None = None,
                    depth: int = 100, *, chunks: Any = None, encoder: Any = None, corpus_key: str = "",
                    env: Mapping[str, str] | None = None, chunk_to_doc: Mapping[str, str] | None = None,
                    retry_failed: bool = False) -> tuple[SystemEvaluation, str]:
    """Resolve the system stored as ``name`` in ``store`` (a :class:`~rag_metrics.systems.store.SystemStore`)
    and evaluate it like :func:`evaluate_systems`, whatever its kind.

    Returns
    -------
    (SystemEvaluation, str)
        The evaluation (its ``error`` set when the system cannot be built or ranked) and the
        system's fingerprint ("" when it could not be built): what a cache key of it needs.

    Raises
    ------
    InputError
        When no system of that name is stored.
    """
    spec = store.get(name)
    if spec is None:
        raise InputError(f"no system named {name!r} is stored for this corpus; add it on the Systems page "
                         f"(stored: {', '.join(store.names()) or 'none'})")
    try:
        system = store.system(spec, chunks, encoder, corpus_key, env)
    except InputError as e:
        return SystemEvaluation(name, None, None, str(e)), ""
    ev = evaluate_systems([(name, system)], golden, options, depth, chunk_to_doc, retry_failed,
                          chunks=chunks if chunks and isinstance(chunks[0], Chunk) else None)[0]
    return ev, str(system.fingerprint)


_RESULTS: dict[tuple[Any, ...], SystemEvaluation] = {}  # small LRU-ish memo: a rerun re-evaluates nothing
_MAX_RESULTS = 32
_LOCK = threading.Lock()
