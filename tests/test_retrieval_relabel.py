"""Carrying golden chunk labels across re-chunking: kept, moved, split, lost."""
from __future__ import annotations

from rag_metrics.retrieval.chunking import chunk_document
from rag_metrics.retrieval.relabel import LabelReport, carry_labels
from rag_metrics.types import Chunk, Document, GoldenQuery, GoldenSet

TEXT = "".join(f"Sentence number {i:02d} is here. " for i in range(40))  # 30 chars per sentence
DOC = Document("guide", TEXT.strip())


def _span(i: int, j: int, n: int) -> Chunk:
    return Chunk(f"guide#{n}", "guide", DOC.text[i:j], i, j)


def _golden(relevant: dict[str, int]) -> GoldenSet:
    return GoldenSet((GoldenQuery("q1", "question?", "factual", relevant),
                      GoldenQuery("oos", "capital of France?", "out_of_scope", {})))


def test_same_chunking_keeps_every_label() -> None:
    chunks = chunk_document(DOC, 200, 40)
    golden = _golden({chunks[1].id: 3, chunks[3].id: 1})
    new, report = carry_labels(golden, chunks, chunks)
    assert new.get("q1").relevant == {chunks[1].id: 3, chunks[3].id: 1}
    assert report.counts()["kept"] == 2 and report.summary() == "2 kept"
    assert new.get("oos").relevant == {}


def test_moved_when_one_new_chunk_covers_it() -> None:
    old = [_span(0, 300, 0), _span(300, 600, 1)]
    new = [_span(0, 150, 0), _span(150, 600, 1)]  # old #1 (300-600) is inside new #1
    g, report = carry_labels(_golden({"guide#1": 2}), old, new)
    assert g.get("q1").relevant == {"guide#1": 2}
    (change,) = report.changes
    assert change.status == "moved" and change.new_ids == ("guide#1",) and change.coverage == 1.0


def test_split_into_smaller_chunks() -> None:
    old = [_span(0, 600, 0)]
    new = [_span(0, 200, 0), _span(200, 400, 1), _span(400, 600, 2), _span(600, 800, 3)]
    g, report = carry_labels(_golden({"guide#0": 3}), old, new)
    assert g.get("q1").relevant == {"guide#0": 3, "guide#1": 3, "guide#2": 3}
    (change,) = report.changes
    assert change.status == "split" and change.coverage == 1.0


def test_overlap_sliver_does_not_carry() -> None:
    # new chunk 1 shares only 50 of its 300 characters with the old span (and 50/200 of it)
    old = [_span(200, 400, 4)]
    new = [_span(0, 350, 0), _span(350, 650, 1)]
    g, report = carry_labels(_golden({"guide#4": 1}), old, new)
    # new #0 holds 150/200 = 75% of the old span -> carried; new #1 holds 50/200 and 50/300 -> not
    assert g.get("q1").relevant == {"guide#0": 1}
    assert report.changes[0].status == "moved"


def test_lost_when_document_text_changed_or_document_gone() -> None:
    old = [_span(0, 300, 0)]
    changed = Chunk("guide#0", "guide", "X" * 300, 0, 300)
    g, report = carry_labels(_golden({"guide#0": 2}), old, [changed])
    assert g.get("q1").relevant == {}
    assert report.lost[0].note == "document text changed under the span"
    assert report.emptied == ("q1",)
    assert "1 query(ies) lost all relevant chunks" in report.summary()
    _, report2 = carry_labels(_golden({"guide#0": 2}), old, [])
    assert report2.lost[0].note == "document has no chunks now"


def test_highest_grade_wins_and_document_labels_pass_through() -> None:
    old = [_span(0, 100, 0), _span(100, 200, 1)]
    new = [_span(0, 200, 0)]
    g, report = carry_labels(_golden({"guide#0": 1, "guide#1": 3, "other-doc": 2}), old, new)
    assert g.get("q1").relevant == {"guide#0": 3, "other-doc": 2}
    assert [c.status for c in report.changes] == ["moved", "moved", "not_a_chunk"]


def test_rechunking_real_text_keeps_most_labels_and_report_rows() -> None:
    old = chunk_document(DOC, 300, 50)
    new = chunk_document(DOC, 500, 100)
    golden = _golden({c.id: 2 for c in old[::2]})
    g, report = carry_labels(golden, old, new)
    assert isinstance(report, LabelReport)
    assert report.counts()["lost"] == 0
    assert set(g.get("q1").relevant) <= {c.id for c in new}
    rows = report.to_rows()
    assert rows[0].keys() == {"query_id", "old_id", "grade", "status", "new_ids", "coverage", "note"}
    assert golden.get("q1").relevant == {c.id: 2 for c in old[::2]}  # input not modified
