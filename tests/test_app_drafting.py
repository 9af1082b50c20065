"""AppTest of drafting with a judge, relevance suggestions in the labelling queue, and "Judge vs
people", against the loopback scripted judge (tests/judge_script_server.py)."""
from __future__ import annotations

import json

import pytest
from judge_script_server import ScriptedJudge

from app_helpers import goto, no_exception


@pytest.fixture
def judge(app_env, monkeypatch):
    with ScriptedJudge() as srv:
        yield srv


def _ws_golden(root):
    from rag_metrics.workspace.store import Workspace

    return Workspace("sample_corpus", root).folder / "golden.jsonl"


def _open(app, judge, view):
    goto(app, "pages/golden_set.py")
    app.session_state["judge_url"] = judge.base_url
    app.session_state["judge_model"] = "scripted"
    app.segmented_control(key="golden_view").set_value(view).run()
    no_exception(app)


def test_drafting_20_questions_puts_20_badged_drafts_in_review_and_accepting_adds_provenance(app, app_env, judge):
    _open(app, judge, "draft")
    assert any("Planned: at most" in c.value for c in app.caption)
    app.button(key="draft_go").click().run()
    no_exception(app)
    review = app.session_state["_draft_review"]["sample_corpus"]
    assert review.progress()["pending"] == 20
    assert all({"answerable", "self_contained", "near_duplicate", "too_easy", "found_within_k"} <= set(d.badges)
               for d in review.drafts)
    assert any("call(s) made" in c.value for c in app.caption)       # the cost after the run
    first = review.pending()[0]
    app.button(key=f"draft_accept_{first.id}").click().run()
    no_exception(app)
    assert review.status[first.id] == "accepted"
    rows = [json.loads(line) for line in _ws_golden(app_env).read_text().splitlines()]
    added = [r for r in rows if r.get("origin") == "drafted"]
    assert len(added) == 1 and added[0]["draft"]["source_chunk_ids"] == list(first.source_chunk_ids)
    assert set(added[0].get("label_origin", {}).values()) <= {"source"}
    # the drafts still to review are also in the labelling queue's view
    app.segmented_control(key="golden_view").set_value("label").run()
    no_exception(app)
    assert any("drafted question(s) to review" in m.value for m in app.markdown)
    app.segmented_control(key="golden_view").set_value("draft").run()
    # accept-and-label moves to the labelling queue on that question, with the pooled candidates
    second = review.pending()[0]
    app.button(key=f"draft_label_{second.id}").click().run()
    no_exception(app)
    assert app.session_state["golden_view"] == "label"
    queue = app.session_state["_label_queue"]["sample_corpus"]
    assert queue.current.query_id == review.query_ids[second.id]
    if second.category != "out_of_scope":
        ticks_before = queue.current_ticks()
        app.button(key="suggest_go").click().run()
        no_exception(app)
        sugg = app.session_state["_relevance_suggestions"]["sample_corpus"]
        assert sugg and all(q == queue.current.query_id for q, _ in sugg)
        # the suggestion is shown beside the retrieved chunk (the person's tick stays theirs)
        assert any("judge suggests" in m.value for m in app.markdown)
        assert app.session_state["_label_queue"]["sample_corpus"].current_ticks() == ticks_before


def test_rejecting_needs_a_reason(app, judge):
    _open(app, judge, "draft")
    app.number_input(key="draft_n").set_value(2).run()
    app.button(key="draft_go").click().run()
    review = app.session_state["_draft_review"]["sample_corpus"]
    d = review.pending()[0]
    app.button(key=f"draft_reject_{d.id}").click().run()
    assert review.status[d.id] == "pending"
    app.text_input(key=f"draft_reason_{d.id}").input("too easy").run()
    app.button(key=f"draft_reject_{d.id}").click().run()
    no_exception(app)
    assert review.status[d.id] == "rejected" and review.reasons[d.id] == "too easy"


def test_judge_vs_people_shows_kappa_and_the_ranking_change(app, judge):
    _open(app, judge, "judge")
    app.button(key="agree_go").click().run()
    no_exception(app)
    labels = [m.label for m in app.metric]
    assert any(lb.startswith("Kappa, binary") for lb in labels) and "Kappa, graded quadratic" in labels
    assert any("Kendall tau, people vs judge" in c.value for c in app.caption)
    assert len(app.dataframe) >= 4   # confusion matrices, rankings, provenance


def test_class_mode_uses_only_the_operators_judge(app_env, judge, monkeypatch, tmp_path, proven_browser):
    cfg = tmp_path / "lab.toml"
    cfg.write_text(f'[lab]\nteacher_key = "a long random teacher phrase"\n[lab.judge]\nbase_url = "{judge.base_url}"\n'
                   'chat_model = "operators-model"\n')
    monkeypatch.setenv("RAG_METRICS_CONFIG", str(cfg))
    monkeypatch.setenv("RAG_METRICS_CLASS_MODE", "1")
    from streamlit.testing.v1 import AppTest

    from app_helpers import ROOT

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    goto(at, "pages/golden_set.py")
    at.session_state["judge_url"] = "http://evil.example/v1"
    at.session_state["judge_model"] = "typed"
    at.segmented_control(key="golden_view").set_value("draft").run()
    no_exception(at)
    assert not [t for t in at.text_input if t.key == "judge_url"]          # no form in class mode
    assert any("Judge: the class" in c.value and "operators" in c.value for c in at.caption)
    at.number_input(key="draft_n").set_value(1).run()
    at.button(key="draft_go").click().run()
    no_exception(at)
    d = at.session_state["_draft_review"]["sample_corpus"].drafts[0]
    assert d.generation["model"] == "operators-model" and d.generation["endpoint"] == judge.base_url
