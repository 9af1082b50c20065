"""AppTest of the golden-set health page: counts equal the library's checks; one-click labelling
changes the golden set (autosaved) and every metric; thresholds; queries needed per category."""
from __future__ import annotations

from pathlib import Path

import pytest

from app_helpers import app_golden, library_result, no_exception, sample_golden, set_app_golden
from app_helpers import open_page as _open_page
from app_helpers import sample_index as _index
from rag_metrics.insights import health
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS

PAGE = "pages/health.py"


def open_page(app):
    return _open_page(app, PAGE)


def cards(at) -> dict[str, str]:
    return {m.label: str(m.value) for m in at.metric}


def test_health_counts_equal_the_library(app):
    open_page(app)
    assert app.title[0].value == "Golden-set health"
    g, res, chunks = sample_golden(), library_result(), _index().chunks
    c = cards(app)
    assert c["Unknown ids"] == str(len(health.unknown_ids(g, {x.id for x in chunks} | {x.doc_id for x in chunks})))
    assert c["Unlabelled"] == str(len(health.unlabelled_queries(g)))
    assert c["To judge"] == str(len(health.judging_candidates(res, 5, 2)))
    assert c["Too easy"] == str(len(health.too_easy_queries(g, chunks, 0.8)))
    ex = health.exact_duplicates(chunks)
    assert c["Duplicates"] == str(ex["group"].nunique() if len(ex) else 0)
    near = health.near_duplicates(_index().retriever.vectors, [x.id for x in chunks], 0.95)
    assert c["Near duplicates"] == str(len(near))


def test_one_click_relevant_label_updates_golden_and_metrics(app, app_env):
    open_page(app)
    res = library_result()
    cand = health.judging_candidates(res, 5, 2).iloc[0]
    cid, qid = cand["id"], cand["query_ids"][0]
    assert cid not in dict(next(q for q in app_golden(app) if q.id == qid).relevant)
    app.button(key=f"judge_rel_{cid}_{qid}").click().run()
    no_exception(app)
    # the label is in the golden set, with the chosen grade (default 1), and autosaved
    new_golden = app_golden(app)
    assert dict(next(q for q in new_golden if q.id == qid).relevant)[cid] == 1
    saved = list(Path(app_env).rglob("*.jsonl")) + list(Path(app_env).rglob("*.json"))
    assert any(cid in p.read_text(encoding="utf-8") for p in saved), saved
    assert any("Labelled" in s.value for s in app.success)
    # the candidate list follows the new labels (library on the new golden set)
    new_res = library_result(golden=new_golden)
    assert cards(app)["To judge"] == str(len(health.judging_candidates(new_res, 5, 2)))
    # every metric on the dashboard equals the library's on the new golden set
    app.switch_page("pages/dashboard.py").run()
    no_exception(app)
    shown = {m.label: m.value for m in app.metric if "@" in m.label}
    assert shown == {f"{METRICS[m].label}@5": f"{new_res.mean(m, 5):.3f}" for m in DEFAULT_METRICS}
    old = {f"{METRICS[m].label}@5": f"{res.mean(m, 5):.3f}" for m in DEFAULT_METRICS}
    assert shown != old


def test_one_click_with_grade_and_not_relevant(app):
    open_page(app)
    res = library_result()
    cands = health.judging_candidates(res, 5, 2)
    first, second = cands.iloc[0], cands.iloc[1]
    app.radio(key="health_grade").set_value(3).run()
    app.button(key=f"judge_rel_{first['id']}_{first['query_ids'][0]}").click().run()
    no_exception(app)
    g = app_golden(app)
    assert dict(next(q for q in g if q.id == first["query_ids"][0]).relevant)[first["id"]] == 3
    app.button(key=f"judge_not_{second['id']}_{second['query_ids'][0]}").click().run()
    no_exception(app)
    g = app_golden(app)
    assert dict(next(q for q in g if q.id == second["query_ids"][0]).relevant)[second["id"]] == 0
    # judged (even as not relevant): no longer a candidate
    shown_ids = {b.key.split("_", 2)[2].rsplit("_", 1)[0] for b in app.button
                 if b.key and b.key.startswith("judge_rel_")}
    assert second["id"] not in shown_ids
    assert cards(app)["To judge"] == str(len(health.judging_candidates(library_result(golden=g), 5, 2)))


def test_thresholds_follow_the_library(app):
    open_page(app)
    chunks, vecs = _index().chunks, _index().retriever.vectors
    ids = [c.id for c in chunks]
    for t in (0.85, 0.75):
        app.slider(key="health_near_threshold").set_value(t).run()
        no_exception(app)
        assert cards(app)["Near duplicates"] == str(len(health.near_duplicates(vecs, ids, t)))
    assert int(cards(app)["Near duplicates"]) > 0
    app.slider(key="health_easy_threshold").set_value(0.6).run()
    no_exception(app)
    n_easy = len(health.too_easy_queries(sample_golden(), chunks, 0.6))
    assert n_easy > 0 and cards(app)["Too easy"] == str(n_easy)
    app.slider(key="health_min_queries").set_value(4).run()
    no_exception(app)
    assert cards(app)["To judge"] == str(len(health.judging_candidates(library_result(), 5, 4)))


def test_queries_needed_per_category(app):
    open_page(app)
    res = library_result()
    app.slider(key="health_ci_target").set_value(0.1).run()
    no_exception(app)
    table = health.ci_width_by_category(res, "ndcg", 5, 0.1)
    allrow = table[table["category"] == health.ALL_CATEGORIES].iloc[0]
    c = cards(app)
    assert c["Queries needed for ± 0.10"] == str(int(allrow["n_needed"]))
    assert c["More queries to add"] == str(int(allrow["more_needed"]))
    assert c["NDCG@5 today"] == f"± {allrow['half_width']:.3f}"
    shown = app.dataframe[-1].value
    assert list(shown["n_needed"]) == [int(x) for x in table["n_needed"]]
    app.selectbox(key="health_ci_metric").set_value("mrr").run()
    no_exception(app)
    table = health.ci_width_by_category(res, "mrr", 5, 0.1)
    assert cards(app)["MRR@5 today"] == f"± {table.iloc[0]['half_width']:.3f}"


@pytest.mark.parametrize("which", ["empty", "out_of_scope_only", "one_query"])
@pytest.mark.parametrize("page", ["pages/ragas.py", "pages/health.py", "pages/corpus_map.py", "pages/presenter.py"])
def test_issue6_pages_with_degenerate_golden_sets(app, page, which):
    """No traceback with no question, only out-of-scope questions, or a single question."""
    g = sample_golden()
    queries = {"empty": [], "out_of_scope_only": [q for q in g if not q.in_scope],
               "one_query": [next(q for q in g if q.in_scope)]}[which]
    set_app_golden(app, queries)
    app.switch_page(page).run()
    no_exception(app)
    assert not app.error, [e.value for e in app.error]
    assert app.title


def test_near_duplicates_degrade_when_embeddings_are_unavailable(app, monkeypatch):
    """No embedding model and no cached vectors: the other checks still run; a warning explains."""
    from rag_metrics.errors import InputError
    from ui import cache

    def no_model(*a, **k):
        raise InputError("embedding model 'all-MiniLM-L6-v2' cannot be loaded offline")

    monkeypatch.setattr(cache, "_encode", no_model)
    open_page(app)
    assert cards(app)["Near duplicates"] == "—"
    assert any("not available" in w.value and "cannot be loaded" in w.value for w in app.warning)
    assert cards(app)["To judge"] == str(len(health.judging_candidates(library_result(), 5, 2)))
