"""The History page (AppTest): an evaluation saved as a named run from the sidebar's system, each
metric over runs with CIs equal to the library's, and a paired comparison that names a planted
regression by the one decision rule (the same verdicts as the CLI's --baseline gate)."""
from __future__ import annotations

from pathlib import Path

import pytest

from app_helpers import goto, no_exception
from rag_metrics.compare.history import compare_runs, regressions
from rag_metrics.evaluation import bootstrap_ci, evaluate
from rag_metrics.io.golden import load_golden
from rag_metrics.io.trec import load_run
from rag_metrics.systems.store import SystemStore
from tests.test_history import _trec

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_PATH = ROOT / "sample_corpus" / "golden.jsonl"


@pytest.fixture
def two_systems(app_env, tmp_path):
    golden = load_golden(GOLDEN_PATH)
    store = SystemStore.for_corpus("sample_corpus")
    paths = {}
    for name, worse in (("good", False), ("bad", True)):
        text = _trec(golden, worse)
        paths[name] = tmp_path / f"{name}.trec"
        paths[name].write_text(text)
        spec, rep = store.add_upload(name, f"{name}.trec", text.encode())
        assert spec is not None, rep.lines()
    return golden, paths, store


def _open(system: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["system"] = system
    at.run()
    no_exception(at)
    return goto(at, "pages/history.py")


def _save(at, name: str) -> None:
    at.text_input(key="history_name").set_value(name)
    next(b for b in at.button if "Save this evaluation" in b.label).click().run()
    no_exception(at)


def test_save_runs_see_them_over_time_and_catch_the_regression(two_systems):
    golden, paths, store = two_systems
    at = _open("good")
    assert any("No run saved yet" in i.value for i in at.info)
    _save(at, "release 1")
    assert any("Saved run release 1" in s.value for s in at.success)
    at.selectbox(key="system").set_value("bad").run()
    goto(at, "pages/history.py")
    _save(at, "release 2")
    runs = store.history().runs()
    assert [r.name for r in runs] == ["release 1", "release 2"]
    assert [r.system for r in runs] == ["good", "bad"]
    good = evaluate(golden, load_run(paths["good"]))
    bad = evaluate(golden, load_run(paths["bad"]))
    # each metric over runs: the library's means and bootstrap CIs
    at.selectbox(key="history_metric").set_value("mrr@5").run()
    table = next(d.value for d in at.dataframe if "ci_low" in d.value.columns)
    assert table["run"].tolist() == ["release 1", "release 2"]
    assert table["mean"].tolist() == pytest.approx([good.mean("mrr@5"), bad.mean("mrr@5")])
    assert (table["ci_low"].iloc[0], table["ci_high"].iloc[0]) == pytest.approx(
        bootstrap_ci(good.values("mrr@5")[good.included]))
    # the paired comparison names the regression, as the CLI gate would
    assert at.selectbox(key="history_a").value == "release 1" and at.selectbox(key="history_b").value == "release 2"
    expected = regressions(compare_runs(*runs)[0])["key"].tolist()
    assert "mrr@5" in expected
    assert any("release 2 is significantly worse than release 1" in e.value and "mrr@5" in e.value
               for e in at.error)
    # an equal pair passes
    at.selectbox(key="history_b").set_value("release 1").run()
    no_exception(at)
    assert any("No metric of release 1 is significantly worse" in s.value for s in at.success)


def test_duplicate_name_is_refused_with_a_message(two_systems):
    at = _open("good")
    _save(at, "v1")
    _save(at, "v1")
    assert any("saved already" in e.value for e in at.error)


def test_a_run_saved_by_the_cli_is_added_and_compared(two_systems, tmp_path, capsys):
    from rag_metrics.cli import main

    golden, paths, store = two_systems
    out = tmp_path / "ci-run.json"
    assert main(["evaluate", "--qrels", str(GOLDEN_PATH), "--run", str(paths["bad"]), "--metrics", "mrr,ndcg",
                 "--k", "5", "--save-run", str(out), "--run-name", "from CI"]) == 0
    at = _open("good")
    _save(at, "app run")
    at.file_uploader(key="history_upload").set_value(("ci-run.json", out.read_bytes(), "application/json")).run()
    no_exception(at)
    assert sorted(r.name for r in store.history().runs()) == ["app run", "from CI"]
    at.selectbox(key="history_a").set_value("app run").run()
    at.selectbox(key="history_b").set_value("from CI").run()
    assert any("from CI is significantly worse than app run" in e.value for e in at.error)
    at.file_uploader(key="history_upload").set_value(("bad.json", b'{"version": 1}', "application/json")).run()
    no_exception(at)
    assert any("field 'name'" in e.value for e in at.error)
