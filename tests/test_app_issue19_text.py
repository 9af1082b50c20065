"""Statements made true (issue 19): one upload limit on Systems, an uploaded corpus is kept (not "in
this browser session") and never offers "the shipped set", the report's answer summary keeps every
verdict, and Compare's interval header never switches level."""
from __future__ import annotations

import pandas as pd

from app_helpers import goto, load_corpus_files, no_exception


def test_systems_upload_limit_is_one_number(app):
    import streamlit as st

    from ui.systems import upload_limit_mb

    goto(app, "pages/systems.py")
    captions = " ".join(c.value for c in app.caption)
    limit = upload_limit_mb()
    assert limit == min(50, int(st.get_option("server.maxUploadSize")))
    assert f"Up to {limit} MB" in captions
    assert "Up to 50 MB" not in captions or limit == 50


def test_uploaded_corpus_is_kept_and_never_offers_the_shipped_set(app):
    goto(app, "pages/corpus_explorer.py")
    captions = " ".join(c.value for c in app.caption)
    assert "lives in this browser session" not in captions and "kept in the workspace" in captions
    goto(app, "pages/golden_set.py")
    app.segmented_control(key="golden_view").set_value("io").run()
    assert [b.label for b in app.button if b.key == "reset_ask"] == ["Reset to the shipped set…"]
    load_corpus_files(app, [("a.md", b"# Alpha\n\nAlpha notes sync every hour.", "text/markdown")], "tiny")
    goto(app, "pages/golden_set.py")
    app.segmented_control(key="golden_view").set_value("io").run()
    no_exception(app)
    labels = [b.label for b in app.button if b.key == "reset_ask"]
    assert labels and "shipped" not in labels[0], labels
    assert "shipped set is in use" not in " ".join(c.value for c in app.caption)


def _comparison(verdicts: list[str]) -> pd.DataFrame:
    n = len(verdicts)
    return pd.DataFrame({"metric": ["context_support", "answer_question_similarity"][:n], "k": [None] * n,
                         "n": [64] * n, "mean_a": [0.775, 0.8][:n], "mean_b": [0.679, 0.79][:n],
                         "delta": [-0.096, -0.01][:n], "ci_low": [-0.15, -0.03][:n], "ci_high": [-0.04, 0.01][:n],
                         "ci_level": [0.975] * n, "p_ttest": [0.001, 0.4][:n], "p_ttest_adj": [0.002, 0.4][:n],
                         "significant": [True, False][:n], "mde": [0.03, 0.06][:n], "verdict": verdicts,
                         "wins": [40] * n, "losses": [20] * n, "ties": [4] * n})


def test_report_answer_summary_keeps_every_verdict():
    from rag_metrics.answers.summary import AnswerSection
    from rag_metrics.report.html import _answers_html

    rows = pd.DataFrame(columns=["system", "metric", "label", "kind", "mean", "ci_low", "ci_high", "n", "n_failed"])
    cmp = _comparison(["A better", "too small to tell"])
    html = _answers_html(AnswerSection("sample", "offline", rows, (), cmp, ("careful", "sloppy")))
    # the summary line names both verdicts the table shows (it dropped "careful better" before)
    assert "careful better on 1" in html and "too small to tell on 1" in html
    assert html.count("careful better") >= 2  # the summary and the table row


def test_interval_header_is_one_name_and_the_level_is_stated():
    from rag_metrics.compare.paired import INTERVAL_HEADER, interval_note
    from ui.compare_views import verdict_rows

    a = _comparison(["A better", "too small to tell"])
    b = a.assign(ci_level=0.95)
    assert INTERVAL_HEADER in verdict_rows(a) and INTERVAL_HEADER in verdict_rows(b)
    assert list(verdict_rows(a)) == list(verdict_rows(b))
    assert "97.5 % level" in interval_note(a) and "R = 1 significant of m = 2 metrics" in interval_note(a)
