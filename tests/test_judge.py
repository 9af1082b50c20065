"""judge(): the grade matrix on hand-made runs, and its errors for bad qrels (InputError)."""
from __future__ import annotations

import numpy as np
import pytest

from rag_metrics import InputError, Run
from rag_metrics.metrics.judge import GRADE_MAX, GRADE_MIN, judge


def test_grade_matrix_ideal_and_top_score_by_hand():
    # q1 ranking (score desc): c(3) b(2) a(1); judged a=2, c=1, z=3 (z never retrieved)
    run = Run.from_dict({"q1": {"a": 1.0, "b": 2.0, "c": 3.0}, "q2": {"x": 0.5}, "other": {"a": 9.0}})
    j = judge({"q1": {"a": 2, "c": 1, "z": 3}, "q2": {"y": 0}, "q3": {"a": 1}}, run)
    assert j.query_ids == ("q1", "q2", "q3")
    assert j.grades.tolist() == [[1, 0, 2], [0, 0, 0], [0, 0, 0]]
    assert j.ideal_grades.tolist() == [[3, 2, 1], [0, 0, 0], [1, 0, 0]]
    assert j.n_retrieved.tolist() == [3, 1, 0]
    assert j.in_run.tolist() == [True, True, False]
    assert j.top_score[:2].tolist() == [3.0, 0.5] and np.isnan(j.top_score[2])
    assert j.ranking(0) == (["c", "b", "a"], [3.0, 2.0, 1.0], [1, 0, 2])
    # is_judged tells a label of grade 0 (y would be) from an unjudged id (b, x)
    assert j.is_judged.tolist() == [[True, False, True], [False, False, False], [False, False, False]]


def test_id_map_keeps_best_rank_and_highest_grade():
    # chunks d1#0 (score 1), d1#1 (score 3), d2#0 (score 2) -> documents d1, d2; d1 judged via two chunks
    run = Run.from_dict({"q": {"d1#0": 1.0, "d1#1": 3.0, "d2#0": 2.0}})
    m = {"d1#0": "d1", "d1#1": "d1", "d2#0": "d2"}
    j = judge({"q": {"d1#0": 1, "d1#1": 3, "d2#0": 0}}, run, id_map=m)
    assert j.ranking(0)[0] == ["d1", "d2"]
    assert j.grades.tolist() == [[3, 0]]
    assert j.ideal_grades.tolist() == [[3]]


def test_depth_cuts_each_query():
    run = Run.from_rankings({"q": ["a", "b", "c"]})
    j = judge({"q": {"c": 1}}, run, depth=2)
    assert j.grades.tolist() == [[0, 0]] and j.n_retrieved.tolist() == [2]


@pytest.mark.parametrize("grade", [10**30, 3_000_000_000, GRADE_MAX + 1, GRADE_MIN - 1, 1.5, "2", None, True])
def test_bad_grades_raise_input_error_naming_query_and_id(grade):
    run = Run.from_rankings({"q": ["a"]})
    with pytest.raises(InputError) as e:
        judge({"q": {"a": 1, "b": grade}}, run)
    assert "query 'q'" in str(e.value) and "'b'" in str(e.value) and str(GRADE_MAX) in str(e.value)


def test_grades_at_the_bounds_are_accepted():
    run = Run.from_rankings({"q": ["a", "b"]})
    j = judge({"q": {"a": GRADE_MAX, "b": GRADE_MIN}}, run)
    assert j.grades.tolist() == [[GRADE_MAX, GRADE_MIN]]


def test_duplicate_query_id_is_an_input_error():
    with pytest.raises(InputError, match="duplicate query id '1'"):
        judge({1: {"a": 1}, "1": {"a": 1}}, Run.from_rankings({"1": ["a"]}))


def _reference_grades(qrels, run_dict):
    """Plain Python: rank each query (score desc, id desc) and look every id up in its qrels."""
    out = []
    for q, rel in qrels.items():
        items = sorted(run_dict.get(q, {}).items(), key=lambda t: t[0].encode(), reverse=True)
        items.sort(key=lambda t: -t[1])
        out.append(([rel.get(i, 0) for i, _ in items], [i in rel for i, _ in items]))
    return out


@pytest.mark.parametrize("cells, max_blocks", [(1 << 22, 512), (7, 512), (7, 2), (1, 10**6)])
@pytest.mark.parametrize("layout", ["golden order", "reversed", "shuffled rows"])
def test_both_joins_and_every_block_layout_give_the_reference_grades(monkeypatch, cells, max_blocks, layout):
    import importlib
    import random

    jm = importlib.import_module("rag_metrics.metrics.judge")
    monkeypatch.setattr(jm, "_DENSE_CELLS", cells)  # tiny tables: many blocks of a few queries
    monkeypatch.setattr(jm, "_MAX_BLOCKS", max_blocks)  # 2: the sorted join instead
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(30)]
    qrels = {f"q{i}": {d: rng.randint(-1, 3) for d in rng.sample(docs, rng.randint(0, 8))} for i in range(25)}
    run_dict = {f"q{i}": {d: float(rng.randint(0, 5)) for d in rng.sample(docs, rng.randint(0, 12))}
                for i in range(25) if i % 6}
    rows = [(q, d, s) for q, r in run_dict.items() for d, s in r.items()]
    if layout == "reversed":
        rows = [(q, d, s) for q in reversed(list(run_dict)) for d, s in run_dict[q].items()]
    elif layout == "shuffled rows":
        rng.shuffle(rows)
    run = Run([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    j = judge(qrels, run)
    expected = _reference_grades(qrels, run_dict)
    for qi, (exp, exp_judged) in enumerate(expected):
        assert j.grades[qi, :len(exp)].tolist() == exp
        assert not j.grades[qi, len(exp):].any()
        assert j.is_judged[qi, :len(exp)].tolist() == exp_judged
        assert not j.is_judged[qi, len(exp):].any()
