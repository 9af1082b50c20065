"""Noisy neighbour (issue 27): one hostile student attacks the class while N normal students work.

    python benchmarks/bench_noisy.py                    # N=20, 60 s, loopback only
    python benchmarks/bench_noisy.py --n 10 --seconds 40

A fresh class deployment on a free loopback port (``./lab class --procs 1 --address 127.0.0.1``: the
launcher with the upload budget and the teacher route; one process, so no nginx is needed), with a
fresh workspace.  Every client says where it comes from in ``X-Forwarded-For``, as nginx does for a
real class (``10.0.0.<n>`` for student n, ``10.0.0.250`` for the hostile one); the app trusts that
header only from a loopback peer.

While the N students work (bench_class.student: K changes, page switches, golden edits, at a think
time of ``--think`` s), the hostile student runs, one after another and bounded:

1. **seat flood**: ``--flood`` cookieless sessions from its address (each one full run);
2. **upload flood**: into its own session, ``--puts`` PUTs of 1 MB under made-up file ids to
   ``/_stcore/upload_file/<session>/<id>`` (Streamlit's XSRF cookie and header, as a browser sends them).

Printed: the students' p50 / p95 per interaction, students refused a seat, the seats the flood made
(the per-address budget allows ``seats_per_address``), the PUTs accepted and refused, and the app
process's peak RSS growth during the attack.  The last line is exactly::

    noisy: N=<n> p50=<ms> p95=<ms> refused=<unseated> flood_seats=<k>/<tries> puts=<ok>/<sent> rss_growth_mb=<x>

Not a unit test; loopback only; bounded by ``--seconds``.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_class import PeakSampler, Student, StudentResult, start_class_deployment, student, wait_ready

HOSTILE = "10.0.0.250"


class From(Student):
    """A student whose requests carry ``X-Forwarded-For: <address>`` (what nginx adds)."""

    def __init__(self, url: str, n: int, http_url: str, address: str) -> None:
        super().__init__(url, n, http_url)
        self.address = address

    def _load_page(self) -> None:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        req = urllib.request.Request(self.http_url.rstrip("/") + "/", headers={"X-Forwarded-For": self.address})
        with opener.open(req, timeout=60) as r:
            r.read()

    def headers(self) -> dict[str, str]:
        return {**super().headers(), "X-Forwarded-For": self.address}


def _address(n: int) -> str:
    return HOSTILE if n >= 1000 else f"10.0.0.{n % 200 + 1}" if n >= 0 else "10.0.0.201"


def _put(http_url: str, session: str, cookie: str, xsrf: str, size: int) -> int:
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    body = head + b"x" * size + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(f"{http_url.rstrip('/')}/_stcore/upload_file/{session}/{uuid.uuid4()}", data=body,
                                 method="PUT", headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                                                        "Cookie": cookie, "X-Xsrftoken": xsrf,
                                                        "X-Forwarded-For": HOSTILE})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)
    except OSError:
        return 0


async def hostile(d, flood: int, puts: int, report: dict) -> None:
    seats = []
    for i in range(flood):  # cookieless sessions from one address
        c = From(d.ws_url, 1000 + i, d.http_url, HOSTILE)
        try:
            async with c:
                await c.rerun()
        except Exception as e:  # noqa: BLE001 - reported
            report.setdefault("errors", []).append(f"flood: {type(e).__name__}: {e}"[:120])
        seats.append(c)
    c = From(d.ws_url, 2000, d.http_url, HOSTILE)
    codes: list[int] = []
    async with c:
        await c.rerun()

        def health() -> None:  # Streamlit sets its XSRF cookie on /_stcore/health, as the browser loads it
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(c.jar))
            req = urllib.request.Request(d.http_url.rstrip("/") + "/_stcore/health",
                                         headers={"X-Forwarded-For": HOSTILE})
            with opener.open(req, timeout=60) as r:
                r.read()

        await asyncio.to_thread(health)
        xsrf = next((ck.value for ck in c.jar if ck.name == "_streamlit_xsrf"), "")
        for _ in range(puts):
            codes.append(await asyncio.to_thread(_put, d.http_url, c.session_id, c.cookie_header(), xsrf, 1 << 20))
    report["puts"] = codes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--think", type=float, default=5.0)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--flood", type=int, default=30, help="cookieless sessions of the hostile student")
    ap.add_argument("--puts", type=int, default=60, help="1 MB PUTs of the hostile student")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_noisy_") as tmp:
        ws = Path(tmp) / "workspace"
        ws.mkdir()
        d = start_class_deployment(ws, how="lab", procs=1)
        try:
            wait_ready(d)

            import bench_class

            bench_class.Student = lambda url, n, http_url: From(url, n, http_url, _address(n))  # type: ignore[misc, assignment]

            async def run() -> tuple[dict[int, StudentResult], dict, float]:
                from bench_class import warm_up

                await warm_up(d, "noisy")
                base = d.peak_rss_mb()
                out: dict[int, StudentResult] = {}
                report: dict = {}
                deadline = time.monotonic() + args.seconds
                with PeakSampler(d):
                    await asyncio.gather(hostile(d, args.flood, args.puts, report),
                                         *(student(d, i, args.think, deadline, random.Random(i), "noisy", out)
                                           for i in range(args.n)))
                return out, report, d.peak_rss_mb() - base

            out, report, growth = asyncio.run(run())
            rates = json.loads((ws / ".class" / "rates.json").read_text(encoding="utf-8"))
            lat = sorted(x for r in out.values() for x in r.latencies)
            p50 = statistics.median(lat) * 1000 if lat else float("nan")
            p95 = lat[int(0.95 * (len(lat) - 1))] * 1000 if lat else float("nan")
            seated = {k.split(":", 1)[1] for k in rates if k.startswith("seat:10.0.0.")} - {HOSTILE}
            refused = sum(1 for i in range(args.n) if _address(i) not in seated)
            flood_seats = len(rates.get(f"seat:{HOSTILE}", []))
            codes = report.get("puts", [])
            ok = sum(1 for c in codes if c in (200, 204))
            print(json.dumps({"errors": [e for r in out.values() for e in r.errors][:5] + report.get("errors", [])[:3],
                              "put_codes": sorted(set(codes))}))
            print(f"noisy: N={args.n} p50={p50:.0f} p95={p95:.0f} refused={refused} "
                  f"flood_seats={flood_seats}/{args.flood} puts={ok}/{len(codes)} rss_growth_mb={growth:.0f}")
        finally:
            d.stop()


if __name__ == "__main__":
    main()
