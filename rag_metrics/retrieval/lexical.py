"""BM25 retriever on bm25s (lower-casing, English stop words, Snowball stemming).

Conventions
-----------
- Tokenisation: bm25s' default pattern (words of 2+ word characters), lower-cased, stop words
  removed (``stopwords="en"``; ``None`` keeps them), Snowball stemmer (``stemmer="english"``;
  ``None`` disables; needs PyStemmer).  Queries and chunks are tokenised identically.
- Scoring: bm25s ``method="lucene"``, ``k1=1.5``, ``b=0.75``.  Every chunk is scored (exact, no
  top-k approximation) and the top ``k`` are taken in trec_eval order (score desc, id desc).
- Chunks with score 0 (no query term) are **not** returned, as in Lucene/Pyserini; a query whose
  every word is a stop word or unknown returns no rows (it then counts 0 in the means).
- ``bm25s`` and ``Stemmer`` are imported on :meth:`BM25Retriever.index`.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from rag_metrics.errors import InputError
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH
from rag_metrics.retrieval.dense import check_k, check_unique_ids
from rag_metrics.retrieval.encoders import Progress
from rag_metrics.retrieval.ranking import RunBuilder, desc_id_rank, top_k
from rag_metrics.types import Chunk, Run

__all__ = ["BM25Retriever"]


class BM25Retriever:
    """Lexical BM25 retriever.

    Parameters
    ----------
    stemmer : str or None
        Snowball language for PyStemmer (``"english"``) or ``None`` for no stemming.
    stopwords : str, list of str or None
        bm25s stop word list name (``"en"``), an explicit list, or ``None``.
    k1, b : float
        BM25 parameters.
    method : str
        bm25s variant (``"lucene"``, ``"robertson"``, ``"atire"``, ``"bm25l"``, ``"bm25+"``).
    """

    def __init__(self, stemmer: str | None = "english", stopwords: str | list[str] | None = "en",
                 *, k1: float = 1.5, b: float = 0.75, method: str = "lucene") -> None:
        self.stemmer_language = stemmer
        self.stopwords = stopwords
        self.k1, self.b, self.method = float(k1), float(b), method
        self.name = "bm25"
        self._bm25: Any = None
        self._stemmer: Any = None
        self._ids = np.array([], dtype=object)
        self._id_rank = np.zeros(0, dtype=np.int64)

    def _tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        import bm25s

        return bm25s.tokenize(list(texts), stopwords=self.stopwords or [],
                              stemmer=self._stemmer, return_ids=False, show_progress=False)

    def index(self, chunks: Sequence[Chunk], progress: Progress | None = None) -> None:
        """Tokenise and index ``chunks`` (replacing any previous index)."""
        try:
            import bm25s
        except ImportError:
            raise InputError("the BM25 retriever needs bm25s; install it with "
                             "`pip install bm25s PyStemmer`.") from None
        if self.stemmer_language:
            try:
                import Stemmer
            except ImportError:
                raise InputError("stemming needs PyStemmer (`pip install PyStemmer`); or pass "
                                 "stemmer=None.") from None
            try:
                self._stemmer = Stemmer.Stemmer(self.stemmer_language)
            except KeyError:
                raise InputError(f"unknown stemmer language {self.stemmer_language!r}; e.g. "
                                 "'english', or None for no stemming.") from None
        ids = check_unique_ids(chunks)
        tokens = self._tokenize([c.text for c in chunks])
        bm25 = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        bm25.index(tokens, show_progress=False)
        self._bm25 = bm25
        self._ids = np.asarray(ids, dtype=object)
        self._id_rank = desc_id_rank(ids)
        if progress is not None:
            progress(len(ids), len(ids))

    def __len__(self) -> int:
        return len(self._ids)

    def retrieve(self, queries: Mapping[str, str], k: int = DEFAULT_DEPTH,
                 progress: Progress | None = None) -> Run:
        """Top ``k`` chunks per query with a positive BM25 score."""
        if self._bm25 is None:
            raise InputError("bm25: call index(chunks) before retrieve().")
        k = check_k(k)
        qids = list(queries)
        tokens = self._tokenize([queries[q] for q in qids])
        b = RunBuilder()
        for n, (qid, toks) in enumerate(zip(qids, tokens), start=1):
            if toks and len(self._ids):
                scores = np.asarray(self._bm25.get_scores(toks), dtype=np.float32)
                pos = np.flatnonzero(scores > 0)
                order = top_k(scores[pos], self._id_rank, k, pos)
                b.add(qid, self._ids[order], scores[order])
            else:
                b.add(qid, [], [])
            if progress is not None and (n % 64 == 0 or n == len(qids)):
                progress(n, len(qids))
        return b.build(self.name)
