"""Issue 11 in the app (AppTest): the labelling queue, the Golden set page's view kept after a
notice, a bad saved workspace that never bricks the app, hostile editor input that leaves the
saved file unchanged, ids with markup shown as text, and private workspaces."""
from __future__ import annotations

import pytest

from app_helpers import ROOT, SAMPLE, edit_table, goto, no_exception, sample_golden
from rag_metrics.workspace.store import Workspace

GOLDEN_PAGE = "pages/golden_set.py"


def _saved(app_env, space: str = "shared") -> dict[str, dict[str, int]]:
    ws = Workspace(SAMPLE, app_env, space=space)
    golden, report, _ = ws.load()
    assert report.ok, report.lines()
    return {q.id: dict(q.relevant) for q in golden}


def _label_view(at):
    at.segmented_control(key="golden_view").set_value("label").run()
    no_exception(at)
    return at


def _queue(at):
    return at.session_state["_label_queue"][SAMPLE]


def _tick_boxes(at):
    return [c for c in at.checkbox if (c.key or "").startswith("lq_tick_")]


# ---- the labelling queue -----------------------------------------------------------------------
def test_label_three_questions_in_a_row(app, app_env):
    goto(app, GOLDEN_PAGE)
    _label_view(app)
    original = {q.id: dict(q.relevant) for q in sample_golden()}
    expected = dict(original)
    for n in range(3):
        q = _queue(app)
        cur = q.current
        assert cur.query_id == list(original)[n]
        boxes = _tick_boxes(app)
        assert boxes, "no candidates shown"
        # the ticks shown are exactly this question's saved labels (none carried from the previous one)
        ticked = {b.key for b in boxes if b.value}
        assert len(ticked) == sum(1 for b in boxes if b.value)
        assert sum(1 for b in boxes if b.value) <= len(original[cur.query_id])
        first_unticked = next(b for b in boxes if not b.value)
        first_unticked.check().run()
        no_exception(app)
        new_id = next(i for i in q.current_ticks() if i not in original[cur.query_id])
        app.button(key="label_save_next").click().run()
        no_exception(app)
        expected[cur.query_id] = {**original[cur.query_id], new_id: 1}
        # one click moved on, and the labelling view is still the one shown (no jump to the first view)
        assert app.session_state["golden_view"] == "label"
        assert _queue(app).pos == n + 1
        assert any("Saved" in s.value for s in app.success)
    assert _saved(app_env) == expected  # exactly those labels, re-read from disk


def test_skip_and_previous_save_nothing(app, app_env):
    goto(app, GOLDEN_PAGE)
    _label_view(app)
    _tick_boxes(app)[-1].check().run()
    app.button(key="label_skip").click().run()
    app.button(key="label_prev").click().run()
    no_exception(app)
    assert _queue(app).pos == 0
    assert not Workspace(SAMPLE, app_env).path.exists()  # nothing was saved


def test_add_a_live_question_and_label_it(app, app_env):
    goto(app, GOLDEN_PAGE)
    _label_view(app)
    app.text_input(key="label_live_q").input("Can I pay by bank transfer?").run()
    app.button(key="label_add").click().run()
    no_exception(app)
    assert _queue(app).current.question == "Can I pay by bank transfer?"
    assert not any(b.value for b in _tick_boxes(app))
    _tick_boxes(app)[0].check().run()
    app.button(key="label_save").click().run()
    no_exception(app)
    saved = Workspace(SAMPLE, app_env).load()[0]
    new = [q for q in saved if q.question == "Can I pay by bank transfer?"]
    assert len(new) == 1 and len(new[0].relevant) == 1


# ---- a bad saved workspace never bricks the app ------------------------------------------------
BAD = {
    "grade_1e308": lambda good: good.replace('"relevant": {', '"relevant": {"x#0": 1e308, ', 1),
    "huge_grade": lambda good: good.replace('"relevant": {', '"relevant": {"x#0": 99999999999999999999999, ', 1),
    "not_json": lambda good: good + "{not json\n",
    "nested": lambda good: good + "[" * 5000 + "]" * 5000 + "\n",
    "csv": lambda good: "id,question\nq1,a\n",
}


@pytest.mark.parametrize("kind", list(BAD))
def test_bad_saved_workspace_opens_says_what_and_repairs(app_env, kind):
    from streamlit.testing.v1 import AppTest

    from rag_metrics.io.golden import golden_to_text

    ws = Workspace(SAMPLE, app_env)
    ws.folder.mkdir(parents=True, exist_ok=True)
    ws.path.write_text(BAD[kind](golden_to_text(sample_golden(), "jsonl")))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    no_exception(at)
    for page in ("pages/dashboard.py", GOLDEN_PAGE, "pages/failures.py"):
        goto(at, page)
        assert any("problem" in w.value for w in at.warning), page
        assert any("golden.jsonl" in c.value.replace("\\", "") for c in at.caption)
    at.button(key="ws_repair").click().run()
    no_exception(at)
    assert ws.check().ok and list(ws.folder.glob("golden.backup-*.jsonl"))
    assert not any("saved workspace of this corpus" in w.value for w in at.warning)


def test_bad_settings_do_not_break_the_app(app_env):
    from streamlit.testing.v1 import AppTest

    ws = Workspace(SAMPLE, app_env)
    ws.folder.mkdir(parents=True, exist_ok=True)
    ws.settings_path.write_text('{"chunk_size": 1e999, "chunk_overlap": "²"}')
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    no_exception(at)
    at.button(key="ws_reset").click().run()
    no_exception(at)
    assert ws.check().ok


# ---- hostile editor input leaves the saved file unchanged --------------------------------------
@pytest.mark.parametrize("grades", ["99999999999999999999999|1", "1e308|1", "3000000000|1", "²|1", "٣|1",
                                    "9" * 5000 + "|1", "1_000|1", "nan|1", "True|1"])
def test_hostile_grades_in_the_editor(app, app_env, grades):
    goto(app, GOLDEN_PAGE)
    edit_table(app, {"edited_rows": {0: {"grades": "2|1"}}})  # a valid edit first: the file exists
    path = Workspace(SAMPLE, app_env).path
    before = path.read_bytes()
    edit_table(app, {"edited_rows": {0: {"grades": grades}}})
    no_exception(app)
    assert any("Not saved" in e.value for e in app.error)
    assert path.read_bytes() == before


# ---- ids with markup are shown as text -----------------------------------------------------------
def test_ids_and_questions_with_markup_are_shown_as_text(app, app_env):
    goto(app, GOLDEN_PAGE)
    edit_table(app, {"added_rows": [{"question": "![x](http://example.com/a.png) **bold** <b>tag</b>",
                                     "category": "out_of_scope", "relevant": [], "grades": ""}]})
    no_exception(app)
    _label_view(app)
    app.text_input(key="label_live_q").input("![x](http://example.com/a.png) **bold** <b>tag</b>").run()
    app.button(key="label_add").click().run()
    no_exception(app)
    shown = [m.value for m in app.markdown] + [c.value for c in app.caption]
    for text in shown:
        assert "![x](http://" not in text, text  # never a live markdown image


# ---- workspaces: named, private, isolated --------------------------------------------------------
def test_sessions_on_different_workspaces_never_see_each_others_edits(app_env):
    from streamlit.testing.v1 import AppTest

    a = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    a.query_params["ws"] = "team a"
    a.run()
    b = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    b.query_params["ws"] = "team b"
    b.run()
    goto(a, GOLDEN_PAGE)
    goto(b, GOLDEN_PAGE)
    edit_table(a, {"edited_rows": {0: {"expected_answer": "from a"}}})
    edit_table(b, {"edited_rows": {1: {"expected_answer": "from b"}}})
    no_exception(a)
    no_exception(b)
    sa, sb = Workspace(SAMPLE, app_env, space="team a").load()[0], Workspace(SAMPLE, app_env, space="team b").load()[0]
    assert [q.expected_answer for q in sa.queries[:2]] == ["from a", sample_golden().queries[1].expected_answer]
    assert [q.expected_answer for q in sb.queries[:2]] == [sample_golden().queries[0].expected_answer, "from b"]
    assert a.query_params["ws"] == "team a" and b.query_params["ws"] == "team b"
    assert not Workspace(SAMPLE, app_env).path.exists()  # the shared workspace is untouched


def test_class_mode_gives_each_browser_a_private_copy(app_env, monkeypatch, proven_browser):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("RAG_METRICS_CLASS_MODE", "1")
    a = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    a.run()
    b = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    b.run()
    sa, sb = a.session_state["_identity_caller"].space, b.session_state["_identity_caller"].space
    assert sa != sb and sa.startswith("seat-") and sb.startswith("seat-")  # one seat per browser
    goto(a, GOLDEN_PAGE)
    edit_table(a, {"edited_rows": {0: {"expected_answer": "only a"}}})
    no_exception(a)
    assert Workspace(SAMPLE, app_env, space=sa).load()[0].queries[0].expected_answer == "only a"
    assert Workspace(SAMPLE, app_env, space=sb).load() is None
    assert not Workspace(SAMPLE, app_env).path.exists()


def test_undo_in_the_page(app, app_env):
    goto(app, GOLDEN_PAGE)
    edit_table(app, {"edited_rows": {0: {"expected_answer": "first"}}})
    edit_table(app, {"edited_rows": {0: {"expected_answer": "second"}}})
    app.segmented_control(key="golden_view").set_value("io").run()
    app.button(key="golden_undo").click().run()
    no_exception(app)
    assert Workspace(SAMPLE, app_env).load()[0].queries[0].expected_answer == "first"
    assert app.session_state["golden_view"] == "io"


# ---- hostile uploads: a clear message in the page, the saved file unchanged ----------------------
HOSTILE_UPLOADS = [
    ("nested.jsonl", b'{"question": "q", "relevant": ' + b"[" * 5000 + b"]" * 5000 + b"}\n"),
    ("big_grade.json", b'[{"question": "q", "relevant": {"plans-and-pricing#0": 99999999999999999999999}}]'),
    ("float_grade.jsonl", b'{"question": "q", "relevant": {"plans-and-pricing#0": 1e308}}\n'),
    ("superscript.csv", "question,relevant_chunk_ids,grades\nq,plans-and-pricing#0,\u00b2\n".encode()),
    ("digits.csv", b"question,relevant_chunk_ids,grades\nq,plans-and-pricing#0," + b"9" * 5000 + b"\n"),
    ("space_id.jsonl", b'{"id": "q 1", "question": "q", "relevant": {"plans-and-pricing#0": 1}}\n'),
    ("tab_chunk.jsonl", b'{"question": "q", "relevant": {"plans-and-pricing\\t#0": 1}}\n'),
    ("huge_number.json", b'[{"question": "q", "relevant": {"plans-and-pricing#0": ' + b"9" * 5000 + b"}}]"),
]


@pytest.mark.parametrize("name,data", HOSTILE_UPLOADS, ids=[n for n, _ in HOSTILE_UPLOADS])
def test_hostile_uploads_are_rejected_with_a_message(app, app_env, name, data):
    goto(app, GOLDEN_PAGE)
    edit_table(app, {"edited_rows": {0: {"expected_answer": "saved before"}}})  # the file exists
    path = Workspace(SAMPLE, app_env).path
    before = path.read_bytes()
    app.segmented_control(key="golden_view").set_value("io").run()
    app.file_uploader(key="golden_upload").set_value((name, data, "application/octet-stream")).run()
    app.button(key="golden_import").click().run()
    no_exception(app)
    assert any("Import rejected" in e.value for e in app.error), [e.value for e in app.error]
    assert path.read_bytes() == before
