"""The class's shared state in PostgreSQL (``lab.state``): its backend, its schema and its locks.

:class:`PostgresState` keeps each of the class's JSON documents as a row of ``lab_state`` and changes it in
a transaction that holds the row's lock; :meth:`PostgresState.lock` is a lock across hosts for a file of a
workspace on shared storage (:func:`rag_metrics.io.files.locked` takes it when the class's state is in
PostgreSQL: :func:`lock_backend`).  The files backend and the choice between the two are in
:mod:`rag_metrics.io.state`.
"""
from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Iterator
from typing import Any

from rag_metrics.errors import InputError

__all__ = ["MIGRATIONS", "Document", "PostgresState", "backend_for", "lock_backend", "migrate", "state_dsn", "where"]

#: The schema, one numbered step each, applied in order and recorded in ``lab_schema`` (never edit a
#: step that shipped: add the next one).
MIGRATIONS: tuple[tuple[int, str], ...] = (
    (1, """CREATE TABLE IF NOT EXISTS lab_state (
             name text PRIMARY KEY,
             body text NOT NULL,
             changed timestamptz NOT NULL DEFAULT now())"""),
)
_MIGRATION_LOCK = 0x7261676d  # pg_advisory_xact_lock key of the migrations ("ragm")


class Document:
    """A document being changed: ``text`` is what was stored (``None``: nothing yet); set it to what
    is to be stored.  Left ``None`` (or unchanged), nothing is written."""

    def __init__(self, text: str | None) -> None:
        self.text = text
        self.before = text


class PostgresState:
    """The documents as rows of ``lab_state`` in PostgreSQL (``dsn``: ``postgresql://...``, its
    ``${VAR}`` references resolved from the environment).  A process keeps up to ``connections``
    connections (threads wait for a free one); each change is one transaction."""

    kind = "postgresql"

    def __init__(self, dsn: str, connections: int = 4) -> None:
        self.dsn = dsn
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._room = threading.BoundedSemaphore(max(1, connections))
        self._migrated = False
        self._guard = threading.Lock()
        # the advisory locks' own connections: a lock is held while its holder works (and may take
        # another lock, or change a document), so they never wait for a document's connection
        self._lock_idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._lock_room = threading.BoundedSemaphore(32)

    def __repr__(self) -> str:
        return f"PostgresState({where(self.dsn)!r})"

    def _connect(self) -> Any:
        import psycopg

        from rag_metrics.config import environment, expand

        dsn = expand(self.dsn, "lab.state", environment())  # the operator's own setting: its ${VAR} references
        try:
            conn = psycopg.connect(dsn, autocommit=True, connect_timeout=10)
        except psycopg.Error as e:
            raise InputError(f"lab.state: cannot connect to the class's PostgreSQL {where(self.dsn)} "
                             f"({str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__}); "
                             "check the address, the database and the password (a ${VAR} reference)") from None
        with self._guard:
            if not self._migrated:
                migrate(conn)
                self._migrated = True
        return conn

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        self._room.acquire()
        try:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = self._connect()
            if conn.closed or conn.broken:
                conn = self._connect()
            try:
                yield conn
            except BaseException:
                if conn.info.transaction_status != 0:  # not idle: a failed or unfinished transaction
                    with contextlib.suppress(Exception):
                        conn.close()
                raise
            if not conn.closed:
                self._idle.put(conn)
        finally:
            self._room.release()

    def read(self, name: str) -> str | None:
        with self._connection() as conn:
            row = conn.execute("SELECT body FROM lab_state WHERE name = %s", (name,)).fetchone()
        return None if row is None else str(row[0])

    @contextlib.contextmanager
    def change(self, name: str) -> Iterator[Document]:
        with self._connection() as conn, conn.transaction():
            row = conn.execute("SELECT body FROM lab_state WHERE name = %s FOR UPDATE", (name,)).fetchone()
            if row is None:  # the first change of this document: make its row, then hold its lock
                conn.execute("INSERT INTO lab_state (name, body) VALUES (%s, '') ON CONFLICT (name) DO NOTHING",
                             (name,))
                row = conn.execute("SELECT body FROM lab_state WHERE name = %s FOR UPDATE", (name,)).fetchone()
                doc = Document(row[0] or None)
            else:
                doc = Document(str(row[0]))
            yield doc
            if doc.text is not None and doc.text != doc.before:
                conn.execute("UPDATE lab_state SET body = %s, changed = now() WHERE name = %s", (doc.text, name))

    @contextlib.contextmanager
    def lock(self, key: str, *, shared: bool = False) -> Iterator[None]:
        """Hold PostgreSQL's advisory lock of ``key`` (exclusive, or ``shared`` with other shared holders)
        while the block runs: a lock every host honours, for a read-modify-write of a file on shared
        storage, where ``flock`` is not one (NFS).  Its connection is one of up to 32 kept for locks."""
        self._lock_room.acquire()
        conn = None
        try:
            try:
                conn = self._lock_idle.get_nowait()
            except queue.Empty:
                conn = self._connect()
            if conn.closed or conn.broken:
                conn = self._connect()
            how = "_shared" if shared else ""
            conn.execute(f"SELECT pg_advisory_lock{how}(hashtextextended(%s, 0))", (key,))
            try:
                yield
            finally:
                conn.execute(f"SELECT pg_advisory_unlock{how}(hashtextextended(%s, 0))", (key,))
            self._lock_idle.put(conn)
            conn = None
        finally:
            if conn is not None:  # something failed: the session (and any lock it held) ends with it
                with contextlib.suppress(Exception):
                    conn.close()
            self._lock_room.release()

    def close(self) -> None:
        for idle in (self._idle, self._lock_idle):
            while True:
                try:
                    conn = idle.get_nowait()
                except queue.Empty:
                    break
                with contextlib.suppress(Exception):
                    conn.close()


def migrate(conn: Any) -> int:
    """Apply the :data:`MIGRATIONS` this database has not had yet (one transaction, under an advisory
    lock); returns the schema's version."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS lab_schema (version int PRIMARY KEY, "
                     "applied timestamptz NOT NULL DEFAULT now())")
        done = {int(r[0]) for r in conn.execute("SELECT version FROM lab_schema").fetchall()}
        for version, sql in MIGRATIONS:
            if version not in done:
                conn.execute(sql)
                conn.execute("INSERT INTO lab_schema (version) VALUES (%s)", (version,))
    return max(v for v, _ in MIGRATIONS)


def where(dsn: str) -> str:
    """The PostgreSQL a DSN names, for messages: ``host:port/database`` (never the user or the password).

    >>> where("postgresql://lab:secret@10.0.0.8:5433/lab?sslmode=require")
    'postgresql://10.0.0.8:5433/lab'
    """
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(dsn)
    host = parts.hostname or (parse_qs(parts.query).get("host") or ["local socket"])[0]
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"postgresql://{host}{port}{parts.path or ''}"


def state_dsn(env: Any = None) -> str:
    """The class's state DSN: ``RAG_METRICS_STATE`` (``./lab class --state`` sets it), else ``lab.state``
    of the operator's configuration; ``""``: files.  Anything but a ``postgresql://`` (or
    ``postgres://``) URL is refused with a message."""
    from rag_metrics.config import load_server_config, setting

    dsn = setting("state", env) or load_server_config(env).state
    dsn = dsn.strip()
    if dsn and not dsn.startswith(("postgresql://", "postgres://")):
        raise InputError("lab.state (RAG_METRICS_STATE) must be a postgresql://user@host/database URL (or empty for "
                         f"files in the workspace), got one starting {dsn.split(':', 1)[0][:20]!r}")
    return dsn


_BACKENDS: dict[str, PostgresState] = {}
_BACKENDS_GUARD = threading.Lock()


def backend_for(dsn: str) -> PostgresState:
    """The one :class:`PostgresState` of this process for ``dsn`` (its connections shared by every store)."""
    with _BACKENDS_GUARD:
        got = _BACKENDS.get(dsn)
        if got is None:
            got = _BACKENDS[dsn] = PostgresState(dsn)
        return got


_LOCKS_FOR: dict[tuple[str, str, int], str] = {}


def lock_backend() -> PostgresState | None:
    """The PostgreSQL whose advisory locks guard the workspace's files across hosts: the class's state's
    (:func:`state_dsn`), else ``None`` (files: ``flock`` alone, one host).  Looked up on every lock, the
    configuration file read again only when it changed."""
    from rag_metrics.config import environment, setting

    env = environment()
    config = setting("config", env) or os.path.join(".streamlit", "secrets.toml")
    try:
        mtime = os.stat(config).st_mtime_ns
    except OSError:
        mtime = 0
    key = (setting("state", env), config, mtime)
    dsn = _LOCKS_FOR.get(key)
    if dsn is None:
        try:
            dsn = state_dsn(env)
        except InputError:  # a configuration that cannot be read: the stores say so; a file keeps its flock
            dsn = ""
        _LOCKS_FOR[key] = dsn
    return backend_for(dsn) if dsn else None
