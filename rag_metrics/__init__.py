"""rag_metrics: exact, trec_eval-compatible retrieval metrics for RAG systems.

The public API is what this module exports (``__all__``): the data types, :func:`evaluate` with
its options, the loaders, the paired comparison, retrieval and the report.  Everything else lives
in packages by concern: ``metrics`` (judge, kernels, registry, options, explain, presets), ``io``,
``compare``, ``insights``, ``report``, ``authoring``, ``workspace``, ``server``, ``retrieval``,
``systems``, ``answers``, ``lesson``, ``cli``.

``import rag_metrics`` is light: it never imports streamlit, torch, sentence-transformers or faiss;
the verbs are imported on first use.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from rag_metrics import _compat
from rag_metrics.errors import InputError, Problem, ValidationReport
from rag_metrics.types import OUT_OF_SCOPE, Chunk, Corpus, Document, GoldenQuery, GoldenSet, Run

if TYPE_CHECKING:
    from rag_metrics.compare.paired import compare as compare_results
    from rag_metrics.compare.paired import paired_tests
    from rag_metrics.evaluation import EvaluationResult, bootstrap_ci, evaluate
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.io.golden import load_golden, save_golden, validate_golden
    from rag_metrics.io.trec import load_beir, load_qrels, load_run, validate_run, write_trec_run
    from rag_metrics.metrics.explain import explain_ranking
    from rag_metrics.metrics.options import EvalOptions
    from rag_metrics.metrics.registry import METRICS, parse_metric
    from rag_metrics.report.html import build_report
    from rag_metrics.retrieval.chunking import chunk_corpus
    from rag_metrics.retrieval.factory import make_retriever

__version__ = "0.1.0"

#: public name -> (module, attribute), imported on first use
_LAZY: dict[str, tuple[str, str]] = {
    'evaluate': ('rag_metrics.evaluation', 'evaluate'),
    'EvaluationResult': ('rag_metrics.evaluation', 'EvaluationResult'),
    'EvalOptions': ('rag_metrics.metrics.options', 'EvalOptions'),
    'bootstrap_ci': ('rag_metrics.evaluation', 'bootstrap_ci'),
    'METRICS': ('rag_metrics.metrics.registry', 'METRICS'),
    'parse_metric': ('rag_metrics.metrics.registry', 'parse_metric'),
    'explain_ranking': ('rag_metrics.metrics.explain', 'explain_ranking'),
    'load_qrels': ('rag_metrics.io.trec', 'load_qrels'),
    'load_run': ('rag_metrics.io.trec', 'load_run'),
    'load_beir': ('rag_metrics.io.trec', 'load_beir'),
    'write_trec_run': ('rag_metrics.io.trec', 'write_trec_run'),
    'validate_run': ('rag_metrics.io.trec', 'validate_run'),
    'load_golden': ('rag_metrics.io.golden', 'load_golden'),
    'save_golden': ('rag_metrics.io.golden', 'save_golden'),
    'validate_golden': ('rag_metrics.io.golden', 'validate_golden'),
    'load_corpus': ('rag_metrics.io.corpus', 'load_corpus'),
    'compare_results': ('rag_metrics.compare.paired', 'compare'),
    'paired_tests': ('rag_metrics.compare.paired', 'paired_tests'),
    'chunk_corpus': ('rag_metrics.retrieval.chunking', 'chunk_corpus'),
    'make_retriever': ('rag_metrics.retrieval.factory', 'make_retriever'),
    'build_report': ('rag_metrics.report.html', 'build_report'),
}

__all__ = [
    'Chunk', 'Corpus', 'Document', 'GoldenQuery', 'GoldenSet', 'Run', 'OUT_OF_SCOPE', 'InputError', 'Problem',
    'ValidationReport', 'evaluate', 'EvaluationResult', 'EvalOptions', 'bootstrap_ci', 'METRICS',
    'parse_metric', 'explain_ranking', 'load_qrels', 'load_run', 'load_beir', 'write_trec_run',
    'validate_run', 'load_golden', 'save_golden', 'validate_golden', 'load_corpus', 'compare_results',
    'paired_tests', 'chunk_corpus', 'make_retriever', 'build_report',
]


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'rag_metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(where[0]), where[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(ModuleType):
    """Keeps a public verb when an old module of the same name is imported (``rag_metrics.evaluate``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, ModuleType) and value.__name__ != f"{__name__}.{name}":
            return  # the import system names the old path's module here; the verb stays
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
_compat.install()
