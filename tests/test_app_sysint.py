"""Every page takes a system: a stored upload chosen in the sidebar drives the Dashboard (numbers
equal to ``rag-metrics evaluate`` on the same files), Compare lists it as A or B, judged@K is shown,
the URL carries corpus and system, and no page fails with it selected."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_helpers import library_result, no_exception
from rag_metrics.cli import main
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS
from rag_metrics.systems.store import SystemStore
from tests.loopback import serve_in_thread

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_PATH = ROOT / "sample_corpus" / "golden.jsonl"
PAGES = ["pages/dashboard.py", "pages/failures.py", "pages/ragas.py", "pages/health.py", "pages/corpus_map.py",
         "pages/presenter.py", "pages/compare.py"]


def _perturbed_dense_run() -> str:
    """The bundled dense ranking with ranks 1 and 4 swapped and the 2nd result dropped."""
    res = library_result("dense")
    lines = []
    for q in res.query_ids:
        ids = res.ranking(q)["id"].tolist()[:30]
        if len(ids) >= 4:
            ids[0], ids[3] = ids[3], ids[0]
            del ids[1]
        lines += [f"{q} Q0 {i} {r + 1} {30 - r} prod" for r, i in enumerate(ids)]
    return "\n".join(lines) + "\n"


def _sample_chunks():
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval.chunking import chunk_corpus

    return chunk_corpus(load_corpus(ROOT / "sample_corpus" / "docs"))


@pytest.fixture
def uploaded(app_env, tmp_path):
    text = _perturbed_dense_run()
    path = tmp_path / "prod.trec"
    path.write_text(text)
    spec, rep = SystemStore.for_corpus("sample_corpus").add_upload("prod run", "prod.trec", text.encode(),
                                                                   _sample_chunks())
    assert spec is not None, rep.lines()
    return path


def _cli(path: Path, k: int, capsys) -> dict[str, float]:
    keys = ",".join(f"{m}@{k}" for m in [*DEFAULT_METRICS, "judged"])
    capsys.readouterr()
    assert main(["evaluate", "--qrels", str(GOLDEN_PATH), "--run", str(path), "--metrics", keys,
                 "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["metrics"]


def _cards(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric if "@" in m.label}


def _open(params: dict | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    for name, value in (params or {}).items():
        at.query_params[name] = value
    at.run()
    no_exception(at)
    return at


def test_sidebar_system_drives_the_dashboard_like_the_cli(uploaded, capsys):
    at = _open()
    box = at.selectbox(key="system")
    assert box.options[:3] == ["Bundled: Dense", "Bundled: BM25", "Bundled: Hybrid"]
    assert "Yours: prod run" in box.options
    box.set_value("prod run").run()
    no_exception(at)
    cli = _cli(uploaded, 5, capsys)
    expected = {f"{METRICS[m].label}@5": f"{cli[f'{m}@5']:.3f}" for m in DEFAULT_METRICS}
    assert _cards(at) == expected
    # not the bundled numbers: the perturbation moved the first relevant chunk
    dense = library_result("dense")
    assert _cards(at)["MRR@5"] != f"{dense.mean('mrr', 5):.3f}"
    # the sample labels only relevant chunks: no judged@K warning, a note on unlabelled chunks instead
    captions = " ".join(c.value for c in at.caption)
    assert f"judged@5 = {cli['judged@5']:.3f}" not in captions and "labels only relevant chunks" in captions
    assert not [w.value for w in at.warning if "carry a label" in w.value]
    assert "system: prod run" in captions
    # K changes only read another column
    at.slider(key="k").set_value(3).run()
    cli3 = _cli(uploaded, 3, capsys)
    assert _cards(at)["NDCG@3"] == f"{cli3['ndcg@3']:.3f}"
    assert dict(at.query_params)["system"] == ["prod run"] or at.query_params["system"] == "prod run"


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_with_a_stored_system(uploaded, page):
    at = _open({"system": "prod run"})
    at.switch_page(page).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_with_a_rag_log_with_unmatched_contexts(app_env, page):
    from tests.test_app_systems import _rag_log

    chunks = _sample_chunks()
    spec, rep = SystemStore.for_corpus("sample_corpus").add_upload("my log", "log.jsonl", _rag_log(chunks).encode(),
                                                                   chunks)
    assert spec is not None, rep.lines()
    at = _open({"system": "my log"})
    at.switch_page(page).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert any("system: my log" in c.value for c in at.caption) or page in ("pages/presenter.py",
                                                                           "pages/compare.py")


def test_compare_offers_the_system_as_a_or_b(uploaded, capsys):
    at = _open()
    at.switch_page("pages/compare.py").run()
    no_exception(at)
    b = at.selectbox(key="cmp_b_system")
    assert b.options == ["A bundled retriever (choose below)", "Yours: prod run"]
    b.set_value("prod run").run()   # bundled dense (A) vs my production retriever (B)
    no_exception(at)
    table = next(d.value for d in at.dataframe if "Verdict" in d.value.columns)
    row = table.set_index("Metric").loc["MRR@5"]
    dense = library_result("dense")
    cli = _cli(uploaded, 5, capsys)
    assert row["A"] == f"{dense.mean('mrr', 5):.3f}"
    assert row["B"] == f"{cli['mrr@5']:.3f}"
    assert any("prod run (yours)" in c.value.replace("\\", "") for c in at.caption)


def test_url_carries_corpus_and_system(uploaded, capsys):
    at = _open({"system": "prod run", "k": "3"})
    assert at.selectbox(key="system").value == "prod run"
    cli = _cli(uploaded, 3, capsys)
    assert _cards(at)["MRR@3"] == f"{cli['mrr@3']:.3f}"
    qp = {k: (v[-1] if isinstance(v, list) else v) for k, v in dict(at.query_params).items()}
    assert qp["system"] == "prod run" and qp["corpus"] == "sample_corpus" and qp["k"] == "3"
    # choosing another system in the sidebar writes it back
    at.selectbox(key="system").set_value("bm25").run()
    assert at.query_params["system"] == "bm25"


def test_url_with_an_unknown_system_is_ignored(uploaded):
    at = _open({"system": "not mine", "corpus": "nope"})
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any("Ignored system='not mine'" in w for w in warnings), warnings
    assert any("Ignored corpus='nope'" in w for w in warnings), warnings
    assert at.selectbox(key="system").value == "dense"


def test_report_names_the_system_and_its_judged_share(uploaded, capsys):
    at = _open({"system": "prod run"})
    at.switch_page("pages/presenter.py").run()
    no_exception(at)
    text = " ".join(m.value for m in at.markdown)
    assert "prod run" in text


def test_report_html_has_the_system_and_its_judged_share(uploaded, downloads, capsys):
    from tests.test_app_presenter import html_cards, report_html

    at = _open({"system": "prod run"})
    at.switch_page("pages/presenter.py").run()
    no_exception(at)
    html = report_html(at, downloads)
    cli = _cli(uploaded, 5, capsys)
    assert html_cards(html) == {f"{METRICS[m].label}@5": f"{cli[f'{m}@5']:.3f}" for m in DEFAULT_METRICS}
    assert "prod run" in html and "labels only relevant chunks" in html and "carry a label" not in html


def test_live_system_secret_stays_out_of_url_workspace_and_report(app_env, downloads, monkeypatch):
    """An HTTP system whose header reads a secret from the environment: selected in the sidebar, its
    numbers show, and the secret is nowhere in the URL, the workspace files or the HTML report."""
    from http.server import ThreadingHTTPServer

    from tests.test_app_presenter import report_html
    from tests.test_app_systems import _Search

    secret = "s3cr3t-token-value-42"
    monkeypatch.setenv("SYSINT_TOKEN", secret)
    seen: list[str] = []

    class Checking(_Search):
        def do_POST(self):
            seen.append(self.headers.get("Authorization", ""))
            super().do_POST()

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Checking)
    serve_in_thread(srv)
    try:
        SystemStore.for_corpus("sample_corpus").add_connection(
            "prod http", "http", {"url": f"http://127.0.0.1:{srv.server_address[1]}/search",
                                  "headers": [["Authorization", "Bearer ${SYSINT_TOKEN}"]]})
        at = _open({"system": "prod http"})
        dense = library_result("dense")
        # the endpoint serves the bundled dense ranking: the same cards
        assert _cards(at)["NDCG@5"] == f"{dense.mean('ndcg', 5):.3f}"
        at.switch_page("pages/presenter.py").run()
        no_exception(at)
        html = report_html(at, downloads)
    finally:
        srv.shutdown()
        srv.server_close()
    assert seen and all(h == f"Bearer {secret}" for h in seen)      # the secret was sent to the server…
    assert secret not in html and "prod http" in html               # …and nowhere else
    assert secret not in str(dict(at.query_params))
    for f in app_env.rglob("*"):
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f


def test_failed_questions_of_a_live_system_are_shown(app_env):
    """A backend that fails on one question: the Dashboard still shows the numbers, with a warning."""
    from http.server import ThreadingHTTPServer

    from app_helpers import sample_golden
    from tests.test_app_systems import _Search

    first = next(iter(sample_golden())).question

    class HalfDown(_Search):
        def do_POST(self):
            length = int(self.headers["Content-Length"])
            data = self.rfile.read(length)
            if json.loads(data)["query"] == first:
                self.send_response(500)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            import io

            self.rfile = io.BytesIO(data)
            super().do_POST()

    srv = ThreadingHTTPServer(("127.0.0.1", 0), HalfDown)
    serve_in_thread(srv)
    try:
        SystemStore.for_corpus("sample_corpus").add_connection(
            "flaky http", "http", {"url": f"http://127.0.0.1:{srv.server_address[1]}/search", "retries": 0})
        at = _open({"system": "flaky http"})
    finally:
        srv.shutdown()
        srv.server_close()
    assert any("1 question(s) failed on flaky http" in w.value.replace("\\", "") for w in at.warning), \
        [w.value for w in at.warning]
    assert _cards(at)  # the numbers are shown


def test_compare_starts_a_as_the_sidebar_system(uploaded, capsys):
    at = _open({"system": "prod run"})
    at.switch_page("pages/compare.py").run()
    no_exception(at)
    assert at.selectbox(key="cmp_a_system").value == "prod run"
    table = next(d.value for d in at.dataframe if "Verdict" in d.value.columns).set_index("Metric")
    cli = _cli(uploaded, 5, capsys)
    assert table.loc["NDCG@5", "A"] == f"{cli['ndcg@5']:.3f}"
    assert table.loc["NDCG@5", "B"] == f"{library_result('bm25').mean('ndcg', 5):.3f}"
