"""judged@K and its warning only where they mean something (issue 19): one rule in the library
(:func:`rag_metrics.systems.pooling.records_nonrelevant`), used by the Dashboard, Systems and the report."""
from __future__ import annotations

import pytest

from app_helpers import no_exception, sample_golden
from rag_metrics.evaluation import evaluate
from rag_metrics.systems.pooling import judged_readout, records_nonrelevant, system_table
from rag_metrics.types import GoldenQuery, GoldenSet, Run

POSITIVE_ONLY = GoldenSet((GoldenQuery("q1", "first?", relevant={"a": 1}),
                           GoldenQuery("q2", "second?", relevant={"x": 2})))
POOLED = GoldenSet((GoldenQuery("q1", "first?", relevant={"a": 1, "b": 0}),   # b judged not relevant
                    GoldenQuery("q2", "second?", relevant={"x": 2})))
RUN = Run.from_rankings({"q1": ["a", "c", "d"], "q2": ["y", "x", "z"]}, name="A")


def test_the_rule_is_any_label_graded_zero_or_below():
    assert not records_nonrelevant(POSITIVE_ONLY)
    assert records_nonrelevant(POOLED)
    assert records_nonrelevant(GoldenSet((GoldenQuery("q1", "?", relevant={"a": -1}),)))
    assert not records_nonrelevant(sample_golden())  # the shipped sample labels only relevant chunks


def test_readout_is_a_note_without_nonrelevant_labels_and_a_warning_with_them():
    # judged@3: q1 a of 3, q2 x of 3 -> 1/3 on both golden sets (b is not retrieved)
    plain = judged_readout(POSITIVE_ONLY, 1 / 3, 3, "A")
    assert not plain.meaningful and plain.warning is None
    assert "labels only relevant chunks" in plain.note and "counts as not relevant" in plain.note
    pooled = judged_readout(POOLED, 1 / 3, 3, "A")
    assert pooled.meaningful and "only 33% of A's top 3 carry a label" in (pooled.warning or "")
    assert judged_readout(POOLED, 0.9, 3, "A").warning is None


def test_system_table_warns_only_for_golden_sets_with_nonrelevant_labels():
    for golden, warns in ((POSITIVE_ONLY, False), (POOLED, True)):
        df = system_table({"A": evaluate(golden, RUN)}, ["mrr"], 3)
        assert df["judged@3"].tolist() == pytest.approx([1 / 3])
        assert (df.loc[0, "warning"] is not None) == warns


# ---- the first screen --------------------------------------------------------------------------
def _dashboard(app_env):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    no_exception(at)
    return at


def _judged_warnings(at) -> list[str]:
    return [w.value for w in at.warning if "carry a label" in w.value or "underestimate" in w.value]


def test_sample_first_screen_has_no_judged_warning(app_env):
    at = _dashboard(app_env)
    assert _judged_warnings(at) == []
    captions = " ".join(c.value for c in at.caption)
    assert "labels only relevant chunks" in captions and "judged@5 =" not in captions


def test_golden_set_with_grade_zero_labels_shows_the_warning(app_env):
    from rag_metrics.workspace.store import Workspace

    g = sample_golden()
    # every in-scope question gets one extra chunk judged not relevant (grade 0)
    zeros = tuple(GoldenQuery(q.id, q.question, q.category,
                              {**q.relevant, next(c for c in ("billing-and-invoices#0", "billing-and-invoices#1")
                                                  if c not in q.relevant): 0} if q.relevant else q.relevant,
                              q.expected_answer) for q in g)
    res = Workspace("sample_corpus", app_env).save(GoldenSet(zeros, g.name), None)
    assert res.saved, res
    at = _dashboard(app_env)
    warns = _judged_warnings(at)
    assert len(warns) == 1 and "of dense's top 5 carry a label" in warns[0], warns
    assert "judged@5 =" in " ".join(c.value for c in at.caption)


def test_report_follows_the_same_rule(app_env, downloads):
    from rag_metrics.workspace.store import Workspace
    from tests.test_app_presenter import report_html

    at = _dashboard(app_env)
    at.switch_page("pages/presenter.py").run()
    no_exception(at)
    html = report_html(at, downloads)
    assert "labels only relevant chunks" in html and "carry a label" not in html
    g = sample_golden()
    zeros = tuple(GoldenQuery(q.id, q.question, q.category, {**q.relevant, "billing-and-invoices#0": 0}
                              if q.relevant and "billing-and-invoices#0" not in q.relevant else q.relevant,
                              q.expected_answer) for q in g)
    assert Workspace("sample_corpus", app_env).save(GoldenSet(zeros, g.name), None).saved
    at = _dashboard(app_env)
    at.switch_page("pages/presenter.py").run()
    no_exception(at)
    html = report_html(at, downloads)
    assert "of dense&#x27;s top 5 carry a label" in html or "of dense's top 5 carry a label" in html
