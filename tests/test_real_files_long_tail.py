"""Issue 47, the long tail of real files: each shape other tools write, made small here, is read right
or refused naming the file, the field, the nearest format the lab reads and what to rename; on both
paths -- the one reader (:func:`rag_metrics.formats.describe_bytes`, the CLI's and the Bring page's)
and the app's upload reader (:func:`rag_metrics.systems.uploads.parse_upload`, Systems and ``--run``)."""
from __future__ import annotations

import json

import pytest

from rag_metrics.cli import main
from rag_metrics.errors import InputError
from rag_metrics.formats import describe, describe_bytes
from rag_metrics.io.trec import read_qrels
from rag_metrics.systems.uploads import RagLogSystem, RunFileSystem, parse_upload

CHUNKS = {"c1": "alpha text about the first thing", "c2": "beta text about the second thing"}
Q = {"q1": "what is alpha?", "q2": "what is beta?"}


def _upload(data: bytes, name: str):
    system, report = parse_upload(data, name, CHUNKS)
    return system, report


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


# 1 -------------------------------------------------------------------------------------------------
def test_ragas_01_numpy_array_contexts_are_separate_contexts():
    """pandas writes a column of NumPy arrays with str(): no comma, items on their own lines."""
    data = (b"question,contexts,answer\n"
            b"what is alpha?,\"['alpha text about the first thing'\n 'beta text about the second thing']\",alpha\n"
            b"what is beta?,\"[\"\"it's beta\"\" 'x']\",beta\n")
    got = describe_bytes(data, "ragas01.csv")
    assert got.kind == "rag_log"
    assert got.log.rows[0].contexts == (CHUNKS["c1"], CHUNKS["c2"])
    assert got.log.rows[1].contexts == ("it's beta", "x")
    system, report = _upload(data, "ragas01.csv")
    assert isinstance(system, RagLogSystem) and report.ok
    assert system.log.rows[0].contexts == (CHUNKS["c1"], CHUNKS["c2"])
    assert system.ranked_ids()[0]["1"] == ["c1", "c2"]


# 2 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["expected_chunk_id", "expected_chunk_ids", "relevant_chunk_ids", "ground_truth_ids",
                                   "gold_chunk_ids"])
def test_golden_label_field_aliases_are_read(tmp_path, field):
    ids = ["c1"] if field.endswith("s") else "c1"
    p = tmp_path / "golden.jsonl"
    p.write_bytes(_jsonl([{"question": q, field: ids} for q in Q.values()]))
    got = describe(p)
    assert got.kind == "golden" and "2 questions, 2 with relevant ids" in got.summary
    golden = read_qrels(p)  # the CLI's --qrels
    assert [dict(q.relevant) for q in golden] == [{"c1": 1}, {"c1": 1}]


def test_golden_unknown_label_field_is_named(tmp_path):
    p = tmp_path / "golden.jsonl"
    p.write_bytes(_jsonl([{"question": q, "my_labels": ["c1"]} for q in Q.values()]))
    got = describe(p)
    assert "0 with relevant ids (fields not read: 'my_labels')" in got.summary
    assert any("'my_labels'" in w and "rename it 'relevant_chunk_ids'" in w for w in got.warnings)
    system, report = _upload(p.read_bytes(), p.name)
    first = report.lines()[0]
    assert system is None and "looks like a golden set" in first and "as the golden set" in first


# 3 -------------------------------------------------------------------------------------------------
def test_deepeval_with_every_retrieval_context_empty_is_no_retrieval_not_a_crash():
    rows = [{"input": q, "actual_output": "a", "expected_output": "r", "retrieval_context": rc, "context": ["ideal"]}
            for q, rc in zip(Q.values(), ([], None))]
    data = json.dumps(rows).encode()
    with pytest.raises(InputError, match=r"deepeval\.json: looks like a RAG log .* holds no retrieval: "
                                         r"'retrieval_context' is empty in all 2 rows"):
        describe_bytes(data, "deepeval.json")
    system, report = _upload(data, "deepeval.json")
    assert system is None and "holds no retrieval" in report.lines()[0] and "2 reference answers" in report.lines()[0]
    # a log with some empty rows is read; the empty rows retrieve nothing (this crashed with AssertionError)
    rows[1]["retrieval_context"] = ["beta text about the second thing"]
    system, report = _upload(json.dumps(rows).encode(), "deepeval.json")
    assert system is not None and system.ranked_ids()[0] == {"1": [], "2": ["c2"]}
    assert len(system.rank(Q, 10).run) == 1


def test_deepeval_goldens_not_run_yet_are_a_golden_set_with_reference_answers():
    rows = [{"input": q, "expected_output": "ref", "retrieval_context": []} for q in Q.values()]
    got = describe_bytes(json.dumps(rows).encode(), "goldens.json")
    assert got.kind == "golden" and "read as a golden set: 2 questions, 0 with relevant ids, 2 with reference" \
        in got.summary
    assert [q.expected_answer for q in got.golden] == ["ref", "ref"]


# 4 -------------------------------------------------------------------------------------------------
def test_deepeval_test_run_camel_case_is_a_rag_log():
    run = {"testFile": "test_rag.py", "testCases": [
        {"name": "test_case_0", "input": "what is alpha?", "actualOutput": "alpha", "expectedOutput": "ref",
         "context": None, "retrievalContext": [CHUNKS["c1"], CHUNKS["c2"]], "success": True,
         "metricsData": [{"name": "Faithfulness", "score": 1.0, "reason": "x" * 200_000}], "order": 0}],
        "conversationalTestCases": [], "metricsScores": [{"metric": "Faithfulness", "scores": [1.0]}],
        "testPassed": 1, "testFailed": 0}
    data = json.dumps(run).encode()
    got = describe_bytes(data, "test_run.json")
    assert got.kind == "rag_log"
    (row,) = got.log.rows
    assert (row.question, row.contexts, row.answer, row.ground_truth) == (
        "what is alpha?", (CHUNKS["c1"], CHUNKS["c2"]), "alpha", "ref")
    system, report = _upload(data, "test_run.json")
    assert isinstance(system, RagLogSystem) and system.ranked_ids()[0] == {"1": ["c1", "c2"]}


def test_no_error_line_is_giant():
    """A value echoed from the file is cut: one 168 KB error line was printed."""
    data = json.dumps({"q1": {"d1": {"reason": "x" * 200_000}}}).encode()
    with pytest.raises(InputError) as e:
        describe_bytes(data, "odd.json")
    assert len(str(e.value)) < 2_000
    system, report = _upload(data, "odd.json")
    assert system is None and report.lines() and all(len(line) < 1_000 for line in report.lines())
    with pytest.raises(InputError) as e:  # a field name of 100,000 characters
        describe_bytes(json.dumps({"k" * 100_000: 1}).encode(), "odd.json")
    assert len(str(e.value)) < 2_000
    got = describe_bytes(json.dumps([{"question": "q?", "c" * 100_000: 1}]).encode(), "odd.json")
    assert len(got.summary) < 1_000 and all(len(w) < 1_000 for w in got.warnings)


# 5 -------------------------------------------------------------------------------------------------
def test_eval_csv_with_a_singular_context_column_is_a_log_with_one_context():
    data = b"question,context,answer\nwhat is alpha?,alpha text about the first thing,alpha\n"
    got = describe_bytes(data, "eval.csv")
    assert got.kind == "rag_log" and got.log.rows[0].contexts == (CHUNKS["c1"],)
    system, report = _upload(data, "eval.csv")
    assert isinstance(system, RagLogSystem) and system.ranked_ids()[0] == {"1": ["c1"]}


# 6 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data, name", [
    (_jsonl([{"query": "what is alpha?", "ids": ["c1", "c2"]}]), "run.jsonl"),
    (_jsonl([{"query": "what is alpha?", "results": [{"id": "c1", "score": 2}, {"id": "c2", "score": 1}]}]),
     "run.jsonl"),
    (b"query,chunk_id,score\nwhat is alpha?,c1,2\nwhat is alpha?,c2,1\n", "run.csv"),
])
def test_rows_keyed_query_are_read(data, name):
    got = describe_bytes(data, name)
    assert got.kind == "run_table"
    system, report = _upload(data, name)
    assert isinstance(system, RunFileSystem), report.lines()
    sr = system.rank(Q, 10)
    assert list(sr.run.query_ids()) == ["q1"]  # matched to the golden question by its text


# 7 -------------------------------------------------------------------------------------------------
def test_a_log_with_other_field_names_is_never_a_golden_set():
    """The system's answers are never read as reference answers."""
    data = _jsonl([{"question": "what is alpha?", "sources": [{"text": "alpha"}], "response": "the system's"},
                   {"question": "what is beta?", "sources": [], "response": "the system's"}])
    with pytest.raises(InputError) as e:
        describe_bytes(data, "log.jsonl")
    msg = str(e.value)
    assert msg.startswith("log.jsonl: looks like a RAG log") and "if 'sources' holds the retrieved contexts, rename " \
        "it 'contexts'" in msg
    system, report = _upload(data, "log.jsonl")
    assert system is None and "'sources'" in report.lines()[0]
    answer_too = _jsonl([{"question": "what is alpha?", "passages": ["alpha"], "answer": "the system's"}])
    with pytest.raises(InputError, match="'passages' holds the retrieved contexts"):
        describe_bytes(answer_too, "log2.jsonl")


def test_the_golden_editor_import_never_takes_a_logs_answers_for_reference_answers():
    from rag_metrics.authoring.golden_edit import import_golden
    from rag_metrics.types import GoldenSet

    log = _jsonl([{"question": "what is alpha?", "contexts": ["alpha"], "answer": "the system's"},
                  {"question": "what is beta?", "contexts": ["beta"], "answer": "the system's", "ground_truth": "ref"}])
    golden, report = import_golden(log, "log.jsonl", GoldenSet(()))
    assert [q.expected_answer for q in golden] == [None, "ref"]
    assert any("'answer' is the system's and is not read as a reference answer" in w for w in report.lines())


# 8 -------------------------------------------------------------------------------------------------
def test_llamaindex_labelled_rag_dataset_is_a_golden_set_with_reference_answers(tmp_path):
    p = tmp_path / "rag_dataset.json"
    p.write_text(json.dumps({"examples": [
        {"query": q, "query_by": {"model_name": "gpt-4", "type": "ai"}, "reference_contexts": ["ctx"],
         "reference_answer": f"answer {n}", "reference_answer_by": {"type": "ai"}} for n, q in enumerate(Q.values())]}))
    got = describe(p)
    assert got.kind == "golden" and "2 questions, 0 with relevant ids, 2 with reference answers" in got.summary
    assert "'reference_contexts'" in got.summary
    assert [q.expected_answer for q in read_qrels(p, with_report=True)[0]] == ["answer 0", "answer 1"]
    system, report = _upload(p.read_bytes(), p.name)
    assert system is None and "looks like a golden set" in report.lines()[0]


def test_qrels_as_lists_of_ids_are_binary_qrels(tmp_path):
    p = tmp_path / "qrels.json"
    p.write_text(json.dumps({"q1": ["c1", "c2"], "q2": ["c2"]}))
    got = describe(p)
    assert got.kind == "json_qrels" and "2 queries, 3 judgments" in got.summary
    assert {q.id: dict(q.relevant) for q in read_qrels(p)} == {"q1": {"c1": 1, "c2": 1}, "q2": {"c2": 1}}
    system, report = _upload(p.read_bytes(), p.name)
    assert system is None and "looks like JSON qrels" in report.lines()[0] and "golden set" in report.lines()[0]


def test_trec_run_with_decimal_comma_scores_names_the_fix():
    data = b"q1 Q0 c1 1 1,5 run\nq1 Q0 c2 2 0,5 run\n"
    with pytest.raises(InputError, match=r"run\.trec: .*score '1,5' is written with a decimal comma; write it with a "
                                         r"point \(1\.5\)"):
        describe_bytes(data, "run.trec")
    system, report = _upload(data, "run.trec")
    assert system is None and "decimal comma" in report.lines()[0]
    system, report = _upload(b"query_id,chunk_id,score\nq1,c1,\"1,5\"\n", "run.csv")
    assert system is None and "score '1,5' is not a number (a decimal comma: write it with a point, 1.5)" \
        in report.lines()[0]


# 9 -------------------------------------------------------------------------------------------------
def test_repeated_warnings_are_counted_not_listed(tmp_path, capsys):
    """A diversity qrels file judges a document once per subtopic (the 2nd column): 500 repeats."""
    p = tmp_path / "diversity.qrels"
    p.write_text("".join(f"q1 {s} d{n} 1\n" for n in range(250) for s in (1, 2)) + "q1 0 d999 1\n")
    assert main(["validate", str(p)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) < 10
    assert any("247 more like the ones above (250 in all): id … judged twice" in line for line in out)
    got = describe(p)
    assert len(got.warnings) == 2 and "249 more like the ones above (250 in all)" in got.warnings[1]  # Bring shows 3


# 10 ------------------------------------------------------------------------------------------------
_ATOMS = [None, True, 0, -1.5, "", "x", [], {}, [None], ["a", 1], [[]], [{}], {"id": {}}, [{"text": 5}], 10 ** 30]
_KEYS = ["question", "query", "input", "contexts", "context", "retrieval_context", "retrievalContext", "answer",
         "relevant", "relevant_chunk_ids", "expected_chunk_id", "gold_chunk_id", "id", "query_id", "ids", "results",
         "testCases", "examples", "queries", "corpus", "relevant_docs", "values", "query_ids", "metrics", "data",
         "span_kind", "run_type", "traceId", "type", "observations", "evidence", "grades", "text", "doc_id", "score"]


def _odd_shapes() -> list[object]:
    shapes: list[object] = [[{"question": "what is alpha?", "contexts": []}],  # an AssertionError in rank()
                            [{"input": "what is beta?", "retrieval_context": None, "actual_output": "a"}]]
    for a in _ATOMS:
        shapes += [a, [a], {"q1": a}, {"q1": {"d1": a}}]
    for n, k in enumerate(_KEYS):  # every key with a few odd values, alone, in rows and under a wrapper
        a, b = _ATOMS[n % len(_ATOMS)], _ATOMS[(3 * n + 1) % len(_ATOMS)]
        row = {k: a, _KEYS[(n + 7) % len(_KEYS)]: b, "question": "what is alpha?"}
        shapes += [row, [row, {k: b}], {k: [row]}, {"testCases": [row]}, {"examples": [{k: a}]}]
    return shapes


def test_odd_json_shapes_are_read_or_refused_never_crash():
    for value in _odd_shapes():
        text = json.dumps(value)
        for data, name in ((text.encode(), "odd.json"), (text.encode(), "odd.jsonl")):
            try:
                describe_bytes(data, name)
            except InputError as e:
                assert str(e).startswith(name) and len(str(e)) < 4_000, (text, str(e))
            system, report = parse_upload(data, name, CHUNKS)  # never raises: problems are in the report
            if system is None:
                assert report.errors, text
            else:
                system.rank(Q, 10)


def test_records_given_as_a_system_name_the_nearest_format():
    """The same refusal on both paths: the real books file (../shared/real-artifacts, by path) is
    nearest a corpus, whose text field it names."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1].parent
    books = root / "shared" / "real-artifacts" / "ragas" / "elasticsearch_books.json"
    if not books.is_file():
        pytest.skip("the real artifacts folder is not on this machine")
    with pytest.raises(InputError, match=r"nearest: a corpus.*rename 'book_description' to 'text'"):
        describe(books)
    system, report = _upload(books.read_bytes(), books.name)
    assert system is None and "nearest: a corpus" in report.lines()[0] and "'book_description'" in report.lines()[0]
