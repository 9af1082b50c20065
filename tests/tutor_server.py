"""A scripted OpenAI-compatible chat server on 127.0.0.1 that streams (tests of the tutor only).

``POST /v1/chat/completions`` answers with the first :attr:`TutorServer.script` reply whose key occurs in the
request's last user message (else :attr:`TutorServer.default`), streamed as Server-Sent Events word by word
when the request asks ``stream: true`` (with a last chunk carrying ``usage``), else as one JSON reply.  A
reply may hold ``{passage}``: replaced by the first passage id the request's messages quote in square brackets
(``[lesson.retrieval.step.hit_rate]``), so a scripted reply cites a passage the tutor really sent.  Every
request is kept (:attr:`requests`) for the test to read what the tutor sent.
"""
from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from loopback import serve_in_thread
from typing_extensions import Self

_ID = re.compile(r"\[((?:lesson|exercise|doc)\.[^\]\s]+)\]")


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


class _Handler(BaseHTTPRequestHandler):
    server: TutorServer  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _json(self, code: int, obj: dict) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n) or b"{}")
        srv = self.server
        with srv.lock:
            srv.requests.append(req)
        if not self.path.endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        messages = req.get("messages", [])
        user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
        reply = next((r for key, r in srv.script.items() if key in str(user)), srv.default)
        everything = "\n".join(str(m.get("content", "")) for m in messages)
        cited = _ID.search(everything)
        reply = reply.replace("{passage}", cited.group(1) if cited else "")
        prompt_tokens, completion_tokens = len(everything) // 4, max(1, len(reply) // 4)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        model = req.get("model", "")
        if not req.get("stream"):
            self._json(200, {"id": "chatcmpl-tutor", "object": "chat.completion", "created": 0, "model": model,
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                          "finish_reason": "stop", "logprobs": None}], "usage": usage})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def send(obj: object) -> None:
            self.wfile.write(b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n")
            self.wfile.flush()

        base = {"id": "chatcmpl-tutor", "object": "chat.completion.chunk", "created": 0, "model": model}
        send({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
        for word in _words(reply):
            send({**base, "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]})
        send({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (req.get("stream_options") or {}).get("include_usage"):
            send({**base, "choices": [], "usage": usage})
        send(b"[DONE]")
        self.close_connection = True


class TutorServer(ThreadingHTTPServer):
    """The scripted model: ``script`` maps a piece of the student's question to the reply."""

    daemon_threads = True

    def __init__(self, script: dict[str, str] | None = None, default: str = "I cannot help with that.") -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = dict(script or {})
        self.default = default
        self.lock = threading.Lock()
        self.requests: list[dict] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> Self:
        serve_in_thread(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
