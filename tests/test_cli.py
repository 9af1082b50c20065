"""The CLI end to end: outputs, exit codes, and a one-line message for every bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rag_metrics.cli import main

QRELS = "1 0 a 1\n1 0 c 1\n2 0 x 2\n2 0 y 0\n"
RUN = "1 Q0 b 1 4 t\n1 Q0 a 2 3 t\n1 Q0 d 3 2 t\n1 Q0 c 4 1 t\n2 Q0 y 1 2 t\n2 Q0 x 2 1 t\n"


@pytest.fixture
def files(tmp_path):
    q = tmp_path / "q.qrels"
    r = tmp_path / "r.trec"
    q.write_text(QRELS)
    r.write_text(RUN)
    return tmp_path, q, r


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_evaluate_json_keys_and_values(files, capsys):
    _, q, r = files
    code, out, err = run_cli(capsys, "evaluate", "--qrels", str(q), "--run", str(r), "--k", "1,3",
                             "--metrics", "precision,ndcg,mrr", "--format", "json", "--per-query")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["n_queries"] == 2
    assert set(doc["metrics"]) == {"precision@1", "precision@3", "ndcg@1", "ndcg@3", "mrr@1", "mrr@3"}
    # q1: P@3 = 1/3; q2: ranking y(0) x(2): P@3 = 1/3 -> mean 1/3
    assert doc["metrics"]["precision@3"] == pytest.approx(1 / 3)
    assert doc["per_query"]["1"]["ndcg@3"] == pytest.approx(0.38685280723454163)
    assert doc["per_query"]["2"]["mrr@1"] == 0 and doc["per_query"]["2"]["mrr@3"] == 0.5


def test_evaluate_range_of_k_and_table(files, capsys):
    _, q, r = files
    code, out, _ = run_cli(capsys, "evaluate", "--qrels", str(q), "--run", str(r), "--k", "1-100")
    assert code == 0
    assert "\n100 " in out and "hit_rate" in out


def test_evaluate_csv(files, capsys):
    _, q, r = files
    code, out, _ = run_cli(capsys, "evaluate", "--qrels", str(q), "--run", str(r), "--k", "3", "--metrics", "map",
                           "--format", "csv")
    assert code == 0
    assert out.splitlines()[0] == "query_id,metric,k,value"
    assert out.splitlines()[1].startswith("all,map,3,")


def test_fail_under(files, capsys):
    _, q, r = files
    code, _, err = run_cli(capsys, "evaluate", "--qrels", str(q), "--run", str(r), "--fail-under", "ndcg@10=0.99")
    assert code == 1 and "FAIL ndcg@10" in err
    code, _, _ = run_cli(capsys, "evaluate", "--qrels", str(q), "--run", str(r), "--fail-under", "hit_rate@5=0.5")
    assert code == 0


def test_golden_set_as_qrels_and_document_level(tmp_path, capsys):
    g = tmp_path / "g.jsonl"
    g.write_text(json.dumps({"id": "1", "question": "q?", "relevant": {"doc#0": 1}}) + "\n")
    r = tmp_path / "r.trec"
    r.write_text("1 Q0 doc#1 1 3 t\n1 Q0 doc#0 2 2 t\n1 Q0 other#0 3 1 t\n")
    code, out, _ = run_cli(capsys, "evaluate", "--qrels", str(g), "--run", str(r), "--k", "2",
                           "--metrics", "precision", "--format", "json")
    assert json.loads(out)["metrics"]["precision@2"] == 0.5
    code, out, _ = run_cli(capsys, "evaluate", "--qrels", str(g), "--run", str(r), "--k", "2",
                           "--metrics", "precision", "--format", "json", "--level", "document")
    assert json.loads(out)["metrics"]["precision@2"] == 0.5  # doc, other: 1 of 2


def test_compare_runs(files, capsys):
    tmp, q, r = files
    r2 = tmp / "r2.trec"
    r2.write_text("1 Q0 a 1 4 t\n1 Q0 c 2 3 t\n2 Q0 x 1 2 t\n")
    code, out, _ = run_cli(capsys, "compare", "--qrels", str(q), "--run", str(r), "--run", str(r2), "--format", "json")
    assert code == 0
    rows = {f"{x['metric']}@{x['k']}": x for x in json.loads(out)["rows"]}
    assert rows["ndcg@5"]["mean_b"] == pytest.approx(1.0)
    assert "verdict" in rows["ndcg@5"]


def test_validate_exit_codes(tmp_path, capsys):
    good = tmp_path / "g.jsonl"
    good.write_text(json.dumps({"question": "q?", "relevant_chunk_ids": ["a"]}) + "\n")
    assert run_cli(capsys, "validate", str(good))[0] == 0
    bad = tmp_path / "b.jsonl"
    bad.write_text(json.dumps({"question": "", "relevant_chunk_ids": ["a"]}) + "\n{oops\n")
    code, out, _ = run_cli(capsys, "validate", str(bad))
    assert code == 1
    assert "b.jsonl:1" in out and "empty question" in out and "b.jsonl:2" in out and "invalid JSON" in out


BAD = [
    (["evaluate", "--qrels", "{q}", "--run", "{missing}"], "file not found"),
    (["evaluate", "--qrels", "{missing}", "--run", "{r}"], "file not found"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--k", "0"], "--k: cutoffs must be >= 1"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--k", "ten"], "--k: cannot read 'ten'"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--k", "10-1"], "runs backwards"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--metrics", "f1"], "unknown metric 'f1'"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--metrics", "precision@x"], "cannot read"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--fail-under", "ndcg@10"], "write METRIC@K=VALUE"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--fail-under", "ndcg@10=high"], "is not a number"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--fail-under", "ndcg@10=2"], "outside [0, 1]"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--fail-under", "hit_rate=0.5"], "needs a cutoff"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--relevance-level", "0"],
     "relevance level must be an integer >= 1"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--relevance-level", "x"], "invalid int value"),
    (["evaluate", "--qrels", "{q}", "--run", "{r}", "--format", "xml"], "invalid choice"),
    (["evaluate", "--qrels", "{q}", "--run", "{badrun}"], "badrun.trec:2: expected 6 fields"),
    (["evaluate", "--qrels", "{badqrels}", "--run", "{r}"], "bad.qrels:1: grade 'rel' is not an integer"),
    (["evaluate", "--qrels", "{empty}", "--run", "{r}"], "is empty"),
    (["evaluate", "--qrels", "{q}", "--run", "{empty}"], "is empty"),
    (["evaluate", "--qrels", "{latin1}", "--run", "{r}"], "not UTF-8"),
    (["evaluate", "--qrels", "{q}", "--run", "{dir}"], "is a folder"),
    (["evaluate", "--qrels", "{badjson}", "--run", "{r}"], "bad.json:2: invalid JSON"),
    (["evaluate", "--qrels", "{q}", "--run", "{nanrun}"], "NaN"),
    (["compare", "--qrels", "{q}", "--run", "{r}"], "give exactly two runs"),
    (["evaluate", "--qrels", "{q}"], "required: --run"),
    (["frobnicate"], "invalid choice"),
    (["validate", "{txt}"], "file is empty"),
    (["evaluate", "--qrels", "{corpus}", "--run", "{r}"], "no query has a relevant id"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[" ".join(a[:1] + a[-2:]) for a, _ in BAD])
def test_bad_input_one_line_exit_2(files, capsys, argv, message):
    tmp, q, r = files
    paths = {
        "q": q, "r": r, "missing": tmp / "nope.trec", "dir": tmp,
        "badrun": tmp / "badrun.trec", "badqrels": tmp / "bad.qrels", "empty": tmp / "empty.txt",
        "latin1": tmp / "latin1.qrels", "badjson": tmp / "bad.json", "nanrun": tmp / "nan.trec",
        "txt": tmp / "notes.txt", "corpus": tmp / "corpus.jsonl", "other": tmp / "other.trec",
    }
    paths["corpus"].write_text('{"id": "d1", "text": "some text"}\n')
    paths["other"].write_text("zz Q0 a 1 1 t\n")
    paths["badrun"].write_text("1 Q0 a 1 3 t\n1 Q0 b 2\n")
    paths["badqrels"].write_text("1 0 a rel\n")
    paths["empty"].write_text("")
    paths["latin1"].write_bytes("1 0 caf\xe9 1\n".encode("latin-1"))
    paths["badjson"].write_text("[{\"question\": \n")
    paths["nanrun"].write_text("1 Q0 a 1 nan t\n")
    paths["txt"].write_text("\n\n")
    argv = [a.format(**paths) for a in argv]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2, (out, err)
    assert message in err, err
    errors = [line for line in err.strip().splitlines() if " error: " in line]
    assert len(errors) == 1 and message in errors[0], err  # warnings may precede the one error line
    assert "Traceback" not in err


def test_module_entry_point_and_console_script(files):
    _, q, r = files
    p = subprocess.run([sys.executable, "-m", "rag_metrics", "evaluate", "--qrels", str(q), "--run", str(r),
                        "--format", "json"], capture_output=True, text=True)
    assert p.returncode == 0 and json.loads(p.stdout)["n_queries"] == 2
    p = subprocess.run([sys.executable, "-m", "rag_metrics", "evaluate", "--qrels", str(q)],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_import_is_light():
    code = ("import sys, rag_metrics, rag_metrics.evaluation, rag_metrics.io.trec, rag_metrics.io.golden, "
            "rag_metrics.compare.paired, rag_metrics.cli, rag_metrics.retrieval; "
            "bad = [m for m in ('streamlit', 'torch', 'sentence_transformers', 'faiss', 'bm25s', 'altair') "
            "if m in sys.modules]; "
            "print(','.join(bad))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ""


def test_the_cli_starts_without_pandas_or_scipy():
    """Building the parser (every command's options and their defaults) loads neither pandas nor SciPy:
    a command that needs them imports them itself.  (``rag-metrics --help`` took 0.6-0.8 s when the gate's
    defaults came with the comparison module; now about 0.25 s.)"""
    code = ("import sys; from rag_metrics.cli import build_parser; build_parser().format_help(); "
            "print(','.join(m for m in ('pandas', 'scipy') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ""


def test_library_never_imports_streamlit():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "rag_metrics"
    offenders = [str(p) for p in root.rglob("*.py") if "import streamlit" in p.read_text(encoding="utf-8")
                 or "from streamlit" in p.read_text(encoding="utf-8")]
    assert offenders == []


def test_every_subcommand_is_registered_from_one_list(capsys):
    import rag_metrics.cli as cli

    assert cli.SUBCOMMANDS == ("evaluate", "compare", "validate", "gate", "retrieve", "report", "answers",
                               "judge-relevance", "draft", "exercise", "sweep")
    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == list(cli.SUBCOMMANDS)


def test_a_subcommand_that_fails_to_import_is_an_error_not_skipped(monkeypatch, capsys, files):
    import importlib

    import rag_metrics.cli as cli

    real = importlib.import_module

    def fake_import(name, *a, **kw):
        if name == "rag_metrics.cli.report":
            raise ImportError("No module named 'vl_convert'")
        return real(name, *a, **kw)

    monkeypatch.setattr(cli.importlib, "import_module", fake_import)
    monkeypatch.delenv("RAG_METRICS_DEBUG", raising=False)
    _, q, r = files
    code, out, err = run_cli(capsys, "evaluate", "--qrels", str(q), "--run", str(r))
    assert code == 2 and out == ""
    assert err.strip() == ("rag-metrics: error: the 'report' command cannot be loaded (ImportError: No module "
                           "named 'vl_convert'); reinstall rag-metrics with its requirements "
                           "(set RAG_METRICS_DEBUG=1 for details)")
    assert "Traceback" not in err


def test_a_subcommand_module_without_run_is_an_error(monkeypatch, capsys):
    import types

    import rag_metrics.cli as cli

    broken = types.ModuleType("rag_metrics.cli.broken")
    broken.add_parser = lambda sub: sub.add_parser("broken")
    monkeypatch.setitem(sys.modules, "rag_metrics.cli.broken", broken)
    monkeypatch.setattr(cli, "SUBCOMMANDS", cli.SUBCOMMANDS + ("broken",))
    code, out, err = run_cli(capsys, "--help")
    assert code == 2 and out == ""
    assert "the 'broken' command module rag_metrics.cli.broken lacks run" in err
