"""Sample-corpus start time: fresh process -> indexed dense retriever, with and without the cache.

Each scenario runs in a new Python process (cold imports, model load included) with an empty or
pre-filled user cache (``RAG_METRICS_CACHE`` in a temporary folder):

- shipped:   ``sample_corpus/embeddings`` present, empty user cache (what a first app start does);
- none:      a copy of the sample corpus without ``embeddings/``, empty user cache (embeds all);
- user only: same copy, user cache filled by the previous run (a second start without shipping).

Target (issue 3): under 10 s with the cache, model load included.

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_startup.py
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rag_metrics.sample import sample_paths

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, time
t0 = time.perf_counter()
from rag_metrics.retrieval import load_sample_index
t_import = time.perf_counter()
idx = load_sample_index()
t_ready = time.perf_counter()
run = idx.retriever.retrieve({"q": "how do I turn on two-factor authentication?"}, k=5)
t_query = time.perf_counter()
c = idx.retriever.cache
print(json.dumps({"import_s": t_import - t0, "ready_s": t_ready - t0, "query_ms": 1000 * (t_query - t_ready),
                  "chunks": len(idx.chunks), "shipped_ok": idx.shipped_ok, "hits": c.hits, "misses": c.misses}))
"""


def run_child(env: dict[str, str]) -> dict:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                         cwd=ROOT, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["wall_s"] = time.perf_counter() - t
    return res


def main() -> int:
    base = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        env = {**base, "RAG_METRICS_CACHE": str(t / "cache1")}
        rows.append(("shipped embeddings, empty user cache", run_child(env)))
        rows.append(("shipped embeddings, second start", run_child(env)))
        copy = t / "sample_corpus"
        shutil.copytree(sample_paths().docs, copy / "docs")
        env = {**base, "RAG_METRICS_CACHE": str(t / "cache2"), "RAG_METRICS_SAMPLE_DIR": str(copy)}
        rows.append(("no shipped embeddings, empty user cache", run_child(env)))
        rows.append(("no shipped embeddings, warm user cache", run_child(env)))
    print("Sample corpus start: new process -> load_sample_index() ready (imports, model load, "
          "chunking, embeddings, FAISS index)")
    print(f"{'scenario':<42} {'ready s':>8} {'imports s':>9} {'wall s':>7} {'embedded':>8} "
          f"{'1st query ms':>12}")
    for name, r in rows:
        print(f"{name:<42} {r['ready_s']:>8.2f} {r['import_s']:>9.2f} {r['wall_s']:>7.2f} "
              f"{r['misses']:>8} {r['query_ms']:>12.1f}")
    print(f"({rows[0][1]['chunks']} chunks; 'embedded' counts chunk texts embedded at start plus "
          "the query)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
