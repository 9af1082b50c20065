"""Nothing lost in the golden set (issue 47): a change that replaces the set and adds systems is checked
in full before anything is written, then done whole or not at all; reset resets, in a private space too;
every replaced set is kept in undo; a refusal is never worded as a success."""
from __future__ import annotations

import json

import pytest

from rag_metrics.authoring.golden_change import Outcome, SystemUpload, bring_in
from rag_metrics.authoring.golden_session import GoldenSession
from rag_metrics.errors import InputError
from rag_metrics.systems.store import SystemStore
from rag_metrics.types import Chunk, GoldenQuery, GoldenSet
from rag_metrics.workspace.spaces import read_through
from rag_metrics.workspace.store import Workspace

SHIPPED = GoldenSet(tuple(GoldenQuery(f"q{i}", f"Question {i}?", "factual", {f"d#{i}": 1}) for i in range(6)),
                    name="c")
FROM_LOG = GoldenSet(tuple(GoldenQuery(f"q{i:03d}", f"Question {i}?", "", {}, f"answer {i}") for i in range(4)),
                     name="c")
CHUNKS = [Chunk(f"d#{i}", "d", f"chunk text number {i} " * 3, 0, 10) for i in range(6)]


def _log() -> bytes:
    return "".join(json.dumps({"question": f"Question {i}?", "contexts": [CHUNKS[i].text], "ground_truth": "a"}) + "\n"
                   for i in range(4)).encode()


def _ids(golden: GoldenSet) -> list[str]:
    return [q.id for q in golden]


def _saved_ids(ws: Workspace) -> list[str]:
    return [json.loads(x)["id"] for x in ws.path.read_text().splitlines()]


def test_a_taken_system_name_refuses_the_whole_change_and_writes_nothing(tmp_path):
    ws = Workspace("c", root=tmp_path)
    session = GoldenSession(ws, SHIPPED, name="c")
    store = SystemStore(ws.folder / "systems")
    out, added = bring_in(session, store, uploads=[SystemUpload("my app", "log.jsonl", _log())], chunks=CHUNKS)
    assert out.kind == "success" and [s.name for s in added] == ["my app"]
    index = (ws.folder / "systems" / "systems.json").read_bytes()
    out, added = bring_in(session, store, golden=FROM_LOG, golden_done="started from the log",
                          uploads=[SystemUpload("my app", "log.jsonl", _log())], chunks=CHUNKS)
    assert added == [] and out.done == [] and out.kind == "error"
    assert "exists already" in out.message() and out.message().startswith("Nothing was changed")
    assert _ids(session.golden) == _ids(SHIPPED) and not ws.path.exists()  # the set was not replaced
    assert (ws.folder / "systems" / "systems.json").read_bytes() == index


def test_a_free_name_replaces_the_set_adds_the_system_and_keeps_the_shipped_set_in_undo(tmp_path):
    ws = Workspace("c", root=tmp_path)
    session = GoldenSession(ws, SHIPPED, name="c")
    out, added = bring_in(session, SystemStore(ws.folder / "systems"), golden=FROM_LOG, golden_done="from the log",
                          uploads=[SystemUpload("my app", "log.jsonl", _log())], chunks=CHUNKS)
    assert out.kind == "success" and out.done[0] == "from the log" and [s.name for s in added] == ["my app"]
    assert _saved_ids(ws) == _ids(FROM_LOG)
    assert len(ws.history()) == 1  # the shipped set it replaced, never saved before, is in undo
    assert session.undo().saved and _ids(session.golden) == _ids(SHIPPED) and _saved_ids(ws) == _ids(SHIPPED)


def test_a_name_taken_in_between_puts_the_set_back(tmp_path, monkeypatch):
    ws = Workspace("c", root=tmp_path)
    session = GoldenSession(ws, SHIPPED, name="c")
    session.replace(GoldenSet(SHIPPED.queries[:5], name="c"))
    store = SystemStore(ws.folder / "systems")
    real = store.add_prepared

    def racing(prepared):  # another session adds "my app" after the checks, before this change adds it
        store.add_upload("my app", "log.jsonl", _log(), CHUNKS)
        return real(prepared)

    monkeypatch.setattr(store, "add_prepared", racing)
    out, added = bring_in(session, store, golden=FROM_LOG, uploads=[SystemUpload("my app", "log.jsonl", _log())],
                          chunks=CHUNKS)
    assert added == [] and out.kind == "error" and "exists already" in out.message()
    assert _saved_ids(ws) == _ids(SHIPPED)[:5] and _ids(session.golden) == _ids(SHIPPED)[:5]


def test_an_unsaveable_set_changes_nothing_in_memory_either(tmp_path):
    ws = Workspace("c", root=tmp_path)
    session = GoldenSession(ws, SHIPPED, name="c")
    bad = GoldenSet((GoldenQuery("q 1", "a?", "", {}),), name="c")  # an id TREC files cannot hold
    out, _ = bring_in(session, SystemStore(ws.folder / "systems"), golden=bad)
    assert out.kind == "error" and "golden set not replaced" in out.message()
    with pytest.raises(InputError, match="not saved"):
        session.replace(bad)
    assert _ids(session.golden) == _ids(SHIPPED) and session.revision == 0 and not ws.path.exists()


def test_reset_in_a_private_space_restores_the_shipped_set_not_the_shared_one(tmp_path):
    """A private space reads the shared set until its first change; reset still means the shipped set."""
    shared = GoldenSession(Workspace("c", root=tmp_path), SHIPPED, name="c")
    shared.replace(FROM_LOG)  # the shared space holds the 4 questions started from a log
    ws = Workspace("c", root=tmp_path, space="private-s1")
    source = read_through("c", ws.space, tmp_path)
    loaded = source.load()
    assert source is not ws and loaded is not None
    student = GoldenSession(ws, loaded[0], name="c", session_id="s1", shipped=SHIPPED)  # as ui.golden makes it
    assert len(student.golden) == 4
    res = student.reset()
    assert res is not None and res.saved
    assert _ids(student.golden) == _ids(SHIPPED) and _saved_ids(ws) == _ids(SHIPPED)
    assert len(ws.history()) == 1  # the shared set it replaced is kept in the private undo
    assert student.undo().saved and len(student.golden) == 4


def test_reset_after_a_replace_resets_file_and_session_and_keeps_both_in_undo(tmp_path):
    ws = Workspace("c", root=tmp_path)
    s = GoldenSession(ws, SHIPPED, name="c")
    s.replace(FROM_LOG)
    s.reset()
    assert _ids(s.golden) == _ids(SHIPPED) and _saved_ids(ws) == _ids(SHIPPED)
    assert len(ws.history()) == 2  # the shipped set (before the replace) and the log's set
    assert s.undo().saved and _ids(s.golden) == _ids(FROM_LOG)


def test_outcome_words():
    assert Outcome(done=["a"]).kind == "success"
    assert Outcome(done=["a"], refused=["b"]).kind == "warning"
    assert Outcome(refused=["b"]).kind == "error" and Outcome(refused=["b"]).message() == "Nothing was changed: b"


def test_a_save_that_did_not_write_is_never_told_as_done(tmp_path, monkeypatch):
    from rag_metrics.authoring.golden_change import save_outcome

    ws = Workspace("c", root=tmp_path)
    a, b = GoldenSession(ws, SHIPPED, name="c", session_id="a"), GoldenSession(ws, SHIPPED, name="c", session_id="b")
    assert save_outcome(a, a.replace(FROM_LOG), "Saved.").kind == "success"
    conflict = save_outcome(b, b.replace(EDITED := GoldenSet(SHIPPED.queries[:2], name="c")), "Saved.")
    assert conflict.kind == "warning" and "another session" in conflict.message() and len(EDITED) == 2

    def unwritable(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Workspace, "save", unwritable)
    res = a.reset()
    told = save_outcome(a, res, "Golden set reset.")
    assert told.kind == "warning" and "in this browser session only" in told.message()
    assert _ids(a.golden) == _ids(SHIPPED)  # kept in memory, and said so


def test_the_workspace_reset_keeps_the_removed_set_in_undo(tmp_path):
    ws = Workspace("c", root=tmp_path)
    s = GoldenSession(ws, SHIPPED, name="c")
    s.replace(FROM_LOG)
    ws.reset()  # the health page's reset: backup, then the saved file removed
    assert not ws.path.exists()
    s.reload()
    assert _ids(s.golden) == _ids(SHIPPED)
    assert s.undo().saved and _ids(s.golden) == _ids(FROM_LOG)


def test_a_set_that_cannot_be_written_adds_no_system_and_says_so(tmp_path, monkeypatch):
    ws = Workspace("c", root=tmp_path)
    session = GoldenSession(ws, SHIPPED, name="c")

    def unwritable(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Workspace, "save", unwritable)
    store = SystemStore(ws.folder / "systems")
    out, added = bring_in(session, store, golden=FROM_LOG, uploads=[SystemUpload("my app", "log.jsonl", _log())],
                          chunks=CHUNKS)
    assert added == [] and store.names() == [] and out.kind == "warning"
    assert "in this browser session only" in out.message() and "no system added" in out.message()
