"""Noisy neighbour (issue 27): one hostile student runs every attack of the issue while N normal students work.

    python benchmarks/bench_noisy.py                    # N=20, one app process, loopback only
    python benchmarks/bench_noisy.py --procs 2          # two app processes behind nginx (the real class setup)
    python benchmarks/bench_noisy.py --n 10 --think 5

A fresh class deployment on a free loopback port (``./lab class --procs P --address 127.0.0.1``: the
launcher with the upload budget and the teacher route; with ``--procs 2`` nginx in front), with a fresh
workspace and a server configuration (``RAG_METRICS_CONFIG``) whose ``[lab.judge]`` is a loopback
OpenAI-compatible server with scripted replies (``tests/judge_script_server.py``); the budgets are the
defaults of ``[lab.budgets]``.  Every client says where it comes from in ``X-Forwarded-For``, as nginx
does for a real class (``10.0.0.<n>`` for student n, ``10.0.0.250`` for the hostile one, ``10.0.3.<m>``
for its helpers in the guessing attack); the app trusts that header only from a loopback peer.

While the N students work (bench_class.student: K changes, page switches, golden edits, at a think time
of ``--think`` s), the hostile student takes a seat (:func:`bench_class.join`, like everyone) and runs,
one after another, each bounded, every attack of the issue, driving the pages through Streamlit's
websocket protocol as a browser does (widget states by the widgets' keys, file uploads through
``file_urls_request`` and a PUT, button clicks as triggers):

1. **seats**: ``--flood`` cookieless sessions from its address (each one full run);
2. **corpus**: on the Corpus explorer, a corpus upload over ``corpus_mb`` (must be refused), then one
   just under it (chunked and embedded in a worker slot: its time is reported);
3. **golden import**: on the Golden set page, a JSONL of ``--questions`` questions (about 1.4 MB for
   30,000) over ``golden_questions`` (must be refused, cheaply: the run's time is reported);
4. **judge**: Judge vs people at the largest pool (K=50, 3 samples: over the seat's budget, refused),
   a forged click on the disabled button (nothing may be sent), the smallest pool over
   ``judge_confirm_over`` (asks to confirm: clicked unconfirmed, nothing is sent; then confirmed, the
   calls made are counted on the judge server and in the seat's spending);
5. **upload flood**: ``--puts`` PUTs of 1 MB under made-up file ids into its own session
   (``upload_files_per_session`` / ``upload_mb_per_session`` bound them);
6. **teacher key**: wrong keys from fresh sessions, one guess each: 12 from its own address (past the
   per-address budget, ``guesses_per_address``, its answers are slowed), 10 from each of three more
   addresses, then 2 from a fourth (past the whole server's ``guesses_per_server``, slowed too; since
   issue 50 nothing is refused, so the right key always signs in).

Issue 50's attacks (``--attacks`` names them: ``bombs,widget,reruns,claims,embed``):

7. **bombs**: on Bring your system, a 218-byte double gzip (30 MB inside), a 459-byte Parquet file
   of 150 MB of text, a gzip just over the upload limit once unwrapped, and a 917-byte ``.jsonl.gz``
   of 16,000 identical questions (each must be refused before it is expanded or parsed; the run's time
   and each process's peak memory are reported);
8. **widget**: one message just over ``server.maxWidgetStateSize`` (the connection must be closed
   unparsed, code 1009);
9. **reruns**: ``--reruns`` reruns back to back from one tab (past the rerun rate they get a short
   message, not the page);
10. **claims**: wrong teacher claims (``POST /_lab/teacher-session``, no authentication) from 8 threads
    for ``--claim-seconds`` (each refused without a write to the session store);
11. **embed** (CPU as a budget): a 1 MB corpus, half ``corpus_mb``, whose embedding passes
    ``embed_texts_per_seat`` (refused before it is kept), then fresh 150 KB corpora one after another
    until a budget refuses one: the texts the seat embedded and the app processes' CPU-seconds meanwhile.

Printed: per attack its outcome (refused / bounded / what it spent) and the students' p50/p95 while it
ran; the students' overall p50/p95 and how many were refused a seat; the peak resident memory of each
app process (``VmHWM``) against ``process_memory_mb``; the load average before and after.  The last
line is machine-readable::

    noisy: N=<n> procs=<p> p50=<ms> p95=<ms> refused=<unseated> flood_seats=<k>/<tries> corpus_over=<refused|ran>
    corpus_s=<s> golden=<refused|accepted> golden_ms=<ms> judge_big=<refused|ran> judge_forged=<calls>
    judge_confirm=<asked|not asked> judge_calls=<made>/<planned> puts=<ok>/<sent> guesses=<at once>/<slowed>
    bombs_refused=<k>/4 widget_close=<code> reruns=<served>/<refused> embed_big=<refused|loaded>
    embed_texts=<texts the seat embedded> embed_cpu_s=<app CPU-s during it> claims=<sent>@<per second>/s
    peak_rss_mb=<a,b> budget_mb=<m> over_budget=<processes> rss_growth_mb=<x> load=<1-min load average>

(one line).  Not a unit test; loopback only; each attack bounded.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_class import (
    GOLDEN_PAGE,
    Deployment,
    PeakSampler,
    Student,
    StudentResult,
    join,
    start_class_deployment,
    student,
    wait_ready,
)
from bench_load import _peak_rss_mb

from rag_metrics.config import Budgets

HOSTILE = "10.0.0.250"
CORPUS_PAGE = "corpus_explorer"
VIEW_JUDGE = ":material/balance: Judge vs people"     # pages/golden_set.py VIEWS, as the segmented control sends them
VIEW_IO = ":material/import_export: Import, export, reset"


class From(Student):
    """A browser whose requests carry ``X-Forwarded-For: <address>`` (what nginx adds)."""

    def __init__(self, url: str, n: int, http_url: str, address: str) -> None:
        super().__init__(url, n, http_url)
        self.address = address

    def _load_page(self) -> None:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        req = urllib.request.Request(self.http_url.rstrip("/") + "/", headers={"X-Forwarded-For": self.address})
        with opener.open(req, timeout=60) as r:
            r.read()
        req = urllib.request.Request(self.http_url.rstrip("/") + "/_stcore/health",  # Streamlit's XSRF cookie
                                     headers={"X-Forwarded-For": self.address})
        with opener.open(req, timeout=60) as r:
            r.read()

    def headers(self) -> dict[str, str]:
        return {**super().headers(), "X-Forwarded-For": self.address}

    def xsrf(self) -> str:
        return next((ck.value for ck in self.jar if ck.name == "_streamlit_xsrf"), "")

    # ---- widgets, as the browser sends them ------------------------------------------------------
    def wid(self, key: str) -> str:
        if key not in self.ids:
            raise RuntimeError(f"no widget {key!r} on page {self.page!r}; said: {' | '.join(self.texts)[:300]}")
        return self.ids[key]

    def put_state(self, key: str, **value: object) -> None:
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        wid = self.wid(key)
        s = WidgetState(id=wid)
        for field, v in value.items():
            if field == "string_array_value":
                s.string_array_value.data.extend(v)  # type: ignore[arg-type]
            else:
                setattr(s, field, v)
        self.states[wid] = s

    async def set(self, key: str, **value: object) -> None:
        self.put_state(key, **value)
        await self.change(self.ids[key])

    async def click(self, key: str) -> None:
        """A button click: its trigger is sent with one run (and not resent)."""
        wid = self.wid(key)
        self.put_state(key, trigger_value=True)
        try:
            await self.change(wid)
        finally:
            self.states.pop(wid, None)

    async def upload(self, key: str, name: str, data: bytes) -> int:
        """Upload ``data`` into the file uploader ``key`` as the browser does: ask the session for an
        upload URL (``file_urls_request``), PUT the file there, then send the uploader's new state.
        Returns the PUT's HTTP status."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.Common_pb2 import FileUploaderState
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        wid = self.wid(key)
        m = BackMsg()
        rid = uuid.uuid4().hex
        m.file_urls_request.request_id = rid
        m.file_urls_request.session_id = self.session_id
        m.file_urls_request.file_names.append(name)
        await self.ws.send(m.SerializeToString())
        while True:
            f = ForwardMsg()
            f.ParseFromString(await asyncio.wait_for(self.ws.recv(), timeout=60))
            if f.WhichOneof("type") == "file_urls_response" and f.file_urls_response.response_id == rid:
                break
        if f.file_urls_response.error_msg:
            raise RuntimeError(f"upload refused: {f.file_urls_response.error_msg}")
        urls = f.file_urls_response.file_urls[0]
        status = await asyncio.to_thread(_put, self.http_url.rstrip("/") + urls.upload_url, self, name, data)
        st = FileUploaderState()
        info = st.uploaded_file_info.add()
        info.file_id, info.name, info.size = urls.file_id, name, len(data)
        info.file_urls.CopyFrom(urls)
        self.states[wid] = WidgetState(id=wid, file_uploader_state_value=st)
        await self.change(wid)
        return status

    def said(self, pattern: str) -> str | None:
        """The first thing the last run said (alerts, markdown) matching ``pattern``."""
        return next((t for t in self.texts if re.search(pattern, t)), None)


def _trace(msg: str) -> None:
    if os.environ.get("BENCH_NOISY_TRACE"):
        print(f"  [{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _address(n: int) -> str:
    return HOSTILE if n >= 1000 else f"10.0.0.{n % 200 + 1}" if n >= 0 else "10.0.0.201"


def _put(url: str, c: From, name: str, data: bytes) -> int:
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    body = head + data + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(url, data=body, method="PUT",
                                 headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                                          "Cookie": c.cookie_header(), "X-Xsrftoken": c.xsrf(),
                                          "X-Forwarded-For": c.address})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)
    except OSError:
        return 0


# ---- what the hostile student sends ------------------------------------------------------------------
def corpus_jsonl(size: int, seed: int) -> bytes:
    """A JSONL corpus of about ``size`` bytes of distinct pseudo-English documents (every chunk new)."""
    rng = random.Random(seed)
    syll = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "pe", "da", "gu", "ri", "zo", "be", "an", "el"]
    words = ["".join(rng.choice(syll) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    out, total, i = [], 0, 0
    while True:
        text = ". ".join(" ".join(rng.choice(words) for _ in range(rng.randint(6, 16))) for _ in range(25)) + "."
        line = json.dumps({"id": f"d{seed}-{i}", "text": text}) + "\n"
        if total + len(line.encode()) > size:
            break
        out.append(line)
        total += len(line.encode())
        i += 1
    return "".join(out).encode()


def golden_jsonl(n: int) -> bytes:
    return "\n".join(json.dumps({"question": f"hostile question {i}?", "relevant": []}) for i in range(n)).encode()


def planned_calls(c: From) -> int | None:
    t = c.said(r"Planned: at most \*\*\d+\*\* judge calls")
    return int(re.search(r"\*\*(\d+)\*\*", t).group(1)) if t else None  # type: ignore[union-attr]


# ---- the attacks -------------------------------------------------------------------------------------
def _seats_of(d: Deployment, address: str) -> int:
    rates = json.loads((d.workspace / ".class" / "rates.json").read_text(encoding="utf-8"))  # type: ignore[operator]
    return len(rates.get(f"seat:{address}", []))


async def seat_flood(d: Deployment, flood: int, rep: dict) -> None:
    before = _seats_of(d, HOSTILE)
    for i in range(flood):  # cookieless sessions from one address
        c = From(d.ws_url, 1000 + i, d.http_url, HOSTILE)
        try:
            await join(c)
            await c.__aexit__(None, None, None)
        except Exception as e:  # noqa: BLE001 - reported
            rep.setdefault("errors", []).append(f"flood: {type(e).__name__}: {e}"[:120])
    rep["flood_seats"] = _seats_of(d, HOSTILE) - before
    rep["outcome"] = (f"{rep['flood_seats']} of {flood} cookieless sessions got a seat (seats_per_address "
                      f"{Budgets().seats_per_address}, {before} taken before from this address), the rest refused")


async def corpus_attack(c: From, b: Budgets, timeout: float, rep: dict) -> None:
    await settle(c, CORPUS_PAGE)
    limit = b.corpus_mb * 1024 * 1024
    over = corpus_jsonl(limit + 100_000, 1)
    if await c.upload("corpus_upload", "over.jsonl", over) not in (200, 204):
        raise RuntimeError("the upload of the corpus over the budget was refused (the session's upload budget)")
    await c.set("corpus_upload_name", string_value="hostile-over")
    await asyncio.sleep(2.5)
    t0 = time.perf_counter()
    await c.click("corpus_upload_go")
    refused = c.said("lab.budgets.corpus_mb")
    rep["over"] = "refused" if refused else "ran"
    rep["over_ms"] = (time.perf_counter() - t0) * 1000
    at = corpus_jsonl(limit - 20_000, random.randrange(10**9))  # new text every run: nothing in the embedding cache
    t0 = time.perf_counter()
    if await c.upload("corpus_upload", "at.jsonl", at) not in (200, 204):
        raise RuntimeError("the upload of the corpus at the budget was refused (the session's upload budget)")
    await c.set("corpus_upload_name", string_value="hostile-at")
    rep["upload_s"] = time.perf_counter() - t0
    await asyncio.sleep(2.5)  # under the rerun rate (a skipped click would look like a quick load)
    _trace(f"corpus: uploaded {len(at):,} B in {rep['upload_s']:.1f} s; loading")
    t0 = time.perf_counter()
    try:
        await asyncio.wait_for(c.click("corpus_upload_go"), timeout=timeout)
        said = c.said(r"embedding budget|corpora_per_seat|corpora_mb_per_seat|redraws in")
        rep["at"] = ("loaded" if not said else "skipped by the rerun rate" if "redraws" in said
                     else f"refused by {_budget_named(said)}")
    except asyncio.TimeoutError:  # Cancel: its click reruns the page, which stops the load at its next batch
        rep["at"] = f"cancelled after {timeout:.0f} s"
        rep["at_s"] = time.perf_counter() - t0
        rep["outcome"] = (f"{len(over):,} B {rep['over']} in {rep['over_ms']:.0f} ms (corpus_mb {b.corpus_mb}); "
                          f"{len(at):,} B not loaded after {timeout:.0f} s in one of the {b.workers} worker slots; "
                          "Cancel sent, the page did not finish its run before the attack's bound")
        t1 = time.perf_counter()
        _trace(f"corpus: not loaded after {timeout:.0f} s: Cancel")
        try:
            await asyncio.wait_for(c.rerun(), timeout=120)
            rep["cancel_s"] = time.perf_counter() - t1
            rep["at"] += f" (the page's next run ended {rep['cancel_s']:.1f} s after Cancel)"
        except asyncio.TimeoutError:
            rep["at"] += " (the page's next run still busy 120 s after Cancel)"
    else:
        rep["at_s"] = time.perf_counter() - t0
    docs = sum(1 for _ in at.splitlines())
    rep["outcome"] = (f"{len(over):,} B {rep['over']} in {rep['over_ms']:.0f} ms (corpus_mb {b.corpus_mb}); "
                      f"{len(at):,} B ({docs} docs) {rep['at']} in {rep['at_s']:.1f} s (chunked and embedded in "
                      f"one of the {b.workers} worker slots; the upload itself {rep['upload_s']:.1f} s)")


async def golden_attack(c: From, b: Budgets, questions: int, rep: dict) -> None:
    await c.rerun(GOLDEN_PAGE)
    await c.set("golden_view", string_array_value=[VIEW_IO])
    data = golden_jsonl(questions)
    await c.upload("golden_upload", "huge.jsonl", data)
    t0 = time.perf_counter()
    await c.click("golden_import")
    rep["ms"] = (time.perf_counter() - t0) * 1000
    said = c.said("Import rejected")
    rep["result"] = "refused" if said else "accepted"
    rep["outcome"] = (f"{questions:,} questions ({len(data):,} B) {rep['result']} in {rep['ms']:.0f} ms, the whole "
                      f"page run (golden_questions {b.golden_questions}): \"{(said or ' | '.join(c.texts))[:90]}\"")


async def judge_attack(c: From, b: Budgets, judge, d: Deployment, timeout: float, rep: dict) -> None:
    await c.rerun(GOLDEN_PAGE)
    await c.set("golden_view", string_array_value=[VIEW_JUDGE])
    c.put_state("judge_samples", double_value=3)
    await c.set("agree_k", double_value=50)
    big = planned_calls(c)
    rep["big_planned"] = big
    rep["big"] = "refused" if c.said("more than this seat has left") else "ran"
    before = judge.chat_requests()
    await c.click("agree_go")  # the button is disabled: a browser cannot click it, a forged trigger can
    rep["forged_calls"] = judge.chat_requests() - before
    # the smallest pool over the confirmation threshold, within the budget
    c.put_state("judge_samples", double_value=1)
    planned = None
    for k in range(1, 51):
        await c.set("agree_k", double_value=k)
        planned = planned_calls(c) or 0
        if planned > b.judge_confirm_over:
            break
    rep["planned"] = planned
    rep["confirm"] = "asked" if "judge_confirm_agree" in c.ids else "not asked"
    before = judge.chat_requests()
    await c.click("agree_go")  # not confirmed yet
    rep["unconfirmed_calls"] = judge.chat_requests() - before
    if "judge_confirm_agree" in c.ids:
        c.put_state("judge_confirm_agree", bool_value=True)
    before = judge.chat_requests()
    t0 = time.perf_counter()
    try:
        await asyncio.wait_for(c.click("agree_go"), timeout=timeout)
    except asyncio.TimeoutError:
        await c.click("suggest_stop_agree")
    rep["s"] = time.perf_counter() - t0
    rep["calls"] = judge.chat_requests() - before
    spend = d.workspace / ".class" / "spend.json"  # type: ignore[operator]
    ledger = json.loads(spend.read_text(encoding="utf-8")) if spend.is_file() else {}
    rep["ledger"] = ledger
    c.put_state("judge_samples", double_value=3)
    await c.set("agree_k", double_value=50)
    rep["after"] = "refused" if c.said("more than this seat has left") else "may run"
    rep["outcome"] = (f"K=50x3: {big} calls planned, {rep['big']} (judge_calls_per_seat {b.judge_calls_per_seat}); "
                      f"forged click on the disabled button: {rep['forged_calls']} calls sent; "
                      f"{planned} calls planned: confirmation {rep['confirm']} (judge_confirm_over "
                      f"{b.judge_confirm_over}), unconfirmed click sent {rep['unconfirmed_calls']}; confirmed: "
                      f"{rep['calls']} calls in {rep['s']:.1f} s; seat's spending {_spent(ledger)}; "
                      f"the big run again: {rep['after']}")


def _spent(ledger: dict) -> str:
    return "; ".join(f"seat {who}: {v.get('calls', 0)} calls, {v.get('tokens', 0):,} tokens"
                     for who, v in ledger.items() if isinstance(v, dict))[:200] or "none"


async def upload_flood(c: From, b: Budgets, puts: int, rep: dict) -> None:
    codes: list[int] = []
    for _ in range(puts):
        url = f"{c.http_url.rstrip('/')}/_stcore/upload_file/{c.session_id}/{uuid.uuid4()}"
        codes.append(await asyncio.to_thread(_put, url, c, "x.bin", b"x" * (1 << 20)))
    rep["codes"] = codes
    rep["ok"] = sum(1 for x in codes if x in (200, 204))
    rep["outcome"] = (f"{rep['ok']} of {puts} PUTs of 1 MB accepted, the rest refused ({sorted(set(codes))}; "
                      f"upload_files_per_session {b.upload_files_per_session}, upload_mb_per_session "
                      f"{b.upload_mb_per_session}, with the files of the attacks before)")


async def guess(d: Deployment, address: str, n: int) -> str:
    c = From(d.ws_url, 5000 + n, d.http_url, address)
    await join(c)
    try:
        c.put_state("identity_teacher_key", string_value=f"wrong guess {n} {uuid.uuid4().hex}")
        await c.click("identity_sign_in")
        text = " ".join(c.texts)
    finally:
        await c.__aexit__(None, None, None)
    if "answered slowly" in text:  # past a guess budget: slowed, never refused (issue 50)
        return "slowed"
    if "not the teacher key" in text:
        return "wrong"
    return "other"


async def guess_attack(d: Deployment, b: Budgets, rep: dict) -> None:
    plan = [HOSTILE] * (b.guesses_per_address + 2)
    others = -(-(b.guesses_per_server - b.guesses_per_address) // b.guesses_per_address)
    for m in range(1, others + 1):
        plan += [f"10.0.3.{m}"] * b.guesses_per_address
    plan += [f"10.0.3.{others + 1}"] * 2
    got: dict[str, int] = {}
    for i, address in enumerate(plan):
        try:
            r = await guess(d, address, i)
        except Exception as e:  # noqa: BLE001 - reported
            r = "error"
            rep.setdefault("errors", []).append(f"guess: {type(e).__name__}: {e}"[:120])
        got[r] = got.get(r, 0) + 1
    rep["got"] = got
    log = (d.log.read_text(encoding="utf-8", errors="replace") if d.log else "")
    rep["logged"] = log.count("wrong teacher key from")
    rep["outcome"] = (f"{len(plan)} wrong keys from {len(plan)} fresh sessions on {others + 2} addresses: "
                      f"{got.get('wrong', 0)} answered at once, {got.get('slowed', 0)} slowed past the budgets "
                      f"(guesses_per_address {b.guesses_per_address}, guesses_per_server {b.guesses_per_server}), "
                      f"other {got.get('other', 0) + got.get('error', 0)}; log lines {rep['logged']}")


# ---- issue 50: decompression bombs, a quadratic golden import, a big message, a rerun flood --------------
BRING_PAGE = "bring_your_system"


def bombs() -> dict[str, tuple[str, bytes]]:
    """``{attack: (file name, bytes)}``: the issue's files, built here (seconds, a few MB at most in memory)."""
    import gzip
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from rag_metrics.server.deploy import APP_LIMITS

    buf = io.BytesIO()
    pq.write_table(pa.table({"question": ["x" * 100_000] * 1500}), buf, compression="zstd")
    over = APP_LIMITS["server.maxUploadSize"] * 1024 * 1024 + 1
    return {"double_gzip": ("log.jsonl.gz.gz", gzip.compress(gzip.compress(b"\n" * (30 << 20), 9), 9)),
            "parquet": ("log.parquet", buf.getvalue()),
            "gzip_over": ("log.jsonl.gz", gzip.compress(b"a" * over, 9)),
            "golden_dup": ("golden.jsonl.gz", gzip.compress(b'{"question": "same?"}\n' * 16_000, 9))}


async def bomb_attack(c: From, d: Deployment, rep: dict) -> None:
    found = []
    for name, (fname, data) in bombs().items():
        await c.rerun(BRING_PAGE)
        before = {p: _peak_rss_mb(p) for p in d.app_pids()}
        t0 = time.perf_counter()
        status = await c.upload("bring_files", fname, data)
        ms = (time.perf_counter() - t0) * 1000
        said = c.said(r"over the limit|gzip inside gzip|more than [\d,]+ questions")
        grew = max((_peak_rss_mb(p) - v for p, v in before.items()), default=float("nan"))
        rep[name] = {"bytes": len(data), "put": status, "ms": ms, "refused": bool(said), "peak_growth_mb": grew}
        found.append(f"{name} ({len(data):,} B) {'refused' if said else 'READ'} in {ms:.0f} ms, peak +{grew:.0f} MB"
                     + (f": \"{said[:70]}\"" if said else ""))
    rep["refused"] = sum(1 for v in rep.values() if isinstance(v, dict) and v.get("refused"))
    await c.rerun(BRING_PAGE)  # and a real file is still read (in the worker, in a class)
    log = "".join(json.dumps({"question": f"q{i}?", "contexts": ["a text"], "answer": "a"}) + "\n" for i in range(3))
    await c.upload("bring_files", "real.jsonl", log.encode())
    rep["real"] = bool(c.said(r"real\\?\.jsonl\\?: a RAG log"))
    found.append(f"a real 3-row log {'read' if rep['real'] else 'NOT READ: ' + ' | '.join(c.texts)[:120]}")
    rep["outcome"] = "; ".join(found)


async def widget_attack(d: Deployment, rep: dict) -> None:
    from rag_metrics.server.deploy import APP_LIMITS

    c = From(d.ws_url, 1002, d.http_url, HOSTILE)
    await join(c)
    size = APP_LIMITS["server.maxWidgetStateSize"] * 1_000_000 + 1
    t0 = time.perf_counter()
    try:
        await c.ws.send(b"\0" * size)
        await asyncio.wait_for(c.ws.wait_closed(), 30)
        rep["close"] = c.ws.close_code
    except (TimeoutError, asyncio.TimeoutError):
        rep["close"] = "open"
    finally:
        await c.__aexit__(None, None, None)
    rep["outcome"] = (f"one {size:,}-byte message: connection closed with code {rep['close']} in "
                      f"{(time.perf_counter() - t0) * 1000:.0f} ms (1009: too big, never parsed)")


async def rerun_flood(c: From, reruns: int, rep: dict) -> None:
    served, refused, ms = 0, 0, []
    for _ in range(reruns):
        t0 = time.perf_counter()
        await c.rerun(GOLDEN_PAGE)
        ms.append((time.perf_counter() - t0) * 1000)
        if c.said("redraws in"):
            refused += 1
        else:
            served += 1
    rep.update(served=served, refused=refused)
    rep["outcome"] = (f"{reruns} reruns back to back: {served} served, {refused} given the rate message; "
                      f"median {sorted(ms)[len(ms) // 2]:.0f} ms a rerun")


# ---- issue 50: CPU as a budget (embedding per seat), a flood of wrong teacher claims ----------------------
def app_cpu_s(d: Deployment) -> float:
    """CPU-seconds (user + system) the app processes have used so far (``/proc/<pid>/stat``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in d.app_pids():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            pass
    return total


def _embedded(d: Deployment) -> dict[str, int]:
    path = d.workspace / ".class" / "embed.json"  # type: ignore[operator]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: int(sum(n for _, n in v)) for k, v in data.items() if isinstance(v, list)}


def _budget_named(said: str) -> str:
    """The ``lab.budgets.<name>`` a refusal names (its markdown escapes removed), else its first words."""
    plain = said.replace("\\", "")
    which = re.search(r"lab\.budgets\.\w+", plain) or re.search(r"\w+_per_seat", plain)
    return which.group(0) if which else plain[:80]


async def settle(c: From, page: str) -> None:
    """Open ``page``, waiting out the rerun rate a flood before it spent (its message instead of the page)."""
    for _ in range(6):
        await c.rerun(page)
        if not c.said("redraws in"):
            return
        await asyncio.sleep(2.5)


async def embed_attack(c: From, d: Deployment, b: Budgets, timeout: float, rep: dict) -> None:
    """A corpus within ``corpus_mb`` whose embedding passes the seat's budget (refused before it is kept),
    then fresh small corpora one after another until a budget refuses one: the texts the seat embedded
    and the app processes' CPU-seconds meanwhile (every session's, the students' too)."""
    await settle(c, CORPUS_PAGE)
    big = corpus_jsonl(1024 * 1024, random.randrange(10**9))  # 1 MB: half corpus_mb, about 2,600 chunks
    await c.upload("corpus_upload", "big.jsonl", big)
    await c.set("corpus_upload_name", string_value="hostile-cpu")
    cpu0, t0 = app_cpu_s(d), time.perf_counter()
    await c.click("corpus_upload_go")
    said = c.said(r"embedding budget|corpora_per_seat|corpora_mb_per_seat")
    rep["big"] = "refused" if said else "loaded"
    rep["big_ms"] = (time.perf_counter() - t0) * 1000
    rep["big_said"] = (said or "")[:160]
    loads: list[str] = []
    deadline = time.monotonic() + timeout
    for i in range(12):
        if time.monotonic() > deadline:
            loads.append("stopped at the attack's bound")
            break
        small = corpus_jsonl(150_000, random.randrange(10**9))  # about 400 new chunks each
        await settle(c, CORPUS_PAGE)
        await c.upload("corpus_upload", f"small{i}.jsonl", small)
        await c.set("corpus_upload_name", string_value=f"hostile-cpu-{i}")
        t1 = time.perf_counter()
        try:
            await asyncio.wait_for(c.click("corpus_upload_go"), timeout=max(10.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            loads.append(f"#{i} still embedding at the bound")
            break
        said = c.said(r"embedding budget|corpora_per_seat|corpora_mb_per_seat")
        if said:
            loads.append(f"#{i} refused in {(time.perf_counter() - t1) * 1000:.0f} ms")
            rep["refused_by"] = _budget_named(said)
            break
        loads.append(f"#{i} loaded in {time.perf_counter() - t1:.1f} s")
    rep["cpu_s"] = app_cpu_s(d) - cpu0
    rep["s"] = time.perf_counter() - t0
    used = _embedded(d)
    rep["texts"] = max((v for k, v in used.items() if k.startswith("seat:")), default=0)
    rep["outcome"] = (f"a {len(big):,} B corpus (corpus_mb {b.corpus_mb}) {rep['big']} in {rep['big_ms']:.0f} ms"
                      + (f" (\"{rep['big_said'][:100]}\")" if rep['big_said'] else "")
                      + f"; then 150 KB corpora: {', '.join(loads)}; refused by {rep.get('refused_by', 'none')}; "
                      f"the seat embedded {rep['texts']:,} texts (embed_texts_per_seat {b.embed_texts_per_seat}); "
                      f"the app processes used {rep['cpu_s']:.0f} CPU-s in {rep['s']:.0f} s (all sessions)")


def _claim(url: str, n: int) -> int:
    req = urllib.request.Request(url, data=f"claim=wrong-{n}-{uuid.uuid4().hex}".encode(), method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded",
                                          "Sec-Fetch-Site": "same-origin", "X-Forwarded-For": HOSTILE})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)
    except OSError:
        return 0


async def claim_flood(d: Deployment, seconds: float, rep: dict) -> None:
    """Wrong teacher claims (``POST /_lab/teacher-session``, no authentication) as fast as 8 threads send
    them, for ``seconds``: each must be refused without a write to the session store."""
    from ui.teacher_route import PATH

    url = d.http_url.rstrip("/") + PATH
    store = d.workspace / ".class"  # type: ignore[operator]
    before = {p.name: p.stat().st_mtime_ns for p in store.glob("*")} if store.is_dir() else {}
    codes: dict[int, int] = {}
    end = time.monotonic() + seconds

    def worker(k: int) -> None:
        i = 0
        while time.monotonic() < end:
            code = _claim(url, k * 10**6 + i)
            codes[code] = codes.get(code, 0) + 1
            i += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(asyncio.to_thread(worker, k) for k in range(8)))
    took = time.perf_counter() - t0
    after = {p.name: p.stat().st_mtime_ns for p in store.glob("*")} if store.is_dir() else {}
    written = sorted(n for n, t in after.items() if before.get(n) != t and "session" in n)
    sent = sum(codes.values())
    rep.update(sent=sent, rate=sent / took, codes=codes, written=written)
    rep["outcome"] = (f"{sent:,} wrong claims in {took:.0f} s ({sent / took:.0f}/s), answers "
                      f"{dict(sorted(codes.items()))}; teacher session files written meanwhile: {written or 'none'}")


# ---- figures -----------------------------------------------------------------------------------------
def pcts(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    if not xs:
        return float("nan"), float("nan")
    return xs[int(0.5 * (len(xs) - 1))] * 1000, xs[int(0.95 * (len(xs) - 1))] * 1000


def load_avg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--procs", type=int, default=1, help="app processes (2: behind nginx, the real class setup)")
    ap.add_argument("--think", type=float, default=5.0)
    ap.add_argument("--seconds", type=float, default=900.0, help="bound on the whole class phase")
    ap.add_argument("--flood", type=int, default=30, help="cookieless sessions of the hostile student")
    ap.add_argument("--puts", type=int, default=60, help="1 MB PUTs of the hostile student")
    ap.add_argument("--questions", type=int, default=30_000, help="questions in the golden import")
    ap.add_argument("--attack-timeout", type=float, default=300.0, help="bound on one costly attack (s)")
    ap.add_argument("--reruns", type=int, default=60, help="reruns back to back in the rerun flood")
    ap.add_argument("--claim-seconds", type=float, default=20.0, help="length of the flood of wrong teacher claims")
    ap.add_argument("--attacks", default="seats,golden,judge,guesses,claims,bombs,widget,reruns,embed,corpus,uploads",
                    help="in this order (the corpus late: its embedding is the longest; the upload flood after it, "
                         "as it spends the session's upload budget)")
    ap.add_argument("--out", default="", help="append the printed lines to this file")
    args = ap.parse_args()
    b = Budgets()
    lines: list[str] = []

    def say(s: str) -> None:
        print(s, flush=True)
        lines.append(s)

    from judge_script_server import ScriptedJudge

    with tempfile.TemporaryDirectory(prefix="bench_noisy_") as tmp, ScriptedJudge() as judge:
        ws = Path(tmp) / "workspace"
        ws.mkdir()
        cfg = Path(tmp) / "lab.toml"
        cfg.write_text(f'[lab.judge]\nbase_url = "{judge.base_url}"\nchat_model = "scripted"\n', encoding="utf-8")
        say(f"bench_noisy: N={args.n} think={args.think:g}s procs={args.procs} attacks={args.attacks}; "
            f"{os.cpu_count()} CPUs shared with other work; load average before: {load_avg()}")
        d = start_class_deployment(ws, how="lab", procs=args.procs, env_extra={"RAG_METRICS_CONFIG": str(cfg)})
        try:
            wait_ready(d)

            import bench_class

            bench_class.Student = lambda url, n, http_url: From(url, n, http_url, _address(n))  # type: ignore[misc, assignment]

            async def run() -> tuple[dict[int, StudentResult], dict, list[tuple[str, float, float]], float, dict]:
                from bench_class import warm_up

                await warm_up(d, "noisy")
                base = {p: _peak_rss_mb(p) for p in d.app_pids()}
                out: dict[int, StudentResult] = {}
                reports: dict[str, dict] = {}
                windows: list[tuple[str, float, float]] = []
                stop = asyncio.Event()
                deadline = time.monotonic() + args.seconds

                async def hostile() -> None:
                    await asyncio.sleep(2 * args.think)  # the class is at work first
                    me = From(d.ws_url, 999, d.http_url, HOSTILE)
                    await join(me)
                    steps = {
                        "seats": lambda r: seat_flood(d, args.flood, r),
                        "corpus": lambda r: corpus_attack(me, b, args.attack_timeout, r),
                        "golden": lambda r: golden_attack(me, b, args.questions, r),
                        "judge": lambda r: judge_attack(me, b, judge, d, args.attack_timeout, r),
                        "uploads": lambda r: upload_flood(me, b, args.puts, r),
                        "guesses": lambda r: guess_attack(d, b, r),
                        "bombs": lambda r: bomb_attack(me, d, r),
                        "widget": lambda r: widget_attack(d, r),
                        "reruns": lambda r: rerun_flood(me, args.reruns, r),
                        "embed": lambda r: embed_attack(me, d, b, args.attack_timeout, r),
                        "claims": lambda r: claim_flood(d, args.claim_seconds, r),
                    }
                    try:
                        for name in args.attacks.split(","):
                            r = reports[name] = {}
                            t0 = time.monotonic()
                            try:
                                await asyncio.wait_for(steps[name](r), timeout=args.attack_timeout + 300)
                            except Exception as e:  # noqa: BLE001 - reported
                                r.setdefault("errors", []).append(f"{type(e).__name__}: {e}"[:300])
                            windows.append((name, t0, time.monotonic()))
                            say(f"  attack {name}: {r.get('outcome', 'no outcome')}"
                                + (f"; errors: {r['errors'][:2]}" if r.get("errors") else "")
                                + (f"; page exceptions: {me.exceptions[-2:]}" if me.exceptions else ""))
                        await asyncio.sleep(args.think)  # the students' runs after the last attack count too
                    finally:
                        stop.set()
                        await me.__aexit__(None, None, None)

                with PeakSampler(d):
                    await asyncio.gather(hostile(), *(student(d, i, args.think, deadline, random.Random(i), "noisy",
                                                              out, stop) for i in range(args.n)))
                return out, reports, windows, sum(base.values()), base

            out, reports, windows, base_total, base = asyncio.run(run())
            peaks = {p: _peak_rss_mb(p) for p in d.app_pids()}
        finally:
            d.stop()
        load_after = load_avg()
        rates = json.loads((ws / ".class" / "rates.json").read_text(encoding="utf-8"))
        lat = [x for r in out.values() for x in r.latencies]
        p50, p95 = pcts(lat)
        for name, t0, t1 in windows:
            during = [x for r in out.values() for x, e in zip(r.latencies, r.ends) if t0 <= e <= t1 + 1.0]
            a, z = pcts(during)
            say(f"  students during {name} ({t1 - t0:.0f} s): p50={a:.0f} p95={z:.0f} ms over {len(during)} "
                f"interactions")
        seated = {k.split(":", 1)[1] for k in rates if k.startswith("seat:10.0.0.")} - {HOSTILE}
        refused = sum(1 for i in range(args.n) if _address(i) not in seated)
        errors = [e for r in out.values() for e in r.errors][:5]
        if errors:
            say(f"  students' errors: {errors}")
        budget = b.process_memory_mb
        over = sum(1 for v in peaks.values() if v > budget)
        say("  app processes, peak RSS (VmHWM) / budget: " + ", ".join(
            f"pid {p}: {v:.0f} MB (before the class {base.get(p, float('nan')):.0f}) / {budget} MB"
            for p, v in sorted(peaks.items())))
        say(f"  load average after: {load_after}")
        g = reports.get("guesses", {}).get("got", {})
        j, co, go = reports.get("judge", {}), reports.get("corpus", {}), reports.get("golden", {})
        say(f"noisy: N={args.n} procs={args.procs} p50={p50:.0f} p95={p95:.0f} refused={refused} "
            f"flood_seats={reports.get('seats', {}).get('flood_seats', 'na')}/{args.flood} "
            f"corpus_over={co.get('over', 'na')} corpus_s={co.get('at_s', float('nan')):.0f} "
            f"golden={go.get('result', 'na')} golden_ms={go.get('ms', float('nan')):.0f} "
            f"judge_big={j.get('big', 'na')} judge_forged={j.get('forged_calls', 'na')} "
            f"judge_confirm={j.get('confirm', 'na').replace(' ', '_')} "
            f"judge_calls={j.get('calls', 'na')}/{j.get('planned', 'na')} "
            f"puts={reports.get('uploads', {}).get('ok', 'na')}/{args.puts} "
            f"guesses={g.get('wrong', 0)}/{g.get('slowed', 0)} "
            f"bombs_refused={reports.get('bombs', {}).get('refused', 'na')}/4 "
            f"widget_close={reports.get('widget', {}).get('close', 'na')} "
            f"reruns={reports.get('reruns', {}).get('served', 'na')}/{reports.get('reruns', {}).get('refused', 'na')} "
            f"embed_big={reports.get('embed', {}).get('big', 'na')} "
            f"embed_texts={reports.get('embed', {}).get('texts', 'na')} "
            f"embed_cpu_s={reports.get('embed', {}).get('cpu_s', float('nan')):.0f} "
            f"claims={reports.get('claims', {}).get('sent', 'na')}@{reports.get('claims', {}).get('rate', 0):.0f}/s "
            f"peak_rss_mb={','.join(f'{v:.0f}' for _, v in sorted(peaks.items()))} budget_mb={budget} "
            f"over_budget={over} rss_growth_mb={sum(peaks.values()) - base_total:.0f} "
            f"load={load_after.split()[0]}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a", encoding="utf-8") as f:
            f.write(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()) + "\n" + "\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
