"""The teacher's sign-in is a server-side session (issue 27: the cookie was a stateless signed
token, readable by scripts, and "Sign out" did not revoke a copy for 12 hours)."""
from __future__ import annotations

import re

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from rag_metrics.server.seats import TEACHER_COOKIE
from rag_metrics.server.teacher_sessions import TeacherSessions
from ui import teacher_route

pytestmark = pytest.mark.usefixtures("class_state_backend")  # files and PostgreSQL (issue 52)

KEY = "the teacher's long key 42"


def test_sessions_end_everywhere_and_with_a_new_key(tmp_path):
    ts = TeacherSessions(tmp_path)
    a, b = ts.open(KEY), ts.open(KEY)
    assert ts.valid(a, KEY) and ts.valid(b, KEY) and a not in ts.state.read(ts.name)  # stored hashed
    assert not ts.valid(a, "a new key for the class")
    assert not ts.valid(a, KEY, now=10**11)  # expired
    TeacherSessions(tmp_path).end_all()  # sign out in another process
    assert not ts.valid(a, KEY) and not ts.valid(b, KEY)


def test_a_claim_is_single_use_and_expires(tmp_path):
    ts = TeacherSessions(tmp_path)
    token = ts.open(KEY)
    assert ts.redeem(ts.claim(token, now=0.0), now=61.0) is None
    code = ts.claim(token)
    assert ts.redeem(code) == token and ts.redeem(code) is None


SAME = {"Origin": "http://testserver"}  # what the lab's own page sends (TestClient's Host is "testserver")


@pytest.fixture
def client(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_METRICS_WORKSPACE", str(tmp_path))
    return TestClient(Starlette(routes=[Route(teacher_route.PATH, teacher_route.handle, methods=["POST"])]),
                      headers=SAME)


def test_the_route_sets_an_httponly_cookie_for_a_claim(client, tmp_path):
    ts = TeacherSessions(tmp_path)
    token = ts.open(KEY)
    r = client.post(teacher_route.PATH, data={"claim": ts.claim(token)})
    assert r.status_code == 204
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{TEACHER_COOKIE}={token};") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert client.post(teacher_route.PATH, data={"claim": "x" * 32}).status_code == 403
    gone = client.post(teacher_route.PATH, data={"end": "1"})
    assert gone.status_code == 204 and "Max-Age=0" in gone.headers["set-cookie"]


def test_the_page_never_holds_the_token(tmp_path, monkeypatch):
    import streamlit as st

    from ui import identity

    monkeypatch.setenv("RAG_METRICS_WORKSPACE", str(tmp_path))
    token = TeacherSessions(tmp_path).open(KEY)
    shown: list[str] = []
    monkeypatch.setattr(st, "iframe", lambda html, **kw: shown.append(html))
    identity.write_cookie(TEACHER_COOKIE, token, 3600)
    assert shown and token not in shown[0] and teacher_route.PATH in shown[0] and "document.cookie" not in shown[0]


def test_the_launcher_installs_the_route():
    from streamlit.web.server.starlette import starlette_server

    original = starlette_server.create_starlette_app
    try:
        teacher_route.install()
        assert getattr(starlette_server.create_starlette_app, "_lab_teacher_route", False)
    finally:
        starlette_server.create_starlette_app = original


# ---- issue 50: a teacher in control -------------------------------------------------------------------
def test_a_wrong_claim_is_refused_without_a_write(tmp_path, monkeypatch):
    ts = TeacherSessions(tmp_path)
    code = ts.claim(ts.open(KEY))
    before = ts.path.stat() if ts.state.kind == "files" else None
    changes: list[str] = []
    change = ts.state.change
    monkeypatch.setattr(ts.state, "change", lambda name: changes.append(name) or change(name))
    for i in range(50):  # a flood of forged claims
        assert ts.redeem(f"forged claim number {i:04d} xxxxxx") is None
    assert changes == []  # no change opened: no lock taken, no transaction, nothing written
    if before is not None:
        after = ts.path.stat()
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # the store was not rewritten
    assert ts.redeem(code) is not None  # the real one still works


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},                                  # a page on another site
    {"Origin": "http://testserver.evil.example"},
    {"Origin": "null"},                                                 # a sandboxed frame elsewhere
    {"Origin": "http://testserver", "Sec-Fetch-Site": "cross-site"},    # the browser's own word wins
    {"Sec-Fetch-Site": "same-site"},
    {"Origin": ""},                                                     # neither header
])
def test_the_route_refuses_anything_but_the_labs_own_page(client, tmp_path, headers):
    ts = TeacherSessions(tmp_path)
    code = ts.claim(ts.open(KEY))
    client.headers.pop("Origin", None)
    for body in ({"end": "1"}, {"claim": code}):
        r = client.post(teacher_route.PATH, data=body, headers=headers)
        assert r.status_code == 403 and "set-cookie" not in r.headers  # no sign-out, no sign-in from elsewhere
    assert ts.redeem(code) is not None  # the refused request did not use the claim up


def test_the_route_takes_the_labs_own_page(client, tmp_path):
    ts = TeacherSessions(tmp_path)
    client.headers.pop("Origin", None)
    r = client.post(teacher_route.PATH, data={"end": "1"}, headers={"Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 204 and "Max-Age=0" in r.headers["set-cookie"]
    r = client.post(teacher_route.PATH, data={"claim": ts.claim(ts.open(KEY))}, headers={"Origin": "http://testserver"})
    assert r.status_code == 204 and "HttpOnly" in r.headers["set-cookie"]


def test_the_one_time_link_signs_in_once_then_never(tmp_path):
    from rag_metrics.server.teacher_sessions import new_link

    ts = TeacherSessions(tmp_path)
    link, spec = new_link(ttl=600, now=1000.0)
    assert link not in spec and len(link) >= 32
    assert ts.use_link(link, spec, now=1601.0) == "this sign-in link has expired"
    forged = link[:-1] + ("A" if link[-1] != "A" else "B")
    assert ts.use_link(forged, spec, now=1001.0) == "this sign-in link is not valid"
    assert ts.state.read(ts.name) is None  # wrong and expired links wrote nothing
    assert ts.use_link(link, spec, now=1001.0) is None
    assert link not in ts.state.read(ts.name)  # stored hashed
    assert TeacherSessions(tmp_path).use_link(link, spec, now=1002.0) == "this sign-in link was used already"
    assert ts.use_link(link, None, now=1001.0) == "this sign-in link is not valid"  # no link given to this process


def test_wrong_guesses_are_slowed_never_refused(tmp_path):
    from rag_metrics.config import Budgets
    from rag_metrics.server.budgets import RateLimiter
    from rag_metrics.server.guesses import MAX_DELAY_S, count_wrong_guess

    b = Budgets(guesses_per_address=10, guesses_per_server=40)
    rates = RateLimiter(tmp_path)
    delays = [count_wrong_guess(rates, "10.0.0.1", b, now=100.0 + i)[2] for i in range(30)]
    assert delays[:10] == [0.0] * 10 and delays[10:14] == [1.0, 2.0, 4.0, 8.0] and max(delays) == MAX_DELAY_S
    assert count_wrong_guess(rates, "10.0.0.2", b, now=140.0)[2] == 0.0  # another address is not slowed
    assert len(rates.state.read(rates.name)) < 4000  # a flood keeps the rate file small


def test_every_app_process_logs_the_class_with_time(monkeypatch):
    import io
    import logging

    from streamlit.web import cli

    from ui import launch, prewarm, upload_budget

    log = logging.getLogger("rag_metrics.class")
    before, level = list(log.handlers), log.level
    for mod, name in ((cli, "main"), (prewarm, "start"), (teacher_route, "install"), (upload_budget, "install")):
        monkeypatch.setattr(mod, name, lambda *a, **k: None)
    monkeypatch.setattr("sys.argv", ["launch"])
    try:
        launch.main([])
        added = [h for h in log.handlers if h not in before]
        assert added and log.isEnabledFor(logging.INFO)  # before: no handler, INFO lines went nowhere
        out = io.StringIO()
        added[0].setStream(out)
        log.info("class: teacher sign-out from 10.0.0.5: signed out")
        assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ INFO ", out.getvalue())  # the time first
    finally:
        log.setLevel(level)
        for h in log.handlers[:]:
            if h not in before:
                log.removeHandler(h)
