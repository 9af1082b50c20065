"""The app's retrieval layer: an indexed retriever with rankings memoised per question text, and a
lazily loaded encoder.

- :class:`RetrievalMemo`: a retriever indexed once, with results memoised **per question text** to a
  fixed depth, so a golden-set edit retrieves (and embeds) only new or changed question texts and a
  change of K never retrieves at all.
- :class:`LazyEncoder`: an :class:`~rag_metrics.retrieval.encoders.Encoder` that loads the
  sentence-transformers model only when a text misses the embedding cache (the app starts from the
  shipped embeddings without loading torch when every text is cached).

No streamlit import here; the app keeps one memo per chunking and retriever in ``ui/cache.py``.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from rag_metrics import jobs
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH
from rag_metrics.retrieval.encoders import DEFAULT_MODEL, DEFAULT_MODEL_ALIASES
from rag_metrics.types import Chunk, GoldenSet, Run

__all__ = ["LazyEncoder", "RetrievalMemo"]


class LazyEncoder:
    """Wraps :class:`SentenceTransformerEncoder`, loading it on the first :meth:`encode` call.

    ``dim`` may be given (e.g. from the shipped embeddings manifest) so nothing loads while every
    text is found in the embedding cache.
    """

    def __init__(self, model: str | None = None, dim: int | None = None) -> None:
        self._requested = model
        self.name = DEFAULT_MODEL if model is None or model in DEFAULT_MODEL_ALIASES else str(model)
        self._dim = dim
        self._encoder: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._encoder is not None

    def _load(self) -> Any:
        with self._lock:
            if self._encoder is None:
                from rag_metrics.retrieval.factory import get_encoder  # loaded once per process

                self._encoder = get_encoder(self._requested)
                self._dim = int(self._encoder.dim)
        return self._encoder

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._load()
        return int(self._dim)  # type: ignore[arg-type]  # _load() has set _dim

    def encode(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None):
        jobs.charge(len(texts))  # the seat's embedding budget (texts the cache did not hold are paid before)
        return self._load().encode(texts, progress=progress)


class RetrievalMemo:
    """A retriever indexed on one chunk list; rankings memoised per question text.

    Parameters
    ----------
    retriever
        An indexed retriever (``retrieve(queries, k) -> Run``).
    chunks
        The indexed chunks (for texts and the depth bound).
    depth
        Rankings are kept to ``min(depth, len(chunks))``.

    Thread-safe: the app shares one memo between browser sessions.
    """

    def __init__(self, retriever: Any, chunks: Sequence[Chunk], depth: int = DEFAULT_DEPTH) -> None:
        self.retriever = retriever
        self.chunks = list(chunks)
        self.depth = max(1, min(int(depth), len(self.chunks))) if self.chunks else 1
        self._memo: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()
        #: Number of question texts retrieved so far (tests and benchmarks read it).
        self.retrieved = 0

    def __contains__(self, text: str) -> bool:
        return text in self._memo

    def missing(self, texts: Iterable[str]) -> list[str]:
        return [t for t in dict.fromkeys(texts) if t not in self._memo]

    def ensure(self, texts: Iterable[str], progress: Callable[[int, int], None] | None = None) -> int:
        """Retrieve every text not yet memoised (one batch); returns how many were retrieved."""
        with self._lock:
            todo = self.missing(texts)
            if not todo:
                return 0
            queries = {f"t{i}": t for i, t in enumerate(todo)}
            run = self.retriever.retrieve(queries, k=self.depth, progress=progress)
            ranked = run.ranked_arrays()
            none = (np.array([], dtype=object), np.array([], dtype=np.float64))
            for key, text in queries.items():
                self._memo[text] = ranked.get(key, none)
            self.retrieved += len(todo)
            return len(todo)

    def search(self, text: str) -> list[tuple[str, float]]:
        """Ranked ``(chunk_id, score)`` for one text (memoised)."""
        self.ensure([text])
        ids, scores = self._memo[text]
        return list(zip(ids.tolist(), scores.tolist()))

    def run_for(self, golden: GoldenSet, name: str = "lab") -> Run:
        """The run of every golden question (retrieving only texts not memoised yet)."""
        self.ensure(q.question for q in golden)
        qids, ids, scores = [], [], []
        for q in golden:
            i, s = self._memo[q.question]
            qids.append(np.full(len(i), q.id, dtype=object))
            ids.append(i)
            scores.append(s)
        if not qids:
            return Run(np.array([], dtype=object), np.array([], dtype=object), np.array([]), name)
        return Run(np.concatenate(qids), np.concatenate(ids), np.concatenate(scores), name)
