"""FAISS flat vs HNSW: build time, query latency and recall@10 at 100k and 1M vectors (384-d).

Vectors and queries are i.i.d. Gaussian, L2-normalised: the worst case for graph indexes (in 384
dimensions all similarities concentrate near 0, so the true top 10 are barely closer than the rest
and HNSW recall is very low).  ``--real`` measures recall on real MiniLM chunk embeddings, which is
what the app and CLI index (recall there is 0.99+ at the default efSearch=128).
Recall@10 = |HNSW top 10 ∩ flat top 10| / 10, averaged over queries.
Latency is measured one query at a time (what an interactive app does) and as a batch, both for
raw FAISS and for our ``DenseRetriever.search_vectors`` (which adds the trec_eval tie re-sort and
builds a ``Run``).

Run::

    .venv/bin/python benchmarks/bench_ann.py [sizes ...]     # default: 100000 1000000
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_ann.py --real   # real MiniLM chunk vectors
                                                    # (needs the cache filled by bench_retrieval)
    .venv/bin/python benchmarks/bench_ann.py --flat-only 1000000  # skip the (slow) HNSW build
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag_metrics.retrieval import DenseRetriever, HashingEncoder  # noqa: E402

DIM = 384
N_QUERIES = 200
K = 10
HNSW_M = 32
EF_CONSTRUCTION = 100
EF_SEARCH = (32, 64, 128, 256, 512)


def unit(rng: np.random.Generator, n: int, block: int = 100_000) -> np.ndarray:
    out = np.empty((n, DIM), dtype=np.float32)
    for lo in range(0, n, block):
        x = rng.standard_normal((min(block, n - lo), DIM), dtype=np.float32)
        out[lo:lo + len(x)] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def per_query_ms(index, q: np.ndarray, k: int) -> float:
    t = time.perf_counter()
    for i in range(len(q)):
        index.search(q[i:i + 1], k)
    return 1000 * (time.perf_counter() - t) / len(q)


def bench(n: int, hnsw_too: bool = True) -> None:
    import faiss

    rng = np.random.default_rng(0)
    t = time.perf_counter()
    xb = unit(rng, n)
    xq = unit(rng, N_QUERIES)
    gen_s = time.perf_counter() - t
    ids = [str(i) for i in range(n)]
    qids = [f"q{i}" for i in range(N_QUERIES)]
    enc = HashingEncoder(DIM)  # only names the retriever; vectors are given directly

    flat = DenseRetriever(enc)
    t = time.perf_counter()
    flat.index_vectors(ids, xb)
    flat_build = time.perf_counter() - t
    fi = flat._faiss_index
    _, truth = fi.search(xq, K)
    flat_q = per_query_ms(fi, xq, K)
    t = time.perf_counter()
    fi.search(xq, K)
    flat_batch = 1000 * (time.perf_counter() - t) / N_QUERIES
    t = time.perf_counter()
    flat.search_vectors(qids[:50], xq[:50], K)
    flat_ours = 1000 * (time.perf_counter() - t) / 50

    print(f"\n{n:,} vectors x {DIM}-d float32 ({xb.nbytes / 2**20:,.0f} MiB; generated in "
          f"{gen_s:.1f}s), {N_QUERIES} queries, k={K}, faiss threads {faiss.omp_get_max_threads()}")
    print(f"{'index':<28} {'build s':>8} {'ms/query':>9} {'batch ms/q':>10} {'ours ms/q':>9} "
          f"{'recall@10':>9}")
    print(f"{'flat (IndexFlatIP, exact)':<28} {flat_build:>8.2f} {flat_q:>9.2f} {flat_batch:>10.3f} "
          f"{flat_ours:>9.2f} {1.0:>9.3f}")
    if not hnsw_too:
        return
    hnsw = DenseRetriever(enc, index="hnsw", hnsw_m=HNSW_M, ef_construction=EF_CONSTRUCTION)
    t = time.perf_counter()
    hnsw.index_vectors(ids, xb)
    hnsw_build = time.perf_counter() - t
    hi = hnsw._faiss_index
    for ef in EF_SEARCH:
        hi.hnsw.efSearch = ef
        _, got = hi.search(xq, K)
        recall = np.mean([len(set(a) & set(b)) / K for a, b in zip(truth, got)])
        q_ms = per_query_ms(hi, xq, K)
        t = time.perf_counter()
        hi.search(xq, K)
        batch = 1000 * (time.perf_counter() - t) / N_QUERIES
        hnsw.ef_search = ef
        t = time.perf_counter()
        hnsw.search_vectors(qids[:50], xq[:50], K)
        ours = 1000 * (time.perf_counter() - t) / 50
        label = f"HNSW M={HNSW_M} efC={EF_CONSTRUCTION} efS={ef}"
        build = f"{hnsw_build:>8.2f}" if ef == EF_SEARCH[0] else f"{'':>8}"
        print(f"{label:<28} {build} {q_ms:>9.3f} {batch:>10.3f} {ours:>9.2f} {recall:>9.3f}")
    print("(ours = DenseRetriever.search_vectors: fetches k+16 and re-sorts ties by id; "
          "HNSW efSearch is raised to k+16=26 when smaller)")


def bench_real() -> None:
    """HNSW recall on real MiniLM chunk embeddings of the five collections (from the cache)."""
    import json

    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval import EmbeddingCache, chunk_corpus, encode_with_cache, get_encoder

    root = Path("/work/shared/datasets")
    texts: list[str] = []
    questions: list[str] = []
    for name in ("cranfield", "cisi", "med", "adi", "cacm"):
        texts += [c.text for c in chunk_corpus(load_corpus(root / name))]
        with open(root / name / "queries.jsonl", encoding="utf-8") as fh:
            questions += [json.loads(line)["text"] for line in fh if line.strip()]
    enc = get_encoder(None)
    cache = EmbeddingCache()
    xb = encode_with_cache(enc, texts, cache)
    xq = encode_with_cache(enc, questions, cache)
    ids = [str(i) for i in range(len(texts))]
    qids = [str(i) for i in range(len(questions))]
    flat = DenseRetriever(enc)
    flat.index_vectors(ids, xb)
    truth = flat.search_vectors(qids, xq, K).rankings()
    hnsw = DenseRetriever(enc, index="hnsw", hnsw_m=HNSW_M, ef_construction=EF_CONSTRUCTION)
    t = time.perf_counter()
    hnsw.index_vectors(ids, xb)
    build = time.perf_counter() - t
    print(f"\nReal MiniLM embeddings: {len(texts):,} chunks of the five collections, "
          f"{len(questions)} real queries, k={K}; HNSW build {build:.1f}s")
    print(f"{'index':<28} {'ours ms/q':>9} {'recall@10':>9}")
    for ef in EF_SEARCH:
        hnsw.ef_search = ef
        t = time.perf_counter()
        got = hnsw.search_vectors(qids, xq, K).rankings()
        ms = 1000 * (time.perf_counter() - t) / len(qids)
        recall = np.mean([len({i for i, _ in truth[q]} & {i for i, _ in got.get(q, [])}) / K
                          for q in qids])
        print(f"{f'HNSW M={HNSW_M} efC={EF_CONSTRUCTION} efS={max(ef, K + 16)}':<28} {ms:>9.2f} "
              f"{recall:>9.3f}")


def main(argv: list[str]) -> int:
    real = "--real" in argv
    flat_only = "--flat-only" in argv
    sizes = [int(a) for a in argv if not a.startswith("--")] or \
        ([] if real else [100_000, 1_000_000])
    for n in sizes:
        bench(n, hnsw_too=not flat_only)
    if real:
        bench_real()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
