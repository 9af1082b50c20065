"""Uploaded systems: run files of every format and RAG logs, matched to golden questions."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.io.raglog import parse_rag_log
from rag_metrics.systems.base import System, match_questions
from rag_metrics.systems.textmatch import (
    UNMATCHED_PREFIX,
    ContextMatcher,
    ContextMatchReport,
    unmatched_id,
)
from rag_metrics.systems.uploads import (
    RagLogSystem,
    RunFileSystem,
    parse_run_upload,
    parse_upload,
)
from rag_metrics.types import Chunk, GoldenQuery, GoldenSet

GOLDEN = GoldenSet((
    GoldenQuery("q1", "What is the refund window?", relevant={"a#0": 1, "b#0": 2}),
    GoldenQuery("q2", "How do I reset my password?", relevant={"c#1": 1}),
    GoldenQuery("q3", "Which plans exist?", relevant={"a#1": 1}),
))
QUESTIONS = GOLDEN.questions()
CHUNKS = [
    Chunk("a#0", "a", "Refunds are possible within 30 days of purchase.", 0, 10),
    Chunk("a#1", "a", "There are three plans: Free, Plus and Pro.", 10, 20),
    Chunk("b#0", "b", "To get a refund, open Settings and choose Billing.", 0, 10),
    Chunk("c#1", "c", "Reset your password from the sign-in page with the 'Forgot' link.", 0, 10),
]


def _rankings(sr) -> dict:
    return {q: [i for i, _ in items] for q, items in sr.run.rankings().items()}


def test_trec_run_upload_by_id():
    data = b"q1 Q0 b#0 1 2.0 t\nq1 Q0 x#9 2 1.0 t\nq2 Q0 c#1 1 5.0 t\nzz Q0 a#0 1 1.0 t\n"
    sys_, rep = parse_upload(data, "mine.trec")
    assert rep.ok and isinstance(sys_, RunFileSystem) and isinstance(sys_, System)
    sr = sys_.rank(QUESTIONS, 100)
    assert _rankings(sr) == {"q1": ["b#0", "x#9"], "q2": ["c#1"]}
    assert [u.key for u in sr.unmatched_rows] == ["zz"]
    assert "2 run queries matched to golden questions (2 by id, 0 by question text)" in sr.notes[0]
    # q1: b#0 relevant at rank 1 (1/1); q2: c#1 at rank 1; q3 missing -> 0. MRR = (1 + 1 + 0) / 3
    res = evaluate(GOLDEN, sr.run)
    assert res.mean("mrr") == pytest.approx(2 / 3)


def test_depth_cut_keeps_trec_eval_order_on_ties():
    # equal scores: trec_eval puts the larger id first ("b" > "a")
    data = b"q1 Q0 a#0 1 1.0 t\nq1 Q0 b#0 2 1.0 t\nq1 Q0 z#0 3 0.5 t\n"
    sys_, _ = parse_upload(data, "r.txt")
    sr = sys_.rank(QUESTIONS, 1)
    assert _rankings(sr) == {"q1": ["b#0"]}


def test_csv_run_with_question_text_and_rank_only():
    data = (b"question,chunk_id,rank\n"
            b"what is the  REFUND window?,a#0,2\n"
            b"what is the  REFUND window?,b#0,1\n"
            b"Which plans exist?,a#1,1\n")
    sys_, rep = parse_upload(data, "run.csv")
    assert rep.ok, rep.lines()
    sr = sys_.rank(QUESTIONS, 10)
    assert _rankings(sr) == {"q1": ["b#0", "a#0"], "q3": ["a#1"]}
    assert "(0 by id, 2 by question text)" in sr.notes[0]


def test_csv_run_problems_name_the_line():
    up, rep = parse_run_upload(b"query_id,chunk_id,score\nq1,a#0,0.5\nq1,b#0,high\n", "r.csv")
    assert rep.errors[0].line == 3 and "score 'high' is not a number" in rep.errors[0].message
    assert len(up.run) == 1
    _, rep = parse_run_upload(b"query_id,doc,value\nq1,a,1\n", "r.csv")
    assert ("missing: an id column ('chunk_id' or 'doc_id') and a 'score' or 'rank' column (columns: query_id, doc, "
            "value)") in rep.lines()[0]
    _, rep = parse_run_upload(b"doc,value\na,1\n", "r.csv")
    assert "missing: a query column ('query_id' or 'question'), an id column" in rep.lines()[0]
    assert "no a" not in rep.lines()[0] and "no an" not in rep.lines()[0]  # the grammar slip of issue 47


def test_pytrec_eval_json_and_jsonl_rows():
    data = json.dumps({"q1": {"a#0": 0.2, "b#0": 0.9}, "q2": {"c#1": 1}}).encode()
    sys_, rep = parse_upload(data, "run.json")
    assert rep.ok
    assert _rankings(sys_.rank(QUESTIONS, 10)) == {"q1": ["b#0", "a#0"], "q2": ["c#1"]}
    rows = [{"query_id": "q2", "ids": ["x", "c#1"]},
            {"question": "which plans EXIST?", "results": [{"id": "a#1", "score": 0.1}, {"id": "a#0", "score": 0.7}]}]
    sys_, rep = parse_upload("\n".join(map(json.dumps, rows)).encode(), "run.jsonl")
    assert rep.ok, rep.lines()
    assert _rankings(sys_.rank(QUESTIONS, 10)) == {"q2": ["x", "c#1"], "q3": ["a#0", "a#1"]}


def test_run_rows_problems():
    _, rep = parse_run_upload(b'{"query_id": "q1", "ids": "a#0"}\n{"query_id": "q1"}\n', "r.jsonl")
    msgs = rep.lines()
    assert "r.jsonl:1" in msgs[0] and "must be a JSON list of ids, got str" in msgs[0]
    assert "r.jsonl:2" in msgs[1] and "needs a query" in msgs[1]
    _, rep = parse_run_upload(b"", "r.trec")
    assert "file is empty" in rep.lines()[0]
    _, rep = parse_run_upload(b"x" * 20, "r.trec", max_bytes=10)
    assert "limit is 10 bytes" in rep.lines()[0]


def test_context_matcher_exact_fuzzy_unmatched():
    m = ContextMatcher(CHUNKS, threshold=90)
    assert m.match("  refunds are POSSIBLE within 30 days of purchase. ") == ("a#0", "exact", 100.0)
    cid, kind, score = m.match("Refunds are possible within 30 days of a purchase.")
    assert (cid, kind) == ("a#0", "fuzzy") and 90 <= score < 100
    cid, kind, _ = m.match("Something else entirely.")
    assert kind == "unmatched" and cid == unmatched_id("something  else ENTIRELY.") and cid.startswith(UNMATCHED_PREFIX)
    rep = ContextMatchReport(90)
    m.match_all(["There are three plans: Free, Plus and Pro.", "nope"], "line 1", rep)
    assert (rep.exact, rep.fuzzy, rep.unmatched) == (1, 0, 1)
    assert "1 unmatched" in rep.note() and "count as non-relevant" in rep.note()
    with pytest.raises(InputError, match="threshold"):
        ContextMatcher(CHUNKS, threshold=0)


def test_rag_log_by_text_with_match_report():
    rows = [
        {"question": "what is the refund window?",  # matched to q1 by text
         "contexts": ["Unrelated marketing text.", "Refunds are possible within 30 days of purchase.",
                      "To get a refund, open settings and choose billing."]},
        {"question": "Which plans exist?", "contexts": ["There are three plans: Free, Plus and Pro"]},
        {"question": "Not in the golden set", "contexts": ["x"]},
    ]
    log, rep = parse_rag_log("\n".join(map(json.dumps, rows)), "log.jsonl")
    assert rep.ok
    system = RagLogSystem(log, CHUNKS)
    sr = system.rank(QUESTIONS, 10)
    unmatched = unmatched_id("Unrelated marketing text.")
    assert _rankings(sr) == {"q1": [unmatched, "a#0", "b#0"], "q3": ["a#1"]}
    cm = sr.context_match
    assert (cm.exact, cm.fuzzy, cm.unmatched) == (2, 1, 2)  # "x" of the unmatched row is counted too
    assert [u.where for u in sr.unmatched_rows] == ["line 3"]
    # q1: relevant at ranks 2 and 3 -> MRR 1/2; q3: rank 1; q2 absent -> 0.  mean = (0.5 + 1 + 0) / 3
    res = evaluate(GOLDEN, sr.run)
    assert res.mean("mrr") == pytest.approx(1.5 / 3)
    # P@3 of q1 = 2/3: the unmatched context counts as a non-relevant retrieved item
    assert res.values("precision", 3)[0] == pytest.approx(2 / 3)


def test_rag_log_with_ids_needs_no_corpus_and_matches_ids():
    log, _ = parse_rag_log(json.dumps({"id": "q2", "question": "other words", "contexts": [],
                                       "context_ids": ["c#1"]}), "l.jsonl")
    sr = RagLogSystem(log).rank(QUESTIONS, 10)
    assert _rankings(sr) == {"q2": ["c#1"]}
    log, _ = parse_rag_log(json.dumps({"question": "q", "contexts": ["t"]}), "l.jsonl")
    with pytest.raises(InputError, match="give the corpus"):
        RagLogSystem(log)


def test_match_questions_duplicates_and_text_first():
    m = match_questions({"1": "Alpha?", "2": "Beta?"}, [("1", "beta?", "line 1"), ("2", "BETA?", "line 2"),
                                                        ("9", "gamma", "line 3")], text_first=True)
    assert m.to_golden == {"1": "2"}
    assert [u.where for u in m.unmatched] == ["line 2", "line 3"]
    assert "already answered by line 1" in m.unmatched[0].reason


def test_ranks_are_deterministic_and_fingerprints_differ():
    a, _ = parse_upload(b"q1 Q0 a#0 1 1 t\n", "a.trec")
    b, _ = parse_upload(b"q1 Q0 b#0 1 1 t\n", "b.trec")
    assert a.fingerprint != b.fingerprint
    r1, r2 = a.rank(QUESTIONS, 5).run, a.rank(QUESTIONS, 5).run
    assert np.array_equal(r1.ids, r2.ids)


def test_trec_run_saved_as_tsv_is_read_as_trec():
    sys_, rep = parse_upload(b"q1\tQ0\tb#0\t1\t2.0\tt\n", "run.tsv")
    assert rep.ok and _rankings(sys_.rank(QUESTIONS, 5)) == {"q1": ["b#0"]}


def test_rank_run_equals_run_from_rankings():
    from rag_metrics.systems.uploads import _rank_run
    from rag_metrics.types import Run

    rankings = {"q1": ["b", "a", "c"], "q2": [], "q3": ["a", "a", "z"]}
    fast, ref = _rank_run(rankings, "x"), Run.from_rankings(rankings, "x")
    assert fast.rankings() == ref.rankings() == {"q1": [("b", 3.0), ("a", 2.0), ("c", 1.0)],
                                                 "q3": [("a", 3.0), ("z", 1.0)]}
