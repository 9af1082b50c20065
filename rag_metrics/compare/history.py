"""Runs kept over time: an evaluation saved as a named run, metrics over runs, and a regression gate.

A *saved run* (:class:`SavedRun`) is plain JSON: the system's name, the evaluation settings, the
golden set's fingerprint, the per-query values of every metric key for the queries that entered
the means, and the time (UTC).  Two saved runs are compared **paired on the queries both
include**, by the one decision rule of :mod:`rag_metrics.compare.paired` (paired t-test,
Benjamini-Hochberg across the metrics, false-coverage-adjusted intervals): ``A`` is the baseline
(older) run, ``B`` the current one, so ``"A better"`` means the current run is significantly
worse.  :func:`regressions` lists exactly those rows; ``rag-metrics evaluate --baseline FILE.json
--fail-on-regression`` exits 1 when there is one.

File format (``version`` 1)::

    {"version": 1, "name": "release 1.2", "system": "my log", "created": "2026-12-01T09:00:00+00:00",
     "golden_fingerprint": "3f0c...", "settings": {"relevance_level": 1, ...},
     "metrics": ["ndcg@10", "mrr@10"], "query_ids": ["q1", "q2"],
     "values": {"ndcg@10": [0.63, 1.0], "mrr@10": [0.5, 1.0]}}

Runs of a workspace live in a :class:`RunHistory` folder (one file per run, atomic writes).
"""
from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rag_metrics.errors import InputError
from rag_metrics.evaluation import bootstrap_ci
from rag_metrics.metrics.registry import parse_metric

if TYPE_CHECKING:
    import pandas as pd

    from rag_metrics.evaluation import EvaluationResult
    from rag_metrics.metrics.registry import MetricKey
else:
    from rag_metrics.lazy import pandas as pd

__all__ = ["FORMAT_VERSION", "RunHistory", "SavedRun", "compare_runs", "load_saved_run", "metric_over_runs",
           "parse_saved_run", "regressions", "save_run", "saved_run"]

FORMAT_VERSION = 1
_NAME = re.compile(r"^[\w .:()+,#@/-]{1,80}$")
#: Largest saved-run file read (50 MiB).
MAX_RUN_BYTES = 50 * 1024 * 1024


@dataclass(frozen=True)
class SavedRun:
    """One evaluation kept for later: per-query values of each metric key over ``query_ids``."""

    name: str
    system: str
    created: str
    golden_fingerprint: str
    settings: Mapping[str, Any]
    metrics: tuple[str, ...]
    query_ids: tuple[str, ...]
    values: Mapping[str, tuple[float, ...]]
    source: str = field(default="", compare=False)

    def mean(self, key: str) -> float:
        v = self.values.get(key)
        if v is None:
            raise InputError(f"run {self.name!r} has no metric {key!r}; it holds {', '.join(self.metrics)}")
        return float(np.mean(v)) if len(v) else math.nan

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("source")
        d["values"] = {k: list(v) for k, v in self.values.items()}
        d["metrics"], d["query_ids"] = list(self.metrics), list(self.query_ids)
        return {"version": FORMAT_VERSION, **d}


def _as_json(value: Any) -> Any:
    """``value`` with every tuple a list, as JSON gives it back."""
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    return value


def _check_name(name: str, what: str = "run name") -> str:
    name = " ".join(str(name).split())
    if not _NAME.match(name):
        raise InputError(f"{what} {name!r}: use 1-80 letters, digits, spaces or . : ( ) + , # @ / - _")
    return name


def saved_run(result: EvaluationResult, keys: Sequence[str | MetricKey], name: str, system: str,
              settings: Mapping[str, Any] | None = None, created: datetime | None = None) -> SavedRun:
    """The :class:`SavedRun` of an evaluation: values of ``keys`` for the queries in its means.

    ``settings`` adds what the caller knows (K, chunking, corpus) to the evaluation options.
    """
    if not keys:
        raise InputError("a saved run needs at least one metric key, e.g. ndcg@10")
    inc = result.included
    mks = [k if not isinstance(k, str) else parse_metric(k) for k in keys]
    values = {str(k): tuple(float(x) for x in result.values(k)[inc]) for k in mks}
    opts = _as_json(asdict(result.options))  # as it reads back from the file (tuples become lists)
    when = (created or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="seconds")
    return SavedRun(_check_name(name), str(system), when, result.golden.fingerprint(),
                    {**opts, **dict(settings or {})}, tuple(values), tuple(np.asarray(result.query_ids,
                                                                                      dtype=object)[inc].tolist()),
                    values)


def parse_saved_run(text: str, source: str = "saved run") -> SavedRun:
    """Read a saved run (JSON); InputError names the file, the field and the fix."""
    from rag_metrics.io.files import loads_json

    data, msg, line = loads_json(text)
    if msg is not None:
        where = f"{source}:{line}" if line else source
        raise InputError(f"{where}: {msg}; a saved run is the JSON written by --save-run or the History page")
    if not isinstance(data, Mapping):
        raise InputError(f"{source}: expected a JSON object (a saved run), got {type(data).__name__}")
    if data.get("version") != FORMAT_VERSION:
        raise InputError(f"{source}: field 'version' is {data.get('version')!r}; this reader knows version "
                         f"{FORMAT_VERSION} (save the run again with this version)")
    for f, kind in (("name", str), ("system", str), ("created", str), ("golden_fingerprint", str),
                    ("settings", Mapping), ("metrics", list), ("query_ids", list), ("values", Mapping)):
        if not isinstance(data.get(f), kind):
            raise InputError(f"{source}: field {f!r} is missing or not a {kind.__name__}; save the run again "
                             "with --save-run")
    qids = tuple(str(q) for q in data["query_ids"])
    if len(set(qids)) != len(qids):
        raise InputError(f"{source}: field 'query_ids' repeats a query; each query appears once")
    values: dict[str, tuple[float, ...]] = {}
    for key in data["metrics"]:
        v = data["values"].get(key)
        if not isinstance(v, list) or len(v) != len(qids):
            raise InputError(f"{source}: field 'values.{key}' must be a list of {len(qids)} numbers (one per "
                             "query in 'query_ids')")
        try:
            nums = tuple(float(x) for x in v)
        except (TypeError, ValueError):
            raise InputError(f"{source}: field 'values.{key}' holds a value that is not a number") from None
        if any(not (0.0 <= x <= 1.0) for x in nums):
            raise InputError(f"{source}: field 'values.{key}' holds a value outside [0, 1]")
        values[str(key)] = nums
    return SavedRun(str(data["name"]), str(data["system"]), str(data["created"]), str(data["golden_fingerprint"]),
                    dict(data["settings"]), tuple(values), qids, values, source)


def load_saved_run(path: str | os.PathLike[str]) -> SavedRun:
    """Read a saved run from ``path`` (InputError when missing or malformed)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"saved run {str(p)!r} not found; write one with `rag-metrics evaluate ... --save-run "
                         f"{p.name}`")
    if p.stat().st_size > MAX_RUN_BYTES:
        raise InputError(f"{p}: file is {p.stat().st_size:,} bytes; the limit is {MAX_RUN_BYTES:,}")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{p}: not UTF-8; a saved run is the JSON written by --save-run") from None
    return parse_saved_run(text, str(p))


def save_run(run: SavedRun, path: str | os.PathLike[str]) -> Path:
    """Write ``run`` as JSON at ``path`` (atomic)."""
    from rag_metrics.io.files import atomic_write_text

    p = Path(path)
    atomic_write_text(p, json.dumps(run.to_json(), ensure_ascii=False) + "\n")
    return p


# ---- comparing runs ---------------------------------------------------------------------------
def compare_runs(baseline: SavedRun, current: SavedRun, keys: Sequence[str] | None = None
                 ) -> tuple[pd.DataFrame, list[str]]:
    """The verdict table of ``current`` (B) against ``baseline`` (A), paired on the queries both
    include, by :func:`rag_metrics.compare.paired.compare_paired`; and notes (a changed golden set,
    metrics only one run has, queries left out of the pairing).

    ``keys``: the metric keys to compare (default: every key both runs hold).
    """
    from rag_metrics.compare.paired import compare_paired

    notes: list[str] = []
    common = [k for k in baseline.metrics if k in current.values]
    if keys is not None:
        missing = [k for k in keys if k not in baseline.values or k not in current.values]
        if missing:
            raise InputError(f"metric(s) {', '.join(missing)} are not in both runs; the baseline holds "
                             f"{', '.join(baseline.metrics)}, the current run {', '.join(current.metrics)}")
        common = list(keys)
    if not common:
        raise InputError(f"the runs share no metric (baseline: {', '.join(baseline.metrics)}; current: "
                         f"{', '.join(current.metrics)}); save both with the same --metrics and --k")
    only = sorted(set(baseline.metrics) ^ set(current.metrics))
    if only and keys is None:
        notes.append(f"compared on the metrics both runs hold; only one has {', '.join(only)}")
    if baseline.golden_fingerprint != current.golden_fingerprint:
        notes.append("the golden set changed between the runs (labels or questions differ): the comparison pairs "
                     "the queries both include, and a label change moves the numbers too")
    pos_a = {q: i for i, q in enumerate(baseline.query_ids)}
    pos_b = {q: i for i, q in enumerate(current.query_ids)}
    shared = [q for q in current.query_ids if q in pos_a]
    dropped = len(pos_a) + len(pos_b) - 2 * len(shared)
    if dropped:
        notes.append(f"paired on the {len(shared)} queries both runs include ({dropped} in one run only are left "
                     "out)")
    ia = np.fromiter((pos_a[q] for q in shared), dtype=np.int64, count=len(shared))
    ib = np.fromiter((pos_b[q] for q in shared), dtype=np.int64, count=len(shared))
    pairs = []
    for key in common:
        mk = parse_metric(key)
        pairs.append((mk.name, mk.k, np.asarray(baseline.values[key])[ia], np.asarray(current.values[key])[ib]))
    table = compare_paired(pairs, name_a=baseline.name, name_b=current.name)
    table.insert(0, "key", common)
    return table, notes


def regressions(table: pd.DataFrame) -> pd.DataFrame:
    """Rows of a :func:`compare_runs` table where the current run is significantly worse than the
    baseline by the decision rule (verdict ``"A better"``, A being the baseline)."""
    return table[table["verdict"] == "A better"]


def metric_over_runs(runs: Sequence[SavedRun], key: str) -> pd.DataFrame:
    """One row per run holding ``key``, oldest first: run, system, created, mean, ci_low, ci_high, n
    (the library's bootstrap CI, :func:`rag_metrics.evaluation.bootstrap_ci`)."""
    rows = []
    for r in sorted(runs, key=lambda r: r.created):
        if key not in r.values:
            continue
        v = np.asarray(r.values[key], dtype=np.float64)
        lo, hi = bootstrap_ci(v) if v.size else (math.nan, math.nan)
        rows.append({"run": r.name, "system": r.system, "created": r.created,
                     "mean": float(v.mean()) if v.size else math.nan, "ci_low": lo, "ci_high": hi, "n": int(v.size)})
    return pd.DataFrame(rows, columns=["run", "system", "created", "mean", "ci_low", "ci_high", "n"])


# ---- a folder of runs ---------------------------------------------------------------------------
class RunHistory:
    """Saved runs kept in one folder (one ``<slug>-<hash>.json`` per run; names unique)."""

    MAX_RUNS = 200

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def runs(self) -> list[SavedRun]:
        """Every readable run, oldest first (a damaged file is skipped, never raises)."""
        out: list[SavedRun] = []
        if not self.folder.is_dir():
            return out
        for p in sorted(self.folder.glob("*.json")):
            try:
                out.append(load_saved_run(p))
            except InputError:
                continue
        return sorted(out, key=lambda r: r.created)

    def names(self) -> list[str]:
        return [r.name for r in self.runs()]

    def get(self, name: str) -> SavedRun | None:
        return next((r for r in self.runs() if r.name == name), None)

    def _path(self, name: str) -> Path:
        import hashlib

        stem = re.sub(r"[^A-Za-z0-9_-]+", "_", name)[:40] or "run"
        return self.folder / f"{stem}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}.json"

    def add(self, run: SavedRun) -> Path:
        """Keep ``run`` (InputError when the name is taken or the folder is full)."""
        name = _check_name(run.name)
        existing = self.runs()
        if any(r.name == name for r in existing):
            raise InputError(f"a run named {name!r} is saved already; choose another name or remove it first")
        if len(existing) >= self.MAX_RUNS:
            raise InputError(f"{self.MAX_RUNS} runs are saved; remove old ones first")
        self.folder.mkdir(parents=True, exist_ok=True)
        return save_run(run, self._path(name))

    def remove(self, name: str) -> bool:
        run = self.get(name)
        if run is None or not run.source:
            return False
        Path(run.source).unlink(missing_ok=True)
        return True
