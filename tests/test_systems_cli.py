"""CLI numbers equal library numbers: RAG logs and CSV runs as ``evaluate --run``, and
``retrieve --backend http|qdrant`` writing a TREC run."""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from loopback import serve_in_thread

from rag_metrics.cli import main
from rag_metrics.evaluation import evaluate
from rag_metrics.io.corpus import load_corpus
from rag_metrics.io.golden import load_golden
from rag_metrics.io.raglog import read_rag_log
from rag_metrics.io.trec import load_run
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.retrieval.chunking import chunk_corpus, chunk_to_doc
from rag_metrics.systems.uploads import RagLogSystem, load_upload

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "sample_corpus" / "docs"
GOLDEN_PATH = ROOT / "sample_corpus" / "golden.jsonl"
KEYS = ["hit_rate@5", "mrr@10", "precision@3", "recall@10", "ndcg@10", "map@10", "judged@5"]


@pytest.fixture(scope="module")
def sample():
    chunks = chunk_corpus(load_corpus(DOCS))
    return load_golden(GOLDEN_PATH), chunks


def _rag_log(golden, chunks) -> list[dict]:
    """A RAG log over the sample golden set: exact, edited (fuzzy) and foreign contexts, no ids."""
    text = {c.id: c.text for c in chunks}
    rows = []
    for n, q in enumerate(golden):
        ids = [c.id for c in chunks[n % 7::11]][:4]
        rel = [i for i in q.relevant if i in text][:1]
        ctx = [text[i] for i in ids[:2]]
        if rel:
            ctx.append(text[rel[0]].upper())  # exact after case folding
        if ids[2:3]:
            ctx.append(text[ids[2]][:-3] + "...")  # edited ending: fuzzy
        ctx.append(f"An answer snippet from another system number {n}.")  # unmatched
        rows.append({"question": q.question.lower(), "contexts": ctx, "answer": "x"})
    return rows[:-2]  # two golden questions are missing from the log


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _eval_json(capsys, run_path, *extra) -> dict:
    code, out, err = _cli(capsys, "evaluate", "--qrels", GOLDEN_PATH, "--run", run_path, "--metrics",
                          ",".join(KEYS), "--format", "json", *extra)
    assert code == 0, err
    return json.loads(out)["metrics"]


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_rag_log_evaluate_equals_library(sample, tmp_path, capsys, suffix):
    golden, chunks = sample
    rows = _rag_log(golden, chunks)
    p = tmp_path / f"log{suffix}"
    if suffix == ".jsonl":
        p.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    elif suffix == ".json":
        p.write_text(json.dumps({k: [r[k] for r in rows] for k in rows[0]}), encoding="utf-8")  # columnar
    else:
        import csv

        with open(p, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["question", "contexts", "answer"])
            for r in rows:
                w.writerow([r["question"], json.dumps(r["contexts"]), r["answer"]])
    got = _eval_json(capsys, p, "--corpus", DOCS)
    log, rep = read_rag_log(p)
    assert rep.ok
    sr = RagLogSystem(log, chunks).rank(golden.questions(), 1000)
    assert sr.context_match.fuzzy > 0 and sr.context_match.unmatched > 0 and sr.context_match.exact > 0
    res = evaluate(golden, sr.run)
    for k in KEYS:
        assert got[k] == pytest.approx(res.mean(k), abs=1e-12), k
    assert 0 < got["mrr@10"] < 1
    # document level, as today
    got_doc = _eval_json(capsys, p, "--corpus", DOCS, "--level", "document")
    res_doc = evaluate(golden, sr.run, EvalOptions(level="document"), chunk_to_doc=chunk_to_doc(chunks))
    assert got_doc["ndcg@10"] == pytest.approx(res_doc.mean("ndcg@10"), abs=1e-12)


def test_rag_log_without_corpus_is_one_clear_line(sample, tmp_path, capsys):
    golden, chunks = sample
    p = tmp_path / "log.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in _rag_log(golden, chunks)), encoding="utf-8")
    code, _, err = _cli(capsys, "evaluate", "--qrels", GOLDEN_PATH, "--run", p)
    assert code == 2 and "pass --corpus PATH" in err and len(err.strip().splitlines()) == 1


def test_csv_run_and_trec_run_give_the_same_numbers(sample, tmp_path, capsys):
    golden, chunks = sample
    trec = tmp_path / "r.trec"
    csvp = tmp_path / "r.csv"
    lines, rows = [], ["query_id,chunk_id,score"]
    for n, q in enumerate(golden):
        for r, c in enumerate(chunks[n % 5::9][:20]):
            lines.append(f"{q.id} Q0 {c.id} {r + 1} {1.0 / (r + 1) if r % 4 else 0.5} t")
            rows.append(f"{q.id},{c.id},{1.0 / (r + 1) if r % 4 else 0.5}")  # ties at 0.5
    trec.write_text("\n".join(lines) + "\n")
    csvp.write_text("\n".join(rows) + "\n")
    a = _eval_json(capsys, trec)
    b = _eval_json(capsys, csvp)
    res = evaluate(golden, load_upload(str(csvp)).rank(golden.questions(), 1000).run)
    assert a == b
    assert b["ndcg@10"] == pytest.approx(res.mean("ndcg@10"), abs=1e-12)
    code, _, err = _cli(capsys, "compare", "--qrels", GOLDEN_PATH, "--run", trec, "--run", csvp, "--format", "json")
    assert code == 0, err


class _Search(BaseHTTPRequestHandler):
    index: dict = {}

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = json.dumps({"result": {"hits": _Search.index.get(body["query"], [])[: body["k"]]}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_retrieve_http_backend_writes_a_trec_run_equal_to_the_library(sample, tmp_path, capsys):
    from rag_metrics.systems.backends.http import HttpConfig, http_system

    golden, chunks = sample
    _Search.index = {q.question: [{"id": c.id, "score": round(1 - r / 50, 2) if r != 3 else 0.9}
                                  for r, c in enumerate(chunks[n % 7::5][:30])]
                     for n, q in enumerate(golden) if n % 6}  # every 6th question: no results
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Search)
    serve_in_thread(srv)
    url = f"http://127.0.0.1:{srv.server_address[1]}/search"
    try:
        out = tmp_path / "http.trec"
        code, _, err = _cli(capsys, "retrieve", "--queries", GOLDEN_PATH, "--backend", "http", "--url", url,
                            "--results-path", "result.hits", "--depth", 20, "--out", out)
        assert code == 0, err
        lib = http_system(HttpConfig(url, results_path="result.hits")).rank(golden.questions(), 20)
    finally:
        srv.shutdown()
        srv.server_close()
    run = load_run(out)
    assert {q: [i for i, _ in v] for q, v in run.rankings().items()} == \
        {q: [i for i, _ in v] for q, v in lib.run.rankings().items()}
    got = _eval_json(capsys, out)
    res = evaluate(golden, lib.run)
    for k in KEYS:
        assert got[k] == pytest.approx(res.mean(k), abs=1e-12), k


def test_retrieve_backend_needs_its_options(tmp_path, capsys):
    code, _, err = _cli(capsys, "retrieve", "--queries", GOLDEN_PATH, "--backend", "pgvector", "--out",
                        tmp_path / "x.trec")
    assert code == 2 and "--backend pgvector needs --dsn and --table" in err
    code, _, err = _cli(capsys, "retrieve", "--queries", GOLDEN_PATH, "--out", tmp_path / "x.trec")
    assert code == 2 and "--corpus is required with the bundled retrievers" in err


@pytest.mark.slow
def test_retrieve_qdrant_local_with_the_lab_encoder_equals_library(sample, tmp_path, capsys):
    from rag_metrics.retrieval.memo import LazyEncoder
    from rag_metrics.systems.backends.qdrant import (
        QdrantConfig,
        index_chunks,
        qdrant_system,
    )

    golden, chunks = sample
    folder = str(tmp_path / "qd")
    cfg = QdrantConfig("sample", path=folder)
    enc = LazyEncoder()
    index_chunks(cfg, chunks, enc)
    out = tmp_path / "qd.trec"
    code, _, err = _cli(capsys, "retrieve", "--queries", GOLDEN_PATH, "--backend", "qdrant", "--path", folder,
                        "--collection", "sample", "--depth", 10, "--out", out)
    assert code == 0, err
    lib = qdrant_system(cfg, enc).rank(golden.questions(), 10)
    got = _eval_json(capsys, out)
    res = evaluate(golden, lib.run)
    for k in KEYS:
        assert got[k] == pytest.approx(res.mean(k), abs=1e-6), k
    assert got["hit_rate@5"] > 0.5  # the real model finds relevant chunks
