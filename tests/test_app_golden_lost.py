"""Nothing lost in the golden set, on the pages (issue 47, AppTest): "Start the golden set from the log"
with a system name that exists changes nothing and says so in red; reset resets, in the shared space and in
a student's private space; the replaced set is kept in undo."""
from __future__ import annotations

import json
from pathlib import Path

from test_app_class import klass, seat_of  # noqa: F401  (the class fixture: seats and private spaces)

from app_helpers import app_golden, no_exception, sample_golden
from rag_metrics.server.seats import seat_space
from rag_metrics.types import GoldenQuery, GoldenSet
from rag_metrics.workspace.store import Workspace

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = "sample_corpus"
BRING = "pages/bring_your_system.py"
GOLDEN = "pages/golden_set.py"


def _log() -> bytes:
    rows = [{"question": q.question, "contexts": ["some retrieved text"], "answer": "x", "ground_truth": f"answer {n}"}
            for n, q in enumerate(list(sample_golden())[:4])]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _bring(at, name: str, from_log: bool):
    at.file_uploader(key="bring_files").set_value([("log.jsonl", _log(), "application/json")]).run()
    at.text_input(key="bring_name").input(name)
    if from_log:
        at.checkbox(key="bring_golden_from_log").check()
    next(b for b in at.button if b.label == "Bring in and evaluate").click().run()
    no_exception(at)


def _undo_label(at) -> str:
    return next(b.label for b in at.button if b.key == "golden_undo")


def _reset(at) -> None:
    at.switch_page(GOLDEN).run()
    at.segmented_control(key="golden_view").set_value("io").run()
    at.button(key="reset_ask").click().run()
    at.button(key="reset_yes").click().run()
    no_exception(at)


def test_a_taken_name_with_start_from_the_log_changes_nothing_and_is_not_green(app_env):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page(BRING).run()
    _bring(at, "my app", from_log=False)
    assert any("System 'my app' added" in s.value.replace("\\", "") for s in at.success)
    shipped = len(app_golden(at))
    _bring(at, "my app", from_log=True)
    refused = " ".join(e.value for e in at.error).replace("\\", "")
    assert "exists already" in refused and "Nothing was changed" in refused
    assert not any("exists already" in s.value.replace("\\", "") for s in at.success)
    assert len(app_golden(at)) == shipped and not (Workspace(SAMPLE, app_env).path.exists())
    _bring(at, "my app 2", from_log=True)  # a free name: the set is started from the log, the system added
    done = " ".join(s.value for s in at.success).replace("\\", "")
    assert "Golden set started from the log's 4 questions" in done and "System 'my app 2' added" in done
    assert len(app_golden(at)) == 4
    at.switch_page(GOLDEN).run()
    at.segmented_control(key="golden_view").set_value("io").run()
    assert _undo_label(at) == "Undo the last change (1 earlier version kept)"  # the shipped set it replaced
    _reset(at)
    assert len(app_golden(at)) == shipped
    assert len(Workspace(SAMPLE, app_env).load()[0]) == shipped
    assert _undo_label(at) == "Undo the last change (2 earlier versions kept)"


def test_a_students_reset_restores_the_shipped_set_in_the_file_and_the_session(klass):  # noqa: F811
    shipped = sample_golden()
    shared = Workspace(SAMPLE, klass.root)  # the shared space holds 4 questions started from a log
    shared.save(GoldenSet(tuple(GoldenQuery(q.id, q.question, "", {}, "a") for q in list(shipped)[:4]), name=SAMPLE),
                None)
    at = klass.tab("s")
    assert len(app_golden(at)) == 4  # read through the shared space
    _reset(at)
    assert len(app_golden(at)) == len(shipped)
    private = Workspace(SAMPLE, klass.root, space=seat_space(seat_of(at)))
    assert len(private.load()[0]) == len(shipped)
    assert len(shared.load()[0]) == 4  # the shared set is the teacher's: untouched
    assert _undo_label(at) == "Undo the last change (1 earlier version kept)"  # the 4 questions it replaced


def test_a_reset_that_cannot_be_saved_is_not_green(app_env, monkeypatch):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()

    def unwritable(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Workspace, "save", unwritable)
    _reset(at)
    assert not at.success, [s.value for s in at.success]
    assert any("in this browser session only" in w.value for w in at.warning)


def test_a_taken_name_in_the_dropped_corpus_refuses_before_the_corpus_is_added(app_env):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page(BRING).run()
    doc = ("# Plans\n\n" + "The free plan gives 5 GB of storage and one shared folder. " * 8).encode()
    log = json.dumps({"question": "How big is the free plan?", "contexts": ["The free plan gives 5 GB of storage"],
                      "ground_truth": "5 GB"}).encode() + b"\n"
    files = [("handbook.md", doc, "text/markdown"), ("log.jsonl", log, "application/json")]
    for round_ in range(2):
        at.switch_page(BRING).run()
        at.file_uploader(key="bring_files").set_value(files).run()
        at.text_input(key="bring_name").input("my app")
        next(b for b in at.button if b.label == "Bring in and evaluate").click().run()  # the pending part too
        no_exception(at)
        if round_ == 0:
            assert at.session_state["corpus"] == "handbook"
            assert at.session_state["bring_system"] == "my app"
            at.session_state["corpus"] = SAMPLE  # back to the sample before dropping the same files again
            at.run()
    assert at.session_state["corpus"] == SAMPLE  # refused first: the corpus was not added (nor selected) again
    refused = " ".join(e.value for e in at.error).replace("\\", "")
    assert "exists already" in refused and "Nothing was changed" in refused
    assert not any("exists already" in s.value.replace("\\", "") for s in at.success)
