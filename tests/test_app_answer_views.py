"""Answer quality next to the retrieval metrics under AppTest: Dashboard cards, Compare's answer-system
table, the Presenter view's plain lines; every number equals the library's (rag_metrics.answers.summary)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import goto, no_exception
from rag_metrics.answers.data import items_fingerprint, load_sample_answers
from rag_metrics.answers.offline import OfflineJudge
from rag_metrics.answers.scoring import evaluate_answers
from rag_metrics.answers.summary import compare_systems, plain_lines, summary_rows
from ui import views

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def library():
    items, _ = load_sample_answers()
    ev = evaluate_answers(items, [OfflineJudge()])
    return items, ev


@pytest.fixture(scope="module")
def at():
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    app.run()
    no_exception(app)
    return app


ANSWER_CARD_LABELS = ("Context support", "Answer-question similarity", "Faithfulness", "Answer relevancy",
                      "Semantic similarity", "String similarity")


def _cards(app) -> list[tuple[str, str]]:
    """The answer cards in page order: (label, value)."""
    return [(m.label, m.value) for m in app.metric if m.label.startswith(ANSWER_CARD_LABELS)]


def test_dashboard_cards_equal_the_library(at, library):
    _, ev = library
    rows = summary_rows(ev)
    cards = _cards(at)
    recs = rows.to_dict("records")
    assert cards == [(r["label"].replace(" (offline approximation)", ""), views.fmt(r["mean"])) for r in recs]
    assert len(cards) == 4 and not any(k.startswith(("Faithfulness", "Answer relevancy")) for k, _ in cards)
    headers = [m.value for m in at.markdown if m.value.endswith("(answer system)")]
    assert headers == [f"**{s}** (answer system)" for s in dict.fromkeys(r["system"] for r in recs)]
    captions = [c.value for c in at.caption]
    for r in rows.to_dict("records"):
        assert f"95% CI {views.fmt(r['ci_low'])} – {views.fmt(r['ci_high'])} · n = 64" in captions
    assert any("Shipped sample answers: 128 answers · offline approximations only" in c for c in captions)


def test_compare_answer_systems_table(at, library):
    _, ev = library
    goto(at, "pages/compare.py")
    tables = [d.value for d in at.dataframe if "Metric" in d.value.columns
              and d.value["Metric"].str.startswith("Context support").any()]
    assert len(tables) == 1
    shown = tables[0]
    ref = compare_systems(ev, "careful", "sloppy")
    assert list(shown["A"]) == [views.fmt(v) for v in ref["mean_a"]]
    assert list(shown["B − A"]) == [f"{v:+.3f}" for v in ref["delta"]]
    assert list(shown["Verdict"]) == list(ref["verdict"]) == ["A better", "too small to tell"]
    assert list(shown.columns) == ["Metric", "A", "B", "B − A", "Interval of B − A (adjusted)", "p adjusted", "Verdict",
                                   "Detectable difference (MDE)", "B wins / loses / ties"]
    # swap the systems: the difference changes sign, the verdict follows
    at.selectbox(key="cmp_answers_a").set_value("sloppy")
    at.selectbox(key="cmp_answers_b").set_value("careful").run()
    no_exception(at)
    shown = [d.value for d in at.dataframe if "Metric" in d.value.columns
             and d.value["Metric"].str.startswith("Context support").any()][0]
    back = compare_systems(ev, "sloppy", "careful")
    assert list(shown["B − A"]) == [f"{v:+.3f}" for v in back["delta"]] and shown["Verdict"].iloc[0] == "B better"


def test_presenter_plain_lines(at, library):
    _, ev = library
    goto(at, "pages/presenter.py")
    md = [m.value for m in at.markdown]
    for line in plain_lines(summary_rows(ev)):
        assert f"- {views.esc(line)}" in md
    assert "Answer quality" in [h.value for h in at.header]
    said = " ".join(md).replace("\\", "")
    assert "careful vs sloppy on 64 queries" in said and "careful does better than sloppy (0.78 vs 0.68)" in said
    assert "p =" not in said and "adjusted p" not in said and "t-test" not in said


def test_answers_from_the_answers_page_replace_the_sample(library):
    items, _ = library
    mine = tuple(replace(it, system="mine") for it in items if it.system == "careful")
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    app.session_state["_answers_published"] = (mine, items_fingerprint(mine), "Uploaded mine.jsonl")
    app.run()
    no_exception(app)
    assert {label for label, _ in _cards(app)} == {"Context support", "Answer-question similarity"}
    assert not [m for m in app.markdown if m.value.endswith("(answer system)")]  # one system: no group header
    goto(app, "pages/compare.py")
    assert any("one system (mine)" in i.value for i in app.info)


def test_no_answers_for_another_golden_set():
    def script():
        from types import SimpleNamespace

        from rag_metrics.types import GoldenQuery, GoldenSet
        from ui import answer_views

        g = GoldenSet((GoldenQuery("x1", "a question no shipped answer answers", "", {"c": 1}),))
        answer_views.dashboard_section(SimpleNamespace(golden=g, key=SimpleNamespace(golden="other-golden")))

    app = AppTest.from_function(script, default_timeout=300)
    app.run()
    no_exception(app)
    assert any("No generated answers for this golden set" in c.value for c in app.caption)
    assert not app.metric


def test_llm_run_adds_faithfulness_and_the_report_has_the_section(library, downloads):
    """An LLM judge run of this session (as the Answers page stores it) adds its cards; the app's
    HTML report carries the answer section with the library's numbers."""
    from rag_metrics.answers.scoring import AnswerEvaluation
    from rag_metrics.answers.types import MetricScore

    items, ev = library
    llm = AnswerEvaluation(tuple(items), "llm:canned@test", {
        it.id: {"faithfulness": MetricScore(1.0 if it.system == "careful" else 0.5)} for it in items})
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    app.session_state["_answers_llm_result"] = (items_fingerprint(items), "llm:canned@test", llm, None)
    app.run()
    no_exception(app)
    cards = _cards(app)
    headers = [m.value for m in app.markdown if m.value.endswith("(answer system)")]
    assert headers == ["**careful** (answer system)", "**sloppy** (answer system)"]
    faith = [v for label, v in cards if label == "Faithfulness"]
    assert faith == ["1.000", "0.500"]  # careful's group first, then sloppy's
    assert cards[0] == ("Faithfulness", "1.000")  # the LLM judge's metrics come first
    assert any("LLM judge and offline approximations" in c.value for c in app.caption)
    goto(app, "pages/presenter.py")
    button = next(b for b in app.get("download_button") if b.proto.id.endswith("report_download_presenter"))
    data = downloads.data(button)
    html = data.decode() if isinstance(data, bytes) else data
    section = html[html.index('<section id="answers">'):]
    section = section[:section.index("</section>")]
    r = summary_rows(ev).set_index(["system", "metric"]).loc[("sloppy", "context_support")]
    assert (f'<td>sloppy</td><td>Context support (offline approximation)</td><td class="num">{r["mean"]:.3f}</td>'
            in section)
    assert '<td>careful</td><td>Faithfulness</td><td class="num">1.000</td>' in section
