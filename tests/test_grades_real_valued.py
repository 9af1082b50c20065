"""Real-valued grades are refused everywhere with a message naming the query, the id and the value
(issue 19): never truncated (``int(0.8)`` is 0), never a bare ValueError or TypeError."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rag_metrics import GoldenSet, Run
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.io.golden import parse_golden
from rag_metrics.io.trec import parse_trec_qrels
from rag_metrics.metrics.judge import judge
from rag_metrics.types import GoldenQuery

RUN = Run.from_rankings({"q1": ["a", "b"]})


@pytest.mark.parametrize("bad", [0.8, 1.5, math.nan, math.inf, None, True, "high", np.float32(0.8)])
def test_from_qrels_refuses_with_query_id_and_value(bad):
    with pytest.raises(InputError) as e:
        GoldenSet.from_qrels({"q1": {"a": 1, "b": bad}})
    msg = str(e.value)
    assert "'q1'" in msg and "'b'" in msg and "grade" in msg and "whole number" in msg


@pytest.mark.parametrize("bad", [0.8, math.nan, None])
def test_evaluate_on_dicts_refuses_the_same_way(bad):
    with pytest.raises(InputError, match="query 'q1', id 'b'"):
        evaluate({"q1": {"a": 1, "b": bad}}, RUN)


def test_whole_numbers_in_any_spelling_keep_their_value():
    g = GoldenSet.from_qrels({"q1": {"a": 1.0, "b": np.int64(2), "c": "3", "d": 0}})
    assert g.queries[0].relevant == {"a": 1, "b": 2, "c": 3, "d": 0}
    assert all(type(v) is int for v in g.queries[0].relevant.values())


def test_other_entry_points_refuse_real_grades_too():
    # a GoldenQuery built by hand reaches the judge, which names query, id and value
    with pytest.raises(InputError, match=r"query 'q1': grade 0\.8 of id 'b'"):
        judge(GoldenSet((GoldenQuery("q1", "?", relevant={"a": 1, "b": 0.8}),)).qrels(), RUN)  # type: ignore[dict-item]
    # golden files and TREC qrels: reported with where it was
    _, rep = parse_golden('{"id": "q1", "question": "?", "relevant": {"a": 0.8}}\n', "jsonl", "g.jsonl")
    assert not rep.ok and "0.8" in " ".join(rep.lines())
    _, rep = parse_trec_qrels("q1 0 a 0.8\n")
    assert not rep.ok and "0.8" in " ".join(rep.lines())
