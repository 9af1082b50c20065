"""Workspaces (issue 11): injective folder names and migration, check/repair/reset/export,
undo, archives, named and private spaces, isolation between sessions."""
from __future__ import annotations

import io
import json
import zipfile

import pytest

from rag_metrics.io.golden import golden_to_text
from rag_metrics.types import GoldenQuery, GoldenSet
from rag_metrics.workspace.store import (
    DEFAULT_SPACE,
    HISTORY_SIZE,
    MAX_ARCHIVE_BYTES,
    Workspace,
    _slug,
    class_mode,
    ensure_space,
    export_space_archive,
    folder_name,
    import_space_archive,
    list_corpora,
    list_spaces,
    private_space_name,
    read_archive,
)

A = GoldenSet((GoldenQuery("q1", "How big?", "", {"a#0": 1}),))
B = GoldenSet((GoldenQuery("q1", "How big?", "", {"b#0": 2}),))
C = GoldenSet((GoldenQuery("q2", "Who?", "", {"c#0": 3}),))


def _set(n: int) -> GoldenSet:
    return GoldenSet((GoldenQuery("q1", f"question {n}", "", {f"d{n}#0": 1}),))


def _disk(ws: Workspace) -> GoldenSet:
    loaded = ws.load()
    assert loaded is not None and loaded[1].ok
    return loaded[0]


# ---- 4. name collisions ------------------------------------------------------------------------
PAIRS = [("sample corpus", "sample_corpus"), ("Corpus", "corpus"), ("a b", "a_b"), ("a b", "a  b"),
         ("café", "cafe"), ("café", "caf_"), ("..", "corpus"), ("../x", "x"), ("a/b", "a_b"),
         ("/", "corpus"), ("", "corpus"), ("日本", "中国"), ("x" * 80, "x" * 81), ("a.", "a")]


@pytest.mark.parametrize("n1,n2", PAIRS)
def test_different_names_never_share_files(tmp_path, n1, n2):
    w1, w2 = Workspace(n1, tmp_path), Workspace(n2, tmp_path)
    assert w1.folder != w2.folder and folder_name(n1) != folder_name(n2)
    for w in (w1, w2):
        assert w.folder.parent == tmp_path and ".." not in w.folder.name and "/" not in w.folder.name
    w1.save(A, None)
    w2.save(B, None)
    assert _disk(w1).queries == A.queries and _disk(w2).queries == B.queries
    assert sorted(list_corpora(root=tmp_path)) == sorted([n1, n2])


def test_folder_name_is_stable_and_readable():
    assert folder_name("sample_corpus") == folder_name("sample_corpus")
    assert folder_name("My Corpus").startswith("My_Corpus-")


# ---- migration from the old slug-only folders ---------------------------------------------------
def test_old_workspace_is_migrated_to_the_first_name_that_opens_it(tmp_path):
    old = tmp_path / _slug("sample_corpus")
    old.mkdir()
    (old / "golden.jsonl").write_text(golden_to_text(A, "jsonl"))
    (old / "settings.json").write_text('{"chunk_size": 800, "chunk_overlap": 50}')
    ws = Workspace("sample_corpus", tmp_path)
    assert ws.folder != old and _disk(ws).queries == A.queries
    assert ws.load_settings() == {"chunk_size": 800, "chunk_overlap": 50}
    # another name with the same old slug does not get the sample's labels any more
    other = Workspace("sample corpus", tmp_path)
    assert other.load() is None
    other.save(B, None)
    assert _disk(Workspace("sample_corpus", tmp_path)).queries == A.queries
    assert (old / "golden.jsonl").read_text() == golden_to_text(A, "jsonl")  # left in place


# ---- 7. check / repair / reset / export ---------------------------------------------------------
BAD_FILES = {
    "bad_grade": (json.dumps({"id": "q1", "question": "a", "relevant": {"a#0": 1e308}}) + "\n"
                  + json.dumps({"id": "q2", "question": "b", "relevant": {"b#0": 1}}) + "\n").encode(),
    "bad_json": b'{"id": "q2", "question": "b", "relevant": {"b#0": 1}}\n{not json\n',
    "nested": b'{"id": "q2", "question": "b", "relevant": {"b#0": 1}}\n' + b"[" * 3000 + b"]" * 3000 + b"\n",
    "not_utf8": b'{"id": "q2", "question": "b\xff", "relevant": {"b#0": 1}}\n',
    "csv": b"id,question\nq2,b\n",
    "huge_digits": b'{"id": "q2", "question": "b", "relevant": {"b#0": 1}}\n{"id": "q3", "question": "c", '
                   b'"relevant": {"c#0": ' + b"9" * 5000 + b"}}\n",
}


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_check_names_the_file_and_repair_keeps_a_backup(tmp_path, kind):
    ws = Workspace("c", tmp_path)
    ws.folder.mkdir(parents=True)
    ws.path.write_bytes(BAD_FILES[kind])
    chk = ws.check()
    assert not chk.ok and all(p.path == ws.path for p in chk.problems)
    assert all("golden.jsonl" in line for line in chk.lines())
    assert ws.export() == BAD_FILES[kind]  # the raw bytes can always be downloaded
    backups = ws.repair()
    assert len(backups) == 1 and backups[0].read_bytes() == BAD_FILES[kind]
    assert ws.check().ok
    golden, report, _ = ws.load()
    assert report.ok
    if kind == "bad_grade":  # the row stays, its out-of-range label is dropped
        assert [(q.id, q.relevant) for q in golden] == [("q1", {}), ("q2", {"b#0": 1})]
    elif kind != "csv":
        assert [(q.id, q.relevant) for q in golden] == [("q2", {"b#0": 1})]


def test_too_large_file_is_reported_not_loaded(tmp_path, monkeypatch):
    import rag_metrics.workspace.store as wsmod

    monkeypatch.setattr(wsmod, "MAX_GOLDEN_BYTES", 10)
    ws = Workspace("c", tmp_path)
    ws.save(A, None)
    chk = ws.check()
    assert [p.kind for p in chk.problems] == ["too_large"]
    from rag_metrics.errors import InputError

    with pytest.raises(InputError, match="over the 10-byte limit"):
        ws.load()
    with pytest.raises(InputError, match="cannot be repaired"):
        ws.repair()
    backups = ws.reset()
    assert len(backups) == 1 and not ws.path.exists() and ws.load() is None and ws.check().ok


def test_bad_settings_are_reported_and_repaired(tmp_path):
    ws = Workspace("c", tmp_path)
    ws.folder.mkdir(parents=True)
    ws.settings_path.write_text('{"chunk_size": 1e999, "chunk_overlap": 20}')
    chk = ws.check()
    assert [p.kind for p in chk.problems] == ["bad_settings"] and "chunk_size" in chk.lines()[0]
    ws.repair()
    assert ws.check().ok and json.loads(ws.settings_path.read_text()) == {"chunk_overlap": 20}


# ---- 8. undo ------------------------------------------------------------------------------------
def test_undo_walks_back_the_last_edits(tmp_path):
    ws = Workspace("c", tmp_path)
    v = None
    for g in (A, B, C):
        v = ws.save(g, v).version
    res, golden = ws.undo(v)
    assert res.saved and golden.queries == B.queries and _disk(ws).queries == B.queries
    res, golden = ws.undo(res.version)
    assert res.saved and _disk(ws).queries == A.queries
    res, golden = ws.undo(res.version)
    assert not res.saved and golden is None and _disk(ws).queries == A.queries  # nothing older


def test_undo_refuses_when_another_session_saved(tmp_path):
    ws = Workspace("c", tmp_path)
    v1 = ws.save(A, None).version
    ws.save(B, v1)  # the other session
    res, golden = ws.undo(v1)
    assert not res.saved and golden is None and _disk(ws).queries == B.queries


def test_history_is_bounded(tmp_path):
    ws = Workspace("c", tmp_path)
    v = None
    for n in range(HISTORY_SIZE + 5):
        v = ws.save(_set(n), v).version
    assert len(ws.history()) == HISTORY_SIZE


# ---- 8. archives --------------------------------------------------------------------------------
def test_archive_round_trip(tmp_path):
    src = Workspace("my corpus", tmp_path / "a")
    src.save(A, None)
    src.save_settings(chunk_size=800, chunk_overlap=40)
    data = src.export_archive()
    dst = Workspace("my corpus", tmp_path / "b")
    res, report = dst.import_archive(data, None)
    assert res.saved and report.ok
    assert _disk(dst).queries == A.queries and dst.load_settings() == {"chunk_size": 800, "chunk_overlap": 40}


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
    return buf.getvalue()


def _manifest(**item) -> bytes:
    return json.dumps({"format": "rag-metrics-workspace", "version": 1, "corpora": [item]}).encode()


HOSTILE_ARCHIVES = {
    "not_zip": b"PK\x03\x04 nothing",
    "pickle": b"\x80\x04\x95" + b"\x00" * 20,
    "no_manifest": _zip({"0/golden.jsonl": golden_to_text(B, "jsonl").encode()}),
    "traversal": _zip({"manifest.json": _manifest(name="c", golden="../../evil.jsonl"),
                       "../../evil.jsonl": golden_to_text(B, "jsonl").encode()}),
    "bad_grade": _zip({"manifest.json": _manifest(name="c", golden="0/golden.jsonl"),
                       "0/golden.jsonl": json.dumps({"id": "q1", "question": "a",
                                                     "relevant": {"a#0": 1e308}}).encode()}),
    "nested_manifest": _zip({"manifest.json": b"[" * 5000 + b"]" * 5000}),
    "bad_settings": _zip({"manifest.json": _manifest(name="c", settings="0/settings.json"),
                          "0/settings.json": b'{"chunk_size": 1e999}'}),
    "name_control": _zip({"manifest.json": _manifest(name="c\x00", golden="0/golden.jsonl"),
                          "0/golden.jsonl": golden_to_text(B, "jsonl").encode()}),
    "odd_member": _zip({"manifest.json": _manifest(name="c", golden="/etc/passwd"),
                        "/etc/passwd": golden_to_text(B, "jsonl").encode()}),
    "too_big": b"x" * (MAX_ARCHIVE_BYTES + 1),
}


@pytest.mark.parametrize("kind", list(HOSTILE_ARCHIVES))
def test_hostile_archives_change_nothing(tmp_path, kind):
    ws = Workspace("c", tmp_path / "w")
    v = ws.save(A, None).version
    before = ws.path.read_bytes()
    res, report = ws.import_archive(HOSTILE_ARCHIVES[kind], v)
    assert not res.saved and not report.ok
    assert ws.path.read_bytes() == before and _disk(ws).queries == A.queries
    assert not (tmp_path / "evil.jsonl").exists() and not list(tmp_path.rglob("evil*"))


def test_zip_bomb_is_refused_by_declared_size(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", _manifest(name="c", golden="0/golden.jsonl"))
        z.writestr("0/golden.jsonl", b" " * (70 * 1024 * 1024))
    entries, report = read_archive(buf.getvalue())
    assert entries == [] and "unpacks to more than" in report.lines()[0]


def test_space_archive_round_trip(tmp_path):
    Workspace("one", tmp_path).save(A, None)
    Workspace("two", tmp_path).save(B, None)
    data = export_space_archive(DEFAULT_SPACE, tmp_path)
    report = import_space_archive(data, "class 2", tmp_path)
    assert report.ok and list_corpora("class 2", tmp_path) == ["one", "two"]
    assert _disk(Workspace("two", tmp_path, space="class 2")).queries == B.queries


# ---- 8. named and private spaces, isolation ----------------------------------------------------
def test_spaces_are_isolated(tmp_path):
    shared = Workspace("c", tmp_path)
    shared.save(A, None)
    ensure_space("alice", tmp_path)
    ensure_space("bob", tmp_path)
    assert list_spaces(tmp_path) == [DEFAULT_SPACE, "alice", "bob"]
    alice, bob = Workspace("c", tmp_path, space="alice"), Workspace("c", tmp_path, space="bob")
    assert _disk(alice).queries == A.queries == _disk(bob).queries  # private copies of the shared one
    va = alice.load()[2]
    alice.save(B, va)
    assert _disk(bob).queries == A.queries and _disk(shared).queries == A.queries
    vb = bob.load()[2]
    assert bob.save(C, vb).saved  # no conflict: a different file
    assert _disk(alice).queries == B.queries and _disk(bob).queries == C.queries


def test_same_space_keeps_the_conflict_handling(tmp_path):
    ensure_space("team", tmp_path)
    s1, s2 = Workspace("c", tmp_path, space="team"), Workspace("c", tmp_path, space="team")
    v = s1.save(A, None).version
    assert s1.save(B, v, session="s1").saved
    r = s2.save(C, v, session="s2")
    assert not r.saved and r.conflict and _disk(s1).queries == B.queries
    assert "q2" in r.conflict_path.read_text()


@pytest.mark.parametrize("env,argv,on", [({"RAG_METRICS_CLASS_MODE": "1"}, [], True),
                                         ({"RAG_METRICS_CLASS_MODE": "yes"}, [], True),
                                         ({}, ["--class-mode"], True), ({"RAG_METRICS_CLASS_MODE": "0"}, [], False),
                                         ({}, [], False)])
def test_class_mode_switch(env, argv, on):
    assert class_mode(argv, env) is on


def test_private_space_names_are_distinct_folders(tmp_path):
    a, b = private_space_name("ab12"), private_space_name("AB12")
    ensure_space(a, tmp_path)
    ensure_space(b, tmp_path)
    assert Workspace("c", tmp_path, space=a).folder != Workspace("c", tmp_path, space=b).folder


@pytest.mark.parametrize("query", [GoldenQuery("q1", "a", "", {"a#0": 10**20}),
                                   GoldenQuery("q1", "a", "", {"a#0": True}),
                                   GoldenQuery("q 1", "a", "", {"a#0": 1}), GoldenQuery("q1", "a", "", {"a\tb": 1})])
def test_save_refuses_what_could_not_be_read_back(tmp_path, query):
    from rag_metrics.errors import InputError

    ws = Workspace("c", tmp_path)
    v = ws.save(A, None).version
    before = ws.path.read_bytes()
    with pytest.raises(InputError, match="not saved"):
        ws.save(GoldenSet((query,)), v)
    assert ws.path.read_bytes() == before


def test_choose_space(tmp_path):
    from rag_metrics.workspace.store import choose_space

    Workspace("c", tmp_path).save(A, None)
    assert choose_space(None, "t1", class_mode_on=False, root=tmp_path) == (DEFAULT_SPACE, None)
    space, warn = choose_space(None, "t1", class_mode_on=True, root=tmp_path)
    assert space == "private-t1" and warn is None
    # copy-on-write: the private space reads the shared set until its first change
    from rag_metrics.workspace.store import read_through

    assert Workspace("c", tmp_path, space=space).load() is None
    assert _disk(read_through("c", space, tmp_path)).queries == A.queries
    Workspace("c", tmp_path, space=space).save(B, Workspace("c", tmp_path, space=space).version())
    assert _disk(Workspace("c", tmp_path)).queries == A.queries  # the shared one is untouched
    assert _disk(read_through("c", space, tmp_path)).queries == B.queries
    # class mode: a URL never chooses the space (the seat does, see tests/test_app_class.py)
    got, warn = choose_space(space, "t2", class_mode_on=True, root=tmp_path)
    assert got == "private-t2" and "never chooses" in warn
    for bad in ("x\x00y", "y" * 500):
        space, warn = choose_space(bad, "t3", class_mode_on=False, root=tmp_path)
        assert space == DEFAULT_SPACE and "Ignored the workspace" in warn
