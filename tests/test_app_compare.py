"""AppTest of the Compare page, checked against the library; CLI parity of `rag-metrics compare`."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pandas as pd
import pytest

from app_helpers import ROOT, edit_table, goto, library_result, no_exception, sample_golden
from rag_metrics.compare import ab
from rag_metrics.compare.paired import compare, comparison_summary, disagreements, plain_verdict, verdict
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS

PAGE = "pages/compare.py"
KEYS = [f"{m}@5" for m in DEFAULT_METRICS]


@pytest.fixture
def cmp(app):
    return goto(app, PAGE)


def table(at):
    """The per-metric table as shown (strings)."""
    return next(d.value for d in at.main.dataframe if "p adjusted" in d.value.columns)


def verdicts(at) -> list[str]:
    """The technical sentences (one markdown list in the expander under the table)."""
    box = next(e for e in at.main.expander if "verdict in a sentence" in e.label)
    lines = [line[2:].replace("\\", "") for m in box.markdown for line in m.value.splitlines()]
    return [line for line in lines if "@5:" in line]


def ci_header(df) -> str:
    """The interval column's one name (issue 19: the header never switches between 95 / 97.5 / 99.17 %;
    the level is stated under the table)."""
    from rag_metrics.compare.paired import INTERVAL_HEADER

    return INTERVAL_HEADER


def expected_rows(df) -> list[dict]:
    return [{"Metric": f"{METRICS[r.metric].label}@{r.k}", "A": f"{r.mean_a:.3f}", "B": f"{r.mean_b:.3f}",
             "B − A": f"{r.delta:+.3f}", ci_header(df): f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}]",
             "p adjusted": f"{r.p_ttest_adj:.4f}", "Verdict": r.verdict,
             "Detectable difference (MDE)": f"{r.mde:.3f}",
             "B wins / loses / ties": f"{r.wins} / {r.losses} / {r.ties}"} for r in df.itertuples()]


def test_default_is_sidebar_vs_bm25_with_library_numbers(cmp):
    assert cmp.radio(key="cmp_a_retriever").value == "dense"
    assert cmp.radio(key="cmp_b_retriever").value == "bm25"
    a, b = library_result("dense"), library_result("bm25")
    want = compare(a, b, KEYS)
    assert table(cmp).to_dict("records") == expected_rows(want)
    assert sorted(verdicts(cmp)) == sorted(verdict(r, "A", "B") for _, r in want.iterrows())
    assert sorted(verdicts(cmp)) == sorted(want["sentence"])
    assert any("chunk level" in c.value for c in cmp.main.caption)
    assert not cmp.main.error


def test_cli_compare_gives_the_page_numbers(cmp, tmp_path):
    """rag-metrics compare on the two runs (TREC) and the golden set (qrels) = the page's table."""
    from rag_metrics.cli import main
    from rag_metrics.io.trec import write_trec_qrels, write_trec_run

    a, b = library_result("dense"), library_result("bm25")
    write_trec_run(a.run, tmp_path / "a.trec", "dense")
    write_trec_run(b.run, tmp_path / "b.trec", "bm25")
    write_trec_qrels(sample_golden(), tmp_path / "golden.qrels")
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["compare", "--qrels", str(tmp_path / "golden.qrels"), "--run", str(tmp_path / "a.trec"),
                     "--run", str(tmp_path / "b.trec"), "--metrics", ",".join(DEFAULT_METRICS), "--k", "5",
                     "--format", "json"])
    assert code == 0
    rows = json.loads(out.getvalue())["rows"]
    shown = table(cmp).to_dict("records")
    assert len(rows) == len(shown) == len(KEYS)
    for cli, page in zip(rows, shown):
        assert page["Metric"] == f"{METRICS[cli['metric']].label}@{cli['k']}"
        assert page["A"] == f"{cli['mean_a']:.3f}" and page["B"] == f"{cli['mean_b']:.3f}"
        assert page["B − A"] == f"{cli['delta']:+.3f}"
        assert page[ci_header(pd.DataFrame(rows))] == f"[{cli['ci_low']:+.3f}, {cli['ci_high']:+.3f}]"
        assert page["B wins / loses / ties"] == f"{cli['wins']} / {cli['losses']} / {cli['ties']}"
        assert page["p adjusted"] == f"{cli['p_ttest_adj']:.4f}"
        assert page["Verdict"] == cli["verdict"]
    # and (beyond the shown decimals) the library's comparison of the page's runs; the CLI's JSON
    # carries 10 significant decimals (pandas to_json), hence 1e-9
    lib = compare(library_result("dense"), library_result("bm25"), KEYS)
    for cli, r in zip(rows, lib.itertuples()):
        for key in ("mean_a", "mean_b", "delta", "ci_low", "ci_high", "p_ttest", "p_ttest_adj", "mde"):
            assert cli[key] == pytest.approx(getattr(r, key), abs=1e-9), key


def test_per_category_and_disagreements_match_library(cmp):
    a, b = library_result("dense"), library_result("bm25")
    cat = ab.category_deltas(a, b, "ndcg", 5)
    shown = next(d.value for d in cmp.main.dataframe if "Category" in d.value.columns)
    assert list(shown["Category"]) == list(cat["category"])
    assert list(shown["B − A"]) == [f"{v:+.3f}" for v in cat["delta"]]
    assert list(shown["95% CI"]) == [f"[{lo:+.3f}, {hi:+.3f}]" if n >= 3 else f"too few (n = {n})"
                                     for lo, hi, n in zip(cat["ci_low"], cat["ci_high"], cat["n"])]
    assert all(-1 <= lo <= hi <= 1 for lo, hi in zip(cat["ci_low"], cat["ci_high"]) if lo == lo)
    dis = disagreements(a, b, 5)
    shown = next(d.value for d in cmp.main.dataframe if "kind" in d.value.columns)
    assert list(shown["query_id"]) == list(dis["query_id"]) and list(shown["kind"]) == list(dis["kind"])
    counts = {m.label: m.value for m in cmp.main.metric}
    d = (b.values("ndcg", 5) - a.values("ndcg", 5))[a.included]
    assert counts == {"B better": str(int((d > 0).sum())), "A better": str(int((d < 0).sum())),
                      "Tie": str(int((d == 0).sum()))}


def test_metric_selector_switches_the_per_query_chart_and_categories(cmp):
    cmp.selectbox(key="cmp_metric").set_value("mrr").run()
    no_exception(cmp)
    a, b = library_result("dense"), library_result("bm25")
    cat = ab.category_deltas(a, b, "mrr", 5)
    shown = next(d.value for d in cmp.main.dataframe if "Category" in d.value.columns)
    assert list(shown["B − A"]) == [f"{v:+.3f}" for v in cat["delta"]]


def test_open_in_drill_down_preselects_the_query(cmp):
    first = disagreements(library_result("dense"), library_result("bm25"), 5)["query_id"].iloc[1]
    cmp.selectbox(key="cmp_disagree_query").set_value(first).run()
    cmp.button(key="cmp_open_drill").click().run()
    no_exception(cmp)
    assert cmp.title[0].value == "Failures and drill-down"
    assert cmp.selectbox(key="drill_query").value == first


def test_different_chunking_is_compared_at_document_level(cmp):
    cmp.number_input(key="cmp_b_size").set_value(300).run()
    cmp.number_input(key="cmp_b_overlap").set_value(50).run()
    no_exception(cmp)
    assert any("Evaluated at document level" in i.value for i in cmp.main.info)
    # A at document level equals the library's document-level evaluation of the dense run
    golden = sample_golden()
    a = library_result("dense")
    doc = evaluate(golden, a.run, EvalOptions(level="document"),
                   chunk_to_doc={i: i.rsplit("#", 1)[0]
                                 for i in set(a.run.ids) | {x for q in golden for x in q.relevant}})
    shown = table(cmp).set_index("Metric")
    for m in DEFAULT_METRICS:
        assert shown.loc[f"{METRICS[m].label}@5", "A"] == f"{doc.mean(m, 5):.3f}"
    cmp.radio(key="cmp_level").set_value("chunk").run()
    no_exception(cmp)
    assert any("chunk level with carried labels" in i.value for i in cmp.main.info)
    assert table(cmp).set_index("Metric").loc["Hit rate@5", "A"] == f"{a.mean('hit_rate', 5):.3f}"


def test_bad_inputs_show_clear_messages(cmp):
    cmp.number_input(key="cmp_b_size").set_value(100).run()
    cmp.number_input(key="cmp_b_overlap").set_value(200).run()
    no_exception(cmp)
    assert any("Configuration B" in e.value and "overlap" in e.value for e in cmp.main.error)
    cmp.number_input(key="cmp_b_overlap").set_value(50).run()
    cmp.number_input(key="cmp_b_size").set_value(500).run()
    cmp.number_input(key="cmp_b_overlap").set_value(100).run()
    cmp.radio(key="cmp_b_retriever").set_value("dense").run()
    cmp.text_input(key="cmp_b_model").set_value("no-such-org/no-such-model").run()
    no_exception(cmp)
    errs = " ".join(e.value for e in cmp.main.error)
    assert "Cannot evaluate this configuration" in errs and "offline" in errs
    cmp.text_input(key="cmp_b_model").set_value("").run()
    no_exception(cmp)
    assert not cmp.main.error


def test_non_default_offline_model_is_used(cmp):
    """A model available offline (the test-only hashing encoder) gives its own numbers."""
    cmp.radio(key="cmp_b_retriever").set_value("dense").run()
    cmp.text_input(key="cmp_b_model").set_value("hashing-64").run()
    no_exception(cmp)
    assert not cmp.main.error
    assert any("hashing\\-64" in c.value for c in cmp.main.caption)  # user text escaped in markdown
    shown = table(cmp).set_index("Metric")
    a = library_result("dense")
    assert shown.loc["Hit rate@5", "A"] == f"{a.mean('hit_rate', 5):.3f}"


def test_small_golden_set_verdict_says_too_small(app_env):
    """With 8 questions the page says the set is too small to tell."""
    from streamlit.testing.v1 import AppTest

    from rag_metrics.types import GoldenSet
    from rag_metrics.workspace.store import Workspace

    g = sample_golden()
    small = GoldenSet(tuple(q for q in g if q.in_scope)[:8], name="sample_corpus")
    Workspace("sample_corpus").save(small, None)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.selectbox(key="system").set_value("dense").run()
    at.switch_page(PAGE).run()
    no_exception(at)
    at.radio(key="cmp_b_retriever").set_value("hybrid").run()
    no_exception(at)
    texts = verdicts(at)
    assert len(texts) == len(KEYS)
    assert any("too small to tell" in t or "identical" in t for t in texts), texts
    a = evaluate(small, library_result("dense").run)
    b = evaluate(small, library_result("hybrid").run)
    want = compare(a, b, KEYS)
    assert sorted(texts) == sorted(verdict(r, "A", "B") for _, r in want.iterrows())


def test_each_configuration_is_computed_once(cmp):
    """Switching B away and back reuses the cached retrieval (no question is retrieved twice)."""
    from ui import cache

    cmp.radio(key="cmp_b_retriever").set_value("hybrid").run()
    no_exception(cmp)
    corpus, fp = cache.sample_corpus()
    chunks = cache.chunk_set(corpus, fp, 500, 100)
    memo = cache.retrieval_memo(chunks, chunks.fingerprint, "hybrid")
    n = memo.retrieved
    assert n == len({q.question for q in sample_golden()})
    cmp.radio(key="cmp_b_retriever").set_value("bm25").run()
    cmp.radio(key="cmp_b_retriever").set_value("hybrid").run()
    no_exception(cmp)
    assert memo.retrieved == n


@pytest.mark.parametrize("model", ["<b>bold</b>", "hashing-0", "../../etc/passwd", "x" * 200])
def test_odd_model_names_never_raise(cmp, model):
    cmp.radio(key="cmp_b_retriever").set_value("hybrid").run()
    cmp.text_input(key="cmp_b_model").set_value(model).run()
    no_exception(cmp)
    assert cmp.main.error, "a model that cannot load shows an error box"
    assert all("<b>" not in e.value for e in cmp.main.error)


def test_comparison_reaches_the_presenter_view_and_the_report(cmp, downloads):
    """The Compare page publishes its verdicts (report_ui.publish_comparison): the Presenter view and
    the downloaded report show them, named by what differs (dense vs bm25); a golden-set edit drops them."""
    import html as html_lib

    from tests.test_app_presenter import report_html

    want = compare(library_result("dense"), library_result("bm25"), KEYS)
    # plain words for stakeholders: the one-line summary, then one sentence per metric (no p-values)
    expected = [comparison_summary(want, "dense", "bm25", plain=True)] + [
        plain_verdict(r, "dense", "bm25") for _, r in want.iterrows()]
    cmp.switch_page("pages/presenter.py").run()
    no_exception(cmp)
    # the Presenter's story names the comparison as "<system> against <baseline>" (issue 19)
    assert any(h.value.startswith("dense against bm25") for h in cmp.header)
    shown = [i.value.replace("\\", "") for i in cmp.main.info]
    assert shown[0] == expected[0] and sorted(shown[1:len(expected)]) == sorted(expected[1:])  # as text
    config = next(d.value for d in cmp.main.dataframe if "setting" in d.value.columns)
    assert dict(zip(config["setting"], config["value"]))["compared"] == "dense vs bm25"
    html = report_html(cmp, downloads)
    assert "Comparison: dense vs bm25" in html
    for v in expected:
        assert html_lib.escape(v, quote=False)[:60] in html

    # another golden set: the comparison no longer describes it, so it leaves the report
    goto(cmp, "pages/golden_set.py")
    edit_table(cmp, {"edited_rows": {0: {"relevant": [], "grades": ""}}})
    cmp.switch_page("pages/presenter.py").run()
    no_exception(cmp)
    assert not any(h.value.startswith("Comparison") for h in cmp.header)
    # the story then compares against its own baseline, computed on the edited set (not the stale result)
    assert any(h.value.startswith("dense against bm25") for h in cmp.header)
    # the report's comparison is then the story's own, recomputed on the edited set (issue 19)
    assert "dense" in report_html(cmp, downloads)


def _interval(text: str) -> tuple[float, float]:
    lo, hi = text.strip("[]").split(",")
    return float(lo), float(hi)


def test_one_table_whose_interval_p_and_sentence_agree(cmp):
    """Dense vs hybrid on the sample: significant rows (A better) and 'too small to tell' rows. One
    table, one summary line, the rule stated; per row the interval excludes 0 exactly when the
    adjusted p is <= 0.05 and the verdict names a winner; the sentence carries the same numbers."""
    from rag_metrics.compare.paired import ALPHA, DECISION_RULE

    cmp.radio(key="cmp_b_retriever").set_value("hybrid").run()
    no_exception(cmp)
    want = compare(library_result("dense"), library_result("hybrid"), KEYS)
    shown = table(cmp)
    assert shown.to_dict("records") == expected_rows(want)
    # no paragraph per metric any more: the verdicts live in the table
    assert not [e for e in [*cmp.main.success, *cmp.main.warning, *cmp.main.info] if "@5:" in e.value]
    assert any(m.value.replace("\\", "") == f"**{comparison_summary(want)}**" for m in cmp.main.markdown)
    assert any(DECISION_RULE in c.value for c in cmp.main.caption)
    kinds = set()
    sentences = dict(zip([s.split(":")[0] for s in verdicts(cmp)], verdicts(cmp)))
    for row in shown.to_dict("records"):
        lo, hi = _interval(row[ci_header(want)])
        p = float(row["p adjusted"])
        significant = row["Verdict"] in ("A better", "B better")
        kinds.add(row["Verdict"])
        assert significant == (p <= ALPHA) == (lo > 0 or hi < 0), row
        if row["Verdict"] == "A better":
            assert hi < 0 and float(row["B − A"]) < 0
        s = sentences[row["Metric"]]
        assert f"CI {lo:+.3f} to {hi:+.3f}" in s, s
        if significant:
            assert f"A is better by {abs(float(row['B − A'])):.3f}" in s
        else:
            assert "no significant difference" in s and "the interval includes 0" in s
            if row["Verdict"] == "too small to tell":
                assert float(row["Detectable difference (MDE)"]) > 0.05
                assert f"about {float(row['Detectable difference (MDE)']):.2f} or more" in s
    assert {"A better", "too small to tell"} <= kinds


def test_another_chunking_for_b_reports_what_it_embeds(cmp, monkeypatch):
    """B with a new chunking embeds its chunks with a progress callback that knows the count before
    the first batch (n / N on the page), and the page ends without a leftover progress bar."""
    import rag_metrics.retrieval.cache as rcache

    calls: list[tuple[int, int]] = []
    real = rcache.encode_with_cache

    def spy(encoder, texts, cache, progress=None):
        def record(done, total):
            calls.append((done, total))
            if progress is not None:
                progress(done, total)
        return real(encoder, texts, cache, record if progress is not None else None)

    monkeypatch.setattr(rcache, "encode_with_cache", spy)
    cmp.radio(key="cmp_b_retriever").set_value("dense").run()
    cmp.number_input(key="cmp_b_size").set_value(450).run()
    no_exception(cmp)
    from ui import cache

    corpus, fp = cache.sample_corpus()
    chunks = cache.chunk_set(corpus, fp, 450, 100)
    assert cache.embedded(chunks)
    assert calls, "the embedding step reported its progress"
    total = calls[0][1]
    assert calls[0] == (0, total) or calls == [(0, 0)]
    assert calls[-1] in ((total, total), (0, 0))
    assert total <= len(chunks.chunks)
    assert table(cmp) is not None


def test_presenter_says_the_compare_verdicts_in_plain_words(cmp):
    """The Presenter view's sentences follow the Compare table row by row: a winner where the
    table has one, "can't tell apart yet" where it says too small to tell; no p-value, no test name."""
    cmp.radio(key="cmp_b_retriever").set_value("hybrid").run()
    no_exception(cmp)
    rows = table(cmp).to_dict("records")
    goto(cmp, "pages/presenter.py")
    said = [i.value.replace("\\", "") for i in cmp.main.info]
    assert said[0].startswith("dense vs hybrid on 64 queries")
    by_metric = {s.split(":")[0]: s for s in said[1:]}
    assert set(by_metric) == {r["Metric"] for r in rows}
    for r in rows:
        s = by_metric[r["Metric"]]
        assert "p =" not in s and "p-value" not in s and "t-test" not in s
        if r["Verdict"] == "A better":
            assert "dense does better than hybrid" in s
            lo, hi = _interval(r[ci_header(None)])
            assert f"between {min(abs(lo), abs(hi)):.2f} and {max(abs(lo), abs(hi)):.2f}" in s
        elif r["Verdict"] == "too small to tell":
            assert "can't tell dense and hybrid apart yet" in s


def test_cancel_stops_the_computation_and_says_what_was_kept(app):
    """The Cancel button (shown while a configuration is computed) reruns the page; that run stops
    before computing and says the embeddings made so far are kept."""
    app.session_state["cancel_compare"] = True  # the click's value on the rerun it triggers
    goto(app, PAGE)
    no_exception(app)
    assert any(i.value.startswith("Computation cancelled.") for i in app.info)
    assert not [d for d in app.dataframe if "Verdict" in d.value.columns]  # nothing computed
