"""Labels proposed from reference answers: the chunks that support a question's ground truth.

A golden set in ragas' shape (question, ground_truth, no chunk ids) leaves every question
unlabelled.  For each question with a reference answer and no chunk labels
(:func:`questions_to_propose`), :func:`propose_supporting_chunks` ranks the chunks that support the
reference answer by two signals:

``semantic``
    Cosine similarity of the reference answer's embedding to each chunk's (the corpus's model, from
    the one encoder rule :mod:`rag_metrics.retrieval.choice`, and the embedding cache; clipped to [0, 1]).
``lexical``
    rapidfuzz over sentences: for each sentence of the reference answer, ``fuzz.partial_ratio``
    against the chunk's text (the best-matching window), averaged over the sentences and scaled to
    [0, 1] (a chunk that holds every sentence nearly word for word scores close to 1).

``score = w * semantic + (1 - w) * lexical`` (``w`` = :data:`SEMANTIC_WEIGHT`).  The lexical
signal is computed for the :data:`CANDIDATES` chunks closest by embedding (it costs more).

Proposals are **never labels**: they go into the labelling queue
(:meth:`rag_metrics.authoring.label_queue.LabelQueue.propose`), where a person accepts (ticks) them and saves;
nothing reaches the golden set without that step.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rag_metrics.answers.text import split_sentences
from rag_metrics.errors import InputError
from rag_metrics.types import OUT_OF_SCOPE, GoldenQuery, GoldenSet

if TYPE_CHECKING:
    import pandas as pd
else:
    from rag_metrics.lazy import pandas as pd

__all__ = ["CANDIDATES", "SEMANTIC_WEIGHT", "propose_supporting_chunks", "questions_to_propose"]

#: Weight of the embedding similarity in the combined score (the rest is the sentence match).
SEMANTIC_WEIGHT = 0.5
#: Chunks (closest by embedding) that get the sentence match.
CANDIDATES = 50


def questions_to_propose(golden: GoldenSet) -> list[GoldenQuery]:
    """Questions with a reference answer (``expected_answer`` / ``ground_truth``) and no chunk label,
    except those the golden set marks ``out_of_scope`` (their reference says the corpus has no answer)."""
    return [q for q in golden if (q.expected_answer or "").strip() and not q.relevant and q.category != OUT_OF_SCOPE]


def _unit(v: NDArray[np.floating]) -> NDArray[np.float64]:
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n == 0, 1.0, n)


def propose_supporting_chunks(reference: str, chunk_ids: Sequence[str], chunk_texts: Sequence[str],
                              chunk_vectors: NDArray[np.floating], reference_vector: NDArray[np.floating],
                              top: int = 5, semantic_weight: float = SEMANTIC_WEIGHT,
                              candidates: int = CANDIDATES) -> pd.DataFrame:
    """The chunks that best support ``reference``, best first.

    Parameters
    ----------
    reference
        The reference answer.
    chunk_ids, chunk_texts, chunk_vectors
        The corpus's chunks (row i of ``chunk_vectors`` embeds ``chunk_texts[i]``).
    reference_vector
        The reference answer's embedding (same model).
    top
        Proposals returned.

    Returns
    -------
    DataFrame
        ``rank, chunk_id, score, semantic, lexical, best_sentence`` (the reference sentence its
        text matches best), at most ``top`` rows.
    """
    from rapidfuzz import fuzz


    if not 0.0 <= semantic_weight <= 1.0:
        raise InputError(f"semantic_weight must be in [0, 1], got {semantic_weight!r}")
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise InputError(f"top must be a whole number >= 1, got {top!r}")
    n = len(chunk_ids)
    if len(chunk_texts) != n or len(chunk_vectors) != n:
        raise InputError(f"{n} chunk ids, {len(chunk_texts)} texts and {len(chunk_vectors)} vectors; give one of "
                         "each per chunk")
    cols = ["rank", "chunk_id", "score", "semantic", "lexical", "best_sentence"]
    sentences = [s for s in split_sentences(reference or "") if s.strip()] or (
        [reference.strip()] if (reference or "").strip() else [])
    if n == 0 or not sentences:
        return pd.DataFrame(columns=cols)
    sem = np.clip(_unit(chunk_vectors) @ _unit(np.asarray(reference_vector).reshape(-1)), 0.0, 1.0)
    cand = np.argsort(-sem, kind="stable")[: max(candidates, top)]
    rows = []
    for i in cand.tolist():
        text = chunk_texts[i].lower()
        ratios = [fuzz.partial_ratio(s.lower(), text) / 100.0 for s in sentences]
        lex = float(np.mean(ratios))
        best = sentences[int(np.argmax(ratios))]
        rows.append((str(chunk_ids[i]), semantic_weight * float(sem[i]) + (1 - semantic_weight) * lex,
                     float(sem[i]), lex, best))
    rows.sort(key=lambda r: (-r[1], r[0]))
    out = pd.DataFrame(rows[:top], columns=cols[1:])
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    return out
