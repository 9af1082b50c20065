"""AppTest of every page and the main interactions, checked against the library's own numbers."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_helpers import (
    ROOT,
    edit_table,
    edited_golden,
    expected_cards,
    goto,
    library_result,
    load_beir_folder,
    load_corpus_files,
    no_exception,
    sample_golden,
    shown_cards,
)
from rag_metrics.evaluation import evaluate
from rag_metrics.insights import readouts
from rag_metrics.metrics.registry import DEFAULT_METRICS
from rag_metrics.types import GoldenQuery, GoldenSet
from ui import views

PAGES = ["pages/dashboard.py", "pages/failures.py", "pages/golden_set.py", "pages/corpus_explorer.py"]


def _ws(root: Path) -> Path:
    """The sample corpus's workspace folder under ``root`` (folder names are slug + hash)."""
    from rag_metrics.workspace.store import Workspace

    return Workspace("sample_corpus", root).folder


# ---- rendering ---------------------------------------------------------------------------------
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders(app, page):
    goto(app, page)
    assert app.title, "page has a title"
    assert not app.error, [e.value for e in app.error]
    # the shared sidebar is on every page
    assert app.slider(key="k").value == 5
    assert app.selectbox(key="system").value == "dense"


def test_dashboard_shows_library_values_and_cis(app):
    cards = shown_cards(app)
    assert cards == expected_cards(library_result("dense"), 5)
    captions = " ".join(c.value for c in app.caption)
    assert "95% CI" in captions


def test_k_slider_changes_metrics_to_library_values(app):
    lib = library_result("dense")
    for k in (1, 3, 10, 25):
        app.slider(key="k").set_value(k).run()
        no_exception(app)
        assert shown_cards(app) == expected_cards(lib, k)


def test_retriever_switch_changes_metrics(app):
    for kind in ("bm25", "hybrid", "dense"):
        app.selectbox(key="system").set_value(kind).run()
        no_exception(app)
        assert shown_cards(app) == expected_cards(library_result(kind), 5), kind


def test_conventions_follow_the_library_options(app):
    lib = library_result("dense")
    app.radio(key="out_of_scope").set_value("miss").run()
    app.radio(key="recall_denominator").set_value("cap").run()
    app.radio(key="ndcg_gain").set_value("exponential").run()
    no_exception(app)
    res = lib.with_options(out_of_scope="miss", recall_denominator="cap")
    metrics = tuple("ndcg_exp" if m == "ndcg" else m for m in DEFAULT_METRICS)
    assert shown_cards(app) == expected_cards(res, 5, metrics)
    app.number_input(key="relevance_level").set_value(3).run()
    no_exception(app)
    assert shown_cards(app) == expected_cards(lib.with_options(out_of_scope="miss", recall_denominator="cap",
                                                               relevance_level=3), 5, metrics)


def test_every_page_after_switching_retriever_and_k(app):
    app.selectbox(key="system").set_value("bm25").run()
    app.slider(key="k").set_value(1).run()
    for page in PAGES:
        goto(app, page)
        assert app.slider(key="k").value == 1


# ---- golden set editing -------------------------------------------------------------------------
def test_editing_a_golden_row_changes_metrics_and_autosaves(app, app_env):
    goto(app, "pages/golden_set.py")
    before = library_result("dense")
    edit_table(app, {"edited_rows": {0: {"relevant": [], "grades": ""}}})
    no_exception(app)
    saved = _ws(app_env) / "golden.jsonl"
    rows = [json.loads(line) for line in saved.read_text().splitlines()]
    assert rows[0]["id"] == "q001" and rows[0]["relevant"] == {}
    goto(app, "pages/dashboard.py")
    after = library_result("dense", edited_golden("q001"))
    assert shown_cards(app) == expected_cards(after, 5)
    assert shown_cards(app) != expected_cards(before, 5)


def test_editing_a_question_retrieves_only_that_text(app):
    from ui import cache

    goto(app, "pages/golden_set.py")
    corpus, fp = cache.sample_corpus()
    chunks = cache.chunk_set(corpus, fp, 500, 100)
    memo = cache.retrieval_memo(chunks, chunks.fingerprint, "dense")  # the app's (shared) memo
    before = memo.retrieved
    edit_table(app, {"edited_rows": {1: {"question": "how big can an attachment be on Plus?"}}})
    no_exception(app)
    goto(app, "pages/dashboard.py")
    assert memo.retrieved == before + 1  # only the changed question text was retrieved
    app.slider(key="k").set_value(20).run()
    assert memo.retrieved == before + 1  # K never retrieves
    app.slider(key="k").set_value(5).run()
    g = sample_golden()
    edited = GoldenSet(tuple(GoldenQuery(q.id, "how big can an attachment be on Plus?" if q.id == "q002"
                                         else q.question, q.category, q.relevant, q.expected_answer) for q in g))
    assert shown_cards(app) == expected_cards(library_result("dense", edited), 5)


def test_an_edit_saves_once_and_a_rerun_saves_nothing(app, app_env, monkeypatch):
    """The editor saves from its on_change callback: one save per edit, none on later reruns."""
    from rag_metrics.workspace.store import Workspace

    saves = []
    real_save = Workspace.save

    def counting_save(self, *args, **kwargs):
        saves.append(kwargs.get("text"))
        return real_save(self, *args, **kwargs)

    monkeypatch.setattr(Workspace, "save", counting_save)
    goto(app, "pages/golden_set.py")
    assert saves == []
    edit_table(app, {"edited_rows": {0: {"expected_answer": "Two gigabytes."}}})
    assert len(saves) == 1 and saves[0] is not None  # serialised once, by the session, for the save
    path = _ws(app_env) / "golden.jsonl"
    mtime = path.stat().st_mtime_ns
    app.run()
    app.slider(key="k").set_value(3).run()
    goto(app, "pages/golden_set.py")
    assert len(saves) == 1 and path.stat().st_mtime_ns == mtime
    assert json.loads(path.read_text().splitlines()[0])["expected_answer"] == "Two gigabytes."


def test_adding_and_deleting_rows(app, app_env):
    goto(app, "pages/golden_set.py")
    edit_table(app, {"deleted_rows": [2],
                     "added_rows": [{"question": "Can I pay by bank transfer?", "category": "factual",
                                     "relevant": ["billing-and-invoices#0"], "grades": "2"}]})
    no_exception(app)
    rows = [json.loads(line) for line in (_ws(app_env) / "golden.jsonl").read_text().splitlines()]
    assert "q003" not in [r["id"] for r in rows]
    assert rows[-1]["question"] == "Can I pay by bank transfer?"
    assert rows[-1]["relevant"] == {"billing-and-invoices#0": 2}


def test_invalid_edit_is_reported_and_not_saved(app, app_env):
    goto(app, "pages/golden_set.py")
    edit_table(app, {"edited_rows": {0: {"grades": "x|3|2"}}})
    no_exception(app)
    assert any("Not saved" in e.value for e in app.error)
    assert not (_ws(app_env) / "golden.jsonl").exists()


def test_edits_survive_page_switch_and_restart(app, app_env):
    from streamlit.testing.v1 import AppTest

    goto(app, "pages/golden_set.py")
    edit_table(app, {"edited_rows": {0: {"relevant": [], "grades": ""}}})
    goto(app, "pages/failures.py")
    goto(app, "pages/golden_set.py")
    # the editor's own state was dropped with the page: a new base table that shows the edit
    editor = next(d for d in app.data_editor if d.key.startswith("golden_editor_"))
    assert editor.key == "golden_editor_1"
    assert list(editor.value.iloc[0]["relevant"]) == [] and editor.value.iloc[0]["id"] == "q001"
    # an edit on the new base keeps the earlier one
    edit_table(app, {"edited_rows": {1: {"expected_answer": "Up to 25 MB on Plus."}}})
    rows = [json.loads(line) for line in (_ws(app_env) / "golden.jsonl").read_text().splitlines()]
    assert rows[0]["relevant"] == {} and rows[1]["expected_answer"] == "Up to 25 MB on Plus."
    expected = expected_cards(library_result("dense", edited_golden("q001")), 5)
    goto(app, "pages/dashboard.py")
    assert shown_cards(app) == expected
    # a new session (browser refresh / app restart) loads the workspace
    at2 = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at2.run()
    no_exception(at2)
    assert shown_cards(at2) == expected


def test_second_session_conflict_is_reported_not_lost(app, app_env):
    from streamlit.testing.v1 import AppTest

    b = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    b.run()
    goto(b, "pages/golden_set.py")
    goto(app, "pages/golden_set.py")
    edit_table(app, {"edited_rows": {0: {"expected_answer": "from A"}}})
    edit_table(b, {"edited_rows": {0: {"expected_answer": "from B"}}})
    no_exception(b)
    assert any("Another session saved" in w.value for w in b.warning)
    saved = (_ws(app_env) / "golden.jsonl").read_text()
    assert "from A" in saved and "from B" not in saved
    beside = list((_ws(app_env)).glob("golden.conflict-*.jsonl"))
    assert len(beside) == 1 and "from B" in beside[0].read_text()
    b.button(key="conflict_keep").click().run()
    no_exception(b)
    assert "from B" in (_ws(app_env) / "golden.jsonl").read_text()


def test_reset_to_sample_needs_confirmation(app, app_env):
    goto(app, "pages/golden_set.py")
    edit_table(app, {"edited_rows": {0: {"relevant": [], "grades": ""}}})
    app.segmented_control(key="golden_view").set_value("io").run()  # the import/export/reset view
    app.button(key="reset_ask").click().run()
    no_exception(app)
    assert any("Replace your golden set" in w.value for w in app.warning)
    app.button(key="reset_yes").click().run()
    no_exception(app)
    goto(app, "pages/dashboard.py")
    assert shown_cards(app) == expected_cards(library_result("dense"), 5)


# ---- import / export -----------------------------------------------------------------------------
BAD_FILES = [
    ("bad.jsonl", b'{"question": "q", "relevant": {"no-such-chunk#9": 1}}\n{not json\n'),
    ("bad.csv", b"question,relevant_chunk_ids,grades\nhello,plans-and-pricing#0,abc\n"),
    ("latin1.json", "[{\"question\": \"caf\xe9\"}]".encode("latin-1")),
    ("qrels.txt", b"q999 0 plans-and-pricing#0 1\n"),
]


@pytest.mark.parametrize("name,data", BAD_FILES, ids=[n for n, _ in BAD_FILES])
def test_bad_import_shows_error_and_keeps_data(app, app_env, name, data):
    goto(app, "pages/golden_set.py")
    app.segmented_control(key="golden_view").set_value("io").run()  # the import/export/reset view
    app.file_uploader(key="golden_upload").set_value((name, data, "application/octet-stream")).run()
    app.button(key="golden_import").click().run()
    no_exception(app)
    assert any("Import rejected" in e.value for e in app.error), [e.value for e in app.error]
    assert app.dataframe, "the validation report is listed"
    assert not (_ws(app_env) / "golden.jsonl").exists()
    goto(app, "pages/dashboard.py")
    assert shown_cards(app) == expected_cards(library_result("dense"), 5)


def test_good_import_replaces_the_set(app, app_env):
    goto(app, "pages/golden_set.py")
    app.segmented_control(key="golden_view").set_value("io").run()  # the import/export/reset view
    data = (b"question,category,relevant_chunk_ids,grades\n"
            b"how much storage on free?,factual,plans-and-pricing#0|attachments-and-storage#0,3|3\n")
    app.file_uploader(key="golden_upload").set_value(("mine.csv", data, "text/csv")).run()
    app.button(key="golden_import").click().run()
    no_exception(app)
    assert any("Imported 1 queries" in s.value for s in app.success)
    rows = [json.loads(line) for line in (_ws(app_env) / "golden.jsonl").read_text().splitlines()]
    assert len(rows) == 1


def test_qrels_import_replaces_labels_of_matching_queries(app, app_env):
    goto(app, "pages/golden_set.py")
    app.segmented_control(key="golden_view").set_value("io").run()  # the import/export/reset view
    app.file_uploader(key="golden_upload").set_value(("labels.qrels", b"q001 0 billing-and-invoices#0 2\n",
                                                      "text/plain")).run()
    app.button(key="golden_import").click().run()
    no_exception(app)
    rows = [json.loads(line) for line in (_ws(app_env) / "golden.jsonl").read_text().splitlines()]
    assert rows[0]["relevant"] == {"billing-and-invoices#0": 2} and len(rows) == len(sample_golden())


def test_export_builds_the_chosen_format_only(app, downloads):
    from rag_metrics.authoring.golden_edit import EXPORT_FORMATS, export_golden

    goto(app, "pages/golden_set.py")
    app.segmented_control(key="golden_view").set_value("io").run()  # the import/export/reset view
    for fmt in EXPORT_FORMATS:
        app.segmented_control(key="golden_export_format").set_value(fmt).run()
        no_exception(app)
        buttons = [b for b in app.get("download_button") if b.proto.id.endswith("golden_export")]
        assert len(buttons) == 1 and buttons[0].label == fmt.upper()  # one button: the chosen format
        data = downloads.data(buttons[0])
        assert (data.decode() if isinstance(data, bytes) else data) == export_golden(sample_golden(), fmt)


# ---- labelling helper ----------------------------------------------------------------------------
def test_labelling_helper_adds_a_label(app, app_env):
    goto(app, "pages/golden_set.py")
    app.segmented_control(key="golden_view").set_value("label").run()
    app.selectbox(key="label_go").set_value("q007").run()  # (the queue starts at the first question)
    no_exception(app)
    queue = app.session_state["_label_queue"]["sample_corpus"]
    assert queue.current.query_id == "q007"
    before = queue.current_ticks()
    boxes = [c for c in app.checkbox if c.key and c.key.startswith("lq_tick_")]
    assert boxes, "retrieved chunks are listed with a checkbox"
    next(c for c in boxes if not c.value).check().run()
    added = set(app.session_state["_label_queue"]["sample_corpus"].current_ticks()) - set(before)
    assert len(added) == 1
    app.button(key="label_save").click().run()
    no_exception(app)
    rows = {json.loads(line)["id"]: json.loads(line) for line in
            (_ws(app_env) / "golden.jsonl").read_text().splitlines()}
    assert rows["q007"]["relevant"] == {**before, **dict.fromkeys(added, 1)}


# ---- failures and drill-down ---------------------------------------------------------------------
def test_failures_match_the_library_and_drill_down_explains(app):
    goto(app, "pages/failures.py")
    lib = library_result("dense")
    n_fail = len(lib.failures(5))
    assert any(m.value == f"{n_fail} / {lib.n_in_scope}" for m in app.metric)
    listed = next(df.value for df in app.dataframe if "would_hit_at" in df.value.columns)
    assert list(listed["query_id"]) == list(lib.failures(5)["query_id"])
    assert app.selectbox(key="fail_inspect").value == listed["query_id"].iloc[0]
    second = listed["query_id"].iloc[1]
    app.selectbox(key="fail_inspect").set_value(second).run()
    no_exception(app)
    row = lib.failures(5).set_index("query_id").loc[second]
    verdict = readouts.failure_verdict(row["first_relevant_rank"])
    assert any(c.value.endswith(verdict) for c in app.caption)
    assert {c.value for c in app.caption} >= {views.esc(i) for i in row["expected_ids"]}  # its expected chunks
    app.button(key="fail_drill").click().run()
    no_exception(app)
    assert app.selectbox(key="drill_query").value == second
    qid = lib.failures(5)["query_id"].iloc[0]
    app.selectbox(key="drill_query").set_value(qid).run()
    no_exception(app)
    expl = app.table[-1].value  # a wrapping table: the full formulas readable on a projector
    want = lib.explain(qid, 5)
    assert list(expl["With this query's numbers"]) == [want[m].substituted for m in DEFAULT_METRICS]
    assert list(expl["Value"]) == [f"{want[m].value:.3f}" for m in DEFAULT_METRICS]


# ---- corpus explorer ------------------------------------------------------------------------------
def test_live_query_and_rechunk_carry_labels(app, app_env):
    app.selectbox(key="system").set_value("bm25").run()
    goto(app, "pages/corpus_explorer.py")
    app.text_input(key="live_text").input("refund after cancelling").run()
    no_exception(app)
    assert any("text" in df.value.columns for df in app.dataframe)
    app.number_input(key="chunk_size_in").set_value(800)
    app.button[[b.label for b in app.button].index("Re-chunk and re-index")].click().run()
    no_exception(app)
    assert any("Re-chunked at 800/100" in s.value for s in app.success)
    settings = json.loads((_ws(app_env) / "settings.json").read_text())
    assert settings["chunk_size"] == 800
    goto(app, "pages/dashboard.py")
    assert "(800/100)" in app.caption[0].value


def test_upload_corpus_and_bad_upload(app):
    goto(app, "pages/corpus_explorer.py")
    app.file_uploader(key="corpus_upload").set_value([("bad.md", b"\xff\xfe\x00bad", "text/markdown")]).run()
    app.button(key="corpus_upload_go").click().run()
    no_exception(app)
    assert any("Upload rejected" in e.value for e in app.error)
    app.selectbox(key="system").set_value("bm25").run()
    docs = [("a.md", b"# Alpha\n\nAlpha notes are green and sync every hour.", "text/markdown"),
            ("b.txt", b"Beta invoices are sent monthly by email.", "text/plain")]
    load_corpus_files(app, docs, "tiny")
    assert app.session_state["corpus"] == "tiny"
    for page in PAGES:
        goto(app, page)
    goto(app, "pages/dashboard.py")
    assert any("label at least one" in w.value for w in app.warning)


def test_bad_beir_path_is_an_error_not_a_traceback(app):
    load_beir_folder(app, "/no/such/folder")
    assert any("Cannot load the BEIR folder" in e.value for e in app.error)


def _tiny_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    docs = [{"_id": "d1", "title": "Storage", "text": "Free accounts have 2 GB of storage."},
            {"_id": "d2", "title": "Billing", "text": "Invoices are emailed every month."},
            {"_id": "d3", "title": "Export", "text": "Export your notes as Markdown or PDF files."}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    qs = [{"_id": "1", "text": "how much storage is free"}, {"_id": "2", "text": "export notes to pdf"}]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n2\td3\t2\n")
    return folder


def test_beir_folder_is_evaluated_at_document_level(app, tmp_path):
    from rag_metrics.io.trec import load_beir
    from rag_metrics.metrics.options import EvalOptions
    from rag_metrics.retrieval import BM25Retriever, chunk_corpus, chunk_to_doc

    folder = _tiny_beir(tmp_path / "tinybeir")
    app.selectbox(key="system").set_value("bm25").run()
    load_beir_folder(app, folder)
    assert app.session_state["corpus"] == "tinybeir"
    for page in PAGES:
        goto(app, page)
    goto(app, "pages/dashboard.py")
    corpus, golden = load_beir(folder)
    chunks = chunk_corpus(corpus)
    r = BM25Retriever()
    r.index(chunks)
    run = r.retrieve(golden.questions(), k=100)
    res = evaluate(golden, run, EvalOptions(level="document"), chunk_to_doc=chunk_to_doc(chunks))
    assert shown_cards(app) == expected_cards(res, 3)  # K is capped at the depth (3 chunks)


def test_markdown_in_user_text_is_shown_literally(app):
    goto(app, "pages/golden_set.py")
    edit_table(app, {"edited_rows": {3: {"question": "**bold** <b>x</b> [link](http://e.x)"}}})
    no_exception(app)
    goto(app, "pages/failures.py")
    labels = [e.label for e in app.expander]
    hit = [lbl for lbl in labels if "bold" in lbl]
    if hit:  # when q004 still fails at K = 5, its label is escaped markdown
        assert "\\*\\*bold\\*\\*" in hit[0] and "\\<b\\>" in hit[0]


def test_other_session_save_is_announced_and_loadable(app, app_env):
    from streamlit.testing.v1 import AppTest

    b = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    b.run()
    goto(b, "pages/golden_set.py")
    goto(app, "pages/golden_set.py")
    edit_table(app, {"edited_rows": {0: {"relevant": [], "grades": ""}}})
    b.run()
    assert any("changed by another session" in i.value for i in b.info)
    b.button(key="stale_load").click().run()
    no_exception(b)
    goto(b, "pages/dashboard.py")
    assert shown_cards(b) == expected_cards(library_result("dense", edited_golden("q001")), 5)


def test_corpus_of_one_chunk_has_k_1_without_a_slider(app):
    """A slider needs min < max: with one chunk the depth is 1, K is clamped to 1 in one place and
    shown as text; every page still renders."""
    app.slider(key="k").set_value(10).run()
    app.selectbox(key="system").set_value("bm25").run()
    load_corpus_files(app, [("one.md", b"Alpha notes sync every hour.", "text/markdown")], "one")
    assert app.session_state["corpus"] == "one"
    for page in PAGES:
        goto(app, page)
        assert not [s for s in app.sidebar.slider if s.key == "k"]
        assert any("K (cutoff) = 1" in c.value for c in app.sidebar.caption)
        assert app.session_state["k"] == 1
    # back on the sample corpus, the slider returns (K stays within its range)
    app.selectbox(key="corpus").set_value("sample_corpus").run()
    no_exception(app)
    assert app.slider(key="k").value == 1
