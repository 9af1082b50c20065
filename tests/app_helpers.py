"""Helpers shared by the page tests (AppTest): the library's own numbers on the sample corpus,
computed once per process, and the checks every page test starts with."""
from __future__ import annotations

import functools

from rag_metrics.evaluate import EvaluationResult, evaluate
from rag_metrics.golden import load_golden
from rag_metrics.sample import sample_paths
from rag_metrics.types import GoldenSet


@functools.lru_cache(maxsize=None)
def sample_index(kind: str = "dense"):
    """The sample corpus indexed with ``kind``, from the shipped embeddings (read-only cache)."""
    from rag_metrics.retrieval import load_sample_index
    from rag_metrics.retrieval.cache import EmbeddingCache

    return load_sample_index(kind=kind, cache=EmbeddingCache(read_only=True))


def sample_golden() -> GoldenSet:
    return load_golden(sample_paths().golden)


@functools.lru_cache(maxsize=None)
def _sample_result(kind: str) -> EvaluationResult:
    return library_result(kind, sample_golden())


def library_result(kind: str = "dense", golden: GoldenSet | None = None) -> EvaluationResult:
    """What the library computes for ``golden`` (default: the sample set) with retriever ``kind``."""
    if golden is None:
        return _sample_result(kind)
    run = sample_index(kind).retriever.retrieve(golden.questions(), k=100)
    return evaluate(golden, run)


def no_exception(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def open_page(app, page: str):
    """Switch an AppTest to ``page``, run it, and check it shows no exception and no error."""
    app.switch_page(page).run()
    no_exception(app)
    assert not app.error, [e.value for e in app.error]
    return app
