"""Dense vs BM25 vs hybrid on the classic collections (document level), with a brute-force check.

For each collection in ``../shared/datasets`` (cranfield, cisi, med, adi, cacm):

1. load the BEIR folder (title folded into the text, see ``rag_metrics.io.corpus``), chunk it with
   the defaults (500 / 100 characters);
2. retrieve the top ``CHUNK_DEPTH`` chunks per query with dense (MiniLM + FAISS flat), BM25 and
   hybrid (RRF, k=60), collapse to documents (first chunk wins) and cut to 100 documents;
3. score nDCG@10, MRR@10 and R@100 with ``rag_metrics.evaluation`` (trec_eval conventions);
4. check the dense chunk ranking against an independent computation: plain
   ``SentenceTransformer.encode(normalize_embeddings=True)`` + NumPy ``Q @ E.T`` + ``argsort``.
   Rankings must be identical except where neighbouring scores differ by less than ``TIE_EPS``.

Embeddings go through the on-disk cache (``$RAG_METRICS_CACHE`` or ``~/.cache/rag_metrics``), and
the independent embeddings are kept in ``<cache>/bench-plain/``, so only the first run is slow
(MiniLM embeds ~25 chunks/s on 2 CPU cores; the five collections have ~16k chunks).

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_retrieval.py [collection ...]
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag_metrics.evaluation import evaluate  # noqa: E402
from rag_metrics.io.corpus import load_corpus  # noqa: E402
from rag_metrics.io.trec import read_qrels  # noqa: E402
from rag_metrics.retrieval import (  # noqa: E402
    BM25Retriever,
    DenseRetriever,
    EmbeddingCache,
    HybridRetriever,
    chunk_corpus,
    chunk_to_doc,
    collapse_to_documents,
    get_encoder,
)
from rag_metrics.retrieval.cache import default_cache_dir  # noqa: E402

DATASETS = Path(os.environ.get("RAG_METRICS_DATASETS", "/work/shared/datasets"))
COLLECTIONS = ["cranfield", "cisi", "med", "adi", "cacm"]
CHUNK_DEPTH = 1000
DOC_DEPTH = 100
TIE_EPS = 1e-5


def _progress(label: str):
    last = [0.0]

    def cb(done: int, total: int) -> None:
        now = time.time()
        if total and (now - last[0] > 10 or done == total):
            last[0] = now
            print(f"  {label}: {done}/{total}", file=sys.stderr, flush=True)
    return cb


def plain_embeddings(model, texts: list[str], tag: str) -> np.ndarray:
    """Independent embeddings: plain SentenceTransformer.encode, stored as .npy (no pickle)."""
    h = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()[:16]
    path = default_cache_dir() / "bench-plain" / f"{tag}-{h}.npy"
    if path.is_file():
        return np.load(path, allow_pickle=False)
    t = time.time()
    e = model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                     show_progress_bar=False).astype(np.float32)
    print(f"  plain encode {tag}: {len(texts)} texts in {time.time() - t:.1f}s "
          f"({len(texts) / (time.time() - t):.1f}/s)", file=sys.stderr, flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, e, allow_pickle=False)
    return e


def check_against_bruteforce(run_rankings, qids, qvec, evec, chunk_ids, depth) -> dict:
    """Compare dense rankings with argsort of plain NumPy scores; differences only at float ties.

    A query is *tie-only* when every position where the ids differ holds, in our run, an id whose
    reference score is within ``TIE_EPS`` of the reference score at that position.
    """
    scores = qvec @ evec.T
    pos_of = {c: j for j, c in enumerate(chunk_ids)}
    same = tie_only = real = 0
    max_abs = 0.0
    for qi, q in enumerate(qids):
        s = scores[qi]
        ref = np.argsort(-s, kind="stable")[:depth]
        ours = run_rankings.get(q, [])[:depth]
        our_idx = np.array([pos_of[i] for i, _ in ours], dtype=np.int64)
        our_scores = np.array([sc for _, sc in ours])
        if len(ours):
            max_abs = max(max_abs, float(np.max(np.abs(our_scores - s[our_idx]))))
        if len(our_idx) == len(ref) and np.array_equal(our_idx, ref):
            same += 1
        elif len(our_idx) == len(ref) and np.all(np.abs(s[our_idx] - s[ref]) < TIE_EPS):
            tie_only += 1
        else:
            real += 1
    return {"identical": same, "tie_only": tie_only, "mismatch": real, "max_abs_score_diff": max_abs}


def run_collection(name: str, encoder, cache: EmbeddingCache) -> dict:
    folder = DATASETS / name
    corpus = load_corpus(folder)
    chunks = chunk_corpus(corpus)
    c2d = chunk_to_doc(chunks)
    golden = read_qrels(folder)
    queries = golden.questions()
    out: dict = {"collection": name, "docs": len(corpus), "chunks": len(chunks),
                 "queries": len(queries)}
    print(f"[{name}] {len(corpus)} docs, {len(chunks)} chunks, {len(queries)} queries",
          file=sys.stderr, flush=True)

    dense = DenseRetriever(encoder, cache)
    t = time.time()
    dense.index(chunks, _progress(f"{name} embed"))
    out["dense_index_s"] = time.time() - t
    bm25 = BM25Retriever()
    t = time.time()
    bm25.index(chunks)
    out["bm25_index_s"] = time.time() - t
    hybrid = HybridRetriever(dense, bm25, candidate_depth=CHUNK_DEPTH)
    hybrid.index = lambda *_a, **_k: None  # type: ignore[method-assign]  # parts already indexed

    runs = {}
    for label, r in (("dense", dense), ("bm25", bm25), ("hybrid-rrf", hybrid)):
        t = time.time()
        chunk_run = r.retrieve(queries, CHUNK_DEPTH)
        dt = time.time() - t
        doc_run = collapse_to_documents(chunk_run, c2d, k=DOC_DEPTH)
        res = evaluate(golden, doc_run)
        out[label] = {"ndcg@10": res.mean("ndcg@10"), "mrr@10": res.mean("mrr@10"),
                      "recall@100": res.mean("recall@100"),
                      "ms_per_query": 1000 * dt / max(len(queries), 1)}
        runs[label] = chunk_run

    # independent brute force with the same model
    model = encoder.model
    qids = list(queries)
    texts = [c.text for c in chunks]
    evec = plain_embeddings(model, texts, f"{name}-chunks")
    qvec = plain_embeddings(model, [queries[q] for q in qids], f"{name}-queries")
    out["bruteforce"] = check_against_bruteforce(runs["dense"].rankings(), qids, qvec, evec,
                                                 [c.id for c in chunks], 100)
    return out


def main(argv: list[str]) -> int:
    names = argv or COLLECTIONS
    encoder = get_encoder(None)
    cache = EmbeddingCache()
    results = []
    t0 = time.time()
    for n in names:
        results.append(run_collection(n, encoder, cache))
    print()
    print(f"Document level (chunks 500/100 collapsed, first chunk wins), top {CHUNK_DEPTH} chunks "
          f"-> {DOC_DEPTH} docs; model {encoder.name}; metrics by rag_metrics.evaluation "
          "(trec_eval conventions)")
    hdr = f"{'collection':<10} {'docs':>5} {'chunks':>6} {'q':>4}  {'retriever':<11} " \
          f"{'nDCG@10':>8} {'MRR@10':>8} {'R@100':>8} {'ms/q':>7}"
    print(hdr)
    print("-" * len(hdr))
    for r in results:
        for label in ("dense", "bm25", "hybrid-rrf"):
            m = r[label]
            print(f"{r['collection']:<10} {r['docs']:>5} {r['chunks']:>6} {r['queries']:>4}  "
                  f"{label:<11} {m['ndcg@10']:>8.4f} {m['mrr@10']:>8.4f} {m['recall@100']:>8.4f} "
                  f"{m['ms_per_query']:>7.2f}")
    print()
    print("Dense vs independent brute force (plain SentenceTransformer.encode + NumPy argsort), "
          f"top 100 chunks per query, ties = |score diff| < {TIE_EPS}")
    print(f"{'collection':<10} {'identical':>9} {'tie-only':>8} {'mismatch':>8} "
          f"{'max|score diff|':>16}")
    for r in results:
        b = r["bruteforce"]
        print(f"{r['collection']:<10} {b['identical']:>9} {b['tie_only']:>8} {b['mismatch']:>8} "
              f"{b['max_abs_score_diff']:>16.2e}")
    print()
    print(f"{'collection':<10} {'dense index s':>13} {'bm25 index s':>12}   (index time; dense "
          "includes embedding unless cached)")
    for r in results:
        print(f"{r['collection']:<10} {r['dense_index_s']:>13.1f} {r['bm25_index_s']:>12.2f}")
    print(f"\ncache: {cache}; total {time.time() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
