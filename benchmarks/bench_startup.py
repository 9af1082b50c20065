"""Sample-corpus start time: fresh process -> indexed dense retriever, with and without the cache.

Each scenario runs in a new Python process (cold imports, model load included) with an empty or
pre-filled user cache (``RAG_METRICS_CACHE`` in a temporary folder):

- shipped:   ``sample_corpus/embeddings`` present, empty user cache (what a first app start does);
- none:      a copy of the sample corpus without ``embeddings/``, empty user cache (embeds all);
- user only: same copy, user cache filled by the previous run (a second start without shipping).

Target (issue 3): under 10 s with the cache, model load included.

Then (issue 12) the app on a fresh server and at corpus scale:

- server:  ``streamlit run app.py`` on a fresh port, then headless Chromium opens the dashboard
           twice (first session, second session) until the metric cards are drawn; server RSS
           after both (skipped without /usr/bin/chromium and Playwright);
- memory:  one process running the app (``AppTest``): RSS after the sample dashboard, after
           loading a BEIR folder (``--beir``, default /work/shared/datasets/adi; dense retriever,
           so its chunks are embedded) and after a second chunking of it (``--second``, 300/50), with each
           step's time and the per-chunking caches' estimated bytes (``ui.budget``).

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_startup.py [--beir PATH] [--only library,server,memory]
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


MEMORY_CHILD = r"""
import json, sys, time
from streamlit.testing.v1 import AppTest

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

def ok(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]

app, beir, second = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")]
out = [("process start (imports)", rss_mb(), 0.0)]
t = time.perf_counter()
at = AppTest.from_file(app, default_timeout=1800)
at.run(); ok(at)
out.append(("sample dashboard drawn", rss_mb(), time.perf_counter() - t))
at.switch_page("pages/corpus_explorer.py").run()
at.text_input(key="beir_path").input(beir).run()
t = time.perf_counter()
at.button(key="beir_go").click().run(); ok(at)
at.switch_page("pages/dashboard.py").run(); ok(at)
out.append(("BEIR folder loaded, embedded, dashboard", rss_mb(), time.perf_counter() - t))
from ui import cache
at.switch_page("pages/corpus_explorer.py").run()
chunks = {m.label: m.value for m in at.metric}
out[-1] = (out[-1][0] + f" ({chunks.get('Documents')} docs, {chunks.get('Chunks')} chunks)",) + out[-1][1:]
at.number_input(key="chunk_size_in").set_value(second[0])
at.number_input(key="chunk_overlap_in").set_value(second[1])
t = time.perf_counter()
next(b for b in at.button if "Re-chunk" in str(b.label)).click().run(); ok(at)
at.switch_page("pages/dashboard.py").run(); ok(at)
at.switch_page("pages/corpus_explorer.py").run()
n2 = {m.label: m.value for m in at.metric}.get("Chunks")
out.append((f"second chunking ({second[0]}/{second[1]}, {n2} chunks), dashboard", rss_mb(), time.perf_counter() - t))
b = cache.budget()
print(json.dumps({"steps": out, "budget_mb": b.total() / 2**20, "groups": {k: v / 2**20 for k, v in b.sizes().items()},
                  "limit_mb": __import__("ui.budget", fromlist=["budget_bytes"]).budget_bytes() / 2**20}))
"""


def memory(beir: str, second: str = "300,50") -> int:
    """RSS of one app process through a BEIR load and a second chunking (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "RAG_METRICS_CACHE": f"{tmp}/cache",
               "RAG_METRICS_WORKSPACE": f"{tmp}/ws", "RAG_METRICS_WARM": "0"}
        out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(ROOT / "app.py"), beir, second], env=env,
                             capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        print(out.stderr[-3000:])
        return 1
    res = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"\nServer memory (one app process, AppTest), BEIR folder {beir}, dense retriever")
    print(f"{'step':<66} {'RSS MB':>8} {'step s':>8}")
    for name, mb, secs in res["steps"]:
        print(f"{name:<66} {mb:>8.0f} {secs:>8.1f}")
    print(f"per-chunking caches (ui.budget estimate): {res['budget_mb']:.1f} MB in {len(res['groups'])} chunking(s), "
          f"limit {res['limit_mb']:.0f} MB (RAG_METRICS_CACHE_MB)")
    return 0


def server() -> int:
    """``streamlit run`` -> metric cards drawn in Chromium, for a first and a second session."""
    import socket
    import urllib.request

    if not Path("/usr/bin/chromium").exists():
        print("\n(server: /usr/bin/chromium missing, skipped)")
        return 0
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("\n(server: playwright missing, skipped)")
        return 0
    rows = []
    for label in ("empty embedding cache", "warm embedding cache"):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        tmp = Path(tempfile.gettempdir()) / "bench_startup_server"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT),
               "RAG_METRICS_CACHE": str(tmp / "cache"), "RAG_METRICS_WORKSPACE": str(tmp / f"ws_{port}")}
        if label.startswith("empty"):
            shutil.rmtree(tmp, ignore_errors=True)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless",
                                 "true", "--server.address", "127.0.0.1", "--server.port", str(port)],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(1200):
                try:
                    if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).status == 200:
                        break
                except OSError:
                    time.sleep(0.05)
            t_up = time.perf_counter() - t0
            times = []
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
                for _ in range(2):
                    t = time.perf_counter()
                    page = browser.new_page()
                    page.goto(url)
                    page.get_by_text("Hit rate@5").first.wait_for(timeout=600_000)
                    times.append((time.perf_counter() - t, time.perf_counter() - t0))
                    page.close()
                browser.close()
            rss = 0.0
            with open(f"/proc/{proc.pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS"):
                        rss = int(line.split()[1]) / 1024
            rows.append((label, t_up, times, rss))
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    print("\nFresh server: `streamlit run app.py` -> dashboard metric cards drawn in headless Chromium")
    print(f"{'scenario':<24} {'server up s':>11} {'1st session s':>13} {'(from start)':>12} {'2nd session s':>13} "
          f"{'RSS MB':>7}")
    for label, up, times, rss in rows:
        print(f"{label:<24} {up:>11.2f} {times[0][0]:>13.2f} {times[0][1]:>12.2f} {times[1][0]:>13.2f} {rss:>7.0f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beir", default="/work/shared/datasets/adi", help="BEIR folder of the memory scenario")
    ap.add_argument("--second", default="300,50", help="size,overlap of the memory scenario's second chunking")
    ap.add_argument("--only", default="library,server,memory", help="comma-separated: library, server, memory")
    args = ap.parse_args(argv)
    parts = set(args.only.split(","))
    code = library() if "library" in parts else 0
    if "server" in parts:
        code |= server()
    if "memory" in parts:
        code |= memory(args.beir, args.second)
    return code


def library() -> int:
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
