"""Class load (issue 18): N simulated students at people's pace against the real class deployment,
and a bare Streamlit app at the same N without think time, measured in the same run.

    python benchmarks/bench_class.py                          # N=30, think 5 s, 60 s
    python benchmarks/bench_class.py --n 10 --think 5 --seconds 40
    python benchmarks/bench_class.py --url http://host:8501 --workspace /srv/lab/workspace

What it does
------------
1. Starts the class deployment (:func:`start_class_deployment`): ``./lab class --procs N`` (N app
   processes behind nginx, default one per core; ``--deploy streamlit`` runs one bare ``streamlit
   run app.py`` in class mode instead) with a random teacher key ``RAG_METRICS_TEACHER_KEY``, on a
   free loopback port, with a fresh workspace in a temporary folder.  ``--url`` targets a deployment
   that is already running instead (then ``--workspace`` names its workspace root for the "lost"
   check, and memory is not measured).
2. Warms it with one session doing each interaction once (the first page load builds the sample's
   index, the first golden edit loads the embedding model), as a server that has been up for a
   while would be; then N students
   arrive within one think time and each loops until ``--seconds`` have passed: wait a think
   time (``--think``, randomised uniformly by +-50 %), then one interaction, chosen at random:
   a K change (the sidebar slider), a page switch, or a golden edit (open the Golden set page if
   needed, then add one question with a unique text to the editor, as the browser sends it).
3. Starts ``benchmarks/bare_app.py`` (a slider and six ``st.metric``) and runs N clients that move
   the slider with no think time for a third of ``--seconds`` (5-20 s), twice: from an empty
   folder, so Streamlit's defaults apply (the bare Streamlit app the issue measured at 22.5
   reruns/s): its reruns per second are ``bare``; then from this project's folder, with our
   ``.streamlit/config.toml`` (no full ``gc.collect`` after every run, which alone makes a tiny app
   several times faster), printed on the line before as a stricter reference.
4. Looks for every golden edit a student made in every ``golden*.jsonl`` under the workspace root
   (wherever the edit is stored: the student's private space, lazy or not, a seat, a conflict
   file), and counts the ones not found as ``lost``.

Figures: ``p50``/``p95`` are per interaction, from sending the rerun to the end of the script run
(through reruns the script asks for itself, ``st.rerun``); the first page load of each student
is left out of them (it is counted in reruns/s).  ``reruns/s`` counts every finished script run
of the class phase over its wall time.  Server memory is the deployment's processes (the server
and its children) summed: peak PSS, sampled every 0.5 s (each shared page counted once: the
figure for the target), and peak RSS (VmHWM, which counts the shared torch and Python libraries
once per app process).

Cookies: each student has its own cookie jar.  Before opening its websocket it loads the page
(``GET /``) with that jar and sends the cookies the server set (``Set-Cookie``, e.g. Streamlit's
``_streamlit_xsrf`` or a seat cookie set by an HTTP response) as the websocket's ``Cookie``
header, so a deployment that binds a seat to an HTTP cookie sees one browser per student.  A
cookie set by JavaScript in the page cannot be set by these clients (they run no script): then
no cookie is invented, and the server creates one seat per websocket connection (one per student,
as each student keeps one connection).

The last line is exactly::

    class load: N=<n> think=<t>s p50=<ms> p95=<ms> reruns/s=<x> bare=<y> ratio=<x/y> lost=<edits lost>

and the run is appended to ``benchmarks/results/class.txt`` with the date and the git commit.
Not a unit test; do not run large N on a shared machine.
"""
from __future__ import annotations

import argparse
import asyncio
import http.cookiejar
import json
import os
import random
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import GOLDEN_PAGE, PAGE_PATHS, Client, _free_port, _peak_rss_mb

ROOT = Path(__file__).resolve().parents[1]
BARE_APP = Path(__file__).resolve().parent / "bare_app.py"
RESULTS = ROOT / "benchmarks" / "results" / "class.txt"


# ---- the deployment under test ---------------------------------------------------------------------
@dataclass
class Deployment:
    """A running server: its base URL and, when started here, its process and workspace."""

    http_url: str
    proc: subprocess.Popen | None = None
    workspace: Path | None = None
    log: Path | None = None
    _log_file: object = None
    group: bool = False   # started in its own process group (./lab class and its children): stop them all

    @property
    def ws_url(self) -> str:
        parts = urlsplit(self.http_url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        return f"{scheme}://{parts.netloc}{parts.path.rstrip('/')}/_stcore/stream"

    def pids(self) -> list[int]:
        """The server's process and its children (several app processes behind a proxy later)."""
        if self.proc is None:
            return []
        out, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as f:
                        todo.extend(int(c) for c in f.read().split())
            except OSError:
                pass
        return out

    def app_pids(self) -> list[int]:
        """The app processes (``python -m ui.launch`` of ``./lab class``, or ``streamlit run``): each one's
        memory is held against its budget."""
        out = []
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ")
            except OSError:
                continue
            if b"ui.launch" in cmd or (b"streamlit" in cmd and b" run " in cmd):
                out.append(pid)
        return out

    def peak_rss_mb(self) -> float:
        return sum(_peak_rss_mb(p) for p in self.pids()) if self.proc is not None else float("nan")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            if self.group:
                os.killpg(self.proc.pid, signal.SIGTERM)  # the group this benchmark started
            else:
                self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                if self.group:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                else:
                    self.proc.kill()
        if self._log_file is not None:
            self._log_file.close()  # type: ignore[attr-defined]


def _streamlit(script: Path, port: int, env: dict[str, str], log: Path, cwd: Path = ROOT) -> Deployment:
    logf = open(log, "w")  # noqa: SIM115 - open for the server's lifetime
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
         "--client.showErrorDetails", "full"],
        cwd=cwd, env=env, stdout=logf, stderr=subprocess.STDOUT, text=True)
    return Deployment(f"http://127.0.0.1:{port}", proc, log=log, _log_file=logf)


def _unprivileged(cmd: list[str], env: dict[str, str], workspace: Path) -> tuple[list[str], dict[str, str]]:
    """Started as root, ``./lab class`` runs the app processes as an unprivileged user
    (:func:`rag_metrics.server.deploy.run_as_user`): the workspace's folders are opened to it and, when
    this venv's Python lies in a folder closed to other users (pyenv under /root), the command ``./lab
    class`` would start (``LAB_DRY_RUN=1``) is run with this Python; the deployment itself runs its app
    processes with one their user can reach (:func:`rag_metrics.server.deploy.python_for`)."""
    import shlex

    workspace.mkdir(parents=True, exist_ok=True)
    for folder in (workspace, *workspace.parents):
        if folder == Path("/tmp") or folder == Path(tempfile.gettempdir()) or folder == Path("/"):
            break
        folder.chmod(folder.stat().st_mode | 0o005)
    out = subprocess.run(cmd, cwd=ROOT, env={**env, "LAB_DRY_RUN": "1"}, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"./lab class: {out.stderr.strip()[-500:]}")
    argv = shlex.split(out.stdout.strip().splitlines()[-1])
    argv[0] = sys.executable
    return argv, {**env, "RAG_METRICS_CLASS_MODE": "1"}


def start_class_deployment(workspace: Path, how: str = "lab", procs: int = 1,
                           env_extra: dict[str, str] | None = None) -> Deployment:
    """The class deployment, started fresh on a free loopback port with ``workspace`` as its root.

    ``how="lab"`` (the default): ``./lab class --port P --address 127.0.0.1 --procs N``, the real class
    deployment (N app processes behind nginx, :mod:`rag_metrics.server.deploy`).  ``how="streamlit"``: one
    ``streamlit run app.py`` in class mode, for comparison.  Either way the rest of the
    benchmark only needs the returned URL and process (its children are measured too).
    """
    port = _free_port()
    env = {**os.environ, "RAG_METRICS_WORKSPACE": str(workspace), "RAG_METRICS_CLASS_MODE": "1",
           "RAG_METRICS_TEACHER_KEY": secrets.token_urlsafe(24), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", **(env_extra or {})}
    if how == "lab":
        log = workspace / "server.log"
        cmd = [str(ROOT / "lab"), "class", "--port", str(port), "--address", "127.0.0.1", "--procs", str(procs)]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd, env = _unprivileged(cmd, env, workspace)
        logf = open(log, "w")  # noqa: SIM115 - open for the server's lifetime
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=logf, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        d = Deployment(f"http://127.0.0.1:{port}", proc, log=log, _log_file=logf, group=True)
    else:
        d = _streamlit(ROOT / "app.py", port, env, workspace / "server.log")
    d.workspace = workspace
    return d


def start_bare_app(folder: Path, stock: bool = True) -> Deployment:
    """The bare app: ``stock`` runs it from an empty folder, so Streamlit's own defaults apply (the
    bare Streamlit app of issue 18); otherwise from the project folder, with this project's
    ``.streamlit/config.toml`` (no full ``gc.collect`` after each run), as a stricter reference."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    cwd = folder / ("bare-stock" if stock else "bare-tuned")
    cwd.mkdir(exist_ok=True)
    return _streamlit(BARE_APP, _free_port(), env, cwd / "bare.log", cwd=cwd if stock else ROOT)


def pss_mb(pids: list[int]) -> float:
    """The processes' proportional set size (``Pss`` of ``/proc/<pid>/smaps_rollup``) summed: shared
    library pages counted once over all processes, not once per process as RSS is."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) / 1024
                        break
        except OSError:
            continue
    return total


class PeakSampler:
    """The highest :func:`pss_mb` of a deployment's processes, sampled every ``every`` seconds on a
    thread while the class phase runs (PSS has no kernel high-water mark as RSS has)."""

    def __init__(self, d: Deployment, every: float = 0.5) -> None:
        import threading

        self.d, self.every, self.peak = d, every, float("nan")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            v = pss_mb(self.d.pids())
            if v > 0 and not v <= self.peak:  # also replaces the first nan
                self.peak = v
            self._stop.wait(self.every)

    def __enter__(self) -> PeakSampler:
        if self.d.proc is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


def wait_ready(d: Deployment, timeout: float = 180) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if d.proc is not None and d.proc.poll() is not None:
            raise RuntimeError(f"the server exited ({d.proc.returncode}); see {d.log}")
        try:
            with urllib.request.urlopen(d.http_url.rstrip("/") + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{d.http_url} not ready after {timeout:.0f} s")


# ---- one student -------------------------------------------------------------------------------------
class Student(Client):
    """A browser tab with its own cookie jar (reruns as :class:`bench_load.Client`: through the runs
    the script asks for itself, and only a fragment when the widget is in one)."""

    def __init__(self, url: str, n: int, http_url: str) -> None:
        super().__init__(url, n)
        self.http_url = http_url
        self.jar = http.cookiejar.CookieJar()
        self.script_cookies: dict[str, str] = {}  # what the page's scripts would set (the seat proof's answer)
        self.proofs = 0                            # challenges solved before the seat

    def _load_page(self) -> None:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        with opener.open(self.http_url.rstrip("/") + "/", timeout=60) as r:
            r.read()

    def cookie_header(self) -> str:
        return "; ".join([f"{c.name}={c.value}" for c in self.jar]
                         + [f"{k}={v}" for k, v in self.script_cookies.items()])

    def headers(self) -> dict[str, str]:
        """The websocket's request headers (its cookies, as the browser sends them)."""
        cookie = self.cookie_header()
        return {"Cookie": cookie} if cookie else {}

    async def _connect(self) -> None:
        import websockets

        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None, open_timeout=120,
                                           ping_interval=None, additional_headers=self.headers() or None)

    async def __aenter__(self):
        await asyncio.to_thread(self._load_page)
        await self._connect()
        await self.prove()
        return self

    async def prove(self) -> None:
        """Class mode gives a browser without a seat the proof-of-browser page first: solve its
        challenge as the page's script does (here in Python, :func:`rag_metrics.server.proof.solve`),
        keep the answer as the script's cookie and reconnect, as the page's reload does.  The rerun
        of the challenge page is not counted in the latencies (it is the student's arrival)."""
        from rag_metrics.server.proof import PROOF_COOKIE, solve

        await self.rerun()
        if not self.challenge:
            return
        self.proofs += 1
        self.script_cookies[PROOF_COOKIE] = await asyncio.to_thread(solve, self.challenge)
        await self.ws.close()
        self.challenge, self.latencies, self.states, self.ids, self.pages = "", [], {}, {}, {}
        await self._connect()
        self.script_cookies.pop(PROOF_COOKIE, None)  # the app deletes it once used


async def join(client: Student) -> Student:
    """Take a seat as a browser does: load the page, open the websocket, the first run (which makes
    the seat).  Every benchmark makes its seats here, so a proof a browser must give before a seat is
    made (issue 27) is added in this one place."""
    await client.__aenter__()
    await client.rerun()
    return client


@dataclass
class StudentResult:
    latencies: list[float] = field(default_factory=list)
    script_runs: int = 0
    made: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cookies: int = 0
    by_kind: dict[str, list[float]] = field(default_factory=dict)  # "k" | "page" | "golden edit"
    ends: list[float] = field(default_factory=list)  # time.monotonic() at the end of each of ``latencies``


async def student(d: Deployment, n: int, think: float, deadline: float, rng: random.Random, tag: str,
                  out: dict[int, StudentResult], stop: asyncio.Event | None = None) -> None:
    """One student working until ``deadline`` (or until ``stop`` is set)."""
    res = out[n] = StudentResult()
    c = Student(d.ws_url, n, d.http_url)
    try:
        await asyncio.sleep(rng.uniform(0, think))  # students arrive over one think time
        await join(c)
        try:
            res.cookies = len(c.jar)
            first = len(c.latencies)
            while True:
                wait = rng.uniform(0.5 * think, 1.5 * think)
                if time.monotonic() + wait >= deadline or (stop is not None and stop.is_set()):
                    break
                await asyncio.sleep(wait)
                action = rng.choices(["k", "page", "golden"], weights=[4, 3, 3])[0]
                if action == "k" and "k" in c.ids:
                    await c.set_slider("k", float(rng.choice([k for k in range(1, 11) if k != 5])))
                    res.by_kind.setdefault("k", []).append(c.latencies[-1])
                elif action == "golden":
                    if c.page != GOLDEN_PAGE:
                        await c.rerun(GOLDEN_PAGE)
                        res.by_kind.setdefault(f"page {GOLDEN_PAGE}", []).append(c.latencies[-1])
                        await asyncio.sleep(rng.uniform(0.5 * think, 1.5 * think) / 2)
                    q = f"class load {tag} student {n} edit {len(res.made)}?"
                    await c.add_golden_row(q)
                    res.made.append(q)
                    res.by_kind.setdefault("golden edit", []).append(c.latencies[-1])
                else:
                    await c.rerun(rng.choice([p for p in PAGE_PATHS if p != c.page]))
                    res.by_kind.setdefault(f"page {c.page or 'dashboard'}", []).append(c.latencies[-1])
            res.latencies = c.latencies[first:]
            res.ends = c.ends[first:]
        finally:
            await c.__aexit__(None, None, None)
    except Exception as e:  # noqa: BLE001 - reported with the figures
        res.latencies, res.ends = c.latencies[1:], c.ends[1:]
        res.errors.append(f"{type(e).__name__}: {e}"[:200])
    res.script_runs = c.script_runs
    res.errors += c.exceptions[:3]


async def warm_up(d: Deployment, tag: str) -> tuple[float, list[str]]:
    """One session does each kind of interaction once (first page load, a K change, every page, a
    golden edit: the embedding model is loaded by the first new question), as on a server that has
    been up for a while.  Its edit is not counted.  Returns its time and errors."""
    c = Student(d.ws_url, -1, d.http_url)
    t0 = time.perf_counter()
    errors: list[str] = []
    try:
        await join(c)
        try:
            if "k" in c.ids:
                await c.set_slider("k", 4.0)
            for p in PAGE_PATHS:
                await c.rerun(p)
            await c.rerun(GOLDEN_PAGE)
            await c.add_golden_row(f"class load {tag} warm-up edit?")
        finally:
            await c.__aexit__(None, None, None)
    except Exception as e:  # noqa: BLE001 - reported
        errors.append(f"{type(e).__name__}: {e}"[:200])
    return time.perf_counter() - t0, errors + c.exceptions[:3]


async def class_phase(d: Deployment, n: int, think: float, seconds: float, seed: int, tag: str,
                      say: Callable[[str], None]) -> tuple[dict[int, StudentResult], float]:
    warm_s, warm_errors = await warm_up(d, tag)
    say(f"warm-up session (each interaction once): {warm_s:.1f} s"
        + (f"; errors: {'; '.join(warm_errors)}" if warm_errors else ""))
    out: dict[int, StudentResult] = {}
    t0 = time.perf_counter()
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(student(d, i, think, deadline, random.Random(seed * 1000 + i), tag, out)
                           for i in range(n)))
    return out, time.perf_counter() - t0


async def bare_phase(d: Deployment, n: int, seconds: float) -> float:
    clients = [Student(d.ws_url, i, d.http_url) for i in range(n)]
    for c in clients:
        await c.__aenter__()
    try:
        await asyncio.gather(*(c.rerun() for c in clients))
        base = sum(c.script_runs for c in clients)
        deadline = time.monotonic() + seconds
        t0 = time.perf_counter()

        async def loop(c: Student, i: int) -> None:
            v = 0
            while time.monotonic() < deadline:
                v += 1
                await c.set_slider("k", float(1 + (v + i) % 20))

        await asyncio.gather(*(loop(c, i) for i, c in enumerate(clients)))
        wall = time.perf_counter() - t0
        return (sum(c.script_runs for c in clients) - base) / wall
    finally:
        for c in clients:
            await c.__aexit__(None, None, None)


# ---- edits on disk -----------------------------------------------------------------------------------
def saved_questions(root: Path) -> set[str]:
    """Every question text in every ``golden*.jsonl`` under ``root`` (history left out)."""
    out: set[str] = set()
    for p in root.rglob("golden*.jsonl"):
        if "history" in p.parts:
            continue
        try:
            for line in p.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    if isinstance(row, dict):
                        out.add(str(row.get("question", "")))
        except (OSError, ValueError):
            continue
    return out


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="simulated students")
    ap.add_argument("--think", type=float, default=5.0, help="mean think time in seconds (randomised by +-50%%)")
    ap.add_argument("--seconds", type=float, default=60.0, help="length of the class phase (bounded run time)")
    ap.add_argument("--url", help="an already running class deployment (http://host:port) instead of starting one")
    ap.add_argument("--workspace", help="with --url: the deployment's workspace root, for the lost-edit check")
    ap.add_argument("--deploy", choices=["streamlit", "lab"], default="lab",
                    help="what to start: ./lab class (the class deployment: --procs app processes behind nginx; the "
                         "default), or one bare `streamlit run app.py` in class mode")
    ap.add_argument("--procs", type=int, default=os.cpu_count() or 1,
                    help="with --deploy lab: app processes behind nginx (default: one per core)")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--out", default=str(RESULTS), help="file the run is appended to ('' for none)")
    args = ap.parse_args()
    lines: list[str] = []

    def say(s: str) -> None:
        print(s, flush=True)
        lines.append(s)

    tmp = Path(tempfile.mkdtemp(prefix="bench_class_"))
    tag = secrets.token_hex(3)
    if args.url:
        d = Deployment(args.url)
        root = Path(args.workspace) if args.workspace else None
    else:
        (tmp / "workspace").mkdir()
        d = start_class_deployment(tmp / "workspace", args.deploy, args.procs)
        root = d.workspace
    what = "./lab class" if args.deploy == "lab" else "streamlit run app.py"
    target = f"target {args.url}" if args.url else f"{what} in class mode on loopback"
    say(f"bench_class: N={args.n} think={args.think:g}s (+-50%) class phase {args.seconds:g} s; {target}; "
        f"{os.cpu_count()} CPUs shared with other work")
    try:
        wait_ready(d)
        with PeakSampler(d) as pss:
            results, wall = asyncio.run(class_phase(d, args.n, args.think, args.seconds, args.seed, tag, say))
        rss = d.peak_rss_mb()
    finally:
        if not args.url:
            d.stop()
    lat = sorted(x for r in results.values() for x in r.latencies)
    runs = sum(r.script_runs for r in results.values())
    reruns = runs / wall if wall > 0 else float("nan")

    bare_rates: dict[bool, float] = {}
    for stock in (True, False):
        bare = start_bare_app(tmp, stock)
        try:
            wait_ready(bare)
            bare_rates[stock] = asyncio.run(bare_phase(bare, args.n, min(20.0, max(5.0, args.seconds / 3))))
        finally:
            bare.stop()
    bare_rate = bare_rates[True]

    made = [q for r in results.values() for q in r.made]
    if root is not None:
        on_disk = saved_questions(root)
        lost: str = str(sum(1 for q in made if q not in on_disk))
    else:
        lost = "n/a"
    errors = [f"student {n}: {e}" for n, r in results.items() for e in r.errors]

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")

    say(f"interactions: {len(lat)} (script runs {runs} in {wall:.1f} s), golden edits made: {len(made)}, "
        f"students with a cookie from the page: {sum(1 for r in results.values() if r.cookies)}/{args.n}, "
        f"max {pct(1.0):.0f} ms")
    kinds: dict[str, list[float]] = {}
    for r in results.values():
        for k, v in r.by_kind.items():
            kinds.setdefault(k, []).extend(v)
    say("per interaction, median / p95: " + ", ".join(
        f"{k} {sorted(v)[len(v) // 2] * 1000:.0f} / {sorted(v)[min(len(v) - 1, int(0.95 * len(v)))] * 1000:.0f} ms "
        f"(n={len(v)})" for k, v in sorted(kinds.items()) if v))
    if errors:
        say(f"errors ({len(errors)}): " + " | ".join(errors[:4]))
    if lost not in ("0", "n/a") or errors:
        say(f"workspace and logs kept in {tmp}")
    if rss == rss:
        say(f"server memory: peak PSS {pss.peak:.0f} MB (sampled every 0.5 s; shared pages counted once), "
            f"peak RSS {rss:.0f} MB (VmHWM summed over processes: shared libraries counted once per process)")
    else:
        say("server memory: n/a (--url)")
    ratio = reruns / bare_rate if bare_rate else float("nan")
    tuned = bare_rates[False]
    tuned_ratio = reruns / tuned if tuned else float("nan")
    say(f"bare app, Streamlit's defaults (bare=): {bare_rate:.1f} reruns/s; with this project's "
        f".streamlit/config.toml (no gc.collect after each run): {tuned:.1f} reruns/s, "
        f"ratio against it {tuned_ratio:.2f}")
    say(f"class load: N={args.n} think={args.think:g}s p50={pct(0.5):.0f} p95={pct(0.95):.0f} "
        f"reruns/s={reruns:.2f} bare={bare_rate:.1f} ratio={ratio:.2f} lost={lost}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} commit {_git_commit()}\n"
                    + "\n".join(lines) + "\n\n")
    if not (lost not in ("0", "n/a") or errors):
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
