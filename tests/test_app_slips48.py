"""AppTest of issue 48's smaller slips on the Exercises page and the shell: the tab's icon is drawn locally
(never from a font server), the timeout message's markdown renders, a ``None`` result shows as Python's
``None``, Danish verdict numbers are written as the lesson writes them, a passing verdict names whose
conventions its two numbers follow, and the page keeps the exercise picked when you come back."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_helpers import goto, no_exception
from rag_metrics.exercises import EXERCISES
from ui.exercise_editor import REPORT
from ui.keys import EX_PICK

PAGE = "pages/exercises.py"
NAME = "hit_rate_at_k"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def assets(monkeypatch):
    import ui.exercise_editor

    monkeypatch.setattr(ui.exercise_editor, "assets_ready", lambda: True)


def _report(values: dict | None, *, status="ok", nonce="n1") -> dict:
    result = {"ok": True, "error": None, "results": {k: {"value": v} for k, v in (values or {}).items()},
              "stdout": ""}
    return {"nonce": nonce, "doc": f"{NAME}:0", "code": "def hit_rate_at_k(d, r, k):\n    return 0\n",
            "status": status, "result": json.dumps(result)}


def _run_report(at, report: dict):
    at.session_state[REPORT] = report
    at.run()
    no_exception(at)
    return at


def _expected(at) -> dict:
    _, _, checks = at.session_state["_ex_checks"]
    return {c.id: c.expected for c in checks}


def test_the_tab_icon_is_local(app, monkeypatch):
    """Streamlit's frontend loads a ``:material/...:`` favicon from fonts.gstatic.com; an emoji becomes a
    data: URL.  And no file the app serves names a font server."""
    import streamlit as st
    from streamlit.commands.page_config import _get_favicon_string

    seen: list = []
    real = st.set_page_config

    def spy(*args, **kwargs):
        seen.append(kwargs.get("page_icon"))
        return real(*args, **kwargs)

    monkeypatch.setattr(st, "set_page_config", spy)
    goto(app, PAGE)
    assert seen and all(_get_favicon_string(icon).startswith("emoji:") for icon in seen if icon), seen
    files = [ROOT / "app.py", *(ROOT / "ui").rglob("*.py"), *(ROOT / "pages").glob("*.py"),
             *(ROOT / ".streamlit").glob("*"), *(ROOT / "ui" / "exercise_editor_assets").glob("*")]
    for f in files:
        if f.is_file():
            text = f.read_text(encoding="utf-8", errors="replace")
            assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, f


def test_the_timeout_message_renders_its_markdown(app):
    at = _run_report(goto(app, PAGE), _report(None, status="timeout"))
    shown = [str(e.value) for e in at.error]
    assert any("`while`" in s for s in shown), shown
    assert not any("\\`" in s for s in shown), shown


def test_a_none_result_shows_as_python_none(app):
    at = goto(app, PAGE)
    expected = _expected(at)
    at = _run_report(at, _report({cid: None for cid in expected}))
    codes = [str(c.value) for c in at.code]
    assert "None" in codes, codes
    assert "null" not in codes, codes


def test_a_passing_verdict_names_the_conventions_of_each_number(app):
    at = goto(app, PAGE)
    at = _run_report(at, _report(_expected(at)))
    labels = [m.label for m in at.metric]
    assert any("lesson's conventions" in m for m in labels), labels
    assert any("trec_eval" in str(c.value) for c in at.caption), [c.value for c in at.caption]


def test_danish_verdict_numbers_are_written_as_the_lesson_writes_them():
    from ui.lesson import numbers_in

    assert numbers_in("Forventet 0.723684, fik 1.13158.", "da") == "Forventet 0,724, fik 1,132."
    # rounding would make them look equal: the digits stay, the decimal mark changes
    assert numbers_in("Forventet 0.723684, fik 0.723601.", "da") == "Forventet 0,723684, fik 0,723601."
    assert numbers_in("fik [0.5, 0.25]", "da") == "fik [0.5, 0.25]"   # a Python value stays Python
    assert numbers_in("Expected 0.723684, got 1.13158.", "en") == "Expected 0.723684, got 1.13158."


def test_the_page_keeps_the_exercise_when_you_come_back(app):
    at = goto(app, PAGE)
    second = EXERCISES[1].name
    at.selectbox(key=EX_PICK).set_value(second).run()
    no_exception(at)
    goto(at, "pages/lesson.py")
    at.query_params.clear()
    goto(at, PAGE)
    assert at.selectbox(key=EX_PICK).value == second


def test_the_danish_lesson_s_tooltips_and_conventions_line_are_danish(app):
    from rag_metrics.lesson import STEPS

    at = goto(app, "pages/lesson.py")
    at.segmented_control(key="lesson_lang").set_value("da").run()
    at.selectbox(key="lesson_step_pick").set_value([s.key for s in STEPS].index("hit_rate")).run()
    no_exception(at)
    captions = [str(c.value).replace("\\", "") for c in at.main.caption]
    assert any("Konventioner:" in c for c in captions), captions
    assert not any("Conventions:" in c for c in captions), captions
    helps = [m.proto.help for m in at.main.metric]
    assert helps and all("Formel:" in h and "Formula:" not in h for h in helps), helps
