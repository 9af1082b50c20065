"""Offline approximations of the answer metrics (no LLM): *context support* and
*answer-question similarity*.

These are **approximations, not** RAGAS faithfulness or answer relevancy, and are never named so.

context_support
    Split the answer into sentences (:func:`~rag_metrics.answers.text.split_sentences`); keep the
    sentences that carry a claim (:func:`~rag_metrics.answers.text.carries_claim`); for each, take
    the best cosine against every sentence of the retrieved contexts (the sentence encoder of the answers'
    language by default: all-MiniLM-L6-v2 for English, multilingual-e5-small otherwise; see
    :func:`rag_metrics.answers.embed.encoder_for_items`).
    The score is the **mean of those best cosines** over the claim sentences.  A sentence's verdict
    is "supported" when its best cosine is at least ``threshold`` (default: the encoder's own,
    :func:`rag_metrics.retrieval.choice.thresholds_for`: 0.6 for all-MiniLM-L6-v2, :data:`SUPPORT_THRESHOLD`;
    multilingual-e5-small's is calibrated to agree with it), else "unsupported"; non-claim sentences get
    "not a claim" and do not enter the mean.  The threshold only labels sentences; it does not change the score.
answer_question_similarity
    Cosine between the question and the whole answer.

What they catch: off-topic answers and invented facts far from the context.  What they miss:
contradictions built from the context's own words (a changed number or a negation is still close
to its source sentence) and noncommittal answers that repeat the question (close to the question).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rag_metrics.answers.embed import default_embedding_cache, default_encoder, embed, encoder_for_items
from rag_metrics.answers.text import carries_claim, split_sentences
from rag_metrics.answers.types import (
    NOT_A_CLAIM,
    SUPPORTED,
    UNSUPPORTED,
    AnswerItem,
    CancelCheck,
    ItemJudgement,
    JudgeProgress,
    MetricScore,
    ProgressCallback,
    StatementVerdict,
)
from rag_metrics.errors import InputError
from rag_metrics.retrieval.choice import thresholds_for
from rag_metrics.retrieval.encoders import DEFAULT_MODEL

__all__ = ["OFFLINE_METRICS", "SUPPORT_THRESHOLD", "OfflineJudge"]

#: Best-cosine threshold of all-MiniLM-L6-v2 for an answer sentence's "supported" verdict (labels only);
#: every model's is :func:`rag_metrics.retrieval.choice.thresholds_for` (``.support``).
SUPPORT_THRESHOLD = thresholds_for(DEFAULT_MODEL).support
OFFLINE_METRICS = ("context_support", "answer_question_similarity")


class OfflineJudge:
    """Context support and answer-question similarity with a sentence encoder (see module doc).

    Parameters
    ----------
    encoder : Encoder, optional
        Default: the one encoder rule on the judged items' language
        (:func:`~rag_metrics.answers.embed.encoder_for_items`), chosen when :meth:`judge` is first called;
        English gives the project's lazily loaded all-MiniLM-L6-v2.
    cache : EmbeddingCache or None or False, optional
        Default: the on-disk embedding cache; ``False`` disables it.
    threshold : float, optional
        Sentence verdict threshold on the best cosine, in [-1, 1]; default the encoder's
        (:func:`~rag_metrics.retrieval.choice.thresholds_for`), following the encoder the rule picks.
    """

    metrics: tuple[str, ...] = OFFLINE_METRICS

    def __init__(self, encoder: Any = None, cache: Any = None, threshold: float | None = None
                 ) -> None:
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                      or not -1.0 <= float(threshold) <= 1.0):
            raise InputError(f"support threshold must be a number in [-1, 1], got {threshold!r}.")
        self._own_threshold = threshold is None  # the encoder's threshold, following the encoder
        self._auto = encoder is None  # the rule picks the encoder from the first items judged
        self.encoder = encoder if encoder is not None else default_encoder()
        self.cache = None if cache is False else (cache if cache is not None else default_embedding_cache())
        self.threshold = thresholds_for(self.encoder.name).support if threshold is None else float(threshold)
        self.name = f"offline:{self.encoder.name}"

    def judge(self, items: Sequence[AnswerItem], progress: ProgressCallback | None = None,
              cancel: CancelCheck | None = None) -> list[ItemJudgement]:
        """Score every item (one batched, cached embedding pass); see the module doc."""
        if self._auto:
            self.encoder, self._auto = encoder_for_items(items), False
            self.name = f"offline:{self.encoder.name}"
            if self._own_threshold:
                self.threshold = thresholds_for(self.encoder.name).support
        plans = [(split_sentences(it.answer), [s for c in it.contexts for s in split_sentences(c)])
                 for it in items]
        vec = embed(self.encoder, self.cache, self.texts(items))
        out = []
        for i, (it, (sents, ctx)) in enumerate(zip(items, plans)):
            out.append(ItemJudgement(it.id, {
                "context_support": self._support(it, sents, ctx, vec),
                "answer_question_similarity": self._similarity(it, vec),
            }))
            if progress is not None:
                progress(JudgeProgress(i + 1, len(items)))
        return out

    @staticmethod
    def texts(items: Sequence[AnswerItem]) -> list[str]:
        """Every text :meth:`judge` embeds for ``items`` (answer and context sentences, question and
        answer)."""
        texts: list[str] = []
        for it in items:
            texts.extend(split_sentences(it.answer))
            texts.extend(s for c in it.contexts for s in split_sentences(c))
            if it.question.strip() and it.answer.strip():
                texts.extend((it.question, it.answer))
        return texts

    def _support(self, it: AnswerItem, sents: list[str], ctx: list[str], vec: dict) -> MetricScore:
        if not it.answer.strip():
            return MetricScore.failed("empty_answer")
        if not sents:
            return MetricScore.failed("no_sentences")
        if not ctx:
            return MetricScore.failed("missing_contexts",
                                      "the item has no retrieved context (or only empty ones)")
        cmat = np.stack([vec[s] for s in ctx])
        verdicts, best = [], []
        for s in sents:
            sims = cmat @ vec[s]
            j = int(np.argmax(sims))
            sim = float(sims[j])
            if not carries_claim(s):
                verdicts.append(StatementVerdict(s, NOT_A_CLAIM, ctx[j], sim))
                continue
            best.append(sim)
            verdicts.append(StatementVerdict(s, SUPPORTED if sim >= self.threshold else UNSUPPORTED,
                                             ctx[j], sim))
        if not best:
            return MetricScore.failed("no_claims", statements=tuple(verdicts))
        value = float(np.mean(best))
        arith = (f"mean of the best cosine of {len(best)} claim sentence(s) = ("
                 + " + ".join(f"{b:.3f}" for b in best) + f") / {len(best)} = {value:.3f}; "
                 f"{sum(b >= self.threshold for b in best)} of {len(best)} at or above the "
                 f"threshold {self.threshold:g}")
        return MetricScore(value, statements=tuple(verdicts), arithmetic=arith)

    def _similarity(self, it: AnswerItem, vec: dict) -> MetricScore:
        if not it.answer.strip():
            return MetricScore.failed("empty_answer")
        if not it.question.strip():
            return MetricScore.failed("missing_question")
        value = float(vec[it.question] @ vec[it.answer])
        return MetricScore(value, arithmetic=f"cos(question, answer) = {value:.3f}")
