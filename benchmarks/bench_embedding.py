"""Embedding throughput: our pipeline vs plain ``SentenceTransformer.encode`` on the same texts.

Texts: the first ``N`` (default 300) chunks (default chunking) of a collection (default cisi: real abstracts,
~300-500 characters each).  Each variant runs after a warm-up batch, on 2 CPU threads here.

- plain:        ``model.encode(texts, batch_size=32, normalize_embeddings=True)``
- ours:         ``SentenceTransformerEncoder.encode`` (length-sorted slices + progress callbacks)
- ours + cache: ``encode_with_cache`` with an empty cache (embeds and writes a shard)
- warm cache:   the same call again (no embedding: SHA-256 + lookup only)

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_embedding.py [N] [collection]
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag_metrics.io.corpus import load_corpus  # noqa: E402
from rag_metrics.retrieval import EmbeddingCache, chunk_corpus, encode_with_cache, get_encoder  # noqa: E402

REPEATS = 3


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 300
    collection = argv[1] if len(argv) > 1 else "cisi"
    import torch

    chunks = chunk_corpus(load_corpus(Path("/work/shared/datasets") / collection))[:n]
    texts = [c.text for c in chunks]
    t = time.perf_counter()
    enc = get_encoder(None)
    model = enc.model  # the encoder loads lazily; force the load here
    load_s = time.perf_counter() - t
    model.encode(texts[:64], batch_size=32)  # warm-up
    results: dict[str, list[float]] = {}
    outputs: dict[str, np.ndarray] = {}

    def timed(name: str, fn) -> None:
        t = time.perf_counter()
        outputs[name] = fn()
        results.setdefault(name, []).append(time.perf_counter() - t)

    plain_name, ours_name = "plain SentenceTransformer.encode", "ours: SentenceTransformerEncoder.encode"
    cold_name, warm_name = ("ours: encode_with_cache, empty cache",
                            "ours: encode_with_cache, warm cache (new cache object)")
    # interleaved repeats, best of REPEATS: the machine is shared, so single timings are noisy
    for _ in range(REPEATS):
        timed(plain_name, lambda: model.encode(texts, batch_size=32, normalize_embeddings=True,
                                               show_progress_bar=False))
        timed(ours_name, lambda: enc.encode(texts, progress=lambda d, tot: None))
        with tempfile.TemporaryDirectory() as tmp:
            timed(cold_name, lambda: encode_with_cache(enc, texts, EmbeddingCache(tmp)))
            timed(warm_name, lambda: encode_with_cache(enc, texts, EmbeddingCache(tmp)))
    rows = [(name, min(ts)) for name, ts in results.items()]
    plain, ours, cached = outputs[plain_name], outputs[ours_name], outputs[cold_name]

    lengths = np.array([len(x) for x in texts])
    print(f"{n} chunks of {collection} (mean {lengths.mean():.0f} chars), model {enc.name}, "
          f"torch threads {torch.get_num_threads()}, model load {load_s:.1f}s")
    print(f"best of {REPEATS} interleaved runs; load average at start {os.getloadavg()[0]:.1f} "
          "(shared machine)")
    print(f"{'variant':<52} {'seconds':>8} {'passages/s':>11} {'vs plain':>9}")
    base = rows[0][1]
    for name, s in rows:
        print(f"{name:<52} {s:>8.2f} {n / s:>11.1f} {base / s:>8.2f}x")
    print(f"max |ours - plain| = {np.abs(ours - plain).max():.2e}; "
          f"max |cached - ours| = {np.abs(cached - ours).max():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
