"""Dense retrievers: exact NumPy brute force (the reference) and FAISS flat / HNSW.

Conventions
-----------
- Chunk and query vectors come from :func:`~rag_metrics.retrieval.cache.encode_with_cache`, so a
  rerun never re-embeds an unchanged chunk or question.  Vectors are unit-norm; the score is the
  inner product (cosine similarity), float32.
- Results per query are the top ``k`` in trec_eval order (score desc, chunk id desc).  The FAISS
  indexes fetch ``k + TIE_MARGIN`` candidates and re-sort them, so ties at the cut resolve by id
  as in the exact retriever (up to float rounding differences between BLAS kernels, ~1e-7).
- ``faiss`` is imported only when a FAISS index is built.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
from numpy.typing import NDArray

from rag_metrics.errors import InputError
from rag_metrics.retrieval.cache import EmbeddingCache, encode_with_cache
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH
from rag_metrics.retrieval.encoders import Encoder, Progress, query_encoder
from rag_metrics.retrieval.ranking import RunBuilder, desc_id_rank, top_k
from rag_metrics.types import Chunk, Run

if TYPE_CHECKING:  # pragma: no cover
    import faiss

__all__ = ["ExactRetriever", "DenseRetriever", "TIE_MARGIN", "check_k", "check_unique_ids"]

#: Extra candidates fetched from FAISS so ties at the k-th score resolve by id.
TIE_MARGIN = 16
_QUERY_BLOCK = 256


def check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or int(k) < 1:
        raise InputError(f"k must be a positive whole number of results, got {k!r}; e.g. --k 100.")
    return int(k)


def check_unique_ids(chunks: Sequence[Chunk]) -> list[str]:
    ids = [c.id for c in chunks]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]  # set.add() is None: records i
        raise InputError(f"duplicate chunk id {dup!r}; chunk ids must be unique in an index.")
    return ids


class ExactRetriever:
    """Brute-force cosine search in NumPy; the reference the FAISS indexes are tested against.

    Parameters
    ----------
    encoder : Encoder
        Embeds chunks and queries.
    cache : EmbeddingCache, optional
        On-disk embedding cache (``None``: embed everything every time).
    """

    kind = "exact"

    def __init__(self, encoder: Encoder, cache: EmbeddingCache | None = None) -> None:
        self.encoder = encoder
        self.cache = cache
        self.name = f"{self.kind}-{encoder.name}"
        self._ids: NDArray[np.object_] = np.array([], dtype=object)
        self._id_rank: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._vectors: NDArray[np.float32] = np.zeros((0, encoder.dim), dtype=np.float32)
        self._indexed = False

    # -- indexing ----------------------------------------------------------------------------
    def index(self, chunks: Sequence[Chunk], progress: Progress | None = None) -> None:
        """Embed (through the cache) and index ``chunks``, replacing any previous index."""
        ids = check_unique_ids(chunks)
        vectors = encode_with_cache(self.encoder, [c.text for c in chunks], self.cache, progress)
        self.index_vectors(ids, vectors)

    def index_vectors(self, ids: Sequence[str], vectors: NDArray[np.float32]) -> None:
        """Index precomputed unit-norm vectors (used by benchmarks and tests)."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(ids):
            raise InputError(f"index_vectors: {len(ids)} ids for an array of shape {vectors.shape}.")
        self._ids = np.asarray(list(ids), dtype=object)
        self._id_rank = desc_id_rank(list(ids))
        self._vectors = vectors
        self._build()
        self._indexed = True

    def _build(self) -> None:
        """Hook for subclasses that build an index over ``self._vectors`` (exact search needs none)."""

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def chunk_ids(self) -> list[str]:
        return self._ids.tolist()

    @property
    def vectors(self) -> NDArray[np.float32]:
        """The indexed chunk vectors (row i for ``chunk_ids[i]``)."""
        return self._vectors

    # -- search ------------------------------------------------------------------------------
    def embed_queries(self, queries: Mapping[str, str]) -> NDArray[np.float32]:
        """Query vectors (through the cache), rows in ``queries`` order; embedded by the model's
        query side (:func:`~rag_metrics.retrieval.encoders.query_encoder`: e5's ``"query: "``)."""
        return encode_with_cache(query_encoder(self.encoder), list(queries.values()), self.cache)

    def retrieve(self, queries: Mapping[str, str], k: int = DEFAULT_DEPTH,
                 progress: Progress | None = None) -> Run:
        """Top ``k`` chunks per query; ``Run`` ids are chunk ids."""
        if not self._indexed:
            raise InputError(f"{self.name}: call index(chunks) before retrieve().")
        k = check_k(k)
        qids = list(queries)
        qvecs = self.embed_queries(queries)
        return self.search_vectors(qids, qvecs, k, progress)

    def search_vectors(self, qids: Sequence[str], qvecs: NDArray[np.float32], k: int,
                       progress: Progress | None = None) -> Run:
        """Search with precomputed query vectors."""
        b = RunBuilder()
        n = len(self._ids)
        for lo in range(0, len(qids), _QUERY_BLOCK):
            block = np.ascontiguousarray(qvecs[lo:lo + _QUERY_BLOCK], dtype=np.float32)
            for j, (cand, sc) in enumerate(self._search_block(block, min(k, n))):
                order = top_k(sc, self._id_rank, k, cand)
                pos = np.searchsorted(cand, order) if cand is not None else order
                b.add(qids[lo + j], self._ids[order], sc[pos] if cand is not None else sc[order])
            if progress is not None:
                progress(min(lo + _QUERY_BLOCK, len(qids)), len(qids))
        return b.build(self.name)

    def _search_block(self, q: NDArray[np.float32], k: int
                      ) -> list[tuple[NDArray[np.int64] | None, NDArray[np.float32]]]:
        """Per query: (candidate indices sorted ascending or None for all, their scores)."""
        if k == 0:
            return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)) for _ in q]
        scores = q @ self._vectors.T
        return [(None, row) for row in scores]


class DenseRetriever(ExactRetriever):
    """FAISS inner-product search over unit vectors: exact ``flat`` or approximate ``hnsw``.

    Parameters
    ----------
    encoder : Encoder
    cache : EmbeddingCache, optional
    index : {"flat", "hnsw"}
        ``"flat"`` = ``IndexFlatIP`` (exact, the default); ``"hnsw"`` = ``IndexHNSWFlat`` with
        inner product, for large corpora (its recall against flat is measured in
        ``benchmarks/bench_ann.py``, not assumed).
    hnsw_m : int
        HNSW graph degree ``M``.
    ef_construction : int
        HNSW build beam width.
    ef_search : int
        HNSW search beam width (raised to ``k + TIE_MARGIN`` when smaller).
    """

    def __init__(self, encoder: Encoder, cache: EmbeddingCache | None = None,
                 index: Literal["flat", "hnsw"] = "flat", hnsw_m: int = 32,
                 ef_construction: int = 200, ef_search: int = 128) -> None:
        if index not in ("flat", "hnsw"):
            raise InputError(f"unknown dense index {index!r}; use 'flat' (exact) or 'hnsw'.")
        self.kind = "dense" if index == "flat" else "dense-hnsw"
        super().__init__(encoder, cache)
        self.index_type = index
        self.hnsw_m = int(hnsw_m)
        self.ef_construction = int(ef_construction)
        self.ef_search = int(ef_search)
        self._faiss_index: faiss.Index | None = None

    def _build(self) -> None:
        try:
            import faiss
        except ImportError:
            raise InputError("the dense retriever needs faiss; install it with "
                             "`pip install faiss-cpu`.") from None
        dim = self._vectors.shape[1]
        idx: faiss.Index
        if self.index_type == "flat":
            idx = faiss.IndexFlatIP(dim)
        else:
            hnsw = faiss.IndexHNSWFlat(dim, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efConstruction = self.ef_construction
            idx = hnsw
        if len(self._vectors):
            idx.add(self._vectors)
        self._faiss_index = idx

    def _search_block(self, q: NDArray[np.float32], k: int
                      ) -> list[tuple[NDArray[np.int64] | None, NDArray[np.float32]]]:
        n = len(self._ids)
        if k == 0 or n == 0:
            return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)) for _ in q]
        fetch = min(n, k + TIE_MARGIN)
        idx = self._faiss_index
        assert idx is not None  # built by index_vectors() whenever there are rows (n > 0)
        if self.index_type == "hnsw":
            cast("faiss.IndexHNSW", idx).hnsw.efSearch = max(self.ef_search, fetch)
        dist, lab = idx.search(q, fetch)
        out: list[tuple[NDArray[np.int64] | None, NDArray[np.float32]]] = []
        for d, rows in zip(dist, lab):
            ok = rows >= 0
            rows, d = rows[ok].astype(np.int64), d[ok].astype(np.float32)
            order = np.argsort(rows, kind="stable")
            out.append((rows[order], d[order]))
        return out
