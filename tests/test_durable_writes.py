"""Durable writes (issue 16, item 7): unique temporary names, one lock around every
read-modify-write, history written atomically, Undo that checks its entry and keeps what it
replaces, imports that are all or nothing with caps per member and on the manifest.

Concurrency is tested for real: threads of one process and several processes; ``kill -9`` of a
child in the middle of saves and of imports (a few rounds with random delays) leaves the old or
the new state, never a torn file.
"""
from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from rag_metrics.errors import InputError
from rag_metrics.io.files import atomic_write_text, locked, temp_name
from rag_metrics.io.golden import golden_to_text
from rag_metrics.systems import store as store_mod
from rag_metrics.systems.store import SystemStore
from rag_metrics.types import Corpus, Document, GoldenQuery, GoldenSet
from rag_metrics.workspace import store as workspace_mod
from rag_metrics.workspace.corpora import load_corpus, remove_corpus, save_corpus, stored_corpora
from rag_metrics.workspace.store import (
    DAMAGED_DIR,
    HISTORY_DIR,
    MAX_ARCHIVE_CORPORA,
    Workspace,
    export_space_archive,
    import_space_archive,
    list_corpora,
    read_archive,
)

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def _set(tag: str, n: int = 3) -> GoldenSet:
    return GoldenSet(tuple(GoldenQuery(f"q{i}", f"{tag} question {i}?", "", {f"{tag}-{i}#0": 1 + i % 3})
                           for i in range(n)))


def _disk(ws: Workspace) -> GoldenSet:
    loaded = ws.load()
    assert loaded is not None and loaded[1].ok, loaded and loaded[1].lines()
    return loaded[0]


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (lock files left out: they hold no data)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")}


def _child(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([PY, "-c", code, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


# ---- unique temporary names, the lock helper ----------------------------------------------------
def test_temporary_names_are_unique_per_thread_and_call(tmp_path):
    names = {temp_name(tmp_path / "f.json") for _ in range(200)}
    assert len(names) == 200 and all(n.parent == tmp_path and n.name.startswith(".f.json.") for n in names)
    # many threads writing the same file at once: no write fails, the file is one whole write
    target, errors = tmp_path / "same.json", []
    texts = [json.dumps({"writer": i, "pad": "x" * (1000 + i)}) for i in range(24)]

    def write(t: str) -> None:
        try:
            for _ in range(10):
                atomic_write_text(target, t)
        except Exception as e:  # noqa: BLE001 - collected
            errors.append(e)

    threads = [threading.Thread(target=write, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and target.read_text() in texts
    assert not list(tmp_path.glob("*.tmp"))


def test_lock_is_exclusive_across_threads_and_reentrant(tmp_path):
    p, inside, most = tmp_path / "x.json", [0], [0]

    def work() -> None:
        for _ in range(20):
            with locked(p), locked(p):  # nested in one thread: no deadlock
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                time.sleep(0.0005)
                inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1


# ---- concurrent "Add system" ---------------------------------------------------------------------
RUN = b"q1 Q0 a#0 1 2 t\nq2 Q0 b#0 1 1 t\n"


def _name(i: int) -> str:
    return f"upload {i}" if i % 3 == 0 else f"endpoint {i}"


def _add(store: SystemStore, i: int) -> None:
    if i % 3 == 0:
        store.add_upload(_name(i), f"r{i}.trec", RUN + f"q3 Q0 c{i}#0 1 1 t\n".encode())
    else:
        store.add_connection(_name(i), "http", {"url": f"http://127.0.0.1:9/s{i}"})


@pytest.mark.parametrize("threads", [8, 24])
def test_concurrent_add_system_from_threads_keeps_every_system(tmp_path, monkeypatch, threads):
    monkeypatch.setattr(store_mod, "MAX_SYSTEMS", 100)
    store, errors = SystemStore(tmp_path / "systems"), []
    barrier = threading.Barrier(threads)

    def one(i: int) -> None:
        barrier.wait()
        try:
            _add(SystemStore(tmp_path / "systems"), i)  # each session its own store object
        except Exception as e:  # noqa: BLE001 - collected
            errors.append(e)

    ts = [threading.Thread(target=one, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    names = store.names()
    assert len(names) == threads == len(set(names))
    uploads = [s for s in store.specs() if s.kind == "upload"]
    assert all((store.folder / str(s.file)).is_file() for s in uploads)
    # removals and renames racing with adds keep the rest
    removed = [n for n in names if n.startswith("endpoint")][:3]
    more = [threading.Thread(target=store.remove, args=(n,)) for n in removed]
    more += [threading.Thread(target=_add, args=(SystemStore(store.folder), 1000 + i)) for i in range(1, 4)]
    more += [threading.Thread(target=store.rename, args=(uploads[0].name, "renamed upload"))]
    for t in more:
        t.start()
    for t in more:
        t.join()
    after = set(store.names())
    assert after == (set(names) - set(removed) - {uploads[0].name}) | {_name(1000 + i) for i in range(1, 4)} \
        | {"renamed upload"}
    assert store.get("renamed upload").file == uploads[0].file


def test_concurrent_add_system_from_processes_keeps_every_system(tmp_path):
    code = ("import sys; import rag_metrics.systems.store as m; m.MAX_SYSTEMS = 100\n"
            "from rag_metrics.systems.store import SystemStore\n"
            "s = SystemStore(sys.argv[1]); p = int(sys.argv[2])\n"
            "print('ready', flush=True); sys.stdin.readline()\n"
            "for i in range(8):\n"
            "    s.add_connection(f'p{p} c{i}', 'http', {'url': f'http://127.0.0.1:9/{p}/{i}'})\n")
    procs = [subprocess.Popen([PY, "-c", code, str(tmp_path / "systems"), str(p)], cwd=ROOT, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}) for p in range(4)]
    for p in procs:  # all imported: start together
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    names = SystemStore(tmp_path / "systems").names()
    assert sorted(names) == sorted(f"p{p} c{i}" for p in range(4) for i in range(8))


def test_concurrent_names_and_settings(tmp_path):
    ws = [Workspace(f"corpus {i % 3}", tmp_path) for i in range(12)]

    def work(w: Workspace, i: int) -> None:
        w.save_settings(**{"chunk_size": 100 + i} if i % 2 else {"chunk_overlap": i})
        w._write_name()

    ts = [threading.Thread(target=work, args=(w, i)) for i, w in enumerate(ws)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert list_corpora(root=tmp_path) == ["corpus 0", "corpus 1", "corpus 2"]
    for n in range(3):  # every corpus got both keys: no update lost
        assert set(Workspace(f"corpus {n}", tmp_path).load_settings()) == {"chunk_size", "chunk_overlap"}


def test_concurrent_corpus_saves_leave_one_whole_corpus(tmp_path):
    versions = {f"v{v}": Corpus(tuple(Document(f"d{i}", f"version {v} text {i} " * 20) for i in range(50 + v)),
                                name="c") for v in range(6)}
    ts = [threading.Thread(target=save_corpus, args=("c", c), kwargs={"label": k, "root": tmp_path,
                                                                        "seed_golden": _set(k)})
          for k, c in versions.items()]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    corpus, info, seed = load_corpus("c", root=tmp_path)
    assert corpus.fingerprint() == versions[info.label].fingerprint()
    assert seed is not None and seed.queries == _set(info.label).queries
    folder = tmp_path / Workspace("c", tmp_path).folder.name / "corpus"
    assert len(list(folder.glob("documents*.jsonl"))) == 1  # old versions' files removed
    assert remove_corpus("c", root=tmp_path) and stored_corpora(tmp_path) == []


# ---- kill -9 in the middle of saves and imports ----------------------------------------------------
SAVER = r"""
import sys, itertools, json
from rag_metrics.workspace import Workspace
from rag_metrics.systems.store import SystemStore
from rag_metrics.corpus_store import save_corpus
from rag_metrics.types import GoldenQuery, GoldenSet, Corpus, Document
import rag_metrics.systems.store as m
m.MAX_SYSTEMS = 10_000
root, rnd = sys.argv[1], sys.argv[2]
sets = [GoldenSet(tuple(GoldenQuery(f"q{i}", f"set {v} question {i} " + "x" * 60, "", {f"d{i}#0": 1})
                        for i in range(1500 + 500 * v))) for v in range(2)]
corpora = [Corpus(tuple(Document(f"d{i}", f"corpus {v} " * 30) for i in range(800 + 400 * v)), name="c")
           for v in range(2)]
ws = Workspace("c", root)
store = SystemStore(ws.folder / "systems")
print("ready", flush=True)
for n in itertools.count():
    v = n % 2
    ws.save(sets[v], None, force=True)
    ws.save_settings(chunk_size=100 + v)
    save_corpus("c", corpora[v], label=f"v{v}", root=root)
    store.add_connection(f"r{rnd} s{n}", "http", {"url": f"http://127.0.0.1:9/{n}"})
    print(n, flush=True)
"""


def _kill_after(proc: subprocess.Popen, lo: float, hi: float) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", proc.stderr.read() if proc.stderr else line
    time.sleep(random.uniform(lo, hi))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def test_kill_during_saves_leaves_old_or_new_never_torn(tmp_path):
    rng = random.Random(16)
    expected_sets = {1500: "set 0", 2000: "set 1"}
    kept: dict[int, int] = {}  # systems of each round seen so far
    for rnd in range(4):
        _kill_after(_child(SAVER, str(tmp_path), str(rnd)), 0.05, rng.uniform(0.3, 1.2))
        ws = Workspace("c", tmp_path)
        if ws.path.exists():  # the golden file: whole, one of the two versions, every row valid
            g = _disk(ws)
            assert len(g) in expected_sets and all(q.question.startswith(expected_sets[len(g)]) for q in g)
        for h in ws.history():
            assert len(_disk_text(h)) in expected_sets
        assert ws.check().ok
        assert set(ws.load_settings()) <= {"chunk_size"}
        if (ws.folder / "corpus" / "meta.json").exists():
            corpus, info, _ = load_corpus("c", root=tmp_path)
            assert len(corpus) == {"v0": 800, "v1": 1200}[info.label]
            assert all(d.text.startswith(f"corpus {info.label[1]} ") for d in corpus)
        idx = ws.folder / "systems" / "systems.json"
        if idx.exists():  # every system added in every round is kept, in order
            names = [s["name"] for s in json.loads(idx.read_text())["systems"]]
            for r in range(rnd + 1):
                mine = [n for n in names if n.startswith(f"r{r} ")]
                assert mine == [f"r{r} s{i}" for i in range(len(mine))]
                assert len(mine) >= kept.get(r, 0)  # nothing added earlier is lost
                kept[r] = len(mine)


def _disk_text(p: Path) -> list[dict]:
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


IMPORTER = r"""
import sys, itertools
from rag_metrics.workspace import import_space_archive
root, space = sys.argv[1], sys.argv[2]
archives = [open(p, "rb").read() for p in sys.argv[3:]]
print("ready", flush=True)
for n in itertools.count():
    rep = import_space_archive(archives[n % len(archives)], space, root)
    assert rep.ok, rep.lines()
"""


@pytest.mark.parametrize("space", ["shared", "class 2"])
def test_kill_during_imports_leaves_all_old_or_all_new(tmp_path, space):
    rng = random.Random(space)
    src = tmp_path / "src"
    archives = []
    for v in range(2):  # two archives of four corpora each: every corpus tells which archive it came from
        for c in range(4):
            ws = Workspace(f"corpus {c}", src / str(v))
            ws.save(GoldenSet(tuple(GoldenQuery(f"q{i}", f"archive {v} corpus {c} q{i} " + "y" * 80, "",
                                                {f"d{i}#0": 1}) for i in range(800 + 300 * v))), None)
            ws.save_settings(chunk_size=500 + v)
        p = tmp_path / f"a{v}.zip"
        p.write_bytes(export_space_archive("shared", src / str(v)))
        archives.append(str(p))
    root = tmp_path / "root"
    for _round in range(4):
        _kill_after(_child(IMPORTER, str(root), space, *archives), 0.05, rng.uniform(0.2, 1.0))
        seen = set()
        for c in range(4):
            ws = Workspace(f"corpus {c}", root, space=space)  # finishes a committed import
            if ws.path.exists():
                g = _disk(ws)
                tags = {q.question.split(" corpus")[0] for q in g}
                assert len(tags) == 1 and len(g) == {"archive 0": 800, "archive 1": 1100}[tags.pop()]
                seen.add(g.queries[0].question.split(" corpus")[0])
                assert ws.load_settings() == {"chunk_size": 500 + int(next(iter(seen))[-1])}
            else:
                seen.add("none")
        assert len(seen) == 1, seen  # all four corpora from the same archive (or none yet)
        assert not (workspace_mod.space_dir(space, root) / workspace_mod.IMPORT_MARK).exists()


# ---- undo: checked entries, the replaced version kept ---------------------------------------------
def _truncate_mid_line(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2 + 3])


def _truncate_at_line(p: Path) -> None:
    lines = p.read_bytes().splitlines(keepends=True)
    p.write_bytes(b"".join(lines[:1]))


def _empty(p: Path) -> None:
    p.write_bytes(b"")


def _not_utf8(p: Path) -> None:
    p.write_bytes(p.read_bytes()[:10] + b"\xff\xfe" + p.read_bytes()[10:])


def _bad_grade(p: Path) -> None:
    p.write_bytes(p.read_bytes().replace(b'": 1', b'": 1e308', 1))


DAMAGE = {"mid_line": _truncate_mid_line, "at_line_boundary": _truncate_at_line, "empty": _empty,
          "not_utf8": _not_utf8, "bad_grade": _bad_grade}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_undo_refuses_a_damaged_entry(tmp_path, kind):
    ws = Workspace("c", tmp_path)
    v = None
    for tag in ("A", "B", "C"):
        v = ws.save(_set(tag), v).version
    newest = ws.history()[-1]
    DAMAGE[kind](newest)
    before = ws.path.read_bytes()
    res, golden = ws.undo(v)
    assert not res.saved and golden is None and ws.path.read_bytes() == before
    assert res.message and "damaged" in res.message and newest.name in res.message
    assert (ws.folder / HISTORY_DIR / DAMAGED_DIR / newest.name).is_file()  # set aside, not deleted
    res, golden = ws.undo(v)  # again: goes further back, to A
    assert res.saved and golden is not None and _disk(ws).queries == _set("A").queries


def test_undo_refuses_an_entry_over_the_load_limit(tmp_path, monkeypatch):
    ws = Workspace("c", tmp_path)
    v = ws.save(_set("A", 50), None).version
    v = ws.save(_set("B"), v).version
    monkeypatch.setattr(workspace_mod, "MAX_GOLDEN_BYTES", 1000)
    res, golden = ws.undo(v)
    assert not res.saved and golden is None and "over the 1,000-byte limit" in (res.message or "")
    assert _disk(ws).queries == _set("B").queries


@pytest.mark.parametrize("content", [b'{"id": "q1", "question": "legacy", "relevant": {"a#0": 1}',
                                     b"not json at all\n",
                                     b'{"id": "q1", "question": "x", "relevant": {"a": 1e308}}\n'])
def test_undo_refuses_a_damaged_legacy_entry(tmp_path, content):
    ws = Workspace("c", tmp_path)
    v = ws.save(_set("A"), None).version
    legacy = ws.folder / HISTORY_DIR / f"{time.time_ns():020d}.jsonl"  # the old naming, no hash
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(content)
    res, _ = ws.undo(v)
    assert not res.saved and "damaged" in (res.message or "") and _disk(ws).queries == _set("A").queries


def test_undo_keeps_the_version_it_replaces(tmp_path):
    ws = Workspace("c", tmp_path)
    v = None
    for tag in ("A", "B", "C"):
        v = ws.save(_set(tag), v).version
    res, g = ws.undo(v)
    assert res.saved and g.queries == _set("B").queries and len(ws.undone()) == 1
    res, g = ws.undo(res.version)
    assert res.saved and g.queries == _set("A").queries and len(ws.undone()) == 2
    res, g = ws.redo(res.version)  # the undo undone
    assert res.saved and g.queries == _set("B").queries and _disk(ws).queries == _set("B").queries
    res, g = ws.redo(res.version)
    assert res.saved and _disk(ws).queries == _set("C").queries and not ws.undone()
    res, g = ws.redo(res.version)
    assert not res.saved and res.message == "no undo to redo"
    res, g = ws.undo(res.version)  # history was rebuilt by the redos: undo walks back again
    assert res.saved and _disk(ws).queries == _set("B").queries
    stale = ws.redo("not the version on disk")
    assert not stale[0].saved and "another session" in (stale[0].message or "")


def test_history_entries_are_whole_and_named_by_hash(tmp_path):
    ws = Workspace("c", tmp_path)
    v = None
    for tag in "ABCDE":
        v = ws.save(_set(tag), v).version
    names = [p.name for p in ws.history()]
    assert names == sorted(names) and len(set(n[:20] for n in names)) == 4
    assert not list((ws.folder / HISTORY_DIR).glob("*.tmp"))
    import hashlib

    for p in ws.history():
        assert hashlib.sha256(p.read_bytes()).hexdigest()[:16] == p.stem.split("-")[1]


# ---- hostile archives: refused with nothing written -------------------------------------------------
def _zip(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for n, b in members:
            z.writestr(n, b)
    return buf.getvalue()


def _manifest(*items: dict) -> bytes:
    return json.dumps({"format": "rag-metrics-workspace", "version": 1, "corpora": list(items)}).encode()


G = golden_to_text(_set("Z"), "jsonl").encode()
S = b'{"chunk_size": 300}'


def _big_golden(size: int) -> bytes:
    line = json.dumps({"id": "q", "question": "p" * 200, "relevant": {"a#0": 1}}).encode() + b"\n"
    return line * (size // len(line) + 1)


def _lying_header() -> bytes:
    """A member that declares 300 bytes and unpacks to 5 MB (headers patched after writing)."""
    real = b"{" + b" " * (5 * 1024 * 1024) + b"}"
    data = bytearray(_zip([("manifest.json", _manifest({"name": "c", "golden": "0/golden.jsonl"})),
                           ("0/golden.jsonl", real)]))
    size = len(real).to_bytes(4, "little")
    at = 0
    while (at := data.find(size, at)) >= 0:  # both headers carry the uncompressed size
        data[at:at + 4] = (300).to_bytes(4, "little")
        at += 4
    return bytes(data)


def _duplicate_names() -> bytes:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns "Duplicate name"
        return _zip([("manifest.json", _manifest({"name": "c", "golden": "0/golden.jsonl"})),
                     ("0/golden.jsonl", G), ("0/golden.jsonl", golden_to_text(_set("EVIL"), "jsonl").encode())])


def _dup_manifest() -> bytes:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _zip([("manifest.json", _manifest({"name": "c", "golden": "0/golden.jsonl"})),
                     ("manifest.json", _manifest({"name": "evil", "golden": "0/golden.jsonl"})),
                     ("0/golden.jsonl", G)])


HOSTILE = {
    # a golden set over the workspace's own load limit (monkeypatched to 4 KB below; one real-size case)
    "golden_over_limit": lambda: _zip([("manifest.json", _manifest({"name": "c", "golden": "0/golden.jsonl"})),
                                       ("0/golden.jsonl", _big_golden(4097))]),
    "second_golden_over_limit": lambda: _zip([
        ("manifest.json", _manifest({"name": "a", "golden": "0/golden.jsonl"},
                                    {"name": "b", "golden": "1/golden.jsonl"})),
        ("0/golden.jsonl", G), ("1/golden.jsonl", _big_golden(10_000))]),
    "settings_over_limit": lambda: _zip([("manifest.json", _manifest({"name": "c", "settings": "0/settings.json"})),
                                         ("0/settings.json", b'{"chunk_size": 300' + b" " * 70_000 + b"}")]),
    "manifest_over_limit": lambda: _zip([("manifest.json", _manifest({"name": "c", "pad": "x" * 1_100_000}))]),
    # a member listed more than once
    "member_twice": lambda: _zip([("manifest.json", _manifest({"name": "a", "golden": "0/golden.jsonl"},
                                                              {"name": "b", "golden": "0/golden.jsonl"})),
                                  ("0/golden.jsonl", G)]),
    "member_as_golden_and_settings": lambda: _zip([
        ("manifest.json", _manifest({"name": "a", "golden": "0/settings.json", "settings": "0/settings.json"})),
        ("0/settings.json", S)]),
    "member_listed_100_times": lambda: _zip([
        ("manifest.json", _manifest(*({"name": f"c{i}", "golden": "0/golden.jsonl"} for i in range(100)))),
        ("0/golden.jsonl", G)]),
    # too many manifest entries
    "manifest_300_entries": lambda: _zip([("manifest.json", _manifest(*({"name": f"c{i}"} for i in range(300))))]),
    "manifest_over_corpora_cap": lambda: _zip([("manifest.json", _manifest(*(
        {"name": f"c{i}", "settings": f"{i}/settings.json"} for i in range(MAX_ARCHIVE_CORPORA + 1)))),
        *((f"{i}/settings.json", S) for i in range(MAX_ARCHIVE_CORPORA + 1))]),
    # duplicated zip member names
    "duplicate_member_names": _duplicate_names,
    "duplicate_manifest": _dup_manifest,
    # zip bombs
    "bomb_declared": lambda: _zip([("manifest.json", _manifest({"name": "c", "golden": "0/golden.jsonl"})),
                                   ("0/golden.jsonl", b" " * (61 * 1024 * 1024))]),
    "bomb_lying_header": _lying_header,
    "bomb_many_members": lambda: _zip([("manifest.json", _manifest({"name": "c"})),
                                       *((f"{i}/settings.json", b" " * (400 * 1024)) for i in range(160))]),
}


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(workspace_mod, "MAX_GOLDEN_BYTES", 4096)


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_archives_are_refused_with_nothing_written(tmp_path, small_limit, kind):
    data = HOSTILE[kind]()
    root = tmp_path / "w"
    ws = Workspace("c", root)
    v = ws.save(_set("A"), None).version
    Workspace("a", root).save(_set("A"), None)
    before = _tree(root)
    report = import_space_archive(data, "shared", root)
    assert not report.ok and report.lines()
    res, rep2 = ws.import_archive(data, v)
    assert not res.saved and not rep2.ok
    report3 = import_space_archive(data, "class 2", root)
    assert not report3.ok
    assert _tree(root) == before  # nothing written, no staging folder left, no new space
    assert not list(root.rglob(".import-*"))


def test_refusals_name_the_cause(tmp_path, small_limit):
    def first(kind: str) -> str:
        return " ".join(read_archive(HOSTILE[kind]())[1].lines())

    assert "4,096-byte limit" in first("golden_over_limit")
    assert "listed more than once" in first("member_twice")
    assert "300 corpora" in first("manifest_300_entries")
    assert "appears more than once in the zip" in first("duplicate_member_names")
    assert "unpacks to more than" in first("bomb_declared")
    assert first("bomb_lying_header")


def test_golden_over_the_real_load_limit_is_refused(tmp_path):
    big = _big_golden(workspace_mod.MAX_GOLDEN_BYTES + 1)
    data = _zip([("manifest.json", _manifest({"name": "c", "golden": "0/golden.jsonl"})), ("0/golden.jsonl", big)])
    assert len(data) < workspace_mod.MAX_ARCHIVE_BYTES
    report = import_space_archive(data, "shared", tmp_path)
    assert not report.ok and f"{workspace_mod.MAX_GOLDEN_BYTES:,}-byte limit" in report.lines()[0]
    assert not any(tmp_path.iterdir())


def test_import_is_all_or_nothing_when_a_later_corpus_is_bad(tmp_path):
    bad = json.dumps({"id": "q1", "question": "x", "relevant": {"a#0": 1e308}}).encode()
    data = _zip([("manifest.json", _manifest({"name": "a", "golden": "0/golden.jsonl"},
                                             {"name": "b", "golden": "1/golden.jsonl"})),
                 ("0/golden.jsonl", G), ("1/golden.jsonl", bad)])
    Workspace("a", tmp_path).save(_set("A"), None)
    before = _tree(tmp_path)
    assert not import_space_archive(data, "shared", tmp_path).ok
    assert _tree(tmp_path) == before


def test_import_swaps_every_corpus_in_and_keeps_history(tmp_path):
    for c in ("a", "b"):
        Workspace(c, tmp_path / "src").save(_set(c.upper() + "new"), None)
        Workspace(c, tmp_path / "src").save_settings(chunk_size=321)
        Workspace(c, tmp_path / "dst").save(_set(c.upper() + "old"), None)
    Workspace("a", tmp_path / "dst").save_settings(chunk_overlap=7)
    report = import_space_archive(export_space_archive("shared", tmp_path / "src"), "shared", tmp_path / "dst")
    assert report.ok
    for c in ("a", "b"):
        ws = Workspace(c, tmp_path / "dst")
        assert _disk(ws).queries == _set(c.upper() + "new").queries
        assert len(ws.history()) == 1 and ws.undo(ws.version())[0].saved
        assert _disk(ws).queries == _set(c.upper() + "old").queries
    assert Workspace("a", tmp_path / "dst").load_settings() == {"chunk_size": 321, "chunk_overlap": 7}
    assert not list((tmp_path / "dst").glob(".import-*"))


def test_an_interrupted_committed_import_is_finished_on_next_access(tmp_path, monkeypatch):
    Workspace("a", tmp_path / "src").save(_set("N"), None)
    Workspace("b", tmp_path / "src").save(_set("M"), None)
    data = export_space_archive("shared", tmp_path / "src")
    calls = []
    real = workspace_mod._apply_import

    def crash_after_commit(base, space, root):
        calls.append(1)
        if len(calls) == 2:  # the apply right after the commit point: "killed" there
            raise KeyboardInterrupt
        return real(base, space, root)

    monkeypatch.setattr(workspace_mod, "_apply_import", crash_after_commit)
    with pytest.raises(KeyboardInterrupt):
        import_space_archive(data, "shared", tmp_path / "dst")
    monkeypatch.setattr(workspace_mod, "_apply_import", real)
    assert (tmp_path / "dst" / workspace_mod.IMPORT_MARK).exists()
    assert _disk(Workspace("b", tmp_path / "dst")).queries == _set("M").queries
    assert _disk(Workspace("a", tmp_path / "dst")).queries == _set("N").queries
    assert not (tmp_path / "dst" / workspace_mod.IMPORT_MARK).exists()


def test_single_corpus_import_keeps_the_conflict_handling(tmp_path):
    src = Workspace("c", tmp_path / "src")
    src.save(_set("NEW"), None)
    src.save_settings(chunk_size=900)
    data = src.export_archive()
    ws = Workspace("c", tmp_path / "dst")
    v1 = ws.save(_set("A"), None).version
    ws.save(_set("B"), v1)  # another session saved since v1
    res, report = ws.import_archive(data, v1)
    assert report.ok and not res.saved and res.conflict_path is not None
    assert _disk(ws).queries == _set("B").queries and ws.load_settings() == {}
    res, report = ws.import_archive(data, ws.version())
    assert res.saved and _disk(ws).queries == _set("NEW").queries and ws.load_settings() == {"chunk_size": 900}
    assert ws.undo(res.version)[0].saved and _disk(ws).queries == _set("B").queries


# ---- the page: Undo's message for a damaged entry, Redo ---------------------------------------------
def test_undo_and_redo_in_the_page(app, app_env):
    from app_helpers import SAMPLE, edit_table, goto, no_exception

    goto(app, "pages/golden_set.py")
    edit_table(app, {"edited_rows": {0: {"expected_answer": "first"}}})
    edit_table(app, {"edited_rows": {0: {"expected_answer": "second"}}})
    edit_table(app, {"edited_rows": {0: {"expected_answer": "third"}}})
    ws = Workspace(SAMPLE, app_env)
    _truncate_mid_line(ws.history()[-1])  # "second", damaged on disk
    app.segmented_control(key="golden_view").set_value("io").run()
    app.button(key="golden_undo").click().run()
    no_exception(app)
    assert any("damaged" in w.value and "not restored" in w.value for w in app.warning)
    assert _disk(ws).queries[0].expected_answer == "third"
    app.button(key="golden_undo").click().run()  # again: further back, to "first"
    assert _disk(ws).queries[0].expected_answer == "first"
    app.button(key="golden_redo").click().run()  # the undo undone
    no_exception(app)
    assert _disk(ws).queries[0].expected_answer == "third"


@pytest.mark.parametrize("damage", ["{not json", '{"systems": 3}', '{"version": 1}', '{"systems": [{"kind": "x"}]}'])
def test_a_damaged_systems_index_is_not_overwritten(tmp_path, damage):
    store = SystemStore(tmp_path)
    (tmp_path / "systems.json").write_text(damage)
    for change in (lambda: store.add_connection("new", "http", {"url": "http://127.0.0.1:9/s"}),
                   lambda: store.remove("x"), lambda: store.rename("x", "y")):
        with pytest.raises(InputError, match="damaged|no system named"):
            change()
        assert (tmp_path / "systems.json").read_text() == damage
