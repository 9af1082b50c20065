"""Issue 12 at corpus scale: pages send what is visible (paging), document-level wording, long label
lists in the golden editor (one row per label), the RAGAS page's two means."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import app_golden, goto, no_exception, open_page, set_app_golden
from rag_metrics.authoring import golden_edit
from rag_metrics.errors import InputError
from rag_metrics.types import GoldenQuery
from ui.paging import PAGE_SIZE, page_bounds

ADI = Path("/work/shared/datasets/adi")


# ---- paging (no streamlit) -------------------------------------------------------------------------
@pytest.mark.parametrize("n, page, want", [(0, 1, (0, 0, 1)), (100, 1, (0, 100, 1)), (101, 2, (100, 101, 2)),
                                           (250, 3, (200, 250, 3)), (250, 0, (0, 100, 3)), (250, 7, (200, 250, 3))])
def test_page_bounds(n, page, want):
    assert page_bounds(n, page, 100) == want


def test_mrr_reading_names_what_labels_name():
    from rag_metrics.insights.readouts import mrr_reading, mrr_reading_rows

    assert mrr_reading(0.5, "document") == "Good: on average the first relevant document is around rank 2."
    assert mrr_reading(0.05, "document").startswith("Very poor: the first relevant document")
    assert mrr_reading(0.5) == "Good: on average the first relevant chunk is around rank 2."
    assert not any("chunk" in r for r in mrr_reading_rows("document")["Reading"])


# ---- labels as rows (library) ------------------------------------------------------------------------
def test_labels_from_rows_make_the_list_exact():
    old = {"a": 1, "b": 2, "c": 3}
    rows = [{"id": "b", "grade": 3}, {"id": "d", "grade": None}, {"id": "", "grade": None}]
    assert golden_edit.labels_from_rows(old, rows, "q1") == {"b": 3, "d": 1, "a": 0, "c": 0}
    q = GoldenQuery("q1", "x?", "", {"a": 1, "b": 2})
    assert golden_edit.label_rows(q).to_dict("records") == [{"id": "a", "grade": 1}, {"id": "b", "grade": 2}]


@pytest.mark.parametrize("rows, part", [([{"id": "a", "grade": 4}], "grade 4"), ([{"id": "a", "grade": 1.5}], "1.5"),
                                        ([{"id": "a", "grade": 1}, {"id": "a", "grade": 2}], "listed twice"),
                                        ([{"id": "", "grade": 2}], "without an id")])
def test_labels_from_rows_rejects_bad_rows(rows, part):
    with pytest.raises(InputError, match="question q7, label row") as err:
        golden_edit.labels_from_rows({}, rows, "q7")
    assert part in str(err.value)


# ---- corpus explorer: one page of chunks -------------------------------------------------------------
def test_explorer_sends_one_page_of_the_chunk_table(app):
    open_page(app, "pages/corpus_explorer.py")
    table = app.dataframe[0].value
    assert len(table) == PAGE_SIZE  # 192 chunks at 500/100: page 1 of 2
    assert any("Chunks 1–100 of 192" in c.value for c in app.caption)
    app.number_input(key="browse_page").set_value(2).run()
    no_exception(app)
    second = app.dataframe[0].value
    assert len(second) == 92 and set(second["id"]).isdisjoint(table["id"])
    # a filter shrinks the table to one page: no selector, every match shown
    app.text_input(key="browse_text").input("refund").run()
    no_exception(app)
    shown = app.dataframe[0].value
    assert 0 < len(shown) < PAGE_SIZE and all("refund" in t.lower() for t in shown["text"])
    assert not [n for n in app.number_input if n.key == "browse_page"]


# ---- golden editor: a question with 60 labels ---------------------------------------------------------
def _send(at, editor_prefix: str, edits: dict, button_key: str) -> None:
    """An edit of the data editor whose key starts with ``editor_prefix`` and a click on
    ``button_key`` in the same run (what the browser sends)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    editor = next(d for d in at.data_editor if (d.key or "").startswith(editor_prefix))
    button = at.button(key=button_key)
    states = at._tree.get_widget_states()
    full = {"edited_rows": {}, "added_rows": [], "deleted_rows": [], **edits}
    full["edited_rows"] = {str(r): v for r, v in full["edited_rows"].items()}
    states.widgets.append(WidgetState(id=editor.proto.id, string_value=json.dumps(full)))
    states.widgets.append(WidgetState(id=button.proto.id, trigger_value=True))
    at._run(states)
    no_exception(at)


def test_long_label_list_is_edited_one_row_per_label(app):
    from ui import cache

    corpus, fp = cache.sample_corpus()
    ids = cache.chunk_set(corpus, fp, 500, 100).ids
    g = app_golden(app)
    long_q = GoldenQuery("long", "which chunks mention anything at all?", "",
                         {i: 1 + n % 3 for n, i in enumerate(ids[:60])})
    set_app_golden(app, [long_q, *g.queries[1:]])
    goto(app, "pages/golden_set.py")
    box = next(e for e in app.expander if e.label.startswith("One question's labels"))
    assert "1 question(s) with 10 or more labels" in box.label
    assert app.selectbox(key="label_detail_pick").value == "long"  # the longest list first
    editor = next(d for d in app.data_editor if (d.key or "").startswith("label_rows_"))
    assert editor.value.to_dict("records") == [{"id": i, "grade": 1 + n % 3} for n, i in enumerate(ids[:60])]
    _send(app, "label_rows_", {"deleted_rows": [0], "edited_rows": {1: {"grade": 3}},
                               "added_rows": [{"id": ids[100], "grade": 2}]}, "label_detail_save")
    app.run()
    no_exception(app)
    saved = app_golden(app).get("long").relevant
    want = {i: 1 + n % 3 for n, i in enumerate(ids[:60]) if n != 0}
    want[ids[1]] = 3
    want[ids[100]] = 2
    assert dict(saved) == want
    assert not app.error


def test_bad_grade_in_the_label_rows_is_a_message_not_a_save(app):
    g = app_golden(app)
    q = g.queries[0]
    goto(app, "pages/golden_set.py")
    app.selectbox(key="label_detail_pick").set_value(q.id).run()
    _send(app, "label_rows_", {"edited_rows": {0: {"grade": 7}}}, "label_detail_save")
    assert any("grade 7" in e.value for e in app.error)
    assert app_golden(app).get(q.id).relevant == q.relevant


# ---- document level: the dashboard speaks of documents ---------------------------------------------
@pytest.mark.skipif(not (ADI / "corpus.jsonl").exists(), reason="ADI dataset not available")
def test_document_level_dashboard_says_document(app):
    app.selectbox(key="system").set_value("bm25").run()
    app.switch_page("pages/corpus_explorer.py").run()
    app.text_input(key="beir_path").input(str(ADI)).run()
    app.button(key="beir_go").click().run()
    no_exception(app)
    goto(app, "pages/dashboard.py")
    texts = [m.value for m in app.markdown] + [c.value for c in app.caption]
    texts += [d.value.to_csv() for d in app.dataframe]
    joined = " ".join(texts).replace("\\", "")
    assert "first relevant document" in joined
    assert "first relevant chunk" not in joined and "relevant chunk appear" not in joined
    goto(app, "pages/failures.py")
    texts = [m.value for m in app.markdown] + [c.value for c in app.caption] + [s.value for s in app.success]
    texts += [i.value for i in app.info] + [m.help or "" for m in app.metric]
    joined = " ".join(texts).replace("\\", "")
    assert "relevant document" in joined and "relevant chunk" not in joined


# ---- caches bounded by memory ------------------------------------------------------------------------
def test_caches_are_bounded_by_memory_not_entries(app, monkeypatch):
    """With a 1 MB budget, re-chunking drops the previous chunking's chunk set and index from the
    caches (the one in use stays); the app keeps working on the new chunking."""
    from ui import cache

    monkeypatch.setenv("RAG_METRICS_CACHE_MB", "1")
    app.selectbox(key="system").set_value("bm25").run()
    _, fp = cache.sample_corpus()
    old = f"{fp}:500:100"
    assert old in cache.budget().sizes()
    goto(app, "pages/corpus_explorer.py")
    app.number_input(key="chunk_size_in").set_value(400)
    app.number_input(key="chunk_overlap_in").set_value(50)
    next(b for b in app.button if "Re-chunk" in str(b.label)).click().run()
    no_exception(app)
    sizes = cache.budget().sizes()
    assert f"{fp}:400:50" in sizes and old not in sizes
    assert old in cache.budget().evicted
    assert cache.budget().total() <= 2**20 or len(sizes) == 1
    goto(app, "pages/dashboard.py")
    assert app.metric


# ---- progress and the fresh start ----------------------------------------------------------------------
class _Bar:
    def __init__(self) -> None:
        self.shown: list[tuple[float, str]] = []

    def progress(self, value: float, text: str = "") -> None:
        self.shown.append((value, text))


def test_progress_callback_shows_the_count_from_the_start():
    from ui.views import progress_callback

    bar = _Bar()
    cb = progress_callback(bar, "Embedding chunks")
    cb(0, 4839)
    cb(128, 4839)
    cb(4839, 4839)
    assert bar.shown[0][0] == 0.0 and bar.shown[0][1].startswith("Embedding chunks: 0 / 4,839")
    assert bar.shown[1] == (128 / 4839, "Embedding chunks: 128 / 4,839")
    assert bar.shown[2] == (1.0, "Embedding chunks: 4,839 / 4,839")
    cb(0, 0)
    assert bar.shown[3] == (1.0, "Embedding chunks: all found in the embedding cache")


def test_first_page_starts_loading_the_model_in_the_background(app, monkeypatch):
    """After the first page is drawn, the server loads the embedding model once in a daemon thread
    (the sample's cards need no model: its vectors are shipped)."""
    from ui import cache

    monkeypatch.setenv("RAG_METRICS_WARM", "1")  # the test session turns it off (conftest)
    cache.warm_in_background.clear()  # an earlier page of this process ran it switched off
    thread = cache.warm_in_background()
    assert thread is not None and thread.daemon and thread.name == "rag-metrics-warm"
    thread.join(timeout=600)
    assert cache.encoder().loaded
    assert cache.warm_in_background() is thread  # once per process (until the caches are cleared)


def test_warm_up_can_be_turned_off(app_env, monkeypatch):
    from ui import cache

    monkeypatch.setenv("RAG_METRICS_WARM", "0")
    cache.clear_all()
    assert cache.warm_in_background() is None


def test_cancelled_long_step_says_what_was_kept():
    """The Cancel button beside re-chunking / corpus loading reruns the page (stopping the step at its
    next progress update); the next run says the embedded texts were kept."""
    def script():
        from ui import views

        views.cancelled_notice("cancel_rechunk", "Re-chunking")

    at = AppTest.from_function(script, default_timeout=120)
    at.run()
    assert not at.info  # nothing cancelled
    at.session_state["cancel_rechunk"] = True  # the click's value on the rerun
    at.run()
    assert [i.value for i in at.info] == [
        "Re-chunking cancelled. The chunk texts embedded so far are kept in the embedding cache (they are "
        "stored every few hundred texts): starting again only embeds the rest."]
