"""Absent questions (a log covering part of the golden set): counted, named "not in the log", never
retrieval failures; trec_eval's -c reading by default, --only-answered (missing_queries="skip") as
the labelled alternative."""
from __future__ import annotations

import json

import pytest

from rag_metrics import GoldenQuery, GoldenSet, Run
from rag_metrics.cli import main
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.options import EvalOptions

# q1 answered and hit; q2 answered, missed; q3 and q4 absent from the run; q5 out of scope
GOLDEN = GoldenSet((GoldenQuery("q1", "one?", "", {"a": 1}), GoldenQuery("q2", "two?", "", {"b": 1}),
                    GoldenQuery("q3", "three?", "", {"c": 1}), GoldenQuery("q4", "four?", "", {"d": 1}),
                    GoldenQuery("q5", "five?", "out_of_scope", {})))
RUN = Run.from_rankings({"q1": ["a", "x"], "q2": ["x", "y"]})


def test_counts_and_absent_list():
    res = evaluate(GOLDEN, RUN)
    assert (res.n_answered, res.n_absent, res.n_queries) == (2, 2, 4)
    assert res.absent()["query_id"].tolist() == ["q3", "q4"]
    assert res.absent().columns.tolist() == ["query_id", "category", "question"]
    # absent questions are not retrieval failures
    assert res.failures(2)["query_id"].tolist() == ["q2"]
    # trec_eval -c: absent count 0 in the mean -> hit rate 1/4; only the answered -> 1/2
    assert res.mean("hit_rate", 2) == pytest.approx(1 / 4)
    only = res.with_options(missing_queries="skip")
    assert only.mean("hit_rate", 2) == pytest.approx(1 / 2)
    assert (only.n_answered, only.n_absent, only.n_queries) == (2, 2, 2)


def test_out_of_scope_as_misses_counts_them_too():
    res = evaluate(GOLDEN, RUN, EvalOptions(out_of_scope="miss"))
    assert (res.n_answered, res.n_absent) == (2, 3)


def test_cli_only_answered(tmp_path, capsys):
    q = tmp_path / "qrels.txt"
    q.write_text("q1 0 a 1\nq2 0 b 1\nq3 0 c 1\nq4 0 d 1\n")
    r = tmp_path / "run.trec"
    r.write_text("q1 Q0 a 1 2 t\nq1 Q0 x 2 1 t\nq2 Q0 x 1 2 t\nq2 Q0 y 2 1 t\n")
    base = ["evaluate", "--qrels", str(q), "--run", str(r), "--metrics", "hit_rate@2", "--format", "json"]
    assert main(base) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["metrics"]["hit_rate@2"] == pytest.approx(0.25)
    assert (default["n_answered"], default["n_absent"], default["absent_questions"]) == (2, 2, "counted as 0")
    assert main(base + ["--only-answered"]) == 0
    only = json.loads(capsys.readouterr().out)
    assert only["metrics"]["hit_rate@2"] == pytest.approx(0.5) and only["n_queries"] == 2
    assert only["absent_questions"] == "skipped"
    assert main(base[:-2]) == 0
    table = capsys.readouterr().out
    assert "2 answered, 2 not in the run (counted as 0, trec_eval -c; --only-answered leaves them out)" in table


def test_report_notes_answered_and_absent():
    from rag_metrics.report.html import report_content

    content = report_content(evaluate(GOLDEN, RUN), k=2)
    assert any("2 question(s) answered, 2 not in the system's results" in n and "counts 0" in n
               for n in content.notes)
