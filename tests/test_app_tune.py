"""The Tune page (AppTest): a small sweep run from the form gives the library's figures, a configuration
shows its wins and losses against the current system, "Save as baseline" adds a History run, and "Use
this" makes it the sidebar's system."""
from __future__ import annotations

import pytest

from app_helpers import open_page
from rag_metrics.io.corpus import load_corpus
from rag_metrics.io.golden import load_golden
from rag_metrics.retrieval.cache import EmbeddingCache
from rag_metrics.sample import sample_paths
from rag_metrics.systems.store import SystemStore
from rag_metrics.tuning import grid_from_choices, run_sweep
from rag_metrics.tuning.select import rows


@pytest.fixture
def tune(app):
    at = open_page(app, "pages/tune.py")
    at.multiselect(key="tune_sizes").set_value([500])
    at.multiselect(key="tune_kinds").set_value(["dense", "bm25"])
    at.multiselect(key="tune_weights").set_value([])
    at.run()
    return at


def test_the_plan_then_the_sweep_with_the_librarys_figures(tune, app_cache_dir):
    at = tune
    assert any("Planned: 2 configurations over 1 chunking" in c.value.replace("\\", "") for c in at.caption)
    assert any("evidence quotes" in c.value for c in at.caption)
    next(b for b in at.button if b.label == "Run the sweep").click().run()
    assert not at.exception and not at.error
    table = next(d.value for d in at.dataframe if "Configuration" in d.value.columns)
    assert table["Configuration"].tolist() == ["500/100 dense (current system)", "500/100 bm25 k1=1.5 b=0.75"]
    p = sample_paths()
    corpus = load_corpus(str(p.docs))
    ev = load_golden(p.root / "golden_evidence.jsonl")
    grid = grid_from_choices(chunk_sizes=[500], chunk_overlap=100, kinds=["dense", "bm25"])
    lib = rows(run_sweep(grid, corpus, ev, cache=EmbeddingCache(app_cache_dir)))
    assert table["ndcg@10"].tolist() == pytest.approx([r.tuning for r in lib])
    assert table["Held-out"].tolist() == pytest.approx([r.held_out for r in lib])
    assert any("Chosen: 500/100 dense" in s.value and "held-out questions" in s.value for s in at.success)
    # BM25 against the current system (the sidebar's dense retriever)
    at.selectbox(key="tune_pick").set_value("500/100 bm25 k1=1.5 b=0.75").run()
    assert any("Against the current system" in m.value for m in at.markdown)
    assert any('kind = "bm25"' in c.value for c in at.code)
    next(b for b in at.button if b.label == "Save as baseline").click().run()
    runs = SystemStore.for_corpus("sample_corpus").history().runs()
    assert [r.system for r in runs] == ["sweep: 500/100 bm25 k1=1.5 b=0.75"]
    next(b for b in at.button if b.label == "Use this").click().run()
    assert not at.exception
    assert at.selectbox(key="system").value == "bm25"
