"""Unit tests of the app's plain-Python support modules: golden editing, readouts, the retrieval memo,
fingerprints and the workspace."""
from __future__ import annotations

import subprocess
import sys
import threading

import pandas as pd
import pytest

from rag_metrics.authoring import golden_edit
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.insights import readouts
from rag_metrics.retrieval.memo import RetrievalMemo
from rag_metrics.types import Chunk, GoldenQuery, GoldenSet, Run
from rag_metrics.workspace.store import Workspace

G = GoldenSet((
    GoldenQuery("q1", "how big?", "factual", {"a#0": 3, "b#1": 1}, "2 GB"),
    GoldenQuery("q2", "capital of France?", "out_of_scope", {}, None),
))
KNOWN = ["a#0", "a#1", "b#0", "b#1"]


def test_support_modules_never_import_streamlit():
    code = ("import sys, rag_metrics.authoring.golden_edit, rag_metrics.insights.readouts, rag_metrics.retrieval.memo, "
            "rag_metrics.workspace.store; print('streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_table_round_trip():
    table = golden_edit.golden_to_table(G)
    assert list(table.columns) == list(golden_edit.TABLE_COLUMNS)
    assert table.loc[0, "relevant"] == ["a#0", "b#1"] and table.loc[0, "grades"] == "3|1"
    back, report = golden_edit.table_to_golden(table, KNOWN)
    assert report.ok and not report.problems
    assert back.fingerprint() == G.fingerprint()


def test_table_grade_count_mismatch_is_a_warning_not_a_loss():
    table = golden_edit.golden_to_table(G)
    table.at[0, "relevant"] = ["a#0"]  # one id removed, grades still "3|1"
    back, report = golden_edit.table_to_golden(table, KNOWN)
    assert report.ok and report.warnings
    assert dict(back.get("q1").relevant) == {"a#0": 3}
    table.at[0, "relevant"] = ["a#0", "b#1", "b#0"]  # one more id than grades
    back, report = golden_edit.table_to_golden(table, KNOWN)
    assert dict(back.get("q1").relevant) == {"a#0": 3, "b#1": 1, "b#0": 1}


def test_table_errors_block_and_unknown_ids_are_reported():
    table = golden_edit.golden_to_table(G)
    table.at[0, "grades"] = "x|1"
    _, report = golden_edit.table_to_golden(table, KNOWN)
    assert not report.ok
    table = golden_edit.golden_to_table(G)
    table.at[0, "relevant"] = ["zzz#0"]
    table.at[0, "grades"] = ""
    _, report = golden_edit.table_to_golden(table, KNOWN)
    assert any("not in the corpus" in p.message for p in report.errors)


def test_new_rows_get_stable_ids_and_empty_rows_are_skipped():
    table = pd.concat([golden_edit.golden_to_table(G), pd.DataFrame([
        {"id": None, "question": "new one?", "category": "factual", "relevant": ["a#1"], "grades": None,
         "expected_answer": None},
        {"id": None, "question": None, "category": None, "relevant": None, "grades": None, "expected_answer": None},
    ])], ignore_index=True)
    back, report = golden_edit.table_to_golden(table, KNOWN)
    assert report.ok and len(back) == 3 and back.queries[2].id.startswith("q-")


def test_upsert_labels_updates_or_appends():
    g = golden_edit.upsert_labels(G, "how big?", {"a#0": 0, "a#1": 2}, query_id="q1")
    assert dict(g.get("q1").relevant) == {"b#1": 1, "a#1": 2}
    g = golden_edit.upsert_labels(G, "a brand new question", {"b#0": 3})
    assert g.queries[-1].question == "a brand new question" and dict(g.queries[-1].relevant) == {"b#0": 3}
    g = golden_edit.upsert_labels(G, "capital of France?", {"a#0": 1}, query_id="q2", category="factual")
    assert g.get("q2").category == "factual"
    with pytest.raises(InputError, match="type a question"):
        golden_edit.upsert_labels(G, "  ", {})


@pytest.mark.parametrize("name,data,msg", [
    ("x.jsonl", b"{bad", "invalid JSON"),
    ("x.csv", b"question\n", "no query"),
    ("x.json", b"\xff\xfe", "not UTF-8"),
    ("x.jsonl", b'{"question": "q", "relevant": {"nope": 1}}\n', "not in the corpus"),
    ("x.qrels", b"q9 0 a#0 1\n", "not in the current golden set"),
    ("x.txt", b"", "empty"),
])
def test_import_rejections(name, data, msg):
    new, report = golden_edit.import_golden(data, name, G, KNOWN)
    assert new is None and not report.ok
    assert any(msg in p.message for p in report.errors), report.lines()


def test_import_size_cap():
    new, report = golden_edit.import_golden(b"x" * 100, "big.csv", G, KNOWN, max_bytes=10)
    assert new is None and "limit" in report.errors[0].message


def test_import_qrels_merges_labels_and_export_round_trips():
    new, report = golden_edit.import_golden(b"q1 0 a#1 2\n", "labels.qrels", G, KNOWN)
    assert report.ok and dict(new.get("q1").relevant) == {"a#1": 2} and new.get("q2") is not None
    for fmt in ("csv", "json", "jsonl"):
        text = golden_edit.export_golden(G, fmt)
        back, rep = golden_edit.import_golden(text.encode(), f"g.{fmt}", G, KNOWN)
        assert rep.ok and back.fingerprint() == G.fingerprint()
    assert golden_edit.export_golden(G, "qrels").splitlines() == ["q1 0 a#0 3", "q1 0 b#1 1"]


class CountingRetriever:
    """Returns a fixed ranking; counts the texts it was asked for."""

    def __init__(self):
        self.calls: list[str] = []

    def retrieve(self, queries, k=100, progress=None):
        self.calls.extend(queries.values())
        return Run.from_rankings({q: ["a#0", "b#1", "a#1"][:k] for q in queries})


def test_memo_retrieves_each_text_once():
    chunks = [Chunk(i, i.split("#")[0], "t", 0, 1) for i in KNOWN]
    r = CountingRetriever()
    memo = RetrievalMemo(r, chunks, depth=100)
    assert memo.depth == 4
    run = memo.run_for(G)
    assert sorted(r.calls) == sorted(q.question for q in G)
    memo.run_for(G)
    g2 = GoldenSet((*G.queries, GoldenQuery("q3", "how big?", "", {"a#1": 1})))
    res = evaluate(g2, memo.run_for(g2))
    assert len(r.calls) == 2  # q3 repeats q1's text: nothing new retrieved
    assert res.values("mrr", 3).tolist() == [1.0, 0.0, 1 / 3]
    assert len(run) == 6


def test_views_data_shaping():
    chunks = [Chunk(i, i.split("#")[0], f"text of {i}", 0, 1) for i in KNOWN]
    memo = RetrievalMemo(CountingRetriever(), chunks)
    res = evaluate(G, memo.run_for(G))
    h = readouts.hit_rate_table(res, (1, 3))
    assert h["hit_rate"].tolist() == [1.0, 1.0] and h["n"].tolist() == [1, 1]
    hist = readouts.first_rank_histogram(res)
    assert hist.to_dict("records") == [{"rank_label": "1", "rank": 1, "count": 1}]
    assert readouts.mrr_reading(1.0).startswith("Perfect") and readouts.mrr_reading(0.1).startswith("Poor")
    sweep = readouts.abstention_sweep(res, n=5)
    assert len(sweep) == 5 and sweep["oos_refused_rate"].between(0, 1).all()
    f = readouts.failures_with_text(res, 1, {c.id: c.text for c in chunks})
    assert f.empty
    live = readouts.live_results(memo, "how big?", 2, {c.id: c.text for c in chunks},
                                 {c.id: c.doc_id for c in chunks}, {"a#0": 3})
    assert live["relevant"].tolist() == [True, False] and live["text"][0] == "text of a#0"
    table = golden_edit.chunk_table(chunks, G)
    assert table.set_index("id")["labelled"].to_dict() == {"a#0": 1, "a#1": 0, "b#0": 0, "b#1": 1}
    e = readouts.explanation_table(res.explain("q1", 3), ["mrr", "precision"])
    assert e["metric"].tolist() == ["mrr", "precision"] and e["value"].tolist() == [1.0, 2 / 3]


# ---- workspace --------------------------------------------------------------------------------
def test_workspace_save_load_and_conflict(tmp_path):
    ws = Workspace("sample_corpus", tmp_path)
    assert ws.load() is None
    r = ws.save(G, None, session="A")
    assert r.saved and r.version == ws.version()
    golden, report, version = ws.load()
    assert report.ok and version == r.version and golden.ids == G.ids
    # session B loaded the same version, A saves again, then B saves: conflict, kept beside
    g_a = golden_edit.upsert_labels(G, "how big?", {"a#1": 1}, query_id="q1")
    r_a = ws.save(g_a, version, session="A")
    assert r_a.saved
    g_b = golden_edit.upsert_labels(G, "how big?", {"b#0": 1}, query_id="q1")
    r_b = ws.save(g_b, version, session="B")
    assert not r_b.saved and r_b.conflict and r_b.version == r_a.version
    assert "b#0" in r_b.conflict_path.read_text() and "b#0" not in ws.path.read_text()
    # saving identical content to what is on disk is not a conflict
    assert ws.save(g_a, version, session="C").saved
    # force overwrites
    assert ws.save(g_b, version, session="B", force=True).saved and "b#0" in ws.path.read_text()


def test_workspace_concurrent_saves_never_corrupt(tmp_path):
    ws = Workspace("c", tmp_path)
    sets = [golden_edit.upsert_labels(G, f"question {n}", {"a#0": 1}) for n in range(8)]

    def save(g):
        for _ in range(10):
            ws.save(g, None, session=str(id(g)), force=True)

    threads = [threading.Thread(target=save, args=(g,)) for g in sets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    golden, report, _ = ws.load()
    assert report.ok and len(golden) == 3
    assert not list(tmp_path.rglob("*.tmp"))


def test_workspace_settings_and_env(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_METRICS_WORKSPACE", str(tmp_path / "w"))
    ws = Workspace("my corpus/../x")
    assert ws.path.is_relative_to(tmp_path / "w")
    ws.save_settings(chunk_size=800)
    ws.save_settings(chunk_overlap=50)
    assert ws.load_settings() == {"chunk_size": 800, "chunk_overlap": 50}
    ws.settings_path.write_text("not json")
    assert ws.load_settings() == {}


def test_suggest_threshold_separates_in_and_out_of_scope():
    run = Run.from_dict({"q1": {"a#0": 0.9, "b#0": 0.5}, "q2": {"b#0": 0.2}})
    res = evaluate(G, run)
    t = readouts.suggest_threshold(res)
    assert 0.2 < t <= 0.9
    a = res.abstention(t)
    assert a["out_of_scope_refused"] == 1 and a["in_scope_refused"] == 0
    only_in = GoldenSet(G.queries[:1])
    assert readouts.suggest_threshold(evaluate(only_in, run)) is None


@pytest.mark.parametrize("k", [1, 3, 10])
def test_targets_are_checked_at_the_lessons_cutoffs_whatever_the_k(k):
    # q1 ranks a#0, b#1 (both relevant), a#1: MRR = 1; P@5 = 2/5 (the divisor is 5, the lesson's K)
    chunks = [Chunk(i, i.split("#")[0], "t", 0, 1) for i in KNOWN]
    res = evaluate(G, RetrievalMemo(CountingRetriever(), chunks).run_for(G))
    t = readouts.target_checks(res, k)
    assert t["metric"].tolist() == ["mrr", "precision"] and t["k"].tolist() == [pd.NA, 5]
    assert t["value"].tolist() == pytest.approx([res.mean("mrr"), res.mean("precision", 5)])
    assert t["met"].tolist() == [v > 0.7 if m == "mrr" else v > 0.6 for m, v in zip(t["metric"], t["value"])]
    assert readouts.targets_caption(k) == "MRR > 0.7 and Precision@5 > 0.6"


@pytest.mark.parametrize(("mrr", "reading"), [
    (1.0, "Perfect"), (0.9999, "Good"), (0.5, "Good"), (0.4999, "Acceptable"), (1 / 3, "Acceptable"),
    (0.33, "Acceptable"), (0.3299, "Weak"), (0.25, "Weak"), (0.2499, "Poor"), (0.1, "Poor"),
    (0.0999, "Very poor"), (0.0, "Very poor"),
])
def test_mrr_reading_follows_the_lessons_table_at_each_boundary(mrr, reading):
    assert readouts.mrr_reading(mrr).split(":")[0] == reading


def test_mrr_reading_table_is_the_lessons_table():
    rows = readouts.mrr_reading_rows()
    assert rows["MRR"].tolist() == ["1.0", "0.5", "0.33", "0.25", "0.1"]
    assert [r.split(":")[0] for r in rows["Reading"]] == ["Perfect", "Good", "Acceptable", "Weak", "Poor"]
    # every row's own value reads as that row
    assert [readouts.mrr_reading(v) for v, _ in readouts.MRR_READING_TABLE] == rows["Reading"].tolist()
    assert readouts.mrr_reading(float("nan")).startswith("No in-scope")


def test_fingerprints_change_with_content_only():
    from rag_metrics.retrieval.chunking import chunk_corpus, chunks_fingerprint
    from rag_metrics.types import Corpus, Document

    assert G.fingerprint() == GoldenSet(G.queries, name="other").fingerprint()
    regraded = GoldenSet((GoldenQuery("q1", "how big?", "factual", {"a#0": 2, "b#1": 1}, "2 GB"), G.queries[1]))
    reordered = GoldenSet((GoldenQuery("q1", "how big?", "factual", {"b#1": 1, "a#0": 3}, "2 GB"), G.queries[1]))
    assert len({G.fingerprint(), regraded.fingerprint(), reordered.fingerprint()}) == 3
    no_answer = GoldenSet((GoldenQuery("q1", "how big?", "factual", {"a#0": 3, "b#1": 1}, ""), G.queries[1]))
    assert GoldenSet((G.queries[0], GoldenQuery("q2", "capital of France?", "out_of_scope", {}, ""))).fingerprint() \
        == G.fingerprint() != no_answer.fingerprint()
    c1 = Corpus((Document("a", "alpha beta"), Document("b", "gamma")), name="x")
    c2 = Corpus((Document("a", "alpha beta", title="T"), Document("b", "gamma")), name="y")
    c3 = Corpus((Document("a", "alpha bet"), Document("b", "agamma")))
    assert c1.fingerprint() == c2.fingerprint() != c3.fingerprint()
    assert len(c1.fingerprint()) == 16
    assert chunks_fingerprint(chunk_corpus(c1, 100, 10)) == chunks_fingerprint(chunk_corpus(c2, 100, 10))
    assert chunks_fingerprint(chunk_corpus(c1, 100, 10)) != chunks_fingerprint(chunk_corpus(c3, 100, 10))
