"""The sweep on the sample (issue 30): the 12-configuration grid, cold then warm, side by side.

- **cold**: an empty embedding cache (every chunk text and question is embedded once);
- **warm**: the same sweep again on the same cache (nothing may be embedded: the ratio warm / cold
  is what the embedding cache saves);
- the cache hit ratio of the warm run, the measured embedding speed (for the sweep's estimate), and
  the chosen configuration's held-out score beside its tuning score.

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_sweep.py
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rag_metrics.io.corpus import load_corpus  # noqa: E402
from rag_metrics.retrieval.cache import EmbeddingCache  # noqa: E402
from rag_metrics.sample import sample_paths  # noqa: E402
from rag_metrics.tuning import load_evidence, parse_grid, run_sweep  # noqa: E402
from rag_metrics.tuning.grid import DEFAULT_GRID_TOML  # noqa: E402
from rag_metrics.tuning.select import best, best_of_n, held_out_check  # noqa: E402


def main() -> None:
    p = sample_paths()
    corpus = load_corpus(str(p.docs))
    evidence = load_evidence(p.root / "golden_evidence.jsonl", corpus)
    grid = parse_grid(tomllib.loads(DEFAULT_GRID_TOML))
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(tmp)
        cold = run_sweep(grid, corpus, evidence, cache=cache)
        warm = run_sweep(grid, corpus, evidence, cache=cache)
    embed_s = sum(r.build_s for r in cold.results if r.config.kind == "dense")
    print(f"load: {os.getloadavg()[0]:.1f} (1-min average, 2 cores)")
    print(f"{'':28}{'cold':>10}{'warm':>10}{'warm/cold':>11}")
    print(f"{'sweep time (s)':28}{cold.seconds:10.1f}{warm.seconds:10.1f}{warm.seconds / cold.seconds:11.2f}")
    print(f"{'texts embedded':28}{cold.embedded:10d}{warm.embedded:10d}")
    print(f"{'cache hit ratio':28}{cold.cache_hit_ratio:10.0%}{warm.cache_hit_ratio:10.0%}")
    print(f"embedding speed (cold dense builds): {cold.embedded / embed_s:.0f} texts/s")
    chosen = best(warm)
    assert chosen is not None
    ho = held_out_check(warm, chosen)
    print(f"chosen: {chosen.config.label}: {grid.metric} tuning {ho.tuning:.4f} ({ho.n_tuning} questions), "
          f"held-out {ho.held_out:.4f} ({ho.n_held_out} questions), held-out / tuning {ho.held_out / ho.tuning:.2f}")
    bon = best_of_n(warm, chosen)
    if bon is not None:
        print(bon.note())


if __name__ == "__main__":
    main()
