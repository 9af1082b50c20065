"""The outbound policy and the careful request, against real loopback servers (raw sockets, so every
byte and every fault is under the test's control): allowlist on resolved addresses, pinning,
total deadline, malformed framing, size cap, redirects not followed, failures in words."""
from __future__ import annotations

import math
import socket
import time

import pytest
from loopback import RawServer, reply

from rag_metrics.config import parse_server_config
from rag_metrics.errors import InputError
from rag_metrics.server.access import Caller, operator
from rag_metrics.server.outbound import (
    MAX_TIMEOUT,
    OutboundError,
    OutboundPolicy,
    PolicyError,
    check_timeout,
    parse_allow,
    post_json,
)
from rag_metrics.systems.backends.http import HttpBackend, HttpConfig
from rag_metrics.systems.base import LiveSystem, ResultMemo

STUDENT, TEACHER = Caller("student", space="s1"), Caller("teacher")


def policy(allow=(), resolver=None, caller=STUDENT, **lab):
    cfg = parse_server_config({"lab": {"allow": list(allow), **lab}})
    p = OutboundPolicy.for_caller(caller, cfg)
    if resolver is not None:
        p = OutboundPolicy(p.any_host, p.entries, p.echo_bodies, p.judge_url, resolver)
    return p


def fake_resolver(table, calls=None):
    def resolve(host, port, *args):
        if calls is not None:
            calls.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "not found")
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                for a in table[host]]
    return resolve


# ---- the allowlist -----------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST.", "10.1.2.3", "192.168.0.10", "172.16.5.4",
                                  "169.254.169.254", "::1", "0.0.0.0", "::", "2130706433", "0177.0.0.1", "0x7f.1",
                                  "::ffff:127.0.0.1", "224.0.0.1", "fe80::1", "example.com", "93.184.216.34"])
@pytest.mark.parametrize("caller", [STUDENT, TEACHER])
def test_class_mode_with_no_allowlist_refuses_everything(host, caller):
    with pytest.raises(PolicyError, match=r"not allowed by the class's policy \(.+:80\)"):
        policy(caller=caller).check(host, 80)


@pytest.mark.parametrize("host,addrs", [
    ("127.0.0.1", None), ("10.0.0.5", None), ("169.254.169.254", None), ("::1", None), ("0.0.0.0", None),
    ("2130706433", None), ("0177.0.0.1", None), ("100.64.0.1", None), ("fd00::1", None),
    ("rebind.test", ["127.0.0.1"]), ("rebind.test", ["93.184.216.34", "10.0.0.1"]),  # every address counts
    ("meta.test", ["169.254.169.254"]), ("six.test", ["::1"]),
])
def test_wildcard_allows_public_addresses_only_checked_after_resolution(host, addrs):
    table = {host: addrs} if addrs else {}
    table["2130706433"] = ["127.0.0.1"]
    table["0177.0.0.1"] = ["127.0.0.1"]
    p = policy(["*:443"], fake_resolver(table))
    with pytest.raises(PolicyError, match=r"not allowed by the class's policy"):
        p.check(host, 443)


@pytest.mark.parametrize("host,addrs", [("93.184.216.34", None), ("public.test", ["93.184.216.34"]),
                                        ("two.test", ["93.184.216.34", "2606:2800:220:1::1"])])
def test_wildcard_allows_public_hosts_on_its_port(host, addrs):
    p = policy(["*:443"], fake_resolver({host: addrs} if addrs else {}))
    assert p.check(host, 443)
    with pytest.raises(PolicyError):
        p.check(host, 8443)


@pytest.mark.parametrize("entry,host,port,ok", [
    ("127.0.0.1:8080", "127.0.0.1", 8080, True),
    ("127.0.0.1:8080", "2130706433", 8080, False),      # a number is a name to getaddrinfo: not listed
    ("127.0.0.1:8080", "127.0.0.1", 8081, False),
    ("127.0.0.1:8080", "localhost", 8080, False),       # a name is listed by name, not by its address
    ("127.0.0.1:8080", "::ffff:127.0.0.1", 8080, True),  # the same address, IPv4-mapped
    ("localhost:11434", "localhost", 11434, True),
    ("localhost:11434", "LocalHost.", 11434, True),
    ("10.0.0.0/24:6333", "10.0.0.7", 6333, True),
    ("10.0.0.0/24:6333", "10.0.1.7", 6333, False),
    ("[::1]:9000", "::1", 9000, True),
    ("[::1]:9000", "127.0.0.1", 9000, False),
    ("[fd00::/64]:*", "fd00::42", 5432, True),
    ("search.test:443", "search.test", 443, True),       # a listed name may be private (an internal host)
    ("meta.test:80", "meta.test", 80, False),            # ... never link-local: list the IP for that
    ("169.254.169.254:80", "169.254.169.254", 80, True),  # listed as an IP: the operator meant it
])
def test_listed_entries(entry, host, port, ok):
    table = {"localhost": ["127.0.0.1"], "localhost.": ["127.0.0.1"], "search.test": ["10.0.0.9"],
             "meta.test": ["169.254.169.254"], "2130706433": ["127.0.0.1"]}
    p = policy([entry], fake_resolver(table))
    if ok:
        assert p.check(host, port)
    else:
        with pytest.raises(PolicyError, match=r"not allowed by the class's policy"):
            p.check(host, port)


def test_unlisted_names_are_refused_before_any_dns_lookup():
    calls: list = []
    p = policy(["search.test:443", "10.0.0.0/8:443"],
               fake_resolver({"search.test": ["10.0.0.9"], "x.test": ["10.1.1.1"]}, calls))
    for host in ["x.test", "attacker-controlled.example", "secret-data.exfil.example", "2130706433", "0x7f.1"]:
        with pytest.raises(PolicyError):
            p.check(host, 443)
    assert calls == []
    p.check("search.test", 443)
    assert calls == ["search.test"]


def test_declared_connections_and_judge_are_allowed_and_nothing_else():
    cfg = parse_server_config({"lab": {
        "judge": {"base_url": "http://127.0.0.1:8099/v1", "chat_model": "m"},
        "connections": {"s": {"kind": "http", "url": "https://search.test/api"},
                        "q": {"kind": "qdrant", "url": "http://10.0.0.7", "collection": "c"},
                        "p": {"kind": "pgvector", "dsn": "postgresql://u:pw@10.0.0.8:5433/db", "table": "t"}}}})
    p = OutboundPolicy.for_caller(STUDENT, cfg)
    p = OutboundPolicy(p.any_host, p.entries, p.echo_bodies, p.judge_url, fake_resolver({"search.test": ["10.9.9.9"]}))
    for host, port in [("127.0.0.1", 8099), ("search.test", 443), ("10.0.0.7", 6333), ("10.0.0.8", 5433)]:
        assert p.check(host, port)
    for host, port in [("127.0.0.1", 8098), ("search.test", 80), ("10.0.0.7", 6334), ("10.0.0.8", 5432)]:
        with pytest.raises(PolicyError):
            p.check(host, port)
    assert p.may_send_judge_key("http://127.0.0.1:8099/v1") and p.may_send_judge_key("http://127.0.0.1:8099/v1/")
    for other in ["http://127.0.0.1:8098/v1", "http://127.0.0.1:8099/v2", "https://127.0.0.1:8099/v1",
                  "http://localhost:8099/v1"]:
        assert not p.may_send_judge_key(other)


def test_operator_reaches_everything():
    p = OutboundPolicy.for_caller(operator(), parse_server_config({}))
    for host in ["127.0.0.1", "10.0.0.1", "169.254.169.254", "::1"]:
        assert p.check(host, 80)
    assert not p.class_mode and p.echo_bodies


@pytest.mark.parametrize("entry", ["nohost", "host:99999", "host:0", "[::1]", "[::1]9000", "10.0.0.0/33:80",
                                   "host:abc", ":80", "a b:80", "user@host:80"])
def test_bad_allow_entries_name_the_setting(entry):
    with pytest.raises(InputError, match=r"lab\.allow"):
        parse_allow(entry)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 1e9, MAX_TIMEOUT + 1, 0, -1, True, "10", None])
def test_timeouts_are_bounded(value):
    with pytest.raises(InputError, match="at most 120"):
        check_timeout(value)
    with pytest.raises(InputError, match="timeout"):
        HttpConfig("http://127.0.0.1:1/search", timeout=value)
    from rag_metrics.answers.llm import JudgeConfig

    with pytest.raises(InputError, match="timeout"):
        JudgeConfig("http://127.0.0.1:1/v1", "m", timeout=value)


@pytest.mark.parametrize("value", ["inf", "nan", "1e9", "-5"])
def test_cli_refuses_an_unbounded_timeout(capsys, tmp_path, value):
    from rag_metrics.cli import main

    golden = tmp_path / "g.jsonl"
    golden.write_text('{"query_id": "q1", "question": "hi", "relevant": {"a": 1}}\n')
    code = main(["retrieve", "--queries", str(golden), "--backend", "http", "--url", "http://127.0.0.1:1/search",
                 "--timeout", value, "--out", str(tmp_path / "run.trec")])
    err = capsys.readouterr().err
    assert code != 0 and "at most 120" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["inf", "nan", "121"])
def test_cli_answers_refuses_an_unbounded_judge_timeout(capsys, value):
    from pathlib import Path

    from rag_metrics.cli import main

    data = Path(__file__).resolve().parents[1] / "sample_corpus" / "answers.jsonl"
    code = main(["answers", "--data", str(data), "--judge", "llm", "--judge-url", "http://127.0.0.1:1/v1",
                 "--judge-model", "m", "--timeout", value])
    err = capsys.readouterr().err
    assert code != 0 and "at most 120" in err and "Traceback" not in err


# ---- raw loopback servers -----------------------------------------------------------------------
@pytest.fixture
def raw():
    servers = []

    def make(respond):
        s = RawServer(respond)
        servers.append(s)
        return s
    yield make
    for s in servers:
        s.close()


def allow_for(*servers, caller=STUDENT):
    return policy([f"127.0.0.1:{s.port}" for s in servers], caller=caller)


def test_a_listed_loopback_server_answers(raw):
    srv = raw(reply(body=b'[{"id": "a", "score": 1}]'))
    assert post_json(srv.url, {"query": "q", "k": 1}, policy=allow_for(srv)) == b'[{"id": "a", "score": 1}]'
    assert b'"query": "q"' in srv.received[0]


def test_an_unlisted_loopback_server_is_never_contacted(raw):
    srv = raw(reply())
    other = raw(reply())
    for url in [srv.url, f"http://localhost:{srv.port}/x", f"http://2130706433:{srv.port}/x",
                f"http://[::ffff:127.0.0.1]:{srv.port}/x", f"http://0.0.0.0:{srv.port}/x"]:
        with pytest.raises(OutboundError, match=r"not allowed by the class's policy") as e:
            post_json(url, {"query": "q"}, policy=allow_for(other))
        assert e.value.kind == "denied"
    time.sleep(0.2)
    assert srv.received == []


def test_the_connection_goes_to_the_checked_address_without_a_second_lookup(raw):
    srv = raw(reply())
    calls: list = []
    answers = iter([["127.0.0.1"], ["10.255.255.1"]])  # a rebinding name: first harmless, then elsewhere

    def resolver(host, port, *a):
        calls.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers)[0], port))]

    p = policy([f"rebind.test:{srv.port}"], resolver)
    post_json(f"http://rebind.test:{srv.port}/search", {"q": 1}, policy=p, timeout=3)
    assert calls == ["rebind.test"]  # one lookup; the socket went to the address checked
    assert b"Host: rebind.test:" in srv.received[0]


@pytest.mark.serial  # measures time: runs alone (tests/tiers.py)
def test_trickling_server_is_cut_at_the_total_deadline(raw):
    def trickle(conn, _):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        for _ in range(100):
            conn.sendall(b" ")
            time.sleep(0.1)

    def trickle_headers(conn, _):
        for c in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100:
            conn.sendall(bytes([c]))
            time.sleep(0.1)

    for respond in (trickle, trickle_headers):
        srv = raw(respond)
        t0 = time.monotonic()
        with pytest.raises(OutboundError, match=r"timed out after 1 s") as e:
            post_json(srv.url, {}, policy=allow_for(srv), timeout=1)
        assert e.value.kind == "timeout"
        assert time.monotonic() - t0 < 2.0  # every read gets only what is left of the one deadline


@pytest.mark.parametrize("raw_reply", [
    b"garbage\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n[]",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n[]\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(150)) + b"\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n[short",
    b"HTTP/1.1 abc OK\r\n\r\n",
])
def test_malformed_framing_is_a_failure_in_words(raw, raw_reply):
    srv = raw(lambda conn, _: conn.sendall(raw_reply))
    with pytest.raises(OutboundError) as e:
        post_json(srv.url, {}, policy=allow_for(srv), timeout=3)
    assert e.value.kind in ("malformed", "reset") and "HTTP response" in e.value.message or \
        "closed the connection" in e.value.message


def test_a_server_closing_at_once_is_a_failure_in_words(raw):
    srv = raw(lambda conn, _: None)
    with pytest.raises(OutboundError, match="closed the connection without a response"):
        post_json(srv.url, {}, policy=allow_for(srv), timeout=3)


def test_huge_bodies_are_capped(raw):
    declared = raw(lambda conn, _: conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n[[[["))

    def chunked_forever(conn, _):
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        block = b"x" * 65536
        try:
            for _ in range(64):
                conn.sendall(b"%x\r\n%s\r\n" % (len(block), block))
        except OSError:
            pass

    undeclared = raw(chunked_forever)
    for srv in (declared, undeclared):
        with pytest.raises(OutboundError, match=r"response over 100,000 bytes") as e:
            post_json(srv.url, {}, policy=allow_for(srv), timeout=5, max_bytes=100_000)
        assert e.value.kind == "too_large"


def test_redirects_are_not_followed_and_credentials_go_nowhere_else(raw):
    target = raw(reply(body=b'[{"id": "stolen", "score": 1}]'))
    redirector = raw(reply("302 Found", b"", [f"Location: {target.url}"]))
    p = allow_for(redirector, target)
    for status in ("301 Moved Permanently", "302 Found", "307 Temporary Redirect", "308 Permanent Redirect"):
        redirector.respond = reply(status, b"", [f"Location: {target.url}"])
        with pytest.raises(OutboundError, match=rf"HTTP {status[:3]} \(redirects are not followed\)"):
            post_json(redirector.url, {}, {"Authorization": "Bearer tok-123"}, policy=p)
    time.sleep(0.2)
    assert target.received == []
    assert all(b"tok-123" in r for r in redirector.received)


def test_refused_and_http_errors_in_words_without_bodies_in_class_mode(raw):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    closed_port = s.getsockname()[1]
    s.close()
    p = policy([f"127.0.0.1:{closed_port}"])
    with pytest.raises(OutboundError, match="connection refused") as e:
        post_json(f"http://127.0.0.1:{closed_port}/x", {}, policy=p)
    assert e.value.retryable and e.value.down
    for status, code in [("404 Not Found", 404), ("500 Internal Server Error", 500), ("401 Unauthorized", 401)]:
        srv = raw(reply(status, b"SECRET-BODY-OF-THE-HOST root:x:0:0"))
        with pytest.raises(OutboundError) as e:
            post_json(srv.url, {}, policy=allow_for(srv))
        assert e.value.message == f"HTTP {code}" and e.value.status == code
        with pytest.raises(OutboundError, match="SECRET-BODY") as e:  # the operator sees the body
            post_json(srv.url, {}, policy=OutboundPolicy.open())


def _backend_system(url, policy_, **kw):
    from rag_metrics.server.connections import ServerEnv

    env = ServerEnv(STUDENT, parse_server_config({"lab": {"allow": [f"127.0.0.1:{url.split(':')[2].split('/')[0]}"]}}))
    if policy_ is not None:
        env.policy = policy_
    kw.setdefault("retries", 0)
    return LiveSystem("mine", HttpBackend(HttpConfig(url, **kw), env, sleep=lambda s: None), ResultMemo())


def _http(status: str, body: bytes, extra: str = "") -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


@pytest.mark.parametrize("raw_reply,words", [
    (b"garbage\r\n\r\n", "malformed HTTP response"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n", "response over"),
    (_http("302 Found", b"", "Location: http://127.0.0.1:1/\r\n"), "HTTP 302 (redirects"),
    (_http("404 Not Found", b"SECRET-BODY"), "HTTP 404"),
    (_http("200 OK", b"<html>SECRET</html>"), "response is not JSON"),
    (_http("200 OK", b'{"SECRET-KEY": [1, 2, 3]}'), "expected a JSON list"),
    (_http("200 OK", b'[{"SECRET-FIELD": "x"}]'), "has no 'id' field"),
    (_http("200 OK", b'[{"id": "a", "score": "SECRET"}]'), "is not a number"),
    (_http("200 OK", b'"SECRET"'), "expected a JSON list"),
])
def test_backend_failures_are_per_question_statuses_without_the_reply(raw, raw_reply, words):
    srv = raw(lambda conn, _: conn.sendall(raw_reply))
    sr = _backend_system(srv.url, None).rank({"q1": "one", "q2": "two"}, 5)
    assert [f.query_id for f in sr.failures] == ["q1", "q2"]
    for f in sr.failures:
        assert words in f.message and "SECRET" not in f.message


@pytest.mark.serial  # measures time: runs alone (tests/tiers.py)
def test_bare_variable_url_and_trickle_are_statuses_not_exceptions(raw, monkeypatch):
    monkeypatch.setenv("BARE_URL", "not a url at all")
    backend = HttpBackend(HttpConfig("${BARE_URL}", retries=0), sleep=lambda s: None)  # the operator's
    sr = LiveSystem("bare", backend, ResultMemo()).rank({"q1": "one"}, 5)
    assert sr.failures and "must be an http:// or https:// URL" in sr.failures[0].message

    def trickle(conn, _):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        for _ in range(40):
            conn.sendall(b" ")
            time.sleep(0.1)

    srv = raw(trickle)
    t0 = time.monotonic()
    sr = _backend_system(srv.url, None, timeout=0.8).rank({"q1": "one"}, 5)
    assert "timed out after 0.8 s" in sr.failures[0].message and time.monotonic() - t0 < 2.5


def test_results_are_cut_to_k_before_they_are_kept(raw):
    many = b"[" + b",".join(b'{"id": "d%d", "score": %d}' % (i, 1000 - i) for i in range(500)) + b"]"
    srv = raw(lambda conn, _: conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(many), many)))
    for k in (1, 3, 10):
        system = _backend_system(srv.url, None)
        sr = system.rank({"q1": f"question {k}"}, k)
        assert len(sr.run) == k
        kept = system.memo.get(system.fingerprint, f"question {k}", 1)
        assert kept is not None and len(system.memo._data[system.fingerprint][f"question {k}"][1]) == k


@pytest.mark.parametrize("url,headers,words", [
    ("http://127.0.0.1:{port}/a b", {}, "spaces or control characters"),
    ("http://127.0.0.1:{port}/a\r\nX-Evil: 1", {}, "spaces or control characters"),
    ("http://127.0.0.1:{port}/a", {"X-A": "v\r\nX-Evil: 1"}, "line break"),
    ("http://127.0.0.1:{port}/a", {"X-A\n": "v"}, "line break"),
    ("http://127.0.0.1:{port}/a", {"X-A": "日本"}, "cannot carry"),
])
def test_no_request_smuggling_through_urls_or_headers(raw, url, headers, words):
    srv = raw(reply())
    with pytest.raises(OutboundError, match=words):
        post_json(url.format(port=srv.port), {}, headers, policy=allow_for(srv))
    time.sleep(0.1)
    assert srv.received == []
    if words != "cannot carry":  # refused already when the settings are made
        with pytest.raises(InputError):
            HttpConfig(url.format(port=srv.port), headers=tuple(headers.items()))


# ---- TLS: the pinned address, the name verified ---------------------------------------------------
@pytest.fixture
def tls(tmp_path, raw):
    import shutil
    import ssl
    import subprocess

    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=lab.test", "-addext", "subjectAltName=DNS:lab.test"],
                   check=True, capture_output=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv = raw(reply(body=b'[{"id": "tls", "score": 1}]'))
    plain_one = srv._one

    def tls_one(conn):
        try:
            conn = ctx.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            conn.close()
            return
        plain_one(conn)

    srv._one = tls_one
    return srv, cert


def test_https_is_verified_for_the_name_while_connecting_to_the_checked_address(tls, monkeypatch):
    srv, cert = tls
    names = {"lab.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]}
    p = policy([f"lab.test:{srv.port}", f"other.test:{srv.port}"], fake_resolver(names))
    # not trusted: refused in words
    with pytest.raises(OutboundError, match="TLS certificate is not valid for lab.test") as e:
        post_json(f"https://lab.test:{srv.port}/search", {}, policy=p, timeout=5)
    assert e.value.kind == "tls"
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trust the test certificate
    assert post_json(f"https://lab.test:{srv.port}/search", {}, policy=p, timeout=5) == b'[{"id": "tls", "score": 1}]'
    # the same address under another name: the certificate does not match
    with pytest.raises(OutboundError, match="TLS certificate is not valid for other.test"):
        post_json(f"https://other.test:{srv.port}/search", {}, policy=p, timeout=5)


def test_a_non_ascii_path_is_sent_percent_encoded(raw):
    srv = raw(reply())
    post_json(f"http://127.0.0.1:{srv.port}/recherche/café?q=é", {}, policy=allow_for(srv))
    assert srv.received[0].startswith(b"POST /recherche/caf%C3%A9?q=%C3%A9 HTTP/1.1")
