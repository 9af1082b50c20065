"""Streamlit parts of the Tune page: the sweep form, the run with progress, the Pareto chart, and a
configuration's details (wins and losses against the current system, its TOML, Use this / Save as
baseline).  Logic lives in :mod:`rag_metrics.tuning`."""
from __future__ import annotations

import hashlib
import math
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.retrieval.cache import default_cache_dir
from rag_metrics.retrieval.defaults import RETRIEVER_KINDS
from rag_metrics.sample import sample_paths
from rag_metrics.server.policy import budget_message
from rag_metrics.tuning import (
    SweepResult,
    grid_from_choices,
    run_sweep,
)
from rag_metrics.tuning.grid import BUNDLED_MODEL, Grid, SweepConfig
from rag_metrics.tuning.run import new_result
from rag_metrics.tuning.select import COST_AXES, Row, baseline_run, best, best_of_n, held_out_check, rows, wins_losses
from rag_metrics.tuning.store import read_sweep_upload
from rag_metrics.types import GoldenSet
from ui import cache, server, session, state, views
from ui.keys import TUNE_CANCEL, TUNE_RESULT
from ui.keys import TUNE_CHART as KEY_CHART
from ui.keys import TUNE_COST as KEY_COST
from ui.keys import TUNE_PICK as KEY_PICK
from ui.keys import TUNE_RESULT as KEY_RESULT
from ui.keys import TUNE_UPLOAD as KEY_UPLOAD
from ui.keys import TUNE_UPLOAD_READ as KEY_UPLOAD_READ

__all__ = ["KEY_RESULT", "KEY_PICK", "evidence_for", "current_config", "form", "run", "upload", "results"]

CHUNK_SIZES = (200, 300, 400, 500, 650, 800, 1000, 1200)
METRICS = ("ndcg@10", "ndcg@5", "mrr@10", "hit_rate@5", "recall@10", "map@10")
#: The sidebar can use a configuration with these settings only (its bundled retrievers' defaults).
_SIDEBAR_DEFAULTS = {"k1": 1.5, "b": 0.75, "rrf_k": 60.0, "weight": 0.5, "depth": 10}


def evidence_for(ctx: Any) -> tuple[GoldenSet, str]:
    """The labels every configuration is scored on, and a line saying what they are.

    The sample's own evidence quotes when the golden set is the sample's unchanged; otherwise the
    current golden set's chunk labels, each labelled chunk's text taken as its evidence."""
    p = sample_paths(required=False, language=state.SAMPLE_LANGUAGES.get(ctx.settings.corpus, "en"))
    ev_file = p.root / "golden_evidence.jsonl"
    if state.is_sample(ctx.settings.corpus) and ev_file.is_file() and p.golden.is_file() \
            and _read(p.golden).fingerprint() == ctx.golden.fingerprint():
        return (_read(ev_file),
                "Labels: the sample's evidence quotes (golden_evidence.jsonl), located in each chunking.")
    if ctx.corpus.level != "chunk":
        raise InputError("this corpus is labelled by document, not by chunk; a sweep needs chunk labels or "
                         "evidence quotes. Label chunks in the Golden set editor first.")
    ev = cache.sweep_labels(ctx.golden, ctx.golden.fingerprint(), ctx.chunks.chunks, ctx.chunks.fingerprint,
                            ctx.corpus.corpus, ctx.corpus.fingerprint)
    return ev, (f"Labels: your golden set's chunk labels on {ctx.settings.chunk_size}/{ctx.settings.chunk_overlap}; "
                "each labelled chunk's text is its evidence, located in every other chunking.")


def current_config(ctx: Any) -> SweepConfig | None:
    """The app's current system as a sweep configuration (None for a stored system: it cannot be re-run)."""
    s = ctx.settings
    if s.system or s.retriever not in RETRIEVER_KINDS:
        return None
    return SweepConfig(chunk_size=s.chunk_size, chunk_overlap=s.chunk_overlap, kind=s.retriever,
                       model="" if s.retriever == "bm25" else ctx.corpus.model or BUNDLED_MODEL, depth=10,
                       fusion="rrf" if s.retriever == "hybrid" else "")


def form(ctx: Any) -> Grid | None:
    """The sweep's choices; returns the grid when they are valid."""
    c1, c2 = st.columns(2)
    sizes = c1.multiselect("Chunk sizes (characters)", CHUNK_SIZES, default=[300, 500, 800], key="tune_sizes")
    overlap = c2.number_input("Chunk overlap", 0, 400, 100, step=25, key="tune_overlap")
    kinds = c1.multiselect("Retrievers", list(RETRIEVER_KINDS), default=list(RETRIEVER_KINDS), key="tune_kinds",
                           format_func={"dense": "dense", "bm25": "BM25", "hybrid": "hybrid (RRF)"}.get)
    hybrid = "hybrid" in kinds
    weights = c2.multiselect("Hybrid fusion weights (dense share, min-max)", [0.3, 0.5, 0.7], default=[0.5],
                             key="tune_weights", disabled=not hybrid,
                             help="Each weight adds a weighted-fusion hybrid per chunking." if hybrid else
                             "Add the hybrid retriever to sweep weighted fusion too.")
    if not hybrid:  # no hybrid in the sweep: the weights left in the field add none
        weights = []
    metric = c1.selectbox("Choose by", METRICS, key="tune_metric")
    held = c2.slider("Held-out share", 0.0, 0.5, 0.3, 0.05, key="tune_held",
                     help="Stratified by category and seeded: the held-out questions are never used to choose.")
    try:
        return grid_from_choices(chunk_sizes=sizes, chunk_overlap=int(overlap), kinds=kinds,
                                 fusion_weights=weights, metric=metric, held_out=float(held),
                                 models=(ctx.corpus.model or BUNDLED_MODEL,))  # the corpus's model (Danish: e5)
    except InputError as e:
        views.input_error(e, "The sweep cannot run")
        return None


def _read(path: Any) -> GoldenSet:
    return cache.golden_file(str(path), path.stat().st_mtime_ns)


def plan_line(grid: Grid, ctx: Any, evidence: GoldenSet) -> str:
    est = cache.sweep_estimate(grid, ctx.corpus.corpus, ctx.corpus.fingerprint, evidence, evidence.fingerprint())
    return "Planned: " + est.describe()


def run(grid: Grid, ctx: Any, evidence: GoldenSet) -> None:
    """Run the sweep here, with a progress bar; finished configurations are kept as they come, so a click
    elsewhere (which stops the run) keeps them."""
    over = budget_message(state.caller(), "sweep_configs", server.config().budgets, len(grid.configs),
                          "configurations")
    if over:
        st.error(views.esc(over), icon=":material/block:")
        return
    res = new_result(grid, ctx.corpus.corpus, evidence, baseline=current_config(ctx))
    session.set_value(KEY_RESULT, res)
    session.pop(KEY_PICK, None)
    slot = st.empty()
    with slot.container():
        views.cancel_button(TUNE_CANCEL, "the sweep")
        bar = st.progress(0.0, text="Starting the sweep")

    def progress(msg: str, frac: float) -> None:
        bar.progress(min(max(frac, 0.0), 1.0), text=views.esc(msg))

    with views.costly("The sweep"):  # one of the process's worker slots (lab.budgets.workers)
        run_sweep(grid, ctx.corpus.corpus, evidence, cache=cache.embedding_cache(str(default_cache_dir())),
                  baseline=current_config(ctx), progress=progress, result=res)
    slot.empty()
    cache.sweep_estimate.clear()  # what is cached changed: the next plan line counts again


def upload() -> None:
    """Load a ``sweep.json`` written by ``rag-metrics sweep --out``."""
    f = st.file_uploader("Load a sweep.json (from `rag-metrics sweep --out`)", type=["json"], key=KEY_UPLOAD)
    if f is None:
        return
    data = f.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    seen = session.value(KEY_UPLOAD_READ)
    if isinstance(seen, tuple) and seen[0] == digest:  # read once per content, not on every rerun
        res = seen[1]
    else:
        try:
            res = _read_sweep(data, f.name)
        except InputError as e:
            views.input_error(e, "Not loaded")
            return
        session.set_value(KEY_UPLOAD_READ, (digest, res))
    if session.value(KEY_RESULT) is not res:
        session.set_value(KEY_RESULT, res)


def _read_sweep(data: bytes, name: str) -> SweepResult:
    """The one bounded reader (gzip taken off, within this run's budget); in class mode in a worker with a
    memory limit (:func:`ui.workers.read`)."""
    from ui import workers

    return workers.read(read_sweep_upload, data, name, what=name)


def _table(table: list[Row], metric: str, cost: str) -> pd.DataFrame:
    return pd.DataFrame([{
        "Configuration": r.label + (" (current system)" if r.is_current else ""),
        metric: r.tuning,
        "95% CI": "too few" if math.isnan(r.ci_low) else f"{r.ci_low:.3f}-{r.ci_high:.3f}",
        "Held-out": r.held_out,
        COST_AXES[cost]: getattr(r, cost),
        "Verdict": {"best": "best", "tied": "tied", "worse": "worse", "": ""}[r.status]
        + (" · frontier" if r.on_frontier else ""),
    } for r in table])


def current_result(ctx: Any, res: SweepResult) -> Any:
    """The sweep's result for the app's current system (the sidebar's chunking and retriever, now: after
    "Use this" it is the configuration used), None when it was not scored in this sweep or is a stored
    system.  A sweep.json from `rag-metrics sweep` names no current system: it is found by its configuration."""
    cur = current_config(ctx)
    if cur is None:
        return None
    found = res.result(cur)
    if found is not None:
        return found
    return next((r for r in res.results if r.config.label == cur.label and r.config.depth == cur.depth
                 and (r.config.model or "") in ("", cur.model)), None)


def _marked(table: list[Row], current: Any) -> list[Row]:
    """The table with the current system marked as it is now (not as it was when the sweep ran)."""
    import dataclasses

    return [dataclasses.replace(row, is_current=current is not None and row.config == current.config)
            for row in table]


def chart(table: list[Row], metric: str, cost: str) -> dict:
    """Quality (tuning score with CI whiskers) against cost; the frontier drawn, dominated points grey."""
    recs = [{"label": r.label, "quality": r.tuning, "lo": r.ci_low if not math.isnan(r.ci_low) else r.tuning,
             "hi": r.ci_high if not math.isnan(r.ci_high) else r.tuning, "cost": getattr(r, cost),
             "group": "current system" if r.is_current else ("frontier" if r.on_frontier else "dominated"),
             "status": r.status or "-"} for r in table]
    df = pd.DataFrame(recs)
    # log scale: BM25 answers in a fraction of a millisecond, a dense model in tens of milliseconds
    x = alt.X("cost:Q", title=COST_AXES[cost] + " (log scale)", scale=alt.Scale(type="log", nice=True))
    groups = {"frontier": "#1f77b4", "dominated": "#b0b0b0", "current system": "#d62728"}
    drawn = [g for g in groups if g in set(df["group"])]  # the legend names only what is drawn
    colour = alt.Color("group:N", title=None, scale=alt.Scale(domain=drawn, range=[groups[g] for g in drawn]),
                       legend=alt.Legend(orient="bottom"))
    pick = alt.selection_point(name="pick", fields=["label"], on="click")
    base = alt.Chart(df)
    whiskers = base.mark_rule().encode(x=x, y=alt.Y("lo:Q", title=f"{metric} (tuning, 95% CI)"), y2="hi:Q",
                                       color=colour)
    front = base.transform_filter(alt.datum.group == "frontier").mark_line(strokeDash=[4, 3]).encode(
        x=x, y="quality:Q", order="cost:Q", color=colour)
    points = base.mark_point(filled=True, size=90).encode(
        x=x, y="quality:Q", color=colour, shape=alt.Shape("status:N", title="verdict",
                                                          legend=alt.Legend(orient="bottom")),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.45)),
        tooltip=["label:N", alt.Tooltip("quality:Q", format=".3f"), alt.Tooltip("lo:Q", format=".3f"),
                 alt.Tooltip("hi:Q", format=".3f"), alt.Tooltip("cost:Q", format=".2f"), "status:N"],
    ).add_params(pick)
    return (whiskers + front + points).properties(height=360)


def results(ctx: Any) -> None:
    """The table, the chart, the held-out check and the picked configuration's details."""
    res: SweepResult | None = session.value(KEY_RESULT)
    if res is None or not res.results:
        return
    metric = res.grid.metric
    if res.cancelled:
        st.warning(f"The sweep stopped early: {len(res.results)} of {len(res.grid.configs)} configurations finished. "
                   "The figures below are theirs only.", icon=":material/pending:")
    if res.corpus_fingerprint and res.corpus_fingerprint != ctx.corpus.fingerprint:
        st.warning("This sweep was run on another corpus than the one in the sidebar: its wins and losses and "
                   "Use this refer to that corpus.", icon=":material/warning:")
    cost = st.radio("Cost axis", list(COST_AXES), format_func=COST_AXES.get, horizontal=True, key=KEY_COST)
    current = current_result(ctx, res)
    table = _marked(rows(res, cost), current)
    event = st.altair_chart(chart(table, metric, cost), on_select="rerun", key=KEY_CHART, width="stretch")
    picked = _picked(event)
    if picked:
        session.set_value(KEY_PICK, picked)
    fmt = "%.1f" if cost != "index_mb" else "%.3f"
    st.dataframe(_table(table, metric, cost), hide_index=True, width="stretch", height=38 + 35 * len(table),
                 column_config={metric: st.column_config.NumberColumn(format="%.3f"),
                                "Held-out": st.column_config.NumberColumn(format="%.3f"),
                                COST_AXES[cost]: st.column_config.NumberColumn(format=fmt)})
    chosen = best(res)
    if chosen is None:
        return
    ho = held_out_check(res, chosen)
    ci = "" if math.isnan(ho.ci_low) else f" (95% CI {ho.ci_low:.3f}-{ho.ci_high:.3f})"
    st.success(f"**Chosen: {views.esc(chosen.config.label)}.** {metric} {ho.tuning:.3f} on {ho.n_tuning} tuning "
               f"questions; **{ho.held_out:.3f} on {ho.n_held_out} held-out questions**{ci}, which no choice saw.",
               icon=":material/check_circle:")
    bon = best_of_n(res, chosen)
    if bon is not None:
        st.caption(bon.note())
    st.caption(f"Ties: a paired t-test on the same tuning questions against the chosen configuration, "
               f"Benjamini-Hochberg across the comparisons; tied means adjusted p >= 0.05. Embedded "
               f"{res.embedded} text(s) in this sweep"
               + ("" if math.isnan(res.cache_hit_ratio) else f" (cache hit ratio {res.cache_hit_ratio:.0%})") + ".")
    labels = [r.config.label for r in res.results]
    default = session.value(KEY_PICK) or chosen.config.label
    if default not in labels:
        default = chosen.config.label
    session.set_value(KEY_PICK, default)
    label = st.selectbox("Configuration", labels, key=KEY_PICK, help="Or click a point on the chart.")
    details(ctx, res, next(r for r in res.results if r.config.label == label), current)


def _picked(event: Any) -> str | None:
    try:
        sel = event.selection["pick"]  # type: ignore[index]
        return str(sel[0]["label"]) if sel else None
    except (AttributeError, KeyError, IndexError, TypeError):
        return None


def details(ctx: Any, res: SweepResult, r: Any, base: Any = None) -> None:
    """One configuration: wins and losses against the current system (``base``: its result in this sweep,
    :func:`current_result`), its TOML, Use this, Save as baseline."""
    metric = res.grid.metric
    c1, c2 = st.columns([3, 2])
    with c1:
        cur = current_config(ctx)
        if base is None and cur is None:
            st.caption("The current system is a stored system: it cannot be re-run in a sweep, so there is no "
                       "per-question comparison.")
        elif base is None and cur is not None:
            st.caption(f"The current system ({views.esc(cur.label)}) was not scored in this sweep: no per-question "
                       "comparison.")
        elif base.config == r.config:
            st.caption("This is the current system.")
        else:
            wl = wins_losses(res, r, base)
            wins = sum(1 for _, s, *_ in wl if s == "win")
            losses = sum(1 for _, s, *_ in wl if s == "loss")
            st.markdown(f"**Against the current system** ({views.esc(base.config.label)}): better on {wins} "
                        f"question(s), worse on {losses}, the same on {len(wl) - wins - losses}.")
            golden = {q.id: q.question for q in ctx.golden}
            st.dataframe(pd.DataFrame([{"Question": golden.get(q, q), "": s, "This": a, "Current": b}
                                       for q, s, a, b in wl if s != "same"]),
                         hide_index=True, width="stretch", height=260)
    with c2:
        st.markdown("**Its configuration** (a grid of one, ready to copy)")
        st.code(r.config.toml(), language="toml")
        usable, why = sidebar_can_use(r.config, ctx.corpus.model or BUNDLED_MODEL)
        if st.button("Use this", key="tune_use", disabled=not usable, help=why or "Make it the app's system: the "
                     "sidebar's chunking and retriever."):
            state.set_chunking(r.config.chunk_size, r.config.chunk_overlap)
            state.set_widget(state.KEY_SYSTEM, r.config.kind)
            state.set_widget(state.KEY_RETRIEVER, r.config.kind)
            state.notice(f"Now using {views.esc(r.config.label)}: chunking {r.config.chunk_size}/"
                         f"{r.config.chunk_overlap}, {r.config.kind}. Labels are carried to the new chunking.")
            st.rerun()
        if st.button("Save as baseline", key="tune_baseline", help="Save it as a run on the History page, the "
                     "regression gate's baseline (`rag-metrics evaluate --baseline`)."):
            from ui import history as hist

            try:
                hist.history(ctx).add(baseline_run(res, r))
            except InputError as e:
                views.input_error(e, "Not saved")
            else:
                st.success(f"Saved as a run on the History page ({metric} and the other metrics per question).")


def sidebar_can_use(cfg: SweepConfig, model: str = BUNDLED_MODEL) -> tuple[bool, str]:
    """Whether the sidebar can run ``cfg`` (its bundled retrievers with their default settings, on the
    corpus's ``model``)."""
    if cfg.model and cfg.model != model:
        return False, f"The sidebar runs this corpus's model ({model}) only; copy the configuration to use " \
                      f"{cfg.model}."
    if cfg.kind == "hybrid" and cfg.fusion != "rrf":
        return False, "The sidebar's hybrid uses RRF; weighted fusion runs from the CLI (copy the configuration)."
    for k, v in _SIDEBAR_DEFAULTS.items():
        if (k in ("k1", "b") and cfg.kind == "dense") or (k in ("rrf_k", "weight") and cfg.kind != "hybrid"):
            continue
        if float(getattr(cfg, k)) != float(v):
            return False, f"The sidebar's retrievers use {k} = {v:g}; copy the configuration to use {k} = " \
                          f"{getattr(cfg, k):g}."
    return True, ""


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    ctx = state.current_or_stop()
    views.page_header("Tune the retriever", ctx)
    views.show_notice()
    st.caption("Which chunk size, which retriever, which fusion weight? Every configuration is scored on the same "
               "labels "
               "(evidence located in each chunking), its cost measured on this machine, and the choice re-checked on "
               "questions it never saw. The same as `rag-metrics sweep`.")
    try:
        evidence, labels_line = evidence_for(ctx)
    except InputError as e:
        views.input_error(e, "No sweep on this corpus yet")
        st.stop()
    st.caption(labels_line)

    views.section("The sweep")
    grid = form(ctx)
    if grid is not None:
        st.caption(views.esc(plan_line(grid, ctx, evidence)))
        views.cancelled_notice(TUNE_CANCEL, "The sweep")
        if st.button("Run the sweep", type="primary", icon=":material/tune:", key="tune_run"):
            run(grid, ctx, evidence)
    upload()

    views.section("Results",
                  "Quality against cost. Click a point (or pick below) to see its wins and losses against the "
                  "current system and its configuration.")
    if session.value(TUNE_RESULT) is None:
        st.info("No sweep yet: run one above, or load a sweep.json.", icon=":material/tune:")
    else:
        results(ctx)
