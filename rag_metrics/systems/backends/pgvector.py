"""PostgreSQL + pgvector adapter (psycopg 3 and the ``pgvector`` Python package).

Two uses:

- **an existing table** the user names, with an id column, a ``vector`` embedding column and
  optionally a text column; the question embedding comes from the lab's encoder, so the table
  must have been embedded with the same model (the dimension is checked; a mismatch is a clear
  error naming both numbers);
- **the lab's corpus indexed into a new table** (:func:`index_chunks`), for measuring the
  retriever a team would deploy on PostgreSQL.

Ordering is done by PostgreSQL: ``ORDER BY embedding <=> q`` (cosine distance; score
``1 - distance`` = cosine similarity) or ``ORDER BY embedding <#> q`` (negative inner product;
score = inner product).  With no ANN index the scan is exact; with an HNSW/IVFFlat index on the
table, the results are the index's (approximate) ones, as in production.  Nothing here
re-implements a vector index.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rag_metrics.errors import InputError
from rag_metrics.server.secrets import redact_dsn, resolve
from rag_metrics.systems.base import BackendError, BatchedBackend, LiveSystem, ResultMemo
from rag_metrics.types import Chunk

__all__ = ["CLASS_DSN_KEYS", "METRICS", "PgvectorBackend", "PgvectorConfig", "class_dsn", "index_chunks",
           "pgvector_system"]

#: Distance orders offered: name -> (operator, score expression from the distance ``d``).
METRICS: dict[str, tuple[str, str]] = {"cosine": ("<=>", "1 - ({d})"), "inner_product": ("<#>", "-({d})")}


def _ident_ok(name: str) -> bool:
    return bool(name) and "\x00" not in name and len(name) <= 63


@dataclass(frozen=True)
class PgvectorConfig:
    """Settings of a pgvector table (validated on creation; holds no resolved secret).

    Attributes
    ----------
    dsn
        libpq connection string or URL; write passwords as ``${VAR}`` (or use ``PGPASSWORD``).
    table
        ``name`` or ``schema.name``.
    id_column, embedding_column, text_column
        Column names (``text_column`` may be None).
    metric
        ``"cosine"`` or ``"inner_product"``.
    connect_timeout
        Seconds.
    """

    dsn: str
    table: str
    id_column: str = "id"
    embedding_column: str = "embedding"
    text_column: str | None = "text"
    metric: Literal["cosine", "inner_product"] = "cosine"
    connect_timeout: int = 10

    def __post_init__(self) -> None:
        if not str(self.dsn).strip():
            raise InputError("dsn is empty; e.g. postgresql://user@localhost:5432/db (password in ${PGPASSWORD})")
        parts = str(self.table).split(".")
        if len(parts) > 2 or not all(_ident_ok(p) for p in parts):
            raise InputError(f"table {self.table!r} must be 'name' or 'schema.name'")
        for name in ("id_column", "embedding_column"):
            if not _ident_ok(str(getattr(self, name))):
                raise InputError(f"{name} {getattr(self, name)!r} is not a column name")
        if self.text_column is not None and not _ident_ok(str(self.text_column)):
            raise InputError(f"text_column {self.text_column!r} is not a column name (or leave it empty)")
        if self.metric not in METRICS:
            raise InputError(f"metric {self.metric!r} is not one of {', '.join(METRICS)}")
        ct = self.connect_timeout
        if isinstance(ct, bool) or not isinstance(ct, int) or not 1 <= ct <= 120:
            raise InputError(f"connect_timeout must be a whole number of seconds from 1 to 120, got {ct!r}")

    def public(self) -> dict[str, Any]:
        return {"dsn": redact_dsn(self.dsn), "table": self.table, "id_column": self.id_column,
                "embedding_column": self.embedding_column, "text_column": self.text_column,
                "metric": self.metric}

    @property
    def table_parts(self) -> tuple[str, ...]:
        return tuple(self.table.split("."))


_NO_PASSFILE = os.path.join(os.devnull, "no-pgpass")  # never a file: libpq reads no password file
#: The only DSN settings a DSN typed in a browser in class mode may carry.
CLASS_DSN_KEYS = ("host", "port", "dbname", "user", "password", "sslmode", "connect_timeout", "application_name")


def class_dsn(dsn: str, policy: Any, connect_timeout: int = 10) -> dict[str, str]:
    """The libpq settings of a DSN typed in a browser in class mode, hardened.

    Only :data:`CLASS_DSN_KEYS` are accepted (no ``service``, ``passfile``, ``hostaddr``, SSL key
    files, ...); the host must be a network host (no unix socket) allowed by ``policy``
    (:class:`~rag_metrics.server.outbound.OutboundPolicy`) and is pinned with ``hostaddr`` to the address
    checked; ``passfile`` is a path that cannot exist (under ``os.devnull``) and the password is
    explicit (``''`` when none), so libpq never uses the server's ``PGPASSWORD`` or ``~/.pgpass``;
    ``require_auth=!password`` refuses cleartext password authentication; no client certificate
    and no Kerberos credential of the server are offered.

    Raises
    ------
    InputError
        Naming the setting and the fix (:class:`~rag_metrics.server.outbound.PolicyError` for a refused host).
    """
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    except (ProgrammingError, ValueError):
        raise InputError("dsn is not a valid PostgreSQL connection string; e.g. "
                         "postgresql://me@db.example:5432/rag or host=db.example user=me dbname=rag") from None
    extra = sorted(set(params) - set(CLASS_DSN_KEYS))
    if extra:
        raise InputError(f"dsn: {', '.join(extra)} cannot be set in class mode; use only "
                         f"{', '.join(CLASS_DSN_KEYS)} (or one of the class's connections)")
    host = params.get("host", "").strip()
    if not host:
        raise InputError("dsn: give the database host (postgresql://me@db.example:5432/rag); the server's own "
                         "sockets cannot be used in class mode")
    if host.startswith(("/", "@", ".")) or "\\" in host or "," in host:
        raise InputError("dsn: the host must be one network host name or address; unix sockets and host lists "
                         "cannot be used in class mode")
    port_s = params.get("port", "5432").strip() or "5432"
    if not port_s.isdigit() or not 0 < int(port_s) < 65536:
        raise InputError(f"dsn: port {port_s!r} is not a port number")
    user = params.get("user", "").strip()
    if not user:
        raise InputError("dsn: give the user (postgresql://me@db.example/rag or user=me)")
    ips = policy.check(host, int(port_s))
    timeout = min(int(params["connect_timeout"]) if params.get("connect_timeout", "").isdigit() else connect_timeout,
                  connect_timeout)
    out = {"host": host, "hostaddr": ips[0], "port": port_s, "dbname": params.get("dbname") or user, "user": user,
           "password": params.get("password", ""), "passfile": _NO_PASSFILE, "require_auth": "!password",
           "sslmode": params.get("sslmode", "prefer"), "sslcertmode": "disable", "gssencmode": "disable",
           "connect_timeout": str(max(1, timeout)), "application_name": params.get("application_name", "rag-metrics")}
    return out


def _connect(config: PgvectorConfig, env: Mapping[str, str] | None) -> Any:
    import psycopg
    from pgvector.psycopg import register_vector

    from rag_metrics.server.connections import typed_in_class

    if typed_in_class(env):
        from rag_metrics.server.connections import policy_of

        params: dict[str, Any] = class_dsn(resolve(config.dsn, "dsn", env), policy_of(env), config.connect_timeout)
        shown = f"{params['host']}:{params['port']}/{params['dbname']}"
    else:
        params = {"conninfo": resolve(config.dsn, "dsn", env), "connect_timeout": config.connect_timeout}
        shown = redact_dsn(config.dsn)
    try:
        conn = psycopg.connect(autocommit=True, **params)
    except psycopg.Error as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"cannot connect to PostgreSQL at {shown} ({msg[:200]}); check the DSN, that "
                         "the server runs and the password") from None
    try:
        register_vector(conn)
    except psycopg.ProgrammingError:
        conn.close()
        raise InputError(f"the database at {redact_dsn(config.dsn)} has no pgvector extension; run "
                         "CREATE EXTENSION vector; (as a superuser) first") from None
    return conn


def _sql_table(config: PgvectorConfig) -> Any:
    from psycopg import sql

    return sql.Identifier(*config.table_parts)


class PgvectorBackend(BatchedBackend):
    """Queries a pgvector table with question embeddings from ``encoder``.

    The connection is opened, and the table checked, on first use; settings that make every
    question fail (unknown table or column, wrong dimension, no extension) raise
    :class:`InputError` naming the setting and the fix.
    """

    concurrency = 1

    def __init__(self, config: PgvectorConfig, encoder: Any, env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.encoder = encoder
        self._env = env
        self._conn: Any = None
        self.dim: int | None = None

    @property
    def public_config(self) -> Mapping[str, Any]:
        return {**self.config.public(), "encoder": getattr(self.encoder, "name", type(self.encoder).__name__)}

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed:
            self._conn = _connect(self.config, self._env)
            self.check()
        return self._conn

    def check(self) -> int:
        """Check table, columns and embedding dimension; returns the dimension."""
        cfg = self.config
        conn = self._conn if self._conn is not None and not self._conn.closed else _connect(cfg, self._env)
        self._conn = conn
        with conn.cursor() as cur:
            cur.execute("SELECT to_regclass(%s)", (".".join(f'"{p}"' for p in cfg.table_parts),))
            if cur.fetchone()[0] is None:
                cur.execute("SELECT table_schema || '.' || table_name FROM information_schema.columns "
                            "WHERE udt_name = 'vector' GROUP BY 1 ORDER BY 1 LIMIT 10")
                found = [r[0] for r in cur.fetchall()]
                raise InputError(f"table {cfg.table!r} not found in {redact_dsn(cfg.dsn)}; "
                                 "tables with a vector column: "
                                 f"{', '.join(found) or 'none'}")
            cur.execute("SELECT a.attname, format_type(a.atttypid, a.atttypmod), t.typname FROM pg_attribute a "
                        "JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 "
                        "AND NOT a.attisdropped", (".".join(f'"{p}"' for p in cfg.table_parts),))
            cols = {name: (fmt, typ) for name, fmt, typ in cur.fetchall()}
            for setting in ("id_column", "embedding_column", "text_column"):
                col = getattr(cfg, setting)
                if col is not None and col not in cols:
                    raise InputError(f"{setting} {col!r} is not a column of {cfg.table!r} (columns: "
                                     f"{', '.join(cols)}); name the right column")
            fmt, typ = cols[cfg.embedding_column]
            if typ != "vector":
                raise InputError(f"embedding_column {cfg.embedding_column!r} of {cfg.table!r} has type {fmt}, not "
                                 "vector; name the pgvector column")
            dim: int | None = None
            if "(" in fmt:
                dim = int(fmt.split("(")[1].rstrip(")"))
            else:
                from psycopg import sql

                cur.execute(sql.SQL("SELECT vector_dims({}) FROM {} LIMIT 1").format(
                    sql.Identifier(cfg.embedding_column), _sql_table(cfg)))
                row = cur.fetchone()
                dim = int(row[0]) if row else None
        want = int(self.encoder.dim)
        if dim is not None and dim != want:
            raise InputError(f"embedding_column {cfg.embedding_column!r} of {cfg.table!r} "
                             f"holds {dim}-dimensional vectors but the lab's encoder "
                             f"({getattr(self.encoder, 'name', 'encoder')}) gives {want}; "
                             "the table must be embedded with the same model (or index the lab's corpus into a new "
                             "table)")
        self.dim = dim or want
        return self.dim

    def _query(self) -> Any:
        from psycopg import sql

        cfg = self.config
        op, score = METRICS[cfg.metric]
        dist = sql.SQL("({} " + op + " %(q)s)").format(sql.Identifier(cfg.embedding_column))
        return sql.SQL("SELECT {id}::text, " + score.format(d="{dist}") + " FROM {table} ORDER BY {dist} LIMIT %(k)s"
                       ).format(id=sql.Identifier(cfg.id_column), dist=dist, table=_sql_table(cfg))

    def search_many(self, questions: Sequence[str], k: int) -> list[list[tuple[str, float]] | BackendError]:
        import psycopg

        conn = self._connection()
        vecs = np.asarray(self.encoder.encode(list(questions)), dtype=np.float32)
        query = self._query()
        out: list[list[tuple[str, float]] | BackendError] = []
        for _q, v in zip(questions, vecs):
            try:
                with conn.cursor() as cur:
                    cur.execute(query, {"q": v, "k": int(k)})
                    out.append([(str(i), float(s)) for i, s in cur.fetchall()])
            except psycopg.OperationalError as e:
                out.append(BackendError(f"PostgreSQL connection failed ({str(e).strip()[:200]}); check the server"))
                try:
                    conn = self._conn = _connect(self.config, self._env)
                except InputError:
                    pass
            except psycopg.Error as e:
                out.append(BackendError(f"query failed on {self.config.table!r} ({str(e).strip()[:200]})"))
        return out

    def close(self) -> None:
        if self._conn is not None and not self._conn.closed:
            self._conn.close()
        self._conn = None


def pgvector_system(config: PgvectorConfig, encoder: Any, name: str = "pgvector", memo: ResultMemo | None = None,
                    env: Mapping[str, str] | None = None) -> LiveSystem:
    """A live :class:`~rag_metrics.systems.base.System` over a pgvector table."""
    return LiveSystem(name, PgvectorBackend(config, encoder, env), memo)


def index_chunks(config: PgvectorConfig, chunks: Sequence[Chunk], encoder: Any | None = None,
                 embeddings: np.ndarray | None = None, *, replace: bool = False, hnsw: bool = False,
                 env: Mapping[str, str] | None = None, batch: int = 2048,
                 progress: Callable[[int, int], None] | None = None) -> int:
    """Create ``config.table`` and fill it with ``chunks`` (id, embedding, text); returns the row count.

    Parameters
    ----------
    embeddings
        Precomputed chunk embeddings (rows in chunk order); else ``encoder.encode`` is called.
    replace
        Drop an existing table of that name first (otherwise an existing table is an error).
    hnsw
        Also build an HNSW index (``vector_cosine_ops`` or ``vector_ip_ops``): approximate, like
        production; without it the scan is exact.
    """
    from psycopg import sql

    if embeddings is None:
        if encoder is None:
            raise InputError("index_chunks needs an encoder or precomputed embeddings")
        embeddings = encoder.encode([c.text for c in chunks])
    emb = np.asarray(embeddings, dtype=np.float32)
    if emb.ndim != 2 or len(emb) != len(chunks):
        raise InputError(f"embeddings have shape {emb.shape}; expected ({len(chunks)}, dim), one row per chunk")
    dim = int(emb.shape[1])
    cfg = config
    conn = _connect(cfg, env)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT to_regclass(%s)", (".".join(f'"{p}"' for p in cfg.table_parts),))
            if cur.fetchone()[0] is not None:
                if not replace:
                    raise InputError(f"table {cfg.table!r} already exists; choose another name or replace it")
                cur.execute(sql.SQL("DROP TABLE {}").format(_sql_table(cfg)))
            cols = [sql.SQL("{} text PRIMARY KEY").format(sql.Identifier(cfg.id_column)),
                    sql.SQL("{} vector({})").format(sql.Identifier(cfg.embedding_column), sql.Literal(dim))]
            if cfg.text_column:
                cols.append(sql.SQL("{} text").format(sql.Identifier(cfg.text_column)))
            cur.execute(sql.SQL("CREATE TABLE {} ({})").format(_sql_table(cfg), sql.SQL(", ").join(cols)))
            names = [cfg.id_column, cfg.embedding_column] + ([cfg.text_column] if cfg.text_column else [])
            copy_sql = sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT BINARY)").format(
                _sql_table(cfg), sql.SQL(", ").join(map(sql.Identifier, names)))
            types = ["text", "vector"] + (["text"] if cfg.text_column else [])
            for lo in range(0, len(chunks), batch):
                with cur.copy(copy_sql) as copy:
                    copy.set_types(types)
                    for c, v in zip(chunks[lo:lo + batch], emb[lo:lo + batch]):
                        copy.write_row([c.id, v, c.text] if cfg.text_column else [c.id, v])
                if progress:
                    progress(min(lo + batch, len(chunks)), len(chunks))
            if hnsw:
                ops = "vector_cosine_ops" if cfg.metric == "cosine" else "vector_ip_ops"
                cur.execute(sql.SQL("CREATE INDEX ON {} USING hnsw ({} " + ops + ")").format(
                    _sql_table(cfg), sql.Identifier(cfg.embedding_column)))
            cur.execute(sql.SQL("ANALYZE {}").format(_sql_table(cfg)))
    finally:
        conn.close()
    return len(chunks)
