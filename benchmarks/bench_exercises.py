"""The code exercises in the browser (issue 26): Pyodide's first load and "Run checks" to the verdict.

Starts the app (``python -m ui.launch``, as ``./lab app`` does) on a fresh loopback port with an empty
workspace, then, for each of ``--browsers`` fresh headless Chromium processes (no HTTP cache, every
request not to the app aborted):

- page:    ``/exercises`` opened until the editor is drawn;
- pyodide: the first Pyodide load in the sandbox's worker, as the worker measures it (import of
           ``pyodide.mjs`` + ``loadPyodide``: the wasm, the standard library), and the wall time from
           opening the page until Python is ready;
- verdict: "Run checks" pressed with the lesson's own ``hit_rate_at_k`` until the verdict line of
           that run is drawn (``--runs`` times; the sandbox runs each in a fresh, preloaded worker),
           and the part of it spent in Python in the browser (harness + student code);
- again:   from that verdict until the next fresh worker is ready (as the worker measures it, and the
           wall time): how long a student who presses "Run checks" again at once waits for Python;
- back to back: "Run checks" pressed again as soon as the verdict is drawn, until that run's verdict.

Figures are printed, never asserted.  Needs /usr/bin/chromium, Playwright and the built assets
(``./lab`` builds ``static/vendor/``).  Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_exercises.py [--browsers 3] [--runs 5]
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def _server(tmp: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAG_METRICS_WORKSPACE": str(tmp / "ws"),
           "RAG_METRICS_WARM": "0"}
    log = open(tmp / "server.log", "w")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([sys.executable, "-m", "ui.launch", "--server.headless", "true", "--server.address",
                             "127.0.0.1", "--server.port", str(port)], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(480):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the app did not start: " + (tmp / "server.log").read_text()[-2000:])


def _one_browser(p, url: str, code: str, runs: int) -> dict[str, object]:
    browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
    try:
        ctx = browser.new_context()
        ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(url) else r.abort())
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(f"{url}/exercises?exercise=hit_rate_at_k")
        page.locator(".ex-run").wait_for(timeout=300_000)
        t_page = time.perf_counter() - t0
        root = page.locator(".ex-root")
        handle = root.element_handle()
        page.wait_for_function("r => r.dataset.pythonReady === '1'", arg=handle, timeout=300_000)
        t_ready = time.perf_counter() - t0
        load_ms = root.evaluate("r => r.exerciseEditor.loadedMs")
        verdicts, in_python, again, again_load, back_to_back, hows = [], [], [], [], [], []

        def run() -> float:
            root.evaluate("(r, c) => r.exerciseEditor.setCode(c)", code)
            t1 = time.perf_counter()
            page.locator(".ex-run").click()
            page.wait_for_function("r => r.dataset.runNonce && r.dataset.verdictNonce === r.dataset.runNonce",
                                   arg=handle, timeout=300_000)
            took = time.perf_counter() - t1
            kind = page.locator(".ex-status").get_attribute("data-kind")
            if kind != "pass":
                raise SystemExit(f"the lesson's code did not pass: {page.locator('.ex-status').inner_text()}")
            return took

        for _ in range(runs):
            page.wait_for_function("r => r.dataset.pythonReady === '1'", arg=handle, timeout=300_000)
            verdicts.append(run())
            in_python.append(root.evaluate("r => r.exerciseEditor.lastReport.ms") / 1000)
            t2 = time.perf_counter()
            page.wait_for_function("r => r.dataset.pythonReady === '1'", arg=handle, timeout=300_000)
            again.append(time.perf_counter() - t2)
            again_load.append(root.evaluate("r => r.exerciseEditor.loadedMs") / 1000)
            hows.append(root.evaluate("r => r.exerciseEditor.loadedHow || 'full'"))
        for _ in range(runs):  # a student pressing "Run checks" again as soon as the verdict shows
            back_to_back.append(run())
        return {"page": t_page, "ready": t_ready, "load": load_ms / 1000, "verdicts": verdicts, "python": in_python,
                "again": again, "again_load": again_load, "back_to_back": back_to_back, "hows": hows}
    finally:
        browser.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--browsers", type=int, default=3, help="fresh browsers (first loads measured)")
    ap.add_argument("--runs", type=int, default=5, help='"Run checks" per browser')
    args = ap.parse_args(argv)
    if not CHROMIUM.exists():
        raise SystemExit("needs /usr/bin/chromium (apt-get install chromium)")
    if not (ROOT / "static" / "vendor" / "pyodide" / "pyodide.mjs").exists():
        raise SystemExit("the browser assets are not built: run ./lab once (npm ci in web/, then node web/build.mjs)")
    from playwright.sync_api import sync_playwright

    from rag_metrics.exercises import exercise

    code = exercise("hit_rate_at_k").lesson_code
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = _server(Path(tmp))
        try:
            with sync_playwright() as p:
                _one_browser(p, url, code, 1)  # warm the server (its caches), not measured
                rows = [_one_browser(p, url, code, args.runs) for _ in range(args.browsers)]
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    med = statistics.median
    loads = [float(r["load"]) for r in rows]  # type: ignore[arg-type]
    ready = [float(r["ready"]) for r in rows]  # type: ignore[arg-type]
    pages = [float(r["page"]) for r in rows]  # type: ignore[arg-type]
    verdicts = [v for r in rows for v in r["verdicts"]]  # type: ignore[attr-defined]
    python = [v for r in rows for v in r["python"]]  # type: ignore[attr-defined]
    again = [v for r in rows for v in r["again"]]  # type: ignore[attr-defined]
    again_load = [v for r in rows for v in r["again_load"]]  # type: ignore[attr-defined]
    back_to_back = [v for r in rows for v in r["back_to_back"]]  # type: ignore[attr-defined]
    print(f"exercises in the browser: {args.browsers} fresh Chromium, {args.runs} runs each, {os.cpu_count()} cores")
    def line(label: str, xs: list[float]) -> None:
        print(f"  {label:<37}median {med(xs):6.2f} s   (min {min(xs):.2f}, max {max(xs):.2f}, n={len(xs)})")

    line("page drawn (editor visible)", pages)
    line("first Pyodide load (in the worker)", loads)
    line("page open -> Python ready", ready)
    line("Run checks -> verdict on the page", verdicts)
    print(f"    of which Python in the browser     median {med(python):6.3f} s")
    line("verdict -> next worker ready (wall)", again)
    hows = sorted({h for r in rows for h in r["hows"]})  # type: ignore[attr-defined]
    line(f"next worker's load ({'/'.join(hows) or '?'})", again_load)
    line("Run checks again at once -> verdict", back_to_back)


if __name__ == "__main__":
    main()
