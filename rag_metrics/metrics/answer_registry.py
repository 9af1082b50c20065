"""Names, labels and definitions of the answer metrics (the one list every view reads)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ANSWER_METRICS", "AnswerMetric", "metric_order"]


@dataclass(frozen=True)
class AnswerMetric:
    name: str
    label: str
    kind: str  # "llm", "offline" or "reference"
    definition: str

    @property
    def short_label(self) -> str:
        """The label for a narrow table column: an offline approximation as ``… (offline)``."""
        return self.label.replace(" (offline approximation)", " (offline)")


ANSWER_METRICS: dict[str, AnswerMetric] = {m.name: m for m in (
    AnswerMetric("faithfulness", "Faithfulness", "llm",
                 "ragas 0.4: the LLM splits the answer into standalone statements given the question; "
                 "each statement gets a verdict (1 = can be inferred from the joined contexts); "
                 "score = supported statements / all verdicts."),
    AnswerMetric("answer_relevancy", "Answer relevancy", "llm",
                 "ragas 0.4: the LLM writes N questions (default 3) from the answer alone, each flagged "
                 "noncommittal or not; score = mean cosine (embeddings model) between the question and "
                 "the generated questions, 0 when every one is flagged noncommittal."),
    AnswerMetric("context_support", "Context support (offline approximation)", "offline",
                 "Mean over the answer's claim sentences of each sentence's best sentence-embedding cosine "
                 "(all-MiniLM-L6-v2 for English, multilingual-e5-small for other languages) against "
                 "the context sentences. An approximation, not faithfulness."),
    AnswerMetric("answer_question_similarity", "Answer-question similarity (offline approximation)",
                 "offline",
                 "Sentence-embedding cosine between the question and the answer (the model for the answers' "
                 "language). An approximation, not answer "
                 "relevancy."),
    AnswerMetric("semantic_similarity", "Semantic similarity (RAGAS)", "reference",
                 "ragas SemanticSimilarity: cosine between the embeddings of the ground truth and the "
                 "answer (here the sentence-embedding model for the answers' language)."),
    AnswerMetric("string_similarity", "String similarity (rapidfuzz ratio)", "reference",
                 "rapidfuzz fuzz.ratio(ground truth, answer, processor=default_process) / 100: the "
                 "normalised Indel similarity."),
)}


def metric_order(names: Iterable[str]) -> list[str]:
    """``names`` in registry order (unknown names last, sorted)."""
    have = set(names)
    return [n for n in ANSWER_METRICS if n in have] + sorted(n for n in have if n not in ANSWER_METRICS)
