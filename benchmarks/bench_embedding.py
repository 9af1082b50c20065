"""Embedding throughput: our pipeline vs plain ``SentenceTransformer.encode`` on the same texts.

Texts: the first ``N`` chunks (default chunking) of a collection (default cisi: real abstracts,
~300-500 characters each).  Each variant runs after a warm-up batch, on 2 CPU threads here.

- plain:        ``model.encode(texts, batch_size=32, normalize_embeddings=True)``
- ours:         ``SentenceTransformerEncoder.encode`` (length-sorted slices + progress callbacks)
- ours + cache: ``encode_with_cache`` with an empty cache (embeds and writes a shard)
- warm cache:   the same call again (no embedding: SHA-256 + lookup only)

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_embedding.py [N] [collection]
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag_metrics.corpus import load_corpus  # noqa: E402
from rag_metrics.retrieval import EmbeddingCache, chunk_corpus, encode_with_cache, get_encoder  # noqa: E402


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 500
    collection = argv[1] if len(argv) > 1 else "cisi"
    import torch

    chunks = chunk_corpus(load_corpus(Path("/work/shared/datasets") / collection))[:n]
    texts = [c.text for c in chunks]
    t = time.perf_counter()
    enc = get_encoder(None)
    load_s = time.perf_counter() - t
    model = enc.model
    model.encode(texts[:32], batch_size=32)  # warm-up
    rows = []

    t = time.perf_counter()
    plain = model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
    rows.append(("plain SentenceTransformer.encode", time.perf_counter() - t))

    t = time.perf_counter()
    ours = enc.encode(texts, progress=lambda d, tot: None)
    rows.append(("ours: SentenceTransformerEncoder.encode", time.perf_counter() - t))

    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(tmp)
        t = time.perf_counter()
        cached = encode_with_cache(enc, texts, cache)
        rows.append(("ours: encode_with_cache, empty cache", time.perf_counter() - t))
        t = time.perf_counter()
        encode_with_cache(enc, texts, EmbeddingCache(tmp))
        rows.append(("ours: encode_with_cache, warm cache (new process)", time.perf_counter() - t))

    lengths = np.array([len(x) for x in texts])
    print(f"{n} chunks of {collection} (mean {lengths.mean():.0f} chars), model {enc.name}, "
          f"torch threads {torch.get_num_threads()}, model load {load_s:.1f}s")
    print(f"{'variant':<52} {'seconds':>8} {'passages/s':>11} {'vs plain':>9}")
    base = rows[0][1]
    for name, s in rows:
        print(f"{name:<52} {s:>8.2f} {n / s:>11.1f} {base / s:>8.2f}x")
    print(f"max |ours - plain| = {np.abs(ours - plain).max():.2e}; "
          f"max |cached - ours| = {np.abs(cached - ours).max():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
