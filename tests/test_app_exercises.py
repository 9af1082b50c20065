"""AppTest of the Exercises page (issue 26): the page renders the editor component with the exercise's
payload, grades a report injected as the browser would send it (``st.session_state[REPORT]``), keeps code
and attempts in the student's space, and the teacher's Class progress shows them (code read-only)."""
from __future__ import annotations

import json

import pytest

from app_helpers import goto, no_exception
from rag_metrics.exercises import EXERCISES, HARNESS
from rag_metrics.exercises.attempts import store_for_space
from ui.exercise_editor import REPORT

PAGE = "pages/exercises.py"
NAME = "hit_rate_at_k"


@pytest.fixture(autouse=True)
def assets(monkeypatch):
    """As if ``./lab`` had built the browser assets (AppTest never loads them; the browser tests do)."""
    import ui.exercise_editor

    monkeypatch.setattr(ui.exercise_editor, "assets_ready", lambda: True)


@pytest.fixture
def page(app):
    return goto(app, PAGE)


def _data(at) -> dict:
    comps = [e for e in at.get("bidi_component")]
    assert comps, "the editor component is not on the page"
    return json.loads(comps[0].proto.json)


def _report(values: dict | None = None, *, status="ok", code="def hit_rate_at_k(d, r, k):\n    return 0\n",
            error=None, nonce="n1") -> dict:
    result = {"ok": error is None, "error": error, "results": {k: {"value": v} for k, v in (values or {}).items()},
              "stdout": ""}
    return {"nonce": nonce, "doc": f"{NAME}:0", "code": code, "status": status, "result": json.dumps(result)}


def _expected(at) -> dict:
    """The expected values of the checks the page built (server-side state, never in the payload)."""
    _, _, checks = at.session_state["_ex_checks"]
    return {c.id: c.expected for c in checks}


def test_page_renders_the_editor_with_the_payload_and_no_expected_values(page):
    at = page
    data = _data(at)
    assert data["doc_id"] == f"{NAME}:0"
    assert data["harness"] == HARNESS
    payload = json.loads(data["payload"])
    assert payload["function"] == NAME and payload["checks"]
    assert all(set(c) == {"id", "args"} for c in payload["checks"])
    assert "expected" not in data["payload"] and "reference" not in data["payload"]
    assert data["assets"] == "/app/static/vendor/"
    assert data["limits"]["timeout_ms"] == 5000
    assert data["code"] == EXERCISES[0].starter
    assert data["verdict"] is None


def _run_report(at, report: dict):
    at.session_state[REPORT] = report
    at.run()
    no_exception(at)
    return at


def _texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("success", "warning", "error", "info", "markdown", "caption")
                     for e in getattr(at, kind))


def test_a_correct_report_passes_and_is_kept_in_the_space(page, app_env):
    at = page
    expected = _expected(at)
    code = "def hit_rate_at_k(golden_dataset, retriever, k):\n    return 1.0\n"
    _run_report(at, _report(expected, code=code))
    n = len(expected)
    assert any(f"Passed {n} of {n} checks" in str(s.value) for s in at.success)
    assert _data(at)["verdict"] == {"text": f"Passed {n} of {n} checks", "kind": "pass", "nonce": "n1"}
    saved = store_for_space("shared", app_env).load(NAME)
    assert (saved.attempts, saved.passed, saved.total, saved.solved, saved.code) == (1, n, n, True, code)
    # the Dashboard's mean beside the student's for the same questions
    assert any("Dashboard" in m.label for m in at.metric), [m.label for m in at.metric]
    _run_report(at, _report(expected, code=code))  # the same report again (same nonce): graded once
    assert store_for_space("shared", app_env).load(NAME).attempts == 1
    at.switch_page(PAGE).run()  # the saved code comes back in the editor
    assert _data(at)["code"] == code


def test_a_wrong_report_fails_with_its_hint_and_the_first_failure(page, app_env):
    at = page
    expected = _expected(at)
    wrong = {cid: (0.0 if isinstance(v, (int, float)) else v) for cid, v in expected.items()}
    _run_report(at, _report(wrong, nonce="wrong"))
    n = len(expected)
    assert any("of" in str(w.value) and "checks" in str(w.value) for w in at.warning)
    assert not any(f"Passed {n} of {n}" in str(s.value) for s in at.success)
    text = _texts(at)
    assert "First failing check" in text and "Expected" in text
    assert at.info, "a hint is shown for the first failure"
    saved = store_for_space("shared", app_env).load(NAME)
    assert saved.attempts == 1 and not saved.solved and saved.passed < n


def test_syntax_error_timeout_and_garbage_reports_in_plain_words(page, app_env):
    at = page
    _run_report(at, _report(error={"kind": "syntax", "line": 3, "message": "invalid syntax"}, nonce="s"))
    assert any("line 3" in str(e.value) for e in at.error), [e.value for e in at.error]
    # one message with its line: no "Passed 0 of N checks", not the same error once per check (issue 48)
    assert sum("line 3" in str(e.value) for e in at.error) == 1 and not at.dataframe
    assert not any("Passed" in str(w.value) for w in at.warning) and "Passed 0" not in _texts(at)
    assert _data(at)["verdict"]["text"] == "Not checked"
    _run_report(at, {"nonce": "t", "doc": f"{NAME}:0", "code": "while True: pass", "status": "timeout"})
    assert any("longer than 5 s" in str(e.value) for e in at.error)
    assert _data(at)["verdict"] == {"text": "stopped: ran longer than 5 s", "kind": "stopped", "nonce": "t"}
    _run_report(at, {"nonce": "g", "doc": f"{NAME}:0", "code": "x", "status": "ok", "result": "<not json>" * 10})
    assert any("could not be read" in str(e.value) for e in at.error)
    _run_report(at, {"nonce": "big", "doc": f"{NAME}:0", "code": "x" * 30_000, "status": "ok", "result": "{}"})
    assert store_for_space("shared", app_env).load(NAME).attempts == 3  # too long: refused, not kept
    _run_report(at, ["not", "a", "dict"])  # ignored
    _run_report(at, {"nonce": "other", "doc": "precision_at_k:0", "code": "x", "status": "ok", "result": "{}"})
    assert store_for_space("shared", app_env).load("precision_at_k").attempts == 0  # not the exercise shown


def test_danish_and_the_url_picks_the_exercise(app):
    at = app
    at.query_params["exercise"] = "precision_at_k"
    goto(at, PAGE)
    assert _data(at)["doc_id"] == "precision_at_k:0"
    at.segmented_control(key="ex_lang").set_value("da").run()
    no_exception(at)
    assert any("Skriv metrikken selv" in t.value for t in at.title)
    assert json.loads(_data(at)["payload"])["function"] == "precision_at_k"
    assert _data(at)["labels"]["run"] == "Kør tjek"


def test_hints_are_revealed_one_by_one(page):
    at = page
    ex = EXERCISES[0]
    assert not at.info
    for i in range(len(ex.hints["en"])):
        at.button(key=f"ex_hint_{NAME}").click().run()
        assert len(at.info) == i + 1
    assert not [b for b in at.button if b.key == f"ex_hint_{NAME}"]


def test_the_teacher_sees_attempts_and_the_code_read_only(page, app_env):
    at = page
    evil = "def hit_rate_at_k(d, r, k):\n    return '<script>alert(1)</script> **bold**'\n"
    _run_report(at, _report({}, code=evil, nonce="e"))
    goto(at, "pages/class_progress.py")
    frames = [df.value for df in at.dataframe]
    assert any(NAME in f.columns and f[NAME].astype(str).str.contains(r"\(1\)").any() for f in frames), frames
    at.selectbox(key="ex_class_exercise").set_value(NAME).run()
    no_exception(at)
    assert any(c.value.strip() == evil.strip() for c in at.code), "the code is shown as code, verbatim"
    assert not any("<script>" in str(m.value) for m in at.markdown)


def test_a_lesson_step_shows_the_lessons_code_and_links_its_exercise(app):
    from rag_metrics.lesson import STEPS

    at = goto(app, "pages/lesson.py")
    at.selectbox(key="lesson_step_pick").set_value([s.key for s in STEPS].index("hit_rate")).run()
    no_exception(at)
    code = EXERCISES[0].lesson_code
    assert any(c.value.strip() == code.strip() for c in at.code)
    links = [e for e in at.get("page_link")]
    assert any("exercise" in str(getattr(e, "proto", "")) for e in links), links


def test_without_the_built_assets_the_page_says_how_to_install_them(app, monkeypatch):
    import ui.exercise_editor

    monkeypatch.setattr(ui.exercise_editor, "assets_ready", lambda: False)
    at = goto(app, PAGE)
    assert not list(at.get("bidi_component"))
    assert any("./lab app" in str(e.value) for e in at.error)


# ---- the draft: saved as the student types (issue 26's gap), from the editor's ``draft`` trigger ----------
def test_the_editors_draft_value_reaches_the_page_through_its_callback(monkeypatch):
    """``on_draft`` turns the component's value (its ``draft`` trigger) into ``st.session_state[DRAFT]``."""
    import ui.exercise_editor as editor

    fake: dict = {}
    monkeypatch.setattr(editor.st, "session_state", fake)
    fake["ex_editor"] = {"draft": {"doc": f"{NAME}:0", "code": "def hit_rate_at_k(d, r, k):\n    return"}}
    editor.on_draft("ex_editor")
    assert fake[editor.DRAFT] == {"doc": f"{NAME}:0", "code": "def hit_rate_at_k(d, r, k):\n    return"}
    for bad in ({"draft": {"doc": NAME, "code": "x" * 30_000}}, {"draft": "text"}, {"draft": {"doc": 1, "code": "x"}},
                {"report": {}}, None):
        fake.pop(editor.DRAFT, None)
        fake["ex_editor"] = bad
        editor.on_draft("ex_editor")
        assert editor.DRAFT not in fake, bad
    assert editor.LIMITS["draft_ms"] == editor.DRAFT_MS


def test_a_draft_is_kept_in_the_space_and_a_reload_opens_on_it(page, app_env):
    from streamlit.testing.v1 import AppTest

    from app_helpers import ROOT
    from ui.exercise_editor import DRAFT

    at = page
    typed = "def hit_rate_at_k(golden_dataset, retriever, k=5):\n    hits = 0  # still typing\n"
    at.session_state[DRAFT] = {"doc": f"{NAME}:0", "code": typed}
    at.run()
    no_exception(at)
    saved = store_for_space("shared", app_env).load(NAME)
    assert (saved.draft, saved.attempts) == (typed, 0)  # kept, not counted as a run
    assert _data(at)["limits"]["draft_ms"] > 0  # the editor debounces its drafts
    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)  # a reload: a new session
    fresh.run()
    goto(fresh, PAGE)
    assert _data(fresh)["code"] == typed
    # refused: too long, an exercise not in the catalogue, a document a reset replaced
    for doc, code in ((f"{NAME}:0", "x" * 30_000), ("not_an_exercise:0", "x"), (f"{NAME}:7", "old")):
        fresh.session_state[DRAFT] = {"doc": doc, "code": code}
        fresh.run()
        no_exception(fresh)
    assert store_for_space("shared", app_env).load(NAME).draft == typed
    assert not (app_env / "exercises" / "not_an_exercise.json").exists()
    # Reset: the starter again, also after another reload
    fresh.button(key=f"ex_reset_{NAME}").click().run()
    assert _data(fresh)["code"] == EXERCISES[0].starter and store_for_space("shared", app_env).load(NAME).draft == ""


def test_a_run_replaces_the_draft(page, app_env):
    from ui.exercise_editor import DRAFT

    at = page
    at.session_state[DRAFT] = {"doc": f"{NAME}:0", "code": "half written"}
    at.run()
    code = "def hit_rate_at_k(golden_dataset, retriever, k):\n    return 1.0\n"
    _run_report(at, _report(_expected(at), code=code, nonce="d1"))
    saved = store_for_space("shared", app_env).load(NAME)
    assert (saved.draft, saved.code, saved.attempts) == ("", code, 1)
    at.switch_page(PAGE).run()
    assert _data(at)["code"] == code
