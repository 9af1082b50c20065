"""Ids for questions without one cost constant time per question (issue 50): N identical questions
once cost N²/2 probes.  Counted in probes (ids looked up), never in seconds."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_metrics.io import golden as golden_io
from rag_metrics.io.free_ids import FreeIds
from rag_metrics.io.golden import parse_golden, stable_query_id


def _naive(rows: list[tuple[str, str | None]]) -> list[str]:
    """The rule as it was written: probe base, base-2, base-3, ... (quadratic, for small inputs)."""
    seen: list[str] = []
    for question, qid in rows:
        if qid is None:
            base = qid = stable_query_id(question)
            n = 2
            while qid in seen:
                qid, n = f"{base}-{n}", n + 1
        elif qid in seen:
            continue
        seen.append(qid)
    return seen


_QUESTION = st.sampled_from(["a?", "b?", "c?"])
_GIVEN_ID = st.one_of(st.none(), st.builds(lambda q, n: f"{stable_query_id(q)}-{n}", _QUESTION, st.integers(2, 6)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_QUESTION, _GIVEN_ID), max_size=40))
def test_the_ids_are_the_rule_s_and_each_costs_constant_probes(rows):
    text = "".join(f'{{"question": "{q}"' + (f', "id": "{i}"' if i else "") + "}\n" for q, i in rows)
    golden, _ = parse_golden(text, "jsonl")
    assert list(golden.ids) == _naive(rows)
    ids = FreeIds()
    for q, i in rows:
        if i is None:
            ids.new(stable_query_id(q))
        elif i not in ids:
            ids.add(i)
    assert ids.probes <= 3 * len(rows)  # two per new id, plus one per id a row gives


class _Counting(FreeIds):
    made: list[FreeIds] = []

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        _Counting.made.append(self)


def test_100000_identical_questions_parse_in_linear_probes(monkeypatch):
    monkeypatch.setattr(golden_io, "FreeIds", _Counting)
    probes = []
    for n in (50_000, 100_000):
        _Counting.made.clear()
        golden, _ = parse_golden('{"question": "same?"}\n' * n, "jsonl")
        assert len(golden) == n and golden.queries[-1].id == f"{stable_query_id('same?')}-{n}"
        probes.append(_Counting.made[0].probes)
    assert probes[1] <= 2 * probes[0] + 2 and probes[1] <= 2 * 100_000  # n -> 2n doubles the work, no more
