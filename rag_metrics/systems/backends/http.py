"""HTTP search endpoint adapter.

Contract
--------
Request: ``POST <url>`` with JSON body ``{"query": "<question text>", "k": <int>}`` and the
configured headers (``Content-Type: application/json`` is always sent).

Response: a JSON list of result objects ``{"id": str|int, "score": number, "text"?: str}``, best
first, or a JSON object holding that list at ``results_path`` (dotted, e.g. ``data.hits``).
``score`` may be left out of *every* result; the list order is then kept exactly (scores
``n - rank``).  Ties in ``score`` are ranked like trec_eval (id descending), as everywhere.

Faults: connection errors, timeouts, HTTP 429 and 5xx are retried ``retries`` times with
exponential backoff (``backoff * 2**attempt`` seconds); other 4xx are not retried (the request
or the settings are wrong).  Each failure becomes a per-question
:class:`~rag_metrics.systems.base.BackendError` naming the question, the setting and the fix;
after three questions in a row fail to connect or time out, the rest fail at once with the same
message (no minutes of retries against a server that is down or hanging).
"""
from __future__ import annotations

import json
import math
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.files import loads_json
from rag_metrics.systems.base import BackendError, LiveSystem, ResultMemo
from rag_metrics.systems.secrets import has_literal_secret, resolve

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
        Seconds per request (connect + read).
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
        for n, _ in hdrs:
            if not n or any(c.isspace() or c == ":" for c in n):
                raise InputError(f"header name {n!r} is empty or has spaces or ':'; e.g. 'Authorization'")
        if self.results_path is not None:
            rp = str(self.results_path).strip()
            if not rp or any(not p for p in rp.split(".")):
                raise InputError(f"results path {self.results_path!r} is not a dotted path like 'data.hits'")
            object.__setattr__(self, "results_path", rp)
        for name, low, kind in (("timeout", 0.0, float), ("backoff", 0.0, float)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) or not v >= low:
                raise InputError(f"{name} must be a number >= {low:g} seconds, got {v!r}")
            object.__setattr__(self, name, kind(v))
        if self.timeout <= 0:
            raise InputError(f"timeout must be > 0 seconds, got {self.timeout!r}; e.g. 10")
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

    @property
    def public_config(self) -> Mapping[str, Any]:
        return self.config.public()

    def _request(self, question: str, k: int) -> bytes:
        cfg = self.config
        url = resolve(cfg.url, "url", self._env)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        for n, v in cfg.headers:
            headers[n] = resolve(v, f"header {n!r}", self._env)
        body = json.dumps({"query": question, "k": int(k)}).encode("utf-8")
        req = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=cfg.timeout) as resp:
                data = resp.read(_MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as e:
            detail = ""
            try:
                detail = e.read(300).decode("utf-8", "replace").strip().replace("\n", " ")
            except OSError:
                pass
            detail = f" ({detail[:200]})" if detail else ""
            if e.code == 429 or e.code >= 500:
                raise _Retryable(f"HTTP {e.code} from {cfg.url}{detail}") from None
            fix = {401: "check the Authorization header and its ${VAR}",
                   403: "check the credentials in the headers",
                   404: "check the url path",
                   405: "the endpoint must accept POST",
                   400: "the endpoint must accept the body {\"query\": ..., \"k\": ...}",
                   422: "the endpoint must accept the body {\"query\": ..., \"k\": ...}",
                   }.get(e.code, "check the url and headers")
            raise BackendError(f"HTTP {e.code} from {cfg.url}{detail}; {fix}") from None
        except TimeoutError:
            raise _Retryable(f"no answer from {cfg.url} within the timeout of {cfg.timeout:g} s; raise the timeout "
                             "or check the server's load", unreachable=True) from None
        except urllib.error.URLError as e:
            reason = e.reason
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                raise _Retryable(f"no answer from {cfg.url} within the timeout of {cfg.timeout:g} s; raise the "
                                 "timeout or check the server's load", unreachable=True) from None
            raise _Retryable(f"cannot connect to {cfg.url} ({getattr(reason, 'strerror', None) or reason}); is the "
                             "server running? check the url", unreachable=True) from None
        except (ConnectionError, OSError) as e:
            raise _Retryable(f"connection to {cfg.url} failed ({e}); is the server running? check the url",
                             unreachable=True) from None
        if len(data) > _MAX_RESPONSE_BYTES:
            raise BackendError(f"response from {cfg.url} is larger than {_MAX_RESPONSE_BYTES:,} bytes; lower k")
        return data

    def _parse(self, data: bytes) -> list[tuple[str, float]]:
        cfg = self.config
        try:
            doc, msg, _ = loads_json(data.decode("utf-8-sig"))
        except UnicodeDecodeError:
            msg = "not UTF-8"
        if msg is not None:
            start = data[:60].decode("utf-8", "replace")
            raise BackendError(f"response is not JSON (starts with {start!r}); the endpoint must answer a JSON list "
                               f"of {{\"{cfg.id_field}\", \"{cfg.score_field}\"}} objects") from None
        items: Any = doc
        if cfg.results_path:
            for part in cfg.results_path.split("."):
                if isinstance(items, Mapping) and part in items:
                    items = items[part]
                elif isinstance(items, list) and part.isdigit() and int(part) < len(items):
                    items = items[int(part)]
                else:
                    keys = ", ".join(map(repr, list(items)[:8])) if isinstance(items, Mapping) else type(items).__name__
                    raise BackendError(f"results path {cfg.results_path!r}: no {part!r} in the response (found "
                                       f"{keys}); set the results path to where the list is")
        if not isinstance(items, list):
            hint = (f"; the list may be under one of {', '.join(map(repr, list(items)[:8]))}: set the results path"
                    if isinstance(items, Mapping) else "")
            raise BackendError(f"expected a JSON list of results, got {type(items).__name__}{hint}")
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
                                   f"{', '.join(map(repr, list(it)[:8]))}); each result needs an id (set the id field "
                                   "if it has another name)")
            s: Any = it[cfg.score_field] if with_score[r] else float(n - r)
            if isinstance(s, bool) or not isinstance(s, (int, float)) or math.isnan(s):
                raise BackendError(f"result {r + 1}: score {s!r} is not a number")
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
            return self._parse(data)
        tries = f" after {cfg.retries + 1} attempts" if cfg.retries else ""
        raise BackendError(f"{last}{tries}")

    def close(self) -> None:
        return None


def http_system(config: HttpConfig, name: str = "http", memo: ResultMemo | None = None,
                env: Mapping[str, str] | None = None) -> LiveSystem:
    """A live :class:`~rag_metrics.systems.base.System` over an HTTP endpoint."""
    return LiveSystem(name, HttpBackend(config, env), memo)

