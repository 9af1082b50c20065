"""GoldenSession without Streamlit: edit, save, reload, conflict between two sessions on one
workspace file, reset, carry-over, single-label judging.  What was saved is read back from disk."""
from __future__ import annotations

import json

import pytest

from rag_metrics.authoring.golden_session import GoldenSession, apply_table_edits, judge_label
from rag_metrics.types import OUT_OF_SCOPE, Chunk, GoldenQuery, GoldenSet
from rag_metrics.workspace.store import Workspace

SEED = GoldenSet((
    GoldenQuery("q1", "How big is the free plan?", "factual", {"d#0": 2}),
    GoldenQuery("q2", "Who won the 1998 world cup?", OUT_OF_SCOPE, {}),
), name="seed")


def saved_rows(ws: Workspace) -> list[dict]:
    """The workspace file as written on disk."""
    return [json.loads(line) for line in ws.path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def ws(tmp_path) -> Workspace:
    return Workspace("corpus", root=tmp_path)


def session(ws: Workspace, name: str = "s1") -> GoldenSession:
    return GoldenSession(ws, SEED, name="corpus", session_id=name)


def test_starts_from_the_seed_without_writing(ws):
    s = session(ws)
    assert [q.id for q in s.golden] == ["q1", "q2"] and s.golden.name == "corpus"
    assert s.version is None and not s.saved
    assert not ws.path.exists()
    assert s.fingerprint == s.golden.fingerprint()


def test_table_edit_saves_once_and_a_new_session_reloads_it(ws):
    s = session(ws)
    tid, _ = s.table()
    out = s.apply_table_edits(tid, {"edited_rows": {0: {"question": "How big is the free plan, in GB?"}},
                                    "added_rows": [], "deleted_rows": []})
    assert out.ok and out.saved is not None and out.saved.saved
    rows = saved_rows(ws)
    assert [r["question"] for r in rows] == ["How big is the free plan, in GB?", "Who won the 1998 world cup?"]
    assert rows[0]["relevant"] == {"d#0": 2}
    # the base table is kept for the editor (its edits stay relative to it)
    assert s.table()[0] == tid
    # the same edit state again (a rerun) changes nothing and writes nothing
    mtime = ws.path.stat().st_mtime_ns
    again = s.apply_table_edits(tid, {"edited_rows": {0: {"question": "How big is the free plan, in GB?"}}})
    assert again.saved is None and ws.path.stat().st_mtime_ns == mtime
    fresh = session(ws, "s2")
    assert fresh.golden.get("q1").question == "How big is the free plan, in GB?"
    assert fresh.version == s.version


def test_added_and_deleted_rows(ws):
    s = session(ws)
    tid, _ = s.table()
    s.apply_table_edits(tid, {"edited_rows": {}, "deleted_rows": [1],
                              "added_rows": [{"question": "Can I pay by bank transfer?", "category": "factual",
                                              "relevant": ["b#0"], "grades": "3"}]})
    rows = saved_rows(ws)
    assert rows[0]["id"] == "q1" and len(rows) == 2
    assert rows[1]["question"] == "Can I pay by bank transfer?" and rows[1]["relevant"] == {"b#0": 3}


def test_invalid_edit_is_not_saved_and_keeps_the_last_valid_set(ws):
    s = session(ws)
    tid, _ = s.table()
    out = s.apply_table_edits(tid, {"edited_rows": {0: {"grades": "x"}}})
    assert not out.ok and out.saved is None
    assert not ws.path.exists()
    assert s.golden.get("q1").relevant == {"d#0": 2}
    assert s.problems(["d#0"]).errors  # the parse error is listed with the validation problems


def test_edit_on_a_stale_table_is_refused(ws):
    s = session(ws)
    tid, _ = s.table()
    s.judge("q1", "d#1", 1)  # another change: the base table is dropped
    out = s.apply_table_edits(tid, {"edited_rows": {0: {"question": "x?"}}})
    assert not out.ok and "changed since" in out.report.errors[0].message
    assert s.table()[0] == tid + 1


def test_conflict_between_two_sessions_keeps_both(ws):
    a, b = session(ws, "alice"), session(ws, "bob")
    a.save_labels("How big is the free plan?", {"d#1": 1}, query_id="q1")
    assert saved_rows(ws)[0]["relevant"] == {"d#0": 2, "d#1": 1}
    assert b.disk_changed()
    res = b.save_labels("How big is the free plan?", {"d#2": 3}, query_id="q1")
    assert res is not None and not res.saved and b.conflict_path is not None
    # the saved file is still alice's; bob's copy is beside it
    assert saved_rows(ws)[0]["relevant"] == {"d#0": 2, "d#1": 1}
    beside = [json.loads(x) for x in b.conflict_path.read_text().splitlines()]
    assert b.conflict_path.name == "golden.conflict-bob.jsonl"
    assert beside[0]["relevant"] == {"d#0": 2, "d#2": 3}
    # bob keeps his: the file is overwritten
    b.keep_mine()
    assert b.conflict_path is None
    assert saved_rows(ws)[0]["relevant"] == {"d#0": 2, "d#2": 3}
    # alice takes the saved set
    assert a.disk_changed()
    rev = a.revision
    a.reload()
    assert a.golden.get("q1").relevant == {"d#0": 2, "d#2": 3} and a.revision == rev + 1
    assert not a.disk_changed()


def test_reset_to_seed_overwrites_with_carry_over(ws):
    s = session(ws)
    s.judge("q1", "d#1", 3)
    assert saved_rows(ws)[0]["relevant"] == {"d#0": 2, "d#1": 3}
    s.reset()
    assert saved_rows(ws)[0]["relevant"] == {"d#0": 2}
    text = "A" * 100 + "B" * 100
    old = [Chunk("d#0", "d", text[:100], 0, 100), Chunk("d#1", "d", text[100:], 100, 200)]
    new = [Chunk("d#0", "d", text[:50], 0, 50), Chunk("d#1", "d", text[50:150], 50, 150),
           Chunk("d#2", "d", text[150:], 150, 200)]
    s.reset(old, new)
    rel = saved_rows(ws)[0]["relevant"]
    assert set(rel) <= {"d#0", "d#1"} and rel  # the seed's d#0 span now lies in new d#0 and d#1
    assert all(g == 2 for g in rel.values())


def test_carry_over_when_rechunking(ws):
    s = session(ws)
    text = "word " * 40
    old = [Chunk("d#0", "d", text[:200], 0, 200)]
    new = [Chunk("d#0", "d", text[:100], 0, 100), Chunk("d#1", "d", text[100:200], 100, 200)]
    report = s.carry_over(old, new)
    assert report is not None
    assert saved_rows(ws)[0]["relevant"] == {"d#0": 2, "d#1": 2}


def test_single_label_judging(ws):
    s = session(ws)
    s.judge("q1", "d#5", 0)  # judged not relevant: kept as grade 0
    assert saved_rows(ws)[0]["relevant"] == {"d#0": 2, "d#5": 0}
    s.judge("q2", "d#7", 2)  # an out-of-scope question gets a label: no longer out of scope
    row = saved_rows(ws)[1]
    assert row["relevant"] == {"d#7": 2} and row["category"] != OUT_OF_SCOPE
    with pytest.raises(Exception, match="no longer in the golden set"):
        judge_label(s.golden, "q9", "d#0", 1)


def test_unwritable_workspace_keeps_edits_in_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    s = GoldenSession(Workspace("corpus", root=blocker), SEED, name="corpus")
    assert s.judge("q1", "d#1", 1) is None
    assert s.save_error and "Cannot save" in s.save_error
    assert s.golden.get("q1").relevant == {"d#0": 2, "d#1": 1}


def test_apply_table_edits_follows_the_editor_order():
    import pandas as pd

    t = pd.DataFrame({"id": ["a", "b", "c"], "question": ["1", "2", "3"]}, dtype=object)
    out = apply_table_edits(t, {"edited_rows": {"2": {"question": "three"}}, "deleted_rows": [0],
                                "added_rows": [{"id": "d", "question": "4"}]})
    assert out.to_dict("list") == {"id": ["b", "c", "d"], "question": ["2", "three", "4"]}
    assert t["question"].tolist() == ["1", "2", "3"]  # the base is not modified


def test_labelling_rows_chunks_and_documents():
    from rag_metrics.authoring.golden_session import labelling_rows

    ranking = [("b#1", 0.9), ("a#0", 0.8), ("b#0", 0.7), ("c#2", 0.5)]
    texts = {"b#1": "B one", "a#0": "A zero", "b#0": "B zero", "c#2": "C two"}
    rows = labelling_rows(ranking, 3, texts, {"a#0": 2})
    assert rows.to_dict("list") == {"rank": [1, 2, 3], "id": ["b#1", "a#0", "b#0"], "score": [0.9, 0.8, 0.7],
                                    "grade": [0, 2, 0], "text": ["B one", "A zero", "B zero"]}
    c2d = {"b#1": "b", "a#0": "a", "b#0": "b", "c#2": "c"}
    docs = labelling_rows(ranking, 3, texts, {"c": 1}, chunk_to_doc=c2d)
    # b takes the rank of its best chunk b#1; b#0 is dropped; three documents are listed
    assert docs.to_dict("list") == {"rank": [1, 2, 3], "id": ["b", "a", "c"], "score": [0.9, 0.8, 0.5],
                                    "grade": [0, 0, 1], "text": ["B one", "A zero", "C two"]}


def test_table_is_current_until_an_edit_is_applied(ws):
    s = session(ws)
    assert not s.table_is_current  # no table yet
    tid, _ = s.table()
    assert s.table_is_current
    s.apply_table_edits(tid, {"edited_rows": {1: {"expected_answer": "Nobody here knows."}}})
    assert not s.table_is_current and s.table()[0] == tid
    assert s.table(rebuild=True)[0] == tid + 1 and s.table_is_current
