"""Out of scope means what the golden set says (category out_of_scope, or no judgment at all)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rag_metrics import GoldenQuery, GoldenSet, Run
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.io.trec import read_qrels, read_run
from rag_metrics.metrics.options import EvalOptions

SAMPLE = Path(__file__).resolve().parents[1] / "sample_corpus" / "golden.jsonl"


@pytest.fixture
def trec_files(tmp_path):
    # q1: a relevant; q2: judged, none relevant (grades 0 and -1); q3: no judgment line at all
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 a 0\nq2 0 c -1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 a 1 2.0 t\nq2 Q0 d 2 1.0 t\n")
    return read_qrels(qrels), read_run(run)[0]


def test_judged_none_relevant_is_in_scope_and_scores_zero(trec_files):
    golden, run = trec_files
    res = evaluate(golden, run)
    assert res.query_ids == ("q1", "q2")
    assert res.in_scope.tolist() == [True, True]
    assert res.n_queries == 2 and res.n_out_of_scope == 0
    # q1: a at rank 1 -> P@1 = 1, hit = 1; q2: 0 everywhere -> means halve
    assert res.mean("precision", 1) == 0.5
    assert res.mean("hit_rate", 2) == 0.5
    assert res.mean("ndcg", 2) == 0.5
    assert res.mean("mrr") == 0.5
    # q2 shows in the failures (judged, in scope, nothing relevant found)
    assert res.failures(2)["query_id"].tolist() == ["q2"]


def test_old_reading_is_an_explicit_option(trec_files):
    golden, run = trec_files
    old = evaluate(golden, run, EvalOptions(out_of_scope_rule="no_relevant_id"))
    assert old.in_scope.tolist() == [True, False]
    assert old.n_queries == 1
    assert old.mean("precision", 1) == 1.0
    # and it composes with "count out-of-scope as misses"
    assert old.with_options(out_of_scope="miss").mean("precision", 1) == 0.5
    with pytest.raises(InputError, match="out_of_scope_rule must be one of golden_set, no_relevant_id"):
        EvalOptions(out_of_scope_rule="none_relevant")  # type: ignore[arg-type]  # a bad value on purpose


def test_golden_set_says_out_of_scope():
    golden = GoldenSet((
        GoldenQuery("q1", "in scope", "factual", {"a": 1}),
        GoldenQuery("q2", "capital of France?", "out_of_scope", {}),
        GoldenQuery("q3", "no judgment, no category", "", {}),
        GoldenQuery("q4", "judged non-relevant", "factual", {"b": 0}),
        GoldenQuery("q5", "marked out of scope, labelled anyway", "out_of_scope", {"a": 1}),
    ))
    run = Run.from_rankings({q: ["a", "b"] for q in ("q1", "q2", "q3", "q4", "q5")})
    res = evaluate(golden, run)
    assert res.in_scope.tolist() == [True, False, False, True, False]
    assert res.n_out_of_scope == 3 and res.n_queries == 2
    # q1 hit at rank 1, q4 judged with none relevant: 0
    assert res.mean("hit_rate", 1) == 0.5
    assert res.abstention(0.0)["out_of_scope_answered"] == 3
    old = res.with_options(out_of_scope_rule="no_relevant_id")
    assert old.in_scope.tolist() == [True, False, False, False, True]


def test_sample_golden_set_scope_unchanged():
    """The sample's out-of-scope questions carry the category and no judgment: both rules agree, so
    every sample mean is unchanged."""
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    golden = GoldenSet(tuple(GoldenQuery(r["id"], r["question"], r.get("category", ""), r.get("relevant", {}))
                             for r in rows))
    ids = sorted({i for r in rows for i in r.get("relevant", {})})
    rng = np.random.default_rng(0)
    run = Run.from_rankings({r["id"]: list(rng.permutation(ids)[:10]) for r in rows})
    new = evaluate(golden, run)
    old = new.with_options(out_of_scope_rule="no_relevant_id")
    assert new.in_scope.tolist() == old.in_scope.tolist()
    assert new.n_out_of_scope == 12 == sum(r.get("category") == "out_of_scope" for r in rows)
    for m in ("hit_rate", "mrr", "precision", "recall", "ndcg", "map"):
        assert new.mean(m, 5) == old.mean(m, 5)
