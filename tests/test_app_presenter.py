"""AppTest of the stakeholder report in the app: presenter view and "Download report (HTML)" button
(headline numbers equal the library's; the comparison verdict when the Compare page published one)."""
from __future__ import annotations

import re

import pytest

from app_helpers import library_result, no_exception
from app_helpers import open_page as _open_page
from rag_metrics.compare.paired import compare, comparison_summary, plain_verdict
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS

PAGE = "pages/presenter.py"


def open_page(app):
    return _open_page(app, PAGE)


def headline(result, k: int) -> dict[str, str]:
    return {f"{METRICS[m].label}@{k}": f"{result.mean(m, k):.3f}" for m in DEFAULT_METRICS}


def report_html(at, downloads, key: str = "report_download_presenter") -> str:
    button = next(b for b in at.get("download_button") if b.proto.id.endswith(key))
    data = downloads.data(button)
    return data.decode() if isinstance(data, bytes) else data


def html_cards(html: str) -> dict[str, str]:
    return dict(re.findall(r'<div class="name">([^<]+)</div><div class="value">([^<]+)</div>', html))


def test_presenter_shows_library_headline(app):
    open_page(app)
    assert app.title[0].value == "Retrieval report"
    shown = {m.label: m.value for m in app.metric}
    assert shown == headline(library_result("dense"), 5)
    headers = [h.value for h in app.header]
    assert "Every metric against K" in headers and "Configuration" in headers
    assert len(app.get("vega_lite_chart")) == 2


@pytest.mark.parametrize("kind,k", [("dense", 5), ("bm25", 3)])
def test_download_report_has_the_headline_numbers(app, downloads, kind, k):
    open_page(app)
    if kind != "dense":
        app.selectbox(key="system").set_value(kind).run()
    if k != 5:
        app.slider(key="k").set_value(k).run()
    no_exception(app)
    html = report_html(app, downloads)
    assert html.startswith("<!DOCTYPE html>") or html.lstrip().lower().startswith("<!doctype html")
    assert html_cards(html) == headline(library_result(kind), k)
    assert f"K = {k}" in html and kind in html
    assert "vegaEmbed" in html and "https://cdn" not in html          # offline: the bundle is inline
    # the same content as the presenter page
    assert {m.label: m.value for m in app.metric} == headline(library_result(kind), k)


def test_sidebar_report_button_on_every_page(app, downloads):
    for page in ("pages/dashboard.py", "pages/ragas.py", "pages/corpus_map.py"):
        app.switch_page(page).run()
        no_exception(app)
        keys = [b.proto.id for b in app.get("download_button")]
        assert any(k.endswith("report_download_sidebar") for k in keys), page
    html = report_html(app, downloads, "report_download_sidebar")
    assert html_cards(html) == headline(library_result("dense"), 5)


def test_comparison_verdict_hook(app, downloads):
    """A comparison published in st.session_state[report_ui.COMPARISON_KEY] is in the presenter view
    and the report, and dropped when the golden set changes."""
    from ui import report_ui

    open_page(app)
    a, b = library_result("dense"), library_result("bm25")
    table = compare(a, b, ["hit_rate@5", "ndcg@5"])
    fp = app.session_state["_golden"]["sample_corpus"].fingerprint
    app.session_state[report_ui.COMPARISON_KEY] = {"table": table, "names": ("dense", "bm25"), "golden_fp": fp}
    app.run()
    no_exception(app)
    expected = [comparison_summary(table, "dense", "bm25", plain=True)] + [
        plain_verdict(r, "dense", "bm25") for _, r in table.iterrows()]
    assert [i.value.replace("\\", "") for i in app.info] == expected  # shown as text (markdown-escaped)
    html = report_html(app, downloads)
    assert "Comparison: dense vs bm25" in html
    import html as html_lib

    for v in expected:
        assert html_lib.escape(v, quote=False)[:60] in html
    # a comparison made on another golden set is not reported: the story falls back to the BM25 baseline
    app.session_state[report_ui.COMPARISON_KEY] = {"table": table, "names": ("dense", "bm25"), "golden_fp": "x"}
    app.run()
    no_exception(app)
    said = [i.value.replace("\\", "") for i in app.info]
    assert said and said[0].startswith("dense vs bm25 baseline") and said != expected
    html = report_html(app, downloads)
    assert "Comparison: dense vs bm25 baseline" in html and "Comparison: dense vs bm25<" not in html
