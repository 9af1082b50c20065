"""Server-side timings of the Streamlit app on the sample set (run from the repository root).

    HF_HUB_OFFLINE=1 python benchmarks/bench_app.py [--repeats 15]

Measures, with ``streamlit.testing.v1.AppTest`` (the whole script run: shell, sidebar, page,
caches, element serialisation; no network or browser rendering):

- a rerun after a K change (each K new, so the bootstrap confidence intervals are recomputed),
- a rerun after a golden-set edit: a label change (re-evaluation, no retrieval) and a question
  text change (one new question embedded and retrieved),
- a rerun of an unchanged view (everything cached),
- time to first render from a fresh process: cold (empty embedding cache: the model loads to embed
  the golden questions) and warm (question embeddings already cached on disk; chunk embeddings
  always come from the shipped sample_corpus/embeddings); and, when Debian Chromium and Playwright
  are installed, from ``streamlit run`` to the metric cards drawn in a headless browser.

Prints a table of medians (and the min-max range).  Target: reruns under 100 ms, and no regression:
``--against REV`` runs revision REV's copy of this benchmark on REV's tree right after ours and
prints ours / theirs per row (issue 18 measures against ``f8267a4``, the commit before the class
server, whose README figures were measured on a faster day of this shared machine).
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

FIRST_RENDER = r"""
import time, sys
t0 = time.perf_counter()
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("app.py", default_timeout=300)
t1 = time.perf_counter()
at.run()
t2 = time.perf_counter()
assert not at.exception, [e.value for e in at.exception]
assert any("@" in m.label for m in at.metric)
print(f"{t1 - t0:.4f} {t2 - t1:.4f}")
"""


def _fresh_start(env: dict[str, str]) -> tuple[float, float, float]:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", FIRST_RENDER], cwd=ROOT, env=env, capture_output=True, text=True)
    total = time.perf_counter() - t
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    imp, run = (float(x) for x in out.stdout.split()[-2:])
    return total, imp, run


def _browser_first_render(env: dict[str, str]) -> float | None:
    """Seconds from `streamlit run` to the dashboard's metric cards drawn in headless Chromium
    (None when Chromium or Playwright is missing)."""
    import socket
    import urllib.request

    if not Path("/usr/bin/chromium").exists():
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless",
                             "true", "--server.address", "127.0.0.1", "--server.port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).status == 200:
                    break
            except OSError:
                time.sleep(0.05)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_page()
            page.goto(url)
            page.get_by_text("Hit rate@5").first.wait_for(timeout=300_000)
            elapsed = time.perf_counter() - t0
            browser.close()
        return elapsed
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:8.1f} ms   ({min(xs) * 1000:.1f} - {max(xs) * 1000:.1f})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--against", metavar="REV",
                    help="also run the same measurements on git revision REV (its own app and its own copy of "
                         "this script, in a temporary worktree, right after ours) and print the ratios: a "
                         "regression check that does not depend on how loaded the machine is today")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    tmp = Path(tempfile.mkdtemp(prefix="bench_app_"))
    cache_dir = tmp / "cache"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAG_METRICS_CACHE": str(cache_dir),
           "RAG_METRICS_WORKSPACE": str(tmp / "ws_start")}

    rows: list[tuple[str, str]] = []
    cold = _fresh_start(env)                     # empty embedding cache
    warm = _fresh_start(env)                     # question embeddings now cached on disk
    rows.append(("first render, fresh process, cold cache (total)", f"{cold[0]:8.2f} s    (imports {cold[1]:.2f} s, "
                                                                     f"first run {cold[2]:.2f} s)"))
    rows.append(("first render, fresh process, warm cache (total)", f"{warm[0]:8.2f} s    (imports {warm[1]:.2f} s, "
                                                                     f"first run {warm[2]:.2f} s)"))

    for label, cache in (("cold", tmp / "cache_browser"), ("warm", cache_dir)):
        secs = _browser_first_render({**env, "RAG_METRICS_CACHE": str(cache),
                                      "RAG_METRICS_WORKSPACE": str(tmp / f"ws_browser_{label}")})
        if secs is not None:
            rows.append((f"`streamlit run` to cards drawn in Chromium, {label} cache", f"{secs:8.2f} s"))

    os.environ["RAG_METRICS_CACHE"] = str(cache_dir)
    os.environ["RAG_METRICS_WORKSPACE"] = str(tmp / "ws")
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.run()
    n = args.repeats

    same = []
    for _ in range(n):
        t = time.perf_counter()
        at.run()
        same.append(time.perf_counter() - t)
    rows.append(("rerun, nothing changed (dashboard)", _ms(same)))

    k_times = []
    for k in range(6, 6 + n):
        t = time.perf_counter()
        at.slider(key="k").set_value(k).run()
        k_times.append(time.perf_counter() - t)
        assert not at.exception
    rows.append(("rerun after a K change (new K, dashboard)", _ms(k_times)))
    at.slider(key="k").set_value(5).run()

    k_fail = []
    at.switch_page("pages/failures.py").run()
    for k in range(30, 30 + n):
        t = time.perf_counter()
        at.slider(key="k").set_value(k).run()
        k_fail.append(time.perf_counter() - t)
    rows.append(("rerun after a K change (failures page)", _ms(k_fail)))
    at.slider(key="k").set_value(5).run()

    at.switch_page("pages/golden_set.py").run()
    key = next(k for k in ("golden_editor_0", "golden_editor_1") if k in at.session_state)
    label_edit, text_edit, dash_after = [], [], []
    for i in range(n):
        t = time.perf_counter()
        at.session_state[key] = {"edited_rows": {0: {"grades": f"{1 + i % 3}|3|{1 + (i // 3) % 3}"},
                                                 4: {"expected_answer": f"edit {i}"}},
                                 "added_rows": [], "deleted_rows": []}
        at.run()
        label_edit.append(time.perf_counter() - t)
        assert not at.exception
    rows.append(("rerun after a golden label edit (editor page, autosave)", _ms(label_edit)))
    for i in range(-1, n):  # i = -1: warm-up (loads the embedding model once)
        at.switch_page("pages/golden_set.py").run()
        key = next(k for k in (f"golden_editor_{j}" for j in range(200)) if k in at.session_state)
        at.session_state[key] = {"edited_rows": {1: {"question": f"whats the biggest file I can attach on plus, v{i}"}},
                                 "added_rows": [], "deleted_rows": []}
        at.run()
        at.switch_page("pages/dashboard.py")
        t = time.perf_counter()
        at.run()
        if i >= 0:
            text_edit.append(time.perf_counter() - t)
        assert not at.exception
    rows.append(("dashboard after a question text edit (1 new embedding)", _ms(text_edit)))

    at.switch_page("pages/golden_set.py").run()
    key = next(k for k in (f"golden_editor_{j}" for j in range(400)) if k in at.session_state)
    for i in range(n):
        at.session_state[key] = {"edited_rows": {0: {"grades": f"{1 + i % 3}|2|{1 + (i // 3) % 3}"}},
                                 "added_rows": [], "deleted_rows": []}
        at.run()
        at.switch_page("pages/dashboard.py")
        t = time.perf_counter()
        at.run()
        dash_after.append(time.perf_counter() - t)
        at.switch_page("pages/golden_set.py").run()
        key = next(k for k in (f"golden_editor_{j}" for j in range(400)) if k in at.session_state)
    rows.append(("dashboard after a golden label edit (re-evaluate + CIs)", _ms(dash_after)))

    width = max(len(r[0]) for r in rows)
    print(f"{'measurement (sample set, 76 queries, 192 chunks, dense)':<{width}}   median      (min - max)")
    print("-" * (width + 40))
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(f"\n{n} repeats each; AppTest timings include script execution and element serialisation "
          "(server side), not network or browser drawing.")
    if args.against:
        _against(args.against, n, rows)
    return 0


def _first_number(text: str) -> float:
    m = re.search(r"[0-9]+(?:\.[0-9]+)?", text)
    return float(m.group()) if m else float("nan")


def _against(rev: str, repeats: int, ours: list[tuple[str, str]]) -> None:
    """Run revision ``rev``'s copy of this benchmark on its own tree and print ours / theirs."""
    tree = Path(tempfile.mkdtemp(prefix="bench_app_ref_")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", "--force", str(tree), rev], cwd=ROOT, check=True,
                   capture_output=True)
    try:
        out = subprocess.run([sys.executable, "benchmarks/bench_app.py", "--repeats", str(repeats)], cwd=tree,
                             env={**os.environ, "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True, timeout=3600)
        theirs = {}
        for line in out.stdout.splitlines():
            for name, _ in ours:
                if line.startswith(name + " ") and name not in theirs:
                    theirs[name] = line[len(name):].strip()
        sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True,
                             text=True).stdout.strip()
        width = max(len(r[0]) for r in ours)
        print(f"\nagainst {rev} ({sha}), run right after ours on the same machine (medians; ratio = ours / theirs)")
        print(f"{'measurement':<{width}}      ours    theirs   ratio")
        for name, value in ours:
            a, b = _first_number(value), _first_number(theirs.get(name, ""))
            print(f"{name:<{width}}  {a:8.2f}  {b:8.2f}   {a / b if b == b and b else float('nan'):5.2f}")
        if out.returncode:
            print(f"(revision {rev}'s run failed: {out.stderr[-500:]})")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)


if __name__ == "__main__":
    raise SystemExit(main())
