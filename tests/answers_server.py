"""A real OpenAI-compatible HTTP server on 127.0.0.1 with canned, deterministic replies (tests only).

``POST /v1/chat/completions`` recognises the three ragas prompts by their instruction, reads the
prompt's ``input: {...}`` JSON and replies from :class:`Scenario`; ``POST /v1/embeddings`` returns
a vector derived from the SHA-256 of each text.  The same request always gets the same reply, so
ragas and our judge see the same model.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from loopback import POLL_S
from typing_extensions import Self

DIM = 16


def embedding(text: str) -> list[float]:
    h = hashlib.sha256(text.encode("utf-8")).digest()
    return [(b - 127.5) / 127.5 for b in h[:DIM]]


def sentences(answer: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", answer.strip()) if s]


@dataclass
class Scenario:
    """Canned model behaviour.

    statements: answer -> statements (default: the answer's sentences).
    unsupported: statements that get verdict 0 (others 1).
    noncommittal: answers whose generated questions are flagged noncommittal.
    faults: substring of the prompt -> "invalid_json" | "refusal" | "slow" | "http500" | "empty".
    """

    statements: dict[str, list[str]] = field(default_factory=dict)
    unsupported: set[str] = field(default_factory=set)
    noncommittal: set[str] = field(default_factory=set)
    faults: dict[str, str] = field(default_factory=dict)
    slow_seconds: float = 3.0
    latency: float = 0.0  # seconds added to every chat reply (benchmarks: a model's think time)


class _Handler(BaseHTTPRequestHandler):
    server: JudgeServer  # type: ignore[assignment]  # always our JudgeServer (narrower than the base)

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, code: int, obj: dict) -> None:
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
            srv.requests.append((self.path, req))
        if self.path.endswith("/embeddings"):
            inputs = req["input"] if isinstance(req["input"], list) else [req["input"]]
            self._send(200, {"object": "list", "model": req.get("model", ""),
                             "data": [{"object": "embedding", "index": i, "embedding": embedding(t)}
                                      for i, t in enumerate(inputs)],
                             "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}})
            return
        if not self.path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        user = next(m for m in req["messages"] if m["role"] == "user")["content"]
        sc = srv.scenario
        fault = next((f for s, f in sc.faults.items() if s in user), None)
        if fault == "slow":
            time.sleep(sc.slow_seconds)
        if sc.latency:
            time.sleep(sc.latency)
        if fault == "http500":
            self._send(500, {"error": {"message": "boom", "type": "server_error"}})
            return
        content, refusal, finish = self._reply(user), None, "stop"
        if fault == "invalid_json":
            content = "Sure! Here are the statements: statement one, statement two."
        elif fault == "refusal":
            content, refusal = "", "I can't help with that."
        elif fault == "empty":
            content = json.dumps({"statements": []})
        self._send(200, {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": req.get("model", ""),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": refusal},
                         "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": len(user) // 4, "completion_tokens": len(content) // 4,
                      "total_tokens": len(user) // 4 + len(content) // 4}})

    def _reply(self, prompt: str) -> str:
        sc = self.server.scenario
        data = json.loads(prompt.rsplit("input: ", 1)[1].rsplit("\nOutput: ", 1)[0])
        if prompt.startswith("Given a question and an answer"):
            return json.dumps({"statements": sc.statements.get(data["answer"], sentences(data["answer"]))})
        if prompt.startswith("Your task is to judge the faithfulness"):
            return json.dumps({"statements": [
                {"statement": s, "reason": "canned", "verdict": 0 if s in sc.unsupported else 1}
                for s in data["statements"]]})
        if prompt.startswith("Generate a question for the given answer"):
            r = data["response"]
            return json.dumps({"question": f"What does this say: {r[:60]}?",
                               "noncommittal": int(r in sc.noncommittal)})
        return json.dumps({"error": "unknown prompt"})


class JudgeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, scenario: Scenario | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.scenario = scenario or Scenario()
        self.lock = threading.Lock()
        self.requests: list[tuple[str, dict]] = []
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()

    def chat_requests(self) -> int:
        with self.lock:
            return sum(1 for p, _ in self.requests if p.endswith("/chat/completions"))
