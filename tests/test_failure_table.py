"""readouts.failure_table / failure_verdict: the Failures page's table and its words, from the library."""
from __future__ import annotations

import pandas as pd

from rag_metrics.evaluation import evaluate
from rag_metrics.insights import readouts


def test_failure_table_and_verdicts_follow_the_first_relevant_rank():
    golden = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    run = {"q1": {"a": 3.0, "x": 2.0}, "q2": {"x": 3.0, "y": 2.0, "b": 1.0}, "q3": {"x": 2.0, "y": 1.0}}
    res = evaluate(golden, run)
    fails = readouts.failures_with_text(res, 1, {})
    table = readouts.failure_table(fails)
    assert list(table.columns) == ["query_id", "question", "category", "top_score", "would_hit_at"]
    assert list(table["query_id"]) == ["q2", "q3"]
    by_id = table.set_index("query_id")["would_hit_at"]
    assert by_id["q2"] == 3 and pd.isna(by_id["q3"])
    assert readouts.failure_verdict(3) == "would hit at K=3"
    assert readouts.failure_verdict(pd.NA, "document") == "no relevant document in the whole ranking"
    assert readouts.failure_verdict(None) == "no relevant chunk in the whole ranking"
