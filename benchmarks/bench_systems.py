"""Systems (issue 9): evaluating an uploaded run, and querying a pgvector table.

    .venv/bin/python benchmarks/bench_systems.py [--queries 10000] [--depth 100]
        [--chunks 50000] [--pg-queries 1000] [--skip-pg]

Prints figures (not a test; the machines are shared and noisy).

1. An uploaded 10k-question x 100 TREC run (1M lines), in memory as the app receives it:
   parse (``parse_upload``), match to the golden questions and judge (``System.rank`` +
   ``evaluate``), then the dashboard tables (means at every K, per-category table, the
   judged@K system table, the failures table and the pooled labelling queue).  Category
   confidence intervals are the dashboard's (bootstrap, 1,000 resamples).  The same for the
   run as a JSONL file of ranked id lists, and for a RAG log with context ids.
2. A PostgreSQL + pgvector server (pgserver) with 50k chunks of **random unit vectors** (dim 384,
   the lab encoder's size; random vectors time the database, not a model), loaded with COPY, then
   1,000 questions sent through the pgvector adapter (question vectors precomputed, so the model
   is not timed), first with an exact scan, then with an HNSW index.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _t() -> float:
    return time.perf_counter()


def make_upload(n_queries: int, depth: int, n_chunks: int, seed: int = 0):
    from rag_metrics.types import GoldenQuery, GoldenSet

    rng = np.random.default_rng(seed)
    start = rng.integers(0, n_chunks, size=(n_queries, 1))
    stride = rng.choice([7919, 7927, 7933, 7937], size=(n_queries, 1))
    docs = (start + np.arange(depth)[None, :] * stride) % n_chunks
    names = np.array([f"doc{i // 5}#{i % 5}" for i in range(n_chunks)], dtype=object)
    queries = []
    for q in range(n_queries):
        n_rel = int(rng.integers(1, 6))
        inside = rng.choice(depth, size=n_rel, replace=False)
        rel = {str(names[docs[q, i]]): int(rng.integers(1, 4)) for i in inside[: n_rel // 2 + 1]}
        for d in rng.integers(0, n_chunks, size=n_rel - len(rel)):
            rel.setdefault(str(names[d]), int(rng.integers(0, 4)))
        queries.append(GoldenQuery(f"q{q}", f"question number {q}?", ["factual", "procedural"][q % 2], rel))
    golden = GoldenSet(tuple(queries))
    lines = []
    for q in range(n_queries):
        for r in range(depth):
            lines.append(f"q{q} Q0 {names[docs[q, r]]} {r + 1} {depth - r} mine\n")
    trec = "".join(lines).encode()
    jsonl = "".join(json.dumps({"query_id": f"q{q}", "ids": names[docs[q]].tolist()}) + "\n"
                    for q in range(n_queries)).encode()
    raglog = "".join(json.dumps({"question": f"question number {q}?", "contexts": [],
                                 "context_ids": names[docs[q]].tolist(), "answer": "..."}) + "\n"
                     for q in range(n_queries)).encode()
    return golden, {"TREC run": ("run.trec", trec), "JSONL ranked lists": ("run.jsonl", jsonl),
                    "RAG log with context ids": ("log.jsonl", raglog)}


def bench_upload(n_queries: int, depth: int, n_chunks: int) -> None:
    from rag_metrics.evaluation import evaluate
    from rag_metrics.insights import readouts
    from rag_metrics.metrics.registry import DEFAULT_METRICS
    from rag_metrics.systems.pooling import pooled_queue, system_table
    from rag_metrics.systems.uploads import parse_upload

    golden, files = make_upload(n_queries, depth, n_chunks)
    questions = golden.questions()
    warm, wfiles = make_upload(20, 10, 500, seed=5)  # imports and first calls, not timed
    for name, data in wfiles.values():
        ws, _ = parse_upload(data, name)
        wr = evaluate(warm, ws.rank(warm.questions(), 10).run)
        readouts.card_table(wr, 5, DEFAULT_METRICS), wr.curve(DEFAULT_METRICS, max_k=5), readouts.hit_rate_table(wr)
        wr.by_category(("ndcg",), ks=(5,), ci=True, n_resamples=1000), wr.failures(5)
        system_table({"w": wr}, list(DEFAULT_METRICS), 5)
        pooled_queue(warm, {"w": ws.rank(warm.questions(), 10).run}, 5)
    print(f"1. uploaded run: {n_queries:,} questions x {depth} = {n_queries * depth:,} results")
    for label, (name, data) in files.items():
        t0 = _t()
        system, rep = parse_upload(data, name)
        assert system is not None and rep.ok, rep.lines()[:3]
        t1 = _t()
        sr = system.rank(questions, depth)
        res = evaluate(golden, sr.run)
        means = {m: res.mean(m, 10) for m in DEFAULT_METRICS}
        t2 = _t()
        # the dashboard's tables (what ui/cache.py computes), then the Systems page's
        cards = readouts.card_table(res, 10, DEFAULT_METRICS)
        curve = res.curve(DEFAULT_METRICS, max_k=res.depth)
        cats = res.by_category(("ndcg",), ks=(10,), ci=True, n_resamples=1000)
        hits = readouts.hit_rate_table(res)
        table = system_table({"mine": res}, list(DEFAULT_METRICS), 10)
        fails = res.failures(10)
        pool = pooled_queue(golden, {"mine": sr.run}, 10)
        t3 = _t()
        print(f"   {label:26s} {len(data) / 1e6:6.1f} MB: parse {t1 - t0:5.2f} s, match + judge {t2 - t1:5.2f} s, "
              f"dashboard tables {t3 - t2:5.2f} s, total {t3 - t0:5.2f} s  (ndcg@10 {means['ndcg']:.4f}, "
              f"judged@10 {table['judged@10'].iat[0]:.3f}; {len(cards)} cards, {len(curve)} curve rows, {len(cats)} "
              f"category rows, {len(hits)} hit-rate rows, {len(fails):,} failures, {len(pool):,} pooled chunks)")


class _FixedEncoder:
    """Question vectors precomputed (random unit vectors): the benchmark times the database."""

    def __init__(self, vectors: dict[str, np.ndarray], dim: int) -> None:
        self.vectors, self.dim, self.name = vectors, dim, f"random-{dim}"

    def encode(self, texts, progress=None):
        return np.stack([self.vectors[t] for t in texts])


def bench_pgvector(n_chunks: int, n_queries: int, dim: int = 384) -> None:
    import pgserver

    from rag_metrics.systems.backends.pgvector import (
        PgvectorConfig,
        index_chunks,
        pgvector_system,
    )
    from rag_metrics.systems.base import ResultMemo
    from rag_metrics.types import Chunk

    rng = np.random.default_rng(1)
    emb = rng.standard_normal((n_chunks, dim)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    chunks = [Chunk(f"doc{i // 5}#{i % 5}", f"doc{i // 5}", f"chunk {i}", 0, 1) for i in range(n_chunks)]
    qv = rng.standard_normal((n_queries, dim)).astype(np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    questions = {f"q{i}": f"question {i}" for i in range(n_queries)}
    enc = _FixedEncoder({f"question {i}": qv[i] for i in range(n_queries)}, dim)
    print(f"2. pgvector: {n_chunks:,} chunks of random unit vectors (dim {dim}), {n_queries:,} questions, k = 100")
    with tempfile.TemporaryDirectory(prefix="bench_pg_") as folder:
        t0 = _t()
        srv = pgserver.get_server(folder, cleanup_mode="delete")
        srv.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        t1 = _t()
        print(f"   server start (pgserver)       {t1 - t0:6.2f} s")
        try:
            cfg = PgvectorConfig(srv.get_uri(), "bench_chunks")
            index_chunks(cfg, chunks, embeddings=emb)
            t2 = _t()
            print(f"   load {n_chunks:,} rows (COPY binary) {t2 - t1:6.2f} s")
            expected = np.argsort(-(qv[:20] @ emb.T), axis=1)[:, :10]
            for label, hnsw in (("exact scan", False), ("HNSW index", True)):
                if hnsw:
                    t = _t()
                    index_chunks(cfg, chunks, embeddings=emb, replace=True, hnsw=True)
                    print(f"   reload + build HNSW index      {_t() - t:6.2f} s")
                system = pgvector_system(cfg, enc, memo=ResultMemo())
                t = _t()
                sr = system.rank(questions, 100)
                dt = _t() - t
                assert sr.ok, sr.failures[:2]
                ranked = sr.run.rankings()
                recall = np.mean([len({i for i, _ in ranked[f"q{q}"][:10]} & {chunks[j].id for j in expected[q]}) / 10
                                  for q in range(20)])
                t = _t()
                system.rank(questions, 10)  # a K change: served from the memo
                memo_dt = _t() - t
                system.close()
                print(f"   {label:12s} {n_queries:,} questions  {dt:6.2f} s ({dt / n_queries * 1000:5.1f} ms/question; "
                      f"top-10 agreement with NumPy exact on 20 questions {recall:.2f}); K change from the memo "
                      f"{memo_dt * 1000:.0f} ms")
        finally:
            srv.cleanup()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--pg-queries", type=int, default=1_000)
    ap.add_argument("--skip-pg", action="store_true")
    args = ap.parse_args()
    import platform

    print(f"python {platform.python_version()}, {platform.machine()}, shared machine (2 cores, other jobs running)")
    bench_upload(args.queries, args.depth, args.chunks)
    if not args.skip_pg:
        bench_pgvector(args.chunks, args.pg_queries)


if __name__ == "__main__":
    main()
