"""Issue 28 in the app (AppTest): a system whose contexts cannot be located says so at the top of every
view (Dashboard, Failures, Presenter, Compare, the HTML report) with the fix, and shows "not comparable"
instead of a verdict; Failures shows such a context's text in place; a reference-answer set is
reviewed one question per screen, with Save and next in view."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_helpers import no_exception, sample_golden
from rag_metrics.systems.store import SystemStore

ROOT = Path(__file__).resolve().parents[1]
FOREIGN = "Payments are processed in euros by the treasury team of another company, entry {n}."


def _chunks():
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval.chunking import chunk_corpus

    return chunk_corpus(load_corpus(ROOT / "sample_corpus" / "docs"))


@pytest.fixture
def foreign_log(app_env):
    """A RAG log of another knowledge base: its contexts are found nowhere in the sample corpus."""
    rows = [json.dumps({"question": q.question, "contexts": [FOREIGN.format(n=f"{n}.{j}") for j in range(3)]})
            for n, q in enumerate(sample_golden())]
    spec, rep = SystemStore.for_corpus("sample_corpus").add_upload("other kb", "other.jsonl",
                                                                   ("\n".join(rows) + "\n").encode(), _chunks())
    assert spec is not None, rep.lines()
    return spec


def _open(params: dict | None = None, page: str | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    for name, value in (params or {}).items():
        at.query_params[name] = value
    at.run()
    no_exception(at)
    if page:
        at.switch_page(page).run()
        no_exception(at)
    return at


def _errors(at) -> str:
    return " ".join(e.value for e in at.error).replace("\\", "")


def test_dashboard_says_not_comparable_instead_of_a_number(foreign_log):
    at = _open({"system": "other kb"}, "pages/dashboard.py")
    text = _errors(at)
    assert "Not comparable" in text and "contexts (100%) could not be located" in text
    assert "your corpus differs: load it" in text
    assert any(e.label.startswith("Not comparable: show the numbers anyway") for e in at.expander)


def test_failures_banner_and_the_context_text_in_place(foreign_log):
    at = _open({"system": "other kb"}, "pages/failures.py")
    assert "your corpus differs" in _errors(at)
    shown = " ".join(str(v) for d in at.dataframe if "text" in d.value.columns for v in d.value["text"])
    assert "treasury team of another company" in shown  # the logged text, never an empty box


def test_presenter_and_report_lead_with_it(foreign_log, downloads):
    from tests.test_app_presenter import report_html

    at = _open({"system": "other kb"}, "pages/presenter.py")
    text = _errors(at)
    assert "your corpus differs" in text and "Not comparable" in text
    assert not at.success  # no verdict
    html = report_html(at, downloads)
    assert 'class="banner-stop"' in html and "your corpus differs: load it" in html


def test_compare_names_no_winner(foreign_log):
    at = _open(None, "pages/compare.py")
    at.selectbox(key="cmp_b_system").set_value("other kb").run()
    no_exception(at)
    assert "Configuration B" in _errors(at) and "your corpus differs" in _errors(at)
    assert any(m.value.startswith("**Not comparable:**") for m in at.markdown)


def test_a_log_with_a_few_foreign_contexts_warns_and_keeps_its_numbers(app_env):
    from tests.test_app_systems import _rag_log

    chunks = _chunks()
    spec, rep = SystemStore.for_corpus("sample_corpus").add_upload("my log", "log.jsonl",
                                                                   _rag_log(chunks).encode(), chunks)
    assert spec is not None, rep.lines()
    at = _open({"system": "my log"}, "pages/dashboard.py")
    assert not at.error
    warn = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "could not be located in the corpus" in warn and "Not comparable" not in warn
    assert any("@" in m.label for m in at.metric)


# ---- the review queue -------------------------------------------------------------------------------------
@pytest.fixture
def reference_set(app_env):
    """Three sample questions with their reference answers and no label (a ragas-shaped set)."""
    from rag_metrics.types import GoldenQuery, GoldenSet
    from rag_metrics.workspace.store import Workspace

    qs = [q for q in sample_golden() if q.in_scope][:3]
    golden = GoldenSet(tuple(GoldenQuery(q.id, q.question, "", expected_answer=q.expected_answer) for q in qs))
    Workspace("sample_corpus").save(golden, None)
    return qs


def test_reference_answers_reviewed_one_screen_at_a_time(reference_set):
    at = _open(None, "pages/golden_set.py")
    captions = " ".join(c.value for c in at.caption)
    assert "0 in-scope · 0 out-of-scope queries · 3 awaiting evidence review" in captions
    assert any("3 question(s) await evidence review" in i.value for i in at.info)
    at.segmented_control(key="golden_view").set_value("evidence").run()
    at.button(key="ev_propose").click().run()
    no_exception(at)
    # one screen: the bar with Save and next comes before the question and its passages
    assert at.button(key="ev_save_next").label == "Save and next →"
    assert any(m.value.startswith("**Question 1 of 3**") for m in at.markdown)
    radios = [r for r in at.radio if r.options == ["Accept", "Reject"]]
    assert len(radios) == 3
    radios[0].set_value("Accept")
    radios[1].set_value("Reject")
    at.button(key="ev_save_next").click().run()
    no_exception(at)
    from rag_metrics.workspace.store import Workspace

    saved = Workspace("sample_corpus").load()[0]
    q = saved.get(reference_set[0].id)
    assert len(q.reviewed_evidence) == 1 and len(q.proposed_evidence) == 1 and q.in_scope
    assert q.relevant  # the accepted passage labels the chunks that hold it
    assert all(not s.in_scope for s in saved.queries[1:])  # not reviewed yet: never judged
    # next: question 2 (question 1 keeps its undecided proposal in the queue, one step back)
    assert any(m.value.startswith("**Question 2 of 3**") for m in at.markdown)
    assert any(m.value == f"#### {reference_set[1].question}".replace("?", "\\?") or
               reference_set[1].question[:20] in m.value for m in at.markdown)
    at.button(key="ev_prev").click().run()
    assert any(m.value.startswith("**Question 1 of 3**") for m in at.markdown)
    assert len([r for r in at.radio if r.options == ["Accept", "Reject"]]) == 1  # only the undecided one is left


def test_section_chunked_log_gets_its_verdict_on_the_dashboard(app_env):
    """The issue's app: a RAG log of markdown sections, stored as a system, is judged on evidence in
    the app as in the library (no banner: every context is located)."""
    from app_helpers import expected_cards
    from rag_metrics.systems.evaluation import evaluate_systems
    from rag_metrics.systems.uploads import RagLogSystem
    from tests.test_evidence_scenario import _jsonl, section_scenario

    chunks = _chunks()
    _, _, rows = section_scenario()
    data = _jsonl(rows).encode()
    spec, rep = SystemStore.for_corpus("sample_corpus").add_upload("sections", "sections.jsonl", data, chunks)
    assert spec is not None, rep.lines()
    from rag_metrics.io.raglog import parse_rag_log

    log, _ = parse_rag_log(data, "sections.jsonl")
    lib = evaluate_systems([("sections", RagLogSystem(log, chunks))], sample_golden(), depth=100, chunks=chunks)[0]
    at = _open({"system": "sections"}, "pages/dashboard.py")
    assert not at.error and lib.result.comparable and lib.result.located.unlocated == 0
    shown = {m.label: m.value for m in at.metric if "@" in m.label}
    want = expected_cards(lib.result, 5)
    assert shown and all(shown[label] == value for label, value in want.items() if label in shown)
    assert shown.get("Hit rate@5") == want["Hit rate@5"]
