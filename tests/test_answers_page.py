"""The Answers page under AppTest: offline numbers equal the library's, LLM judge via loopback."""
from __future__ import annotations

from pathlib import Path

import pytest
from answers_server import JudgeServer, Scenario
from streamlit.testing.v1 import AppTest

from app_helpers import no_exception
from rag_metrics.answers import agreement as ag
from rag_metrics.answers.data import load_sample_answers
from rag_metrics.answers.offline import OfflineJudge
from rag_metrics.answers.reference import ReferenceMetrics
from rag_metrics.answers.scoring import evaluate_answers

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def library():
    items, labels = load_sample_answers()
    ev = evaluate_answers(items, [OfflineJudge(), ReferenceMetrics()])
    return items, labels, ev


def _open():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("pages/answers.py").run()
    no_exception(at)
    return at


def test_page_shows_the_library_numbers(library):
    _, labels, ev = library
    at = _open()
    assert at.title[0].value == "Answers"
    order = ag.ordering_summary(ag.ordering_table(ev, "context_support", labels=labels))
    text = " ".join(m.value for m in at.markdown)
    assert f"**{order['ordered']} of {order['n']}**" in text
    means = at.dataframe[0].value
    cs = means[means.label.str.startswith("Context support")].iloc[0]
    assert cs["mean"] == pytest.approx(ev.summary().set_index("metric").loc["context_support", "mean"])
    # no metric is named faithfulness or answer relevancy without a judge
    assert not any(str(x).startswith(("Faithfulness", "Answer relevancy")) for x in means.label)


def test_one_answer_view_and_llm_judge(monkeypatch, tmp_path, library):
    items, labels, _ = library
    at = _open()
    at.selectbox(key="answers_item").set_value("q001-sloppy").run()
    no_exception(at)
    text = " ".join(m.value for m in at.markdown)
    # a contradiction built from the context's own words: the offline judge calls it supported
    assert ":green-background[Free accounts get 50 GB of storage\\.]" in text
    assert labels["q001-sloppy"].sentences[0] == ("Free accounts get 50 GB of storage.", "unsupported")
    sc = Scenario(unsupported={t for i in items for t, lab in labels[i.id].sentences if lab == "unsupported"})
    with JudgeServer(sc) as srv:
        monkeypatch.setattr("rag_metrics.answers.llm.default_judge_cache_path", lambda: tmp_path / "judge.sqlite3")
        at.text_input(key="answers_judge_url").set_value(srv.base_url)
        at.text_input(key="answers_judge_model").set_value("canned")
        at.text_input(key="answers_judge_embed").set_value("canned-embed")
        at.button[[b.label for b in at.button].index("Run the LLM judge")].click().run()
        no_exception(at)
    captions = " ".join(c.value for c in at.caption)
    assert "LLM judge llm\\:canned@" in captions and "calls, 0 from cache" in captions
    labels_shown = list(at.dataframe[0].value.label)
    assert labels_shown[:2] == ["Faithfulness", "Answer relevancy"]
    # q001-sloppy: both sentences are unsupported in the canned judge -> faithfulness 0
    assert "**Faithfulness**: 0.000" in " ".join(m.value for m in at.markdown)


def test_one_summary_first_and_details_on_demand(library):
    """Issue 19: the page leads with one summary (each metric in one plain sentence, the careful vs
    sloppy verdict by the one decision rule) and opens the tables in expanders."""
    from rag_metrics.answers.summary import answer_section
    from rag_metrics.compare.paired import comparison_summary

    _, _, ev = library
    at = _open()
    subheaders = [h.value for h in at.subheader]
    assert subheaders[0] == "Summary" and len(subheaders) == 1, subheaders
    section = answer_section(ev, "")
    text = " ".join(m.value.replace("\\", "") for m in at.markdown)
    for line in section.lines:
        assert line in text
    x, y = section.comparison_names
    assert comparison_summary(section.comparison, x, y, plain=True) in text
    labels = [e.label for e in at.expander]
    for title in ("Means with 95% confidence intervals", "Lowest-scoring answers",
                  "One answer, statement by statement", "Judge vs people"):
        assert title in labels
