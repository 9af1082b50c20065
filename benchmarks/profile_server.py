"""Where a real server's CPU goes during reruns (issue 18's profile, the server side).

    HF_HUB_OFFLINE=1 python benchmarks/profile_server.py [--seconds 12] [--pages dashboard,failures]

Starts ``streamlit run app.py`` on loopback, drives one browser-like websocket session (the client of
``bench_load.py``) through K changes on each page, and reports per page the server's CPU per rerun
(from ``/proc/<pid>/stat``) and, when ``py-spy`` is installed (``pip install py-spy``; it samples
every thread of the server), the share of the on-CPU samples in each part:

``gc``          Streamlit's full ``gc.collect(2)`` after a run (``runner.postScriptGC``; off in our config)
``charts``      ``st.vega_lite_chart`` / ``st.altair_chart`` marshalling (spec + Arrow data)
``tables``      ``st.dataframe`` / ``st.data_editor`` / ``st.table`` marshalling
``bootstrap``   confidence intervals
``evaluation``  judging and kernels behind ``ui.cache.evaluation``
``cache keys``  hashing of ``st.cache_data`` arguments
``server``      the event loop, websocket and message queue
``page``        the rest of the page scripts (markdown, metrics, widgets, state)

AppTest (``profile_reruns.py``) misses the server's own costs (the GC, the websocket, the message
hashes); this script measures them.  Appends the table to ``results/profile.txt``.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import Client, _free_port  # noqa: E402

#: part -> frame names (function (file)); the first part whose name is on a sample's stack takes it.
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("charts", ("VegaChartsMixin.vega_lite_chart (vega_charts.py)", "VegaChartsMixin.altair_chart (vega_charts.py)")),
    ("tables", ("ArrowMixin.dataframe (arrow.py)", "ArrowMixin.table (arrow.py)",
                "DataEditorMixin.data_editor (data_editor.py)")),
    ("bootstrap", ("bootstrap_cis (evaluate.py)",)),
    ("evaluation", ("evaluation (cache.py)", "evaluate (evaluate.py)")),
    ("cache keys", ("_make_value_key (cache_utils.py)",)),
    ("page", ("ScriptRunner._run_script.<locals>.code_to_exec (script_runner.py)",)),
    ("server", ("BaseEventLoop._run_once (base_events.py)",)),
)


def _frame(f: str) -> str:
    name, _, where = f.partition(" (")
    return f"{name} ({where.rsplit('/', 1)[-1].split(':')[0].rstrip(')')})" if where else name


def split_samples(raw: str) -> tuple[int, dict[str, float]]:
    """Share of samples per part from py-spy's raw (collapsed) output."""
    counts: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, n = line.rstrip().rpartition(" ")
        if not n.isdigit():
            continue
        frames = [_frame(f) for f in stack.split(";")]
        total += int(n)
        if frames and frames[-1].startswith("ScriptRunner._on_script_finished"):
            counts["gc"] += int(n)
            continue
        for part, names in PARTS:
            if any(f in names for f in frames):
                counts[part] += int(n)
                break
        else:
            counts["other"] += int(n)
    return total, {p: counts[p] / max(total, 1) for p in ("gc", *dict(PARTS), "other")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=12.0, help="K changes per page for this long")
    ap.add_argument("--pages", default="dashboard,failures,compare,golden_set,presenter")
    args = ap.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    has_spy = Path(spy).exists()
    port = _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAG_METRICS_WARM": "0",
           "RAG_METRICS_WORKSPACE": tempfile.mkdtemp(prefix="profile_server_")}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless",
                             "true", "--server.address", "127.0.0.1", "--server.port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def cpu() -> float:
        with open(f"/proc/{proc.pid}/stat") as f:
            p = f.read().rsplit(")", 1)[1].split()
        return (int(p[11]) + int(p[12])) / os.sysconf("SC_CLK_TCK")

    rows: list[tuple[str, float, float, int, dict[str, float] | None]] = []
    try:
        for _ in range(1200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)

        async def go() -> None:
            async with Client(f"ws://127.0.0.1:{port}/_stcore/stream", 0) as c:
                await c.rerun("")
                await c.rerun()
                for page in args.pages.split(","):
                    page = "" if page == "dashboard" else page
                    await c.rerun(page)
                    await c.rerun()
                    for k in (6, 7):
                        await c.set_slider("k", k)
                    c.latencies.clear()
                    out = Path(tempfile.mkstemp(suffix=".txt")[1])
                    cmd = [spy, "record", "--pid", str(proc.pid), "-r", "200", "-f", "raw", "-o", str(out), "-d",
                           str(int(args.seconds) + 1)]
                    sampler = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL) if has_spy else None
                    await asyncio.sleep(0.5)
                    t0, c0, k = time.monotonic(), cpu(), 8
                    while time.monotonic() - t0 < args.seconds:
                        k = 8 + (k - 7) % 40
                        await c.set_slider("k", k)
                    n = len(c.latencies)
                    per = (cpu() - c0) / max(n, 1)
                    split = None
                    if sampler is not None:
                        sampler.wait()
                        split = split_samples(out.read_text(encoding="utf-8", errors="replace"))[1]
                    if os.environ.get("PROFILE_KEEP"):
                        print(f"raw samples of {page or 'dashboard'}: {out}", file=sys.stderr)
                    else:
                        out.unlink(missing_ok=True)
                    rows.append((page or "dashboard", per, statistics.median(c.latencies), n, split))
                    await c.set_slider("k", 5)
        asyncio.run(go())
    finally:
        proc.terminate()
        proc.wait(timeout=20)

    parts = ["gc", *dict(PARTS), "other"]
    head = f"{'K change on':<12} {'reruns':>6} {'cpu ms':>7} {'wall ms':>8}  " + " ".join(f"{p:>10}" for p in parts)
    lines = [time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()) + " profile_server: one websocket session against "
             "streamlit run (server CPU per rerun from /proc; parts: share of py-spy's on-CPU samples)", head,
             "-" * len(head)]
    for page, per, wall, n, split in rows:
        shares = " ".join(f"{100 * split[p]:9.0f}%" for p in parts) if split else "(py-spy not installed)"
        lines.append(f"{page:<12} {n:>6} {per * 1000:7.0f} {wall * 1000:8.0f}  {shares}")
    text = "\n".join(lines)
    print(text)
    with (ROOT / "benchmarks" / "results" / "profile.txt").open("a", encoding="utf-8") as f:
        f.write(text + "\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
