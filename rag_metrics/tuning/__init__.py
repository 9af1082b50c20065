"""Tuning: a declarative sweep over chunking, retriever, model and depth, with honest selection.

- :mod:`~rag_metrics.tuning.grid`: the grid file (TOML) -> configurations;
- :mod:`~rag_metrics.tuning.labels`: evidence spans -> labels for any chunking (every configuration is
  scored on the same labels);
- :mod:`~rag_metrics.tuning.run`: run the sweep (shared indexes, cached embeddings, measured cost, cancel);
- :mod:`~rag_metrics.tuning.select`: tuning scores with CIs, ties, Pareto frontier, held-out check, best of N;
- :mod:`~rag_metrics.tuning.store`: ``sweep.json``.
"""
from __future__ import annotations

from rag_metrics.tuning.grid import DEFAULT_GRID_TOML, Grid, SweepConfig, grid_from_choices, load_grid, parse_grid
from rag_metrics.tuning.labels import EvidenceSet, evidence_from_golden, labels_for_chunks, load_evidence
from rag_metrics.tuning.run import ConfigResult, SweepResult, estimate, run_sweep, stratified_split
from rag_metrics.tuning.store import load_sweep, parse_sweep, save_sweep

__all__ = ["DEFAULT_GRID_TOML", "Grid", "SweepConfig", "grid_from_choices", "load_grid", "parse_grid",
           "EvidenceSet", "evidence_from_golden", "labels_for_chunks", "load_evidence",
           "ConfigResult", "SweepResult", "estimate", "run_sweep", "stratified_split",
           "load_sweep", "parse_sweep", "save_sweep"]
