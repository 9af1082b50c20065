"""The column mapping (``--map``, :mod:`rag_metrics.io.mapping`): the spec's errors name the bad key
and the valid ones; each of the three real shapes of docs/your-files.md#column-mapping, in a small file
made here, reads to the right rows with the exact mapping the docs show; the CLI takes it."""
from __future__ import annotations

import json

import pytest

from rag_metrics.errors import InputError
from rag_metrics.formats import describe_bytes
from rag_metrics.io.mapping import apply_mapping, field_paths, parse_map, preview_rows, read_rows, shape_key
from rag_metrics.systems.uploads import parse_upload

#: The mappings docs/your-files.md shows, one per real shape.
PHOENIX_MAP = ("question=attributes.input.value,ids=attributes.retrieval.documents[].document.id,"
               "scores=attributes.retrieval.documents[].document.score,"
               "contexts=attributes.retrieval.documents[].document.content")
DEEPEVAL_MAP = "question=input,contexts=retrieval_context,answer=actual_output,reference=expected_output"
RECIPE_MAP = "query_id=id,question=question,labels=gold_chunk_id"


@pytest.mark.parametrize("spec, words", [
    ("qestion=query,contexts=c", ["unknown key 'qestion'", "question, query_id, contexts, ids, scores, answer"]),
    ("question", ["'question' is not KEY=FIELD"]),
    ("question=,contexts=c", ["question= names no field"]),
    ("question=a,question=b,ids=c", ["question is given twice"]),
    ("contexts=c", ["name the question"]),
    ("question=q", ["name what was retrieved"]),
    ("question=a]b,ids=c", ["brackets go after a field name"]),
])
def test_a_bad_spec_names_the_key_and_the_valid_ones(spec, words):
    with pytest.raises(InputError) as e:
        parse_map(spec)
    assert all(w in str(e.value) for w in words), str(e.value)


def test_phoenix_span_json_dotted_keys_and_lists_of_documents():
    """Phoenix span JSON (real-artifacts/phoenix/span_json_decoder_retriever_span.jsonl): keys that hold dots
    ("input.value", "document.id") inside nested objects; documents listed lowest score first here."""
    span = {"name": "retrieve", "span_kind": "RETRIEVER", "context": {"trace_id": "t1"},
            "attributes": {"input.value": "How do I upload a model?", "retrieval.documents": [
                {"document.id": "d2", "document.score": 0.5, "document.content": "second"},
                {"document.id": "d1", "document.score": 0.8, "document.content": "first"}]}}
    data = (json.dumps(span) + "\n").encode()
    rows, _, _ = read_rows(data, "spans.jsonl")
    assert "attributes.retrieval.documents[].document.id" in field_paths(rows)
    mapped, name = apply_mapping(data, "spans.jsonl", PHOENIX_MAP)
    (row,) = [json.loads(x) for x in mapped.splitlines()]
    assert row == {"question": "How do I upload a model?", "contexts": ["first", "second"],
                   "context_ids": ["d1", "d2"]}  # ranked by score, highest first
    got = describe_bytes(data, "spans.jsonl", mapping=PHOENIX_MAP)
    assert got.kind == "rag_log" and got.log.rows[0].context_ids == ("d1", "d2")


def test_deepeval_dataset_a_row_without_retrieval_context_retrieved_nothing():
    """DeepEval EvaluationDataset JSON (real-artifacts/deepeval/goldens.json): input, actual_output,
    expected_output, retrieval_context; its last test case has no retrieval_context at all."""
    cases = [{"input": "Capital of France?", "actual_output": "Paris.", "expected_output": "Paris",
              "retrieval_context": ["Paris is the capital of France.", "France is in Europe."]},
             {"input": "Capital of Spain?", "actual_output": "Madrid."}]
    data = json.dumps(cases).encode()
    got = describe_bytes(data, "goldens.json", mapping=DEEPEVAL_MAP)
    assert got.kind == "rag_log" and len(got.log.rows) == 2
    first, second = got.log.rows
    assert first.contexts == ("Paris is the capital of France.", "France is in Europe.")
    assert first.answer == "Paris." and first.ground_truth == "Paris"
    assert second.contexts == () and any("retrieving nothing" in w for w in got.warnings)


def test_a_golden_set_whose_label_field_has_another_name():
    """A hand-written golden set (real-artifacts/custom/recipe_golden_set.jsonl): id, question,
    gold_chunk_id and fields the lab does not use."""
    rows = [{"id": "g01", "question": "rock salt in the idli batter?", "gold_chunk_id": "idli::0",
             "also_acceptable": [], "exact_token": "16g"},
            {"id": "g02", "question": "kallappam hydration?", "gold_chunk_id": "kallappam::2",
             "also_acceptable": ["kallappam::0"], "exact_token": "84%"}]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    got = describe_bytes(data, "golden_set.jsonl", mapping=RECIPE_MAP)
    assert got.kind == "golden" and [q.id for q in got.golden] == ["g01", "g02"]
    assert got.golden.get("g02").relevant == {"kallappam::2": 1}


def test_a_csv_with_list_literal_cells_and_a_run_of_ids_and_scores():
    csv = b'qid,hits\nq1,"[{""doc"": ""b"", ""s"": 0.1}, {""doc"": ""a"", ""s"": 0.9}]"\n'
    system, report = parse_upload(csv, "hits.csv", mapping="query_id=qid,ids=hits[].doc,scores=hits[].s")
    assert report.ok and system is not None
    run = system.rank({"q1": "anything"}, 10).run
    assert [i for i, _ in run.rankings()["q1"]] == ["a", "b"]


def test_a_path_that_no_row_has_or_that_is_not_a_list_is_a_clear_refusal():
    data = b'{"query": "q", "results": [{"text": "t"}]}\n'
    with pytest.raises(InputError) as e:
        apply_mapping(data, "log.jsonl", "question=query,ids=results[].id")
    assert "log.jsonl" in str(e.value) and "row 1: ids=results[].id: no field 'id' in results[0] (fields: 'text')" \
        in str(e.value)
    with pytest.raises(InputError) as e:
        apply_mapping(data, "log.jsonl", "question=query,ids=hits[].id")
    assert "no row has the field of ids=hits[].id; the fields are query, results, results[].text" in str(e.value)
    with pytest.raises(InputError) as e:
        apply_mapping(data, "log.jsonl", "question=query[],contexts=results[].text")
    assert "row 1" in str(e.value) and "query is str, not a list" in str(e.value)


def test_preview_and_shape():
    data = b'{"query": "q1", "results": [{"text": "t"}]}\n{"query": "q2", "results": []}\n'
    assert preview_rows(data, "log.jsonl", "question=query,contexts=results[].text", n=1) == [
        {"question": "q1", "contexts": ["t"]}]
    assert shape_key(read_rows(data, "log.jsonl")[0]) == "query,results"


def test_the_cli_takes_map_and_qrels_map(tmp_path, capsys):
    from rag_metrics.cli import main

    (tmp_path / "golden.jsonl").write_text('{"ref": "g1", "q": "what is alpha", "expected_chunk_id": "a"}\n'
                                           '{"ref": "g2", "q": "what is beta", "expected_chunk_id": "b"}\n')
    (tmp_path / "log.jsonl").write_text(
        '{"query": "what is alpha", "results": [{"id": "x", "score": 0.2}, {"id": "a", "score": 0.9}]}\n'
        '{"query": "what is beta", "results": [{"id": "x", "score": 0.5}, {"id": "b", "score": 0.4}]}\n')
    args = ["evaluate", "--qrels", str(tmp_path / "golden.jsonl"), "--run", str(tmp_path / "log.jsonl"),
            "--metrics", "mrr", "--k", "10", "--format", "json",
            "--qrels-map", "query_id=ref,question=q,labels=expected_chunk_id",
            "--map", "question=query,ids=results[].id,scores=results[].score"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"]["mrr@10"] == pytest.approx(0.75)  # alpha at rank 1, beta at rank 2
    assert main(args[:-1] + ["qestion=query"]) == 2
    assert "unknown key 'qestion'" in capsys.readouterr().err
    assert main(["validate", str(tmp_path / "golden.jsonl"), "--qrels-map", args[args.index("--qrels-map") + 1],
                 "--run", str(tmp_path / "log.jsonl"), "--map", args[-1]]) == 0
    assert "2 queries" in capsys.readouterr().out


def test_the_docs_show_these_exact_mappings_and_they_read_the_real_files():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    docs = (root / "docs" / "your-files.md").read_text()
    assert all(spec in docs for spec in (PHOENIX_MAP, DEEPEVAL_MAP, RECIPE_MAP))
    real = root.parent / "shared" / "real-artifacts"
    if not real.is_dir():
        pytest.skip("needs ../shared/real-artifacts")
    for path, spec, kind, n in (("phoenix/span_json_decoder_retriever_span.jsonl", PHOENIX_MAP, "rag_log", 1),
                                ("deepeval/goldens.json", DEEPEVAL_MAP, "rag_log", 4),
                                ("custom/recipe_golden_set.jsonl", RECIPE_MAP, "golden", 12)):
        got = describe_bytes((real / path).read_bytes(), path, mapping=spec)
        assert got.kind == kind and len(got.log.rows if got.log is not None else got.golden) == n, path


def test_answers_takes_map(tmp_path, capsys):
    from rag_metrics.cli import main

    (tmp_path / "log.jsonl").write_text(
        '{"prompt": "What is alpha?", "output": "Alpha is the first letter.", "docs": [{"t": "Alpha is the first '
        'letter of the Greek alphabet."}]}\n')
    args = ["answers", "--data", str(tmp_path / "log.jsonl"), "--format", "json"]
    assert main(args) == 2  # no question field the reader knows
    capsys.readouterr()
    assert main(args + ["--map", "qestion=prompt,contexts=docs[].t"]) == 2
    assert "unknown key 'qestion'" in capsys.readouterr().err  # the option reaches the reader
    from rag_metrics.answers.data import read_answers

    (item,), report = read_answers(tmp_path / "log.jsonl", mapping="question=prompt,answer=output,contexts=docs[].t")
    assert report.ok and item.question == "What is alpha?" and item.answer == "Alpha is the first letter."
    assert item.contexts == ("Alpha is the first letter of the Greek alphabet.",) and item.system == "log"


@pytest.mark.parametrize("data, spec", [
    (b'["just", "strings"]', "question=q,contexts=c"),
    (b'{"q": "x", "r": [{"id": "a", "s": "high"}]}\n', "question=q,ids=r[].id,scores=r[].s"),
    (b'{"q": "x", "r": [{"id": "a", "s": 1}, {"id": "b"}]}\n', "question=q,ids=r[].id,scores=r[].s"),
    (b'{"q": {"text": "x"}, "c": ["a"]}\n', "question=q,contexts=c"),
    (b'{"q": "x", "c": [["nested"]]}\n', "question=q,contexts=c"),
    (b'{"q": "x", "c": ["a"]}\n', "question=q,contexts=c[5]"),
    (b'q,c\n"x","[unclosed"\n', "question=q,contexts=c[]"),
    (b"\xff\xfe", "question=q,contexts=c"),
    (b"", "question=q,contexts=c"),
])
def test_an_odd_shape_is_a_clear_refusal_never_a_crash(data, spec):
    with pytest.raises(InputError) as e:
        describe_bytes(data, "odd.jsonl" if not data.startswith(b"q,") else "odd.csv", mapping=spec)
    assert str(e.value).startswith("odd."), str(e.value)


def test_a_result_without_its_score_is_named_not_ranked_silently():
    data = b'{"q": "x", "r": [{"id": "a", "s": 1}, {"id": "b", "s": 2}]}\n{"q": "y", "r": [{"id": "a"}]}\n'
    with pytest.raises(InputError) as e:
        apply_mapping(data, "log.jsonl", "question=q,ids=r[].id,scores=r[].s")
    assert "row 2: scores=r[].s: no field 's' in r[0]" in str(e.value)


def test_a_trec_file_given_a_mapping_is_named_not_a_table():
    with pytest.raises(InputError) as e:
        apply_mapping(b"q1 Q0 d1 1 1.0 run\n", "run.trec", "question=q,ids=d")
    assert "run.trec: not a table with named fields" in str(e.value)
