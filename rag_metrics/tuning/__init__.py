"""Tuning: a declarative sweep over chunking, retriever, model and depth, with honest selection.

- :mod:`~rag_metrics.tuning.grid`: the grid file (TOML) -> configurations;
- :mod:`~rag_metrics.tuning.labels`: the labels as evidence, judged under every chunking by
  :mod:`rag_metrics.metrics.evidence` (every configuration is scored on the same labels);
- :mod:`~rag_metrics.tuning.run`: run the sweep (shared indexes, cached embeddings, measured cost, cancel);
- :mod:`~rag_metrics.tuning.select`: tuning scores with CIs, ties, Pareto frontier, held-out check, best of N;
- :mod:`~rag_metrics.tuning.store`: ``sweep.json``.
"""
from __future__ import annotations

from rag_metrics.tuning.grid import DEFAULT_GRID_TOML, Grid, SweepConfig, grid_from_choices, load_grid, parse_grid
from rag_metrics.tuning.labels import as_evidence, has_evidence, load_labels
from rag_metrics.tuning.run import ConfigResult, SweepResult, estimate, run_sweep, stratified_split
from rag_metrics.tuning.store import load_sweep, parse_sweep, save_sweep

__all__ = ["DEFAULT_GRID_TOML", "Grid", "SweepConfig", "grid_from_choices", "load_grid", "parse_grid",
           "as_evidence", "has_evidence", "load_labels",
           "ConfigResult", "SweepResult", "estimate", "run_sweep", "stratified_split",
           "load_sweep", "parse_sweep", "save_sweep"]
