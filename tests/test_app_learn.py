"""AppTest of the Learn page (metric sandbox): every value and substituted formula equals the library's."""
from __future__ import annotations

import pytest

from app_helpers import goto, no_exception
from rag_metrics.lesson import sandbox as S
from rag_metrics.metrics.registry import METRICS

PAGE = "pages/learn.py"


@pytest.fixture
def learn(app):
    return goto(app, PAGE)


def cards(at) -> dict[str, str]:
    return {m.label: m.value for m in at.main.metric}


def expected_cards(sb: S.Sandbox, k: int, **kw) -> dict[str, str]:
    t = S.metric_table(sb, k, **kw)
    return {f"{METRICS[m].label}@{k}": f"{v:.3f}" for m, v in zip(t["metric"], t["value"])}


def shown_formulas(at) -> list[str]:
    return [c.value for c in at.main.code]


def check(at, sb: S.Sandbox, k: int, **kw) -> None:
    """Cards and every substituted formula equal the library's for ``sb`` at ``k``."""
    assert cards(at) == expected_cards(sb, k, **kw)
    subs = S.metric_table(sb, k, **kw)["substituted"].tolist()
    shown = shown_formulas(at)
    for s in subs:
        assert s in shown, (s, shown)


def sandbox(at) -> S.Sandbox:
    return at.session_state["learn_sandbox"]


def grade_widget(at, item_id: str):
    return at.segmented_control(key=f"learn_g_{at.session_state['learn_version']}_{item_id}")


def test_learn_renders_first_scenario(learn):
    sc = S.SCENARIOS[0]
    assert learn.title[0].value.startswith("Learn")
    assert sandbox(learn) == sc.before
    check(learn, sc.before, sc.k_before)
    assert "first relevant at rank 5: 1 / 5 = 0.2" in shown_formulas(learn)
    assert not learn.error


def test_toggle_relevance_updates_values_and_formulas(learn):
    grade_widget(learn, "result 2").set_value(3).run()
    no_exception(learn)
    sb = sandbox(learn)
    assert sb.grades[:5] == [0, 3, 0, 0, 1]
    check(learn, sb, 5)
    shown = shown_formulas(learn)
    assert "first relevant at rank 2: 1 / 2 = 0.5" in shown
    assert "(1/2) x (1/2 + 2/5) = 0.45" in shown  # AP terms
    assert any(s.startswith("DCG = 3/log2(3) + 1/log2(6)") for s in shown)
    # grade 0 again: back to the scenario
    grade_widget(learn, "result 2").set_value(0).run()
    check(learn, S.SCENARIOS[0].before, 5)


def test_move_up_and_down(learn):
    learn.button(key="learn_up_4").click().run()  # the relevant result at rank 5 -> rank 4
    no_exception(learn)
    sb = sandbox(learn)
    assert sb.grades.index(1) == 3
    check(learn, sb, 5)
    assert "first relevant at rank 4: 1 / 4 = 0.25" in shown_formulas(learn)
    # the grade widget follows its item
    assert grade_widget(learn, "result 5").value == 1
    learn.button(key="learn_down_3").click().run()
    learn.button(key="learn_down_4").click().run()
    assert sandbox(learn).grades.index(1) == 5
    check(learn, sandbox(learn), 5)
    assert cards(learn)["Hit rate@5"] == "0.000"


def test_relevant_not_retrieved_changes_recall(learn):
    key = f"learn_unret_{learn.session_state['learn_version']}"
    learn.number_input(key=key).set_value(2).run()
    no_exception(learn)
    sb = sandbox(learn)
    assert sb.unretrieved == (1, 1) and sb.n_relevant() == 3
    check(learn, sb, 5)
    assert "1 / 3 = 0.3333" in shown_formulas(learn)


def test_k_slider(learn):
    learn.slider(key="learn_k").set_value(4).run()
    no_exception(learn)
    check(learn, sandbox(learn), 4)
    assert "first relevant at rank 5 > k = 4: 0 (would count 1/5 at K=5)" in shown_formulas(learn)


@pytest.mark.parametrize("sc", S.SCENARIOS, ids=[s.key for s in S.SCENARIOS])
def test_each_scenario_button_and_both_sides(learn, sc):
    learn.button(key=f"learn_sc_{sc.key}").click().run()
    no_exception(learn)
    assert sandbox(learn) == sc.before
    assert learn.slider(key="learn_k").value == sc.k_before
    check(learn, sc.before, sc.k_before)
    md = " ".join(m.value for m in learn.main.markdown)
    assert sc.lesson.split(".")[0] in md
    table = S.scenario_table(sc)
    shown = learn.main.dataframe[0].value
    assert list(shown.iloc[:, 1]) == [f"{v:.3f}" for v in table["before"]]
    assert list(shown.iloc[:, 2]) == [f"{v:.3f}" for v in table["after"]]
    learn.button(key="learn_side_after").click().run()
    no_exception(learn)
    assert sandbox(learn) == sc.after
    check(learn, sc.after, sc.k_after)


def test_scenario_numbers_the_lesson_quotes(learn):
    learn.button(key="learn_sc_rank5_vs_rank1").click().run()
    assert cards(learn)["MRR@5"] == "0.200" and cards(learn)["Hit rate@5"] == "1.000"
    learn.button(key="learn_side_after").click().run()
    assert cards(learn)["MRR@5"] == "1.000" and cards(learn)["Hit rate@5"] == "1.000"
    learn.button(key="learn_sc_recall_two_of_three").click().run()
    assert cards(learn)["Recall@5"] == "0.667"
    learn.button(key="learn_sc_larger_k").click().run()
    assert (cards(learn)["Recall@3"], cards(learn)["Precision@3"]) == ("0.500", "0.667")
    learn.button(key="learn_side_after").click().run()
    assert (cards(learn)["Recall@10"], cards(learn)["Precision@10"]) == ("0.750", "0.300")


# ---- the convention toggles are the sidebar's ---------------------------------------------------------
def _graded(learn):
    """A graded list so that every convention changes something."""
    grade_widget(learn, "result 2").set_value(3).run()
    grade_widget(learn, "result 3").set_value(1).run()
    return sandbox(learn)


def test_gain_toggle_is_the_sidebar_setting(learn):
    sb = _graded(learn)
    learn.radio(key="learn_conv_gain").set_value("exponential").run()
    no_exception(learn)
    assert learn.radio(key="ndcg_gain").value == "exponential"
    check(learn, sb, 5, gain="exponential")
    assert "NDCG (exp. gain)@5" in cards(learn)
    assert any("(2^3-1)/log2(3)" in s for s in shown_formulas(learn))
    # and back from the sidebar
    learn.radio(key="ndcg_gain").set_value("linear").run()
    assert learn.radio(key="learn_conv_gain").value == "linear"
    check(learn, sb, 5)


def test_recall_toggle_is_the_sidebar_setting(learn):
    learn.button(key="learn_sc_recall_two_of_three").click().run()
    learn.slider(key="learn_k").set_value(2).run()
    learn.radio(key="learn_conv_recall").set_value("cap").run()
    no_exception(learn)
    assert learn.radio(key="recall_denominator").value == "cap"
    check(learn, sandbox(learn), 2, recall_denominator="cap")
    assert cards(learn)["Recall@2"] == "0.500"


def test_level_toggle_is_the_sidebar_setting(learn):
    sb = _graded(learn)
    learn.number_input(key="learn_conv_level").set_value(2).run()
    no_exception(learn)
    assert learn.number_input(key="relevance_level").value == 2
    check(learn, sb, 5, relevance_level=2)
    assert cards(learn)["Precision@5"] == "0.200"  # only the grade-3 result counts


def test_out_of_scope_toggle_is_the_sidebar_setting_and_explained(learn):
    learn.radio(key="learn_source").set_value("free").run()
    learn.button(key="learn_load_free").click().run()
    no_exception(learn)
    assert sandbox(learn).grades == [0] * 10
    assert any("out of scope" in i.value for i in learn.main.info)
    learn.radio(key="learn_conv_oos").set_value("miss").run()
    no_exception(learn)
    assert learn.radio(key="out_of_scope").value == "miss"
    assert any("counted as misses" in w.value for w in learn.main.warning)
    effects = learn.main.dataframe[-1].value
    assert list(effects["Convention"]) == ["NDCG gain", "Out-of-scope queries", "Recall denominator",
                                          "Relevance level",
                                          "Gain per grade (trec_eval gains, ir_measures nDCG(gains=))",
                                          "Judged results only (trec_eval -J)", "MRR (LlamaIndex granular)",
                                          "Results scored <= 0 (torchmetrics)"]


def test_dashboard_honours_a_toggle_made_on_learn(learn):
    learn.radio(key="learn_conv_gain").set_value("exponential").run()
    learn.switch_page("pages/dashboard.py").run()
    no_exception(learn)
    assert any(m.label == "NDCG (exp. gain)@5" for m in learn.metric)
    learn.switch_page(PAGE).run()
    assert learn.radio(key="learn_conv_gain").value == "exponential"


def test_golden_question_loads_the_retrievers_top10(learn):
    from tests.test_app_pages import library_result

    res = library_result("dense")
    qids = [q.id for q in res.golden if q.in_scope]
    qid = qids[1]
    learn.selectbox(key="learn_question").set_value(qid).run()
    learn.button(key="learn_load").click().run()
    no_exception(learn)
    sb = sandbox(learn)
    want = S.from_ranking(res, qid, 10)
    assert [it.id for it in sb.items] == [it.id for it in want.items]
    assert sb.grades == want.grades and sorted(sb.unretrieved) == sorted(want.unretrieved)
    assert learn.slider(key="learn_k").value == 5
    check(learn, want, 5)
    # the sandbox at K = 5 equals the dashboard's per-query values for this question
    for m in ("hit_rate", "mrr", "precision", "recall", "ndcg", "map"):
        q = res.query_ids.index(qid)
        assert cards(learn)[f"{METRICS[m].label}@5"] == f"{res.values(m, 5)[q]:.3f}"
