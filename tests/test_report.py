"""HTML report: content, escaping, offline-ness, the CLI command, and a real headless-Chromium render."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from rag_metrics import GoldenQuery, GoldenSet, Run
from rag_metrics.compare.paired import compare
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.report.html import best_and_worst, build_report, report_content
from rag_metrics.sample import sample_paths

EVIL = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'
CHROMIUM = "/usr/bin/chromium"


def _golden() -> GoldenSet:
    return GoldenSet((
        GoldenQuery("q1", "how do refunds work?", "factual", {"c1": 2}, "Within 30 days."),
        GoldenQuery("q2", f"evil question {EVIL}", EVIL, {"c2": 1, "c3": 1}),
        GoldenQuery("q3", "how to export?", "procedural", {"c4": 1}),
        GoldenQuery("q4", "sync on android?", "procedural", {"c5": 1}),
        GoldenQuery("q5", "weather?", "out_of_scope", {}),
    ))


TEXTS = {f"c{i}": f"Passage {i} text & <b>markup</b> {EVIL if i == 2 else ''}" for i in range(1, 8)}


@pytest.fixture()
def result():
    run = Run.from_rankings({"q1": ["c1", "c6"], "q2": ["c6", "c2", "c7"], "q3": ["c7", "c6"],
                             "q4": ["c6", "c7", "c5"], "q5": ["c1"]}, name="bm25")
    return evaluate(_golden(), run)


@pytest.fixture()
def other(result):
    run = Run.from_rankings({"q1": ["c6", "c1"], "q2": ["c2", "c3"], "q3": ["c4"], "q4": ["c5"]}, name="dense")
    return evaluate(_golden(), run)


def _corpus_map(result):
    from rag_metrics import Chunk
    from rag_metrics.insights.projection import project_corpus
    from rag_metrics.retrieval import HashingEncoder

    enc = HashingEncoder(32)
    chunks = [Chunk(i, f"doc{int(i[1:]) % 3}", t, 0, len(t)) for i, t in TEXTS.items()]
    golden = result.golden
    return project_corpus(chunks, enc.encode([c.text for c in chunks]), golden,
                          enc.encode([q.question for q in golden]), result, k=2)


def _report(result, other=None, **kw) -> str:
    cmp = compare(result, other, ["hit_rate@2", "ndcg@2"]) if other is not None else None
    return build_report(result, k=2, chunk_text=TEXTS, comparison=cmp, comparison_names=("bm25", "dense"),
                        config={"corpus": f"docs {EVIL}", "chunks": 7}, title=f"Report {EVIL}",
                        n_resamples=200, generated_at="2026-01-01 00:00 UTC", **kw)


def test_content(result):
    c = report_content(result, k=2, chunk_text=TEXTS, n_resamples=200, n_examples=2)
    assert list(c.headline["metric"]) == ["hit_rate", "mrr", "precision", "recall", "ndcg", "map"]
    assert (c.headline["n"] == 4).all() and c.n_out_of_scope == 1
    assert {e.query_id for e in c.best}.isdisjoint({e.query_id for e in c.worst})
    assert c.best[0].query_id == "q1" and c.best[0].value == 1.0          # c1 at rank 1
    assert c.worst[0].value == 0.0 and c.worst[0].first_relevant_rank in (0, 3)
    assert c.best[0].passages[0].relevant and c.best[0].passages[0].text.startswith("Passage 1")
    assert c.config["cutoff k"] == 2 and c.config["out-of-scope queries"] == "exclude"
    assert c.context_metrics is not None and len(c.context_metrics) == 3
    spec = c.curve_chart.to_dict()
    assert spec["layer"][0]["mark"]["type"] == "line"


def test_best_and_worst_small_sets(result):
    best, worst = best_and_worst(result, 2, None, "ndcg", n=10)
    assert len(best) + len(worst) == 4 and len(best) == 2     # in-scope queries split, never shared
    assert all(p.text == "" for e in best for p in e.passages)


def test_html_escaped_and_offline(result, other):
    html = _report(result, other)
    assert html.startswith("<!DOCTYPE html>")
    # user text is escaped everywhere: the only <script> elements are ours (bundle + embed calls)
    assert "&lt;/script&gt;&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert html.count("<script") == 2 and html.count("</script>") == 2
    assert "<img src=x" not in html and "&lt;img src=x onerror=&quot;" in html
    assert "Passage 1 text &amp; &lt;b&gt;markup&lt;/b&gt;" in html
    # chart specs: no raw '<' inside the embed script
    embed = html[html.rindex("<script>"):]
    assert "</script><script>" not in embed[len("<script>"):-len("</script>\n</body>\n</html>\n")]
    # nothing is loaded from the network
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html)
    assert "cdn.jsdelivr" not in html
    # sections
    for sid in ("headline", "comparison", "curve", "categories", "ragas", "examples", "config"):
        assert f'id="{sid}"' in html
    assert 'id="map"' not in html
    # the report speaks to stakeholders: plain verdicts (rag_metrics.compare.paired.plain_verdict), no p-values
    assert any(t in html for t in ("does better than", "apart yet", "perform about the same", "same result on every"))
    assert "vs bm25 on" in html or "vs dense on" in html  # the one-line summary
    assert "faithfulness" in html and "judge model" in html
    assert "2026-01-01 00:00 UTC" in html


def test_corpus_map_section(result):
    cmap = _corpus_map(result)
    c = report_content(result, k=2, n_resamples=100, corpus_map=cmap)
    spec = c.map_chart.to_dict()
    # the worst question is preselected on the map
    assert {p["name"]: p for p in spec["params"]}["query"]["value"] == [{"query_id": c.worst[0].query_id}]
    html = _report(result, corpus_map=cmap)
    assert 'id="chart-map"' in html and 'vegaEmbed("#chart-map"' in html


def test_no_comparison_section(result):
    html = _report(result)
    assert 'id="comparison"' not in html


def test_bad_arguments(result):
    with pytest.raises(InputError, match="k must be"):
        build_report(result, k=0)
    with pytest.raises(InputError, match="unknown metric"):
        build_report(result, k=2, ranking_metric="bleu")


# ---- CLI ----------------------------------------------------------------------------------------
def test_cli_report_bm25(tmp_path, capsys):
    from rag_metrics.cli import main

    out = tmp_path / "r.html"
    rc = main(["report", "--corpus", str(sample_paths().docs), "--golden",
               str(sample_paths().golden), "--retriever", "bm25", "--k", "5", "--depth", "10",
               "--out", str(out)])
    assert rc == 0
    html = out.read_text(encoding="utf-8")
    assert "Headline metrics at k = 5" in html and "bm25" in html
    assert "wrote" in capsys.readouterr().out


def test_cli_report_compare_with_hashing_dense(tmp_path, monkeypatch):
    from rag_metrics.cli import main

    monkeypatch.setenv("RAG_METRICS_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "r.html"
    rc = main(["report", "--corpus", str(sample_paths().docs), "--golden",
               str(sample_paths().golden), "--retriever", "bm25", "--compare-with", "dense",
               "--model", "hashing-64", "--k", "3", "--corpus-map", "--out", str(out)])
    assert rc == 0
    html = out.read_text(encoding="utf-8")
    assert 'id="comparison"' in html and "hashing-64" in html and 'id="chart-map"' in html


@pytest.mark.parametrize("argv, message", [
    (["--k", "0"], "--k must be >= 1"),
    (["--out", "report.pdf"], "ending in .html"),
    (["--corpus", "/nonexistent/corpus"], "corpus not found"),
    (["--golden", "/nonexistent/golden.jsonl"], "file not found"),
    (["--retriever", "bm25", "--compare-with", "bm25"], "same retriever"),
])
def test_cli_report_bad_input(tmp_path, capsys, argv, message):
    from rag_metrics.cli import main

    base = {"--corpus": str(sample_paths().docs), "--golden": str(sample_paths().golden),
            "--out": str(tmp_path / "r.html"), "--retriever": "bm25"}
    args = dict(base)
    extra = []
    it = iter(argv)
    for a in it:
        args[a] = next(it)
    for key, val in args.items():
        extra += [key, val]
    rc = main(["report", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert message in err[-1] and err[-1].startswith("rag-metrics report: error:")


# ---- real browser -------------------------------------------------------------------------------
@pytest.mark.browser
def test_report_renders_offline_in_chromium(result, other, tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    from app_helpers import chromium  # the process's one Chromium (the browser tests share it)

    page_file = tmp_path / "report.html"
    page_file.write_text(_report(result, other, corpus_map=_corpus_map(result)), encoding="utf-8")
    shot = Path(os.environ.get("RAG_METRICS_SCREENSHOT_DIR", tmp_path)) / "report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    blocked: list[str] = []
    errors: list[str] = []

    def route(r):
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    with chromium() as browser:
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        page = ctx.new_page()
        page.route("**/*", route)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(page_file.as_uri())
        for cid in ("chart-curve", "chart-category", "chart-map"):
            page.wait_for_selector(f"#{cid}.vega-embed svg .mark-symbol, #{cid}.vega-embed svg .mark-rect, "
                                   f"#{cid}.vega-embed svg .mark-line", timeout=15_000)
        n_marks = page.evaluate("""() => ['chart-curve', 'chart-category', 'chart-map'].map(id =>
            document.querySelectorAll('#' + id + ' svg path, #' + id + ' svg line').length)""")
        # the worst question is preselected on the map: its lines are drawn
        n_lines = page.evaluate("document.querySelectorAll('#chart-map svg g.mark-rule line').length")
        # clicking another question selects it: its text is shown and its lines drawn
        page.locator('#chart-map svg path[aria-label*="question id: q1;"]').first.click(force=True)
        page.wait_for_timeout(300)
        labels = page.evaluate("Array.from(document.querySelectorAll('#chart-map svg g.mark-text text'))"
                               ".map(t => t.textContent)")
        n_lines_q1 = page.evaluate("document.querySelectorAll('#chart-map svg g.mark-rule line').length")
        pwned = page.evaluate("() => window.__pwned === undefined ? null : window.__pwned")
        title = page.title()
        page.screenshot(path=str(shot), full_page=True)
    assert shot.exists() and shot.stat().st_size > 10_000
    assert all(n > 5 for n in n_marks), n_marks
    assert n_lines > 0
    assert "how do refunds work?" in labels and n_lines_q1 == 2   # q1: c1 relevant+retrieved, c6 retrieved
    assert pwned is None, "escaped user text executed as script"
    assert "</script>" in title  # the title shows the text literally
    assert blocked == [], f"the report tried to load from the network: {blocked}"
    assert errors == [], errors
