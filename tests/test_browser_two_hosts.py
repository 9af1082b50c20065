"""A class on two hosts (issue 52), with real parts on loopback: two class hosts (each a one-process
:class:`rag_metrics.server.deploy.ClassDeployment`, on its own port) share one workspace folder and one
PostgreSQL (``pgserver``) for the class's state, behind one nginx that keeps a browser on one host by cookie
(:func:`rag_metrics.server.deploy.hosts_nginx_config`).  In Chromium: a seat is made once across hosts; the
teacher sees the students of both; a sign-out on one host ends the session on the other; a budget counts
the hits of both; and after ``kill -9`` of a student's host mid-lesson, her browser continues on the other
host with her seat and every step she saved."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from app_helpers import CHROMIUM, chromium, class_dirs, sign_in_as_teacher, wait_for_cookies, wait_until_idle

KEY = "teacher key for the two-host test"
WAIT = 120_000  # ms

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]


def _nginx() -> str:
    for p in ("/usr/sbin/nginx", "/usr/bin/nginx"):
        if Path(p).exists():
            return p
    pytest.skip("nginx is not installed (apt-get install nginx-light); ./lab test installs it")


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory, app_cache_dir, class_state_pg):
    """``(front url, {port: host deployment}, workspace, dsn)``: two hosts behind one nginx."""
    from rag_metrics.io.state import class_state
    from rag_metrics.server.deploy import ClassDeployment, free_port, hosts_nginx_config, unprivileged_user

    nginx = _nginx()
    with class_state(".", class_state_pg)._connection() as conn:
        conn.execute("TRUNCATE lab_state")
    tmp = tmp_path_factory.mktemp("two_hosts")
    ws, cache, made = class_dirs(tmp, app_cache_dir)
    ws.parent.mkdir(parents=True, exist_ok=True)
    (ws.parent / "none.toml").write_text("[lab]\n")
    env = {"HF_HUB_OFFLINE": "1", "RAG_METRICS_WORKSPACE": str(ws), "RAG_METRICS_CACHE": str(cache),
           "RAG_METRICS_TEACHER_KEY": KEY, "RAG_METRICS_WARM": "0", "RAG_METRICS_STATE": class_state_pg,
           "RAG_METRICS_CONFIG": str(ws.parent / "none.toml")}
    # the hosts keep the test's user: pgserver's socket lies in a folder only its own user and root may enter
    hosts = {}
    front_tmp = Path(tempfile.mkdtemp(prefix="lab-two-hosts-nginx-"))
    os.chmod(front_tmp, 0o755)
    proc = None
    try:
        for _ in range(2):
            dep = ClassDeployment(procs=1, port=free_port(), address="127.0.0.1", env=env, app_user="current")
            dep.start()
            hosts[dep.port] = dep
        run_as = unprivileged_user()
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (front_tmp / sub).mkdir()
            if run_as:
                shutil.chown(front_tmp / sub, *run_as)
        port = free_port()
        conf = front_tmp / "nginx.conf"
        conf.write_text(hosts_nginx_config(f"127.0.0.1:{port}", [f"127.0.0.1:{p}" for p in hosts], front_tmp,
                                           show_upstream=True, run_as=run_as))
        proc = subprocess.Popen([nginx, "-c", str(conf), "-p", str(front_tmp)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    err = proc.stderr.read() if proc.stderr else b""
                    raise AssertionError(f"the front nginx did not start: {err!r}") from None
                time.sleep(0.1)
        yield url, hosts, ws, class_state_pg
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        for dep in hosts.values():
            dep.stop()
        shutil.rmtree(front_tmp, ignore_errors=True)
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


def _seats(dsn: str) -> list[dict]:
    from rag_metrics.io.state import class_state

    text = class_state(".", dsn).read("seats.json")
    return json.loads(text)["seats"] if text else []


def _student(browser, url: str, want_port: int | None = None):
    """A new browser that the front nginx routes to the host on ``want_port`` (any when None): its seat
    made there.  Returns ``(context, page, port)``."""
    for _ in range(40):
        ctx = browser.new_context()
        page = ctx.new_page()
        page.set_default_timeout(WAIT)
        probe = page.goto(f"{url}/_stcore/health")
        port = int(probe.headers.get("x-lab-upstream", ":0").rsplit(":", 1)[1])
        if want_port is not None and port != want_port:
            ctx.close()
            continue
        page.goto(url)
        page.get_by_text("My seat").first.wait_for()
        wait_for_cookies(ctx, {"rag_metrics_seat"})
        return ctx, page, port
    raise AssertionError(f"no browser was routed to port {want_port} in 40 tries")


def test_a_class_on_two_hosts_behind_one_nginx(two_hosts):
    from rag_metrics.io.state import class_state
    from rag_metrics.lesson import store_for_space
    from rag_metrics.server.seats import seat_space

    url, hosts, ws, dsn = two_hosts
    ports = sorted(hosts)
    with chromium() as browser:
        # a seat is made once across hosts: the same browser on the other host is the same seat
        ada, ada_page, ada_port = _student(browser, url, ports[0])
        assert len(_seats(dsn)) == 1
        other = ports[1]
        direct = ada.new_page()
        direct.set_default_timeout(WAIT)
        direct.goto(f"http://127.0.0.1:{other}/")  # (a cookie is sent to every port of its host)
        direct.get_by_text("My seat").first.wait_for()
        wait_until_idle(direct)
        assert len(_seats(dsn)) == 1
        direct.close()
        bob, bob_page, _ = _student(browser, url, ports[1])
        seats = _seats(dsn)
        assert len(seats) == 2 and not (ws / ".class" / "seats.json").exists()  # in PostgreSQL, not in files

        # the teacher, on one host, sees the students of both; a sign-out there ends the session on the other
        teacher, tpage, tport = _student(browser, url, ports[0])
        sign_in_as_teacher(tpage, KEY, 120)
        assert len(_seats(dsn)) == 2  # the teacher's browser gave its empty seat back
        tpage.goto(f"{url}/roster")
        tpage.get_by_text("2 seat(s) of").first.wait_for()  # Ada made on this host, Bob on the other
        on_other = teacher.new_page()
        on_other.set_default_timeout(WAIT)
        on_other.goto(f"http://127.0.0.1:{ports[1]}/roster")
        on_other.get_by_text("seat(s)").first.wait_for()  # the teacher's cookie holds on the other host
        tpage.get_by_role("button", name="Sign out").first.click()
        tpage.get_by_text("Signed out everywhere").first.wait_for()
        on_other.goto(f"http://127.0.0.1:{ports[1]}/roster")
        on_other.get_by_text("Only the teacher").first.wait_for()

        # a budget counts the hits of both hosts: the server's new-seat budget (seats_per_server) counted the
        # seats made on either host in one place
        used = json.loads(class_state(".", dsn).read("rates.json") or "{}")
        assert len(used["seat:*"]) >= 3 and not (ws / ".class" / "rates.json").exists()

        # kill -9 of Ada's host mid-lesson: her browser continues on the other host, with every saved step
        ada_page.goto(f"{url}/lesson")
        ada_page.get_by_text("Next").first.wait_for()
        wait_until_idle(ada_page)
        store = store_for_space(seat_space(seats[0]["id"]), ws)
        for step in (1, 2):
            ada_page.locator(".st-key-lesson_next_top button").locator("visible=true").click()
            wait_until_idle(ada_page)
            assert store.load().step == step
        ada_page.locator(".st-key-lesson_next_top button").locator("visible=true").click()  # mid-edit ...
        os.kill(hosts[ada_port].children[0].pid, signal.SIGKILL)                          # ... her host dies
        saved = store.load().step
        assert saved >= 2
        before = {s["id"] for s in _seats(dsn)}
        ada_page.goto(f"{url}/lesson")  # nginx: the dead host fails, the same cookie goes to the other
        ada_page.get_by_text("Next").first.wait_for()
        wait_until_idle(ada_page)
        assert {s["id"] for s in _seats(dsn)} == before  # her seat, not a new one
        assert store.load().step == saved  # nothing saved was lost
        ada_page.locator(".st-key-lesson_next_top button").locator("visible=true").click()
        wait_until_idle(ada_page)
        assert store.load().step == saved + 1  # and she goes on, on the other host
        assert bob_page.get_by_text("My seat").first.is_visible()
