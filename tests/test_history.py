"""Runs kept over time: a saved run round-trips, metrics over runs with CIs, paired comparison by
the one decision rule, and the CLI's --baseline gate catching a planted regression (exit 1, naming
the metric) while an equal run passes."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from rag_metrics.cli import main
from rag_metrics.compare.history import (
    RunHistory,
    compare_runs,
    load_saved_run,
    metric_over_runs,
    parse_saved_run,
    regressions,
    save_run,
    saved_run,
)
from rag_metrics.compare.paired import compare
from rag_metrics.errors import InputError
from rag_metrics.evaluation import bootstrap_ci, evaluate
from rag_metrics.io.golden import load_golden
from rag_metrics.io.trec import load_run

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_PATH = ROOT / "sample_corpus" / "golden.jsonl"
KEYS = ["hit_rate@5", "mrr@10", "ndcg@10", "recall@10"]


def _trec(golden, worse: bool = False, seed: int = 3) -> str:
    """A run that finds a relevant id at rank 1 for most queries; ``worse`` pushes it to rank 8
    for two thirds of them (a planted regression)."""
    rng = np.random.default_rng(seed)
    pool = sorted({i for q in golden for i in q.relevant})
    lines = []
    for n, q in enumerate(golden):
        rel = [i for i, g in q.relevant.items() if g > 0][:1]
        others = [i for i in rng.choice(pool, 12, replace=False) if i not in q.relevant][:9]
        ids = rel + others
        if worse and rel and n % 3:
            ids = others[:7] + rel + others[7:]
        lines += [f"{q.id} Q0 {i} {r + 1} {len(ids) - r} t" for r, i in enumerate(ids)]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def golden():
    return load_golden(GOLDEN_PATH)


def _result(golden, tmp_path, name="run.trec", worse=False):
    p = tmp_path / name
    p.write_text(_trec(golden, worse))
    return evaluate(golden, load_run(p)), p


def test_saved_run_round_trips_and_means_equal_the_evaluation(golden, tmp_path):
    res, _ = _result(golden, tmp_path)
    run = saved_run(res, KEYS, "release 1", "bm25", {"k": 10},
                    created=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
    assert run.created == "2026-01-02T03:04:05+00:00" and run.golden_fingerprint == golden.fingerprint()
    assert run.settings["missing_queries"] == "zero" and run.settings["k"] == 10
    assert len(run.query_ids) == res.n_queries
    back = load_saved_run(save_run(run, tmp_path / "r.json"))
    assert back == run
    for k in KEYS:
        assert back.mean(k) == pytest.approx(res.mean(k), abs=1e-12)


def test_compare_runs_is_the_decision_rule_of_compare(golden, tmp_path):
    a, _ = _result(golden, tmp_path, "a.trec")
    b, _ = _result(golden, tmp_path, "b.trec", worse=True)
    table, notes = compare_runs(saved_run(a, KEYS, "base", "s"), saved_run(b, KEYS, "new", "s"))
    direct = compare(a, b, KEYS)
    assert notes == []
    for col in ("mean_a", "mean_b", "delta", "p_ttest_adj", "ci_low", "ci_high", "verdict"):
        got, want = table[col].tolist(), direct[col].tolist()
        assert got == pytest.approx(want) if col != "verdict" else got == want
    bad = regressions(table)
    assert "mrr@10" in bad["key"].tolist() and "hit_rate@5" in bad["key"].tolist()
    same, _ = compare_runs(saved_run(a, KEYS, "base", "s"), saved_run(a, KEYS, "again", "s"))
    assert regressions(same).empty and set(same["verdict"]) == {"identical"}


def test_metric_over_runs_with_cis(golden, tmp_path):
    a, _ = _result(golden, tmp_path, "a.trec")
    b, _ = _result(golden, tmp_path, "b.trec", worse=True)
    ra = saved_run(a, KEYS, "first", "s", created=datetime(2026, 1, 1, tzinfo=timezone.utc))
    rb = saved_run(b, KEYS, "second", "s", created=datetime(2026, 2, 1, tzinfo=timezone.utc))
    df = metric_over_runs([rb, ra], "mrr@10")
    assert df["run"].tolist() == ["first", "second"]
    assert df["mean"].tolist() == pytest.approx([a.mean("mrr@10"), b.mean("mrr@10")])
    lo, hi = bootstrap_ci(a.values("mrr@10")[a.included])
    assert (df["ci_low"].iloc[0], df["ci_high"].iloc[0]) == pytest.approx((lo, hi))


def test_run_history_folder(golden, tmp_path):
    res, _ = _result(golden, tmp_path)
    h = RunHistory(tmp_path / "runs")
    assert h.runs() == []
    h.add(saved_run(res, KEYS, "v1", "s", created=datetime(2026, 1, 1, tzinfo=timezone.utc)))
    h.add(saved_run(res, KEYS, "v2", "s", created=datetime(2026, 1, 2, tzinfo=timezone.utc)))
    assert h.names() == ["v1", "v2"]
    with pytest.raises(InputError, match="saved already"):
        h.add(saved_run(res, KEYS, "v1", "s"))
    (tmp_path / "runs" / "junk.json").write_text("{not json")
    assert h.names() == ["v1", "v2"]  # a damaged file is skipped
    assert h.remove("v1") and h.names() == ["v2"]


@pytest.mark.parametrize("text, msg", [
    ("{bad", "invalid JSON"), ("[]", "expected a JSON object"), ('{"version": 7}', "field 'version'"),
    ('{"version": 1, "name": "x"}', "field 'system'"),
    ('{"version": 1, "name": "x", "system": "s", "created": "t", "golden_fingerprint": "g", "settings": {}, '
     '"metrics": ["mrr@10"], "query_ids": ["q1", "q2"], "values": {"mrr@10": [0.5]}}', "values.mrr@10"),
    ('{"version": 1, "name": "x", "system": "s", "created": "t", "golden_fingerprint": "g", "settings": {}, '
     '"metrics": ["mrr@10"], "query_ids": ["q1"], "values": {"mrr@10": [3]}}', "outside"),
])
def test_malformed_saved_runs_name_the_field(text, msg):
    with pytest.raises(InputError, match=msg):
        parse_saved_run(text, "base.json")


# ---- the CLI gate ---------------------------------------------------------------------------------
def _eval(capsys, run_path, *extra) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["evaluate", "--qrels", str(GOLDEN_PATH), "--run", str(run_path), "--metrics", ",".join(KEYS),
                 "--format", "json", *map(str, extra)])
    return code, capsys.readouterr().err


def test_cli_baseline_catches_a_planted_regression_and_passes_an_equal_run(golden, tmp_path, capsys):
    _, good = _result(golden, tmp_path, "good.trec")
    _, bad = _result(golden, tmp_path, "bad.trec", worse=True)
    base = tmp_path / "baseline.json"
    code, err = _eval(capsys, good, "--save-run", base, "--run-name", "release 1.0")
    assert code == 0 and "saved run 'release 1.0'" in err
    saved = json.loads(base.read_text())
    assert saved["name"] == "release 1.0" and saved["metrics"] == KEYS
    code, err = _eval(capsys, good, "--baseline", base, "--fail-on-regression")
    assert code == 0, err
    assert "no metric is significantly worse" in err
    code, err = _eval(capsys, bad, "--baseline", base, "--fail-on-regression")
    assert code == 1
    assert "REGRESSION mrr@10" in err and "REGRESSION hit_rate@5" in err and "'release 1.0'" in err
    code, err = _eval(capsys, bad, "--baseline", base)  # without the flag: reported, exit 0
    assert code == 0 and "REGRESSION mrr@10" in err


def test_cli_history_errors_are_one_line(golden, tmp_path, capsys):
    _, good = _result(golden, tmp_path, "good.trec")
    code, err = _eval(capsys, good, "--fail-on-regression")
    assert code == 2 and "needs --baseline" in err and "Traceback" not in err
    (tmp_path / "b.json").write_text('{"version": 1}')
    code, err = _eval(capsys, good, "--baseline", tmp_path / "b.json")
    assert code == 2 and "field 'name'" in err and "Traceback" not in err


def test_cli_save_run_to_an_unwritable_place_is_one_line(golden, tmp_path, capsys):
    _, good = _result(golden, tmp_path, "good.trec")
    code, err = _eval(capsys, good, "--save-run", tmp_path)  # a folder, not a file
    assert code == 2 and "--save-run" in err and "cannot write the file" in err and "Traceback" not in err
