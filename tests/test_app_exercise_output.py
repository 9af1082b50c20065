"""AppTest of issue 48: the Exercises page shows what the student's ``print()`` wrote beside the verdict (as text,
bounded, saying so when cut), and one real ``golden_dataset`` item and one real ``retrieve()`` result, as Python
values, from the data the check on the current golden set calls the function with."""
from __future__ import annotations

import json
import pprint

import pytest

from app_helpers import goto, no_exception
from ui.exercise_editor import REPORT

PAGE = "pages/exercises.py"
NAME = "hit_rate_at_k"


@pytest.fixture(autouse=True)
def assets(monkeypatch):
    import ui.exercise_editor

    monkeypatch.setattr(ui.exercise_editor, "assets_ready", lambda: True)


def _run(at, stdout: str, *, error=None, nonce="n-out"):
    result = {"ok": error is None, "error": error, "results": {"current": {"value": 0.5}}, "stdout": stdout}
    at.session_state[REPORT] = {"nonce": nonce, "doc": f"{NAME}:0", "code": "def hit_rate_at_k(d, r, k):\n  return 0\n",
                                "status": "ok", "result": json.dumps(result)}
    at.run()
    no_exception(at)
    return at


def test_print_output_is_shown_as_text_beside_the_verdict(app):
    printed = "item: {'question': 'q?'}\n<b>bold?</b> **not markdown**"
    at = _run(goto(app, PAGE), printed)
    assert printed in [str(c.value) for c in at.code]
    assert not any("<b>bold?</b>" in str(m.value) for m in at.markdown)   # only as code text, never as markup
    captions = [str(c.value) for c in at.caption]
    assert any("What your code printed" in c for c in captions), captions
    assert not any(c.startswith("Cut:") for c in captions), captions


def test_print_output_is_bounded_and_says_so_when_cut(app):
    from rag_metrics.exercises.grading import SHOWN_OUTPUT_CHARS

    at = _run(goto(app, PAGE), "x" * (SHOWN_OUTPUT_CHARS + 500))
    shown = [str(c.value) for c in at.code if str(c.value).startswith("xxx")]
    assert shown == ["x" * SHOWN_OUTPUT_CHARS]
    assert any(str(c.value).startswith(f"Cut: only the first {SHOWN_OUTPUT_CHARS}") for c in at.caption)
    # the harness's own cap (its mark) counts as cut too, and its mark is not shown as output
    at = _run(at, "hello\n[output cut]", nonce="n-out-2")
    assert "hello" in [str(c.value) for c in at.code]
    assert any(str(c.value).startswith("Cut: only the first 5 ") for c in at.caption)


def test_print_output_is_shown_with_an_error_of_the_whole_run(app):
    at = _run(goto(app, PAGE), "got here\n", error={"kind": "exception", "line": 3, "message": "KeyError: 'x'"})
    assert at.error and "line 3" in str(at.error[0].value)
    assert "got here" in [str(c.value) for c in at.code]


def test_one_real_golden_item_and_one_real_retrieve_result_are_shown(app):
    at = goto(app, PAGE)
    _, _, checks = at.session_state["_ex_checks"]
    current = next(c for c in checks if c.id == "current")
    item = current.args["dataset"][0]                         # what the function is called with
    ranked = current.args["rankings"][item["question"]][:current.args["k"]]
    codes = [str(c.value) for c in at.code]
    assert "golden_dataset[0]\n" + pprint.pformat(item, width=90, sort_dicts=False) in codes, codes
    results = [{"id": i, "score": s} for i, s in ranked]
    assert ranked and f"retriever.retrieve(golden_dataset[0]['question'], top_k={current.args['k']})\n" \
        + pprint.pformat(results, width=90, sort_dicts=False) in codes, codes
    assert item["question"] and item["relevant_chunk_ids"]
