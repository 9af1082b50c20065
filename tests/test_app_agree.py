"""Pages that agree (issue 12): the Dashboard, the Presenter view, the downloaded report and the CLI
show the same mean and 95 % interval for each metric; every chart built by the app and the report
gives a metric the same colour and draws K on the same scale."""
from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout

import pytest

from app_helpers import goto, library_result, open_page, sample_golden
from rag_metrics.evaluation import CI_RESAMPLES
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS
from rag_metrics.report.chart_style import metric_color

LABEL_TO_METRIC = {spec.label: name for name, spec in METRICS.items()}


def _cards_with_ci(at) -> dict[str, tuple[str, str]]:
    """``{"MRR@5": ("0.812", "95% CI 0.701 – 0.905")}`` from a page's cards: each card is a metric
    followed by its CI caption, in the same order."""
    cards = [m for m in at.main.metric if "@" in m.label]
    cis = [c.value for c in at.main.caption if c.value.startswith("95% CI")]
    assert len(cis) >= len(cards) > 0
    return {m.label: (m.value, ci) for m, ci in zip(cards, cis)}


def _library_cards(k: int) -> dict[str, tuple[str, str]]:
    res = library_result("dense")
    table = res.summary(DEFAULT_METRICS, ks=(k,), ci=True)
    return {f"{METRICS[r.metric].label}@{k}": (f"{r.mean:.3f}", f"95% CI {r.ci_low:.3f} – {r.ci_high:.3f}")
            for r in table.itertuples()}


def _cli_cards(tmp_path, k: int) -> dict[str, tuple[str, str]]:
    from rag_metrics.cli import main
    from rag_metrics.io.trec import write_trec_qrels, write_trec_run

    write_trec_run(library_result("dense").run, tmp_path / "dense.trec", "dense")
    write_trec_qrels(sample_golden(), tmp_path / "golden.qrels")
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["evaluate", "--qrels", str(tmp_path / "golden.qrels"), "--run", str(tmp_path / "dense.trec"),
                     "--metrics", ",".join(DEFAULT_METRICS), "--k", str(k), "--ci", "--format", "json"])
    assert code == 0
    doc = json.loads(out.getvalue())
    return {f"{METRICS[m].label}@{k}": (f"{doc['metrics'][f'{m}@{k}']:.3f}",
                                       "95% CI {:.3f} – {:.3f}".format(*doc["ci95"][f"{m}@{k}"]))
            for m in DEFAULT_METRICS}


def _report_cards(html: str) -> dict[str, tuple[str, str]]:
    return {name: (value, ci) for name, value, ci in re.findall(
        r'<div class="name">([^<]+)</div><div class="value">([^<]+)</div><div class="ci">([^<]+)</div>', html)}


@pytest.mark.parametrize("k", [5, 3])
def test_dashboard_presenter_report_and_cli_show_one_interval(app, downloads, tmp_path, k):
    if k != 5:
        app.slider(key="k").set_value(k).run()
    dashboard = _cards_with_ci(goto(app, "pages/dashboard.py"))
    presenter = _cards_with_ci(open_page(app, "pages/presenter.py"))
    button = next(b for b in app.get("download_button") if b.proto.id.endswith("report_download_presenter"))
    data = downloads.data(button)
    report = _report_cards(data.decode() if isinstance(data, bytes) else data)
    library = _library_cards(k)
    assert dashboard == library
    assert presenter == library
    assert report == library
    assert _cli_cards(tmp_path, k) == library
    # the interval is not a degenerate one (the test can fail on a real difference)
    assert any(lo != hi for lo, hi in (ci.split()[2::2] for _, ci in library.values()))


def test_dashboard_says_the_library_resamples(app):
    captions = " ".join(c.value for c in app.main.caption)
    assert f"{CI_RESAMPLES:,} resamples" in captions


# ---- one colour per metric, one K axis ---------------------------------------------------------------
def _specs(at) -> list[dict]:
    out = []
    for kind in ("vega_lite_chart", "arrow_vega_lite_chart"):
        for el in at.get(kind):
            out.append(json.loads(el.proto.spec))
    return out


def _walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def metric_colours(spec: dict) -> dict[str, str]:
    """``{metric name: colour}`` from every colour scale of a spec whose domain names metrics."""
    found: dict[str, str] = {}
    for node in _walk(spec):
        color = node.get("color") if isinstance(node.get("color"), dict) else None
        scale = (color or {}).get("scale")
        if not isinstance(scale, dict) or "domain" not in scale or "range" not in scale:
            continue
        for label, colour in zip(scale["domain"], scale["range"]):
            metric = LABEL_TO_METRIC.get(str(label).split("@")[0])
            if metric is not None:
                assert found.setdefault(metric, colour) == colour, (metric, found[metric], colour)
    return found


def k_scales(spec: dict) -> list[dict]:
    """The x scales of every layer that draws K on a quantitative axis."""
    return [node["x"].get("scale", {}) for node in _walk(spec)
            if isinstance(node.get("x"), dict) and node["x"].get("field") == "k"
            and node["x"].get("type") == "quantitative"
            and "scale" in node["x"]]


def test_each_metric_has_one_colour_and_k_one_scale_everywhere(app):
    from rag_metrics.report.html import report_content

    seen: dict[str, dict[str, str]] = {}
    charts: dict[str, list[dict]] = {}
    goto(app, "pages/dashboard.py")
    charts["dashboard"] = _specs(app)
    goto(app, "pages/presenter.py")
    charts["presenter"] = _specs(app)
    goto(app, "pages/learn.py")
    charts["learn"] = _specs(app)
    content = report_content(library_result("dense"), k=5)
    charts["report"] = [content.curve_chart.to_dict(), content.category_chart.to_dict()]
    for where, specs in charts.items():
        assert specs, where
        for spec in specs:
            for metric, colour in metric_colours(spec).items():
                seen.setdefault(metric, {})[where] = colour
    # every default metric appears on the dashboard, the presenter view and in the report
    for where in ("dashboard", "presenter", "report"):
        assert {m for m, w in seen.items() if where in w} >= set(DEFAULT_METRICS), where
    for metric, by_place in seen.items():
        assert set(by_place.values()) == {metric_color(metric)}, (metric, by_place)
    # the K axis: logarithmic from 1 on every metric-against-K chart, to the same depth on the
    # Dashboard, the Presenter view and the report
    depth = library_result("dense").depth
    for where, specs in charts.items():
        scales = [s for spec in specs for s in k_scales(spec)]
        assert scales, where
        assert all(s.get("type") == "log" and s["domain"][0] == 1 for s in scales), (where, scales)
        if where != "learn":
            assert {s["domain"][1] for s in scales} == {depth}, (where, scales)


def test_dashboard_category_chart_uses_the_metric_colour(app):
    app.selectbox(key="dash_cat_metric").set_value("mrr").run()
    spec = next(s for s in _specs(app) if any(n.get("mark", {}).get("type") == "bar"
                                              for n in _walk(s) if isinstance(n.get("mark"), dict))
                and "MRR (mean)" in json.dumps(s))
    bars = [n["mark"] for n in _walk(spec) if isinstance(n.get("mark"), dict) and n["mark"].get("type") == "bar"]
    assert bars and all(b.get("color") == metric_color("mrr") for b in bars)
