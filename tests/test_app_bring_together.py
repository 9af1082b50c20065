"""Bring your system (AppTest): files dropped together belong together (issue 47).  Qrels dropped with a
run are that run's judgments, scored as ``rag-metrics evaluate --qrels Q --run R`` scores them (before: the
qrels became "a golden set" and the run was scored against the sample's 64 questions, all 0.000); a corpus
dropped with a log is the log's corpus, and the log's questions start its golden set."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_helpers import no_exception, sample_golden

ROOT = Path(__file__).resolve().parents[1]
PAGE = "pages/bring_your_system.py"
RANX = ROOT.parent / "shared" / "real-artifacts" / "ranx"


@pytest.fixture
def page(app_env):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page(PAGE).run()
    no_exception(at)
    return at


def _bring(page, files, name="mine"):
    page.file_uploader(key="bring_files").set_value(files)
    page.run()
    no_exception(page)
    page.text_input(key="bring_name").input(name)
    next(b for b in page.button if b.label == "Bring in and evaluate").click().run()
    page.run()
    no_exception(page)


@pytest.mark.skipif(not RANX.is_dir(), reason="needs ../shared/real-artifacts")
def test_qrels_dropped_with_a_run_are_its_judgments_as_on_the_cli(page):
    from rag_metrics.evaluation import evaluate
    from rag_metrics.io.trec import read_qrels, read_run

    _bring(page, [("qrels.parquet", (RANX / "qrels.parquet").read_bytes(), "application/octet-stream"),
                  ("run.parquet", (RANX / "run.parquet").read_bytes(), "application/octet-stream")])
    read = " ".join(s.value.replace("\\", "") for s in page.success)
    assert "judgments for run.parquet" in read and "run scored against qrels.parquet" in read
    cards = {m.label: m.value for m in page.metric if "@" in m.label}
    golden = read_qrels(RANX / "qrels.parquet")  # what the CLI reads for --qrels / --run
    run, _ = read_run(RANX / "run.parquet")
    res = evaluate(golden, run)
    k = page.session_state["k"]
    assert cards[f"MRR@{k}"] == f"{res.mean('mrr', k):.3f}" and cards[f"NDCG@{k}"] == f"{res.mean('ndcg', k):.3f}"
    assert cards[f"Precision@{k}"] == f"{res.mean('precision', k):.3f}" != "0.000"
    assert any("against **qrels.parquet**: 2 queries" in m.value.replace("\\", "") for m in page.markdown)
    assert len(page.session_state["_golden"]["sample_corpus"].golden) == len(sample_golden())  # untouched


def test_a_run_that_answers_none_of_the_qrels_is_no_verdict(page):
    qrels = b"q1 0 d1 1\nq2 0 d2 1\n"
    run = b"x1 Q0 d1 1 1.0 t\nx2 Q0 d2 1 1.0 t\n"
    _bring(page, [("qrels.txt", qrels, "text/plain"), ("run.trec", run, "text/plain")])
    assert not [m for m in page.metric if "@" in m.label]
    errors = [e.value.replace("\\", "") for e in page.error]
    assert any("answers none of the 2 queries of qrels.txt: no verdict" in e for e in errors), errors


def test_a_corpus_dropped_with_a_log_is_the_logs_corpus(page):
    docs = [{"id": f"d{i}", "title": f"Doc {i}", "text": f"Document {i} is about topic number {i}. " * 8}
            for i in range(4)]
    corpus = "".join(json.dumps(d) + "\n" for d in docs).encode()
    log = "".join(json.dumps({"question": f"What is topic {i}?", "contexts": [docs[i]["text"]],
                              "ground_truth": f"topic {i}"}) + "\n" for i in range(4)).encode()
    _bring(page, [("books.jsonl", corpus, "application/json"), ("log.jsonl", log, "application/json")])
    assert page.session_state["corpus"] == "books"
    golden = page.session_state["_golden"]["books"].golden
    assert [q.question for q in golden] == [f"What is topic {i}?" for i in range(4)]  # before: 0 questions
    captions = " ".join(c.value.replace("\\", "") for c in page.caption)
    assert "4 log rows matched to golden questions" in captions
    assert "4 fuzzy" in captions or "4 exact" in captions  # contexts placed in the dropped corpus
