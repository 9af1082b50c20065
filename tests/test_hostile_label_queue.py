"""The labelling queue (issue 11, class 8): ticks belong to one question, never carried over;
exactly the labels made are saved (re-read from disk)."""
from __future__ import annotations

import pytest

from rag_metrics.authoring.label_queue import LabelQueue
from rag_metrics.errors import InputError
from rag_metrics.types import GoldenQuery, GoldenSet
from rag_metrics.workspace.store import Workspace

G = GoldenSet((GoldenQuery("q1", "How big?", "", {"old#0": 1}),
               GoldenQuery("q2", "Who pays?", "", {}),
               GoldenQuery("q3", "When?", "out_of_scope", {}),
               GoldenQuery("q4", "Where?", "", {"w#0": 2})), name="c")


def _disk(ws: Workspace) -> dict[str, dict[str, int]]:
    golden, report, _ = ws.load()
    assert report.ok
    return {q.id: dict(q.relevant) for q in golden}


def test_label_three_questions_in_a_row_saves_exactly_those_labels(tmp_path):
    ws = Workspace("c", tmp_path)
    version = ws.save(G, None).version
    golden = G
    q = LabelQueue.from_golden(golden)
    assert q.current.query_id == "q1" and q.current_ticks() == {"old#0": 1}
    # question 1: untick the old label, tick two others
    q.set_ticks(["old#0", "a#0", "a#1", "a#2"], {"a#0": 1, "a#2": 3})
    golden = q.apply_and_next(golden)
    version = ws.save(golden, version).version
    # question 2: the ticks of question 1 are not there
    assert q.current.query_id == "q2" and q.current_ticks() == {}
    q.tick("b#0", 2)
    golden = q.apply_and_next(golden)
    version = ws.save(golden, version).version
    # question 3 (out of scope): one tick makes it in scope
    assert q.current.query_id == "q3" and q.current_ticks() == {}
    q.tick("c#4")
    golden = q.apply_and_next(golden)
    ws.save(golden, version)
    assert _disk(ws) == {"q1": {"a#0": 1, "a#2": 3}, "q2": {"b#0": 2}, "q3": {"c#4": 1}, "q4": {"w#0": 2}}
    saved = {g.id: g for g in ws.load()[0]}
    assert saved["q3"].category == "" and saved["q4"].category == ""
    assert q.progress() == {"pending": 1, "saved": 3, "skipped": 0, "total": 4}


def test_ticks_are_kept_per_question_when_moving_back_and_forth():
    q = LabelQueue.from_golden(G)
    q.tick("x#0")
    q.next()
    assert q.current_ticks() == {}
    q.tick("y#0", 2)
    q.previous()
    assert q.current_ticks() == {"old#0": 1, "x#0": 1}
    q.next()
    assert q.current_ticks() == {"y#0": 2}


def test_skip_saves_nothing(tmp_path):
    ws = Workspace("c", tmp_path)
    ws.save(G, None)
    before = ws.path.read_bytes()
    q = LabelQueue.from_golden(G)
    q.tick("x#0")
    assert q.skip().query_id == "q2"
    assert ws.path.read_bytes() == before
    assert q.progress()["skipped"] == 1


def test_live_question_is_added_and_saved(tmp_path):
    ws = Workspace("c", tmp_path)
    v = ws.save(G, None).version
    q = LabelQueue.from_golden(G)
    q.next()
    item = q.add_question("  Can I export my data?  ", G)
    assert q.current == item and q.current_ticks() == {}
    q.tick("export#0", 2)
    golden = q.apply(G)
    ws.save(golden, v)
    disk = _disk(ws)
    new_id = q.current.query_id
    assert new_id.startswith("q-") and disk[new_id] == {"export#0": 2} and len(disk) == 5
    # an existing question typed again goes to it, with its labels
    assert q.add_question("Where?", golden).query_id == "q4" and q.current_ticks() == {"w#0": 2}


def test_nothing_ticked_on_a_new_question_saves_it_out_of_scope():
    q = LabelQueue.from_golden(GoldenSet(()))
    q.add_question("Is there a dark mode?")
    golden = q.apply(GoldenSet(()))
    assert [(g.question, g.category, g.relevant) for g in golden] == [("Is there a dark mode?", "out_of_scope", {})]


@pytest.mark.parametrize("grade", [10**20, 1e308, "²", True, -5000])
def test_bad_ticks_are_refused(grade):
    q = LabelQueue.from_golden(G)
    with pytest.raises(InputError, match="grade"):
        q.tick("a#0", grade)
    assert q.current_ticks() == {"old#0": 1}


@pytest.mark.parametrize("cid", ["a b", "a\tb", "", "x\ny"])
def test_bad_chunk_ids_are_refused(cid):
    q = LabelQueue.from_golden(G)
    with pytest.raises(InputError, match="chunk id"):
        q.tick(cid)


def test_empty_queue_says_so():
    q = LabelQueue.from_golden(GoldenSet(()))
    assert q.current is None and q.next() is None and q.current_ticks() == {}
    with pytest.raises(InputError, match="empty"):
        q.apply(GoldenSet(()))
    with pytest.raises(InputError, match="type a question"):
        q.add_question("   ")


def test_sync_follows_edits_made_elsewhere_but_keeps_unsaved_ticks():
    q = LabelQueue.from_golden(G)
    q.next()
    q.tick("mine#0")
    edited = GoldenSet((GoldenQuery("q1", "How big?", "", {"new#0": 1}), G.queries[1],
                        GoldenQuery("q5", "Why?", "", {})))
    q.sync(edited)
    assert [it.query_id for it in q.items] == ["q1", "q2", "q5"]
    assert q.current.query_id == "q2" and q.current_ticks() == {"mine#0": 1}
    q.previous()
    assert q.current_ticks() == {"new#0": 1}


def test_unlabelled_first_order():
    q = LabelQueue.from_golden(G, unlabelled_first=True)
    assert [it.query_id for it in q.items] == ["q2", "q3", "q1", "q4"]
