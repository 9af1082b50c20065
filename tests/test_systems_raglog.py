"""RAG log reader: formats, aliases, problems with file:line and the fix."""
from __future__ import annotations

import json

import pytest

from rag_metrics.errors import InputError
from rag_metrics.io.raglog import RagLog, RagLogRow, load_rag_log, looks_like_rag_log, parse_rag_log, read_rag_log

ROWS = [
    {"question": "What is MRR?", "contexts": ["MRR is the mean reciprocal rank.", "Other text."],
     "answer": "The mean reciprocal rank.", "ground_truth": "Mean reciprocal rank."},
    {"question": "What is NDCG?", "contexts": ["NDCG discounts gains."], "answer": "A graded metric.",
     "ground_truth": "Normalised DCG."},
]


def _ids(log: RagLog) -> list[str]:
    return [r.id for r in log]


def test_jsonl_rows_and_row_number_ids():
    text = "\n".join(json.dumps(r) for r in ROWS) + "\n"
    log, rep = parse_rag_log(text, "log.jsonl")
    assert rep.ok and not rep.problems
    assert log.rows[0] == RagLogRow(id="1", question="What is MRR?",
                                    contexts=("MRR is the mean reciprocal rank.", "Other text."), context_ids=None,
                                    answer="The mean reciprocal rank.", ground_truth="Mean reciprocal rank.",
                                    line=1, row=1)
    assert _ids(log) == ["1", "2"] and log.rows[1].line == 2
    assert log.name == "log" and not log.has_ids and log.has_answers


def test_ragas_02_aliases_and_ids():
    row = {"query_id": "q7", "user_input": "Q?", "retrieved_contexts": ["t1", "t2"],
           "retrieved_context_ids": ["d#0", "d#1"], "response": "R", "reference": "Ref"}
    log, rep = parse_rag_log(json.dumps(row) + "\n", "r.jsonl")
    assert rep.ok
    r = log.rows[0]
    assert (r.id, r.question, r.contexts, r.context_ids, r.answer, r.ground_truth) == (
        "q7", "Q?", ("t1", "t2"), ("d#0", "d#1"), "R", "Ref")
    assert log.has_ids


def test_other_aliases():
    row = {"id": 5, "question": "Q", "retrieved_texts": ["a"], "retrieved_ids": [11], "generated_answer": "A",
           "expected_answer": "E"}
    log, rep = parse_rag_log(json.dumps([row]), "r.json")
    assert rep.ok
    r = log.rows[0]
    assert (r.id, r.contexts, r.context_ids, r.answer, r.ground_truth) == ("5", ("a",), ("11",), "A", "E")


def test_json_list_keeps_the_line_where_each_row_starts():
    text = json.dumps(ROWS, indent=2)
    log, rep = parse_rag_log(text, "log.json")
    assert rep.ok
    second = text.splitlines().index("  {", 2) + 1  # the line of the second "{"
    assert [r.line for r in log] == [2, second]


def test_columnar_ragas_shape():
    data = {"question": ["q1", "q2"], "contexts": [["a"], ["b", "c"]], "answer": ["x", "y"],
            "ground_truth": ["g1", "g2"]}
    log, rep = parse_rag_log(json.dumps(data), "ds.json")
    assert rep.ok
    assert [(r.id, r.question, r.contexts, r.answer, r.ground_truth, r.line, r.row) for r in log] == [
        ("1", "q1", ("a",), "x", "g1", None, 1), ("2", "q2", ("b", "c"), "y", "g2", None, 2)]


def test_columnar_length_mismatch_names_the_columns():
    data = {"question": ["q1", "q2"], "contexts": [["a"]]}
    log, rep = parse_rag_log(json.dumps(data), "ds.json")
    assert len(log) == 0 and not rep.ok
    assert "'question': 2, 'contexts': 1" in rep.lines()[0]


def test_wrapped_rows_and_ragas_00_ground_truths():
    data = {"samples": [{"question": "q", "contexts": ["a"], "ground_truths": ["one", "two"]}]}
    log, rep = parse_rag_log(json.dumps(data), "w.json")
    assert rep.ok and log.rows[0].ground_truth == "one\ntwo"


def test_csv_json_list_cells_and_pandas_python_lists():
    text = ('question,contexts,context_ids,answer\n'
            'q1,"[""a, with comma"", ""b""]","[""d#0"", ""d#1""]",x\n'
            "q2,\"['c', 'd']\",,y\n")
    log, rep = parse_rag_log(text, "log.csv")
    assert rep.ok, rep.lines()
    assert log.rows[0].contexts == ("a, with comma", "b") and log.rows[0].context_ids == ("d#0", "d#1")
    assert log.rows[1].contexts == ("c", "d") and log.rows[1].context_ids is None
    assert [r.line for r in log] == [2, 3]


def test_csv_multiline_cell_keeps_line_numbers():
    text = 'question,contexts\n"q1","[""line one\nline two""]"\nq2,"[""z""]"\nq3,oops\n'
    log, rep = parse_rag_log(text, "log.csv")
    assert [r.line for r in log] == [2, 4]
    assert rep.errors[0].line == 5 and rep.errors[0].field == "contexts"
    assert "not a list" in rep.lines()[0] and '["first retrieved text"' in rep.lines()[0]


def test_tsv():
    log, rep = parse_rag_log('question\tcontexts\nq1\t["a"]\n', "log.tsv")
    assert rep.ok and log.rows[0].contexts == ("a",)


def test_missing_question_column_in_csv():
    log, rep = parse_rag_log("query_id,contexts\n1,[]\n", "x.csv")
    assert len(log) == 0
    assert rep.errors[0].line == 1 and "no question column" in rep.errors[0].message
    assert "'question' or 'user_input'" in rep.errors[0].message


def test_missing_question_column_in_jsonl():
    log, rep = parse_rag_log('{"q": "x", "contexts": []}\n', "x.jsonl")
    assert len(log) == 0 and "no question column (columns: contexts, q)" in rep.lines()[0]


def test_contexts_not_a_list():
    log, rep = parse_rag_log('{"question": "q", "contexts": "one text"}\n{"question": "q2", "contexts": ["t"]}\n',
                             "x.jsonl")
    assert _ids(log) == ["2"]
    e = rep.errors[0]
    assert (e.file, e.line, e.query_id, e.field) == ("x.jsonl", 1, "1", "contexts")
    assert "must be a list of texts, got str 'one text'" in e.message and "wrap it in a list" in e.message


def test_langchain_documents_as_contexts():
    row = {"question": "q", "contexts": [{"page_content": "alpha", "metadata": {}}, {"text": "beta"}]}
    log, rep = parse_rag_log(json.dumps(row), "x.jsonl")
    assert rep.ok and log.rows[0].contexts == ("alpha", "beta")


def test_ids_and_contexts_differ_in_length():
    row = {"question": "q", "contexts": ["a", "b"], "context_ids": ["x"]}
    log, rep = parse_rag_log(json.dumps(row), "x.jsonl")
    assert len(log) == 0 and "2 contexts but 1 context ids" in rep.lines()[0]


def test_duplicate_ids_error_and_duplicate_questions_warn():
    rows = [{"id": "a", "question": "Q one", "contexts": []}, {"id": "a", "question": "Q two", "contexts": []},
            {"id": "b", "question": "q  ONE", "contexts": ["t"]}]
    log, rep = parse_rag_log("\n".join(map(json.dumps, rows)), "x.jsonl")
    assert _ids(log) == ["a", "b"]
    assert [p.line for p in rep.errors] == [2] and "duplicate id 'a' (first at line 1)" in rep.errors[0].message
    msgs = [p.message for p in rep.warnings]
    assert any("no retrieved context" in m for m in msgs)
    assert any("same question as line 1" in m for m in msgs)


def test_empty_file_and_empty_question():
    for text in ("", "  \n", b"\xef\xbb\xbf"):
        log, rep = parse_rag_log(text, "e.jsonl")
        assert len(log) == 0 and "file is empty" in rep.lines()[0]
    log, rep = parse_rag_log('{"question": " ", "contexts": []}', "e.jsonl")
    assert "empty question" in rep.lines()[0]


def test_too_deep_json_is_a_message_not_a_recursion_error():
    deep = "[" * 100_000 + "]" * 100_000
    log, rep = parse_rag_log(deep, "deep.json")
    assert len(log) == 0 and "nested too deeply" in rep.lines()[0]
    log, rep = parse_rag_log('{"question": "q", "contexts": ' + deep + "}\n", "deep.jsonl")
    assert "nested too deeply" in rep.lines()[0] and rep.errors[0].line == 1


def test_invalid_json_names_the_line():
    _, rep = parse_rag_log('[\n{"question": "q", "contexts": []},\n{"question": }\n]', "bad.json")
    assert rep.errors[0].line == 3 and "invalid JSON" in rep.errors[0].message


def test_size_cap_and_not_utf8_and_extension():
    log, rep = parse_rag_log(b"x" * 101, "big.jsonl", max_bytes=100)
    assert "101 bytes; the limit is 100 bytes" in rep.lines()[0]
    log, rep = parse_rag_log(b'{"question": "\xff"}', "bad.jsonl")
    assert "not UTF-8 (byte 0xff" in rep.lines()[0]
    _, rep = parse_rag_log("{}", "log.txt")
    assert "unknown RAG log extension '.txt'" in rep.lines()[0]


def test_many_problems_are_capped():
    text = "\n".join(json.dumps({"question": f"q{i}", "contexts": "x"}) for i in range(300))
    _, rep = parse_rag_log(text, "many.jsonl")
    assert len(rep.errors) == 201 and "100 more problem(s) not listed (300 error(s) in all)" in rep.lines()[-1]


def test_read_and_load(tmp_path):
    p = tmp_path / "log.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in ROWS), encoding="utf-8")
    log, rep = read_rag_log(p)
    assert rep.ok and len(log) == 2 and log.source == str(p)
    assert len(load_rag_log(p)) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "contexts": 3}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:1.*must be a list"):
        load_rag_log(bad)
    with pytest.raises(InputError, match="file not found"):
        read_rag_log(tmp_path / "missing.jsonl")
    big = tmp_path / "big.jsonl"
    big.write_text("x" * 50, encoding="utf-8")
    _, rep = read_rag_log(big, max_bytes=10)
    assert "50 bytes; the limit is 10" in rep.lines()[0]


def test_looks_like_rag_log():
    assert looks_like_rag_log('{"question": "q", "contexts": []}', "a.jsonl")
    assert looks_like_rag_log("user_input,retrieved_contexts\n", "a.csv")
    assert not looks_like_rag_log('{"q1": {"d1": 1.0}}', "run.json")
    assert not looks_like_rag_log("query_id,chunk_id,score\n", "run.csv")
    assert not looks_like_rag_log("q1 Q0 d1 1 2.0 t\n", "run.trec")
