"""The files users have: every real file in ``../shared/real-artifacts`` (by path, never copied) is
read by the one reader (:mod:`rag_metrics.formats`) or refused with a message naming the file, what
it looks like and the fix; the CLI's ``evaluate`` and ``validate --run`` accept the same files."""
from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from rag_metrics.cli import main
from rag_metrics.errors import InputError
from rag_metrics.formats import describe, describe_bytes, sniff
from rag_metrics.io.raglog import parse_rag_log
from rag_metrics.io.trec import read_qrels

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT.parent / "shared" / "real-artifacts"  # ../shared/real-artifacts of the project (MANIFEST.md)
if not ARTIFACTS.is_dir():  # a worktree one level deeper
    ARTIFACTS = ROOT.parent.parent / "shared" / "real-artifacts"

# file -> (read or refused, kind, words the one-line summary or the refusal must hold)
EXPECTED: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "beir/fiqa/qrels/test.tsv": ("read", "beir_qrels", ("648 queries", "1706 judgments")),
    "beir/fiqa/queries.jsonl": ("read", "queries", ("648 questions", "no judgments")),
    "custom/recipe_golden_set.jsonl": ("read", "golden", ("12 questions", "11 with relevant ids")),
    "deepeval/goldens.json": ("read", "rag_log", ("4 questions", "with answers", "3 reference answers")),
    "langfuse/langgraph-2025-08-22.json": ("read", "trace", ("1 question", "with answers")),
    "langfuse/llamaindex-2025-06-05.json": ("refused", "trace", ("no RETRIEVER observation", "1 GENERATION, 1 SPAN",
                                                                 "return the documents")),
    "llamaindex/aimakerspace_val_dataset.json": ("read", "llamaindex", ("34 questions", "34 relevant ids",
                                                                         "17 nodes")),
    "phoenix/docs_otel_spans_llm_retriever.jsonl": ("read", "trace", ("1 question", "chunk ids", "with answers")),
    "phoenix/span_json_decoder_retriever_span.jsonl": ("read", "trace", ("1 question", "chunk ids")),
    "pyserini/nfcorpus-qrels.tsv": ("read", "trec_qrels", ("5 queries", "234 judgments")),
    "pyserini/qrels.covid-round1.txt": ("read", "trec_qrels", ("30 queries", "8691 judgments")),
    "pyserini/simple_trec_run_filter.txt": ("read", "trec_run", ("4 queries", "6 ranked ids")),
    "ragas/aimakerspace_testset_v01.csv": ("read", "rag_log", ("19 questions", "19 reference answers")),
    "ragas/elasticsearch_books.json": ("refused", "records", ("book_title", "for a corpus save JSON lines")),
    "ragas/elasticsearch_ragas_evaluation.csv": ("read", "rag_log", ("4 questions", "with answers")),
    "ragas/rag_pdf_chatbot_ragas_results.csv": ("read", "rag_log", ("10 questions", "with answers")),
    "ranx/qrels.json": ("read", "json_qrels", ("2 queries", "5 judgments")),
    "ranx/qrels.parquet": ("read", "trec_qrels", ("Parquet (q_id, doc_id, score)", "2 queries", "5 judgments")),
    "ranx/qrels.trec": ("read", "trec_qrels", ("2 queries", "5 judgments")),
    "ranx/qrels.trec.gz": ("read", "trec_qrels", ("gzip-compressed", "2 queries", "5 judgments")),
    "ranx/run.json": ("read", "json_run", ("2 queries", "5 ranked ids")),
    "ranx/run.parquet": ("read", "trec_run", ("Parquet (q_id, doc_id, score)", "2 queries", "5 ranked ids")),
    "ranx/run.trec": ("read", "trec_run", ("2 queries", "5 ranked ids")),
    "ranx/run.trec.gz": ("read", "trec_run", ("gzip-compressed", "2 queries", "5 ranked ids")),
}


def _listing() -> list[str]:
    if not ARTIFACTS.is_dir():
        return []
    return sorted(str(p.relative_to(ARTIFACTS)) for p in ARTIFACTS.rglob("*")
                  if p.is_file() and p.name != "MANIFEST.md")


pytestmark = pytest.mark.skipif(not ARTIFACTS.is_dir(), reason="the real artifacts folder is not on this machine")


def test_every_real_file_has_an_expected_outcome():
    """A file added to the folder gets an expectation here (none is left untested)."""
    assert set(_listing()) == set(EXPECTED)


@pytest.mark.parametrize("rel", _listing())
def test_real_file_is_read_or_refused_clearly(rel):
    outcome, kind, words = EXPECTED[rel]
    path = ARTIFACTS / rel
    assert sniff(path.read_bytes(), str(path)).kind == kind
    if outcome == "read":
        got = describe(path)
        assert got.kind == kind
        line = got.summary
        assert "\n" not in line
    else:
        with pytest.raises(InputError) as exc:
            describe(path)
        line = str(exc.value)
        assert "looks like" in line  # what the file looks like ...
    assert line.startswith(str(path))  # ... names the file ...
    for w in words:  # ... and the fix or the counts
        assert w in line, (w, line)
    assert "listed above" not in line


@pytest.mark.parametrize("run", ["run.trec", "run.trec.gz", "run.parquet", "run.json"])
@pytest.mark.parametrize("qrels", ["qrels.trec", "qrels.trec.gz", "qrels.parquet", "qrels.json"])
def test_ranx_pairs_evaluate_to_the_pytrec_eval_numbers(qrels, run, capsys):
    """MANIFEST: NDCG/MRR@10 = 1, P@3 = 0.8333, recall@1 = 0.4167 (pytrec_eval), in every format."""
    rc = main(["evaluate", "--qrels", str(ARTIFACTS / "ranx" / qrels), "--run", str(ARTIFACTS / "ranx" / run),
               "--metrics", "ndcg,mrr,precision,recall", "--k", "1,3,10", "--format", "json"])
    assert rc == 0
    m = json.loads(capsys.readouterr().out)["metrics"]
    assert m["ndcg@10"] == pytest.approx(1.0) and m["mrr@10"] == pytest.approx(1.0)
    assert m["precision@3"] == pytest.approx(5 / 6)  # q1: 3/3, q2: 2/3
    assert m["recall@1"] == pytest.approx((1 / 3 + 1 / 2) / 2)


@pytest.mark.parametrize("run", ["ranx/run.json", "ranx/run.parquet", "ranx/run.trec.gz",
                                 "phoenix/span_json_decoder_retriever_span.jsonl"])
def test_validate_run_accepts_what_evaluate_accepts(run, capsys):
    qrels = str(ARTIFACTS / "ranx" / "qrels.trec")
    rc_eval = main(["evaluate", "--qrels", qrels, "--run", str(ARTIFACTS / run)])
    rc_val = main(["validate", qrels, "--run", str(ARTIFACTS / run)])
    out = capsys.readouterr()
    assert "expected 4 fields" not in out.out + out.err  # never parsed as TREC lines
    assert "expected 6 fields" not in out.out + out.err
    assert rc_eval == 0 or run.startswith("phoenix")
    if run.startswith("phoenix"):  # read, matched to no golden question: a content finding, not a format one
        assert rc_eval == 1 and "NO VERDICT: no golden question is in the system's results" in out.out  # issue 47
        assert rc_val == 1 and "run is empty" in out.out
    else:
        assert rc_val == 0, out.out


def test_validate_refuses_a_run_given_as_judgments(capsys):
    rc = main(["validate", str(ARTIFACTS / "ranx" / "run.json")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "run.json: looks like a JSON run" in err and "--run" in err


def test_llamaindex_dataset_is_a_golden_set_not_qrels():
    golden = read_qrels(ARTIFACTS / "llamaindex" / "aimakerspace_val_dataset.json")
    assert len(golden) == 34
    q = next(iter(golden))
    assert q.question.endswith("?") and len(q.relevant) == 1  # question texts are questions, not grades
    got = describe(ARTIFACTS / "llamaindex" / "aimakerspace_val_dataset.json")
    assert len(got.corpus) == 17
    assert set().union(*(q.relevant for q in golden)) <= {d.id for d in got.corpus}


def test_langfuse_refusal_lists_what_it_left_out():
    log, report = parse_rag_log((ARTIFACTS / "langfuse" / "llamaindex-2025-06-05.json").read_bytes(), "lf.json")
    assert not log.rows
    msg = str(report.errors[0])
    assert "1 left out: " in msg and "12ea412956f99347b0503c1144acd0ec" in msg


def test_langfuse_search_span_is_read_as_retrieval():
    log, report = parse_rag_log((ARTIFACTS / "langfuse" / "langgraph-2025-08-22.json").read_bytes(), "lg.json")
    (row,) = log.rows
    assert row.question == "example"  # the Web-Search SPAN's input {'query': 'example'}
    assert row.context_ids == ("https://example.com",)
    assert row.answer and "example.com" in row.answer


# ---- shapes seen in real projects, without a fetchable snapshot -----------------------------------
def _log(rows: list[dict], name: str = "log.jsonl"):
    data = "\n".join(json.dumps(r) for r in rows).encode()
    return parse_rag_log(data, name)


def test_home_made_log_with_retrieved_objects_ranked_by_rank():
    """jeeja-softsuave/recipe-rag-evaluation traces.jsonl: question, retrieved[{rank, chunk_id, score, text}]."""
    log, report = _log([{"question": "q one", "retrieved": [
        {"rank": 2, "chunk_id": "c2", "score": 0.5, "text": "two"},
        {"rank": 1, "chunk_id": "c1", "score": 0.9, "text": "one"}], "raw_output": "ans"}])
    assert report.ok, report.lines()
    (row,) = log.rows
    assert row.context_ids == ("c1", "c2") and row.contexts == ("one", "two") and row.answer == "ans"


def test_home_made_log_with_retrieved_chunks():
    """Kavin-bharath/RAG traces.jsonl: query, retrieved_chunks[{id, score, source, text}], llm_response."""
    log, report = _log([{"query": "what?", "retrieved_chunks": [{"id": "a", "score": 1.0, "source": "s", "text": "t"}],
                         "llm_response": "r"}])
    assert report.ok
    assert log.rows[0].context_ids == ("a",) and log.rows[0].answer == "r"
    assert sniff(b'{"query": "what?", "retrieved_chunks": []}\n', "t.jsonl").kind == "rag_log"


def test_deepeval_fields_are_a_rag_log():
    log, report = _log([{"input": "q?", "actual_output": "a", "retrieval_context": ["x", "y"],
                         "expected_output": "ref"}], "d.json")
    assert report.ok
    row = log.rows[0]
    assert (row.question, row.answer, row.contexts, row.ground_truth) == ("q?", "a", ("x", "y"), "ref")


def test_langsmith_traceable_retriever_with_nested_child_runs():
    """A root chain run with child_runs: a @traceable retriever (documents under outputs.output) and an llm."""
    root = {"id": "r1", "trace_id": "t1", "run_type": "chain", "inputs": {"question": "what is x?"},
            "outputs": {"output": "x is y"}, "child_runs": [
                {"id": "r2", "run_type": "retriever", "inputs": {"query": "what is x?"},
                 "outputs": {"output": [{"page_content": "x is y", "metadata": {"chunk_id": "doc#0"}},
                                        {"page_content": "other", "metadata": {"chunk_id": "doc#1"}}]}},
                {"id": "r3", "run_type": "llm", "inputs": {}, "outputs": {"generations": [[{"text": "x is y"}]]}}]}
    log, report = parse_rag_log(json.dumps([root]).encode(), "ls.json")
    assert report.ok, report.lines()
    (row,) = log.rows
    assert row.question == "what is x?" and row.context_ids == ("doc#0", "doc#1") and row.answer == "x is y"


def test_gzip_around_a_rag_log_and_parquet_rows(tmp_path):
    rows = [{"question": "q?", "contexts": ["a", "b"], "answer": "x"}]
    gz = gzip.compress("\n".join(json.dumps(r) for r in rows).encode())
    assert describe_bytes(gz, "log.jsonl.gz").summary.startswith("log.jsonl.gz: a gzip-compressed file holding a RAG")
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf)
    got = describe_bytes(buf.getvalue(), "log.parquet")
    assert got.kind == "rag_log" and got.log.rows[0].contexts == ("a", "b")


def test_damaged_gzip_names_the_file_and_the_fix():
    with pytest.raises(InputError, match=r"run\.trec\.gz: the gzip file is cut off.*uncompressed"):
        describe_bytes(gzip.compress(b"q1 Q0 d1 1 1.0 x\n" * 50)[:20], "run.trec.gz")


def test_a_gzip_corpus_upload_is_read_like_its_plain_twin():
    from rag_metrics.io.corpus import corpus_from_files

    c = corpus_from_files({"docs.jsonl.gz": gzip.compress(b'{"id": "a", "text": "hello"}\n'),
                           "notes.md.gz": gzip.compress(b"# Notes\nbody")})
    assert [d.id for d in c] == ["a", "notes"]


def test_judgments_given_as_the_run_are_named(capsys):
    rc = main(["evaluate", "--qrels", str(ARTIFACTS / "ranx" / "qrels.trec"), "--run",
               str(ARTIFACTS / "ranx" / "qrels.trec.gz")])
    err = capsys.readouterr().err
    assert rc == 2 and "qrels.trec.gz: looks like TREC qrels" in err and "give it as --qrels" in err
