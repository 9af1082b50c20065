"""Honest marks (issue 50): a forged report (the right values, code that returns 0) shows on the teacher's
Class progress as reported by the student's browser, never as a plain "✓ 8/8"; the teacher re-runs the
student's code in their own browser with one click (here: the report that browser sends, made by running
the harness locally), and the re-run's result shows beside the reported one."""
from __future__ import annotations

import json

from app_helpers import goto, no_exception
from rag_metrics.exercises.runner import run_harness
from tests.test_app_exercises import NAME, PAGE, _data, _expected, _report, _run_report, assets  # noqa: F401
from ui.exercise_editor import REPORT

FORGED = "def hit_rate_at_k(golden_dataset, retriever, k):\n    return 0\n"


def test_a_forged_report_is_labelled_and_the_teachers_rerun_shows_what_the_code_does(app):
    at = goto(app, PAGE)
    expected = _expected(at)
    n = len(expected)
    _run_report(at, _report(expected, code=FORGED))  # the right values, sent by hand beside code returning 0
    goto(at, "pages/class_progress.py")
    table = next(df.value for df in at.dataframe if NAME in df.value.columns)
    cell = str(table[NAME].iloc[0])
    assert cell == f"reported {n}/{n} (1)", cell
    assert any("reported by the student's browser" in str(c.value) for c in at.caption)

    at.selectbox(key="ex_class_exercise").set_value(NAME).run()
    no_exception(at)
    editor = next(d for d in (json.loads(c.proto.json) for c in at.get("bidi_component"))
                  if d["doc_id"].startswith("rerun:"))
    assert editor["code"] == FORGED and editor["labels"]["run"] == "Re-run in my browser"
    # the teacher's click runs the code in the teacher's sandbox, which reports what it really returns
    result = run_harness(FORGED, json.loads(editor["payload"]) | {"harness": editor["harness"]})
    at.session_state[REPORT] = {"nonce": "t1", "doc": editor["doc_id"], "code": FORGED, "status": "ok",
                                "result": result}
    at.run()
    no_exception(at)
    table = next(df.value for df in at.dataframe if NAME in df.value.columns)
    cell = str(table[NAME].iloc[0])
    passed = json.loads(result)["results"]  # what the code returned, graded by the server: most checks fail
    again = int(cell.rsplit("re-run ", 1)[1].split("/")[0])
    assert cell == f"reported {n}/{n} (1) · ✗ re-run {again}/{n}" and again < n and passed, cell
    warnings = [str(w.value).replace("\\", "") for w in at.warning]  # markdown's escapes
    assert any(f"Re-run in your browser: Passed {again} of {n} checks" in w for w in warnings), warnings
