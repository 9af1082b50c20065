"""The Presenter view tells the story (issue 19): the verdict against the lesson's targets with what
the labels allow, ours against the BM25 baseline in plain words (the one decision rule), a win, a
miss and a near miss with short highlighted chunks, and no control sidebar; the report leads with it."""
from __future__ import annotations

from app_helpers import library_result, no_exception
from app_helpers import open_page as _open_page
from rag_metrics.compare.paired import compare, comparison_summary
from rag_metrics.report.story import presenter_story
from tests.test_app_presenter import report_html


def _open(app):
    return _open_page(app, "pages/presenter.py")


def test_presenter_leads_with_the_story(app):
    _open(app)
    no_exception(app)
    dense, bm25 = library_result("dense"), library_result("bm25")
    keys = [f"{m}@5" for m in ("hit_rate", "mrr", "precision", "recall", "ndcg", "map")]
    story = presenter_story(dense, 5, system="dense", comparison=compare(dense, bm25, keys),
                            comparison_names=("dense", "bm25 baseline"))
    headers = [h.value for h in app.header]
    assert headers[:3] == ["The verdict", "dense against bm25 baseline", "Three questions"]
    assert headers.index("The verdict") < headers.index("Every metric against K")
    # the verdict, against the targets, with what is achievable
    shown = [w.value.replace("\\", "") for w in app.warning] + [s.value.replace("\\", "") for s in app.success]
    assert story.verdict in shown
    md = " ".join(m.value.replace("\\", "") for m in app.markdown)
    assert "best possible with these labels" in md and "out of reach" in md
    # the baseline in plain words, from the decision rule
    said = [i.value.replace("\\", "") for i in app.info]
    assert said == list(story.baseline) + list(story.baseline_more)  # the other metrics in an expander
    assert len(story.baseline) == 3  # the summary, MRR@5 and Precision@5 (the targets) first
    assert said[0] == comparison_summary(compare(dense, bm25, keys), "dense", "bm25 baseline", plain=True)
    assert all("p =" not in s for s in said)
    # three questions: a win, a miss, a near miss, with highlighted snippets (not whole chunks)
    for ex in story.examples:
        assert f"**{ex.kind.capitalize()}**" in " ".join(m.value for m in app.markdown)
    assert ":orange-background[" in md
    snippets = [m.value for m in app.markdown if ":orange-background[" in m.value]
    assert snippets and all(len(s) < 1200 for s in snippets)


def test_presenter_hides_the_control_sidebar(app):
    _open(app)
    css = " ".join(str(getattr(e.proto, "body", "")) for e in app.get("html"))
    assert '[data-testid="stSidebar"]' in css and "display: none" in css
    assert any("Back to the controls" in str(getattr(p.proto, "label", "")) for p in app.get("page_link"))


def test_report_leads_with_the_same_story(app, downloads):
    _open(app)
    html = report_html(app, downloads)
    assert html.index('id="story"') < html.index('id="headline"')
    dense = library_result("dense")
    story = presenter_story(dense, 5, system="dense")
    import html as html_lib

    assert html_lib.escape(story.verdict, quote=True)[:80] in html
    assert "dense against bm25 baseline" in html and "<mark>" in html
    for ex in story.examples:
        assert html_lib.escape(ex.question, quote=True) in html


def test_dashboard_targets_say_what_is_achievable(app):
    from rag_metrics.report.story import target_readouts

    mrr, p5 = target_readouts(library_result("dense"), 5)
    msgs = [m.value for m in app.warning] + [m.value for m in app.success] + [m.value for m in app.info]
    # the lesson's cutoffs: P@5 at 5, MRR over the whole ranking (rag_metrics.insights.readouts.TARGETS)
    assert any(m.startswith(f"Precision@5 = {p5.value:.3f}") and f"{p5.best:.3f}" in m and "Out of reach" in m
               for m in msgs), msgs
    assert any(m.startswith(f"MRR (whole ranking) = {mrr.value:.3f}") and f"{mrr.best:.3f}" in m for m in msgs), msgs


def test_presenter_on_bm25_says_there_is_no_baseline(app):
    app.selectbox(key="system").set_value("bm25").run()
    _open(app)
    no_exception(app)
    assert not app.info
    assert any("No baseline to compare with" in c.value for c in app.caption)
    assert [h.value for h in app.header][:2] == ["The verdict", "Three questions"]
