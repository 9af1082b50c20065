"""The LLM judge against hostile or broken OpenAI-compatible servers on loopback: replies that are not
completion objects, HTML, strings for embeddings, huge or trickling replies, redirects.  Every one
is a per-item status; the run is never aborted, the other items are scored, nothing oversized is
cached, and no redirect is followed."""
from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from answers_server import JudgeServer, Scenario
from loopback import serve_in_thread

from rag_metrics.answers.llm import MAX_REPLY_CHARS, JudgeConfig, LLMJudge
from rag_metrics.answers.llm_cache import JudgeCache
from rag_metrics.answers.types import STATUSES, AnswerItem
from rag_metrics.config import parse_server_config
from rag_metrics.server.access import Caller
from rag_metrics.server.outbound import OutboundPolicy

CTX = ("The Free plan includes 2 GB of storage.",)
GOOD = AnswerItem("good", "How much storage does Free have?", "The Free plan includes 2 GB of storage.", CTX)


def _completion(content):
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}


def _statements(prompt: str) -> str:
    data = json.loads(prompt.rsplit("input: ", 1)[1].rsplit("\nOutput: ", 1)[0])
    if prompt.startswith("Given a question and an answer"):
        return json.dumps({"statements": [data["answer"]]})
    if prompt.startswith("Your task is to judge the faithfulness"):
        return json.dumps({"statements": [{"statement": s, "reason": "r", "verdict": 1} for s in data["statements"]]})
    return json.dumps({"question": "What is this?", "noncommittal": 0})


class Hostile(BaseHTTPRequestHandler):
    """Chat replies chosen by the answer's first word (``BAD:<mode>``); embeddings by ``embed_mode``."""

    embed_mode = "ok"
    target = ""

    def log_message(self, *a):
        pass

    def _raw(self, code, body: bytes, ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path.endswith("/embeddings"):
            return self._embeddings(req)
        prompt = req["messages"][0]["content"]
        mode = next((m for m in MODES if f"BAD:{m}" in prompt), "ok")
        if mode == "list":
            return self._raw(200, b'[{"choices": "no"}]')
        if mode == "html":
            return self._raw(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
        if mode == "string":
            return self._raw(200, b'"just a string"')
        if mode == "nochoices":
            return self._raw(200, json.dumps({"id": "x", "object": "chat.completion", "choices": []}).encode())
        if mode == "numbercontent":
            return self._raw(200, json.dumps(_completion(12345)).encode())
        if mode == "hugecontent":
            return self._raw(200, json.dumps(_completion("x" * (MAX_REPLY_CHARS + 10))).encode())
        if mode == "hugebody":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(200 * 1024 * 1024))
            self.end_headers()
            return None
        if mode == "trickle":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(60):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass
            return None
        if mode == "redirect":
            return self._raw(307, b"", extra=[("Location", Hostile.target)])
        if mode == "malformed":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n{}")
            self.close_connection = True
            return None
        return self._raw(200, json.dumps(_completion(_statements(prompt))).encode())

    def _embeddings(self, req):
        n = len(req["input"])
        mode = Hostile.embed_mode
        if mode == "strings":
            data = [{"object": "embedding", "index": i, "embedding": "not-base64!!"} for i in range(n)]
        elif mode == "words":
            data = [{"object": "embedding", "index": i, "embedding": ["a", "b"]} for i in range(n)]
        elif mode == "nan":
            data = [{"object": "embedding", "index": i, "embedding": [1.0, float("nan")]} for i in range(n)]
        elif mode == "ragged":
            data = [{"object": "embedding", "index": i, "embedding": [1.0] * (i + 1)} for i in range(n)]
        elif mode == "missing":
            return self._raw(200, json.dumps({"object": "list"}).encode())
        elif mode == "list":
            return self._raw(200, b"[1, 2, 3]")
        elif mode == "short":
            data = [{"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}]
        else:
            data = [{"object": "embedding", "index": i, "embedding": [1.0, float(i)]} for i in range(n)]
        self._raw(200, json.dumps({"object": "list", "data": data, "model": "e"}).encode())


MODES = ["list", "html", "string", "nochoices", "numbercontent", "hugecontent", "hugebody", "trickle", "redirect",
         "malformed"]


@pytest.fixture
def hostile():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    srv.daemon_threads = True
    serve_in_thread(srv)
    Hostile.embed_mode = "ok"
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()


def _judge(url, cache=None, policy=None, **kw):
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 1.5)
    cfg = JudgeConfig(url, "m", kw.pop("embed_model", None), **kw)
    return LLMJudge(cfg, cache=cache if cache is not None else JudgeCache(None), policy=policy)


@pytest.mark.serial  # measures time: runs alone (tests/tiers.py)
@pytest.mark.parametrize("mode,status", [
    ("list", "invalid_json"), ("html", "invalid_json"), ("string", "invalid_json"), ("nochoices", "invalid_json"),
    ("numbercontent", "invalid_json"), ("hugecontent", "invalid_json"), ("hugebody", "unreachable"),
    ("trickle", "timeout"), ("redirect", "http_error"), ("malformed", "unreachable"),
])
def test_each_broken_reply_is_a_per_item_status_and_the_rest_is_scored(hostile, mode, status):
    bad = AnswerItem("bad", "q?", f"BAD:{mode} this answer.", CTX)
    cache = JudgeCache(None)
    t0 = time.monotonic()
    results = _judge(hostile, cache).judge([GOOD, bad, GOOD.__class__("good2", GOOD.question, GOOD.answer, CTX)])
    assert time.monotonic() - t0 < 10
    by_id = {r.item_id: r.scores["faithfulness"] for r in results}
    assert by_id["good"].ok and by_id["good"].value == 1.0 and by_id["good2"].ok
    assert by_id["bad"].status == status and status in STATUSES, by_id["bad"].message
    assert "Traceback" not in by_id["bad"].message
    if mode == "hugecontent":
        assert "over the 65,536" in by_id["bad"].message
        blobs = [json.dumps(cache.get(k)) for k in _keys(cache)]
        assert all(len(b) < MAX_REPLY_CHARS for b in blobs)  # the oversized reply is not cached
    if mode == "redirect":
        assert "redirects are not followed" in by_id["bad"].message
    if mode == "trickle":
        assert "no reply within 1.5 s" in by_id["bad"].message


def _keys(cache):
    with cache._lock:
        return [r[0] for r in cache._db.execute("SELECT key FROM calls").fetchall()]


def test_a_redirect_of_the_judge_goes_nowhere(hostile):
    with JudgeServer(Scenario()) as target:
        Hostile.target = target.base_url + "/chat/completions"
        bad = AnswerItem("bad", "q?", "BAD:redirect now.", CTX)
        [res] = _judge(hostile, api_key_env="RAG_METRICS_JUDGE_KEY").judge([bad])
        assert res.scores["faithfulness"].status == "http_error"
        assert target.requests == []


@pytest.mark.parametrize("mode", ["strings", "words", "nan", "ragged", "missing", "list", "short"])
def test_broken_embeddings_are_per_item_statuses(hostile, mode):
    Hostile.embed_mode = mode
    items = [GOOD, AnswerItem("b", "Which plan?", "Plus costs $6.", CTX)]
    results = _judge(hostile, embed_model="e", n_questions=1).judge(items)
    for r in results:
        assert r.scores["faithfulness"].ok  # the chat calls still score
        ar = r.scores["answer_relevancy"]
        assert not ar.ok and ar.status == "invalid_json", (mode, ar.status, ar.message)


def test_class_mode_hides_the_judges_error_body(hostile):
    class Leaky(Hostile):
        def do_POST(self):
            self._raw(404, b'{"error": {"message": "SECRET-INTERNAL-DETAIL /etc/passwd"}}')

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Leaky)
    serve_in_thread(srv)
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
        cfg = parse_server_config({"lab": {"allow": [f"127.0.0.1:{srv.server_address[1]}"]}})
        student = OutboundPolicy.for_caller(Caller("student", space="s"), cfg)
        [res] = _judge(url, policy=student).judge([GOOD])
        assert res.scores["faithfulness"].status == "http_error"
        assert "HTTP 404" in res.scores["faithfulness"].message
        assert "SECRET" not in res.scores["faithfulness"].message
        [res] = _judge(url).judge([GOOD])  # the operator sees what the server said
        assert "SECRET-INTERNAL-DETAIL" in res.scores["faithfulness"].message
    finally:
        srv.shutdown()
        srv.server_close()
