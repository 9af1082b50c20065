"""Server folders: corpus (BEIR) and Qdrant local folders confined to the operator's data roots by
a real-path containment check; one message for anything outside (existing or not)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rag_metrics.config import parse_server_config
from rag_metrics.errors import InputError
from rag_metrics.io.trec import load_beir
from rag_metrics.server.access import Caller, operator
from rag_metrics.server.connections import ServerEnv
from rag_metrics.server.folders import FolderPolicy

STUDENT, TEACHER = Caller("student", space="s1"), Caller("teacher")
OUTSIDE = "only folders inside the lab's data folders can be opened"


def _beir(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "title": "T", "text": "Refunds in 30 days."}) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "refund window?"}) + "\n")
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


@pytest.fixture
def roots(tmp_path):
    data = tmp_path / "data"
    _beir(data / "scifact")
    _beir(data / "nested" / "deep")         # not directly under a root: not listed
    (data / "empty").mkdir()
    secret = _beir(tmp_path / "private" / "secret-set")
    (data / "escape").symlink_to(secret)    # a link inside the root that leads out
    (data / "evil").symlink_to("/etc")
    _beir(tmp_path / "data-evil")           # a sibling whose name starts like the root
    return tmp_path, parse_server_config({"lab": {"data_roots": [str(data)]}})


@pytest.mark.parametrize("caller", [STUDENT, TEACHER], ids=lambda c: c.role)
def test_inside_is_allowed_as_its_real_path(roots, caller):
    tmp, cfg = roots
    f = FolderPolicy.for_caller(caller, cfg)
    data = (tmp / "data").resolve()
    for p, want in [(data / "scifact", data / "scifact"), (data, data), (data / "nested" / "deep", None),
                    (str(data / "scifact") + "/", data / "scifact"), (data / "empty" / ".." / "scifact", None)]:
        got = f.confine(p)
        assert got == (want or Path(os.path.realpath(p)))


@pytest.mark.parametrize("caller", [STUDENT, TEACHER], ids=lambda c: c.role)
def test_outside_is_refused_with_one_message(roots, caller):
    tmp, cfg = roots
    f = FolderPolicy.for_caller(caller, cfg)
    data = tmp / "data"
    bad = ["/etc", "/etc/passwd", "/", str(tmp / "private" / "secret-set"), str(data / ".." / "private"),
           str(data / "escape"), str(data / "evil"), str(data / "evil" / "ssh"), str(tmp / "data-evil"),
           "~", "relative/path", "", "   ", "/nonexistent/folder", "a\x00b", str(data / "scifact" / ".." / "..")]
    messages = set()
    for p in bad:
        with pytest.raises(InputError) as e:
            f.confine(p, "BEIR folder")
        messages.add(str(e.value))
    assert messages == {f"BEIR folder: {OUTSIDE}; choose one of the class's datasets"}


def test_datasets_are_the_beir_folders_directly_under_the_roots(roots):
    tmp, cfg = roots
    sets = FolderPolicy.for_caller(STUDENT, cfg).datasets()
    assert [p.name for p in sets] == ["scifact"]  # not nested, not empty, not the links that lead out


def test_single_user_without_roots_opens_any_folder_and_with_roots_is_confined(roots, tmp_path):
    tmp, cfg = roots
    any_ = FolderPolicy.for_caller(operator(), parse_server_config({}))
    assert any_.any_folder and any_.confine(str(tmp / "private" / "secret-set")) == tmp / "private" / "secret-set"
    confined = FolderPolicy.for_caller(operator(), cfg)
    with pytest.raises(InputError, match=OUTSIDE):
        confined.confine(str(tmp / "private" / "secret-set"))
    none = FolderPolicy.for_caller(STUDENT, parse_server_config({}))
    for p in ["/etc", str(tmp / "data" / "scifact")]:
        with pytest.raises(InputError, match="this server has no data folders for the class"):
            none.confine(p, "BEIR folder")
    assert none.datasets() == []


def test_a_confined_beir_folder_loads(roots):
    tmp, cfg = roots
    f = FolderPolicy.for_caller(STUDENT, cfg)
    corpus, golden = load_beir(f.confine(str(tmp / "data" / "scifact")))
    assert len(corpus) == 1 and len(golden) == 1


def test_qdrant_local_folders_are_confined(roots):
    pytest.importorskip("qdrant_client")
    from rag_metrics.systems.backends.qdrant import QdrantConfig, close_local_clients, make_client

    tmp, cfg = roots
    env = ServerEnv(STUDENT, cfg)
    for p in [str(tmp / "made-by-student"), str(tmp / "data" / "evil" / "x"), str(tmp / "data" / "escape" / "db"),
              "/tmp/anywhere-qdrant", str(tmp / "data" / ".." / "x")]:
        with pytest.raises(InputError, match=f"Qdrant local folder: {OUTSIDE}"):
            make_client(QdrantConfig("c", path=p), env)
        assert not Path(p).exists()
    assert not (tmp / "private" / "secret-set" / "db").exists()
    inside = tmp / "data" / "qdrant-local"
    try:
        client = make_client(QdrantConfig("c", path=str(inside)), env)
        assert client is not None and inside.exists()
    finally:
        close_local_clients()


def test_an_in_memory_qdrant_is_refused_on_a_class_server(tmp_path):
    """One :memory: store per process would be shared by every student of a class server."""
    from rag_metrics.config import ServerConfig
    from rag_metrics.errors import InputError
    from rag_metrics.server.access import STUDENT, TEACHER, Caller
    from rag_metrics.server.connections import ServerEnv
    from rag_metrics.systems.backends.qdrant import QdrantConfig, make_client

    for role in (STUDENT, TEACHER):
        env = ServerEnv(Caller(role, space="seat-x" if role == STUDENT else "shared"), ServerConfig())
        with pytest.raises(InputError, match="in-memory"):
            make_client(QdrantConfig(collection="c", path=":memory:"), env)
