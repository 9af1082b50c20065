"""Load test: N concurrent browser-like sessions against a running ``streamlit run app.py`` on
127.0.0.1, each doing K changes, golden edits and page switches for a bounded time.  Prints
figures; not a unit test.

Why websocket clients: Streamlit's ``AppTest`` is not thread-safe (each run creates and tears
down a process-wide runtime), so N sessions in one process cannot be AppTests in threads.  Each
client here speaks the browser's protocol (``BackMsg`` / ``ForwardMsg`` protobufs over
``/_stcore/stream``): it asks for a rerun with its widget states, reads the deltas, and times the
rerun until ``script_finished``.  A golden edit is what the browser sends for the Golden set
editor: the editor's JSON edit state (cumulative while the editor is shown).

Each session loops: change K (sidebar slider), switch page, open the Golden set page and add one
question to the table (autosaved), until it has made ``--edits`` edits or ``--seconds`` passed.
At the end every golden file under the server's workspace is re-read from disk and every edit a
session made is looked for (``--mode shared``: in ``golden.jsonl`` or in that session's conflict
file, the existing conflict handling; ``--mode class``: the server runs with
``RAG_METRICS_CLASS_MODE=1``, each session in its own private space, and every edit must be in
a file of that session's space).

Memory: the server's peak resident set (VmHWM of the ``streamlit run`` process) per N; each N
gets a fresh server and workspace.

    python benchmarks/bench_load.py                      # N = 1, 10, 30; appends to results/load.txt
    python benchmarks/bench_load.py --n 10 --seconds 60 --mode class
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE_PATHS = ["", "failures", "golden_set", "corpus_explorer"]   # url paths ("" = the default page)
GOLDEN_PAGE = "golden_set"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _peak_rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


#: The challenge in the page script of class mode's proof-of-browser page (ui/seat_proof.js).
_CHALLENGE_RE = re.compile(rb'var C = \\?"(\d{1,2}\.\d{1,12}\.[0-9a-f]{32}\.[0-9a-f]{32})\\?"')


class Client:
    """One browser tab: a websocket session that reruns the app with widget states."""

    def __init__(self, url: str, n: int) -> None:
        self.url, self.n = url, n
        self.pages: dict[str, str] = {}       # url path -> page_script_hash
        self.ids: dict[str, str] = {}          # widget user key -> widget id (current page)
        self.states: dict[str, object] = {}   # widget id -> WidgetState the browser would resend
        self.editor_edits: dict[str, dict] = {}
        self.cache: dict[str, object] = {}    # ForwardMsg hash -> message (for ref_hash)
        self.page = ""
        self.latencies: list[float] = []
        self.ends: list[float] = []           # time.monotonic() when each rerun of ``latencies`` ended
        self.texts: list[str] = []            # the last run's alerts, markdown and captions (what the page said)
        self.exceptions: list[str] = []
        self.session_id = ""
        self.fragments: dict[str, str] = {}   # widget id -> id of the fragment it is drawn in ("" none)
        self.script_runs = 0                  # script runs finished (full runs and fragment runs)
        self.challenge = ""                   # the seat challenge the last run showed (class mode, no seat yet)

    async def __aenter__(self):
        import websockets

        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None,
                                           open_timeout=120, ping_interval=None)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.ws.close()

    async def rerun(self, page: str | None = None, fragment: str = "") -> None:
        """One rerun as the browser sends it (every widget's state), waiting through the runs the
        script asks for itself (``st.rerun``).  ``fragment``: rerun only that fragment (the browser
        does so when a widget inside an ``st.fragment`` changes)."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if page is not None and page != self.page:
            keep = self.ids.get("k")
            self.states = {i: s for i, s in self.states.items() if i == keep}
            self.page = page
        m = BackMsg()
        m.rerun_script.query_string = ""
        m.rerun_script.page_script_hash = self.pages.get(self.page, "")
        if fragment:
            m.rerun_script.fragment_id = fragment
        if not self.pages and self.page:
            m.rerun_script.page_name = self.page
        for s in self.states.values():
            m.rerun_script.widget_states.widgets.append(s)
        t = time.perf_counter()
        await self.ws.send(m.SerializeToString())
        ids: dict[str, str] = {}
        whole = False  # since the last run started: an element outside any fragment came (a full run)
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), timeout=600)
            got = _CHALLENGE_RE.search(raw) if isinstance(raw, bytes) else None
            if got:  # class mode's proof-of-browser page (rag_metrics.server.proof): no seat until solved
                self.challenge = got.group(1).decode()
            f = ForwardMsg()
            f.ParseFromString(raw)
            kind = f.WhichOneof("type")
            if kind == "ref_hash":
                cached = self.cache.get(f.ref_hash)
                if cached is None:
                    continue
                f, kind = cached, cached.WhichOneof("type")
            elif f.hash:
                self.cache[f.hash] = f
            if kind == "new_session":
                self.session_id = f.new_session.initialize.session_id
                ids, whole = {}, False  # every run starts so, a fragment's too
                self.texts = []
            elif kind == "navigation":
                self.pages = {p.url_pathname: p.page_script_hash for p in f.navigation.app_pages}
            elif kind == "delta" and f.delta.WhichOneof("type") in ("new_element", "add_block"):
                whole = whole or not f.delta.fragment_id
                if f.delta.WhichOneof("type") == "add_block":
                    continue
                el = f.delta.new_element
                sub = getattr(el, el.WhichOneof("type") or "", None)
                wid = getattr(sub, "id", "") if sub is not None else ""
                if wid and wid.startswith("$$ID-"):
                    ids[wid.split("-", 2)[2]] = wid
                    self.fragments[wid] = f.delta.fragment_id
                if el.WhichOneof("type") in ("alert", "markdown"):
                    self.texts.append(sub.body)
                if el.WhichOneof("type") == "exception":
                    self.exceptions.append(f"{el.exception.type}: {el.exception.message[:150]}")
            elif kind == "script_finished":
                self.script_runs += 1
                if f.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    break
        self.latencies.append(time.perf_counter() - t)
        self.ends.append(time.monotonic())
        self.ids = ids if whole or not fragment else {**self.ids, **ids}

    async def change(self, wid: str) -> None:
        """Rerun after the widget ``wid`` changed: only its fragment when it is in one."""
        await self.rerun(fragment=self.fragments.get(wid, ""))

    async def set_slider(self, key: str, value: float) -> None:
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        wid = self.ids[key]
        s = WidgetState(id=wid)
        s.double_array_value.data.extend([value])
        self.states[wid] = s
        await self.change(wid)

    async def add_golden_row(self, question: str) -> None:
        """Add a row in the Golden set editor, as the browser sends it (cumulative edit state)."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        key = next((k for k in self.ids if k.startswith("golden_editor_")), None)
        if key is None:
            raise RuntimeError(f"no golden editor on page {self.page!r}; exceptions: {self.exceptions[-1:]}")
        wid = self.ids[key]
        edits = self.editor_edits.setdefault(wid, {"edited_rows": {}, "added_rows": [], "deleted_rows": []})
        edits["added_rows"].append({"question": question, "category": "out_of_scope", "relevant": [],
                                    "grades": ""})
        self.states[wid] = WidgetState(id=wid, string_value=json.dumps(edits))
        await self.change(wid)


async def session(url: str, n: int, edits: int, deadline: float, out: dict) -> None:
    made: list[str] = []
    errors: list[str] = []
    c = Client(url, n)
    try:
        async with c:
            await c.rerun()
            step = 0
            while len(made) < edits and time.monotonic() < deadline:
                step += 1
                if "k" in c.ids:
                    await c.set_slider("k", 3 + step % 5)
                await c.rerun(PAGE_PATHS[step % len(PAGE_PATHS)])
                await c.rerun(GOLDEN_PAGE)
                q = f"load test session {n} edit {len(made)}?"
                await c.add_golden_row(q)
                made.append(q)
                await c.rerun(PAGE_PATHS[(step + 1) % len(PAGE_PATHS)] or "failures")
    except Exception as e:  # noqa: BLE001 - reported in the figures
        errors.append(f"{type(e).__name__}: {e}"[:200])
    out[n] = {"made": made, "latencies": c.latencies, "errors": errors + c.exceptions[:3],
              "session_id": c.session_id}


def _saved(root: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for p in root.rglob("golden*.jsonl"):
        if "history" in p.parts or ".backup-" in p.name:
            continue
        qs = set()
        for line in p.read_text(encoding="utf-8").splitlines():
            if line.strip():
                qs.add(json.loads(line).get("question", ""))
        out[str(p.relative_to(root))] = qs
    return out


def run_one(n: int, edits: int, seconds: float, mode: str) -> dict:
    ws = Path(tempfile.mkdtemp(prefix="bench_load_ws_"))
    port = _free_port()
    env = {**os.environ, "RAG_METRICS_WORKSPACE": str(ws), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if mode == "class":
        env["RAG_METRICS_CLASS_MODE"] = "1"
    log = open(ws / "server.log", "w")  # noqa: SIM115 - open for the server's lifetime
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
         "--client.showErrorDetails", "full"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        url = f"ws://127.0.0.1:{port}/_stcore/stream"

        async def all_sessions() -> tuple[dict, float]:
            # warm the server's caches (model, sample index) with one session first, as a server
            # that has been up for a while would be
            warm: dict = {}
            await session(url, -1, 0, time.monotonic() + 1, warm)
            out: dict = {}
            deadline = time.monotonic() + seconds
            t0 = time.perf_counter()
            await asyncio.gather(*(session(url, i, edits, deadline, out) for i in range(n)))
            return out, time.perf_counter() - t0

        results, wall = asyncio.run(all_sessions())
        rss = _peak_rss_mb(server.pid)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
    saved = _saved(ws)
    main_qs = set().union(*(qs for f, qs in saved.items() if Path(f).name == "golden.jsonl")) if saved else set()
    lost = 0
    for r in results.values():
        if mode == "class":
            # each private space holds one session's files; an edit is kept when some file has it
            # and no other session's edit is in that file
            files = [qs for qs in saved.values() if any(q in qs for q in r["made"])]
            mine = set().union(*files) if files else set()
            leaked = [q for qs in files for q in qs if q.startswith("load test session") and
                      not any(q == m for m in r["made"])]
            lost += len(leaked)
        else:
            beside = set().union(*(qs for f, qs in saved.items() if "conflict-" in f)) if saved else set()
            mine = main_qs | beside
        lost += sum(1 for q in r["made"] if q not in mine)
    lat = sorted(x for r in results.values() for x in r["latencies"])
    errors = [e for r in results.values() for e in r["errors"]]
    if errors or lost:
        errors.append(f"workspace and server log kept in {ws}")
    else:
        import shutil

        shutil.rmtree(ws, ignore_errors=True)

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")

    return {"n": n, "reruns": len(lat), "p50_ms": pct(0.5), "p95_ms": pct(0.95), "max_ms": pct(1.0),
            "edits_made": sum(len(r["made"]) for r in results.values()), "edits_lost": lost,
            "conflict_files": sum(1 for f in saved if "conflict-" in f), "peak_rss_mb": rss, "wall_s": wall,
            "errors": errors[:3] + errors[-1:] if len(errors) > 3 else errors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="*", default=[1, 10, 30], help="concurrent sessions")
    ap.add_argument("--edits", type=int, default=5, help="golden edits per session (K)")
    ap.add_argument("--seconds", type=float, default=120, help="time bound per N")
    ap.add_argument("--mode", choices=["shared", "class"], default="shared")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "load.txt"))
    args = ap.parse_args()
    head = [(f"bench_load: websocket sessions against streamlit run on 127.0.0.1; {args.edits} golden edits per "
            f"session, each with a K change and 3 page switches; bound {args.seconds:.0f} s per N; mode {args.mode}; "
            f"{os.cpu_count()} CPUs shared with other work"),
            (f"{'N':>3} {'reruns':>7} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'edits':>6} {'lost':>5} "
            f"{'conflicts':>9} {'server peak RSS MB':>18} {'wall s':>7}  errors")]
    print("\n".join(head), flush=True)
    lines = list(head)
    for n in args.n:
        r = run_one(n, args.edits, args.seconds, args.mode)
        line = (f"{n:>3} {r['reruns']:>7} {r['p50_ms']:>8.0f} {r['p95_ms']:>8.0f} {r['max_ms']:>8.0f} "
                f"{r['edits_made']:>6} {r['edits_lost']:>5} {r['conflict_files']:>9} {r['peak_rss_mb']:>18.0f} "
                f"{r['wall_s']:>7.1f}  {'; '.join(r['errors']) or '-'}")
        print(line, flush=True)
        lines.append(line)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a", encoding="utf-8") as f:
        f.write(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()) + "\n" + "\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
