"""A golden change killed mid-way (issue 47): a child process replaces the golden set (brings in a system,
resets, undoes) and is SIGKILLed at its k-th ``os.replace`` (before the rename: its temporary file is written,
the target is not), or after the change completed.  Whatever k, the set on disk is the old one or the
new one, never torn or mixed; when it is the new one, undo still lists the old one and puts it back; the
systems index is whole; doing the change again completes it."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rag_metrics.authoring.golden_change import SystemUpload, bring_in
from rag_metrics.authoring.golden_session import GoldenSession
from rag_metrics.systems.store import SystemStore
from rag_metrics.types import Chunk, GoldenQuery, GoldenSet
from rag_metrics.workspace.store import Workspace

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = GoldenSet(tuple(GoldenQuery(f"q{i}", f"Question {i}?", "factual", {f"d#{i}": 1}) for i in range(6)),
                    name="c")
EDITED = GoldenSet(SHIPPED.queries[:5], name="c")
NEW = GoldenSet(tuple(GoldenQuery(f"q{i:03d}", f"Question {i}?", "", {}, f"answer {i}") for i in range(4)), name="c")
CHUNKS = [Chunk(f"d#{i}", "d", f"chunk text number {i} " * 3, 0, 10) for i in range(6)]
LOG = "".join(json.dumps({"question": f"Question {i}?", "contexts": [CHUNKS[i].text], "ground_truth": "a"}) + "\n"
              for i in range(4)).encode()

CHILD = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    import test_golden_change_kill as t
    from rag_metrics.authoring.golden_change import SystemUpload, bring_in
    from rag_metrics.authoring.golden_session import GoldenSession
    from rag_metrics.systems.store import SystemStore
    from rag_metrics.workspace.store import Workspace

    root, k, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    ws = Workspace("c", root=root)
    session = GoldenSession(ws, t.SHIPPED, name="c")
    real, calls = os.replace, [0]

    def dying_replace(src, dst):
        calls[0] += 1
        if calls[0] == k:  # the temporary file is written and synced; the rename never happens
            os.kill(os.getpid(), signal.SIGKILL)
        return real(src, dst)

    os.replace = dying_replace
    if what == "replace":
        session.replace(t.NEW)
    elif what == "reset":
        session.reset()
    elif what == "undo":
        session.undo()
    else:
        bring_in(session, SystemStore(ws.folder / "systems"), golden=t.NEW,
                 uploads=[SystemUpload("my app", "log.jsonl", t.LOG)], chunks=t.CHUNKS)
    os.kill(os.getpid(), signal.SIGKILL)  # k past the last rename: killed right after the change
""")


def _killed_at(root: Path, k: int, what: str) -> None:
    proc = subprocess.run([sys.executable, "-c", CHILD.format(tests=str(ROOT / "tests")), str(root), str(k), what],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]


def _ids(golden: GoldenSet) -> list[str]:
    return [q.id for q in golden]


def _check(root: Path, old: GoldenSet) -> bool:
    """The set is ``old`` or :data:`NEW`, whole; with NEW, undo lists ``old`` and puts it back.  True: NEW."""
    ws = Workspace("c", root=root)
    loaded = ws.load()
    report_ok = loaded is None or loaded[1].ok
    assert report_ok, loaded[1].summary() if loaded else ""
    now = GoldenSession(ws, SHIPPED, name="c").golden
    assert _ids(now) in (_ids(old), _ids(NEW))
    if _ids(now) == _ids(old):
        return False
    session = GoldenSession(ws, SHIPPED, name="c")
    assert ws.history(), "the replaced set is not in undo"
    res = session.undo()
    assert res.saved, res.message
    assert _ids(session.golden) == _ids(old)
    return True


@pytest.mark.parametrize("saved_before", [False, True], ids=["shipped", "saved"])
@pytest.mark.parametrize("k", range(1, 5))
def test_a_replace_killed_at_any_step_leaves_old_or_new_and_undo(tmp_path, k, saved_before):
    old = SHIPPED
    if saved_before:
        GoldenSession(Workspace("c", root=tmp_path), SHIPPED, name="c").replace(EDITED)
        old = EDITED
    _killed_at(tmp_path, k, "replace")
    _check(tmp_path, old)


@pytest.mark.parametrize("k", range(1, 7))
def test_a_bring_in_killed_at_any_step_is_whole_or_completes_when_done_again(tmp_path, k):
    _killed_at(tmp_path, k, "bring")
    is_new = _check(tmp_path, SHIPPED)
    store = SystemStore(Workspace("c", root=tmp_path).folder / "systems")
    names = store.names()  # the index reads whole: without the system or with it
    assert names in ([], ["my app"])
    if names:
        assert is_new  # the golden set is replaced before the systems are added
        return
    # killed before the system was added: the same change again completes it (the set is kept, not doubled)
    ws = Workspace("c", root=tmp_path)
    session = GoldenSession(ws, SHIPPED, name="c")
    history = len(ws.history())
    out, added = bring_in(session, store, golden=NEW, uploads=[SystemUpload("my app", "log.jsonl", LOG)],
                          chunks=CHUNKS)
    assert out.kind == "success" and [s.name for s in added] == ["my app"]
    assert _ids(session.golden) == _ids(NEW)
    assert len(ws.history()) >= history


@pytest.mark.parametrize("k", range(1, 5))
def test_a_reset_killed_at_any_step_leaves_old_or_shipped_and_undo(tmp_path, k):
    GoldenSession(Workspace("c", root=tmp_path), SHIPPED, name="c").replace(NEW)
    _killed_at(tmp_path, k, "reset")
    ws = Workspace("c", root=tmp_path)
    session = GoldenSession(ws, SHIPPED, name="c")
    assert _ids(session.golden) in (_ids(NEW), _ids(SHIPPED))
    if _ids(session.golden) == _ids(SHIPPED):
        assert session.undo().saved and _ids(session.golden) == _ids(NEW)


@pytest.mark.parametrize("k", range(1, 5))
def test_an_undo_killed_at_any_step_leaves_one_version_and_loses_none(tmp_path, k):
    s = GoldenSession(Workspace("c", root=tmp_path), SHIPPED, name="c")
    s.replace(EDITED)
    s.replace(NEW)
    _killed_at(tmp_path, k, "undo")
    ws = Workspace("c", root=tmp_path)
    session = GoldenSession(ws, SHIPPED, name="c")
    assert _ids(session.golden) in (_ids(NEW), _ids(EDITED))
    if _ids(session.golden) == _ids(EDITED):  # undone: redo brings NEW back
        assert session.undo(redo=True).saved and _ids(session.golden) == _ids(NEW)
    else:  # not undone: undo still works
        assert session.undo().saved and _ids(session.golden) == _ids(EDITED)
