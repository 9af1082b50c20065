"""The teacher's sign-in is a server-side session (issue 27: the cookie was a stateless signed
token, readable by scripts, and "Sign out" did not revoke a copy for 12 hours)."""
from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from rag_metrics.server.seats import TEACHER_COOKIE
from rag_metrics.teacher_sessions import TeacherSessions
from ui import teacher_route

KEY = "the teacher's long key 42"


def test_sessions_end_everywhere_and_with_a_new_key(tmp_path):
    ts = TeacherSessions(tmp_path)
    a, b = ts.open(KEY), ts.open(KEY)
    assert ts.valid(a, KEY) and ts.valid(b, KEY) and a not in ts.path.read_text()  # stored hashed
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


@pytest.fixture
def client(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_METRICS_WORKSPACE", str(tmp_path))
    return TestClient(Starlette(routes=[Route(teacher_route.PATH, teacher_route.handle, methods=["POST"])]))


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
