"""Systems kept in the workspace: uploads and connections come back, secrets never stored."""
from __future__ import annotations

import json

import pytest

from rag_metrics.errors import InputError
from rag_metrics.systems.base import BackendError, LiveSystem, ResultMemo
from rag_metrics.systems.store import SystemStore, build_system
from rag_metrics.types import GoldenQuery, GoldenSet

GOLDEN = GoldenSet((GoldenQuery("q1", "alpha?", relevant={"a#0": 1}), GoldenQuery("q2", "beta?", relevant={"b#0": 1})))


def test_upload_is_kept_and_comes_back(tmp_path):
    store = SystemStore(tmp_path / "systems")
    spec, rep = store.add_upload("my run", "mine.trec", b"q1 Q0 a#0 1 2 t\nq2 Q0 x#0 1 1 t\n")
    assert spec is not None and rep.ok
    again = SystemStore(tmp_path / "systems")  # a new session / a restart
    (s,) = again.specs()
    assert (s.name, s.kind, s.filename) == ("my run", "upload", "mine.trec")
    assert (tmp_path / "systems" / s.file).read_bytes() == b"q1 Q0 a#0 1 2 t\nq2 Q0 x#0 1 1 t\n"
    run = again.system(s).rank(GOLDEN.questions(), 10).run
    assert {q: [i for i, _ in v] for q, v in run.rankings().items()} == {"q1": ["a#0"], "q2": ["x#0"]}
    assert not list((tmp_path / "systems").glob(".*tmp"))  # atomic writes leave no temporary file
    assert json.loads((tmp_path / "systems" / "systems.json").read_text())["version"] == 1


def test_bad_upload_is_not_kept_and_names_are_checked(tmp_path):
    store = SystemStore(tmp_path / "s")
    spec, rep = store.add_upload("bad", "bad.jsonl", b'{"question": "q", "contexts": "not a list"}\n')
    assert spec is None and "must be a list" in rep.lines()[0]
    assert store.specs() == []
    store.add_upload("ok", "r.trec", b"q1 Q0 a 1 1 t\n")
    with pytest.raises(InputError, match="exists already"):
        store.add_upload("ok", "r.trec", b"q1 Q0 a 1 1 t\n")
    with pytest.raises(InputError, match="system name"):
        store.add_upload("../evil", "r.trec", b"q1 Q0 a 1 1 t\n")
    assert store.remove("ok") and store.specs() == [] and not list((tmp_path / "s").glob("ok-*"))


def test_size_cap(tmp_path, monkeypatch):
    import rag_metrics.systems.store as store_mod

    monkeypatch.setattr(store_mod, "MAX_STORED_BYTES", 10)
    spec, rep = SystemStore(tmp_path).add_upload("big", "r.trec", b"q1 Q0 a 1 1 t\n")
    assert spec is None and "keeps uploads up to 10 bytes" in rep.lines()[0]


def test_damaged_index_reads_as_empty(tmp_path):
    (tmp_path / "systems.json").write_text("{not json")
    assert SystemStore(tmp_path).specs() == []


def test_connections_keep_references_and_refuse_literal_secrets(tmp_path):
    store = SystemStore(tmp_path)
    with pytest.raises(InputError, match="literal secret"):
        store.add_connection("h", "http", {"url": "http://x/s", "headers": [["Authorization", "Bearer abc"]]})
    with pytest.raises(InputError, match="literal password"):
        store.add_connection("p", "pgvector", {"dsn": "postgresql://me:hunter2@db/x", "table": "t"})
    store.add_connection("h", "http", {"url": "http://x/s", "headers": [["Authorization", "Bearer ${TOK}"]]})
    store.add_connection("p", "pgvector", {"dsn": "postgresql://me:${PW}@db/x", "table": "t"})
    store.add_connection("q", "qdrant", {"collection": "c", "url": "http://localhost:6333", "api_key": "${QK}"})
    text = (tmp_path / "systems.json").read_text()
    assert "${TOK}" in text and "${PW}" in text and "${QK}" in text
    assert "abc" not in text and "hunter2" not in text
    assert [s.description for s in store.specs()] == [
        "HTTP endpoint http://x/s", "pgvector table t at postgresql://me:${PW}@db/x",
        "Qdrant collection c at http://localhost:6333"]
    with pytest.raises(InputError, match="must start with http"):
        store.add_connection("bad", "http", {"url": "x"})


class _Counting:
    """A backend that counts questions (for the on-disk memo)."""

    concurrency = 1
    public_config = {"kind": "counting"}

    def __init__(self):
        self.asked = []

    def search(self, question, k):
        self.asked.append(question)
        if question == "beta?":
            raise BackendError("down")
        return [("a#0", 1.0)]

    def close(self):
        pass


def test_results_memo_on_disk_survives_a_restart(tmp_path):
    b1 = _Counting()
    sr = LiveSystem("c", b1, ResultMemo(tmp_path)).rank(GOLDEN.questions(), 10)
    assert b1.asked == ["alpha?", "beta?"] and sr.failed_ids == ["q2"]
    b2 = _Counting()
    LiveSystem("c", b2, ResultMemo(tmp_path)).rank(GOLDEN.questions(), 5)  # new process, smaller K
    assert b2.asked == ["beta?"]  # only the failed question is asked again
    b3 = _Counting()
    LiveSystem("c", b3, ResultMemo(tmp_path)).rank(GOLDEN.questions(), 20)  # deeper than fetched, but complete
    assert b3.asked == ["beta?"]


def test_store_memo_is_shared_and_build_system_needs_encoder(tmp_path):
    store = SystemStore(tmp_path)
    assert store.memo() is store.memo()
    spec = store.add_connection("p", "pgvector", {"dsn": "postgresql://me@db/x", "table": "t"})
    with pytest.raises(InputError, match="needs the lab's encoder"):
        build_system(spec)


def test_evaluations_memoised_failures_retried_only_on_request():
    from rag_metrics.systems.evaluation import coverage, evaluate_systems

    b = _Counting()
    system = LiveSystem("c", b, ResultMemo())
    golden = GoldenSet(GOLDEN.queries, name="memo-test")
    (ev,) = evaluate_systems([("c", system)], golden)
    assert b.asked == ["alpha?", "beta?"] and ev.system_run.failed_ids == ["q2"]
    assert coverage(ev.system_run, golden) == {"questions": 2, "answered": 1, "failed": 1, "absent": 0,
                                                "unmatched_rows": 0}
    assert ev.result.mean("mrr") == 0.5  # q1 hits at rank 1, q2 failed counts 0
    evaluate_systems([("c", system)], golden)  # a rerun: nothing asked
    assert b.asked == ["alpha?", "beta?"]
    evaluate_systems([("c", system)], golden, retry_failed=True)
    assert b.asked == ["alpha?", "beta?", "beta?"]  # only the failed question
