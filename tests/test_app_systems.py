"""The Systems page (AppTest): kept uploads come back, numbers equal the library and the CLI,
judged@K beside the metrics, a connection added through the form, removal, pooled labelling."""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from loopback import serve_in_thread

from app_helpers import library_result, no_exception, sample_golden
from rag_metrics.cli import main
from rag_metrics.evaluation import evaluate
from rag_metrics.systems.store import SystemStore

ROOT = Path(__file__).resolve().parents[1]

PAGE = "pages/systems.py"
GOLDEN_PATH = ROOT / "sample_corpus" / "golden.jsonl"


def _sample_chunks():
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval.chunking import chunk_corpus

    return chunk_corpus(load_corpus(ROOT / "sample_corpus" / "docs"))


def _trec_run() -> str:
    """The bundled dense ranking with its top 3 reversed: a different system with known numbers."""
    res = library_result("dense")
    lines = []
    for q in res.query_ids:
        ranking = res.ranking(q)
        ids = ranking["id"].tolist()[:20]
        ids = ids[:3][::-1] + ids[3:]
        lines += [f"{q} Q0 {i} {r + 1} {20 - r} mine" for r, i in enumerate(ids)]
    return "\n".join(lines) + "\n"


def _rag_log(chunks) -> str:
    text = {c.id: c.text for c in chunks}
    rows = []
    for n, q in enumerate(sample_golden()):
        ctx = [text[i] for i in list(q.relevant)[:1] if i in text] + [chunks[(7 * n) % len(chunks)].text,
                                                                    "Text from elsewhere."]
        rows.append(json.dumps({"question": q.question, "contexts": ctx, "answer": "..."}))
    return "\n".join(rows) + "\n"


def _table(at):
    df = next(d.value for d in at.dataframe if "mrr@5" in d.value.columns)
    return df.set_index("system")


@pytest.fixture
def stored(app_env, tmp_path):
    chunks = _sample_chunks()
    store = SystemStore.for_corpus("sample_corpus")
    run_text = _trec_run()
    spec, rep = store.add_upload("my run", "mine.trec", run_text.encode(), chunks)
    assert spec is not None, rep.lines()
    spec, rep = store.add_upload("my log", "log.jsonl", _rag_log(chunks).encode(), chunks)
    assert spec is not None, rep.lines()
    (tmp_path / "mine.trec").write_text(run_text)
    (tmp_path / "log.jsonl").write_text(_rag_log(chunks))
    return store, tmp_path, chunks


def _open(app_env):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page(PAGE).run()
    no_exception(at)
    return at


def test_kept_uploads_come_back_with_library_and_cli_numbers(stored, capsys):
    store, folder, chunks = stored
    at = _open(None)
    assert not at.error, [e.value for e in at.error]
    df = _table(at)
    assert list(df.index) == ["bundled dense", "my run", "my log"]
    golden = sample_golden()
    lib = library_result("dense")
    assert df.loc["bundled dense", "mrr@5"] == pytest.approx(lib.mean("mrr", 5))
    # the sample labels only relevant chunks: judged@5 would repeat precision, so a note replaces it
    assert "judged@5" not in df.columns
    assert any("labels only relevant chunks" in c.value for c in at.caption)
    for name, fname in (("my run", "mine.trec"), ("my log", "log.jsonl")):
        spec = next(s for s in store.specs() if s.name == name)
        res = evaluate(golden, store.system(spec, chunks).rank(golden.questions(), 100).run)
        code = main(["evaluate", "--qrels", str(GOLDEN_PATH), "--run", str(folder / fname), "--corpus",
                     str(ROOT / "sample_corpus" / "docs"), "--metrics", "mrr@5,ndcg@5,recall@5,judged@5",
                     "--format", "json"])
        cli = json.loads(capsys.readouterr().out)["metrics"]
        assert code == 0
        for key in ("mrr@5", "ndcg@5", "recall@5"):
            assert df.loc[name, key] == pytest.approx(res.mean(key)), (name, key)
            assert df.loc[name, key] == pytest.approx(cli[key]), (name, key)
    # reversing the top 3 changes MRR: the uploaded run is not the bundled one
    assert df.loc["my run", "mrr@5"] != pytest.approx(df.loc["bundled dense", "mrr@5"])
    # the RAG log's foreign contexts are unmatched and reported
    texts = " ".join(str(c.value) for c in at.caption)
    assert "unmatched" in texts and "counts as not relevant" in texts  # the unlabelled-chunk note


def test_remove_a_system(stored):
    at = _open(None)
    at.button(key="systems_remove_my run").click().run()
    no_exception(at)
    assert [s.name for s in stored[0].specs()] == ["my log"]
    assert list(_table(at).index) == ["bundled dense", "my log"]


class _Search(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        res = library_result("dense")
        qid = next((q.id for q in sample_golden() if q.question == body["query"]), None)
        hits = [] if qid is None else [{"id": i, "score": float(s)} for i, s in
                                       zip(res.ranking(qid)["id"], res.ranking(qid)["score"])][: body["k"]]
        data = json.dumps(hits).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_connection_form_test_add_and_equal_numbers(app_env):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Search)
    serve_in_thread(srv)
    try:
        at = _open(app_env)
        at.text_input(key="systems_conn_name").input("prod http")
        url_box = next(t for t in at.text_input if t.label == "URL")
        url_box.input(f"http://127.0.0.1:{srv.server_address[1]}/search")
        at.run()
        at.button(key="systems_test").click().run()
        no_exception(at)
        assert any("with 5 result(s)" in s.value for s in at.success), [e.value for e in at.error]
        at.button(key="systems_add").click().run()
        no_exception(at)
        df = _table(at)
    finally:
        srv.shutdown()
        srv.server_close()
    # the endpoint serves the bundled dense ranking: same numbers
    assert df.loc["prod http", "ndcg@5"] == pytest.approx(df.loc["bundled dense", "ndcg@5"])
    assert df.loc["prod http", "mrr@5"] == pytest.approx(df.loc["bundled dense", "mrr@5"])
    saved = (SystemStore.for_corpus("sample_corpus").folder / "systems.json").read_text()
    assert "prod http" in saved


def test_literal_secret_is_refused(app_env):
    at = _open(app_env)
    at.text_input(key="systems_conn_name").input("leaky")
    next(t for t in at.text_input if t.label == "URL").input("http://127.0.0.1:9/x")
    next(t for t in at.text_area).input("Authorization: Bearer abc123")
    at.run()
    at.button(key="systems_add").click().run()
    no_exception(at)
    assert any("literal secret" in e.value for e in at.error)
    assert not (SystemStore.for_corpus("sample_corpus").folder / "systems.json").exists()


def test_pooled_label_goes_to_the_golden_set(stored):
    at = _open(None)
    pool = next(d.value for d in at.dataframe if "n_systems" in d.value.columns)
    first = pool.iloc[0]
    at.radio(key="systems_pool_grade").set_value(2).run()
    at.button(key="systems_pool_save").click().run()
    no_exception(at)
    from rag_metrics.workspace.store import Workspace

    saved = Workspace("sample_corpus").load()[0]
    assert saved.get(first["query_id"]).relevant[first["chunk_id"]] == 2
