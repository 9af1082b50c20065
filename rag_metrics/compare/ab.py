"""A vs B of two retrieval configurations on one golden set (the app's Compare page).

No streamlit import here.  The statistics are :mod:`rag_metrics.compare.paired`'s (the same functions as
``rag-metrics compare``); this module describes a configuration, decides at which level two
configurations can be compared, prepares the golden set for each, and shapes the per-category
table.

Chunk labels and re-chunking
----------------------------
Labels name chunks of one chunking.  When A and B use the same chunking, they are evaluated at
chunk level (labels carried from the labelled chunking if needed).  When their chunkings differ,
chunk-level numbers judge different ids (|R| can change when a label splits across two new
chunks), so the comparison is made at **document level** by default: a chunk ranking collapses
to documents (a document takes the rank of its first chunk) and chunk labels collapse to their
documents with the highest grade; A and B are then judged against the same document labels.
Chunk level with labels carried to each chunking (``carry_labels``) is offered as an option.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from rag_metrics.compare.paired import paired_t_interval, per_query_deltas
from rag_metrics.errors import InputError
from rag_metrics.evaluation import CI_CONFIDENCE, EvaluationResult, too_few
from rag_metrics.metrics.kernels import check_k
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, validate_chunk_args
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, DEFAULT_RETRIEVER, RETRIEVER_KINDS
from rag_metrics.retrieval.encoders import DEFAULT_MODEL, DEFAULT_MODEL_ALIASES
from rag_metrics.types import Chunk, GoldenSet

__all__ = ["Config", "RETRIEVER_KINDS", "MAX_DEPTH", "comparison_level", "golden_for", "category_deltas",
           "outcome_counts", "comparison_keys"]

#: Deepest retrieval the app memoises (:data:`rag_metrics.retrieval.defaults.DEFAULT_DEPTH`).
MAX_DEPTH = DEFAULT_DEPTH

Level = Literal["chunk", "document"]


@dataclass(frozen=True)
class Config:
    """One retrieval configuration.  ``model`` is ignored by BM25; empty = the bundled default."""

    retriever: str = DEFAULT_RETRIEVER
    chunk_size: int = DEFAULT_CHUNK_SIZE
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP
    model: str = ""
    depth: int = MAX_DEPTH
    system: str = ""            # a stored system's name (Systems page): it ranks instead of ``retriever``

    def __post_init__(self) -> None:
        if self.retriever not in RETRIEVER_KINDS:
            raise InputError(f"unknown retriever {self.retriever!r}; use one of {', '.join(RETRIEVER_KINDS)}")
        validate_chunk_args(self.chunk_size, self.chunk_overlap)
        d = self.depth
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= MAX_DEPTH:
            raise InputError(f"depth must be an integer from 1 to {MAX_DEPTH}, got {d!r}")
        if not isinstance(self.system, str) or len(self.system) > 60 or "\n" in self.system:
            raise InputError(f"system must be a stored system's name (at most 60 characters), got {self.system!r}")
        if not isinstance(self.model, str) or len(self.model) > 200 or "\n" in self.model:
            raise InputError("model must be a single-line name of at most 200 characters")

    @property
    def model_name(self) -> str:
        """The embedding model actually used ("" for BM25)."""
        if self.retriever == "bm25" or self.system:
            return ""
        m = self.model.strip()
        return DEFAULT_MODEL if not m or m in DEFAULT_MODEL_ALIASES else m

    @property
    def uses_default_model(self) -> bool:
        return self.model_name in ("", DEFAULT_MODEL)

    @property
    def chunking(self) -> tuple[int, int]:
        return (self.chunk_size, self.chunk_overlap)

    def describe(self) -> str:
        if self.system:
            return f"{self.system} (yours) · chunks {self.chunk_size}/{self.chunk_overlap} · depth {self.depth}"
        parts = [self.retriever]
        if self.model_name:
            parts.append(self.model_name)
        parts.append(f"chunks {self.chunk_size}/{self.chunk_overlap}")
        parts.append(f"depth {self.depth}")
        return " · ".join(parts)


def comparison_level(a: Config, b: Config, corpus_level: Level = "chunk",
                     prefer: Level | None = None) -> Level:
    """The level at which A and B are judged: the corpus's level when the chunkings agree,
    else document level unless ``prefer="chunk"`` (labels carried to each chunking)."""
    if corpus_level == "document":
        return "document"
    if a.chunking == b.chunking:
        return "chunk"
    return prefer or "document"


def golden_for(golden: GoldenSet, level: Level, labelled_chunks: Sequence[Chunk],
               target_chunks: Sequence[Chunk]) -> tuple[GoldenSet, object | None]:
    """The golden set to judge a configuration's run against, and the label report (or None).

    At document level, or when the target chunking is the labelled one, the golden set is used
    as it is (document level collapses chunk labels through ``chunk_to_doc``).  At chunk level on
    another chunking, labels are carried with :func:`~rag_metrics.retrieval.relabel.carry_labels`.
    """
    same = [c.id for c in labelled_chunks] == [c.id for c in target_chunks] and \
        [(c.start, c.end) for c in labelled_chunks] == [(c.start, c.end) for c in target_chunks]
    if level == "document" or same:
        return golden, None
    from rag_metrics.retrieval.relabel import carry_labels

    carried, report = carry_labels(golden, labelled_chunks, target_chunks)
    return GoldenSet(carried.queries, name=golden.name), report


def chunk_to_doc(*chunkings: Sequence[Chunk]) -> dict[str, str]:
    """``{chunk_id: doc_id}`` over several chunkings (chunk ids are ``<doc_id>#<n>`` in every one)."""
    out: dict[str, str] = {}
    for chunks in chunkings:
        out.update({c.id: c.doc_id for c in chunks})
    return out


def comparison_keys(metrics: Sequence[str], k: int) -> list[str]:
    """``["hit_rate@5", ...]``: the rows of the comparison table (also the CLI's ``--metrics``/``--k``)."""
    k = check_k(k, "K")
    return [f"{m}@{k}" for m in metrics]


def category_deltas(a: EvaluationResult, b: EvaluationResult, metric: str, k: int,
                    confidence: float = CI_CONFIDENCE) -> pd.DataFrame:
    """Per category: n, mean_a, mean_b, delta (B - A), the paired t-interval of the delta at
    ``confidence`` (cut to [-1, 1]; ``nan`` below 3 questions), wins, losses, ties, and
    ``too_few`` (True below 3 questions: the pages show "too few").  Categories in golden order;
    an ``(all)`` row last.

    The interval is Compare's (:func:`rag_metrics.compare.paired.paired_t_interval`): with
    ``confidence`` = the verdict table's ``ci_level`` the ``(all)`` row shows the verdict's
    interval.  Per-category intervals are descriptive (not corrected for the categories).
    """
    d = per_query_deltas(a, b, f"{metric}@{k}")
    rows = []
    groups = [(c, d[d["category"] == c]) for c in dict.fromkeys(d["category"].tolist())] + [("(all)", d)]
    for cat, g in groups:
        delta = g["delta"].to_numpy(dtype=float)
        lo, hi = paired_t_interval(delta, confidence)
        rows.append({"category": cat, "n": int(len(g)),
                     "mean_a": float(g["a"].mean()) if len(g) else math.nan,
                     "mean_b": float(g["b"].mean()) if len(g) else math.nan,
                     "delta": float(delta.mean()) if len(g) else math.nan, "ci_low": lo, "ci_high": hi,
                     "wins": int((delta > 0).sum()), "losses": int((delta < 0).sum()),
                     "ties": int((delta == 0).sum()), "too_few": too_few(len(g))})
    return pd.DataFrame(rows, columns=["category", "n", "mean_a", "mean_b", "delta", "ci_low", "ci_high", "wins",
                                       "losses", "ties", "too_few"])


def outcome_counts(deltas: pd.DataFrame) -> dict[str, int]:
    """``{"B better": n, "A better": n, "tie": n}`` from :func:`~rag_metrics.compare.paired.per_query_deltas`."""
    counts: Mapping[str, int] = deltas["outcome"].value_counts().to_dict() if len(deltas) else {}
    return {o: int(counts.get(o, 0)) for o in ("B better", "A better", "tie")}


def options_for(options: EvalOptions, level: Level) -> EvalOptions:
    """``options`` at ``level`` (the other conventions unchanged)."""
    from dataclasses import replace

    return replace(options, level=level)
