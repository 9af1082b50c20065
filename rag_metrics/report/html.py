"""Stakeholder report: one self-contained HTML file that opens offline (no server, no network).

:func:`~rag_metrics.report.content.report_content` (:mod:`rag_metrics.report.content`, importable
from here too) gathers everything a report shows into a :class:`ReportContent` of DataFrames, Altair
charts and dataclasses (the app's presenter view renders the same object); :func:`render_report`
turns it into HTML, its CSS and offline JavaScript in this one module so the page is built in one
place; :func:`build_report` does both.

Offline charts: the Vega, Vega-Lite and vega-embed JavaScript is embedded inline, taken from the
``vl-convert-python`` package (``vl_convert.javascript_bundle()``, the bundle Altair itself uses
for ``chart.to_html(inline=True)``), once per file, and each chart is rendered to SVG by
``vegaEmbed`` from its inline JSON spec.  The file is about 1 MB; nothing is fetched.

Every piece of user text (questions, passages, ids, configuration values, titles) is HTML-escaped;
chart specs are embedded as JSON with ``<``, ``>`` and ``&`` escaped, so no text can close the
``<script>`` element.
"""
from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import pandas as pd

from rag_metrics.errors import InputError
from rag_metrics.evaluation import EvaluationResult
from rag_metrics.metrics.answer_registry import ANSWER_METRICS
from rag_metrics.report.content import (
    Passage,
    QueryExample,
    ReportContent,
    _label,
    best_and_worst,
    category_chart,
    metric_curve_chart,
    report_content,
)

__all__ = [
    "Passage", "QueryExample", "ReportContent", "report_content", "render_report", "build_report",
    "metric_curve_chart", "category_chart", "best_and_worst", "offline_javascript", "REPORT_CSS",
]


# ---- rendering ----------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def offline_javascript() -> str:
    """The Vega + Vega-Lite + vega-embed bundle (from vl-convert-python), for inline embedding."""
    try:
        import vl_convert
    except ImportError:
        raise InputError("the offline HTML report needs the vl-convert-python package (it provides the "
                         "Vega JavaScript to embed); install it with `pip install vl-convert-python`") from None
    js = vl_convert.javascript_bundle()  # type: ignore[call-arg]  # the stub marks the optional `snippet` required
    if "</script" in js.lower():  # never expected; would break the page
        js = js.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")
    return js


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _ci(lo: Any, hi: Any, n: Any = None) -> str:
    """``0.512 – 0.734``, or ``too few (n = 2)`` where there is no interval (fewer than MIN_CI_N values)."""
    if pd.isna(lo) or pd.isna(hi):
        return "too few" + (f" (n = {int(n)})" if n is not None and not pd.isna(n) else "")
    return f"{_num(lo)} – {_num(hi)}"


def _num(v: Any, digits: int = 3) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return _e(v)
    return "–" if math.isnan(f) else f"{f:.{digits}f}"


def _json_for_script(obj: Any) -> str:
    s = json.dumps(obj, ensure_ascii=True, allow_nan=False, default=str)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _spec(chart: Any) -> dict:
    spec = chart.to_dict()
    spec.setdefault("config", {})
    spec["config"].setdefault("font", "system-ui, -apple-system, Segoe UI, Roboto, sans-serif")
    spec["config"].setdefault("view", {}).setdefault("stroke", None)
    return spec


REPORT_CSS = """
:root { --ink:#1f2430; --muted:#5f6b7a; --line:#e3e7ee; --bg:#f6f8fb; --card:#fff; --accent:#2f6fdf;
        --good:#1a7f45; --bad:#c0392b; --goodbg:#e8f6ee; --badbg:#fdecea; }
* { box-sizing: border-box; }
.banner-stop, .banner-warn { margin:0 0 18px; padding:12px 16px; border-radius:8px; border:1px solid var(--line); }
.banner-stop { background:var(--badbg); border-color:var(--bad); }
.banner-warn { background:#fff6e0; border-color:#d99a00; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--ink); background:var(--bg); }
header { background:linear-gradient(120deg,#203a72,#2f6fdf); color:#fff; padding:28px 40px 22px; }
header h1 { margin:0 0 4px; font-size:26px; font-weight:650; }
header .sub { opacity:.88; font-size:14px; }
main { max-width:1180px; margin:0 auto; padding:22px 40px 40px; }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:18px 22px; margin:18px 0; }
h2 { font-size:18px; margin:0 0 10px; }
h3 { font-size:15px; margin:14px 0 6px; }
.muted { color:var(--muted); font-size:13px; }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(165px,1fr)); gap:12px; }
.card { border:1px solid var(--line); border-radius:9px; padding:12px 14px; background:#fbfcfe; }
.card .name { font-size:13px; color:var(--muted); }
.card .value { font-size:28px; font-weight:650; letter-spacing:-.5px; }
.card .ci { font-size:12px; color:var(--muted); }
.chart { min-height:120px; overflow-x:auto; }
table { border-collapse:collapse; width:100%; font-size:13.5px; }
th, td { text-align:left; padding:6px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-weight:600; color:var(--muted); background:#fafbfd; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
.verdict { padding:10px 12px; border-left:4px solid var(--accent); background:#f1f5fd; margin:8px 0; border-radius:4px; }
.examples { display:grid; grid-template-columns:1fr; gap:14px; }
@media (min-width:1100px) { .examples { grid-template-columns:1fr 1fr; } }
.example { border:1px solid var(--line); border-radius:9px; padding:12px 14px; }
.example .q { font-weight:600; font-size:15px; }
.pill { display:inline-block; font-size:12px; padding:1px 8px; border-radius:10px; background:#eef1f6; color:var(--muted); margin-right:4px; }
.pill.good { background:var(--goodbg); color:var(--good); } .pill.bad { background:var(--badbg); color:var(--bad); }
.pill.warn { background:#fff4e0; color:#9a5b00; }
#config th { width:32%; }
ol.passages { padding-left:0; list-style:none; margin:8px 0 0; }
ol.passages li { border-left:3px solid var(--line); padding:4px 10px; margin:6px 0; }
ol.passages li.rel { border-left-color:var(--good); background:#f6fbf8; }
.pmeta { font-size:12px; color:var(--muted); }
.ptext { font-size:13px; white-space:pre-wrap; word-wrap:break-word; }
.passage { border-left:3px solid var(--line); padding:4px 10px; margin:6px 0; font-size:13px; }
.passage.rel { border-left-color:var(--good); background:#f6fbf8; }
mark { background:#fff1b8; padding:0 1px; border-radius:2px; }
code { font-size:12.5px; background:#f1f3f7; padding:0 4px; border-radius:3px; }
details summary { cursor:pointer; color:var(--accent); font-size:13px; }
footer { color:var(--muted); font-size:12px; text-align:center; padding:10px 0 30px; }
@media print { body { background:#fff; } section { break-inside:avoid; } header { -webkit-print-color-adjust:exact; print-color-adjust:exact; } }
"""  # noqa: E501  (one CSS rule a line; wrapping would change the stylesheet this module emits)


def _table(df: pd.DataFrame, columns: Sequence[tuple[str, str, str]]) -> str:
    """``columns``: (column, header, kind) with kind "text", "num" or "int"."""
    head = "".join(f'<th class="num">{_e(h)}</th>' if kind != "text" else f"<th>{_e(h)}</th>"
                   for _, h, kind in columns)
    rows = []
    for _, r in df.iterrows():
        cells = []
        for col, _, kind in columns:
            v = r.get(col)
            if kind == "num":
                cells.append(f'<td class="num">{_num(v)}</td>')
            elif kind == "p":
                f = float(v) if v is not None and not pd.isna(v) else math.nan
                shown = "–" if math.isnan(f) else ("< 0.001" if f < 0.001 else f"{f:.3f}")
                cells.append(f'<td class="num">{shown}</td>')
            elif kind == "int":
                cells.append(f'<td class="num">{_e(v)}</td>')
            else:
                cells.append(f"<td>{_e(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _truncate(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n].rstrip() + " …"


def _example_html(ex: QueryExample, passage_chars: int) -> str:
    hit = ex.first_relevant_rank
    k = len(ex.passages)
    rank_pill = (f'<span class="pill good">first relevant at rank {hit}</span>' if 0 < hit <= max(k, 1) else
                 f'<span class="pill warn">first relevant at rank {hit}, beyond the top {k}</span>' if hit > 0
                 else '<span class="pill bad">no relevant chunk retrieved</span>')
    items = []
    for p in ex.passages:
        rel = f'<span class="pill good">relevant (grade {p.grade})</span>' if p.relevant else ""
        text = (_e(_truncate(" ".join(p.text.split()), passage_chars)) if p.text
                else '<span class="muted">(text not available)</span>')
        items.append(f'<li class="{"rel" if p.relevant else ""}">'
                     f'<div class="pmeta">#{p.rank} · <code>{_e(p.chunk_id)}</code>'
                     f" · score {_num(p.score)} {rel}</div><div class=\"ptext\">{text}</div></li>")
    expected = ", ".join(f"<code>{_e(i)}</code>" for i in ex.expected_ids) or "–"
    answer = (f'<div class="muted">Expected answer: {_e(ex.expected_answer)}</div>' if ex.expected_answer else "")
    return (f'<div class="example"><div class="q">{_e(ex.question)}</div>'
            f'<div><span class="pill">{_e(ex.query_id)}</span><span class="pill">{_e(ex.category)}</span>'
            f'<span class="pill">{_e(ex.metric)} = {_num(ex.value)}</span>{rank_pill}</div>'
            f'<div class="muted">Relevant chunks: {expected}</div>{answer}'
            f'<ol class="passages">{"".join(items) or "<li>(nothing retrieved)</li>"}</ol></div>')


def _config_value(v: Any) -> str:
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, ensure_ascii=False, default=str)
    return str(v)


def _answers_html(a: Any) -> str:
    """The "Answer quality" section: means with 95 % CIs per answer system, plain lines, and the
    first two systems compared (the decision rule of :mod:`rag_metrics.compare.paired`)."""
    rows = a.summary
    table = _table(rows, [("system", "answer system", "text"), ("label", "metric", "text"),
                          ("mean", "mean", "num"), ("ci_low", "95% CI low", "num"), ("ci_high", "95% CI high", "num"),
                          ("n", "answers", "int"), ("n_failed", "not scored", "int")]) if len(rows) else \
        '<p class="muted">No answer metric could be computed.</p>'
    lines = "".join(f'<div class="verdict">{_e(t)}</div>' for t in a.lines)
    offline = [m for m in dict.fromkeys(rows["metric"]) if ANSWER_METRICS[m].kind == "offline"] if len(rows) else []
    note = ""
    if offline:
        note = ('<p class="muted">Offline approximations (sentence embeddings, no LLM): '
                + "; ".join(f"<b>{_e(ANSWER_METRICS[m].label)}</b>: {_e(ANSWER_METRICS[m].definition)}"
                            for m in offline)
                + " They catch off-topic answers and invented facts far from the context, and miss contradictions "
                  "built from the context's own words and noncommittal answers that repeat the question. "
                  "They are not faithfulness or answer relevancy.</p>")
    cmp_html = ""
    if a.comparison is not None and len(a.comparison):
        from rag_metrics.compare.paired import comparison_summary

        x, y = a.comparison_names
        cmp = a.comparison.copy()
        cmp["label"] = [ANSWER_METRICS[m].label if m in ANSWER_METRICS else m for m in cmp["metric"]]
        cmp["verdict"] = cmp["verdict"].replace({"A better": f"{x} better", "B better": f"{y} better"})
        # the summary counts the rule's own verdicts ("B better"...), before they are renamed for the table
        cmp_html = (f"<h3>{_e(x)} vs {_e(y)}</h3><p class=\"muted\">{_e(comparison_summary(a.comparison, x, y))}</p>"
                    + _table(cmp, [("label", "metric", "text"), ("mean_a", x, "num"), ("mean_b", y, "num"),
                                   ("delta", f"{y} − {x}", "num"), ("ci_low", "CI low", "num"),
                                   ("ci_high", "CI high", "num"), ("p_ttest_adj", "adjusted p", "p"),
                                   ("verdict", "verdict", "text"), ("mde", "detectable difference", "num")]))
    return (f'<section id="answers"><h2>Answer quality</h2><p class="muted">{_e(a.source)} · judge: {_e(a.judge)} · '
            "means with 95% percentile-bootstrap confidence intervals over the answers each metric scored.</p>"
            f"{lines}{table}{note}{cmp_html}</section>")


def _segments_html(segments: Sequence[tuple[str, bool]]) -> str:
    return "".join(f"<mark>{_e(t)}</mark>" if hi else _e(t) for t, hi in segments)


def _story_html(story: Any) -> str:
    """The section the report leads with: the verdict against the targets with what is achievable,
    ours against the baseline in plain words, a win, a miss and a near miss."""
    if story is None:
        return ""
    rows = "".join(
        f"<tr><th>{_e(_label(t.metric, t.k))}</th><td>{_num(t.value)}</td><td>&gt; {t.target:g}</td>"
        f"<td>{_num(t.best)}</td><td>{'met' if t.met else ('missed' if t.reachable else 'missed; out of reach')}"
        "</td></tr>" for t in story.targets)
    targets = ("<table><thead><tr><th>target</th><th>value</th><th>goal</th><th>best possible with these labels"
               f"</th><th></th></tr></thead><tbody>{rows}</tbody></table>")
    base = ""
    if story.baseline:
        a, b = story.baseline_names
        base = (f"<h3>{_e(a)} against {_e(b)}</h3>"
                + "".join(f'<div class="verdict">{_e(v)}</div>' for v in story.baseline)
                + ("<details><summary>The other metrics</summary>"
                   + "".join(f'<div class="verdict">{_e(v)}</div>' for v in story.baseline_more) + "</details>"
                   if story.baseline_more else ""))
    exs = []
    for ex in story.examples:
        chunks = "".join(
            f'<div class="passage {"rel" if c.relevant else ""}"><div class="muted">'
            f'{"rank " + str(c.rank) if c.rank else "expected, not retrieved"} · {_e(c.chunk_id)} · '
            f'{"relevant" if c.relevant else "not relevant"}</div>{_segments_html(c.segments)}</div>'
            for c in ex.chunks)
        exs.append(f'<div class="example"><div class="muted">{_e(ex.kind)}</div><h4>{_e(ex.question)}</h4>'
                   f"<p>{_e(ex.sentence)}</p>{chunks}</div>")
    examples = (f'<h3>Three questions</h3><div class="examples">{"".join(exs)}</div>' if exs else "")
    return (f'<section id="story"><h2>The verdict</h2><div class="verdict">{_e(story.verdict)}</div>{targets}'
            '<p class="muted">Targets from the lesson. "Best possible" is the ideal ranking of these labels '
            "(every relevant chunk first): precision@k cannot exceed the share of relevant chunks a question has.</p>"
            f"{base}{examples}</section>")


def _located_html(c: ReportContent) -> str:
    """The banner of a system whose contexts could not all be located in the corpus ("" otherwise)."""
    if not c.located_line:
        return ""
    cls = "banner-stop" if not c.comparable else "banner-warn"
    tail = (" No headline number or verdict is given; the sections below are diagnostics, not a result."
            if not c.comparable else "")
    return f'<div class="{cls}" role="alert"><strong>{_e(c.located_line)}.</strong>{tail}</div>'


def render_report(content: ReportContent, passage_chars: int = 420) -> str:
    """HTML text of a :class:`ReportContent` (self-contained; see the module notes)."""
    c = content
    charts: list[tuple[str, dict]] = [("chart-curve", _spec(c.curve_chart)),
                                      ("chart-category", _spec(c.category_chart))]
    map_html = ""
    if c.map_chart is not None:
        charts.append(("chart-map", _spec(c.map_chart)))
        map_html = ('<section id="map"><h2>Corpus map</h2><p class="muted">Chunks projected to 2-D (coloured by '
                    "document; hollow squares: chunks no question covers) with the golden questions (◆). Click a "
                    "question to draw lines to its relevant chunks (green: retrieved, red dashed: missed) and to "
                    "its other retrieved chunks (orange dotted); the worst question is preselected. Drag to pan, "
                    'scroll to zoom.</p><div class="chart" id="chart-map"></div></section>')

    cards = []
    for _, r in (c.headline if c.comparable else c.headline.iloc[0:0]).iterrows():  # no verdict: no number
        kk = None if pd.isna(r["k"]) else int(r["k"])
        cards.append(f'<div class="card"><div class="name">{_e(_label(r["metric"], kk))}</div>'
                     f'<div class="value">{_num(r["mean"])}</div>'
                     f'<div class="ci">95% CI {_ci(r["ci_low"], r["ci_high"], r.get("n"))}</div></div>')
    n_inc = int(c.headline["n"].iloc[0]) if len(c.headline) else 0
    notes = "".join(f"<li>{_e(n)}</li>" for n in c.notes)

    cat = c.by_category.copy()
    if len(cat):
        cat["metric_k"] = [_label(m, None if pd.isna(kk) else int(kk)) for m, kk in zip(cat["metric"], cat["k"])]
    cat_table = _table(cat, [("category", "category", "text"), ("metric_k", "metric", "text"),
                             ("mean", "mean", "num"), ("ci_low", "95% CI low", "num"),
                             ("ci_high", "95% CI high", "num"), ("n", "queries", "int")]) if len(cat) else ""

    ctx_html = ""
    if c.context_metrics is not None and len(c.context_metrics):
        from rag_metrics.insights.ragas import JUDGE_METRICS, RELATION

        ctx_html = (
            '<section id="ragas"><h2>RAGAS context metrics (computed from the labels, no LLM)</h2>'
            + _table(c.context_metrics, [("label", "RAGAS metric", "text"), ("mean", "mean", "num"),
                                         ("ci_low", "95% CI low", "num"), ("ci_high", "95% CI high", "num"),
                                         ("ours", "our metric", "text"), ("ours_mean", "our mean", "num"),
                                         ("n_equal", "queries where equal", "int"), ("relation", "relation", "text")])
            + f"<details><summary>How they relate</summary><pre class=\"ptext\">{_e(RELATION)}</pre></details>"
            + ("<h3>Faithfulness and answer relevancy</h3><p class=\"muted\">They judge the generated answer "
               "and need a judge model (an LLM); see <a href=\"#answers\">Answer quality</a> for what this "
               "report has.</p>" if c.answers is not None else
               "<h3>Faithfulness and answer relevancy</h3><p class=\"muted\">They judge the generated answer, "
               "not the retrieval: the app's Answers page computes them (with an LLM judge, or offline "
               "approximations); this report has no answers to score.</p>")
            + "<ul class=\"muted\">" + "".join(f"<li><b>{_e(n.replace('_', ' '))}</b>: {_e(t)}</li>"
                                                for n, t in JUDGE_METRICS.items()) + "</ul></section>")

    cmp_html = ""
    if c.comparison is not None and len(c.comparison):
        a, b = c.comparison_names
        cmp = c.comparison.copy()
        cmp["metric_k"] = [_label(m, None if pd.isna(kk) else int(kk)) for m, kk in zip(cmp["metric"], cmp["k"])]
        cols = [("metric_k", "metric", "text"), ("mean_a", f"{a}", "num"), ("mean_b", f"{b}", "num"),
                ("delta", f"{b} − {a}", "num"), ("ci_low", "CI low", "num"), ("ci_high", "CI high", "num"),
                ("wins", f"{b} wins", "int"), ("losses", f"{b} losses", "int"), ("ties", "ties", "int")]
        if "p_ttest_adj" in cmp:
            cols.append(("p_ttest_adj", "adjusted p", "p"))
        cmp_html = ('<section id="comparison"><h2>Comparison: ' + _e(a) + " vs " + _e(b) + "</h2>"
                    + "".join(f'<div class="verdict">{_e(v)}</div>' for v in c.verdicts)
                    + _table(cmp, cols) + "</section>")

    ans_html = _answers_html(c.answers) if c.answers is not None else ""

    def examples(title: str, exs: Sequence[QueryExample], sid: str) -> str:
        body = "".join(_example_html(e, passage_chars) for e in exs) or '<p class="muted">No in-scope query.</p>'
        return f'<div id="{sid}"><h3>{_e(title)}</h3><div class="examples">{body}</div></div>'

    config_rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(_config_value(v))}</td></tr>" for k, v in c.config.items())

    scripts = "\n".join(
        f"vegaEmbed({json.dumps('#' + cid)}, {_json_for_script(spec)}, "
        "{actions: false, renderer: 'svg'}).catch(function (e) { "
        f"document.getElementById({json.dumps(cid)}).textContent = 'Chart failed to render: ' + e; }});"
        for cid, spec in charts)
    version = _e(__import__("rag_metrics").__version__)

    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(c.title)}</title>
<style>{REPORT_CSS}</style>
<script>{offline_javascript()}</script>
</head>
<body>
<header>
  <h1>{_e(c.title)}</h1>
  <div class="sub">{c.n_queries} golden questions ({c.n_in_scope} in scope, {c.n_out_of_scope} out of scope) ·
  cutoff k = {c.k} · generated {_e(c.generated_at)}</div>
</header>
<main>
{_located_html(c)}
{_story_html(c.story) if c.comparable else ""}
<section id="headline">
  <h2>Headline metrics at k = {c.k}</h2>
  <div class="cards">{''.join(cards)}</div>
  <p class="muted">Means over {n_inc} in-scope questions, with 95% bootstrap confidence intervals. Metrics follow
  trec_eval conventions (precision divides by k; recall by all relevant chunks; MAP and NDCG as in trec_eval).</p>
  {f'<ul class="muted">{notes}</ul>' if notes else ''}
</section>
{cmp_html}
<section id="curve"><h2>Metrics vs cutoff k</h2><div class="chart" id="chart-curve"></div></section>
<section id="categories"><h2>By question category</h2><div class="chart" id="chart-category"></div>
<details><summary>Table</summary>{cat_table}</details></section>
{ctx_html}
{ans_html}
{map_html}
<section id="examples">
  <h2>Best and worst questions by {_e(c.ranking_metric)}</h2>
  <p class="muted">Each question with its top {c.k} retrieved passages; relevant passages are marked green.</p>
  {examples("Worst", c.worst, "worst")}
  {examples("Best", c.best, "best")}
</section>
<section id="config"><h2>Configuration</h2><table>{config_rows}</table></section>
</main>
<footer>rag-metrics {version} · self-contained report: opens offline, no data leaves this file.</footer>
<script>
{scripts}
</script>
</body>
</html>
"""


def build_report(result: EvaluationResult, *, k: int = 5, chunk_text: Mapping[str, str] | None = None,
                 config: Mapping[str, Any] | None = None, comparison: pd.DataFrame | None = None,
                 comparison_names: tuple[str, str] = ("A", "B"), title: str = "Retrieval evaluation report",
                 passage_chars: int = 420, **options: Any) -> str:
    """A self-contained HTML report of ``result`` at cutoff ``k``.

    ``chunk_text`` maps chunk ids to their text (shown for the example queries).  ``options`` go
    to :func:`report_content` (``metrics``, ``category_metrics``, ``ranking_metric``,
    ``n_examples``, ``max_k``, ``context_metrics``, ``n_resamples``, ``generated_at``).
    """
    content = report_content(result, k=k, chunk_text=chunk_text, config=config, comparison=comparison,
                             comparison_names=comparison_names, title=title, **options)
    return render_report(content, passage_chars=passage_chars)
