"""AppTest of the corpus map page: the projection and links equal the library's, query selection,
colouring, and no re-embedding on a rerun."""
from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from app_helpers import library_result, load_beir_folder, load_corpus_files, no_exception, sample_golden, set_app_golden
from app_helpers import open_page as _open_page
from app_helpers import sample_index as _index
from rag_metrics.insights.projection import project_corpus

PAGE = "pages/corpus_map.py"


def open_page(app):
    return _open_page(app, PAGE)


@functools.cache
def library_map(k: int = 5):
    golden, idx, res = sample_golden(), _index(), library_result()
    qx = idx.retriever.embed_queries(golden.questions())
    return project_corpus(idx.chunks, idx.retriever.vectors, golden, qx, res, k=k), res


def chart_spec(at) -> dict:
    charts = at.get("vega_lite_chart")
    assert charts, "the map chart is drawn"
    return json.loads(charts[0].proto.spec)


def chart_data(at) -> list:
    """The chart's datasets (sent beside the spec as Arrow tables)."""
    from streamlit import dataframe_util

    proto = at.get("vega_lite_chart")[0].proto
    return [dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in proto.datasets]


def selected_links(at) -> list[tuple[str, str]]:
    t = at.dataframe[0].value
    return sorted(zip(t["chunk"], t["link"]))


def library_links(cmap, qid: str) -> list[tuple[str, str]]:
    links = cmap.links[cmap.links["query_id"] == qid]
    return sorted(zip(links["chunk_id"], links["kind"]))


def test_map_renders_with_library_numbers(app):
    open_page(app)
    assert app.title[0].value == "Corpus map"
    cmap, res = library_map()
    cards = {m.label: str(m.value) for m in app.metric}
    assert cards["Chunks"] == str(len(cmap.chunks)) == "192"
    assert cards["Questions"] == str(len(cmap.queries))
    assert cards["Chunks no question labels"] == str(int((~cmap.chunks["covered_by_any_question"]).sum()))
    a, b = cmap.explained_variance
    assert cards["Variance shown (PC 1 + 2)"] == f"{a + b:.0%}"
    # the chart carries the library's coordinates
    data = [d for d in chart_data(app) if "preview" in d.columns][0]
    got = {c: (round(x, 6), round(y, 6)) for c, x, y in zip(data["chunk_id"], data["x"], data["y"])}
    want = {c: (round(x, 6), round(y, 6)) for c, x, y in zip(cmap.chunks["chunk_id"], cmap.chunks["x"],
                                                             cmap.chunks["y"])}
    assert got == want


def test_default_query_is_the_worst_and_its_links_match(app):
    open_page(app)
    cmap, res = library_map()
    vals = res.values("ndcg", 5)
    worst = min((float(v), q) for q, v, ok in zip(res.query_ids, vals, res.included) if ok)[1]
    assert app.selectbox(key="map_query").value == worst
    assert selected_links(app) == library_links(cmap, worst)
    # preselected in the chart too
    params = {p["name"]: p for p in chart_spec(app)["params"]}
    assert params["query"]["value"] == [{"query_id": worst}]


@pytest.mark.parametrize("qid", ["q001", "q040"])
def test_selecting_a_query_draws_its_links(app, qid):
    open_page(app)
    app.selectbox(key="map_query").set_value(qid).run()
    no_exception(app)
    cmap, _ = library_map()
    assert selected_links(app) == library_links(cmap, qid)
    assert {p["name"]: p for p in chart_spec(app)["params"]}["query"]["value"] == [{"query_id": qid}]
    assert any(qid in m.value for m in app.markdown)


def test_colour_and_no_selection(app):
    open_page(app)
    app.radio(key="map_color").set_value("category").run()
    no_exception(app)
    assert '"field": "category"' in json.dumps(chart_spec(app))
    app.selectbox(key="map_query").set_value("__none__").run()
    no_exception(app)
    assert "value" not in {p["name"]: p for p in chart_spec(app)["params"]}["query"]


def test_reruns_never_embed(app, monkeypatch):
    open_page(app)
    import rag_metrics.retrieval.cache as rc

    def boom(*a, **k):
        raise AssertionError("re-embedded on a rerun")

    monkeypatch.setattr(rc, "encode_with_cache", boom)
    app.slider(key="k").set_value(7).run()          # new links, same projection inputs
    no_exception(app)
    app.radio(key="map_color").set_value("cluster").run()
    no_exception(app)
    app.selectbox(key="map_query").set_value("q002").run()
    no_exception(app)
    cmap, _ = library_map(7)
    assert selected_links(app) == library_links(cmap, "q002")


ISSUE6_PAGES = ["pages/ragas.py", "pages/health.py", "pages/corpus_map.py", "pages/presenter.py"]


def test_uploaded_corpus_with_markup_is_shown_as_text(app):
    """An uploaded corpus (BM25, so its chunks are embedded only for the map and the near-duplicate
    check) with markup in the text and in a labelled question: every page renders, no HTML runs."""
    app.selectbox(key="system").set_value("bm25").run()
    docs = [("a.md", b"# Alpha\n\n<script>alert(1)</script> Alpha notes are **green** and sync every hour.",
             "text/markdown"),
            ("b.txt", b"Beta invoices are sent monthly by email. <img src=x onerror=alert(2)>", "text/plain")]
    load_corpus_files(app, docs, "tiny")
    assert app.session_state["corpus"] == "tiny"

    from rag_metrics.types import GoldenQuery

    # label the first chunk of a.md for a question full of markup
    app.switch_page("pages/corpus_explorer.py").run()
    first_chunk = app.dataframe[0].value["id"].iloc[0]
    q = GoldenQuery("qx", "<b>when</b> do *alpha* notes sync? [link](http://x)", "factual", {first_chunk: 2}, None)
    set_app_golden(app, [q], corpus="tiny")
    for page in ISSUE6_PAGES:
        app.switch_page(page).run()
        no_exception(app)
        assert not app.error, (page, [e.value for e in app.error])
        assert not app.html or all("<script>" not in h.proto.body and "<b>when" not in h.proto.body
                                   for h in app.html), page
    # the map shows the question verbatim (as text) and its link
    app.switch_page("pages/corpus_map.py").run()
    assert app.selectbox(key="map_query").value == "qx"
    assert any("<b>when</b> do *alpha* notes sync?" in c.value for c in app.code)


@pytest.mark.skipif(not Path("/work/shared/datasets/adi/corpus.jsonl").exists(), reason="ADI dataset not available")
def test_document_level_corpus_on_issue6_pages(app):
    app.selectbox(key="system").set_value("bm25").run()
    load_beir_folder(app, "/work/shared/datasets/adi")
    for page in ISSUE6_PAGES:
        app.switch_page(page).run()
        no_exception(app)
        assert not app.error, (page, [e.value for e in app.error])
        assert app.title
