"""The Tune page's smaller slips (issue 47), on BM25-only sweeps (no embedding): removing the hybrid
retriever sweeps no weighted hybrid; after "Use this" the table names the new current system; a
sweep.json from `rag-metrics sweep` finds the current system by its configuration; the chart's legend
names only the groups it draws; the first screen points an engineer to Bring your system."""
from __future__ import annotations

import json

import pytest

from app_helpers import open_page
from rag_metrics.io.corpus import load_corpus
from rag_metrics.io.golden import load_golden
from rag_metrics.sample import sample_paths
from rag_metrics.tuning import grid_from_choices, run_sweep
from rag_metrics.tuning.select import rows
from rag_metrics.tuning.store import sweep_to_dict


def _bm25_sweep(sizes):
    p = sample_paths()
    grid = grid_from_choices(chunk_sizes=sizes, chunk_overlap=100, kinds=["bm25"])
    return run_sweep(grid, load_corpus(str(p.docs)), load_golden(p.root / "golden_evidence.jsonl"))


def _table(at):
    return next(d.value for d in at.dataframe if "Configuration" in d.value.columns)["Configuration"].tolist()


@pytest.fixture
def tune_bm25(app):
    """The Tune page with BM25 as the sidebar's retriever."""
    at = open_page(app, "pages/tune.py")
    at.selectbox(key="system").set_value("bm25").run()
    assert not at.exception
    return at


def test_without_the_hybrid_retriever_the_weights_add_no_hybrid(app):
    at = open_page(app, "pages/tune.py")
    at.multiselect(key="tune_sizes").set_value([500])
    at.multiselect(key="tune_kinds").set_value(["dense", "bm25"]).run()  # the weights field keeps its 0.5
    assert at.multiselect(key="tune_weights").disabled
    assert any("Planned: 2 configurations over 1 chunking" in c.value.replace("\\", "") for c in at.caption)


def test_after_use_this_the_table_names_the_new_current_system(tune_bm25):
    at = tune_bm25
    at.multiselect(key="tune_sizes").set_value([300, 500])
    at.multiselect(key="tune_kinds").set_value(["bm25"]).run()
    next(b for b in at.button if b.label == "Run the sweep").click().run()
    assert not at.exception
    assert _table(at) == ["300/100 bm25 k1=1.5 b=0.75", "500/100 bm25 k1=1.5 b=0.75 (current system)"]
    at.selectbox(key="tune_pick").set_value("300/100 bm25 k1=1.5 b=0.75").run()
    next(b for b in at.button if b.label == "Use this").click().run()
    at.run()
    assert not at.exception
    assert _table(at) == ["300/100 bm25 k1=1.5 b=0.75 (current system)", "500/100 bm25 k1=1.5 b=0.75"]


def test_a_sweep_json_from_the_cli_knows_the_current_system(tune_bm25):
    at = tune_bm25
    res = _bm25_sweep([300, 500])
    assert res.baseline is None  # the CLI's sweep names no current system
    at.file_uploader(key="tune_upload").set_value(("sweep.json", json.dumps(sweep_to_dict(res)).encode(),
                                                   "application/json")).run()
    assert not at.exception
    assert "500/100 bm25 k1=1.5 b=0.75 (current system)" in _table(at)
    at.selectbox(key="tune_pick").set_value("300/100 bm25 k1=1.5 b=0.75").run()
    assert not any("not scored in this sweep" in c.value for c in at.caption)
    assert any("Against the current system" in m.value for m in at.markdown)


def test_the_legend_names_only_the_groups_drawn():
    from ui.tune import chart

    spec = chart(rows(_bm25_sweep([500])), "ndcg@10", "p95_ms").to_dict()
    domains = [layer["encoding"]["color"]["scale"]["domain"] for layer in spec["layer"]]
    assert all("current system" not in d for d in domains), domains


def test_the_first_screen_points_an_engineer_to_bring_your_system(app):
    """The Dashboard (served at "/") links the Lesson for a student and Bring your system for an engineer."""
    links = {e.proto.page: e.proto.label for e in app.get("page_link")}
    assert "Bring your system" in links.get("bring_your_system", "")
    assert "Lesson" in links.get("lesson", "")
