"""The "Bring your system" page (AppTest): files dropped, one line per file of what was read (or why
not), one button brings a gzip-compressed RAG log in as a system, the verdict cards equal the library's
numbers for the same file, labels to confirm link to the Golden set editor."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from app_helpers import no_exception, sample_golden
from rag_metrics.evaluation import evaluate
from rag_metrics.systems.uploads import parse_upload

ROOT = Path(__file__).resolve().parents[1]
PAGE = "pages/bring_your_system.py"


def _chunks():
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval.chunking import chunk_corpus

    return chunk_corpus(load_corpus(ROOT / "sample_corpus" / "docs"))


def _home_made_log(chunks) -> bytes:
    """A home-made log: question, retrieved[{rank, chunk_id, score, text}], raw_output."""
    rows = []
    for n, q in enumerate(sample_golden()):
        ids = list(q.relevant)[:1] + [chunks[(7 * n) % len(chunks)].id]
        ids = ids[::-1] if n % 2 else ids
        rows.append(json.dumps({"question": q.question, "raw_output": "...",
                                "retrieved": [{"rank": r + 1, "chunk_id": i, "score": 1 - r / 10, "text": "t"}
                                              for r, i in enumerate(ids)]}))
    return ("\n".join(rows) + "\n").encode()


@pytest.fixture
def page(app_env):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page(PAGE).run()
    no_exception(at)
    return at


def test_page_is_in_the_menu_and_opens(page):
    from ui.shell import PAGES

    assert any(p == PAGE for section in PAGES.values() for p, _, _ in section)
    assert page.title[0].value == "Bring your system"
    assert not page.error
    assert any("Bring in a run" in c.value for c in page.caption)


def test_from_files_to_a_verdict(page):
    chunks = _chunks()
    log = gzip.compress(_home_made_log(chunks))
    page.file_uploader(key="bring_files").set_value([("traces.jsonl.gz", log, "application/gzip"),
                                                     ("books.json", b'[{"book_title": "x"}]', "application/json")])
    page.run()
    no_exception(page)
    read = [s.value.replace("\\", "") for s in page.success]  # the page escapes markdown
    assert len(read) == 1 and read[0].startswith("traces.jsonl.gz: a gzip-compressed file holding a RAG log")
    assert "system to evaluate" in read[0]
    (refused,) = [e.value.replace("\\", "") for e in page.error]
    assert refused.startswith("books.json: looks like") and "book_title" in refused
    page.text_input(key="bring_name").input("my app")  # inside the form: sent with the submit
    submit = next(b for b in page.button if b.label == "Bring in and evaluate")
    submit.click().run()
    no_exception(page)
    assert page.session_state["bring_system"] == "my app"
    cards = {m.label: m.value for m in page.metric if "@" in m.label}
    assert cards, [m.label for m in page.metric]
    # the library's numbers for the same bytes: the same reader, the same matching, the same metrics
    system, report = parse_upload(log, "traces.jsonl.gz", chunks)
    assert report.ok and system is not None
    golden = sample_golden()
    res = evaluate(golden, system.rank(golden.questions(), 100).run)
    assert cards["MRR@5"] == f"{res.mean('mrr', 5):.3f}"
    assert cards["Recall@5"] == f"{res.mean('recall', 5):.3f}"


def test_labels_to_confirm_link_to_the_golden_set_editor(page):
    from app_helpers import set_app_golden
    from rag_metrics.types import GoldenQuery

    g = sample_golden()
    set_app_golden(page, [GoldenQuery(q.id, q.question, q.category, {} if n < 3 else q.relevant)
                          for n, q in enumerate(g)])
    page.run()
    no_exception(page)
    assert any(f"3 of {len(g)} golden questions have no relevant chunk yet" in i.value for i in page.info)


def test_a_llamaindex_dataset_brings_corpus_and_golden_set_and_a_run_its_verdict(page):
    """EmbeddingQAFinetuneDataset: the corpus (one document per node) and the golden set come in together;
    a ranx-style JSON run of node ids is then the system, judged at document level."""
    nodes = {f"n{i}": f"Node {i} talks about topic {i} and nothing else, at some length." for i in range(6)}
    queries = {f"q{i}": f"What does node {i} say?" for i in range(6)}
    dataset = {"queries": queries, "corpus": nodes, "relevant_docs": {q: [f"n{i}"] for i, q in enumerate(queries)},
               "mode": "text"}
    run = {q: {f"n{i}": 2.0, f"n{(i + 1) % 6}": 1.0} if i % 2 else {f"n{(i + 1) % 6}": 2.0, f"n{i}": 1.0}
           for i, q in enumerate(queries)}
    page.file_uploader(key="bring_files").set_value([("val_dataset.json", json.dumps(dataset).encode(),
                                                      "application/json"),
                                                     ("run.json", json.dumps(run).encode(), "application/json")])
    page.run()
    no_exception(page)
    read = " ".join(s.value.replace("\\", "") for s in page.success)
    assert "6 questions (6 relevant ids) and a corpus of 6 nodes" in read and "golden set and corpus" in read
    page.text_input(key="bring_name").input("my retriever")
    next(b for b in page.button if b.label == "Bring in and evaluate").click().run()
    no_exception(page)
    assert page.session_state["corpus"] == "val_dataset"  # the new corpus is selected, then the rest followed
    page.run()  # and the verdict stays on the next run
    no_exception(page)
    assert page.session_state["bring_system"] == "my retriever"
    golden = page.session_state["_golden"]["val_dataset"].golden
    assert len(golden) == 6 and golden.get("q1").relevant == {"n1": 1}
    cards = {m.label: m.value for m in page.metric if "@" in m.label}
    assert cards["MRR@5"] == f"{(3 * 1 + 3 * 0.5) / 6:.3f}"  # odd queries: rank 1; even: rank 2


def test_history_says_what_another_tools_file_is(page):
    """History takes saved runs only; a ranx run (gzip-compressed here) is named, with the way to bring it in."""
    page.switch_page("pages/history.py").run()
    no_exception(page)
    run = gzip.compress(json.dumps({"q1": {"d1": 0.5, "d2": 0.25}}).encode())
    page.file_uploader(key="history_upload").set_value(("run.json.gz", run, "application/gzip")).run()
    no_exception(page)
    msg = " ".join(e.value for e in page.error).replace("\\", "")
    assert "run.json.gz: looks like a gzip-compressed file holding a JSON run" in msg and "Bring your system" in msg
