"""Issue 47, "one rule for no verdict", in the app (AppTest): a system whose questions match no golden
question shows the same banner (what happened, the fix) on the Bring your system page, the Dashboard,
Failures, Compare, Presenter and the HTML report, and no number as a result.  Before, the Bring page
showed six 0.000 cards with "95% CI 0.000-0.000" and no banner."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from app_helpers import no_exception
from rag_metrics.systems.store import SystemStore

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ["Who wrote Hamlet?", "What is the tallest mountain on earth?", "How many legs has a spider?"]


def _ragas_csv() -> bytes:
    """A ragas results CSV of another application: none of its questions is a sample golden question."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["user_input", "retrieved_contexts", "response", "faithfulness"])
    for q in QUESTIONS:
        w.writerow([q, repr([f"A passage about {q}", "Another passage."]), "an answer", 1.0])
    return out.getvalue().encode()


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


def _cards(at) -> list[str]:
    return [m.label for m in at.metric if "@" in m.label]


def test_bring_page_says_no_verdict_instead_of_zero_cards(app_env):
    at = _open(None, "pages/bring_your_system.py")
    at.file_uploader(key="bring_files").set_value([("ragas_results.csv", _ragas_csv(), "text/csv")])
    at.run()
    no_exception(at)
    at.text_input(key="bring_name").input("other app")
    next(b for b in at.button if b.label == "Bring in and evaluate").click().run()
    no_exception(at)
    text = _errors(at)
    assert "No verdict: no golden question is in the system's results" in text
    assert "add its questions to this golden set" in text  # the fix
    assert not _cards(at)  # no 0.000 card, no "95% CI 0.000-0.000"


@pytest.fixture
def foreign(app_env):
    from tests.test_app_evidence import _chunks

    spec, rep = SystemStore.for_corpus("sample_corpus").add_upload("other app", "ragas_results.csv", _ragas_csv(),
                                                                   _chunks())
    assert spec is not None, rep.lines()
    return spec


@pytest.mark.parametrize("page", ["pages/dashboard.py", "pages/failures.py", "pages/presenter.py"])
def test_every_view_shows_the_banner_and_no_number(foreign, page):
    at = _open({"system": "other app"}, page)
    assert "No verdict: no golden question is in the system's results" in _errors(at)
    assert not _cards(at) and not [m for m in at.metric if m.label.startswith("Missed")]


def test_compare_names_no_winner_and_shows_no_table(foreign):
    at = _open(None, "pages/compare.py")
    at.selectbox(key="cmp_b_system").set_value("other app").run()
    no_exception(at)
    assert "No verdict: no golden question" in _errors(at)
    assert any(m.value.startswith("**No verdict:**") for m in at.markdown) and not at.dataframe


def test_report_leads_with_the_banner_and_no_headline_number(foreign, downloads):
    from tests.test_app_presenter import report_html

    at = _open({"system": "other app"}, "pages/presenter.py")
    html = report_html(at, downloads)
    assert 'class="banner-stop"' in html and "No verdict: no golden question is in the" in html
    assert 'class="card"' not in html


def test_systems_table_has_no_row_of_zeros_for_it(foreign):
    at = _open(None, "pages/systems.py")
    assert "No verdict: no golden question" in _errors(at)
    assert all("other app" not in d.value.to_string() for d in at.dataframe if "system" in d.value.columns)
