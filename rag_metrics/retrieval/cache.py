"""On-disk embedding cache keyed by model name and SHA-256 of the text; shipped embeddings.

Format (safe: NumPy only, never pickle)
---------------------------------------
``<directory>/<model-slug>/`` holds *shards* ``shard-<time>-<random>.npz``, each written once,
atomically (temporary file + ``os.replace``), with two arrays:

- ``keys``: ``uint8 (n, 32)`` raw SHA-256 digests of the UTF-8 texts (not NumPy ``S32``, which
  drops trailing zero bytes; shards written as ``S32`` are still read, padded back to 32 bytes);
- ``vectors``: ``float32 (n, dim)`` embeddings, row ``i`` for ``keys[i]``.

Shards are read with ``np.load(..., allow_pickle=False)``.  A shard that cannot be read, or whose
dimension differs from the first one read, is ignored (and so re-embedded).  When a model folder
holds more than :data:`COMPACT_AFTER` shards they are merged into one.  The model slug is the
model name made filesystem-safe plus 8 hex digits of its SHA-256, so ``a/b`` and ``a_b`` differ.

Shipped embeddings (``sample_corpus/embeddings/``)
--------------------------------------------------
``embeddings.npy`` (float32, one row per chunk) and ``manifest.json``::

    {"format": 1, "model": "all-MiniLM-L6-v2", "dim": 384, "chunk_size": 500,
     "chunk_overlap": 100, "chunk_ids": [...], "text_sha256": [...], "array_sha256": "..."}

:meth:`EmbeddingCache.add_shipped` verifies ``array_sha256`` and adds the rows as a read-only layer
keyed by ``text_sha256``: a chunk whose text changed since shipping has another hash, misses, and
only that chunk is re-embedded.  :func:`ship_embeddings` (re)writes the folder.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from rag_metrics import jobs
from rag_metrics.config import setting
from rag_metrics.errors import InputError
from rag_metrics.retrieval.encoders import Encoder, Progress

__all__ = [
    "COMPACT_AFTER",
    "EmbeddingCache",
    "default_cache_dir",
    "encode_with_cache",
    "text_key",
    "ship_embeddings",
    "read_shipped",
    "ShippedEmbeddings",
]

#: Merge a model's shards into one when there are more than this many.
COMPACT_AFTER = 32
#: Texts embedded between two cache writes in :func:`encode_with_cache`: an interrupted (cancelled)
#: embedding keeps every finished slab, so starting again only embeds the rest.
SLAB = 512
#: More new texts than this are embedded in a worker slot (:func:`rag_metrics.jobs.slot`).
QUEUED_OVER = 64
_FORMAT = 1


def default_cache_dir() -> Path:
    """``$RAG_METRICS_CACHE`` if set, else ``~/.cache/rag_metrics``."""
    env = setting("cache")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "rag_metrics"


def text_key(text: str) -> bytes:
    """Raw 32-byte SHA-256 digest of the UTF-8 text (the cache key within one model)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def _model_slug(model: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._")[:80] or "model"
    return f"{safe}-{hashlib.sha256(model.encode('utf-8')).hexdigest()[:8]}"


def _atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; cache and shipped files are not secrets
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class _Layer:
    """In-memory lookup ``key -> row`` over one or more float32 blocks of equal dim."""

    def __init__(self) -> None:
        self.index: dict[bytes, tuple[int, int]] = {}
        self.blocks: list[NDArray[np.float32]] = []
        self.dim: int | None = None

    def add(self, keys: Sequence[bytes], vectors: NDArray[np.float32]) -> bool:
        if vectors.ndim != 2 or len(keys) != vectors.shape[0]:
            return False
        if self.dim is None:
            self.dim = int(vectors.shape[1])
        elif vectors.shape[1] != self.dim:
            return False
        b = len(self.blocks)
        self.blocks.append(vectors)
        for r, k in enumerate(keys):
            self.index[bytes(k)] = (b, r)
        return True

    def get(self, key: bytes) -> NDArray[np.float32] | None:
        loc = self.index.get(key)
        return None if loc is None else self.blocks[loc[0]][loc[1]]


class EmbeddingCache:
    """Embedding cache on disk (see the module docstring for the format).

    Parameters
    ----------
    directory : path-like, optional
        Cache root; default :func:`default_cache_dir`.
    read_only : bool
        Never write (lookups only).

    Attributes
    ----------
    hits, misses : int
        Lookup counters since creation (for tests and benchmarks).
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None, *,
                 read_only: bool = False) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.read_only = read_only
        self.hits = 0
        self.misses = 0
        self._disk: dict[str, _Layer] = {}
        self._shipped: dict[str, _Layer] = {}
        self._lock = threading.RLock()  # one cache object may serve several app sessions

    # -- disk layer -------------------------------------------------------------------------
    def model_dir(self, model: str) -> Path:
        return self.directory / _model_slug(model)

    def _shards(self, model: str) -> list[Path]:
        d = self.model_dir(model)
        return sorted(d.glob("shard-*.npz")) if d.is_dir() else []

    def _load(self, model: str) -> _Layer:
        layer = self._disk.get(model)
        if layer is not None:
            return layer
        layer = _Layer()
        for shard in self._shards(model):
            keys, vecs = self._read_shard(shard)
            if keys is not None and vecs is not None:
                layer.add(keys, vecs)
        self._disk[model] = layer
        if not self.read_only and len(self._shards(model)) > COMPACT_AFTER:
            self.compact(model)
        return layer

    @staticmethod
    def _read_shard(path: Path) -> tuple[list[bytes] | None, NDArray[np.float32] | None]:
        try:
            with np.load(path, allow_pickle=False) as z:
                raw, vecs = z["keys"], z["vectors"]
        except Exception:  # noqa: BLE001 - a broken or vanished shard is just a miss
            return None, None
        if vecs.dtype != np.float32 or vecs.ndim != 2 or len(raw) != len(vecs):
            return None, None
        if raw.dtype == np.uint8 and raw.ndim == 2 and raw.shape[1] == 32:
            keys = [row.tobytes() for row in raw]
        elif raw.dtype == np.dtype("S32") and raw.ndim == 1:  # early format: restore zero bytes
            keys = [bytes(k).ljust(32, b"\0") for k in raw]
        else:
            return None, None
        return keys, vecs

    def _write_shard(self, model: str, keys: Sequence[bytes], vectors: NDArray[np.float32]) -> None:
        name = f"shard-{time.time_ns():020d}-{secrets.token_hex(4)}.npz"
        k = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32)
        v = np.ascontiguousarray(vectors, dtype=np.float32)
        _atomic_write(self.model_dir(model) / name, lambda fh: np.savez(fh, keys=k, vectors=v))
        meta = self.model_dir(model) / "model.json"
        if not meta.exists():
            _atomic_write(meta, lambda fh: fh.write(json.dumps(
                {"model": model, "dim": int(v.shape[1]), "format": _FORMAT}).encode()))

    def compact(self, model: str) -> None:
        """Merge all shards of ``model`` into one (readers never see a partial state)."""
        shards = self._shards(model)
        if len(shards) <= 1:
            return
        layer = self._disk.get(model) or self._load(model)
        if not layer.index:
            return
        keys = list(layer.index)
        vecs = np.stack([layer.get(k) for k in keys]).astype(np.float32)  # type: ignore[misc]  # every indexed key has a vector
        self._write_shard(model, keys, vecs)
        for s in shards:
            try:
                s.unlink()
            except OSError:
                pass

    # -- shipped layer ----------------------------------------------------------------------
    def add_shipped(self, directory: str | os.PathLike[str]) -> ShippedEmbeddings | None:
        """Add verified shipped embeddings as a read-only layer; ``None`` if absent or invalid."""
        shipped = read_shipped(directory)
        if shipped is None:
            return None
        with self._lock:
            layer = self._shipped.setdefault(shipped.model, _Layer())
            layer.add([bytes.fromhex(h) for h in shipped.text_sha256], shipped.vectors)
        return shipped

    # -- public lookups ---------------------------------------------------------------------
    def get_many(self, model: str, keys: Sequence[bytes], dim: int | None = None
                 ) -> dict[bytes, NDArray[np.float32]]:
        """Vectors found for ``keys`` (missing keys are absent from the result).

        With ``dim``, vectors of another dimension (a different model under the same name) are
        treated as missing.
        """
        with self._lock:
            return self._get_many(model, keys, dim)

    def _get_many(self, model: str, keys: Sequence[bytes], dim: int | None
                  ) -> dict[bytes, NDArray[np.float32]]:
        disk: _Layer | None = self._load(model)
        shipped = self._shipped.get(model)
        if dim is not None:
            if disk is not None and disk.dim is not None and disk.dim != dim:
                disk = None
            if shipped is not None and shipped.dim is not None and shipped.dim != dim:
                shipped = None
        out: dict[bytes, NDArray[np.float32]] = {}
        for k in keys:
            v = shipped.get(k) if shipped is not None else None
            if v is None and disk is not None:
                v = disk.get(k)
            if v is None:
                self.misses += 1
            else:
                self.hits += 1
                out[k] = v
        return out

    def put_many(self, model: str, keys: Sequence[bytes], vectors: NDArray[np.float32]) -> None:
        """Store vectors (one new shard); a no-op when read-only or empty."""
        if len(keys) == 0:
            return
        with self._lock:
            self._put_many(model, keys, vectors)

    def _put_many(self, model: str, keys: Sequence[bytes], vectors: NDArray[np.float32]) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        layer = self._load(model)
        if layer.dim is not None and layer.dim != vectors.shape[1]:
            # the model under this name changed dimension: start afresh
            self.clear(model)
            layer = self._load(model)
        layer.add(list(keys), vectors)
        if not self.read_only:
            self._write_shard(model, keys, vectors)

    def clear(self, model: str | None = None) -> None:
        """Delete cached vectors of one model, or of all models."""
        dirs = [self.model_dir(model)] if model is not None else \
            [p for p in self.directory.glob("*") if p.is_dir()]
        for d in dirs:
            if d.is_dir() and not self.read_only:
                for f in [*d.glob("shard-*.npz"), d / "model.json"]:
                    try:
                        f.unlink()
                    except OSError:
                        pass
        if model is None:
            self._disk.clear()
        else:
            self._disk.pop(model, None)

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.directory)!r}, hits={self.hits}, misses={self.misses})"


def _offset_progress(progress: Progress, offset: int, total: int) -> Progress:
    """``progress`` for one slab: its ``(done, n)`` reported as ``(offset + done, total)``."""
    def step(done: int, _n: int) -> None:
        progress(offset + done, total)
    return step


def encode_with_cache(
    encoder: Encoder, texts: Sequence[str], cache: EmbeddingCache | None,
    progress: Progress | None = None,
) -> NDArray[np.float32]:
    """Embed ``texts``, embedding only those not in ``cache`` (each distinct text once).

    Parameters
    ----------
    encoder : Encoder
        Its ``name`` keys the cache.
    texts : sequence of str
        Texts in output order; duplicates are embedded once.
    cache : EmbeddingCache or None
        ``None`` embeds everything (still de-duplicated).
    progress : callable, optional
        ``progress(done, total)`` over the texts actually embedded, first with ``(0, total)``
        before anything is encoded; called once with ``(0, 0)`` when everything was cached.

    Notes
    -----
    New texts are embedded and stored in slabs of :data:`SLAB`, so work survives an interruption
    (a cancelled app step, Ctrl-C): the next call finds the finished slabs in the cache.  More than
    :data:`QUEUED_OVER` new texts are embedded in one of the process's worker slots
    (:func:`rag_metrics.jobs.slot`: a class server embeds at most ``lab.budgets.workers`` corpora at
    once, whichever page asked), and the slot's ticket is checked between batches (Cancel).

    Returns
    -------
    ndarray of float32, shape (len(texts), encoder.dim)
    """
    texts = list(texts)
    keys = [text_key(t) for t in texts]
    unique: dict[bytes, str] = {}
    for k, t in zip(keys, texts):
        unique.setdefault(k, t)
    found = cache.get_many(encoder.name, list(unique), encoder.dim) if cache is not None else {}
    missing = [k for k in unique if k not in found]
    if missing:
        total = len(missing)
        jobs.charge(total)  # CPU as a budget: a student's seat pays for its new texts before any is embedded
        if progress is not None:
            progress(0, total)  # the count shows before the first batch (and the model load)
        with jobs.slot() if total > QUEUED_OVER else contextlib.nullcontext() as ticket, \
                _cpu_share(jobs.slots().workers if ticket is not None else 1), jobs.metered(None):  # paid above
            _encode_missing(encoder, unique, missing, cache, found, progress, ticket)
    elif progress is not None:
        progress(0, 0)
    out = np.empty((len(texts), encoder.dim), dtype=np.float32)
    for i, k in enumerate(keys):
        out[i] = found[k]
    return out


@contextlib.contextmanager
def _cpu_share(workers: int) -> Iterator[None]:
    """Costly embedding in a worker slot uses its share of the model's threads: the process's
    intra-op threads divided by the ``workers`` slots (at least one), so one corpus upload never takes
    every core of the process from the other sessions' reruns and short encodes."""
    torch = sys.modules.get("torch")  # only a model that runs on torch has loaded it
    if torch is None or workers <= 1:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(max(1, before // workers))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _encode_missing(encoder: Encoder, unique: dict[bytes, str], missing: list[bytes], cache: EmbeddingCache | None,
                    found: dict[bytes, Any], progress: Progress | None, ticket: jobs.Ticket | None) -> None:
    """Embed the ``missing`` texts slab by slab into ``found`` (and the cache), checking ``ticket``'s
    cancel flag before each slab."""
    total = len(missing)
    for start in range(0, total, SLAB):
        if ticket is not None:
            ticket.check(start, total)
        part = missing[start:start + SLAB]
        step = None if progress is None else _offset_progress(progress, start, total)
        vecs = np.asarray(encoder.encode([unique[k] for k in part], progress=step), dtype=np.float32)
        if vecs.shape != (len(part), encoder.dim):
            raise InputError(
                f"encoder {encoder.name!r} returned shape {vecs.shape}, expected "
                f"({len(part)}, {encoder.dim})."
            )
        if cache is not None:
            cache.put_many(encoder.name, part, vecs)
        found.update(zip(part, vecs))


# -- shipped embeddings --------------------------------------------------------------------------
class ShippedEmbeddings:
    """Verified content of a shipped embeddings folder."""

    def __init__(self, model: str, chunk_ids: list[str], text_sha256: list[str],
                 vectors: NDArray[np.float32], manifest: dict[str, object]) -> None:
        self.model = model
        self.chunk_ids = chunk_ids
        self.text_sha256 = text_sha256
        self.vectors = vectors
        self.manifest = manifest

    def stale_chunks(self, chunk_ids: Sequence[str], texts: Sequence[str]) -> list[str]:
        """Ids among ``chunk_ids`` whose text hash differs from (or is absent in) the manifest."""
        have = dict(zip(self.chunk_ids, self.text_sha256))
        return [c for c, t in zip(chunk_ids, texts) if have.get(c) != text_key(t).hex()]


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_shipped(directory: str | os.PathLike[str]) -> ShippedEmbeddings | None:
    """Read and verify ``embeddings.npy`` + ``manifest.json``; ``None`` when absent or invalid."""
    d = Path(directory)
    arr_path, man_path = d / "embeddings.npy", d / "manifest.json"
    if not (arr_path.is_file() and man_path.is_file()):
        return None
    try:
        manifest = json.loads(man_path.read_text(encoding="utf-8"))
        if manifest.get("format") != _FORMAT or _sha256_file(arr_path) != manifest["array_sha256"]:
            return None
        vectors = np.load(arr_path, allow_pickle=False)
        ids, hashes = list(manifest["chunk_ids"]), list(manifest["text_sha256"])
        if vectors.dtype != np.float32 or vectors.ndim != 2 or \
                not (len(ids) == len(hashes) == vectors.shape[0]) or \
                vectors.shape[1] != int(manifest["dim"]):
            return None
        return ShippedEmbeddings(str(manifest["model"]), ids, hashes, vectors, manifest)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def ship_embeddings(
    directory: str | os.PathLike[str], encoder: Encoder, chunk_ids: Sequence[str],
    texts: Sequence[str], *, cache: EmbeddingCache | None = None,
    extra: dict[str, object] | None = None, progress: Progress | None = None,
) -> Path:
    """Write ``embeddings.npy`` and ``manifest.json`` for ``texts`` into ``directory``.

    Vectors come through :func:`encode_with_cache` (so unchanged chunks are not re-embedded when
    ``cache`` holds them, e.g. after :meth:`EmbeddingCache.add_shipped` of the old folder).
    ``extra`` is merged into the manifest (e.g. chunk size and overlap).  Returns the folder.
    """
    d = Path(directory)
    if len(chunk_ids) != len(texts):
        raise InputError(f"ship_embeddings: {len(chunk_ids)} chunk ids for {len(texts)} texts.")
    vecs = encode_with_cache(encoder, texts, cache, progress)
    arr_path = d / "embeddings.npy"
    _atomic_write(arr_path, lambda fh: np.save(fh, vecs, allow_pickle=False))
    manifest: dict[str, object] = {
        "format": _FORMAT, "model": encoder.name, "dim": int(encoder.dim),
        **(extra or {}),
        "count": len(chunk_ids),
        "array_sha256": _sha256_file(arr_path),
        "chunk_ids": list(chunk_ids),
        "text_sha256": [text_key(t).hex() for t in texts],
    }
    body = json.dumps(manifest, indent=1).encode("utf-8")
    _atomic_write(d / "manifest.json", lambda fh: fh.write(body))
    return d

