"""Where the server may connect, and one careful way to send a request there.

Over 500 lines: every rule about where the server may connect (hosts, resolved addresses, redirects,
sizes) is kept in one place on purpose.

:class:`OutboundPolicy` decides every outbound connection of the lab (HTTP backends, Qdrant,
PostgreSQL, the LLM judge):

- **single user** (the operator, :attr:`rag_metrics.server.access.Caller.any_host`): every host;
- **class mode**: only the operator's allowlist (``lab.allow``, ``"host:port"`` entries) and the
  destinations the operator declared (named connections and the judge).  Checked on the
  **resolved** addresses (``getaddrinfo``), every one of them: a name that resolves to a
  loopback, link-local, private, multicast or unspecified address is refused unless that
  address (or the name itself) is listed.

Allowlist entries (``lab.allow``)
    ``host:port``   ``host`` a name (``search.internal``), an IP (``10.0.0.7``, ``[fd00::7]``) or a
    CIDR (``10.0.0.0/24``, ``[fd00::/64]``); ``port`` a number or ``*``.  ``*:443`` allows any
    *public* address on port 443.  A listed name allows what it resolves to, except link-local,
    multicast and unspecified addresses (cloud metadata services live there): those must be listed
    as an IP or CIDR.  A name is reached only when it is listed by name (or ``*``): an IP entry is
    matched by addresses written as addresses, and a name that is not listed is refused before
    any DNS lookup.

:func:`request` sends one HTTP request the careful way: it connects to the address the policy
checked (no second DNS lookup, so a name cannot rebind to another address in between; TLS still
verifies the certificate for the name), follows no redirect, stops at a **total** deadline (a
server trickling one byte at a time is cut at the deadline, not after each read), caps the
response size, and turns every failure into an :class:`OutboundError` whose message names the
failure class in words ("HTTP 404", "connection refused", "timed out after 10 s",
"malformed HTTP response", "response over 33,554,432 bytes", "not allowed by the class's policy")
and never echoes a response body unless the policy allows it (single user).
"""
from __future__ import annotations

import http.client
import io
import ipaddress
import math
import socket
import ssl
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from rag_metrics.errors import InputError
from rag_metrics.server.policy import allowed

__all__ = [
    "MAX_TIMEOUT",
    "AllowEntry",
    "OutboundError",
    "OutboundPolicy",
    "PolicyError",
    "Response",
    "check_timeout",
    "parse_allow",
    "post_json",
    "request",
    "url_destination",
]

#: Longest total deadline of one request, in seconds (a larger timeout is refused).
MAX_TIMEOUT = 120.0
#: Default cap of a response body, in bytes.
DEFAULT_MAX_BYTES = 32 * 1024 * 1024

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[..., Sequence[Any]]


class PolicyError(InputError):
    """A destination the class's policy does not allow (the message names ``host:port`` only)."""


def denied(host: str, port: int | str) -> PolicyError:
    """The one message for a refused destination."""
    return PolicyError(f"not allowed by the class's policy ({_show_host(host)}:{port})")


def _show_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def check_timeout(value: object, setting: str = "timeout", low: float = 0.0) -> float:
    """``value`` as seconds, > ``low`` and <= :data:`MAX_TIMEOUT`; InputError otherwise (``inf`` and
    ``nan`` included)."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float))
    v = float(value) if ok else math.nan  # type: ignore[arg-type]
    if not ok or math.isnan(v) or not low < v <= MAX_TIMEOUT:
        raise InputError(f"{setting} must be a number of seconds above {low:g} and at most {MAX_TIMEOUT:g}, "
                         f"got {value!r}; e.g. 10")
    return v


# ---- the allowlist -----------------------------------------------------------------------------
@dataclass(frozen=True)
class AllowEntry:
    """One allowed destination: a name, a network (IP or CIDR) or any public address (``*``), on a
    port (``None``: any port)."""

    name: str | None = None
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None
    port: int | None = None

    @property
    def wildcard(self) -> bool:
        return self.name is None and self.network is None

    def __str__(self) -> str:
        host = self.name or (str(self.network) if self.network is not None else "*")
        return f"{_show_host(host)}:{'*' if self.port is None else self.port}"


def _norm_name(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _address(text: str) -> Address | None:
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def parse_allow(entry: str, where: str = "lab.allow") -> AllowEntry:
    """An :class:`AllowEntry` from ``"host:port"`` (see the module docstring); InputError with the fix."""
    text = str(entry).strip()
    if text.startswith("["):
        close = text.find("]")
        host, rest = text[1:close], text[close + 1:] if close > 0 else ""
        if close < 0 or not rest.startswith(":"):
            raise InputError(f"{where}: {entry!r} is not \"[ipv6]:port\", e.g. \"[fd00::7]:6333\"")
        port_s = rest[1:]
    else:
        host, sep, port_s = text.rpartition(":")
        if not sep or not host or ":" in host:
            raise InputError(f"{where}: {entry!r} is not \"host:port\", e.g. \"10.0.0.7:6333\" or \"*:443\"")
    port: int | None
    if port_s == "*":
        port = None
    elif port_s.isdigit() and 0 < int(port_s) < 65536:
        port = int(port_s)
    else:
        raise InputError(f"{where}: {entry!r} has port {port_s!r}; give a number from 1 to 65535 or *")
    host = host.strip()
    if host == "*":
        return AllowEntry(port=port)
    if "/" in host:
        try:
            return AllowEntry(network=ipaddress.ip_network(host, strict=False), port=port)
        except ValueError:
            raise InputError(f"{where}: {entry!r}: {host!r} is not a CIDR network like 10.0.0.0/24") from None
    ip = _address(host)
    if ip is not None:
        return AllowEntry(network=ipaddress.ip_network(ip), port=port)
    name = _norm_name(host)
    if not name or any(c.isspace() or c in "/@?#" for c in name):
        raise InputError(f"{where}: {entry!r}: {host!r} is not a host name, an IP or a CIDR")
    return AllowEntry(name=name, port=port)


def _never_by_name(ip: Address) -> bool:
    """Addresses a listed *name* never reaches (they must be listed as an IP or CIDR)."""
    return ip.is_link_local or ip.is_multicast or ip.is_unspecified or ip.is_reserved


def url_destination(url: str, default_port: int | None = None) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an http(s) URL; InputError when it is not one."""
    try:
        parts = urlsplit(str(url).strip())
        port = parts.port
    except ValueError:
        raise InputError(f"{str(url)[:200]!r} is not a valid URL (bad host or port)") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{str(url)[:200]!r} must be an http:// or https:// URL with a host")
    if port is None:
        port = default_port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, _norm_name(parts.hostname), port


@dataclass(frozen=True)
class OutboundPolicy:
    """Which destinations the server may connect to (module docstring).

    Build it with :meth:`for_caller` (the app, per session) or :meth:`open` (the CLI and single
    user).  ``resolver`` is ``socket.getaddrinfo`` (tests pass another).
    """

    any_host: bool = True
    entries: tuple[AllowEntry, ...] = ()
    echo_bodies: bool = True
    judge_url: str | None = None
    resolver: Resolver = field(default=socket.getaddrinfo, repr=False, compare=False)

    @classmethod
    def open(cls) -> OutboundPolicy:
        """Every host (the operator: CLI, single-user app)."""
        return cls()

    @classmethod
    def for_caller(cls, caller: Any, config: Any) -> OutboundPolicy:
        """The policy of ``caller`` (:class:`rag_metrics.server.access.Caller`) under ``config``
        (:class:`rag_metrics.config.ServerConfig`)."""
        judge_url = str(config.judge["base_url"]).rstrip("/") if config.judge else None
        if allowed(caller, "any-host"):
            return cls(True, (), allowed(caller, "see-server-replies"), judge_url)
        entries = [parse_allow(a, f"{config.source or 'config'}: lab.allow") for a in config.allow]
        entries += list(declared_destinations(config))
        return cls(False, tuple(dict.fromkeys(entries)), allowed(caller, "see-server-replies"), judge_url)

    @property
    def class_mode(self) -> bool:
        return not self.any_host

    def _resolve(self, host: str, port: int) -> list[Address]:
        ip = _address(host)
        if ip is not None:
            return [ip]
        infos = self.resolver(host, port, 0, socket.SOCK_STREAM)
        out: list[Address] = []
        for info in infos:
            a = _address(str(info[4][0]))
            if a is not None and a not in out:
                out.append(a)
        return out

    def _allows(self, ip: Address, name: str, port: int) -> bool:
        for e in self.entries:
            if e.port is not None and e.port != port:
                continue
            if e.network is not None and _address(name) is not None and ip.version == e.network.version \
                    and ip in e.network:
                return True
            if e.name is not None and e.name == name and not _never_by_name(ip):
                return True
            if e.wildcard and ip.is_global and not _never_by_name(ip):
                return True
        return False

    def check(self, host: str, port: int) -> list[str]:
        """The addresses ``host:port`` resolves to, every one allowed; the first is connected to.

        Raises
        ------
        PolicyError
            When the policy does not allow the destination (or any one of its addresses).
        OutboundError
            ``kind="unreachable"`` when a destination the policy could allow does not resolve.
        """
        name = _norm_name(host)
        if not name:
            raise InputError("the URL has no host")
        if not self.any_host:
            literal = _address(name) is not None
            could = any((e.port is None or e.port == port)
                        and (e.wildcard or (e.network is not None if literal else e.name == name))
                        for e in self.entries)
            if not could:  # a name is listed by name (or *): refused before any DNS lookup
                raise denied(name, port)
        try:
            ips = self._resolve(name, port)
        except (socket.gaierror, UnicodeError, OSError):
            if not self.any_host and not any(e.name == name for e in self.entries):
                raise denied(name, port) from None
            raise OutboundError("unreachable", f"cannot resolve the host {_show_host(name)}") from None
        if not ips:
            raise OutboundError("unreachable", f"cannot resolve the host {_show_host(name)}")
        if not self.any_host and not all(self._allows(ip, name, port) for ip in ips):
            raise denied(name, port)
        return [str(ip) for ip in ips]

    def check_url(self, url: str, default_port: int | None = None) -> tuple[str, str, int, list[str]]:
        """``(scheme, host, port, addresses)`` of ``url`` after :meth:`check`."""
        scheme, host, port = url_destination(url, default_port)
        return scheme, host, port, self.check(host, port)

    def may_send_judge_key(self, base_url: str) -> bool:
        """True when ``base_url`` is the operator's judge (its key goes there and nowhere else)."""
        if self.judge_url is None:
            return False
        try:
            return (url_destination(base_url) == url_destination(self.judge_url)
                    and urlsplit(base_url.rstrip("/")).path == urlsplit(self.judge_url).path)
        except InputError:
            return False


def declared_destinations(config: Any) -> Iterable[AllowEntry]:
    """Allow entries for the destinations the operator declared: named connections and the judge."""
    urls: list[tuple[str, int | None]] = []
    if config.judge:
        urls.append((str(config.judge.get("base_url", "")), None))
    for conn in config.connections.values():
        s = conn.settings
        if conn.kind == "http" and s.get("url"):
            urls.append((str(s["url"]), None))
        elif conn.kind == "qdrant" and s.get("url"):
            urls.append((str(s["url"]), 6333))
        elif conn.kind == "pgvector" and s.get("dsn"):
            yield from _dsn_destinations(str(s["dsn"]))
    for url, default in urls:
        try:
            _, host, port = url_destination(url, default)
        except InputError:
            continue  # a bad URL fails when used, with its own message
        ip = _address(host)
        yield AllowEntry(network=ipaddress.ip_network(ip), port=port) if ip is not None else \
            AllowEntry(name=host, port=port)


def _dsn_destinations(dsn: str) -> Iterable[AllowEntry]:
    try:
        from psycopg.conninfo import conninfo_to_dict

        params = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001  psycopg missing or a bad DSN: nothing declared
        return
    hosts = str(params.get("hostaddr") or params.get("host") or "localhost").split(",")
    ports = str(params.get("port") or "5432").split(",")
    for i, h in enumerate(hosts):
        p = ports[i] if i < len(ports) else ports[-1]
        if h.startswith("/") or not p.strip().isdigit():
            continue
        ip = _address(h.strip())
        yield AllowEntry(network=ipaddress.ip_network(ip), port=int(p)) if ip is not None else \
            AllowEntry(name=_norm_name(h), port=int(p))


# ---- requests ----------------------------------------------------------------------------------
class OutboundError(Exception):
    """A request that failed, in words.

    ``kind``: ``denied``, ``unreachable``, ``refused``, ``timeout``, ``tls``, ``malformed``,
    ``too_large``, ``redirect``, ``http``.  ``status`` is the HTTP status for ``redirect`` and
    ``http``.  ``retryable``: worth another attempt (timeouts, refused connections, 429, 5xx).
    ``unreachable_kind``: the server is down or hanging (counts toward failing fast).
    """

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status

    @property
    def retryable(self) -> bool:
        return self.kind in ("timeout", "refused", "unreachable", "reset") or \
            (self.kind == "http" and self.status is not None and (self.status == 429 or self.status >= 500))

    @property
    def down(self) -> bool:
        return self.kind in ("timeout", "refused", "unreachable", "reset")


@dataclass(frozen=True)
class Response:
    """A complete response: status, headers (lower-case names) and body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for n, v in self.headers if n == name), None)


class _Expired(Exception):
    pass


class _DeadlineSocket:
    """A socket whose every send and receive waits at most until the deadline (a total budget)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline
        self._io_refs = 0
        self._closed = False

    def _arm(self) -> None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("deadline")
        self._sock.settimeout(left)

    def sendall(self, data: bytes) -> None:
        self._arm()
        self._sock.sendall(data)

    def recv_into(self, buf: Any, nbytes: int = 0) -> int:
        self._arm()
        return self._sock.recv_into(buf, nbytes)

    def makefile(self, mode: str = "rb", *args: Any, **kw: Any) -> io.BufferedReader:
        self._io_refs += 1
        return io.BufferedReader(socket.SocketIO(self, "rb"))  # type: ignore[arg-type]

    def _decref_socketios(self) -> None:
        self._io_refs -= 1
        if self._closed and self._io_refs <= 0:
            self._sock.close()

    def fileno(self) -> int:
        return self._sock.fileno()

    def setsockopt(self, *args: Any) -> None:
        self._sock.setsockopt(*args)

    def settimeout(self, t: float | None) -> None:  # http.client may call it; the deadline rules
        return None

    def close(self) -> None:  # like socket.socket: the descriptor lives while a reader uses it
        self._closed = True
        if self._io_refs <= 0:
            self._sock.close()


def _connect(scheme: str, host: str, ip: str, port: int, deadline: float) -> socket.socket:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline")
    sock = socket.create_connection((ip, port), timeout=left)
    if scheme == "https":
        ctx = ssl.create_default_context()
        try:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            return ctx.wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise
    return sock


def request(method: str, url: str, body: bytes | None = None, headers: Mapping[str, str] | None = None, *,
            policy: OutboundPolicy | None = None, timeout: float = 10.0, max_bytes: int = DEFAULT_MAX_BYTES,
            default_port: int | None = None) -> Response:
    """Send one request to ``url`` under ``policy`` (default: open) and return the whole response
    (any status; redirects are returned, never followed).

    Raises
    ------
    OutboundError
        For every failure of the transport, the framing, the deadline or the size cap, and
        ``kind="denied"`` when the policy refuses the destination.
    """
    policy = policy or OutboundPolicy.open()
    timeout = check_timeout(timeout)
    deadline = time.monotonic() + timeout
    try:
        scheme, host, port, ips = policy.check_url(url, default_port)
    except PolicyError as e:
        raise OutboundError("denied", str(e)) from None
    except InputError as e:
        raise OutboundError("malformed", str(e)) from None
    parts = urlsplit(url.strip())
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in target):
        raise OutboundError("malformed", "the URL holds spaces or control characters; percent-encode them")
    target = quote(target, safe="/?&=%:@!$'()*+,;~-._[]")  # a non-ASCII path is sent percent-encoded
    for n, v in (headers or {}).items():
        if any(c in str(n) + str(v) for c in "\r\n\x00"):
            raise OutboundError("malformed", f"header {str(n)[:40]!r} holds a line break; remove it")
        try:
            (str(n) + str(v)).encode("latin-1")
        except UnicodeEncodeError:
            raise OutboundError("malformed", f"header {str(n)[:40]!r} holds characters an HTTP header cannot "
                                "carry") from None
    conn: http.client.HTTPConnection | None = None
    try:
        sock = _connect(scheme, host, ips[0], port, deadline)
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
        conn.sock = _DeadlineSocket(sock, deadline)
        conn.request(method, target, body=body, headers=dict(headers or {}))
        resp = conn.getresponse()
        length = resp.getheader("Content-Length")
        declared: int | None = None
        if length is not None:
            if not length.strip().isdigit():
                raise OutboundError("malformed", "malformed HTTP response")
            declared = int(length)
            if declared > max_bytes:
                raise OutboundError("too_large", f"response over {max_bytes:,} bytes")
        data = resp.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise OutboundError("too_large", f"response over {max_bytes:,} bytes")
        if declared is not None and len(data) < declared and resp.getheader("Transfer-Encoding") is None:
            raise OutboundError("malformed", "malformed HTTP response")  # cut short of its Content-Length
        return Response(resp.status, tuple((n.lower(), v) for n, v in resp.getheaders()), data)
    except OutboundError:
        raise
    except TimeoutError:
        raise OutboundError("timeout", f"timed out after {timeout:g} s") from None
    except ConnectionRefusedError:
        raise OutboundError("refused", "connection refused") from None
    except ssl.SSLCertVerificationError:
        raise OutboundError("tls", f"the TLS certificate is not valid for {_show_host(host)}") from None
    except ssl.SSLError:
        raise OutboundError("tls", "TLS handshake failed") from None
    except http.client.RemoteDisconnected:
        raise OutboundError("reset", "the server closed the connection without a response") from None
    except (http.client.HTTPException, ValueError):
        raise OutboundError("malformed", "malformed HTTP response") from None
    except (ConnectionResetError, BrokenPipeError):
        raise OutboundError("reset", "the connection was reset") from None
    except OSError as e:
        raise OutboundError("unreachable", f"cannot connect ({e.strerror or type(e).__name__})") from None
    finally:
        if conn is not None:
            conn.close()


def post_json(url: str, payload: Any, headers: Mapping[str, str] | None = None, *,
              policy: OutboundPolicy | None = None, timeout: float = 10.0,
              max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """POST ``payload`` as JSON; the body of a 2xx response.  Anything else is an
    :class:`OutboundError` (``"HTTP 302 (redirects are not followed)"``, ``"HTTP 404"``, ...; the
    first 200 characters of the body are added only when the policy echoes bodies)."""
    import json

    policy = policy or OutboundPolicy.open()
    hdrs = {"Content-Type": "application/json", "Accept": "application/json", **dict(headers or {})}
    resp = request("POST", url, json.dumps(payload).encode("utf-8"), hdrs, policy=policy, timeout=timeout,
                   max_bytes=max_bytes)
    if 200 <= resp.status < 300:
        return resp.body
    if 300 <= resp.status < 400:
        raise OutboundError("redirect", f"HTTP {resp.status} (redirects are not followed)", resp.status)
    detail = ""
    if policy.echo_bodies and resp.body:
        detail = " (" + resp.body[:300].decode("utf-8", "replace").strip().replace("\n", " ")[:200] + ")"
    raise OutboundError("http", f"HTTP {resp.status}{detail}", resp.status)
