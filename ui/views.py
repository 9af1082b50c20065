"""Rendering helpers shared by the pages: number formatting, metric cards, Altair charts, reports.

Numbers are shown with 3 decimals everywhere (:func:`fmt`).  Text that comes from the corpus or an
upload is always shown as plain text (:func:`plain_text`, dataframes), never as markdown or HTML.
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from rag_metrics import jobs
from rag_metrics.evaluation import too_few
from rag_metrics.insights.readouts import target_label
from rag_metrics.jobs import Cancelled, Ticket, slot
from rag_metrics.metrics.registry import METRICS
from rag_metrics.report import chart_style
from rag_metrics.server.policy import allowed
from ui import server, session, state
from ui.context import ABSTAIN_NAMES as _ABSTAIN_NAMES
from ui.context import DECIMALS as DECIMALS
from ui.context import abstention_records as abstention_records
from ui.context import curve_records as curve_records
from ui.context import esc as esc
from ui.context import fmt as fmt
from ui.context import label as label
from ui.context import one_line as one_line
from ui.context import wrap_question_labels as wrap_question_labels
from ui.widgets import input_error as input_error
from ui.widgets import report as report
from ui.widgets import section as section

#: One colour per metric, the same in every chart and in the report (defined in the library).
METRIC_COLORS = chart_style.METRIC_COLORS
ACCENT = "#4C78A8"
MUTED = "#9AA5B1"


def ci_text(lo: float, hi: float, n: int | None = None, signed: bool = False, brackets: bool = False) -> str:
    """An interval for a page: ``0.512 – 0.734`` (``[+0.012, +0.210]`` when ``signed``/``brackets``),
    or ``too few (n = 2)`` where the library gives none because the set is too small
    (:data:`rag_metrics.evaluation.MIN_CI_N`), or an em dash when it is missing for another reason."""
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return f"too few (n = {int(n)})" if n is not None and not pd.isna(n) and too_few(int(n)) else "—"
    a, b = (f"{float(lo):+.3f}", f"{float(hi):+.3f}") if signed else (fmt(lo), fmt(hi))
    return f"[{a}, {b}]" if brackets or signed else f"{a} – {b}"


_DESCRIPTION_DA = {  # the metrics' tooltips on the Danish lesson
    "hit_rate": "Kom et relevant id med i top k? (trec_eval success, ir_measures Success@k.)",
    "mrr": "Den reciprokke rang af det første relevante id: belønner at placere ét rigtigt svar højt.",
    "precision": "Andelen af top k, der er relevant; divisoren er k, også når færre blev hentet.",
    "recall": "Andelen af alle relevante id'er, der blev fundet i top k (|R| tæller også relevante id'er, der "
              "aldrig blev hentet).",
    "ndcg": "Graderet, positionsdiskonteret gevinst i forhold til den ideelle rangering (lineær gevinst, "
            "trec_eval).",
    "ndcg_exp": "NDCG med Burges' eksponentielle gevinst (ranx ndcg_burges, mange ML-biblioteker).",
    "map": "Gennemsnitlig precision ved hver relevant rang, over alle relevante id'er (nævner |R|).",
    "judged": "Andelen af top k, der har en label, karakter 0 medregnet: hvor komplette vurderingerne er for "
              "denne kørsel (ir_measures Judged@k; deler med n, når færre end k blev hentet).",
}


def metric_help(metric: str, lang: str = "en") -> str:
    """A metric's tooltip: what it measures, its formula and its trec_eval measure (Danish on the Danish
    lesson)."""
    spec = METRICS[metric]
    if lang == "da":
        text = _DESCRIPTION_DA.get(metric, spec.description)
        return f"{text}\n\nFormel: `{spec.formula}`  \ntrec_eval: `{spec.trec_eval}`"
    return f"{spec.description}\n\nFormula: `{spec.formula}`  \ntrec_eval: `{spec.trec_eval}`"


def plain_text(text: str, height: int | None = None) -> None:
    """Show corpus/upload text verbatim (never interpreted as markdown or HTML)."""
    st.code(text, language=None, wrap_lines=True, height=height)


# ---- cards ------------------------------------------------------------------------------------
def metric_cards(summary: pd.DataFrame, per_row: int = 3, key: str = "metrics") -> None:
    """One card per metric: mean at K with its 95 % CI and n, help from the registry, in rows of
    ``per_row`` (six cards: two even rows, not five and one stretched across the page).  A row still
    wraps when the page is narrower still, never truncating a value."""
    rows = summary.to_dict("records")
    with st.container(key=f"cards_{key}"):  # the wrapping rule in ui.shell's CSS matches st-key-cards_*
        for start in range(0, max(len(rows), 1), per_row):
            cols = st.columns(per_row)
            for col, r in zip(cols, rows[start:start + per_row]):
                with col:
                    st.metric(f"{label(r['metric'])}@{r['k']}", fmt(r["mean"]), help=metric_help(r["metric"]),
                              border=True)
                    st.caption(f"95% CI {ci_text(r['ci_low'], r['ci_high'], r.get('n'))}")


def target_cards(targets: pd.DataFrame, lang: str = "en") -> None:
    """The lesson's targets (:func:`rag_metrics.insights.readouts.target_checks`): each at its own cutoff, with
    the best value this golden set allows there, and why when the target is out of reach (``lang="da"``: in
    Danish, with a decimal comma, for the lesson in Danish; ``targets`` then made with ``lang="da"``)."""
    def num(v: float) -> str:
        return fmt(v).replace(".", ",") if lang == "da" else fmt(v)

    for t in targets.to_dict("records"):
        name = target_label(t["metric"], None if pd.isna(t["k"]) else int(t["k"]), lang)
        target = f"{t['target']:g}"
        if lang == "da":
            msg = (f"{name} = {num(t['value'])} (mål > {target.replace('.', ',')}; bedst mulige på dette golden set: "
                   f"{num(t['best'])})")
        else:
            msg = f"{name} = {fmt(t['value'])} (target > {target}; best possible on this golden set: {fmt(t['best'])})"
        if t["met"]:
            st.success(msg, icon=":material/check_circle:")
        elif not t["reachable"]:
            st.info(f"{msg}. {'Uden for rækkevidde' if lang == 'da' else 'Out of reach'}: {esc(t['why'])}",
                    icon=":material/block:")
        else:
            st.warning(msg, icon=":material/flag:")


def wrapped_table(df: pd.DataFrame) -> None:
    """A small table of long texts that wraps inside its cells (static, so the full text is always
    readable, also on a projector): the MRR table, the glossary, the drill-down formulas."""
    st.table(df, hide_index=True)


# ---- charts ---------------------------------------------------------------------------------------
# Charts are written in Altair once per shape (cached templates with *named* datasets) and filled
# with the current numbers at render time: building and validating a layered Altair chart costs
# ~100 ms, filling a template costs well under 1 ms, which keeps a K change under budget.
def _records(df: pd.DataFrame) -> list[dict]:
    return df.to_dict("records")


def _fill(template: dict, **datasets: pd.DataFrame | list[dict]) -> dict:
    spec = dict(template)
    spec["datasets"] = {name: (_records(d) if isinstance(d, pd.DataFrame) else d) for name, d in datasets.items()}
    return spec


def fill_chart(template: dict, **datasets: pd.DataFrame | list[dict]) -> dict:
    """A chart spec made once (``alt.Data(name=...)`` placeholders, ``to_dict()`` cached) filled with
    this rerun's rows: Altair builds and validates a spec only once per shape, never per rerun."""
    return _fill(template, **datasets)


def metric_scale(metrics: Sequence[str]) -> alt.Scale:
    """Colour scale of a chart whose colour field holds metric labels: each metric its colour."""
    return alt.Scale(**chart_style.metric_scale(metrics, label))


def k_x(max_k: int, title: str = chart_style.K_TITLE) -> alt.X:
    """The K axis of every metric-against-K chart (log scale from 1, the same ticks)."""
    return alt.X("k:Q", title=title, scale=alt.Scale(**chart_style.k_scale(max_k)),
                 axis=alt.Axis(**chart_style.k_axis(max_k)))


@functools.lru_cache(maxsize=64)
def _curve_template(metrics: tuple[str, ...], max_k: int, height: int) -> dict:
    x = k_x(max_k)
    y = alt.Y("value:Q", title="Mean over queries", scale=alt.Scale(domain=[0, 1]))
    # the legend in rows of three under the plot: in one row, six labels ran past a 1024-1280 px page's
    # column and the last ("MAP") was cut to "MA"
    color = alt.Color("Metric:N", scale=metric_scale(metrics),
                      legend=alt.Legend(orient="bottom", title=None, columns=3, labelLimit=0, columnPadding=16))
    curve = alt.Data(name="curve")
    lines = alt.Chart(curve).mark_line(strokeWidth=2).encode(x=x, y=y, color=color)
    hover = alt.selection_point(fields=["k"], nearest=True, on="pointerover", empty=False)
    points = alt.Chart(curve).mark_point(filled=True, size=40).encode(
        x=x, y=y, color=color, opacity=alt.condition(hover, alt.value(1), alt.value(0)),
        tooltip=[alt.Tooltip("Metric:N"), alt.Tooltip("k:Q", title="K"), alt.Tooltip("value_fmt:N", title="Mean")],
    ).add_params(hover)
    marker = alt.Data(name="marker")
    rule = alt.Chart(marker).mark_rule(color="#333", strokeDash=[4, 3]).encode(x="k:Q")
    text = alt.Chart(marker).mark_text(align="left", dx=4, color="#333", fontWeight="bold").encode(
        x="k:Q", y=alt.value(8), text="text:N")
    dots = alt.Chart(alt.Data(name="at_k")).mark_point(filled=True, size=70).encode(
        x="k:Q", y="value:Q", color=alt.Color("Metric:N", scale=metric_scale(metrics), legend=None),
        tooltip=[alt.Tooltip("Metric:N"), alt.Tooltip("value_fmt:N", title="Mean at K")])
    return (lines + points + rule + text + dots).properties(height=height).to_dict()


def curve_chart(records: list[dict], k: int, metrics: Sequence[str], height: int = 320) -> dict:
    """Every metric's mean against K (log axis), with the current K marked."""
    max_k = max(max((r["k"] for r in records), default=1), 2)
    at_k = [r for r in records if r["k"] == k]
    return _fill(_curve_template(tuple(metrics), int(max_k), height), curve=records,
                 marker=[{"k": k, "text": f"K = {k}"}], at_k=at_k)


@functools.lru_cache(maxsize=32)
def _category_template(metric: str, height: int) -> dict:
    y = alt.Y("label:N", title=None, sort=None)
    tooltip = [alt.Tooltip("category:N", title="Category"), alt.Tooltip("n:Q", title="Queries"),
               alt.Tooltip("mean_fmt:N", title="Mean"), alt.Tooltip("ci_fmt:N", title="95% CI")]
    data = alt.Data(name="cat")
    bars = alt.Chart(data).mark_bar(color=chart_style.metric_color(metric), opacity=0.85, height=22).encode(
        x=alt.X("mean:Q", title=f"{label(metric)} (mean)", scale=alt.Scale(domain=[0, 1])), y=y, tooltip=tooltip)
    err = alt.Chart(data).mark_errorbar(color="#333", thickness=1.5, ticks=True).encode(
        x=alt.X("ci_low:Q", title=""), x2="ci_high:Q", y=y, tooltip=tooltip)
    text = alt.Chart(data).mark_text(align="left", dx=6, color="#333").encode(x="ci_high:Q", y=y, text="mean_fmt:N")
    return (bars + err + text).properties(height=height).to_dict()


def category_chart(cat: pd.DataFrame, metric: str, height: int = 260) -> dict:
    """Mean per category with 95 % CI error bars and n."""
    df = cat.copy()
    df["label"] = [f"{c} (n={n})" for c, n in zip(df["category"], df["n"])]
    df["mean_fmt"] = [fmt(v) for v in df["mean"]]
    df["ci_fmt"] = [ci_text(a, b, n) for a, b, n in zip(df["ci_low"], df["ci_high"], df["n"])]
    df["k"] = df["k"].astype(object)
    return _fill(_category_template(metric, height), cat=df)


@functools.lru_cache(maxsize=4)
def _hit_rate_template(height: int) -> dict:
    base = alt.Chart(alt.Data(name="hits")).encode(
        x=alt.X("K:N", title="Hit rate at", sort=None, axis=alt.Axis(labelAngle=0)))
    bars = base.mark_bar(color=chart_style.metric_color("hit_rate"), width=38).encode(
        y=alt.Y("hit_rate:Q", title="Hit rate", scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("K:N"), alt.Tooltip("value_fmt:N", title="Hit rate"), alt.Tooltip("detail:N", title="")])
    text = base.mark_text(dy=-8, color="#333").encode(y="hit_rate:Q", text="value_fmt:N")
    return (bars + text).properties(height=height).to_dict()


def hit_rate_chart(df: pd.DataFrame, height: int = 220) -> dict:
    d = df.copy()
    d["K"] = [f"@{k}" for k in d["k"]]
    d["value_fmt"] = [fmt(v) for v in d["hit_rate"]]
    d["detail"] = [f"{h} of {n} queries" for h, n in zip(d["hits"], d["n"])]
    return _fill(_hit_rate_template(height), hits=d)


@functools.lru_cache(maxsize=4)
def _histogram_template(height: int) -> dict:
    return alt.Chart(alt.Data(name="hist")).mark_bar().encode(
        x=alt.X("rank_label:N", sort=alt.SortField("rank"), title="First relevant rank",
                axis=alt.Axis(labelAngle=0)),
        y=alt.Y("count:Q", title="Queries"),
        color=alt.Color("outcome:N", scale=alt.Scale(domain=["hit at K", "beyond K", "not found"],
                                                     range=[chart_style.metric_color("hit_rate"), "#F2A541", MUTED]),
                        legend=alt.Legend(orient="bottom", title=None, columns=2)),  # fits a narrow column
        tooltip=[alt.Tooltip("rank_label:N", title="First relevant rank"), alt.Tooltip("count:Q", title="Queries")],
    ).properties(height=height).to_dict()


def rank_histogram(hist: pd.DataFrame, k: int, height: int = 240) -> dict:
    """First-relevant-rank counts; bars within K are hits at K."""
    d = hist.copy()
    d["outcome"] = ["not found" if lbl == "not found" else ("hit at K" if r <= k else "beyond K")
                    for lbl, r in zip(d["rank_label"], d["rank"])]
    return _fill(_histogram_template(height), hist=d)


@functools.lru_cache(maxsize=4)
def _abstention_template(height: int) -> dict:
    lines = alt.Chart(alt.Data(name="sweep")).mark_line(strokeWidth=2).encode(
        x=alt.X("threshold:Q", title="Threshold on the top retrieval score"),
        y=alt.Y("rate:Q", title="Share of queries", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("series:N", scale=alt.Scale(domain=list(_ABSTAIN_NAMES.values()), range=["#54A24B", "#E45756"]),
                        legend=alt.Legend(orient="bottom", title=None, labelLimit=0, columns=1)),
        tooltip=[alt.Tooltip("series:N", title=""), alt.Tooltip("threshold:Q", format=".3f"),
                 alt.Tooltip("rate_fmt:N", title="Share")])
    rule = alt.Chart(alt.Data(name="threshold")).mark_rule(color="#333", strokeDash=[4, 3]).encode(x="t:Q")
    return (lines + rule).properties(height=height).to_dict()


def abstention_chart(records: list[dict], threshold: float, height: int = 240) -> dict:
    return _fill(_abstention_template(height), sweep=records, threshold=[{"t": threshold}])


def relevance_chip(grade: int, relevant: bool) -> str:
    """A short text chip for a ranked item (used in dataframes: plain text, no HTML)."""
    if relevant:
        return f"✅ relevant · grade {grade}"
    if grade > 0:
        return f"◐ grade {grade} (below level)"
    return "— not relevant"


def chart(spec: dict) -> None:
    """Render a chart spec made by this module (Altair-authored Vega-Lite with its data)."""
    st.vega_lite_chart(spec=spec, width="stretch")


def page_header(title: str, lab_ctx, subtitle: str | None = None) -> None:
    """Title and a one-line description of the active configuration."""
    st.title(title)
    s = lab_ctx.settings
    r = lab_ctx.result
    parts = [esc(lab_ctx.corpus.label or s.corpus),
             f"{len(lab_ctx.chunks.chunks)} chunks ({s.chunk_size}/{s.chunk_overlap})",
             f"system: {esc(s.system_name)}", f"K = {lab_ctx.k}",
             f"{r.n_in_scope} in-scope · {r.n_out_of_scope_labelled} out-of-scope queries"]
    if r.n_awaiting_labels:
        parts.append(f"{r.n_awaiting_labels} awaiting evidence review (a reference answer, no label yet: "
                     "Golden set page, Review evidence)")
    if r.n_absent:
        parts.append(answered_absent(r))
    st.caption(" · ".join(parts) + (f"  \n{subtitle}" if subtitle else ""))
    verdict_banner(r, s.system_name)
    conventions_caption()


def verdict_banner(result, name: str = "") -> bool:
    """THE banner of a system whose numbers are no verdict (:attr:`EvaluationResult.no_verdict
    <rag_metrics.evaluation.EvaluationResult.no_verdict>`: nothing matched, no retrieval, no in-scope
    question answered, or most contexts found nowhere): an error with what happened and the fix.
    Otherwise a warning with the share of contexts that could not be located in the corpus, when
    some could not; nothing when every context was placed.  Shown at the top of every view of that
    system (Bring your system, Dashboard, Failures, Compare, Presenter); returns False when its
    numbers are no verdict, and the view then shows none of them as a result."""
    who = f"**{esc(name)}**: " if name else ""
    nv = getattr(result, "no_verdict", None)
    if nv is not None:
        st.error(f"{who}{esc(nv.line())}. No number is shown as a result.", icon=":material/block:")
        return False
    located = getattr(result, "located", None)
    line = located.line() if located is not None else ""
    if line:
        st.warning(f"{who}{esc(line)}.", icon=":material/help:")
    return True


located_banner = verdict_banner  # the name the evidence docs used


def conventions_caption(lang: str = "en") -> None:
    """The small line naming the conventions behind every number on the page (the sidebar's preset), in
    ``lang`` (the Danish lesson passes ``"da"``)."""
    st.caption(f":material/rule: {esc(state.conventions_line(lang))}",
               help="Skift i sidepanelet: Konventioner." if lang == "da" else "Switch in the sidebar: Conventions.")


def answered_absent(result) -> str:
    """``"40 answered · 36 not in the log (counted as 0)"``: the coverage beside headline numbers."""
    how = "left out of the means" if result.options.missing_queries == "skip" else "counted as 0, trec_eval -c"
    return f"{result.n_answered} answered · {result.n_absent} not in the log ({how})"


@contextlib.contextmanager
def costly(what: str, cancel_key: str | None = None) -> Iterator[Any]:
    """Costly work (embedding, a judge run, a sweep) in one of the process's worker slots
    (:func:`rag_metrics.jobs.slot`, ``lab.budgets.workers``), yielding its
    :class:`~rag_metrics.jobs.Ticket`.  While every slot is taken the page shows its place in the
    queue ("waiting: 2 ahead"); ``cancel_key`` adds a Cancel button (pages with their own Stop button
    pass none).  A click on Cancel or Stop reruns the page: Streamlit stops this run at the work's
    next progress update (between batches) and the ticket is cancelled, so the slot is freed and the
    next job in the queue starts."""
    import time


    if cancel_key is not None:
        cancel_button(cancel_key, what.lower())
    note = st.empty()
    ticket = Ticket(what)
    workers = server.config().budgets.workers
    queued: list[float] = []  # [time it started waiting, how many were ahead then]

    def waiting() -> None:
        if not queued:
            queued.extend((time.monotonic(), ticket.ahead))
        note.caption(f":material/hourglass_top: {esc(what)}: waiting: {ticket.ahead} ahead in the queue; "
                     f"the class's other sessions use the {workers} worker(s) of this process…")
    try:
        with slot(workers, waiting, ticket=ticket) as held:
            if queued:
                note.caption(f":material/hourglass_bottom: {esc(what)}: waited {time.monotonic() - queued[0]:.0f} s "
                             f"for a worker ({int(queued[1])} ahead at first).")
            else:
                note.empty()
            yield held
    except Cancelled:
        note.info(f"{esc(what)} cancelled: nothing more is done; what was finished is kept (embeddings in the "
                  "embedding cache).", icon=":material/cancel:")
        st.stop()
    except BaseException:
        ticket.cancel()  # stopped (Cancel, Stop, another click) or failed: the slot is already free
        raise


def _waiting_note(ticket: Any) -> None:
    """:data:`rag_metrics.jobs.on_wait`: a job the library queued itself (a large embedding) says on the
    page that waits where it stands; a Stop of the run stops the wait here."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is None:
        return  # not a page's run (a worker thread): nothing to show
    note = getattr(ticket, "note", None)
    if ticket.running:
        if note is not None:
            note.empty()
        return
    if note is None:
        note = ticket.note = st.empty()
    note.caption(f":material/hourglass_top: Embedding: waiting: {ticket.ahead} ahead in the queue; the class's "
                 "other sessions use this process's workers…")


def _install_waiting_note() -> None:
    jobs.on_wait = _waiting_note


_install_waiting_note()


def server_path(path: object) -> str:
    """A server file path as this session may see it: in full for the operator (single user); in
    class mode only its file name (a student never learns the server's folders), escaped."""
    from pathlib import Path


    shown = str(path) if allowed(state.caller(), "see-server-paths") else f"…/{Path(str(path)).name}"
    return esc(shown)


def highlight_md(segments) -> str:
    """Markdown of a :func:`rag_metrics.report.story.snippet`: the question's words on a yellow background."""
    return "".join(f":orange-background[{esc(t)}]" if hi else esc(t) for t, hi in segments)


def show_notice() -> None:
    """Show the one-shot message a callback or the previous run left (:func:`ui.state.notice`)."""
    note = state.notice()
    if not note:
        return
    kind, message = note
    if kind == "toast":
        st.toast(message, icon=":material/save:")
    else:
        getattr(st, kind, st.info)(message)


def cancel_button(key: str, what: str) -> None:
    """A Cancel button shown beside a long step: clicking it reruns the page, which stops the step at
    its next progress update (Streamlit stops a running script when a widget changes)."""
    st.button(f"Cancel {what}", key=key, icon=":material/cancel:")


def cancelled_notice(key: str, what: str) -> None:
    """On the run after a :func:`cancel_button` click, say what was kept."""
    if session.value(key):
        st.info(f"{what} cancelled. The chunk texts embedded so far are kept in the embedding cache "
                "(they are stored every few hundred texts): starting again only embeds the rest.",
                icon=":material/cancel:")


def progress_callback(bar, what: str):
    """A ``progress(done, total)`` callback for ``bar`` (an ``st.progress``): ``what: n / N``; the
    count shows from ``(0, N)``, before the first batch; ``(0, 0)`` means everything was cached."""
    def progress(done: int, total: int) -> None:
        if not total:
            bar.progress(1.0, text=f"{what}: all found in the embedding cache")
        else:
            bar.progress(min(done / total, 1.0), text=f"{what}: {done:,} / {total:,}"
                         + (" (starting; the model loads first if needed)" if done == 0 else ""))
    return progress
