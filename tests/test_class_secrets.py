"""No secret of the server leaves it (class mode), proved with recording listeners on loopback.

Dummy secrets are set in the test's environment (``RAG_METRICS_JUDGE_KEY``, ``PGPASSWORD``, custom
variables) and in a temporary secrets TOML (``RAG_METRICS_CONFIG``: top-level values, a named
connection's header, the judge's key).  A student and the teacher then try every form path: a URL
with ``${VAR}``, a header with ``${VAR}``, a bare ``${VAR}`` URL, a plain URL, a base URL only for
the judge, a key variable name, a DSN without a password (md5 and cleartext servers), a DSN naming
a passfile, a service or a socket, a Qdrant URL with and without a key.  Every byte the listeners
receive is searched for every secret.  Named connections and the configured judge get their own
secret, and only that one.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from loopback import PgRecorder, RawServer

from rag_metrics.answers.llm import JudgeConfig, LLMJudge
from rag_metrics.answers.llm_cache import JudgeCache
from rag_metrics.answers.types import AnswerItem
from rag_metrics.config import load_server_config
from rag_metrics.errors import InputError
from rag_metrics.server.access import Caller, operator
from rag_metrics.server.connections import ServerEnv, judge_api_key, server_env
from rag_metrics.server.outbound import PolicyError
from rag_metrics.systems.store import SystemSpec, SystemStore, build_system

ENV_SECRETS = {"RAG_METRICS_JUDGE_KEY": "env-judge-key-S1", "PGPASSWORD": "env-pg-pass-S2",
               "MY_TOKEN": "env-token-S3", "QDRANT_API_KEY": "env-qdrant-S4", "OPENAI_API_KEY": "env-openai-S8"}
TOML_TOKEN, TOML_JUDGE_KEY, TOML_CONN = "toml-token-S5", "toml-judge-key-S6", "toml-conn-S7"
ALL_SECRETS = [*ENV_SECRETS.values(), TOML_TOKEN, TOML_JUDGE_KEY, TOML_CONN]
CALLERS = [Caller("student", space="seat-1"), Caller("teacher")]

_COMPLETION = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": '{"statements": []}'}}]}).encode()


def _json_reply(body: bytes):
    def respond(conn, _):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n%s" % (len(body), body))
    return respond


class Encoder:
    name, dim = "fake", 4

    def encode(self, texts):
        return np.ones((len(texts), 4), dtype=np.float32)


@pytest.fixture
def lab(tmp_path, monkeypatch):
    for k, v in ENV_SECRETS.items():
        monkeypatch.setenv(k, v)
    open_rec = RawServer(_json_reply(b"[]"))         # a host the class allows, typed by students
    conn_rec = RawServer(_json_reply(b'[{"id": "a", "score": 1}]'))  # the named connection's host
    judge_rec = RawServer(_json_reply(_COMPLETION))  # the operator's judge
    pg_md5, pg_clear = PgRecorder(5), PgRecorder(3)
    toml = tmp_path / "secrets.toml"
    toml.write_text(f"""
MY_TOKEN = "{TOML_TOKEN}"
RAG_METRICS_JUDGE_KEY = "{TOML_TOKEN}"

[lab]
allow = ["127.0.0.1:{open_rec.port}", "127.0.0.1:{pg_md5.port}", "127.0.0.1:{pg_clear.port}"]

[lab.judge]
base_url = "http://127.0.0.1:{judge_rec.port}/v1"
chat_model = "class-model"
api_key = "{TOML_JUDGE_KEY}"

[lab.connections.course]
kind = "http"
url = "http://127.0.0.1:{conn_rec.port}/search"
headers = {{ Authorization = "Bearer {TOML_CONN}" }}
""")
    monkeypatch.setenv("RAG_METRICS_CONFIG", str(toml))
    yield {"open": open_rec, "conn": conn_rec, "judge": judge_rec, "pg_md5": pg_md5, "pg_clear": pg_clear}
    for s in (open_rec, conn_rec, judge_rec, pg_md5, pg_clear):
        s.close()


def _env(caller) -> ServerEnv:
    # the variables the app would give the operator (environment + the TOML's top-level values) are
    # offered here too: in class mode they must be dropped
    return ServerEnv(caller, load_server_config(), {**os.environ, "MY_TOKEN": TOML_TOKEN})


def _test(kind, settings, env, encoder=None):
    system = build_system(SystemSpec("typed", kind, settings=settings), encoder or Encoder(), env)
    return system.test("what is the refund window?", 5)


def _assert_clean(*servers):
    data = b"".join(s.all_bytes() for s in servers)
    for secret in ALL_SECRETS:
        assert secret.encode() not in data, f"{secret} left the server"


@pytest.mark.parametrize("caller", CALLERS, ids=lambda c: c.role)
def test_no_typed_setting_resolves_a_server_variable(lab, caller):
    env = _env(caller)
    port = lab["open"].port
    typed = [
        ("http", {"url": f"http://127.0.0.1:{port}/search?key=${{MY_TOKEN}}"}, "url"),
        ("http", {"url": "${MY_TOKEN}"}, "url"),
        ("http", {"url": f"http://127.0.0.1:{port}/search",
                  "headers": [["Authorization", "Bearer ${RAG_METRICS_JUDGE_KEY}"]]}, "header 'Authorization'"),
        ("http", {"url": f"http://127.0.0.1:{port}/search", "headers": [["X-Api-Key", "${OPENAI_API_KEY}"]]},
         "header 'X-Api-Key'"),
        ("pgvector", {"dsn": f"postgresql://me:${{PGPASSWORD}}@127.0.0.1:{lab['pg_md5'].port}/db", "table": "t"},
         "dsn"),
        ("qdrant", {"collection": "c", "url": f"http://127.0.0.1:{port}", "api_key": "${QDRANT_API_KEY}"}, "api_key"),
    ]
    for kind, settings, setting in typed:
        with pytest.raises(InputError) as e:
            _test(kind, settings, env)
        msg = str(e.value)
        assert msg.startswith(f"{setting}: server variables are not available in class mode"), msg
        assert "use one of the class's connections: course" in msg
        assert not any(s in msg for s in ALL_SECRETS)
    _assert_clean(*lab.values())
    assert lab["open"].received == [] and lab["pg_md5"].received == []


@pytest.mark.parametrize("caller", CALLERS, ids=lambda c: c.role)
def test_plain_typed_settings_reach_only_allowed_hosts_and_carry_no_secret(lab, caller):
    env = _env(caller)
    port = lab["open"].port
    assert _test("http", {"url": f"http://127.0.0.1:{port}/search", "retries": 0}, env) == []
    for url in [f"http://127.0.0.1:{lab['judge'].port + 0}/elsewhere", "http://127.0.0.1:1/", "http://10.0.0.1/",
                "http://169.254.169.254/latest/meta-data/", f"http://localhost:{port + 1}/"]:
        if url.startswith(f"http://127.0.0.1:{lab['judge'].port}"):
            continue  # the judge's host is declared, so reachable (without its key): tested below
        with pytest.raises(InputError, match="not allowed by the class's policy"):
            _test("http", {"url": url, "retries": 0}, env)
    assert len(lab["open"].received) == 1
    _assert_clean(*lab.values())


@pytest.mark.parametrize("auth", ["pg_md5", "pg_clear"])
@pytest.mark.parametrize("caller", CALLERS, ids=lambda c: c.role)
def test_a_dsn_without_password_never_sends_pgpassword_or_pgpass(lab, caller, auth, tmp_path, monkeypatch):
    pgpass = tmp_path / ".pgpass"
    pgpass.write_text(f"*:*:*:*:{ENV_SECRETS['PGPASSWORD']}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    monkeypatch.setenv("HOME", str(tmp_path))
    env = _env(caller)
    port = lab[auth].port
    for dsn in [f"postgresql://me@127.0.0.1:{port}/db", f"host=127.0.0.1 port={port} user=me dbname=db",
                f"postgresql://me:@127.0.0.1:{port}/db"]:
        with pytest.raises(InputError) as e:
            _test("pgvector", {"dsn": dsn, "table": "t", "connect_timeout": 3}, env)
        words = "no password supplied" if auth == "pg_md5" else "server requested a cleartext password"
        assert words in str(e.value)
    assert lab[auth].received, "the listener was reached"
    _assert_clean(*lab.values())


@pytest.mark.parametrize("dsn,words", [
    ("postgresql://me@127.0.0.1:{port}/db?passfile=/tmp/pgpass", "passfile cannot be set in class mode"),
    ("host=127.0.0.1 port={port} user=me service=prod", "service cannot be set in class mode"),
    ("host=127.0.0.1 port={port} user=me hostaddr=10.0.0.1", "hostaddr cannot be set in class mode"),
    ("host=127.0.0.1 port={port} user=me sslkey=/etc/ssl/private/key.pem", "sslkey cannot be set"),
    ("host=/var/run/postgresql user=me", "unix sockets"),
    ("host=@abstract user=me", "unix sockets"),
    ("postgresql://me@127.0.0.1,10.0.0.1/db", "host lists"),
    ("dbname=db user=me", "give the database host"),
    ("postgresql://127.0.0.1:{port}/db", "give the user"),
    ("postgresql://me@127.0.0.1:5432/db", "not allowed by the class's policy (127.0.0.1:5432)"),
    ("postgresql://me@169.254.169.254:{port}/db", "not allowed by the class's policy"),
    ("not a dsn = = =", "not a valid PostgreSQL connection string"),
])
def test_a_typed_dsn_is_hardened(lab, dsn, words):
    env = _env(CALLERS[0])
    with pytest.raises(InputError) as e:
        _test("pgvector", {"dsn": dsn.format(port=lab["pg_md5"].port), "table": "t"}, env)
    assert words in str(e.value)
    assert lab["pg_md5"].received == []


@pytest.mark.parametrize("caller", CALLERS, ids=lambda c: c.role)
def test_qdrant_typed_url_is_policed_and_gets_no_key(lab, caller, tmp_path):
    env = _env(caller)
    with pytest.raises(InputError, match="not allowed by the class's policy"):
        _test("qdrant", {"collection": "c", "url": "http://127.0.0.1:6333", "timeout": 2}, env)
    with pytest.raises(InputError, match="cannot reach Qdrant"):
        _test("qdrant", {"collection": "c", "url": f"http://127.0.0.1:{lab['open'].port}", "timeout": 2}, env)
    assert lab["open"].received  # reached, without any key
    with pytest.raises(InputError, match="only folders inside the lab's data folders|no data folders"):
        _test("qdrant", {"collection": "c", "path": str(tmp_path / "anywhere")}, env)
    assert not (tmp_path / "anywhere").exists()
    _assert_clean(*lab.values())


@pytest.mark.parametrize("caller", CALLERS, ids=lambda c: c.role)
def test_the_judge_key_goes_only_to_the_configured_judge(lab, caller):
    env = _env(caller)
    item = AnswerItem("a1", "How long is the refund window?", "It is 30 days.", ("Refunds within 30 days.",))
    # a typed base URL (an allowed host): no key at all, whatever variable name is given
    typed = f"http://127.0.0.1:{lab['open'].port}/v1"
    for var in ("RAG_METRICS_JUDGE_KEY", "OPENAI_API_KEY", "MY_TOKEN"):
        cfg = JudgeConfig(typed, "m", api_key_env=var, max_retries=0, timeout=3)
        LLMJudge(cfg, api_key=judge_api_key(env, typed), cache=JudgeCache(None), policy=env.policy).judge([item])
        # even a caller that hands the operator's key over explicitly cannot send it elsewhere
        LLMJudge(cfg, api_key=TOML_JUDGE_KEY, cache=JudgeCache(None), policy=env.policy).judge([item])
    assert len(lab["open"].received) == 6
    _assert_clean(lab["open"])
    # an unlisted base URL fails before any call
    for url in ("http://127.0.0.1:9/v1", "http://10.0.0.1/v1", "http://169.254.169.254/v1"):
        with pytest.raises(PolicyError):
            LLMJudge(JudgeConfig(url, "m"), cache=JudgeCache(None), policy=env.policy)
    # the operator's judge gets the operator's key, and only it
    base = str(env.config.judge["base_url"])
    key = judge_api_key(env, base)
    assert key == TOML_JUDGE_KEY
    [res] = LLMJudge(JudgeConfig(base, "class-model", max_retries=0, timeout=3), api_key=key,
                     cache=JudgeCache(None), policy=env.policy).judge([item])
    assert res.scores["faithfulness"].status == "no_statements"
    sent = lab["judge"].all_bytes()
    assert f"Bearer {TOML_JUDGE_KEY}".encode() in sent
    assert not any(s.encode() in sent for s in ALL_SECRETS if s != TOML_JUDGE_KEY)


@pytest.mark.parametrize("caller", CALLERS, ids=lambda c: c.role)
def test_a_named_connection_is_stored_by_name_and_its_secret_goes_only_to_its_url(lab, caller, tmp_path):
    env = _env(caller)
    store = SystemStore(tmp_path / "systems")
    spec = store.add_connection("course search", "connection", {"connection": "course"})
    stored = (tmp_path / "systems" / "systems.json").read_text()
    assert json.loads(stored)["systems"][0]["settings"] == {"connection": "course"}
    assert TOML_CONN not in stored and str(lab["conn"].port) not in stored
    assert spec.description == "the class's connection course"
    system = store.system(spec, env=env)
    sr = system.rank({"q1": "refund window", "q2": "plans"}, 5)
    assert sr.ok and len(sr.run) == 2
    sent = lab["conn"].all_bytes()
    assert sent.count(f"Authorization: Bearer {TOML_CONN}".encode()) == 2
    assert not any(s.encode() in sent for s in ALL_SECRETS if s != TOML_CONN)
    _assert_clean(lab["open"], lab["judge"], lab["pg_md5"], lab["pg_clear"])
    with pytest.raises(InputError, match=r"the class has no connection 'nope' \(connections: course\)"):
        store.system(SystemSpec("x", "connection", settings={"connection": "nope"}), env=env)


def test_single_user_keeps_resolving_variables(lab, monkeypatch):
    """The operator's ${VAR} still works (environment and secrets), and reaches any host."""
    env = server_env(operator(), load_server_config(), {**os.environ, "EXTRA": "op-value"})
    port = lab["open"].port
    system = build_system(SystemSpec("op", "http", settings={
        "url": f"http://127.0.0.1:{port}/search", "headers": [["Authorization", "Bearer ${MY_TOKEN}"],
                                                                ["X-Extra", "${EXTRA}"]]}), None, env)
    assert system.test("q", 3) == []
    sent = lab["open"].all_bytes()
    assert f"Bearer {ENV_SECRETS['MY_TOKEN']}".encode() in sent and b"X-Extra: op-value" in sent


def test_qdrant_plain_http_is_pinned_to_the_checked_address(lab):
    import socket

    from rag_metrics.server.outbound import AllowEntry, OutboundPolicy

    env = _env(CALLERS[0])
    port = lab["open"].port
    calls: list = []

    def resolver(host, p, *a):
        calls.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", p))]

    env.policy = OutboundPolicy(False, (*env.policy.entries, AllowEntry(name="qdrant.test", port=port)), False, None,
                                resolver)
    with pytest.raises(InputError, match="cannot reach Qdrant"):
        _test("qdrant", {"collection": "c", "url": f"http://qdrant.test:{port}", "timeout": 2}, env)
    assert calls == ["qdrant.test"]
    # "qdrant.test" resolves nowhere else: the request arrived only because it went to the checked address
    assert lab["open"].received and f"127.0.0.1:{port}".encode() in lab["open"].all_bytes()
    _assert_clean(*lab.values())


# ---- fail closed: a class server never treats a missing session environment as the operator --------------
@pytest.mark.parametrize("template", ["${HOME}", "http://h/${SECRET_X}", "Bearer ${RAG_METRICS_JUDGE_KEY}"])
def test_a_class_server_without_a_session_env_resolves_nothing(monkeypatch, template):
    from rag_metrics.errors import InputError
    from rag_metrics.server.secrets import resolve

    monkeypatch.setenv("SECRET_X", "s3cr3t")
    monkeypatch.setenv("RAG_METRICS_JUDGE_KEY", "judge-secret")
    assert "${" not in resolve(template, "url") or template == ""  # single user: resolved
    monkeypatch.setenv("RAG_METRICS_CLASS_MODE", "1")
    with pytest.raises(InputError, match="class"):
        resolve(template, "url")


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "http://169.254.169.254/latest", "http://10.0.0.1/"])
def test_a_class_server_without_a_session_env_gets_a_students_policy(monkeypatch, tmp_path, url):
    from rag_metrics.server.connections import folders_of, policy_of
    from rag_metrics.server.outbound import PolicyError

    monkeypatch.setenv("RAG_METRICS_CONFIG", str(tmp_path / "lab.toml"))
    (tmp_path / "lab.toml").write_text(f'[lab]\ndata_roots = ["{tmp_path / "data"}"]\n')
    policy_of(None).check_url(url)  # single user: open
    monkeypatch.setenv("RAG_METRICS_CLASS_MODE", "1")
    with pytest.raises(PolicyError):
        policy_of(None).check_url(url)
    with pytest.raises(Exception, match="data folders"):
        folders_of(None).confine(str(tmp_path / "elsewhere"))
