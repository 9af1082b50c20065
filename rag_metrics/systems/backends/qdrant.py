"""Qdrant adapter (``qdrant-client``): an existing collection on a server or cluster (``url``), or
the client's embedded local mode (``path=`` a folder, or ``":memory:"``).

Queries use ``QdrantClient.query_batch_points`` / ``query_points`` (qdrant-client >= 1.10; the
older ``search`` method was removed in 1.16).  Qdrant point ids must be integers or UUIDs, so a
chunk id is usually kept in the payload: ``id_payload_key`` (default ``"chunk_id"``) names it;
set it to None to use the point id itself.  Qdrant ranks by its own score; for ``Euclid`` and
``Manhattan`` collections that score is a distance (smaller is better), so the lab negates it to
keep "higher is better" (the order is unchanged).

The question embedding comes from the lab's encoder; the collection's vector size is checked
against it.  Nothing here re-implements a vector index.
"""
from __future__ import annotations

import atexit
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag_metrics.errors import InputError
from rag_metrics.server.secrets import references, resolve
from rag_metrics.systems.base import BackendError, BatchedBackend, LiveSystem, ResultMemo
from rag_metrics.types import Chunk

__all__ = [
    "QdrantBackend",
    "QdrantConfig",
    "close_local_clients",
    "index_chunks",
    "make_client",
    "point_id",
    "qdrant_system",
]

_LOCAL_CLIENTS: dict[str, Any] = {}  # local mode allows one client per folder: share it
_LOCAL_LOCK = threading.Lock()
_BATCH = 64


def point_id(chunk_id: str) -> str:
    """The UUID point id the lab gives a chunk (uuid5 of the chunk id: stable across runs)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "rag-metrics:" + chunk_id))


@dataclass(frozen=True)
class QdrantConfig:
    """Settings of a Qdrant collection (validated on creation; holds no resolved secret).

    Attributes
    ----------
    collection
        Collection name.
    url
        Server or cluster URL (``http://localhost:6333``); exclusive with ``path``.
    path
        Local-mode folder, or ``":memory:"``; exclusive with ``url``.
    api_key
        A ``${VAR}`` reference only (a literal key is refused).
    vector_name
        Named vector to query (None: the collection's unnamed vector).
    id_payload_key
        Payload field holding the chunk id (None: the point id).
    timeout
        Seconds per request (server mode).
    """

    collection: str
    url: str | None = None
    path: str | None = None
    api_key: str | None = None
    vector_name: str | None = None
    id_payload_key: str | None = "chunk_id"
    timeout: int = 10

    def __post_init__(self) -> None:
        if not str(self.collection).strip():
            raise InputError("collection is empty; name the Qdrant collection")
        if (self.url is None) == (self.path is None):
            raise InputError("give exactly one of url (a Qdrant server, e.g. http://localhost:6333) or path "
                             "(local mode folder, or ':memory:')")
        if self.url is not None and not (self.url.startswith("http://") or self.url.startswith("https://")):
            raise InputError(f"url {self.url!r} must start with http:// or https://, e.g. http://localhost:6333")
        if self.api_key is not None and self.api_key.strip() and not references(self.api_key):
            raise InputError("api_key must be a ${VAR} reference (e.g. ${QDRANT_API_KEY}), never the key itself, so "
                             "it is not stored; export the variable first")
        t = self.timeout
        if isinstance(t, bool) or not isinstance(t, int) or not 1 <= t <= 120:
            raise InputError(f"timeout must be a whole number of seconds from 1 to 120, got {t!r}")

    def public(self) -> dict[str, Any]:
        return {"collection": self.collection, "url": self.url, "path": self.path, "api_key": self.api_key,
                "vector_name": self.vector_name, "id_payload_key": self.id_payload_key}

    @property
    def where(self) -> str:
        return self.url or f"local path {self.path!r}"


def make_client(config: QdrantConfig, env: Mapping[str, str] | None = None) -> Any:
    """A ``QdrantClient`` for ``config`` (local-mode folders share one client per process).

    ``env`` (a :class:`~rag_metrics.server.connections.ServerEnv` in the app) decides what may be reached:
    a local folder must lie inside the data roots of its folder policy, a server URL's host and
    port must pass its outbound policy (checked on the resolved addresses), and the API key
    resolves only where variables are open (the operator, or a named connection)."""
    from qdrant_client import QdrantClient

    from rag_metrics.server.connections import folders_of, policy_of

    if config.path is not None:
        key = config.path
        folders = folders_of(env)
        if key == ":memory:" and not folders.any_folder:
            # one in-memory store per process would be shared by every session of a class server
            raise InputError("an in-memory Qdrant (:memory:) is not available on a class server; use one of the "
                             "class's connections or a folder inside the lab's data folders")
        if key != ":memory:":
            key = str(folders.confine(key, "Qdrant local folder"))
        with _LOCAL_LOCK:
            client = _LOCAL_CLIENTS.get(key)
            if client is None:
                try:
                    client = QdrantClient(location=":memory:") if key == ":memory:" else QdrantClient(path=key)
                except (RuntimeError, OSError, ValueError) as e:
                    raise InputError(f"cannot open Qdrant local storage at {key!r} ({e}); is another process "
                                     "using it?") from None
                if not _LOCAL_CLIENTS:
                    atexit.register(close_local_clients)
                _LOCAL_CLIENTS[key] = client
            return client
    api_key = resolve(config.api_key, "api_key", env) if config.api_key else None
    policy = policy_of(env)
    scheme, host, port, ips = policy.check_url(str(config.url), 6333)
    url = str(config.url)
    if policy.class_mode and scheme == "http":  # pin plain HTTP to the checked address (no rebinding)
        from urllib.parse import urlsplit, urlunsplit

        parts = urlsplit(url)
        ip = f"[{ips[0]}]" if ":" in ips[0] else ips[0]
        url = urlunsplit((parts.scheme, f"{ip}:{port}", parts.path, parts.query, parts.fragment))
    return QdrantClient(url=url, api_key=api_key, timeout=config.timeout, check_compatibility=False)


def close_local_clients() -> None:
    """Close the shared local-mode clients (releases their folder locks; run at exit)."""
    with _LOCAL_LOCK:
        for client in _LOCAL_CLIENTS.values():
            try:
                client.close()
            except Exception:  # noqa: BLE001  closing at interpreter exit must never raise
                pass
        _LOCAL_CLIENTS.clear()


def _distance_sign(distance: Any) -> float:
    name = str(getattr(distance, "value", distance)).lower()
    return -1.0 if name in ("euclid", "manhattan") else 1.0


class QdrantBackend(BatchedBackend):
    """Queries a Qdrant collection with question embeddings from ``encoder``."""

    concurrency = 1

    def __init__(self, config: QdrantConfig, encoder: Any, env: Mapping[str, str] | None = None,
                 client: Any = None) -> None:
        self.config = config
        self.encoder = encoder
        self._env = env
        self._client = client
        self._checked = False
        self._sign = 1.0
        #: How messages name the collection's server (set for a named connection).
        self.label: str | None = None
        self.named: str | None = None

    def _detail(self, e: Exception) -> str:
        """The failure in words; what the server answered only when the policy echoes replies."""
        from rag_metrics.server.connections import policy_of

        if isinstance(e, InputError):
            return str(e)
        if policy_of(self._env).echo_bodies:
            return f"{type(e).__name__}: {str(e).strip()[:200]}"
        text = str(e).lower()
        word = next((w for w in ("timed out", "refused", "not allowed", "404", "401", "403", "500")
                     if w in text), None)
        return f"{type(e).__name__}{': ' + word if word else ''}"

    @property
    def public_config(self) -> Mapping[str, Any]:
        return {**self.config.public(), "encoder": getattr(self.encoder, "name", type(self.encoder).__name__)}

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = make_client(self.config, self._env)
        return self._client

    def check(self) -> int:
        """Check the collection and its vector size; returns the size."""
        cfg = self.config
        try:
            exists = self.client.collection_exists(cfg.collection)
            if not exists:
                names = [c.name for c in self.client.get_collections().collections]
                raise InputError(f"collection {cfg.collection!r} not found at {cfg.where}; collections there: "
                                 f"{', '.join(names) or 'none'}")
            info = self.client.get_collection(cfg.collection)
        except InputError:
            raise
        # Blind on purpose: qdrant-client raises per transport: REST ApiException (UnexpectedResponse,
        # ResponseHandlingException), QdrantException, grpc.RpcError, and local mode ValueError/OSError.
        except Exception as e:  # noqa: BLE001  any of them means "cannot reach" (see above)
            raise InputError(f"cannot reach Qdrant at {self.label or cfg.where} ({self._detail(e)}); "
                             "check the url, the api key variable and that the server runs") from None
        vectors = info.config.params.vectors
        if isinstance(vectors, Mapping):
            if cfg.vector_name is None or cfg.vector_name not in vectors:
                raise InputError(f"collection {cfg.collection!r} has named vectors {', '.join(map(repr, vectors))}; "
                                 "set vector_name to one of them")
            params = vectors[cfg.vector_name]
        else:
            if cfg.vector_name is not None:
                raise InputError(f"collection {cfg.collection!r} has one unnamed vector; leave vector_name empty")
            params = vectors
        size = int(params.size)
        want = int(self.encoder.dim)
        if size != want:
            raise InputError(f"collection {cfg.collection!r} holds {size}-dimensional vectors but the lab's encoder "
                             f"({getattr(self.encoder, 'name', 'encoder')}) gives {want}; the collection must be "
                             "embedded with the same model (or index the lab's corpus into a new collection)")
        key = cfg.id_payload_key
        if key is not None:
            points, _ = self.client.scroll(cfg.collection, limit=1, with_payload=True, with_vectors=False)
            if points and key not in (points[0].payload or {}):
                fields = ", ".join(map(repr, points[0].payload or {})) or "none"
                raise InputError(f"points of {cfg.collection!r} have no payload field {key!r} (fields: {fields}); set "
                                 "id_payload_key to the field holding the chunk id, or leave it empty to use point ids")
        self._sign = _distance_sign(params.distance)
        self._checked = True
        return size

    def _ids(self, points: Sequence[Any]) -> list[tuple[str, float]]:
        key = self.config.id_payload_key
        out = []
        for p in points:
            if key is None:
                cid = str(p.id)
            else:
                payload = p.payload or {}
                if key not in payload:
                    raise BackendError(f"point {p.id} has no payload field {key!r}; set id_payload_key to the "
                                       "field holding the chunk id, or leave it empty to use point ids")
                cid = str(payload[key])
            out.append((cid, self._sign * float(p.score)))
        return out

    def search_many(self, questions: Sequence[str], k: int) -> list[list[tuple[str, float]] | BackendError]:
        from qdrant_client import models

        if not self._checked:
            self.check()
        cfg = self.config
        vecs = np.asarray(self.encoder.encode(list(questions)), dtype=np.float32)
        payload: Any = [cfg.id_payload_key] if cfg.id_payload_key else False
        out: list[list[tuple[str, float]] | BackendError] = []
        for lo in range(0, len(questions), _BATCH):
            reqs = [models.QueryRequest(query=v.tolist(), limit=int(k), using=cfg.vector_name, with_payload=payload)
                    for v in vecs[lo:lo + _BATCH]]
            try:
                responses = self.client.query_batch_points(cfg.collection, requests=reqs)
            except Exception as e:  # noqa: BLE001  any transport's error (see check()): the whole batch failed
                err = BackendError(f"Qdrant query failed at {self.label or cfg.where} ({self._detail(e)})")
                out.extend([err] * len(reqs))
                continue
            for resp in responses:
                try:
                    out.append(self._ids(resp.points))
                except BackendError as e:
                    out.append(e)
        return out

    def close(self) -> None:
        if self.config.path is None and self._client is not None:
            self._client.close()
            self._client = None


def qdrant_system(config: QdrantConfig, encoder: Any, name: str = "qdrant", memo: ResultMemo | None = None,
                  env: Mapping[str, str] | None = None, client: Any = None) -> LiveSystem:
    """A live :class:`~rag_metrics.systems.base.System` over a Qdrant collection."""
    return LiveSystem(name, QdrantBackend(config, encoder, env, client), memo)


def index_chunks(config: QdrantConfig, chunks: Sequence[Chunk], encoder: Any | None = None,
                 embeddings: np.ndarray | None = None, *, replace: bool = False, distance: str = "Cosine",
                 env: Mapping[str, str] | None = None, client: Any = None, batch: int = 512,
                 progress: Callable[[int, int], None] | None = None) -> int:
    """Create ``config.collection`` and fill it with ``chunks``; returns the point count.

    Points get :func:`point_id` ids and the payload ``{id_payload_key: chunk id, "text": text}``.
    """
    from qdrant_client import models

    if embeddings is None:
        if encoder is None:
            raise InputError("index_chunks needs an encoder or precomputed embeddings")
        embeddings = encoder.encode([c.text for c in chunks])
    emb = np.asarray(embeddings, dtype=np.float32)
    if emb.ndim != 2 or len(emb) != len(chunks):
        raise InputError(f"embeddings have shape {emb.shape}; expected ({len(chunks)}, dim), one row per chunk")
    client = client if client is not None else make_client(config, env)
    if client.collection_exists(config.collection):
        if not replace:
            raise InputError(f"collection {config.collection!r} already exists at {config.where}; choose another name "
                             "or replace it")
        client.delete_collection(config.collection)
    params = models.VectorParams(size=int(emb.shape[1]), distance=models.Distance(distance))
    client.create_collection(config.collection,
                             vectors_config={config.vector_name: params} if config.vector_name else params)
    key = config.id_payload_key or "chunk_id"
    for lo in range(0, len(chunks), batch):
        pts = [models.PointStruct(id=point_id(c.id), vector=({config.vector_name: v.tolist()} if config.vector_name
                                                             else v.tolist()),
                                  payload={key: c.id, "text": c.text})
               for c, v in zip(chunks[lo:lo + batch], emb[lo:lo + batch])]
        client.upsert(config.collection, points=pts, wait=True)
        if progress:
            progress(min(lo + batch, len(chunks)), len(chunks))
    return len(chunks)
