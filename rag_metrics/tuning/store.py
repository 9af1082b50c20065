"""``sweep.json``: a sweep's results as plain JSON, written by the CLI and loaded by the app.

Format (``version`` 1)::

    {"version": 1, "kind": "rag-metrics-sweep", "grid": {"metric": "ndcg@10", "held_out": 0.3, "seed": 0,
     "configs": [{...SweepConfig...}]}, "query_ids": [...], "categories": [...], "included": [...],
     "tuning": [...], "baseline": {...} | null, "cancelled": false, "embedded": 0, "embed_requested": 612,
     "seconds": 41.2, "corpus_fingerprint": "...", "golden_fingerprint": "...",
     "results": [{"config": {...}, "values": {"ndcg@10": [...]}, "n_chunks": 192, "build_s": 3.1,
                  "index_bytes": 294912, "latency_ms": [...], "embedded_chunks": 0}]}
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.tuning.grid import Grid, SweepConfig
from rag_metrics.tuning.run import ConfigResult, SweepResult

__all__ = ["sweep_to_dict", "sweep_from_dict", "save_sweep", "load_sweep", "parse_sweep", "read_sweep_upload",
           "MAX_SWEEP_BYTES"]

FORMAT_VERSION = 1
KIND = "rag-metrics-sweep"
#: Largest sweep file read (20 MiB: far above 200 configurations of a few thousand questions).
MAX_SWEEP_BYTES = 20 * 1024 * 1024


def sweep_to_dict(res: SweepResult) -> dict[str, Any]:
    return {"version": FORMAT_VERSION, "kind": KIND,
            "grid": {"metric": res.grid.metric, "held_out": res.grid.held_out, "seed": res.grid.seed,
                     "configs": [c.to_dict() for c in res.grid.configs]},
            "query_ids": list(res.query_ids), "categories": list(res.categories),
            "included": list(res.included), "tuning": list(res.tuning),
            "baseline": res.baseline.to_dict() if res.baseline else None,
            "cancelled": res.cancelled, "embedded": res.embedded, "embed_requested": res.embed_requested,
            "seconds": round(res.seconds, 3), "corpus_fingerprint": res.corpus_fingerprint,
            "golden_fingerprint": res.golden_fingerprint,
            "results": [r.to_dict() for r in res.results]}


def sweep_from_dict(d: Any, source: str = "sweep") -> SweepResult:
    if not isinstance(d, dict) or d.get("kind") != KIND:
        raise InputError(f"{source}: not a sweep file (written by `rag-metrics sweep --out sweep.json`).")
    if d.get("version") != FORMAT_VERSION:
        raise InputError(f"{source}: sweep file version {d.get('version')!r}; this lab reads version {FORMAT_VERSION}.")
    try:
        g = d["grid"]
        configs = tuple(SweepConfig.from_dict(c, f"{source}: grid configuration {i}")
                        for i, c in enumerate(g["configs"], start=1))
        grid = Grid(configs=configs, metric=str(g["metric"]), held_out=float(g["held_out"]), seed=int(g["seed"]),
                    source=source)
        n = len(d["query_ids"])
        cols = [d[k] for k in ("categories", "included", "tuning")]
        if any(len(c) != n for c in cols):
            raise InputError(f"{source}: query_ids, categories, included and tuning differ in length.")
        res = SweepResult(grid=grid, query_ids=tuple(map(str, d["query_ids"])), categories=tuple(map(str, cols[0])),
                          included=tuple(bool(x) for x in cols[1]), tuning=tuple(bool(x) for x in cols[2]),
                          baseline=SweepConfig.from_dict(d["baseline"], f"{source}: baseline") if d.get("baseline")
                          else None,
                          cancelled=bool(d.get("cancelled")), embedded=int(d.get("embedded", 0)),
                          embed_requested=int(d.get("embed_requested", 0)), seconds=float(d.get("seconds", 0)),
                          corpus_fingerprint=str(d.get("corpus_fingerprint", "")),
                          golden_fingerprint=str(d.get("golden_fingerprint", "")))
        for i, r in enumerate(d["results"], start=1):
            cr = ConfigResult.from_dict(r, f"{source}: result {i}")
            if grid.metric not in cr.values or any(len(v) != n for v in cr.values.values()):
                raise InputError(f"{source}: result {i} ({cr.config.label}) lacks {grid.metric} values for the "
                                 f"{n} questions.")
            res.results.append(cr)
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"{source}: damaged sweep file ({type(e).__name__}: {e}); run the sweep again.") from None
    return res


def parse_sweep(text: str, source: str = "sweep") -> SweepResult:
    from rag_metrics.io.files import loads_json

    data, problem, line = loads_json(text)
    if problem is not None:
        raise InputError(f"{source}:{line or 1}: not valid JSON ({problem}).")
    return sweep_from_dict(data, source)


def read_sweep_upload(data: bytes, source: str = "sweep", max_bytes: int = MAX_SWEEP_BYTES) -> SweepResult:
    """A sweep file given as bytes (the Tune page's upload): unwrapped within the reading budget (a
    ``.json.gz`` too; :func:`rag_metrics.io.containers.unwrap`), at most ``max_bytes``, then parsed."""
    from rag_metrics.io.containers import unwrap

    content, _name, _wraps = unwrap(data, source)
    if len(content) > max_bytes:
        raise InputError(f"{source}: {len(content):,} bytes; a sweep file is at most {max_bytes:,} bytes.")
    return parse_sweep(content.decode("utf-8", errors="replace"), source)


def save_sweep(res: SweepResult, path: str | os.PathLike[str]) -> Path:
    """Write atomically (a partial file never replaces a good one)."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(sweep_to_dict(res)), encoding="utf-8")
    os.replace(tmp, p)
    return p


def load_sweep(path: str | os.PathLike[str]) -> SweepResult:
    p = Path(path)
    try:
        if p.stat().st_size > MAX_SWEEP_BYTES:
            raise InputError(f"{p}: {p.stat().st_size} bytes; a sweep file is at most {MAX_SWEEP_BYTES} bytes.")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{p}: sweep file not found.") from None
    except UnicodeDecodeError:
        raise InputError(f"{p}: not UTF-8 text; is it a sweep.json?") from None
    return parse_sweep(text, str(p))
