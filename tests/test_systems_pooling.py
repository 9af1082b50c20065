"""judged@K beside every system's metrics and the pooled labelling queue (hand-computed)."""
from __future__ import annotations

import pytest

from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.systems.pooling import judged_warning, pooled_queue, system_table
from rag_metrics.types import GoldenQuery, GoldenSet, Run

GOLDEN = GoldenSet((
    GoldenQuery("q1", "first?", relevant={"a": 1, "b": 0}),   # b judged non-relevant
    GoldenQuery("q2", "second?", relevant={"x": 2}),
))
A = Run.from_rankings({"q1": ["a", "c", "d"], "q2": ["y", "x", "unmatched:0123"]}, name="A")
B = Run.from_rankings({"q1": ["d", "b", "e"], "q2": ["x", "y"]}, name="B")


def test_pooled_queue_groups_by_question_most_retrieved_first():
    df = pooled_queue(GOLDEN, {"A": A, "B": B}, k=3, texts={"d": "text of d"})
    # q1: A top3 a(judged) c d ; B top3 d b(judged) e -> unjudged d (A, B; best rank 1), c (A, 2), e (B, 3)
    # q2: A y x(judged) unmatched(skipped); B x(judged) y -> y (A rank 1, B rank 2)
    assert df[["query_id", "chunk_id", "n_systems", "best_rank"]].values.tolist() == [
        ["q1", "d", 2, 1], ["q1", "c", 1, 2], ["q1", "e", 1, 3], ["q2", "y", 2, 1]]
    assert df.loc[0, "systems"] == "A, B" and df.loc[0, "text"] == "text of d" and df.loc[0, "question"] == "first?"
    df2 = pooled_queue(GOLDEN, {"A": A, "B": B}, k=1)
    assert df2[["query_id", "chunk_id", "n_systems"]].values.tolist() == [["q1", "d", 1], ["q2", "y", 1]]
    with pytest.raises(InputError):
        pooled_queue(GOLDEN, {}, k=3)
    with pytest.raises(InputError):
        pooled_queue(GOLDEN, {"A": A}, k=0)


def test_system_table_has_judged_beside_metrics_and_warns():
    res = {"A": evaluate(GOLDEN, A), "B": evaluate(GOLDEN, B)}
    df = system_table(res, ["mrr", "ndcg"], 3)
    assert list(df.columns) == ["system", "mrr@3", "ndcg@3", "judged@3", "answered", "absent", "warning"]
    assert df["answered"].tolist() == [res["A"].n_answered, res["B"].n_answered]
    assert df["absent"].tolist() == [res["A"].n_absent, res["B"].n_absent]
    # judged@3, A: q1 a (1 of 3), q2 x (1 of 3) -> 1/3 ; B: q1 b (1/3), q2 x of 2 retrieved -> 1/2
    assert df["judged@3"].tolist() == pytest.approx([1 / 3, (1 / 3 + 1 / 2) / 2])
    assert df["mrr@3"].tolist() == pytest.approx([(1 + 1 / 2) / 2, (0 + 1) / 2])
    assert "only 33% of A's top 3 carry a label" in df.loc[0, "warning"]
    assert judged_warning(0.9, 3, "A") is None
