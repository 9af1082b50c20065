"""HTTP search endpoint adapter.

Contract
--------
Request: ``POST <url>`` with JSON body ``{"query": "<question text>", "k": <int>}`` and the
configured headers (``Content-Type: application/json`` is always sent).

Response: a JSON list of result objects ``{"id": str|int, "score": number, "text"?: str}``, best
first, or a JSON object holding that list at ``results_path`` (dotted, e.g. ``data.hits``).
``score`` may be left out of *every* result; the list order is then kept exactly (scores
``n - rank``).  Ties in ``score`` are ranked like trec_eval (id descending), as everywhere.

Transport: :func:`rag_metrics.server.outbound.post_json` under the session's outbound policy (the ``env``
argument, a :class:`~rag_metrics.server.connections.ServerEnv` in the app): the checked address is the one
connected to, each attempt has a total deadline of ``timeout`` seconds, the response is capped at
32 MB, no redirect is followed, and in class mode no message quotes the response.

Faults: connection errors, timeouts, HTTP 429 and 5xx are retried ``retries`` times with
exponential backoff (``backoff * 2**attempt`` seconds); other 4xx are not retried (the request
or the settings are wrong).  Each failure becomes a per-question
:class:`~rag_metrics.systems.base.BackendError` naming the question, the setting and the fix;
after three questions in a row fail to connect or time out, the rest fail at once with the same
message (no minutes of retries against a server that is down or hanging).
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.io.files import loads_json
from rag_metrics.server.secrets import has_literal_secret, resolve
from rag_metrics.systems.base import BackendError, LiveSystem, ResultMemo

__all__ = ["HttpBackend", "HttpConfig", "http_system", "parse_header"]

_UNREACHABLE_AFTER = 3  # consecutive connection failures before the rest fail fast
_MAX_RESPONSE_BYTES = 32 * 1024 * 1024


def parse_header(text: str) -> tuple[str, str]:
    """``"Name: value"`` -> ``("Name", "value")``; InputError with the fix otherwise."""
    if ":" not in text:
        raise InputError(f"header {text!r} has no ':'; write it as 'Name: value', e.g. "
                         "'Authorization: Bearer ${MY_TOKEN}'")
    name, value = text.split(":", 1)
    name = name.strip()
    if not name or any(c.isspace() for c in name):
        raise InputError(f"header name {name!r} in {text!r} is empty or has spaces; write 'Name: value'")
    return name, value.strip()


@dataclass(frozen=True)
class HttpConfig:
    """Settings of an HTTP search endpoint (validated on creation; holds no resolved secret).

    Attributes
    ----------
    url
        ``http://`` or ``https://`` URL; may hold ``${VAR}`` references.
    headers
        ``(name, value)`` pairs; values may hold ``${VAR}`` references, resolved per request.
    results_path
        Dotted path to the result list inside a JSON object response (``None``: the response is
        the list).
    timeout
        Seconds per attempt, in total (connect, send, every read); at most 120.
    concurrency
        Requests in flight at once.
    retries
        Extra attempts after a failed one (connection error, timeout, 429, 5xx).
    backoff
        Seconds before the first retry; doubled for each further one.
    id_field, score_field, text_field
        Field names inside each result object.
    """

    url: str
    headers: tuple[tuple[str, str], ...] = ()
    results_path: str | None = None
    timeout: float = 10.0
    concurrency: int = 4
    retries: int = 2
    backoff: float = 0.5
    id_field: str = "id"
    score_field: str = "score"
    text_field: str = "text"

    def __post_init__(self) -> None:
        url = str(self.url).strip()
        object.__setattr__(self, "url", url)
        if not url.startswith(("http://", "https://", "${")):
            raise InputError(f"url {url!r} must start with http:// or https://, e.g. http://127.0.0.1:8000/search")
        hdrs = tuple((str(n), str(v)) for n, v in (self.headers.items() if isinstance(self.headers, Mapping)
                                                     else self.headers))
        object.__setattr__(self, "headers", hdrs)
        for n, v in hdrs:
            if not n or any(c.isspace() or c == ":" or ord(c) < 32 for c in n):
                raise InputError(f"header name {n!r} is empty or has spaces or ':'; e.g. 'Authorization'")
            if any(c in v for c in "\r\n\x00"):
                raise InputError(f"header {n!r} holds a line break; a header value is one line")
        if any(c.isspace() or ord(c) < 32 for c in url):
            raise InputError("url holds spaces or control characters; percent-encode them (%20)")
        if self.results_path is not None:
            rp = str(self.results_path).strip()
            if not rp or any(not p for p in rp.split(".")):
                raise InputError(f"results path {self.results_path!r} is not a dotted path like 'data.hits'")
            object.__setattr__(self, "results_path", rp)
        from rag_metrics.server.outbound import check_timeout

        object.__setattr__(self, "timeout", check_timeout(self.timeout, "timeout"))
        b = self.backoff
        if isinstance(b, bool) or not isinstance(b, (int, float)) or math.isnan(b) or not 0 <= b <= 60:
            raise InputError(f"backoff must be a number of seconds from 0 to 60, got {b!r}")
        object.__setattr__(self, "backoff", float(b))
        for name, low in (("concurrency", 1), ("retries", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise InputError(f"{name} must be a whole number >= {low}, got {v!r}")
        if self.concurrency > 64:
            raise InputError(f"concurrency {self.concurrency} is more than 64 requests at once; lower it")
        for name in ("id_field", "score_field", "text_field"):
            if not str(getattr(self, name)).strip():
                raise InputError(f"{name} must name a field of the result objects, got {getattr(self, name)!r}")

    def public(self) -> dict[str, Any]:
        """The settings as written (``${VAR}`` references, never resolved values); literal values of
        sensitive headers are masked."""
        return {"url": self.url,
                "headers": [[n, "***" if has_literal_secret(n, v) else v] for n, v in self.headers],
                "results_path": self.results_path, "timeout": self.timeout, "concurrency": self.concurrency,
                "retries": self.retries, "backoff": self.backoff, "id_field": self.id_field,
                "score_field": self.score_field, "text_field": self.text_field}

    def literal_secrets(self) -> list[str]:
        """Names of sensitive headers written with a literal value (not storable)."""
        return [n for n, v in self.headers if has_literal_secret(n, v)]


class _Retryable(Exception):
    def __init__(self, message: str, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


class HttpBackend:
    """Sends questions to an HTTP endpoint (see the module docstring for the contract)."""

    def __init__(self, config: HttpConfig, env: Mapping[str, str] | None = None,
                 sleep: Any = time.sleep) -> None:
        self.config = config
        self.concurrency = config.concurrency
        self._env = env
        self._sleep = sleep
        self._lock = threading.Lock()
        self._down_in_a_row = 0
        self._down_message = ""
        #: How messages name the endpoint (a named connection's URL may carry a secret).
        self.label: str | None = None
        self.named: str | None = None

    @property
    def public_config(self) -> Mapping[str, Any]:
        if self.named is not None:  # fingerprint of a named connection: its name and the shape of its settings
            from rag_metrics.systems.base import fingerprint

            return {**self.config.public(), "url": f"connection:{self.named}:{fingerprint(self.config.url)}",
                    "headers": [n for n, _ in self.config.headers]}
        return self.config.public()

    def _request(self, question: str, k: int) -> bytes:
        from rag_metrics.server.connections import policy_of
        from rag_metrics.server.outbound import OutboundError, post_json

        cfg = self.config
        url = resolve(cfg.url, "url", self._env)
        headers = {}
        for n, v in cfg.headers:
            headers[n] = resolve(v, f"header {n!r}", self._env)
        where = self.label or cfg.url
        try:
            return post_json(url, {"query": question, "k": int(k)}, headers, policy=policy_of(self._env),
                             timeout=cfg.timeout, max_bytes=_MAX_RESPONSE_BYTES)
        except OutboundError as e:
            msg = f"{e.message} from {where}" if e.kind in ("http", "redirect") else f"{where}: {e.message}"
            if e.kind == "http" and e.status is not None and not e.retryable:
                fix = {401: "check the Authorization header and its credentials",
                       403: "check the credentials in the headers",
                       404: "check the url path",
                       405: "the endpoint must accept POST",
                       400: "the endpoint must accept the body {\"query\": ..., \"k\": ...}",
                       422: "the endpoint must accept the body {\"query\": ..., \"k\": ...}",
                       }.get(e.status, "check the url and headers")
                raise BackendError(f"{msg}; {fix}") from None
            if e.kind == "redirect":
                raise BackendError(f"{msg}; give the final URL of the endpoint") from None
            if e.kind in ("denied", "malformed", "too_large", "tls"):
                hint = {"too_large": "; lower k", "malformed": "; the endpoint must answer HTTP/1.1 with a JSON body",
                        "denied": "; the operator lists allowed hosts in lab.allow",
                        "tls": "; check the certificate of the server"}[e.kind]
                raise BackendError(msg + hint) from None
            if e.kind == "timeout":
                msg += "; raise the timeout or check the server's load"
            elif e.down:
                msg += "; is the server running? check the url"
            raise _Retryable(msg, unreachable=e.down) from None

    def _parse(self, data: bytes, k: int | None = None) -> list[tuple[str, float]]:
        """The ranking in a response body, cut to ``k``.  In class mode messages never quote the
        response (its start, its field names): a reply is not a way to read a host."""
        from rag_metrics.server.connections import policy_of

        cfg = self.config
        echo = policy_of(self._env).echo_bodies

        def keys_of(obj: Any) -> str:
            return ", ".join(map(repr, list(obj)[:8])) if echo else "not shown in class mode"
        try:
            doc, msg, _ = loads_json(data.decode("utf-8-sig"))
        except UnicodeDecodeError:
            msg = "not UTF-8"
        if msg is not None:
            start = f" (starts with {data[:60].decode('utf-8', 'replace')!r})" if echo else ""
            raise BackendError(f"response is not JSON{start}; the endpoint must answer a JSON list "
                               f"of {{\"{cfg.id_field}\", \"{cfg.score_field}\"}} objects") from None
        items: Any = doc
        if cfg.results_path:
            for part in cfg.results_path.split("."):
                if isinstance(items, Mapping) and part in items:
                    items = items[part]
                elif isinstance(items, list) and part.isdigit() and int(part) < len(items):
                    items = items[int(part)]
                else:
                    keys = keys_of(items) if isinstance(items, Mapping) else type(items).__name__
                    raise BackendError(f"results path {cfg.results_path!r}: no {part!r} in the response (found "
                                       f"{keys}); set the results path to where the list is")
        if not isinstance(items, list):
            hint = (f"; the list may be under one of {keys_of(items)}: set the results path"
                    if isinstance(items, Mapping) else "")
            raise BackendError(f"expected a JSON list of results, got {type(items).__name__}{hint}")
        if k is not None:
            items = items[:max(0, int(k))]
        n = len(items)
        with_score = [isinstance(it, Mapping) and cfg.score_field in it for it in items]
        if any(with_score) and not all(with_score):
            miss = with_score.index(False) + 1
            raise BackendError(f"result {miss} has no {cfg.score_field!r} field but others do; give every result a "
                               "score (or none: the order is then kept)")
        out: list[tuple[str, float]] = []
        for r, it in enumerate(items):
            if not isinstance(it, Mapping):
                raise BackendError(f"result {r + 1} is {type(it).__name__}, not an object "
                                   f"{{\"{cfg.id_field}\": ..., \"{cfg.score_field}\": ...}}")
            if cfg.id_field not in it or it[cfg.id_field] is None or isinstance(it[cfg.id_field], (list, dict)):
                raise BackendError(f"result {r + 1} has no {cfg.id_field!r} field (keys: "
                                   f"{keys_of(it)}); each result needs an id (set the id field "
                                   "if it has another name)")
            s: Any = it[cfg.score_field] if with_score[r] else float(n - r)
            if isinstance(s, bool) or not isinstance(s, (int, float)) or math.isnan(s):
                shown = repr(s)[:40] if echo else type(s).__name__
                raise BackendError(f"result {r + 1}: score {shown} is not a number")
            out.append((str(it[cfg.id_field]), float(s)))
        return out

    def search(self, question: str, k: int) -> list[tuple[str, float]]:
        cfg = self.config
        with self._lock:
            if self._down_in_a_row >= _UNREACHABLE_AFTER:
                raise BackendError(f"not sent: {self._down_message} (the last {_UNREACHABLE_AFTER} questions could "
                                   "not connect or timed out)")
        last = ""
        for attempt in range(cfg.retries + 1):
            if attempt:
                self._sleep(cfg.backoff * 2 ** (attempt - 1))
            try:
                data = self._request(question, k)
            except _Retryable as e:
                last = str(e)
                if e.unreachable:
                    with self._lock:
                        self._down_in_a_row += 1
                        self._down_message = last
                        if self._down_in_a_row >= _UNREACHABLE_AFTER:
                            break
                continue
            with self._lock:
                self._down_in_a_row = 0
            return self._parse(data, k)
        tries = f" after {cfg.retries + 1} attempts" if cfg.retries else ""
        raise BackendError(f"{last}{tries}")

    def close(self) -> None:
        return None


def http_system(config: HttpConfig, name: str = "http", memo: ResultMemo | None = None,
                env: Mapping[str, str] | None = None) -> LiveSystem:
    """A live :class:`~rag_metrics.systems.base.System` over an HTTP endpoint."""
    return LiveSystem(name, HttpBackend(config, env), memo)

