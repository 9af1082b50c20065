"""HTTP backend against a real HTTP server on 127.0.0.1 started by the tests (faults included)."""
from __future__ import annotations

import json
import socket
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from loopback import serve_in_thread

from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.systems.backends.http import (
    HttpBackend,
    HttpConfig,
    http_system,
    parse_header,
)
from rag_metrics.systems.base import LiveSystem, ResultMemo
from rag_metrics.types import GoldenQuery, GoldenSet

GOLDEN = GoldenSet((
    GoldenQuery("q1", "refund window", relevant={"a#0": 1}),
    GoldenQuery("q2", "reset password", relevant={"c#1": 1}),
    GoldenQuery("q3", "which plans", relevant={"a#1": 1}),
))
ANSWERS = {
    "refund window": [{"id": "x#0", "score": 0.9}, {"id": "a#0", "score": 0.8, "text": "Refunds..."}],
    "reset password": [{"id": "c#1", "score": 0.7}],
    "which plans": [{"id": "b#0", "score": 0.5}, {"id": "a#1", "score": 0.5}],  # tie: id desc -> b#0 first
}


class Handler(BaseHTTPRequestHandler):
    mode = "ok"
    calls: list = []
    fail_first: dict = {}

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.calls.append((body, self.headers.get("Authorization")))
        q = body["query"]
        mode = Handler.mode
        if mode == "flaky" and Handler.fail_first.get(q, 0) < 1:
            Handler.fail_first[q] = Handler.fail_first.get(q, 0) + 1
            return self._send(500, b"boom")
        if mode == "slow":
            time.sleep(1.0)
        if mode == "html":
            return self._send(200, b"<html>oops</html>")
        if mode == "missing":
            return self._send(200, json.dumps([{"score": 1.0}]).encode())
        if mode == "auth" and self.headers.get("Authorization") != "Bearer s3cret":
            return self._send(401, b"no")
        if mode == "half" and q == "which plans":
            return self._send(500, b"down for this one")
        results = ANSWERS.get(q, [])[: body["k"]]
        doc = {"data": {"hits": results}} if mode == "nested" else results
        self._send(200, json.dumps(doc).encode())

    def _send(self, code, data):
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass


@pytest.fixture(scope="module")
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    serve_in_thread(srv)
    yield f"http://127.0.0.1:{srv.server_address[1]}/search"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(autouse=True)
def reset():
    Handler.mode, Handler.calls, Handler.fail_first = "ok", [], {}


def _system(url, **kw) -> LiveSystem:
    kw.setdefault("retries", 2)
    backend = HttpBackend(HttpConfig(url, **kw), sleep=lambda s: None)
    return LiveSystem("mine", backend, ResultMemo())


def _rankings(sr):
    return {q: [i for i, _ in items] for q, items in sr.run.rankings().items()}


def test_happy_path_request_body_ties_and_metrics(server):
    system = _system(server)
    sr = system.rank(GOLDEN.questions(), 10)
    assert sr.ok
    assert _rankings(sr) == {"q1": ["x#0", "a#0"], "q2": ["c#1"], "q3": ["b#0", "a#1"]}
    assert sorted(b["query"] for b, _ in Handler.calls) == ["refund window", "reset password", "which plans"]
    assert {b["k"] for b, _ in Handler.calls} == {10}
    # MRR: q1 1/2, q2 1, q3 1/2 (tie broken by id desc puts b#0 first)
    assert evaluate(GOLDEN, sr.run).mean("mrr") == pytest.approx((0.5 + 1 + 0.5) / 3)


def test_memo_never_requeries_for_k_or_golden_edit(server):
    system = _system(server)
    system.rank(GOLDEN.questions(), 10)
    n = len(Handler.calls)
    system.rank(GOLDEN.questions(), 5)  # smaller depth: from the memo
    assert len(Handler.calls) == n
    edited = {**GOLDEN.questions(), "q4": "refund window"}  # a new query with a known text
    sr = system.rank(edited, 10)
    assert len(Handler.calls) == n and _rankings(sr)["q4"] == ["x#0", "a#0"]
    system.rank({"q9": "brand new"}, 10)
    assert len(Handler.calls) == n + 1


def test_results_path_and_headers_from_env(server, monkeypatch):
    Handler.mode = "nested"
    sr = _system(server, results_path="data.hits").rank({"q2": "reset password"}, 3)
    assert _rankings(sr) == {"q2": ["c#1"]}
    Handler.mode = "auth"
    monkeypatch.setenv("MY_TOKEN", "s3cret")
    cfg_headers = (("Authorization", "Bearer ${MY_TOKEN}"),)
    sr = _system(server, headers=cfg_headers).rank({"q2": "reset password"}, 3)
    assert sr.ok and Handler.calls[-1][1] == "Bearer s3cret"
    cfg = HttpConfig(server, headers=cfg_headers)
    assert "s3cret" not in json.dumps(cfg.public()) and "${MY_TOKEN}" in json.dumps(cfg.public())
    assert HttpConfig(server, headers=(("Authorization", "Bearer literal"),)).public()["headers"] == [
        ["Authorization", "***"]]
    monkeypatch.delenv("MY_TOKEN")
    with pytest.raises(InputError, match=r"header 'Authorization' refers to \$\{MY_TOKEN\}, which is not set"):
        _system(server, headers=cfg_headers).rank({"q2": "other question"}, 3)


def test_401_is_not_retried_and_names_the_fix(server):
    Handler.mode = "auth"
    sr = _system(server).rank({"q2": "reset password"}, 3)
    assert len(Handler.calls) == 1
    assert "HTTP 401" in sr.failures[0].message and "Authorization header" in sr.failures[0].message


def test_500_then_success_is_retried(server):
    Handler.mode = "flaky"
    sr = _system(server).rank(GOLDEN.questions(), 10)
    assert sr.ok and len(Handler.calls) == 6  # each question: one 500, one success
    assert _rankings(sr)["q2"] == ["c#1"]


def test_half_failure_keeps_answers_and_names_missing(server):
    Handler.mode = "half"
    system = _system(server, retries=1)
    sr = system.rank(GOLDEN.questions(), 10)
    assert set(_rankings(sr)) == {"q1", "q2"}
    assert sr.failed_ids == ["q3"]
    assert "HTTP 500" in sr.failures[0].message and "after 2 attempts" in sr.failures[0].message
    assert any("1 question(s) failed" in n and "'q3'" in n for n in sr.notes)
    Handler.mode = "ok"  # failures are not memoised: the next run retries only q3
    n = len(Handler.calls)
    sr = system.rank(GOLDEN.questions(), 10)
    assert sr.ok and len(Handler.calls) == n + 1


def test_slow_server_times_out(server):
    Handler.mode = "slow"
    sr = _system(server, timeout=0.2, retries=0).rank({"q1": "refund window"}, 3)
    msg = sr.failures[0].message
    assert "timed out after 0.2 s" in msg and "raise the timeout" in msg


def test_wrong_json_and_missing_fields(server):
    Handler.mode = "html"
    sr = _system(server).rank({"q1": "refund window"}, 3)
    assert "response is not JSON (starts with '<html>oops</html>')" in sr.failures[0].message
    Handler.mode = "missing"
    sr = _system(server).rank({"q1": "refund window"}, 3)
    assert "result 1 has no 'id' field (keys: 'score')" in sr.failures[0].message
    Handler.mode = "nested"
    sr = _system(server).rank({"q1": "refund window"}, 3)
    assert "expected a JSON list of results, got dict" in sr.failures[0].message
    assert "'data'" in sr.failures[0].message
    sr = _system(server, results_path="data.items").rank({"q1": "refund window"}, 3)
    assert "no 'items' in the response (found 'hits')" in sr.failures[0].message


def test_server_down_fails_fast_and_names_the_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/search"
    system = _system(url, retries=1, concurrency=1)
    questions = {f"q{i}": f"question {i}" for i in range(10)}
    sr = system.rank(questions, 5)
    assert len(sr.failures) == 10 and len(sr.run) == 0
    assert f"{url}: connection refused" in sr.failures[0].message and "is the server running" in sr.failures[0].message
    assert sr.failures[-1].message.startswith("not sent:")
    with pytest.raises(InputError, match="connection refused"):
        system.test("one question")


def test_config_validation():
    with pytest.raises(InputError, match="must start with http"):
        HttpConfig("ftp://x")
    with pytest.raises(InputError, match="timeout must be a number of seconds above 0"):
        HttpConfig("http://x", timeout=0)
    with pytest.raises(InputError, match="concurrency must be a whole number >= 1"):
        HttpConfig("http://x", concurrency=0)
    with pytest.raises(InputError, match="not a dotted path"):
        HttpConfig("http://x", results_path="a..b")
    with pytest.raises(InputError, match="has no ':'"):
        parse_header("Authorization Bearer x")
    assert parse_header("X-Key:  ${K} ") == ("X-Key", "${K}")


def test_http_system_helper_fingerprint_has_no_secret(server, monkeypatch):
    monkeypatch.setenv("TOK", "zzz-secret")
    system = http_system(HttpConfig(server, headers=(("X-Api-Key", "${TOK}"),)), name="prod")
    a = system.fingerprint
    assert system.name == "prod"
    assert a == http_system(HttpConfig(server, headers=(("X-Api-Key", "${TOK}"),))).fingerprint
    assert a != http_system(HttpConfig(server, results_path="x")).fingerprint


def test_hanging_server_fails_fast_after_three_timeouts(server):
    Handler.mode = "slow"
    questions = {f"q{i}": f"slow question {i}" for i in range(6)}
    sr = _system(server, timeout=0.2, retries=0, concurrency=1).rank(questions, 3)
    assert len(sr.failures) == 6
    assert [f.message.startswith("not sent:") for f in sr.failures] == [False] * 3 + [True] * 3
    assert len(Handler.calls) == 3
