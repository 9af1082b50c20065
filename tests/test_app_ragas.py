"""AppTest of the RAGAS page: values equal the library's, K follows the sidebar, exports, judge note."""
from __future__ import annotations

import csv
import io
import json

import pytest

from app_helpers import library_result, no_exception
from app_helpers import open_page as _open_page
from app_helpers import sample_index as _index
from rag_metrics.insights.ragas import JUDGE_METRICS, context_metrics_summary, ragas_rows

PAGE = "pages/ragas.py"


def open_page(app):
    return _open_page(app, PAGE)


def shown_pairs(at) -> list[tuple[str, str]]:
    return [(m.label, m.value) for m in at.metric]


#: The card labels' short names of the RAGAS metrics (each card is titled with the full name).
SHORT = {"ragas_id_context_precision": "ID precision", "ragas_id_context_recall": "ID recall",
         "ragas_context_precision": "Context precision"}


def expected_pairs(result, k: int) -> list[tuple[str, str]]:
    from rag_metrics.metrics.registry import METRICS

    out = []
    for r in context_metrics_summary(result, k).to_dict("records"):
        metric = r["ours"].split("@")[0]
        short = SHORT[r["ragas_metric"]]
        out += [(f"{short}, in-scope mean", f"{r['mean']:.3f}"),
                (f"{short}, every-row mean (ragas.evaluate)", f"{r['ragas_evaluate_mean']:.3f}"),
                (f"{METRICS[metric].label}@{k}", f"{r['ours_mean']:.3f}")]
    return out


def test_ragas_page_shows_library_values(app):
    open_page(app)
    assert app.title[0].value == "RAGAS context metrics"
    assert shown_pairs(app) == expected_pairs(library_result("dense"), 5)
    # ID-based recall and precision equal recall@K and precision@K on the sample (>= K retrieved)
    pairs = dict(zip(["p_ragas", "p_eval", "p", "r_ragas", "r_eval", "r", "cp", "cp_eval", "ap"],
                     [v for _, v in shown_pairs(app)]))
    assert pairs["p_ragas"] == pairs["p"] and pairs["r_ragas"] == pairs["r"]
    captions = " ".join(c.value for c in app.caption)
    assert "95% CI" in captions and "Equal on" in captions
    # the relation is explained
    md = " ".join(m.value for m in app.markdown)
    assert "AP@K" in md and "min\\(K, n\\)" in md


@pytest.mark.parametrize("k", [1, 10])
def test_ragas_page_follows_k(app, k):
    open_page(app)
    app.slider(key="k").set_value(k).run()
    no_exception(app)
    assert shown_pairs(app) == expected_pairs(library_result("dense"), k)


def test_ragas_page_follows_retriever(app):
    open_page(app)
    app.selectbox(key="system").set_value("bm25").run()
    no_exception(app)
    assert shown_pairs(app) == expected_pairs(library_result("bm25"), 5)


def test_per_query_table_and_difference_filter(app):
    open_page(app)
    table = app.dataframe[0].value
    assert len(table) == 76
    assert {"ragas_id_context_precision", "precision@5", "map@5", "ragas_context_precision"} <= set(table.columns)
    app.toggle(key="ragas_diff_only").set_value(True).run()
    no_exception(app)
    diff = app.dataframe[0].value
    assert 0 < len(diff) < len(table)
    # every remaining row differs somewhere (AP vs rank-weighted CP, or NaN for out-of-scope)
    assert set(diff["query_id"]) <= set(table["query_id"])


def test_exports_are_the_library_dataset(app, downloads):
    open_page(app)
    buttons = {b.proto.label: b for b in app.get("download_button")}
    assert {"Download JSONL", "Download CSV"} <= set(buttons)
    chunks = _index("dense").chunks
    expected = ragas_rows(library_result("dense"), chunks, 5)
    text = downloads.data(buttons["Download JSONL"])
    text = text.decode() if isinstance(text, bytes) else text
    rows = [json.loads(line) for line in text.splitlines()]
    assert len(rows) == len(expected) == 76
    assert rows[0]["user_input"] == expected[0]["user_input"]
    assert rows[0]["retrieved_context_ids"] == expected[0]["retrieved_context_ids"]
    assert [r["reference_context_ids"] for r in rows] == [r["reference_context_ids"] for r in expected]
    csv_text = downloads.data(buttons["Download CSV"])
    csv_text = csv_text.decode() if isinstance(csv_text, bytes) else csv_text
    parsed = list(csv.DictReader(io.StringIO(csv_text)))
    assert len(parsed) == 76 and json.loads(parsed[0]["retrieved_context_ids"]) == expected[0]["retrieved_context_ids"]


def test_judge_metrics_are_explained_not_computed(app):
    open_page(app)
    info = " ".join(i.value for i in app.info)
    # the Answers page computes them: this page says so, never "not computed"
    assert "Answers" in info and "judge" in info and "not computed" not in info.lower()
    assert "computed on the Answers page" in info
    md = " ".join(m.value for m in app.markdown)
    assert "not computed" not in md.lower()
    text = " ".join(m.value for m in app.markdown)
    for explanation in JUDGE_METRICS.values():
        assert explanation[:40] in text


@pytest.mark.parametrize("k", [3, 5])
def test_ragas_evaluate_numbers_are_ragas_aggregate_of_the_page_export(app, downloads, k):
    """The page's "ragas.evaluate" numbers equal ragas's aggregate computed here from the page's own
    JSONL export with ragas's per-row formulas (set-based ID precision/recall, np.nanmean over every
    row); the in-scope mean leaves the out-of-scope rows out, so the two differ on the sample."""
    import numpy as np

    from rag_metrics.insights.ragas import id_context_precision, id_context_recall

    open_page(app)
    app.slider(key="k").set_value(k).run()
    no_exception(app)
    buttons = {b.proto.label: b for b in app.get("download_button")}
    text = downloads.data(buttons["Download JSONL"])
    rows = [json.loads(line) for line in (text.decode() if isinstance(text, bytes) else text).splitlines()]
    prec = np.nanmean([id_context_precision(r["retrieved_context_ids"], r["reference_context_ids"])
                       if r["retrieved_context_ids"] else np.nan for r in rows])
    rec = np.nanmean([id_context_recall(r["retrieved_context_ids"], r["reference_context_ids"]) for r in rows])
    shown = [v for label, v in shown_pairs(app) if label.endswith(", every-row mean (ragas.evaluate)")]
    assert shown[0] == f"{prec:.3f}" and shown[1] == f"{rec:.3f}"
    in_scope = [v for label, v in shown_pairs(app) if label.endswith(", in-scope mean")]
    assert in_scope[0] != shown[0]  # out-of-scope rows score 0 in ragas.evaluate's precision
    # two different numbers never share one metric name
    labels = [label for label, _ in shown_pairs(app)]
    assert len(labels) == len(set(labels)), labels
    captions = " ".join(c.value for c in app.caption)
    assert "every row" in captions and "repeated id included" in captions
