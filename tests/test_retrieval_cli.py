"""``rag-metrics retrieve`` end to end on a tiny BEIR folder (fast: BM25 and the hashing encoder)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_metrics.cli import main
from rag_metrics.cli.retrieve import load_queries

DOCS = {
    "1": ("Refund policy", "Refunds are issued within 14 days of purchase. Contact billing."),
    "2": ("Offline mode", "Notes sync when you reconnect. Offline edits are merged."),
    "3": ("Two-factor login", "Enable two-factor authentication in the security settings."),
    "4": ("Title only", ""),
}
QUERIES = {"q1": "how do I get a refund", "q2": "enable two-factor authentication",
           "q3": "sync offline notes"}


@pytest.fixture()
def beir(tmp_path: Path) -> Path:
    d = tmp_path / "tiny"
    d.mkdir()
    (d / "corpus.jsonl").write_text(
        "".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, (t, x) in DOCS.items()))
    (d / "queries.jsonl").write_text(
        "".join(json.dumps({"id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    (d / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t1\t1\nq2\t3\t1\nq3\t2\t1\n")
    return d


def _read_run(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()]


@pytest.mark.parametrize("retriever", ["bm25", "dense", "hybrid"])
def test_retrieve_document_level_then_evaluate(beir: Path, tmp_path: Path, retriever: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"{retriever}.trec"
    rc = main(["retrieve", "--corpus", str(beir), "--queries", str(beir / "queries.jsonl"),
               "--retriever", retriever, "--model", "hashing-256", "--cache-dir",
               str(tmp_path / "cache"), "--level", "document", "--k", "3", "--out", str(out)])
    assert rc == 0
    rows = _read_run(out)
    assert all(len(r) == 6 and r[1] == "Q0" for r in rows)
    by_q: dict[str, list[list[str]]] = {}
    for r in rows:
        by_q.setdefault(r[0], []).append(r)
    for q, rs in by_q.items():
        assert [int(r[3]) for r in rs] == list(range(1, len(rs) + 1))  # ranks from 1
        scores = [float(r[4]) for r in rs]
        assert scores == sorted(scores, reverse=True)
        assert len(rs) <= 3 and all("#" not in r[2] for r in rs)  # document ids
    if retriever == "bm25":
        assert by_q["q1"][0][2] == "1" and by_q["q2"][0][2] == "3"
    err = capsys.readouterr().err
    assert "4 documents" in err and "wrote" in err
    # the run can be scored by the metric CLI
    assert main(["evaluate", "--qrels", str(beir), "--run", str(out), "--k", "1,3"]) == 0


def test_retrieve_chunk_level_with_golden_set(beir: Path, tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "g1", "question": "refund please", "category": "factual",
                                  "relevant": {"1#0": 2}}) + "\n")
    out = tmp_path / "run.trec"
    assert main(["retrieve", "--corpus", str(beir), "--queries", str(golden), "--retriever",
                 "bm25", "--out", str(out)]) == 0
    rows = _read_run(out)
    assert rows[0][:3] == ["g1", "Q0", "1#0"]


def test_load_queries_accepts_beir_folder(beir: Path) -> None:
    assert load_queries(beir) == QUERIES


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--chunk-size", "10"], "chunk size must be at least 50 characters, got 10"),
        (["--chunk-overlap", "600"], "chunk overlap (600) must be smaller than chunk size (500)"),
        (["--k", "0"], "--k must be at least 1, got 0."),
    ],
)
def test_bad_arguments_exit_2_with_one_line(beir: Path, tmp_path: Path, extra: list[str],
                                            message: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["retrieve", "--corpus", str(beir), "--queries", str(beir), "--retriever", "bm25",
               "--out", str(tmp_path / "r.trec"), *extra])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("rag-metrics retrieve: error: ") and message in err[-1]


def test_missing_queries_file(beir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["retrieve", "--corpus", str(beir), "--queries", str(tmp_path / "nope.jsonl"),
               "--out", str(tmp_path / "r.trec")])
    assert rc == 2
    assert "nope.jsonl: queries file not found" in capsys.readouterr().err
