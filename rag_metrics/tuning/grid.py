"""The sweep's grid: a small TOML file (or the same choices from the app) -> configurations.

A grid names chunkings, retrievers and depths; every combination is one :class:`SweepConfig`.

The default grid, :data:`DEFAULT_GRID_TOML` (printed by ``rag-metrics sweep --help``), names every key
with what it means; it gives 3 chunk sizes x 4 retrievers = 12 configurations.  Unknown keys, wrong types and
values out of range raise :class:`~rag_metrics.errors.InputError` naming the key and the fix.
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import tomllib

from rag_metrics.errors import InputError
from rag_metrics.metrics.registry import parse_metric
from rag_metrics.retrieval.chunking import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    validate_chunk_args,
)

__all__ = ["SweepConfig", "Grid", "parse_grid", "load_grid", "grid_from_choices", "DEFAULT_GRID_TOML",
           "MAX_CONFIGS", "NORMALISATIONS", "BUNDLED_MODEL"]

#: The bundled encoder (the sample's model); a grid may name other local sentence-transformers models.
BUNDLED_MODEL = "all-MiniLM-L6-v2"
#: Largest number of configurations one sweep may hold (a typo such as ``chunk_size = [100, ...,
#: 2000]`` by tens would otherwise plan hours of work).
MAX_CONFIGS = 200
NORMALISATIONS = ("minmax", "zscore", "max", "none")
_TOP_KEYS = {"metric", "held_out", "seed", "chunk_size", "chunk_overlap", "depth", "models", "retriever"}
_RETRIEVER_KEYS = {
    "dense": {"kind"},
    "bm25": {"kind", "k1", "b"},
    "hybrid": {"kind", "fusion", "rrf_k", "weight", "normalisation"},
}

#: The issue's 12-configuration sweep on the sample: 3 chunk sizes x dense / BM25 / hybrid RRF /
#: hybrid with a fusion weight.
DEFAULT_GRID_TOML = """\
metric = "ndcg@10"          # the quality the selection ranks by (any registry metric at a K)
held_out = 0.3              # share of the questions kept aside (stratified by category, seeded)
seed = 0
chunk_size = [300, 500, 800]
chunk_overlap = [100]       # every size is combined with every overlap below it
depth = [10]                # how deep each configuration retrieves
models = ["all-MiniLM-L6-v2"]   # dense and hybrid only; BM25 has no model

[[retriever]]
kind = "dense"

[[retriever]]
kind = "bm25"
k1 = [1.5]                  # lists expand; a single value may be given bare
b = [0.75]

[[retriever]]
kind = "hybrid"
fusion = "rrf"
rrf_k = [60]

[[retriever]]
kind = "hybrid"
fusion = "weighted"
weight = [0.5]              # the dense part's weight; BM25 gets 1 - weight
normalisation = "minmax"    # minmax | zscore | max | none (rag_metrics.retrieval.hybrid)
"""


@dataclass(frozen=True, order=True)
class SweepConfig:
    """One configuration: a chunking, a retriever with its settings, a model and a depth."""

    chunk_size: int = DEFAULT_CHUNK_SIZE
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP
    kind: str = "dense"                 # dense | bm25 | hybrid
    model: str = ""                     # "" for bm25
    depth: int = 10
    k1: float = 1.5                     # bm25 and the BM25 part of hybrid
    b: float = 0.75
    fusion: str = ""                    # hybrid: rrf | weighted
    rrf_k: float = 60.0
    weight: float = 0.5                 # hybrid: the dense part's weight
    normalisation: str = ""             # hybrid weighted: minmax | zscore | max | none

    @property
    def chunking(self) -> tuple[int, int]:
        return (self.chunk_size, self.chunk_overlap)

    @property
    def label(self) -> str:
        """Short, unique, human name: ``"500/100 hybrid rrf k=60"``."""
        head = f"{self.chunk_size}/{self.chunk_overlap} "
        if self.kind == "bm25":
            body = f"bm25 k1={self.k1:g} b={self.b:g}"
        elif self.kind == "dense":
            body = "dense"
        elif self.fusion == "rrf":
            body = f"hybrid rrf k={self.rrf_k:g}" + ("" if self.weight == 0.5 else f" w={self.weight:g}")
        else:
            body = f"hybrid {self.normalisation} w={self.weight:g}"
        if self.model and self.model != BUNDLED_MODEL:
            body += f" [{self.model}]"
        return head + body + ("" if self.depth == 10 else f" @{self.depth}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "configuration") -> SweepConfig:
        known = set(cls.__dataclass_fields__)
        extra = sorted(set(d) - known)
        if extra:
            raise InputError(f"{where}: unknown field(s) {', '.join(extra)}; known: {', '.join(sorted(known))}.")
        try:
            return cls(**dict(d))
        except TypeError as e:  # pragma: no cover - guarded by the check above
            raise InputError(f"{where}: {e}") from None

    def toml(self) -> str:
        """This configuration as a one-configuration grid, ready to copy."""
        lines = [f"chunk_size = [{self.chunk_size}]", f"chunk_overlap = [{self.chunk_overlap}]",
                 f"depth = [{self.depth}]"]
        if self.model:
            lines.append(f'models = ["{self.model}"]')
        lines += ["", "[[retriever]]", f'kind = "{self.kind}"']
        if self.kind == "bm25":
            lines += [f"k1 = [{self.k1:g}]", f"b = [{self.b:g}]"]
        if self.kind == "hybrid":
            lines.append(f'fusion = "{self.fusion}"')
            if self.fusion == "rrf":
                lines += [f"rrf_k = [{self.rrf_k:g}]", f"weight = [{self.weight:g}]"]
            else:
                lines += [f"weight = [{self.weight:g}]", f'normalisation = "{self.normalisation}"']
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Grid:
    """A parsed grid: its configurations plus the selection settings."""

    configs: tuple[SweepConfig, ...]
    metric: str = "ndcg@10"
    held_out: float = 0.3
    seed: int = 0
    source: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def chunkings(self) -> list[tuple[int, int]]:
        return sorted({c.chunking for c in self.configs})

    @property
    def models(self) -> list[str]:
        return sorted({c.model for c in self.configs if c.model})


def _as_list(value: Any, key: str, where: str, typ: type | tuple[type, ...]) -> list[Any]:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise InputError(f"{where}: {key} is an empty list; give at least one value.")
    for v in items:
        if isinstance(v, bool) or not isinstance(v, typ):
            names = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
            raise InputError(f"{where}: {key} must be {names} (or a list of them); got {v!r}.")
    return list(dict.fromkeys(items))


def _number_in(v: float, lo: float, hi: float, key: str, where: str) -> float:
    if not lo <= float(v) <= hi:
        raise InputError(f"{where}: {key} must be between {lo:g} and {hi:g}; got {v!r}.")
    return float(v)


def _retrievers(specs: Sequence[Any], source: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, spec in enumerate(specs, start=1):
        where = f"{source} [[retriever]] #{i}"
        if not isinstance(spec, Mapping):
            raise InputError(f"{where}: expected a table with kind = \"dense\" | \"bm25\" | \"hybrid\".")
        kind = spec.get("kind")
        if kind not in _RETRIEVER_KEYS:
            raise InputError(f"{where}: kind must be one of dense, bm25, hybrid; got {kind!r}.")
        extra = sorted(set(spec) - _RETRIEVER_KEYS[kind])
        if extra:
            raise InputError(f"{where}: {', '.join(extra)} do(es) not apply to kind = {kind!r}; "
                             f"its keys: {', '.join(sorted(_RETRIEVER_KEYS[kind]))}.")
        if kind == "dense":
            out.append({"kind": "dense"})
            continue
        k1s = [_number_in(v, 0, 10, "k1", where) for v in _as_list(spec.get("k1", 1.5), "k1", where, (int, float))]
        bs = [_number_in(v, 0, 1, "b", where) for v in _as_list(spec.get("b", 0.75), "b", where, (int, float))]
        if kind == "bm25":
            out += [{"kind": "bm25", "k1": k1, "b": b} for k1, b in itertools.product(k1s, bs)]
            continue
        fusion = spec.get("fusion", "rrf")
        if fusion not in ("rrf", "weighted"):
            raise InputError(f"{where}: fusion must be \"rrf\" or \"weighted\"; got {fusion!r}.")
        weights = [_number_in(v, 0, 1, "weight", where)
                   for v in _as_list(spec.get("weight", 0.5), "weight", where, (int, float))]
        if fusion == "rrf":
            if "normalisation" in spec:
                raise InputError(f"{where}: normalisation applies to fusion = \"weighted\" only (RRF uses ranks).")
            ks = [_number_in(v, 0, 1000, "rrf_k", where)
                  for v in _as_list(spec.get("rrf_k", 60), "rrf_k", where, (int, float))]
            out += [{"kind": "hybrid", "fusion": "rrf", "rrf_k": k, "weight": w, "k1": k1, "b": b}
                    for k, w, k1, b in itertools.product(ks, weights, k1s, bs)]
        else:
            if "rrf_k" in spec:
                raise InputError(f"{where}: rrf_k applies to fusion = \"rrf\" only.")
            norms = _as_list(spec.get("normalisation", "minmax"), "normalisation", where, str)
            for n in norms:
                if n not in NORMALISATIONS:
                    raise InputError(f"{where}: normalisation must be one of {', '.join(NORMALISATIONS)}; got {n!r}.")
            out += [{"kind": "hybrid", "fusion": "weighted", "normalisation": n, "weight": w, "k1": k1, "b": b}
                    for n, w, k1, b in itertools.product(norms, weights, k1s, bs)]
    return out


def parse_grid(data: Mapping[str, Any], source: str = "grid") -> Grid:
    """A :class:`Grid` from a parsed TOML table (see the module docstring for the keys)."""
    if not isinstance(data, Mapping):
        raise InputError(f"{source}: expected a TOML table.")
    extra = sorted(set(data) - _TOP_KEYS)
    if extra:
        raise InputError(f"{source}: unknown key(s) {', '.join(extra)}; known: {', '.join(sorted(_TOP_KEYS))}.")
    metric = data.get("metric", "ndcg@10")
    if not isinstance(metric, str):
        raise InputError(f"{source}: metric must be a string such as \"ndcg@10\"; got {metric!r}.")
    key = parse_metric(metric)
    held = data.get("held_out", 0.3)
    if isinstance(held, bool) or not isinstance(held, (int, float)) or not 0 <= held < 0.9:
        raise InputError(f"{source}: held_out must be a share from 0 to 0.9 (e.g. 0.3); got {held!r}.")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InputError(f"{source}: seed must be an integer; got {seed!r}.")
    sizes = _as_list(data.get("chunk_size", DEFAULT_CHUNK_SIZE), "chunk_size", source, int)
    overlaps = _as_list(data.get("chunk_overlap", DEFAULT_CHUNK_OVERLAP), "chunk_overlap", source, int)
    depths = _as_list(data.get("depth", 10), "depth", source, int)
    for d in depths:
        if not 1 <= d <= 1000:
            raise InputError(f"{source}: depth must be from 1 to 1000; got {d!r}.")
    if key.k is not None and key.k > max(depths):
        raise InputError(f"{source}: metric {metric} reads rank {key.k}, deeper than every depth "
                         f"({', '.join(map(str, depths))}); add depth = [{key.k}] or lower the metric's cutoff.")
    models = _as_list(data.get("models", [BUNDLED_MODEL]), "models", source, str)
    specs = data.get("retriever", [{"kind": "dense"}])
    if not isinstance(specs, list) or not specs:
        raise InputError(f"{source}: add at least one [[retriever]] table (kind = \"dense\", \"bm25\" or \"hybrid\").")
    retrievers = _retrievers(specs, source)
    notes: list[str] = []
    chunkings = []
    for size, overlap in itertools.product(sizes, overlaps):
        if overlap >= size:
            notes.append(f"chunk_size {size} with chunk_overlap {overlap} skipped: the overlap must be smaller.")
            continue
        validate_chunk_args(size, overlap)
        chunkings.append((size, overlap))
    if not chunkings:
        raise InputError(f"{source}: no chunk_size is larger than a chunk_overlap; e.g. chunk_size = [500], "
                         "chunk_overlap = [100].")
    configs: list[SweepConfig] = []
    for (size, overlap), depth, r in itertools.product(chunkings, depths, retrievers):
        for model in ([""] if r["kind"] == "bm25" else models):
            configs.append(SweepConfig(chunk_size=size, chunk_overlap=overlap, depth=depth, model=model,
                                       **{k: v for k, v in r.items()}))
    configs = list(dict.fromkeys(configs))
    if len(configs) > MAX_CONFIGS:
        raise InputError(f"{source}: {len(configs)} configurations; a sweep holds at most {MAX_CONFIGS}. "
                         "Give fewer values per key.")
    return Grid(configs=tuple(configs), metric=str(key), held_out=float(held), seed=seed, source=source,
                notes=tuple(notes))


def load_grid(path: str) -> Grid:
    """Read a grid file (TOML).  Errors name the file and, for TOML syntax, the line."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise InputError(f"{path}: grid file not found; see `rag-metrics sweep --help` for an example.") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML ({e}); see `rag-metrics sweep --help` for an example.") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read the grid file ({e.strerror}).") from None
    return parse_grid(data, source=path)


def grid_from_choices(*, chunk_sizes: Sequence[int], chunk_overlap: int, kinds: Sequence[str],
                      fusion_weights: Sequence[float] = (), depth: int = 10, metric: str = "ndcg@10",
                      held_out: float = 0.3, seed: int = 0, models: Sequence[str] = (BUNDLED_MODEL,)) -> Grid:
    """The app's form as a grid: ``kinds`` among dense / bm25 / hybrid (RRF); each fusion weight
    adds a weighted (min-max) hybrid."""
    specs: list[dict[str, Any]] = [{"kind": k} if k != "hybrid" else {"kind": "hybrid", "fusion": "rrf"}
                                   for k in kinds]
    if fusion_weights:
        specs.append({"kind": "hybrid", "fusion": "weighted", "weight": list(fusion_weights),
                      "normalisation": "minmax"})
    return parse_grid({"metric": metric, "held_out": held_out, "seed": seed, "chunk_size": list(chunk_sizes),
                       "chunk_overlap": [chunk_overlap], "depth": [depth], "models": list(models),
                       "retriever": specs}, source="the form")
