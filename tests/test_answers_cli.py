"""``rag-metrics answers``: offline and LLM judge (loopback server), JSON shape, exit codes."""
from __future__ import annotations

import json

import pytest
from answers_server import JudgeServer, Scenario

from rag_metrics.cli import main

ROWS = [
    {"id": "r1", "question": "How much storage does Free have?", "answer": "The Free plan has 2 GB of storage.",
     "contexts": ["Free accounts have 2 GB of storage in total."], "ground_truth": "2 GB."},
    {"id": "r2", "question": "How much is Plus?", "response": "Plus costs $6 per month.",
     "retrieved_contexts": ["Plus costs $6 per month, or $60 per year."]},
    {"id": "r3", "question": "Is there a watch app?", "answer": "", "contexts": ["There is no watch app."]},
]


@pytest.fixture()
def log(tmp_path):
    p = tmp_path / "log.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    return p


def test_offline_json_shape(log, capsys):
    assert main(["answers", "--data", str(log), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_items"] == 3
    assert out["judge"].startswith("offline:")
    assert list(out["metrics"]) == ["context_support", "answer_question_similarity", "semantic_similarity",
                                    "string_similarity"]
    assert set(out["per_item"]) == {"r1", "r2", "r3"}
    assert out["per_item"]["r2"]["semantic_similarity"] is None  # no ground truth
    assert out["per_item"]["r3"]["context_support"] is None
    assert out["not_scored"]["r3"]["context_support"] == "empty_answer"
    # one item has a ground truth: the mean is that item's value
    assert out["metrics"]["semantic_similarity"] == pytest.approx(out["per_item"]["r1"]["semantic_similarity"])
    assert 0.5 < out["per_item"]["r1"]["context_support"] <= 1.0


def test_llm_judge_json_and_fail_under(log, capsys):
    sc = Scenario(unsupported={"Plus costs $6 per month."})
    with JudgeServer(sc) as srv:
        args = ["answers", "--data", str(log), "--judge-url", srv.base_url, "--judge-model", "m",
                "--embed-model", "e", "--no-cache", "--format", "json"]
        assert main(args + ["--fail-under", "faithfulness=0.4"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert main(args + ["--fail-under", "faithfulness=0.6"]) == 1
        err = capsys.readouterr().err
    assert list(out["metrics"]) == ["faithfulness", "answer_relevancy", "semantic_similarity", "string_similarity"]
    assert out["per_item"]["r1"]["faithfulness"] == 1.0
    assert out["per_item"]["r2"]["faithfulness"] == 0.0
    assert out["metrics"]["faithfulness"] == pytest.approx(0.5)  # r3 (empty) is not averaged in
    assert out["not_scored"]["r3"] == {"faithfulness": "empty_answer", "answer_relevancy": "empty_answer",
                                       "string_similarity": "no_ground_truth", "semantic_similarity": "no_ground_truth"}
    assert "FAIL faithfulness = 0.5000 < 0.6" in err
    assert "judge calls" in err


def test_table_and_csv(log, capsys):
    assert main(["answers", "--data", str(log), "--per-item"]) == 0
    out = capsys.readouterr().out
    assert "context_support" in out and "r3" in out and "empty_answer" in out
    assert main(["answers", "--data", str(log), "--format", "csv", "--per-item"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("id,system,context_support")
    assert len(lines) == 4


@pytest.mark.parametrize("extra, message", [
    (["--judge-url", "http://localhost:1/v1"], "needs --judge-url URL and --judge-model"),
    (["--fail-under", "faithfulness=0.8"], "not computed by this judge"),
    (["--fail-under", "context_support=2"], "outside [0, 1]"),
    (["--judge-url", "ftp://x", "--judge-model", "m"], "must be http(s)"),
])
def test_bad_options_exit_2(log, capsys, extra, message):
    assert main(["answers", "--data", str(log)] + extra) == 2
    assert message in capsys.readouterr().err


def test_bad_file_names_line(tmp_path, capsys):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"question": "q", "answer": "a", "contexts": ["c"]}\n{"answer": "x", "contexts": []}\n')
    assert main(["answers", "--data", str(p)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:2" in err and "question" in err


def test_the_lesson_ragas_dataset_shape(tmp_path, capsys):
    # the columnar dict the lesson passes to ragas.evaluate (Dataset.from_dict)
    data = {"question": ["How much storage does Free have?", "How much is Plus?"],
            "answer": ["The Free plan has 2 GB of storage.", "Plus costs $6 per month."],
            "contexts": [["Free accounts have 2 GB of storage in total."], ["Plus costs $6 per month."]],
            "ground_truth": ["2 GB.", "$6 per month."]}
    p = tmp_path / "ragas_dataset.json"
    p.write_text(json.dumps(data))
    assert main(["answers", "--data", str(p), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_items"] == 2 and list(out["per_item"]) == ["1", "2"]  # ids are row numbers
    assert out["per_item"]["2"]["string_similarity"] == pytest.approx(
        __import__("rapidfuzz").fuzz.ratio("$6 per month.", "Plus costs $6 per month.",
                                           processor=__import__("rapidfuzz").utils.default_process) / 100)
    assert out["per_item"]["2"]["context_support"] == pytest.approx(1.0, abs=1e-5)  # the sentence is the context
