"""Compare page support: evaluating a configuration (A or B) through the caches of
:mod:`ui.cache` (``config_memo``, ``config_evaluation``, ``comparison``, ``ab_category_table``),
its widgets, and its charts."""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from rag_metrics.compare import ab
from rag_metrics.compare.paired import INTERVAL_HEADER, MIN_EFFECT
from rag_metrics.errors import InputError
from rag_metrics.evaluation import EvaluationResult
from rag_metrics.retrieval.encoders import DEFAULT_MODEL
from ui import cache, cache_insights, session, sidebar, state, views
from ui.keys import CMP_CANCEL as CANCEL_KEY
from ui.keys import CMP_SAVED as SAVED
from ui.keys import compare_field as _wkey

#: ``step(text, done=0, total=0)``: what :func:`evaluate_config` is doing, and how far.
Step = Callable[..., None]

FIELDS = ("system", "retriever", "size", "overlap", "model", "depth")

OUTCOME_COLORS = {"B better": "#54A24B", "A better": "#E45756", "tie": "#9AA5B1"}


# ---- evaluating one configuration ------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Evaluated:
    config: ab.Config
    result: EvaluationResult
    key: state.EvalKey
    chunks: cache.ChunkSet
    label_report: Any  # LabelReport when labels were carried, else None


def evaluate_config(ctx: state.Lab, cfg: ab.Config, level: str, step: Step | None = None) -> Evaluated:
    """Evaluate ``cfg`` on the sidebar corpus's golden set at ``level`` (cached).

    ``step(text, done, total)`` is told what is being done: chunking, embedding the chunks not
    embedded yet (``done`` / ``total`` texts, from the encoder's progress), indexing and retrieving.
    Nothing is reported when the configuration is already cached.
    """
    entry = ctx.corpus
    say = step or (lambda text, done=0, total=0: None)
    if cfg.system:  # a stored system ranks the sidebar chunking's ids: judged against the golden set as it is
        from ui.stored_systems import evaluate_named

        say(f"ranking {len(ctx.golden)} questions with {cfg.system}")
        options = ab.options_for(ctx.settings.options, level)  # type: ignore[arg-type]
        result, identity = evaluate_named(cfg.system, ctx.settings.corpus, ctx.chunks, ctx.golden, options, cfg.depth)
        key = state.EvalKey(entry.fingerprint, cfg.chunk_size, cfg.chunk_overlap, identity,
                            ctx.golden_session.fingerprint, options, depth=cfg.depth)
        return Evaluated(cfg, result, key, ctx.chunks, None)
    say("chunking the corpus")
    chunks = cache.chunk_set(entry.corpus, entry.fingerprint, cfg.chunk_size, cfg.chunk_overlap)
    cache.touch(chunks)
    if cfg.retriever != "bm25" and cfg.uses_default_model and not cache.embedded(chunks):
        cache.prewarm_embeddings(chunks, lambda done, total: say(
            f"embedding {len(chunks.chunks):,} chunks (loading the model first)" if total and not done else
            f"embedding chunks: {done:,} / {total:,}" if total else "embeddings found in the cache",
            done, total))
    say(f"indexing {len(chunks.chunks):,} chunks and retrieving {len(ctx.golden)} questions")
    model = "" if cfg.uses_default_model else cfg.model_name
    memo = cache.config_memo(chunks, chunks.fingerprint, cfg.retriever, model)
    if entry.level == "document":
        golden, report = ctx.golden, None
        c2d: dict[str, str] | None = dict(chunks.doc)
    else:
        golden, report, c2d = cache_insights.config_golden(ctx.golden, ctx.chunks, chunks,
                                                           ctx.golden_session.fingerprint, ctx.chunks.fingerprint,
                                                           chunks.fingerprint, level)
    options = ab.options_for(ctx.settings.options, level)  # type: ignore[arg-type]
    key = state.EvalKey(entry.fingerprint, cfg.chunk_size, cfg.chunk_overlap, cfg.retriever,
                        ctx.golden_session.fingerprint, options, model=model, depth=cfg.depth,
                        labels_on=ctx.chunks.fingerprint)
    result = cache_insights.config_evaluation(memo, golden, c2d, key)
    return Evaluated(cfg, result, key, chunks, report)


class CancelButton:
    """A Cancel button in ``slot`` (an ``st.empty()``), drawn once, when work first starts."""

    def __init__(self, slot: Any) -> None:
        self.slot, self.shown = slot, False

    def show(self) -> None:
        if not self.shown:
            self.shown = True
            self.slot.button("Cancel this computation", key=CANCEL_KEY, icon=":material/cancel:")

    def clear(self) -> None:
        self.slot.empty()


def progress_step(slot: Any, prefix: str, cancel: CancelButton | None = None) -> Step:
    """A :data:`Step` that shows ``prefix: text`` and a bar at ``done / total`` in ``slot`` (an
    ``st.empty()``); with ``cancel``, its button appears once work starts (clicking it reruns the page,
    which stops the step at its next update; see :func:`cancelled`)."""
    def step(text: str, done: int = 0, total: int = 0) -> None:
        if cancel is not None:
            cancel.show()
        slot.progress(min(done / total, 1.0) if total else 0.0, text=f"{prefix}: {text}")
    return step


def cancelled() -> bool:
    """True on the run right after the Cancel button of :func:`progress_step` was clicked."""
    return bool(session.value(CANCEL_KEY))


# ---- widgets -------------------------------------------------------------------------------------
def defaults(ctx: state.Lab) -> dict[str, ab.Config]:
    """A = the sidebar's configuration; B = the same with another retriever (BM25, or dense after BM25).
    Both start with the corpus's own embedding model (the Danish sample: multilingual)."""
    s = ctx.settings
    model = ctx.corpus.model
    a = ab.Config(s.retriever, s.chunk_size, s.chunk_overlap, model, ab.MAX_DEPTH, s.system)
    b = ab.Config("bm25" if s.retriever != "bm25" or s.system else "dense", s.chunk_size, s.chunk_overlap, model,
                  ab.MAX_DEPTH)
    return {"A": a, "B": b}


def _restore(side: str, default: ab.Config) -> None:
    """Give the widgets their last values back (widget state is dropped while the page is hidden)."""
    ss = session.store()
    saved = ss.setdefault(SAVED, {})
    values = {"system": default.system, "retriever": default.retriever, "size": default.chunk_size,
              "overlap": default.chunk_overlap,
              "model": default.model, "depth": default.depth}
    for f in FIELDS:
        k = _wkey(side, f)
        if k not in ss:
            ss[k] = saved.get(k, values[f])


def config_widgets(side: str, default: ab.Config) -> ab.Config | None:
    """Retriever, chunk size and overlap, model, depth; returns the Config (None + an error box when
    the values are invalid)."""
    _restore(side, default)
    ss = session.store()
    stored = [n for n in state.system_names() if n not in sidebar.RETRIEVER_LABELS]
    mine = state.keep_choice(_wkey(side, "system"), ["", *stored], "")
    if stored:
        st.selectbox("System", ["", *stored], key=_wkey(side, "system"),
                     format_func=lambda n: f"Yours: {n}" if n else "A bundled retriever (choose below)",
                     help="Your systems (uploaded runs, RAG logs, live backends) from the Systems page. They rank "
                          "the sidebar's chunking, so chunk size and overlap follow the sidebar.")
    if mine:  # a stored system ranks the chunk ids of the sidebar's chunking
        size, overlap = state.chunking()
        ss[_wkey(side, "size")], ss[_wkey(side, "overlap")] = size, overlap
    shown = sidebar.retriever_labels(default.model)  # the corpus's own model
    st.radio("Retriever", list(shown), key=_wkey(side, "retriever"),
             format_func=shown.get, horizontal=True, disabled=bool(mine))
    c1, c2, c3 = st.columns(3)
    c1.number_input("Chunk size", min_value=50, max_value=5000, step=50, key=_wkey(side, "size"), disabled=bool(mine),
                    help="Characters per chunk. Another chunking re-embeds the corpus once (cached).")
    c2.number_input("Overlap", min_value=0, max_value=4999, step=25, key=_wkey(side, "overlap"), disabled=bool(mine))
    c3.number_input("Depth", min_value=1, max_value=ab.MAX_DEPTH, step=1, key=_wkey(side, "depth"),
                    help="How many results the retriever returns per question (a run cut to this depth).")
    st.text_input("Embedding model (dense and hybrid)", key=_wkey(side, "model"), max_chars=200,
                  placeholder=f"{DEFAULT_MODEL} (bundled)",
                  disabled=ss[_wkey(side, "retriever")] == "bm25" or bool(mine),
                  help="Only models already on this machine work offline; leave empty for the bundled default.")
    saved = ss.setdefault(SAVED, {})
    for f in FIELDS:
        saved[_wkey(side, f)] = ss[_wkey(side, f)]
    try:
        return ab.Config(ss[_wkey(side, "retriever")], int(ss[_wkey(side, "size")]), int(ss[_wkey(side, "overlap")]),
                         str(ss[_wkey(side, "model")] or "").strip(), int(ss[_wkey(side, "depth")]), mine)
    except InputError as err:
        st.error(f"Configuration {side}: {err}", icon=":material/error:")
        return None



def report_names(a: ab.Config, b: ab.Config) -> tuple[str, str]:
    """Names of A and B for the stakeholder report's verdicts: the settings in which they differ
    (``("dense", "bm25")``, ``("dense · chunks 500/100", "dense · chunks 300/50")``); ``("A", "B")``
    when the two configurations are the same."""
    def fields(c: ab.Config) -> dict[str, str]:
        return {"retriever": c.system or c.retriever, "model": c.model_name,
                "chunks": f"chunks {c.chunk_size}/{c.chunk_overlap}",
                "depth": f"depth {c.depth}"}

    fa, fb = fields(a), fields(b)
    # the model only when both have one (BM25 has none: the retriever already tells them apart)
    differ = [f for f in fa if fa[f] != fb[f] and (f != "model" or (fa[f] and fb[f]))]
    if not differ:
        return ("A", "B")
    return (" · ".join(fa[f] for f in differ), " · ".join(fb[f] for f in differ))

# ---- the verdict table -------------------------------------------------------------------------------
def verdict_rows(table: pd.DataFrame, names: list[str] | None = None) -> dict[str, list[str]]:
    """The Compare page's one table, as shown: metric, A, B, difference, interval (one header,
    :data:`rag_metrics.compare.paired.INTERVAL_HEADER`; its level in :func:`rag_metrics.compare.paired.interval_note`),
    adjusted p, verdict, minimum detectable effect, wins / losses / ties (strings from a
    :func:`rag_metrics.compare.paired.compare` table, one row per metric)."""
    return {
        "Metric": names if names is not None else [f"{views.label(m)}@{kk}"
                                                   for m, kk in zip(table["metric"], table["k"])],
        "A": [views.fmt(v) for v in table["mean_a"]],
        "B": [views.fmt(v) for v in table["mean_b"]],
        "B − A": [f"{v:+.3f}" for v in table["delta"]],
        INTERVAL_HEADER: [views.ci_text(lo, hi, n, signed=True)
                          for lo, hi, n in zip(table["ci_low"], table["ci_high"], table["n"])],
        "p adjusted": [f"{p:.4f}" for p in table["p_ttest_adj"]],
        "Verdict": list(table["verdict"]),
        "Detectable difference (MDE)": [views.fmt(v) for v in table["mde"]],
        "B wins / loses / ties": [f"{w} / {lo} / {t}"
                                  for w, lo, t in zip(table["wins"], table["losses"], table["ties"])],
    }


def verdict_columns() -> dict[str, Any]:
    """``column_config`` of a :func:`verdict_rows` table: short headers (the full names in each
    header's help), so the nine columns fit the page at 1024 px without a clipped header; the data
    keeps :func:`verdict_rows`' column names."""
    text = st.column_config.TextColumn
    return {
        "Metric": text("Metric", pinned=True),
        "B − A": text("B − A", help="The mean of the per-question differences B − A (paired)."),
        INTERVAL_HEADER: text("Interval", help=f"{INTERVAL_HEADER}: the paired t-interval of B − A at the "
                                               "level stated under the table."),
        "p adjusted": text("p adj.", help="Paired t-test p-value, Benjamini-Hochberg adjusted across the metrics."),
        "Verdict": text("Verdict"),
        "Detectable difference (MDE)": text(
            "MDE", help="Detectable difference (minimum detectable effect): the smallest B − A this set would "
                        f"show with 80 % power. Above {MIN_EFFECT:g}, a non-significant result is 'too small to "
                        "tell'."),
        "B wins / loses / ties": text("W / L / T", help="B wins / loses / ties: questions where B scores higher "
                                                        "than A, lower, or the same."),
    }


# ---- charts --------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _per_query_template(metric_label: str, height: int, labels: bool) -> dict:
    """The spec of :func:`per_query_chart` without its data (built and validated once per shape)."""
    return alt.Chart(alt.Data(name="deltas")).mark_bar().encode(
        x=alt.X("query_id:N", sort=alt.SortField("order"), title="query (sorted by B − A)",
                axis=alt.Axis(labels=labels, labelAngle=-60)),
        y=alt.Y("delta:Q", title=f"{metric_label}: B − A"),
        color=alt.Color("outcome:N", scale=alt.Scale(domain=list(OUTCOME_COLORS), range=list(OUTCOME_COLORS.values())),
                        legend=alt.Legend(orient="top", title=None)),
        tooltip=["query_id:N", "category:N", alt.Tooltip("a:Q", format=".3f", title="A"),
                 alt.Tooltip("b:Q", format=".3f", title="B"), alt.Tooltip("delta:Q", format="+.3f", title="B − A"),
                 "outcome:N"],
    ).properties(height=height).to_dict()


def per_query_chart(deltas: pd.DataFrame, metric_label: str, height: int = 280) -> dict:
    """One bar per query: B - A, sorted, coloured by outcome (a Vega-Lite spec with its data; the spec
    itself is built once per shape, so a rerun only fills in the rows)."""
    df = deltas.copy()
    df = df.sort_values(["delta", "query_id"], ascending=[False, True]).reset_index(drop=True)
    df["order"] = range(len(df))
    cols = [c for c in ("query_id", "category", "a", "b", "delta", "outcome", "order") if c in df.columns]
    return views.fill_chart(_per_query_template(metric_label, height, len(df) <= 40), deltas=df[cols])


@functools.lru_cache(maxsize=64)
def _category_template(metric_label: str, height: int) -> dict:
    y = alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=260))
    data = alt.Data(name="categories")
    bars = alt.Chart(data).mark_bar(height=16).encode(
        y=y, x=alt.X("delta:Q", title=f"{metric_label}: B − A (95% CI)"),
        color=alt.Color("sign:N", scale=alt.Scale(domain=list(OUTCOME_COLORS), range=list(OUTCOME_COLORS.values())),
                        legend=None),
        tooltip=["category:N", "n:Q", alt.Tooltip("mean_a:Q", format=".3f", title="A"),
                 alt.Tooltip("mean_b:Q", format=".3f", title="B"), alt.Tooltip("delta:Q", format="+.3f"),
                 alt.Tooltip("ci_low:Q", format="+.3f"), alt.Tooltip("ci_high:Q", format="+.3f")])
    err = alt.Chart(data).mark_rule(color="#333").encode(y=y, x="ci_low:Q", x2="ci_high:Q")
    zero = alt.Chart(alt.Data(name="zero")).mark_rule(color="#555", strokeDash=[3, 3]).encode(x="x:Q")
    return alt.layer(bars, err, zero).properties(height=height).to_dict()


def category_chart(cat: pd.DataFrame, metric_label: str, height: int = 240) -> dict:
    """Mean B - A per category with its 95 % CI; a zero line (a Vega-Lite spec with its data)."""
    df = cat.copy()
    df["label"] = [f"{c} (n = {n})" for c, n in zip(df["category"], df["n"])]
    df["sign"] = ["B better" if d > 0 else ("A better" if d < 0 else "tie") for d in df["delta"]]
    cols = [c for c in ("label", "sign", "category", "n", "mean_a", "mean_b", "delta", "ci_low", "ci_high")
            if c in df.columns]
    return views.fill_chart(_category_template(metric_label, max(height, 34 * len(df))), categories=df[cols],
                            zero=[{"x": 0}])
