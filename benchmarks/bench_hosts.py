"""The class load (bench_class.py's simulated students, think time 5 s) on one host against two hosts.

    python benchmarks/bench_hosts.py                       # N=30, think 5 s, 60 s per run
    python benchmarks/bench_hosts.py --n 60 --seconds 90

One host: ``./lab class``'s deployment as it is, two app processes behind its nginx, the class's state in
files.  Two hosts: two one-process hosts on their own ports (as two machines would run ``./lab class --state
... --workspace ...``), one shared workspace folder, the class's state in one PostgreSQL (``pgserver``),
behind one nginx that keeps a browser on one host by cookie (``rag_metrics.server.deploy.hosts_nginx_config``).
Both on this machine, with the same number of app processes, so the comparison shows what the
shared state in PostgreSQL and the extra proxy cost, not what a second machine adds.  Reported side by
side: p50 and p95 of every interaction, edits lost (golden questions a student added that are not in the
workspace afterwards; goal 0) and seats made (goal: one per student, across hosts).  The app processes keep
this user (``--app-user current``, loopback only): pgserver's socket is in a folder only its user enters.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_class import RESULTS, Deployment, _git_commit, class_phase, saved_questions, wait_ready

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = RESULTS.with_name("hosts.txt")
#: Every simulated student connects from 127.0.0.1: the new-seat budgets per address and per server are
#: raised so that each gets a seat (the seat count is one of the figures compared).
CONFIG = "[lab.budgets]\nseats_per_address = 10000\nseats_per_server = 10000\n"


def _env(ws: Path, state: str = "") -> dict[str, str]:
    env = {"RAG_METRICS_WORKSPACE": str(ws), "RAG_METRICS_TEACHER_KEY": secrets.token_urlsafe(24),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RAG_METRICS_CONFIG": str(ws.parent / "lab.toml")}
    if state:
        env["RAG_METRICS_STATE"] = state
    return env


def one_host(tmp: Path):
    from rag_metrics.server.deploy import ClassDeployment, free_port

    ws = tmp / "one" / "workspace"
    ws.mkdir(parents=True)
    (ws.parent / "lab.toml").write_text(CONFIG)
    dep = ClassDeployment(procs=2, port=free_port(), address="127.0.0.1", env=_env(ws), app_user="current")
    dep.start()
    return f"http://127.0.0.1:{dep.port}", ws, [dep], None


def two_hosts(tmp: Path, dsn: str):
    from rag_metrics.server.deploy import ClassDeployment, free_port, hosts_nginx_config, unprivileged_user

    ws = tmp / "two" / "workspace"
    ws.mkdir(parents=True)
    (ws.parent / "lab.toml").write_text(CONFIG)
    deps = []
    for _ in range(2):
        dep = ClassDeployment(procs=1, port=free_port(), address="127.0.0.1", env=_env(ws, dsn), app_user="current")
        dep.start()
        deps.append(dep)
    front = Path(tempfile.mkdtemp(prefix="bench-hosts-nginx-"))
    os.chmod(front, 0o755)
    run_as = unprivileged_user()
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (front / sub).mkdir()
        if run_as:
            shutil.chown(front / sub, *run_as)
    port = free_port()
    (front / "nginx.conf").write_text(hosts_nginx_config(f"127.0.0.1:{port}", [f"127.0.0.1:{d.port}" for d in deps],
                                                         front, run_as=run_as))
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    proc = subprocess.Popen([nginx, "-c", str(front / "nginx.conf"), "-p", str(front)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    return f"http://127.0.0.1:{port}", ws, deps, (proc, front)


def seats_made(ws: Path, dsn: str = "") -> int:
    from rag_metrics.io.state import FileState, class_state

    text = (class_state(".", dsn) if dsn else FileState(ws)).read("seats.json")
    return len(json.loads(text)["seats"]) if text else 0


def run(name: str, url: str, ws: Path, args, say, dsn: str = "") -> dict:
    d = Deployment(url)
    wait_ready(d)
    tag = secrets.token_hex(3)
    results, wall = asyncio.run(class_phase(d, args.n, args.think, args.seconds, args.seed, tag, say))
    lat = sorted(x for r in results.values() for x in r.latencies)
    made = [q for r in results.values() for q in r.made]
    on_disk = saved_questions(ws)
    errors = [e for r in results.values() for e in r.errors]

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")

    row = {"name": name, "p50": pct(0.5), "p95": pct(0.95), "interactions": len(lat), "edits": len(made),
           "lost": sum(1 for q in made if q not in on_disk), "seats": seats_made(ws, dsn), "errors": len(errors)}
    say(f"{name}: p50={row['p50']:.0f} ms p95={row['p95']:.0f} ms interactions={row['interactions']} "
        f"edits={row['edits']} lost={row['lost']} seats={row['seats']} (students {args.n} + 1 warm-up) "
        f"errors={row['errors']}" + (f" e.g. {errors[0][:160]}" if errors else ""))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="simulated students")
    ap.add_argument("--think", type=float, default=5.0)
    ap.add_argument("--seconds", type=float, default=60.0, help="length of each class phase")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--out", default=str(OUT), help="file the run is appended to ('' for none)")
    args = ap.parse_args()
    import pgserver

    lines: list[str] = []

    def say(s: str) -> None:
        print(s, flush=True)
        lines.append(s)

    say(f"bench_hosts: N={args.n} think={args.think:g}s (+-50%) {args.seconds:g} s per run; {os.cpu_count()} CPUs "
        "shared with other work; one host (2 processes, files) against two hosts (1 process each, PostgreSQL)")
    tmp = Path(tempfile.mkdtemp(prefix="bench_hosts_"))
    os.chmod(tmp, 0o755)
    pg = pgserver.get_server(str(tmp / "pg"), cleanup_mode="delete")
    dsn = pg.get_uri()
    rows = []
    try:
        for name in ("one host", "two hosts"):
            url, ws, deps, front = one_host(tmp) if name == "one host" else two_hosts(tmp, dsn)
            try:
                rows.append(run(name, url, ws, args, say, dsn if name == "two hosts" else ""))
            finally:
                if front is not None:
                    os.killpg(front[0].pid, signal.SIGTERM)
                    front[0].wait(timeout=10)
                    shutil.rmtree(front[1], ignore_errors=True)
                for dep in deps:
                    dep.stop()
    finally:
        pg.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    say("side by side: " + " | ".join(f"{r['name']}: p95 {r['p95']:.0f} ms, lost {r['lost']}, seats {r['seats']}"
                                      for r in rows))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} commit {_git_commit()}\n"
                    + "\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
