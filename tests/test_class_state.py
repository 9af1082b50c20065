"""The class's shared state in files or in PostgreSQL (rag_metrics.io.state; issue 52): the same stores on
both backends, changes from two "hosts" at once (two backends with their own connections) lose nothing, the
seat cap holds across them, the schema's migrations run once, and the DSN's password stays a secret."""
from __future__ import annotations

import threading

import pytest

from rag_metrics.errors import InputError
from rag_metrics.io.state import FileState, PostgresState, class_state, migrate, state_dsn, where
from rag_metrics.server.budgets import RateLimiter, SpendLedger
from rag_metrics.server.seats import ClassFull, SeatRegistry


@pytest.fixture(params=["files", "postgresql"])
def two_hosts(request, tmp_path):
    """Two backends over one class's state, as two hosts have: two FileStates on one folder, or two
    PostgresStates (each its own connections) on one database."""
    if request.param == "files":
        yield FileState(tmp_path), FileState(tmp_path)
        return
    dsn = request.getfixturevalue("class_state_pg")
    a, b = PostgresState(dsn), PostgresState(dsn)
    with a._connection() as conn:
        conn.execute("TRUNCATE lab_state")
    yield a, b
    a.close()
    b.close()


def _together(n: int, work) -> list:
    out: list = [None] * n

    def run(i: int) -> None:
        try:
            out[i] = work(i)
        except Exception as e:  # noqa: BLE001 - kept to be checked
            out[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_changes_from_two_hosts_at_once_lose_nothing(two_hosts, tmp_path):
    a, b = two_hosts
    ledgers = [SpendLedger(tmp_path, state=a), SpendLedger(tmp_path, state=b)]
    _together(16, lambda i: [ledgers[i % 2].add("s1", calls=1, tokens=10) for _ in range(5)])
    assert ledgers[0].spent("s1") == ledgers[1].spent("s1") == (80, 800)


def test_the_seat_cap_holds_across_hosts(two_hosts, tmp_path):
    a, b = two_hosts
    regs = [SeatRegistry(tmp_path, state=a), SeatRegistry(tmp_path, state=b)]
    got = _together(10, lambda i: regs[i % 2].create(cap=4))
    made = [g for g in got if isinstance(g, tuple)]
    assert len(made) == 4 and all(isinstance(g, ClassFull) for g in got if not isinstance(g, tuple))
    assert sorted(s.number for s in regs[1].seats()) == [1, 2, 3, 4]  # each seat made once, numbered once
    assert {regs[1].find(secret).id for _, secret in made} == {s.id for s, _ in made}


def test_a_rate_limit_counts_the_hits_of_every_host(two_hosts, tmp_path):
    a, b = two_hosts
    rates = [RateLimiter(tmp_path, state=a), RateLimiter(tmp_path, state=b)]
    allowed = _together(12, lambda i: rates[i % 2].hit("seat:10.0.0.5", 5, 600))
    assert allowed.count(True) == 5


def test_the_migrations_run_once_and_record_the_version(class_state_pg):
    import psycopg

    with psycopg.connect(class_state_pg, autocommit=True) as conn:
        assert migrate(conn) == migrate(conn) == 1
        assert conn.execute("SELECT count(*) FROM lab_schema").fetchone() == (1,)
        assert conn.execute("SELECT to_regclass('lab_state') IS NOT NULL").fetchone() == (True,)


def test_the_password_is_a_reference_and_never_shown(class_state_pg, monkeypatch):
    from urllib.parse import urlsplit

    parts = urlsplit(class_state_pg)  # pgserver: postgresql://postgres:@/postgres?host=<socket folder>
    with_ref = class_state_pg.replace(f"{parts.username}:@", f"{parts.username}:${{LAB_TEST_PG_PASSWORD}}@", 1)
    assert "${LAB_TEST_PG_PASSWORD}" in with_ref
    monkeypatch.delenv("LAB_TEST_PG_PASSWORD", raising=False)
    with pytest.raises(InputError, match=r"lab.state refers to \$\{LAB_TEST_PG_PASSWORD\}, which is not set"):
        PostgresState(with_ref).read("seats.json")
    monkeypatch.setenv("LAB_TEST_PG_PASSWORD", "")  # (pgserver trusts its socket: any password does)
    backend = PostgresState(with_ref)
    assert backend.read("no-such-document") is None
    backend.close()
    secret = "postgresql://lab:hunter2-secret@127.0.0.1:1/lab"
    assert "hunter2" not in where(secret) and "hunter2" not in repr(PostgresState(secret))
    with pytest.raises(InputError) as e:
        PostgresState(secret).read("seats.json")  # nothing listens on port 1
    assert "127.0.0.1:1/lab" in str(e.value) and "hunter2" not in str(e.value)


def test_state_is_files_unless_postgresql_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("RAG_METRICS_STATE", raising=False)
    monkeypatch.setenv("RAG_METRICS_CONFIG", str(tmp_path / "lab.toml"))
    (tmp_path / "lab.toml").write_text("[lab]\n", encoding="utf-8")
    assert isinstance(class_state(tmp_path), FileState)
    monkeypatch.setenv("RAG_METRICS_STATE", "mysql://lab@10.0.0.8/lab")
    with pytest.raises(InputError, match="must be a postgresql://"):
        state_dsn()
    monkeypatch.delenv("RAG_METRICS_STATE")
    (tmp_path / "lab.toml").write_text('[lab]\nstate = "sqlite:///x"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"lab.state must be a postgresql://"):
        state_dsn()
    (tmp_path / "lab.toml").write_text('[lab]\nstate = "postgresql://lab:${P}@10.0.0.8/lab"\n', encoding="utf-8")
    assert state_dsn() == "postgresql://lab:${P}@10.0.0.8/lab"
    assert isinstance(class_state(tmp_path), PostgresState)  # (nothing connects until a store reads)


def test_a_class_whose_postgresql_cannot_be_reached_does_not_start(monkeypatch):
    from rag_metrics.server.deploy import check_state

    monkeypatch.setenv("RAG_METRICS_CONFIG", "/nonexistent/lab.toml")
    with pytest.raises(SystemExit, match=r"lab class: lab.state: cannot connect .*127.0.0.1:1/lab") as e:
        check_state({"RAG_METRICS_STATE": "postgresql://lab:hunter2@127.0.0.1:1/lab"})
    assert "hunter2" not in str(e.value)
    assert check_state({"RAG_METRICS_WORKSPACE": "/srv/ws"}).startswith("files in /srv/ws/.class")


def _taken(dsn: str, key: str) -> bool:
    """Whether another session holds PostgreSQL's advisory lock of ``key`` (asked without waiting)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        free = conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)).fetchone()[0]
        if free:
            conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
        return not free


def test_a_workspace_file_is_locked_across_hosts_in_postgresql(class_state_pg, tmp_path, monkeypatch):
    """A file of a shared workspace: ``flock`` holds on one host only, so with the class's state in PostgreSQL
    io.files.locked also holds that database's advisory lock of the same path (every host sees it)."""
    from rag_metrics.io.files import locked

    target = tmp_path / "golden.jsonl"
    key = str(tmp_path / ".golden.jsonl.lock")
    monkeypatch.setenv("RAG_METRICS_STATE", class_state_pg)
    with locked(target):
        assert _taken(class_state_pg, key)
        with locked(target):  # re-entrant in one thread, as before
            assert _taken(class_state_pg, key)
    assert not _taken(class_state_pg, key)
    with locked(target, shared=True):
        assert _taken(class_state_pg, key)  # a shared holder keeps writers out
    other = PostgresState(class_state_pg)  # another host's backend
    with other.lock(key):
        assert _taken(class_state_pg, key)
    other.close()
    monkeypatch.delenv("RAG_METRICS_STATE")
    monkeypatch.setenv("RAG_METRICS_CONFIG", str(tmp_path / "none.toml"))
    with locked(target):  # files: flock alone
        assert not _taken(class_state_pg, key)
