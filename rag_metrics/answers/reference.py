"""Reference metrics (need a ground truth): RAGAS semantic similarity and a string similarity.

semantic_similarity
    As ragas 0.4 ``SemanticSimilarity`` defines it: the cosine between the embeddings of the
    reference and of the response (each L2-normalised, then the dot product), here with the
    project's sentence encoder (by default the one for the answers' language: all-MiniLM-L6-v2 for
    English, multilingual-e5-small otherwise), no threshold.
string_similarity
    ``rapidfuzz.fuzz.ratio(reference, answer, processor=rapidfuzz.utils.default_process) / 100``:
    the normalised Indel similarity ``1 - (insertions + deletions) / (len(a) + len(b))`` after
    lower-casing and replacing non-alphanumeric characters by spaces.

Items without a ground truth get status ``"no_ground_truth"`` (``null`` in JSON).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rag_metrics.answers.embed import default_embedding_cache, default_encoder, embed, encoder_for_items
from rag_metrics.answers.types import (
    AnswerItem,
    CancelCheck,
    ItemJudgement,
    JudgeProgress,
    MetricScore,
    ProgressCallback,
)
from rag_metrics.errors import InputError

__all__ = ["REFERENCE_METRICS", "ReferenceMetrics", "string_similarity"]

REFERENCE_METRICS = ("semantic_similarity", "string_similarity")


def string_similarity(reference: str, answer: str) -> float:
    """rapidfuzz ``fuzz.ratio`` with ``utils.default_process``, scaled to [0, 1]."""
    try:
        from rapidfuzz import fuzz, utils
    except ImportError:
        raise InputError("string similarity needs rapidfuzz; install it with `pip install rapidfuzz` "
                         "(or `pip install rag-metrics[answers]`)") from None

    return float(fuzz.ratio(reference, answer, processor=utils.default_process)) / 100.0


class ReferenceMetrics:
    """Answer vs ground truth; same call shape as a :class:`~rag_metrics.answers.types.Judge`."""

    metrics = REFERENCE_METRICS

    def __init__(self, encoder: Any = None, cache: Any = None) -> None:
        self._auto = encoder is None  # the rule picks the encoder from the first items judged
        self.encoder = encoder if encoder is not None else default_encoder()
        self.cache = None if cache is False else (cache if cache is not None else default_embedding_cache())
        self.name = f"reference:{self.encoder.name}"

    @staticmethod
    def texts(items: Sequence[AnswerItem]) -> list[str]:
        """Every text :meth:`judge` embeds (ground truths and answers)."""
        return [t for it in items if it.ground_truth and it.ground_truth.strip() and it.answer.strip()
                for t in (it.ground_truth, it.answer)]

    def judge(self, items: Sequence[AnswerItem], progress: ProgressCallback | None = None,
              cancel: CancelCheck | None = None) -> list[ItemJudgement]:
        if self._auto:
            self.encoder, self._auto = encoder_for_items(items), False
            self.name = f"reference:{self.encoder.name}"
        vec = embed(self.encoder, self.cache, self.texts(items))
        out = []
        for i, it in enumerate(items):
            if not (it.ground_truth and it.ground_truth.strip()):
                miss = MetricScore.failed("no_ground_truth")
                out.append(ItemJudgement(it.id, {"semantic_similarity": miss, "string_similarity": miss}))
            elif not it.answer.strip():
                miss = MetricScore.failed("empty_answer")
                out.append(ItemJudgement(it.id, {"semantic_similarity": miss, "string_similarity": miss}))
            else:
                sem = float(vec[it.ground_truth] @ vec[it.answer])
                st = string_similarity(it.ground_truth, it.answer)
                out.append(ItemJudgement(it.id, {
                    "semantic_similarity": MetricScore(sem, arithmetic=f"cos(ground truth, answer) = {sem:.3f}"),
                    "string_similarity": MetricScore(st, arithmetic=f"rapidfuzz fuzz.ratio / 100 = {st:.3f}"),
                }))
            if progress is not None:
                progress(JudgeProgress(i + 1, len(items)))
        return out
