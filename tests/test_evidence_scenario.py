"""Issue 28's scenarios, end to end in the library and the CLI.

- A small RAG app that chunks by markdown section logs the sections it retrieved: judged by lab
  chunk ids it scored low; judged on evidence it gets the verdict of the same retrieval logged
  with the lab's chunk texts.
- A ragas results CSV whose contexts are whole documents (../shared/real-artifacts, by path):
  against another corpus it is "not comparable: your corpus differs"; with its own corpus and
  evidence proposed from its reference answers, it is judged.
- A ragas-style set (question + ground_truth, no ids) is never silently "out of scope": the CLI
  points to --propose-evidence, and proposals are not judged until reviewed.
"""
from __future__ import annotations

import ast
import csv
import json
import os
import re
from functools import cache
from pathlib import Path

import pytest

from rag_metrics.authoring.evidence_proposals import propose_evidence, review, with_chunk_labels
from rag_metrics.cli import main
from rag_metrics.io.golden import load_golden, save_golden
from rag_metrics.io.raglog import parse_rag_log
from rag_metrics.metrics.evidence import CorpusIndex, EvidenceJudge, held_grade, query_passages
from rag_metrics.systems.evaluation import evaluate_systems
from rag_metrics.systems.uploads import RagLogSystem
from rag_metrics.types import GoldenQuery, GoldenSet
from tests.test_evidence import sample, sections

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("RAG_METRICS_REAL_ARTIFACTS") or ROOT.parent / "shared" / "real-artifacts")
if not ARTIFACTS.is_dir():  # a worktree beside the main checkout
    ARTIFACTS = Path("/work/shared/real-artifacts")
RAGAS_CSV = ARTIFACTS / "ragas" / "elasticsearch_ragas_evaluation.csv"
RAGAS_TESTSET = ARTIFACTS / "ragas" / "aimakerspace_testset_v01.csv"
needs_artifacts = pytest.mark.skipif(not RAGAS_CSV.is_file(), reason="shared real artifacts not present")


# ---- the markdown-section RAG app -------------------------------------------------------------------
@cache
def section_scenario():
    """11 in-scope sample questions; each retrieval holds 3 lab chunks (the best labelled one at rank
    1, 2 or 3 for 10 questions, none for the 11th; distractors from documents the question has no
    label in), logged once as the chunks' texts and once as the markdown sections holding them."""
    corpus, chunks, golden, _ = sample()
    secs = {d.id: sections(d.text) for d in corpus}

    def section_of(c):
        return max(secs[c.doc_id], key=lambda ab: min(ab[1], c.end) - max(ab[0], c.start))

    qs = [q for q in golden.queries if q.in_scope][:11]
    rows_chunks, rows_sections = [], []
    for i, q in enumerate(qs):
        labelled = {c.split("#")[0] for c in q.relevant}
        rel = sorted((c for c in chunks if q.relevant.get(c.id, 0) > 0), key=lambda c: -q.relevant[c.id])
        others = [c for c in chunks if c.doc_id not in labelled]
        picks = [others[(7 * i + 13 * j) % len(others)] for j in range(3)]
        if i < 10:
            picks = picks[:2]
            picks.insert(i % 3, rel[0])
        rows_chunks.append({"question": q.question, "contexts": [c.text for c in picks]})
        rows_sections.append({"question": q.question,
                              "contexts": [corpus.get(c.doc_id).text[slice(*section_of(c))] for c in picks]})
    return GoldenSet(tuple(qs)), rows_chunks, rows_sections


def _jsonl(rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _system(rows, name):
    _, chunks, _, _ = sample()
    log, report = parse_rag_log(_jsonl(rows), f"{name}.jsonl")
    assert report.ok
    return RagLogSystem(log, chunks, name=name)


def test_section_chunked_app_gets_the_verdict_of_the_lab_chunk_log():
    _, chunks, _, _ = sample()
    golden, rows_chunks, rows_sections = section_scenario()
    by_chunks = evaluate_systems([("chunks", _system(rows_chunks, "chunks"))], golden, depth=10, chunks=chunks)[0]
    # before: the sections judged by lab chunk ids (matched by text; most match no chunk)
    before = evaluate_systems([("sections", _system(rows_sections, "sections"))], golden, depth=10)[0]
    after = evaluate_systems([("sections", _system(rows_sections, "sections"))], golden, depth=10, chunks=chunks)[0]
    assert by_chunks.result.mean("hit_rate", 3) == pytest.approx(10 / 11)  # 0.909
    assert before.result.mean("hit_rate", 3) == pytest.approx(2 / 11)  # 0.182: the quiet wrong number
    assert before.system_run.context_match.unmatched == 27  # of 33 contexts
    # ... which is no longer quiet: the result says how many contexts were judged by default
    assert not before.result.comparable and "27 of 33 contexts" in before.result.located.line()
    # after: judged on evidence, the same verdict as the lab-chunk log, every context located
    for m, k in [("hit_rate", 1), ("hit_rate", 3), ("mrr", None)]:
        assert after.result.mean(m, k) == pytest.approx(by_chunks.result.mean(m, k)), (m, k)
    assert after.result.located.unlocated == 0 and after.result.comparable
    assert after.result.located.exact + after.result.located.chunk == 33


def test_section_log_on_the_cli(tmp_path, capsys):
    golden, rows_chunks, rows_sections = section_scenario()
    save_golden(golden, tmp_path / "golden.jsonl")
    out = {}
    for name, rows in [("chunks", rows_chunks), ("sections", rows_sections)]:
        (tmp_path / f"{name}.jsonl").write_text(_jsonl(rows))
        code = main(["evaluate", "--qrels", str(tmp_path / "golden.jsonl"), "--run", str(tmp_path / f"{name}.jsonl"),
                     "--corpus", str(ROOT / "sample_corpus" / "docs"), "--metrics", "hit_rate", "--k", "3",
                     "--format", "json"])
        cap = capsys.readouterr()
        assert code == 0, cap.err
        out[name] = json.loads(cap.out)
    assert out["chunks"]["metrics"]["hit_rate@3"] == out["sections"]["metrics"]["hit_rate@3"] == pytest.approx(10 / 11)
    assert out["sections"]["contexts"]["unlocated"] == 0 and out["sections"]["contexts"]["comparable"]


# ---- a ragas results CSV whose contexts are whole documents -----------------------------------------------
def _ragas_rows():
    with RAGAS_CSV.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _books_corpus(folder: Path) -> Path:
    """The corpus the CSV's contexts come from: one document per book (each context is a whole one)."""
    folder.mkdir()
    seen = {}
    for r in _ragas_rows():
        for ctx in ast.literal_eval(r["retrieved_contexts"]):
            seen.setdefault(ctx, f"book-{len(seen):02d}")
    for text, name in seen.items():
        (folder / f"{name}.md").write_text(text + "\n", encoding="utf-8")
    return folder


@needs_artifacts
def test_ragas_csv_against_another_corpus_is_not_comparable(tmp_path, capsys):
    gold = tmp_path / "golden.jsonl"
    rows = [{"question": r["user_input"], "evidence": [{"doc": "", "quote": r["reference"][:60], "grade": 1}]}
            for r in _ragas_rows()]
    gold.write_text(_jsonl(rows))
    code = main(["evaluate", "--qrels", str(gold), "--run", str(RAGAS_CSV),
                 "--corpus", str(ROOT / "sample_corpus" / "docs"), "--metrics", "hit_rate,mrr", "--k", "3"])
    cap = capsys.readouterr()
    last = cap.out.strip().splitlines()[-1]
    assert code == 1
    assert last.startswith("elasticsearch_ragas_evaluation: NOT COMPARABLE: 12 of 12 contexts (100%)")
    assert last.endswith("your corpus differs: load it")


@needs_artifacts
def test_ragas_csv_with_its_corpus_and_reviewed_proposals_is_judged(tmp_path, capsys):
    books = _books_corpus(tmp_path / "books")
    raw = tmp_path / "ragas_golden.jsonl"  # the CSV's questions and reference answers, no ids
    raw.write_text(_jsonl([{"question": r["user_input"], "ground_truth": r["reference"]} for r in _ragas_rows()]))
    args = ["evaluate", "--qrels", str(raw), "--run", str(RAGAS_CSV), "--corpus", str(books)]
    # not evaluable yet, and the message names the way out
    assert main(args) == 2
    assert "--propose-evidence" in capsys.readouterr().err
    proposed = tmp_path / "proposed.jsonl"
    assert main(["validate", str(raw), "--corpus", str(books), "--propose-evidence", str(proposed)]) == 0
    assert "evidence proposed for 4 question(s)" in capsys.readouterr().out
    golden = load_golden(proposed)
    assert all(q.proposed_evidence and not q.in_scope and q.awaiting_labels for q in golden)
    # a person accepts the best proposal of each question
    reviewed = tmp_path / "reviewed.jsonl"
    save_golden(GoldenSet(tuple(review(q, {0: True}) for q in golden), "reviewed"), reviewed)
    code = main(["evaluate", "--qrels", str(reviewed), "--run", str(RAGAS_CSV), "--corpus", str(books),
                 "--metrics", "hit_rate,mrr", "--k", "3", "--format", "json"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    doc = json.loads(cap.out)
    assert doc["contexts"]["unlocated"] == 0 and doc["contexts"]["comparable"]
    assert "judged on evidence" in cap.err and "12 text(s) found exactly" in cap.err
    # the system recommended the book its reference answer names for most questions
    assert doc["metrics"]["hit_rate@3"] >= 0.75


@needs_artifacts
def test_ragas_csv_whole_documents_unmatched_by_chunk_text(tmp_path):
    """What the issue saw: whole-document contexts match none of the lab's chunks."""
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval.chunking import chunk_corpus
    from rag_metrics.systems.uploads import load_upload

    chunks = chunk_corpus(load_corpus(str(_books_corpus(tmp_path / "books"))))
    sr = load_upload(str(RAGAS_CSV), chunks).rank({str(i): r["user_input"] for i, r in enumerate(_ragas_rows())}, 10)
    cm = sr.context_match
    long_ones = sum(1 for r in _ragas_rows() for c in ast.literal_eval(r["retrieved_contexts"]) if len(c) > 600)
    assert cm.unmatched >= long_ones > 0


# ---- a ragas-style testset: never silently out of scope -----------------------------------------------------
@needs_artifacts
def test_ragas_testset_is_awaiting_review_not_out_of_scope(capsys):
    code = main(["validate", str(RAGAS_TESTSET)])
    out = capsys.readouterr().out
    assert code == 0
    assert re.search(r"19 queries \(0 out of scope; 19 awaiting evidence review", out)
    code = main(["evaluate", "--qrels", str(RAGAS_TESTSET), "--run", str(RAGAS_CSV)])
    err = capsys.readouterr().err
    assert code == 2 and "19 question(s) have a reference answer" in err and "--propose-evidence" in err


# ---- proposals from the sample's reference answers --------------------------------------------------------
def test_proposals_support_the_reference_and_are_never_judged():
    corpus, chunks, _, ev = sample()
    refs = GoldenSet(tuple(GoldenQuery(q.id, q.question, q.category if q.category == "out_of_scope" else "",
                                       expected_answer=q.expected_answer) for q in ev))
    proposed = propose_evidence(refs, corpus)
    idx = CorpusIndex.of(corpus)
    n = top1 = top3 = 0
    for q, truth_q in zip(proposed.queries, ev.queries):
        if not truth_q.in_scope:
            assert not q.proposed_evidence  # out of scope: nothing to propose
            continue
        n += 1
        truth = query_passages(truth_q, idx, {})
        ok = [any(p.doc == x.doc and held_grade(1, min(p.end, x.end) - max(p.start, x.start), p.length)
                  for p in truth) for x in q.proposed_evidence]
        top1 += bool(ok and ok[0])
        top3 += any(ok)
        assert not q.in_scope and q.awaiting_labels  # unreviewed: neither in nor out of scope
    assert n == 64 and top3 >= 0.95 * n and top1 >= 0.85 * n
    # proposals feed no verdict: a set with only proposals has nothing in scope to judge
    from rag_metrics import Run
    from rag_metrics.evaluation import evaluate

    res = evaluate(proposed, Run.from_rankings({"q001": [chunks[0].id]}), evidence=EvidenceJudge.for_chunks(chunks))
    assert res.n_in_scope == 0 and res.n_awaiting_labels == 64


def test_reviewed_evidence_written_onto_lab_chunks_is_the_sample_golden_set():
    """build_golden.py's output is the sample's evidence written onto the lab's chunks by the rule."""
    corpus, chunks, golden, ev = sample()
    labelled = with_chunk_labels(ev, chunks, corpus)
    assert [dict(q.relevant) for q in labelled] == [dict(q.relevant) for q in golden]


def test_review_accepts_rejects_and_keeps_undecided():
    corpus, _, _, ev = sample()
    q = propose_evidence(GoldenSet((GoldenQuery("a", ev.queries[0].question,
                                                expected_answer=ev.queries[0].expected_answer),)), corpus).queries[0]
    assert len(q.proposed_evidence) == 3
    r = review(q, {0: True, 1: False}, grades={0: 2})
    assert [e.grade for e in r.reviewed_evidence] == [2] and len(r.proposed_evidence) == 1
    assert r.in_scope and not r.awaiting_labels


def test_own_chunk_ids_with_texts_are_located_and_ids_alone_point_to_chunking():
    """A home-made log with the app's own chunk ids: with their texts, each is located and judged;
    with ids only, nothing can be placed and the verdict names the chunking fix."""
    _, chunks, _, _ = sample()
    golden, _, rows_sections = section_scenario()
    with_text = [{"question": r["question"], "contexts": r["contexts"],
                  "context_ids": [f"sec-{n}-{j}" for j in range(len(r["contexts"]))]}
                 for n, r in enumerate(rows_sections)]
    ids_only = [{"question": r["question"], "context_ids": r["context_ids"]} for r in with_text]
    a = evaluate_systems([("own ids", _system(with_text, "own"))], golden, depth=10, chunks=chunks)[0].result
    b = evaluate_systems([("ids only", _system(ids_only, "ids"))], golden, depth=10, chunks=chunks)[0].result
    assert a.mean("hit_rate", 3) == pytest.approx(10 / 11) and a.located.unlocated == 0
    assert b.mean("hit_rate", 3) == 0 and b.located.unlocated_ids == 33 and not b.comparable
    assert b.located.line().endswith("your chunking differs: label evidence, or evaluate at document level")
