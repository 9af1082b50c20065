"""Where a class keeps its shared state: files (the default) or PostgreSQL (no Streamlit here).

The class's small stores (seats and rejoin codes, rate limits and guess counters, the spend, embed and
tutor ledgers, teacher sessions and claims, the seat-proof key and used proofs) are each one JSON
document, named like its file (``seats.json``, ``rates.json``, ...).  A store reads its document
(:meth:`FileState.read`) and changes it in one step (:meth:`FileState.change`: read, modify, write),
through one of two backends with the same two methods:

- :class:`FileState` (the default; one host): ``<workspace root>/.class/<name>``, changed under an
  exclusive ``flock`` and written atomically (write, then rename), as before.
- :class:`PostgresState` (``lab.state = "postgresql://..."``; several hosts): one row per document in
  the table ``lab_state``, changed in a transaction that holds the row's lock (``SELECT ... FOR
  UPDATE``).  PostgreSQL's row lock replaces ``flock``, which shared file systems (NFS) do not honour
  across hosts.  The schema is made by numbered migrations (:data:`MIGRATIONS`), applied once at the
  first connection of a process, under an advisory lock (two hosts starting at once apply them once).

The DSN is the operator's secret: write its password as a ``${VAR}`` reference
(``postgresql://lab:${LAB_PG_PASSWORD}@10.0.0.8/lab``), resolved from the environment when the
connection opens (:func:`rag_metrics.config.expand`); messages name only its host, port and database
(:func:`where`).

>>> import tempfile
>>> st = FileState(tempfile.mkdtemp())
>>> with st.change("demo.json") as doc:
...     doc.text = '{"a": 1}'
>>> st.read("demo.json")
'{"a": 1}'
"""
from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from rag_metrics.errors import InputError

__all__ = ["MIGRATIONS", "ClassState", "Document", "FileState", "PostgresState", "class_state", "migrate", "state_dsn",
           "where"]

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


class ClassState(Protocol):
    """A backend of the class's shared state (:class:`FileState`, :class:`PostgresState`)."""

    def read(self, name: str) -> str | None: ...

    def change(self, name: str) -> contextlib.AbstractContextManager[Document]: ...


class FileState:
    """The documents as files in ``<root>/.class`` (``root``: the workspace root)."""

    kind = "files"

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.folder = Path(root) / ".class"

    def __repr__(self) -> str:
        return f"FileState({str(self.folder)!r})"

    def path(self, name: str) -> Path:
        return self.folder / name

    def read(self, name: str) -> str | None:
        """The document's text; ``None`` when there is none (an unreadable file reads as damaged text)."""
        try:
            return self.path(name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return ""

    @contextlib.contextmanager
    def change(self, name: str) -> Iterator[Document]:
        from rag_metrics.io.files import atomic_write_text, locked

        path = self.path(name)
        with locked(path):
            doc = Document(self.read(name))
            yield doc
            if doc.text is not None and doc.text != doc.before:
                atomic_write_text(path, doc.text)


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

    def close(self) -> None:
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                return
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


def class_state(root: str | os.PathLike[str], dsn: str | None = None) -> FileState | PostgresState:
    """The backend of the class whose workspace root is ``root``: PostgreSQL when ``dsn`` (else
    :func:`state_dsn`) names one (one backend, with its connections, per DSN and process), else files."""
    dsn = state_dsn() if dsn is None else dsn
    if not dsn:
        return FileState(root)
    with _BACKENDS_GUARD:
        got = _BACKENDS.get(dsn)
        if got is None:
            got = _BACKENDS[dsn] = PostgresState(dsn)
        return got
