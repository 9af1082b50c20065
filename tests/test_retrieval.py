"""Retrievers: trec_eval tie order, FAISS vs exact NumPy, HNSW recall, BM25, fusion, collapse."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from rag_metrics.errors import InputError
from rag_metrics.retrieval import (
    BM25Retriever,
    DenseRetriever,
    ExactRetriever,
    HashingEncoder,
    HybridRetriever,
    Retriever,
    collapse_to_documents,
    make_retriever,
)
from rag_metrics.retrieval.hybrid import normalise_scores, rrf_fuse, weighted_fuse
from rag_metrics.retrieval.ranking import desc_id_rank, top_k
from rag_metrics.types import Chunk, Run


def _chunks(texts: dict[str, str]) -> list[Chunk]:
    return [Chunk(i, i.split("#")[0], t, 0, len(t)) for i, t in texts.items()]


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# -- ordering --------------------------------------------------------------------------------------
def test_top_k_breaks_ties_by_id_descending_bytewise() -> None:
    ids = ["10", "9", "a", "b", "c"]
    scores = np.array([1.0, 1.0, 0.5, 2.0, 0.5], dtype=np.float32)
    order = top_k(scores, desc_id_rank(ids), 4)
    # "b" (2.0); then "9" before "10" (trec_eval strcmp(b, a)); then "c" before "a"
    assert [ids[i] for i in order] == ["b", "9", "10", "c"]
    # the cut is exact among ties: of "a" and "c" (both 0.5) only "c" survives k=1
    assert [ids[i] for i in top_k(scores, desc_id_rank(ids), 3)] == ["b", "9", "10"]
    assert [ids[i] for i in top_k(scores[[2, 4]], desc_id_rank(ids), 1, np.array([2, 4]))] == ["c"]


# -- dense -----------------------------------------------------------------------------------------
def test_faiss_flat_equals_exact_numpy() -> None:
    rng = np.random.default_rng(0)
    vecs, qs = _unit(rng, 2000, 48), _unit(rng, 50, 48)
    ids = [f"d{i}#0" for i in range(2000)]
    qids = [f"q{i}" for i in range(50)]
    enc = HashingEncoder(48)
    exact, flat = ExactRetriever(enc), DenseRetriever(enc)
    exact.index_vectors(ids, vecs)
    flat.index_vectors(ids, vecs)
    a = exact.search_vectors(qids, qs, 20).rankings()
    b = flat.search_vectors(qids, qs, 20).rankings()
    for q in qids:
        assert [i for i, _ in a[q]] == [i for i, _ in b[q]]
        np.testing.assert_allclose([s for _, s in a[q]], [s for _, s in b[q]], atol=1e-5)
    # reference: plain argsort of the dot products
    s = qs[0] @ vecs.T
    assert [i for i, _ in a["q0"]] == [ids[j] for j in np.argsort(-s)[:20]]


def test_exact_ties_resolve_by_id_in_both_retrievers() -> None:
    vecs = np.tile(np.eye(4, dtype=np.float32)[:1], (6, 1))  # six identical vectors
    ids = ["a#0", "b#0", "c#0", "d#0", "e#0", "f#0"]
    for r in (ExactRetriever(HashingEncoder(4)), DenseRetriever(HashingEncoder(4))):
        r.index_vectors(ids, vecs)
        run = r.search_vectors(["q"], vecs[:1], 3)
        assert [i for i, _ in run.rankings()["q"]] == ["f#0", "e#0", "d#0"]


def test_hnsw_recall_is_measured_against_exact() -> None:
    rng = np.random.default_rng(1)
    vecs, qs = _unit(rng, 5000, 32), _unit(rng, 100, 32)
    ids = [str(i) for i in range(5000)]
    qids = [str(i) for i in range(100)]
    exact = ExactRetriever(HashingEncoder(32))
    hnsw = DenseRetriever(HashingEncoder(32), index="hnsw", hnsw_m=16, ef_search=64)
    exact.index_vectors(ids, vecs)
    hnsw.index_vectors(ids, vecs)
    a = exact.search_vectors(qids, qs, 10).rankings()
    b = hnsw.search_vectors(qids, qs, 10).rankings()
    recall = np.mean([len({i for i, _ in a[q]} & {i for i, _ in b[q]}) / 10 for q in qids])
    assert recall >= 0.9, recall


def test_dense_retriever_end_to_end_with_hashing_encoder() -> None:
    chunks = _chunks({"cats#0": "cats purr and sleep", "dogs#0": "dogs bark loudly",
                      "fish#0": "fish swim in water"})
    r = DenseRetriever(HashingEncoder(256))
    r.index(chunks)
    run = r.retrieve({"q1": "why do dogs bark", "q2": "swim water"}, k=2)
    rk = run.rankings()
    assert rk["q1"][0][0] == "dogs#0" and rk["q2"][0][0] == "fish#0"
    assert len(rk["q1"]) == 2
    assert isinstance(r, Retriever)


def test_dense_rejects_bad_input() -> None:
    r = DenseRetriever(HashingEncoder(8))
    with pytest.raises(InputError, match=r"call index\(chunks\) before retrieve"):
        r.retrieve({"q": "x"})
    with pytest.raises(InputError, match="duplicate chunk id 'a#0'"):
        r.index(_chunks({"a#0": "x"}) * 2)
    r.index(_chunks({"a#0": "x"}))
    with pytest.raises(InputError, match="k must be a positive whole number of results, got 0"):
        r.retrieve({"q": "x"}, k=0)
    with pytest.raises(InputError, match="unknown dense index 'ivf'"):
        DenseRetriever(HashingEncoder(8), index="ivf")  # type: ignore[arg-type]  # bad input on purpose


def test_k_larger_than_corpus() -> None:
    r = ExactRetriever(HashingEncoder(8))
    r.index(_chunks({"a#0": "x y", "b#0": "y z"}))
    assert len(r.retrieve({"q": "y"}, k=100)) == 2


# -- BM25 ------------------------------------------------------------------------------------------
def test_bm25_ranks_matching_chunk_first_and_drops_non_matching() -> None:
    chunks = _chunks({
        "billing#0": "Invoices are emailed monthly. Refunds take five days.",
        "sync#0": "Offline mode keeps notes synced when you reconnect.",
        "security#0": "Two-factor authentication protects your account.",
    })
    r = BM25Retriever()
    r.index(chunks)
    run = r.retrieve({"q": "how do refunds work", "stop": "the and of", "syncing": "syncing"}, k=10)
    rk = run.rankings()
    assert [i for i, _ in rk["q"]] == ["billing#0"]  # zero-score chunks are not returned
    assert "stop" not in rk  # only stop words: no rows
    assert rk["syncing"][0][0] == "sync#0"  # stemming: syncing ~ synced
    assert BM25Retriever(stemmer=None).name == "bm25"


def test_bm25_unknown_stemmer() -> None:
    with pytest.raises(InputError, match="unknown stemmer language 'klingon'"):
        BM25Retriever(stemmer="klingon").index(_chunks({"a#0": "x"}))


# -- fusion ----------------------------------------------------------------------------------------
def test_rrf_arithmetic() -> None:
    a = Run.from_rankings({"q": ["x", "y", "z"]})
    b = Run.from_rankings({"q": ["z", "x"]})
    fused = rrf_fuse([a, b], rrf_k=60).rankings()["q"]
    expected = {"x": 1 / 61 + 1 / 62, "z": 1 / 63 + 1 / 61, "y": 1 / 62}
    assert [i for i, _ in fused] == ["x", "z", "y"]
    for i, s in fused:
        assert s == pytest.approx(expected[i])
    # weights scale each run's contribution
    w = rrf_fuse([a, b], rrf_k=60, weights=[0.0, 1.0]).rankings()["q"]
    assert [i for i, _ in w] == ["z", "x", "y"]


def test_weighted_fusion_with_minmax() -> None:
    a = Run.from_dict({"q": {"x": 10.0, "y": 5.0, "z": 0.0}})  # minmax -> 1, .5, 0
    b = Run.from_dict({"q": {"z": 0.9, "y": 0.5}})  # minmax -> z 1, y 0
    fused = dict(weighted_fuse([a, b], [0.7, 0.3], "minmax").rankings()["q"])
    assert fused == pytest.approx({"x": 0.7, "y": 0.35, "z": 0.3})


def test_normalisations() -> None:
    s = np.array([2.0, 4.0, 6.0])
    np.testing.assert_allclose(normalise_scores(s, "minmax"), [0, 0.5, 1])
    np.testing.assert_allclose(normalise_scores(s, "max"), [1 / 3, 2 / 3, 1])
    np.testing.assert_allclose(normalise_scores(s, "zscore"), (s - 4) / np.std(s))
    np.testing.assert_allclose(normalise_scores(np.array([3.0, 3.0]), "minmax"), [1, 1])
    np.testing.assert_allclose(normalise_scores(np.array([3.0, 3.0]), "zscore"), [0, 0])
    with pytest.raises(InputError, match="unknown score normalisation 'l2'"):
        normalise_scores(s, "l2")  # type: ignore[arg-type]  # bad input on purpose


def test_hybrid_retriever_combines_both() -> None:
    chunks = _chunks({"a#0": "alpha beta", "b#0": "gamma delta", "c#0": "alpha gamma"})
    h = HybridRetriever(DenseRetriever(HashingEncoder(64)), BM25Retriever())
    h.index(chunks)
    rk = h.retrieve({"q": "alpha"}, k=2).rankings()["q"]
    assert len(rk) == 2 and {i for i, _ in rk} <= {"a#0", "c#0"}
    hw = HybridRetriever(DenseRetriever(HashingEncoder(64)), BM25Retriever(), method="weighted",
                         weight=1.0)
    hw.index(chunks)
    assert hw.retrieve({"q": "alpha"}, k=3).rankings()["q"][0][1] == pytest.approx(1.0)
    with pytest.raises(InputError, match="hybrid weight must be between 0 and 1, got 2"):
        HybridRetriever(None, None, weight=2)
    with pytest.raises(InputError, match="unknown fusion method 'sum'"):
        HybridRetriever(None, None, method="sum")  # type: ignore[arg-type]  # bad input on purpose


# -- collapse --------------------------------------------------------------------------------------
def test_collapse_to_documents_first_chunk_wins() -> None:
    run = Run.from_dict({"q": {"a#1": 0.9, "b#0": 0.8, "a#0": 0.7, "c#2": 0.7, "b#3": 0.1}})
    c2d = {"a#0": "a", "a#1": "a", "b#0": "b", "b#3": "b", "c#2": "c"}
    doc = collapse_to_documents(run, c2d).rankings()["q"]
    # chunk order: a#1 .9, b#0 .8, c#2 .7 (id desc beats a#0), a#0 .7, b#3 .1
    assert doc == [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    assert collapse_to_documents(run, c2d, k=2).rankings()["q"] == [("a", 0.9), ("b", 0.8)]
    ranked = collapse_to_documents(run, c2d, scores="rank").rankings()["q"]
    assert ranked == [("a", 3.0), ("b", 2.0), ("c", 1.0)]
    with pytest.raises(InputError, match="run id 'a#1' \\(query 'q'\\) is not a chunk of the corpus"):
        collapse_to_documents(run, {})


# -- factory and laziness --------------------------------------------------------------------------
def test_make_retriever_kinds() -> None:
    assert isinstance(make_retriever("bm25"), BM25Retriever)
    d = make_retriever("dense", "hashing-16", cache=False)
    assert isinstance(d, DenseRetriever) and d.cache is None
    h = make_retriever("hybrid", "hashing-16", cache=False, fusion="weighted")
    assert isinstance(h, HybridRetriever) and h.method == "weighted"
    with pytest.raises(InputError, match="unknown retriever 'sparse'; use one of dense, bm25, hybrid"):
        make_retriever("sparse")  # type: ignore[arg-type]  # bad input on purpose


def test_importing_retrieval_is_light() -> None:
    code = ("import sys, rag_metrics.retrieval as r; r.chunk_corpus; r.collapse_to_documents;"
            "r.EmbeddingCache; r.DenseRetriever; r.BM25Retriever; r.HybridRetriever;"
            "heavy = [m for m in ('torch', 'faiss', 'sentence_transformers', 'bm25s', 'transformers')"
            " if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_default_encoder_is_lazy_and_knows_its_dimension() -> None:
    code = ("import sys; from rag_metrics.retrieval import SentenceTransformerEncoder as S;"
            "e = S(); e2 = S('sentence-transformers/all-MiniLM-L6-v2');"
            "assert (e.name, e.dim, e.loaded, e2.name) == ('all-MiniLM-L6-v2', 384, False, e.name);"
            "assert e.encode([]).shape == (0, 384);"
            "sys.exit(1 if 'torch' in sys.modules else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
