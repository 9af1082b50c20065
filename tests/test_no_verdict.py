"""Issue 47, "one rule for no verdict" (:mod:`rag_metrics.verdict`) in the library and the CLI.

Each case exited 0 with a table of 0.0000 before the rule: nothing matched, a run answering only
out-of-scope questions, a trace export with no retrieved document, and a ragas CSV of whole
documents at ``--level document`` (12 of 12 contexts unmatched).  Now the CLI prints the reason as its
last line, prints no table of means, and exits 1 (2 when the reader refuses the file outright).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_metrics import GoldenSet, Run, evaluate
from rag_metrics.cli import main
from rag_metrics.metrics.evidence import LocateReport
from rag_metrics.types import GoldenQuery
from rag_metrics.verdict import no_verdict

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "sample_corpus" / "golden.jsonl"
DOCS = ROOT / "sample_corpus" / "docs"


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _last(text: str) -> str:
    return text.strip().splitlines()[-1]


# ---- the rule, case by case ------------------------------------------------------------------------------
GOLD = GoldenSet([GoldenQuery("q1", "one", None, {"a": 1}), GoldenQuery("q2", "two", None, {"b": 1}),
                  GoldenQuery("q3", "capital of France?", "out_of_scope", {})])


def test_a_run_of_other_questions_is_nothing_matched():
    res = evaluate(GOLD, Run.from_rankings({"x1": ["a"], "x2": ["b"]}))
    assert res.no_verdict is not None and res.no_verdict.kind == "nothing_matched" and not res.comparable
    assert "its 2 question(s) match none of the 3 golden questions" in res.no_verdict.line()


def test_unmatched_upload_rows_count_as_nothing_matched():
    res = evaluate(GOLD, Run.from_rankings({}), unmatched_rows=4)
    assert res.no_verdict.kind == "nothing_matched" and "its 4 question(s)" in res.no_verdict.what


def test_an_empty_run_is_no_retrieval():
    res = evaluate(GOLD, Run.from_rankings({"q1": [], "q2": []}))
    assert res.no_verdict.kind == "no_retrieval"
    assert res.no_verdict.line().startswith("No verdict: the system's results hold no retrieved context")


def test_results_only_for_out_of_scope_questions_answer_none():
    res = evaluate(GOLD, Run.from_rankings({"q3": ["a"]}))
    assert res.no_verdict.kind == "none_answered" and "none of the 2 golden question(s)" in res.no_verdict.what


def test_most_contexts_unlocated_is_the_evidence_rule_in_the_same_place():
    res = evaluate(GOLD, Run.from_rankings({"q1": ["a"], "q2": ["b"]}),
                   located=LocateReport(chunk=1, unlocated_texts=2))
    assert res.no_verdict.kind == "unlocated"
    assert res.no_verdict.line() == res.located.line()  # "Not comparable: ...": one sentence everywhere


def test_a_partial_run_is_a_verdict():
    res = evaluate(GOLD, Run.from_rankings({"q1": ["a"]}), unmatched_rows=10)
    assert no_verdict(res) is None and res.comparable and res.mean("hit_rate", 1) == 0.5


# ---- the CLI: last line, exit code, no table -----------------------------------------------------------
def test_cli_log_whose_questions_match_nothing(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text(_jsonl([{"question": "Who wrote Hamlet?", "contexts": [{"id": "x1", "text": "Shakespeare."}]},
                           {"question": "Tallest mountain?", "contexts": [{"id": "x2", "text": "Everest."}]}]))
    code = main(["evaluate", "--qrels", str(GOLDEN), "--run", str(log)])
    out = capsys.readouterr().out
    assert code == 1
    assert _last(out).startswith("log: NO VERDICT: no golden question is in the system's results")
    assert "0.0000" not in out  # no table of means computed from nothing


def test_cli_log_answering_only_an_out_of_scope_question(tmp_path, capsys):
    oos = next(json.loads(x) for x in GOLDEN.read_text().splitlines() if '"out_of_scope"' in x)
    log = tmp_path / "log.jsonl"
    log.write_text(_jsonl([{"question": oos["question"], "contexts": [{"id": "x1", "text": "nothing"}]}]))
    assert main(["evaluate", "--qrels", str(GOLDEN), "--run", str(log), "--format", "json"]) == 1
    cap = capsys.readouterr()
    assert json.loads(cap.out)["no_verdict"]["kind"] == "none_answered"
    assert "NO VERDICT" in _last(cap.err)


def test_cli_trace_export_with_no_retrieved_document(tmp_path, capsys):
    q = json.loads(GOLDEN.read_text().splitlines()[0])["question"]
    span = {"name": "retrieve", "context": {"trace_id": "t1", "span_id": "s1"}, "parent_id": None,
            "span_kind": "RETRIEVER", "attributes": {"input": {"value": q}, "retrieval": {"documents": []}}}
    path = tmp_path / "spans.jsonl"
    path.write_text(_jsonl([span]))
    code = main(["evaluate", "--qrels", str(GOLDEN), "--run", str(path)])
    cap = capsys.readouterr()
    assert code in (1, 2)  # no verdict, or the reader refuses the file: never a pass
    assert "retriev" in _last(cap.out + cap.err).lower() and "0.0000" not in cap.out


def test_cli_compare_and_gate_with_a_run_that_matches_nothing(tmp_path, capsys):
    good = tmp_path / "good.trec"
    good.write_text("q001 Q0 plans-and-pricing#0 1 1.0 good\n")
    other = tmp_path / "other.trec"
    other.write_text("zz9 Q0 plans-and-pricing#0 1 1.0 other\n")
    assert main(["compare", "--qrels", str(GOLDEN), "--run", str(good), "--run", str(other)]) == 1
    out = capsys.readouterr().out
    assert _last(out).startswith("other.trec: NO VERDICT") and "delta" not in out
    assert main(["gate", "--qrels", str(GOLDEN), "--run", str(other), "--baseline", str(good)]) == 1
    assert _last(capsys.readouterr().out).startswith("other: NO VERDICT")


# ---- document level: whole-document contexts are located in their documents --------------------------------
def _doc_level_files(tmp_path: Path, corpus: Path) -> tuple[Path, Path]:
    """A ragas-style CSV whose contexts are whole sample documents, and a document-level golden set."""
    import csv

    names = ["refund-policy", "plans-and-pricing", "data-export"]
    texts = {n: (DOCS / f"{n}.md").read_text(encoding="utf-8") for n in names}
    run = tmp_path / "ragas.csv"
    with run.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["user_input", "retrieved_contexts", "response"])
        for i, n in enumerate(names):
            others = [texts[m] for m in names if m != n]
            w.writerow([f"question {i} about {n}?", repr([texts[n], *others]), "an answer"])
    gold = tmp_path / "golden_docs.jsonl"
    gold.write_text(_jsonl([{"id": f"d{i}", "question": f"question {i} about {n}?", "relevant": {n: 1}}
                            for i, n in enumerate(names)]))
    return run, gold


def test_document_level_locates_whole_document_contexts(tmp_path, capsys):
    run, gold = _doc_level_files(tmp_path, DOCS)
    code = main(["evaluate", "--qrels", str(gold), "--run", str(run), "--corpus", str(DOCS), "--level", "document",
                 "--metrics", "hit_rate,mrr", "--k", "1", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["metrics"] == {"hit_rate@1": 1.0, "mrr@1": 1.0}
    assert doc["contexts"]["unlocated"] == 0 and doc["contexts"]["total"] == 9


def test_document_level_against_another_corpus_is_not_comparable(tmp_path, capsys):
    run, gold = _doc_level_files(tmp_path, DOCS)
    other = tmp_path / "other"
    other.mkdir()
    (other / "treasury.md").write_text("Payments are processed in euros by the treasury team of another company.\n")
    code = main(["evaluate", "--qrels", str(gold), "--run", str(run), "--corpus", str(other), "--level", "document"])
    out = capsys.readouterr().out
    assert code == 1
    assert _last(out).startswith("ragas: NOT COMPARABLE: 9 of 9 contexts (100%) could not be located")


FILLER = " ".join(f"Unrelated sentence {i} about the weather and the garden." for i in range(40))


@pytest.mark.parametrize("before, after", [("Refund policy\n\n", "\n\nSource: the help centre."),
                                           ("", f" {FILLER}"), (f"{FILLER} ", f" {FILLER}")])
def test_a_context_holding_a_whole_document_is_that_document(before, after):
    """Before: a short document amid a long context was unlocated (too few of the context's word
    trigrams are the document's for the fuzzy search)."""
    from rag_metrics.metrics.evidence import CorpusIndex

    text = "Refunds are issued within 14 days of purchase for annual plans, to the original payment method."
    index = CorpusIndex({"refund": text, "other": "A different document about something else entirely, in words."})
    loc = index.locate(before + text + after)
    assert (loc.doc, loc.start, loc.end) == ("refund", 0, len(text))
    assert not index.locate(FILLER).located


def test_cli_only_answered_and_nothing_matched_is_no_verdict_not_bad_input(tmp_path, capsys):
    """Before: exit 2 "no golden query is in the run"; the same case without --only-answered exited 0.
    Now one rule for both: exit 1, the reason as the last line."""
    other = tmp_path / "other.trec"
    other.write_text("zz9 Q0 plans-and-pricing#0 1 1.0 other\n")
    for extra in ([], ["--only-answered"]):
        assert main(["evaluate", "--qrels", str(GOLDEN), "--run", str(other), *extra]) == 1
        assert _last(capsys.readouterr().out).startswith("other: NO VERDICT: no golden question is in the")


def test_the_issue_ragas_csv_at_document_level_with_its_books(tmp_path, capsys):
    """The issue's case: the Elastic blog's ragas CSV (contexts "{title} by {author}: {description}")
    with a corpus of its books (one document per book description) and a document-level golden set.
    Before: 12 of 12 contexts unmatched, every metric 0.0, exit 0."""
    import ast
    import csv

    from tests.test_evidence_scenario import ARTIFACTS, RAGAS_CSV

    books_json = ARTIFACTS / "ragas" / "elasticsearch_books.json"
    if not (RAGAS_CSV.is_file() and books_json.is_file()):
        pytest.skip("shared real artifacts not present")
    books = json.loads(books_json.read_text(encoding="utf-8"))
    corpus = tmp_path / "books.jsonl"
    corpus.write_text(_jsonl([{"id": f"book-{i:03d}", "text": b["book_description"]} for i, b in enumerate(books)]))
    by_title = {b["book_title"]: f"book-{i:03d}" for i, b in enumerate(books)}
    with RAGAS_CSV.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    gold = tmp_path / "golden.jsonl"
    gold.write_text(_jsonl([{"id": f"q{i}", "question": r["user_input"],
                             "relevant": {by_title[ast.literal_eval(r["retrieved_contexts"])[0].split(" by ")[0]]: 1}}
                            for i, r in enumerate(rows)]))
    code = main(["evaluate", "--qrels", str(gold), "--run", str(RAGAS_CSV), "--corpus", str(corpus),
                 "--level", "document", "--metrics", "hit_rate", "--k", "1", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["metrics"]["hit_rate@1"] == 1.0
    assert (doc["contexts"]["total"], doc["contexts"]["unlocated"]) == (12, 0)


def test_cli_no_verdict_is_never_saved_as_a_baseline(tmp_path, capsys):
    other = tmp_path / "other.trec"
    other.write_text("zz9 Q0 plans-and-pricing#0 1 1.0 other\n")
    saved = tmp_path / "base.json"
    assert main(["evaluate", "--qrels", str(GOLDEN), "--run", str(other), "--save-run", str(saved)]) == 1
    assert not saved.exists() and "--save-run / --baseline skipped" in capsys.readouterr().err


def test_app_systems_at_document_level_place_whole_document_contexts():
    """The app's path (evaluate_systems with the lab's chunks): a RAG log whose contexts are whole
    sample documents, at document level.  Before: 100% unmatched, "not comparable", hit rate 0."""
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.metrics.options import EvalOptions
    from rag_metrics.retrieval.chunking import chunk_corpus
    from rag_metrics.systems.evaluation import evaluate_systems
    from rag_metrics.systems.uploads import parse_upload

    chunks = chunk_corpus(load_corpus(DOCS))
    names = ["refund-policy", "plans-and-pricing"]
    texts = {n: (DOCS / f"{n}.md").read_text(encoding="utf-8") for n in names}
    log = _jsonl([{"question": f"question about {n}?", "contexts": [texts[n], texts[m]]}
                  for n, m in zip(names, names[::-1])])
    system, rep = parse_upload(log.encode(), "whole_docs.jsonl", chunks)
    assert system is not None, rep.lines()
    golden = GoldenSet([GoldenQuery(f"d{i}", f"question about {n}?", None, {n: 1}) for i, n in enumerate(names)])
    (ev,) = evaluate_systems([("whole docs", system)], golden, EvalOptions(level="document"), 10,
                             chunk_to_doc={c.id: c.doc_id for c in chunks}, chunks=chunks)
    assert ev.result.comparable and ev.result.located.unlocated == 0
    assert ev.result.mean("hit_rate", 1) == 1.0


def test_cli_gate_json_names_the_no_verdict(tmp_path, capsys):
    good = tmp_path / "good.trec"
    good.write_text("q001 Q0 plans-and-pricing#0 1 1.0 good\n")
    other = tmp_path / "other.trec"
    other.write_text("zz9 Q0 plans-and-pricing#0 1 1.0 other\n")
    assert main(["gate", "--qrels", str(GOLDEN), "--run", str(good), "--baseline", str(other), "--format", "json"]) == 1
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["verdict"] == "fail" and doc["no_verdict"][0].startswith("other: NO VERDICT")
    assert _last(cap.err).startswith("other: NO VERDICT")


def test_cli_unused_log_rows_are_a_few_examples_then_counted(tmp_path, capsys):
    """Ten rows that match no golden question: three examples and one counted line, not ten lines."""
    log = tmp_path / "log.jsonl"
    log.write_text(_jsonl([{"question": f"Question {i} of another set?", "contexts": [{"id": f"x{i}", "text": "t"}]}
                           for i in range(10)]))
    assert main(["evaluate", "--qrels", str(GOLDEN), "--run", str(log)]) == 1
    err = capsys.readouterr().err
    assert err.count("not used: no golden question") == 3
    assert "7 more rows not used, like the ones above (10 in all)" in err
