"""Session state and rendering of the Learn page (the metric sandbox).

The sandbox (:class:`rag_metrics.lesson.sandbox.Sandbox`) lives in ``st.session_state[SANDBOX]`` and is
the single source of truth; the grade widgets are keyed by a load *version* and the item id, so a
widget follows its item when the item moves, and a newly loaded list starts fresh widgets.

The convention widgets on the page mirror the sidebar's (``ui.state.KEY_*``): the page widget is
set from the shared key before it is drawn and writes back to it in its ``on_change`` callback
(callbacks run before the sidebar is drawn), so the dashboard and every other page follow.
"""
from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.lesson import sandbox as S
from ui import session, sidebar, state, views
from ui.keys import (
    LEARN_CONV_GAIN,
    LEARN_CONV_LEVEL,
    LEARN_CONV_OOS,
    LEARN_CONV_RECALL,
    LEARN_K_VALUE,
    LEARN_QUESTION,
    LEARN_SCENARIO,
    LEARN_SIDE,
    LEARN_SOURCE,
    learn_grade,
    learn_unretrieved,
)
from ui.keys import LEARN_K as K
from ui.keys import LEARN_SANDBOX as SANDBOX
from ui.keys import LEARN_SCENARIO as SCENARIO
from ui.keys import LEARN_SIDE as SIDE
from ui.keys import LEARN_VERSION as VERSION

N_ITEMS = 10

#: (shared sidebar key, page widget key)
MIRRORS = {
    state.KEY_GAIN: LEARN_CONV_GAIN,
    state.KEY_OOS: LEARN_CONV_OOS,
    state.KEY_RECALL: LEARN_CONV_RECALL,
    state.KEY_LEVEL: LEARN_CONV_LEVEL,
}

#: Which tools use which convention (docs/conventions.md).
CONVENTION_HELP = {
    state.KEY_GAIN: "**Linear** gain g is trec_eval's `ndcg_cut` and ranx `ndcg`; **exponential** 2^g − 1 "
                    "(Burges) is ranx `ndcg_burges` and many ML libraries. They agree when every grade is 0 or 1 "
                    "and differ with graded labels: exponential gain rewards a grade-3 chunk much more than a "
                    "grade-1 one.",
    state.KEY_OOS: "A question the corpus cannot answer is marked out of scope (category out_of_scope, no "
                   "judgment). trec_eval never sees it (it is not in the qrels), so we **exclude** it from the "
                   "means and measure it by abstention. The classic "
                   "lesson code divides by **all** questions, counting it as a miss, which lowers every mean.",
    state.KEY_RECALL: "trec_eval's `recall.k` divides by **|R|**, all relevant chunks. BEIR's `R_cap` divides by "
                      "**min(K, |R|)**, so a query with more relevant chunks than K can still reach recall 1.",
    state.KEY_LEVEL: "A chunk is relevant when its grade ≥ L (trec_eval `-l`, ranx `-lN`). Raising L to 2 counts "
                     "only the clearly relevant chunks in hit rate, precision, recall, MRR and MAP. NDCG uses the "
                     "grades themselves and ignores L, as trec_eval does.",
}


# ---- state -------------------------------------------------------------------------------------
def sandbox() -> S.Sandbox:
    ss = session.store()
    if SANDBOX not in ss:
        ss[SANDBOX] = S.SCENARIOS[0].before
        ss[VERSION] = 0
        ss[SCENARIO] = S.SCENARIOS[0].key
        ss[SIDE] = "before"
        ss[K] = ss[LEARN_K_VALUE] = S.SCENARIOS[0].k_before
    return ss[SANDBOX]


def load(sb: S.Sandbox, k: int | None = None, scenario: str | None = None, side: str = "before") -> None:
    """Replace the list (callbacks only: sets the K slider's state)."""
    ss = session.store()
    ss[SANDBOX] = sb
    ss[VERSION] = ss.get(VERSION, 0) + 1
    ss[SCENARIO] = scenario
    ss[SIDE] = side
    if k is not None:
        ss[K] = ss[LEARN_K_VALUE] = max(1, min(int(k), max(len(sb.items), 1)))


def load_scenario(key: str, side: str = "before") -> None:
    sc = S.scenario(key)
    sb, k = (sc.before, sc.k_before) if side == "before" else (sc.after, sc.k_after)
    load(sb, k, key, side)


def restore_k(n: int) -> None:
    """Give the K slider its last value back (widget state is dropped while the page is not shown)."""
    ss = session.store()
    if K not in ss:
        ss[K] = ss.get(LEARN_K_VALUE, 5)
    ss[K] = max(1, min(int(ss[K]), max(n, 1)))
    ss[LEARN_K_VALUE] = ss[K]


def remember_k() -> None:
    session.set_value(LEARN_K_VALUE, session.item(K))


def grade_key(item_id: str) -> str:
    return learn_grade(session.value(VERSION, 0), item_id)


def unretrieved_key() -> str:
    return learn_unretrieved(session.value(VERSION, 0))


def store(sb: S.Sandbox) -> None:
    """Keep the list as edited on the page (grades, unretrieved count)."""
    session.set_value(SANDBOX, sb)


def move(index: int, step: int) -> None:
    session.set_value(SANDBOX, session.item(SANDBOX).move(index, step))


def mirror_before_render() -> None:
    """Copy the shared (sidebar) convention values into the page's widgets before they are drawn."""
    ss = session.store()
    for shared, local in MIRRORS.items():
        ss[local] = ss.get(shared, state.DEFAULTS[shared])


def _write_back(local: str, shared: str) -> None:
    session.set_value(shared, session.item(local))


# ---- widgets -----------------------------------------------------------------------------------
def convention_widgets() -> None:
    """The four convention toggles, mirrored to the sidebar's keys, each with its explanation."""
    mirror_before_render()
    cols = st.columns(len(MIRRORS), gap="medium")
    for col, (shared, local) in zip(cols, MIRRORS.items()):
        with col:
            _convention_widget(shared, local)


def _convention_widget(shared: str, local: str) -> None:
    kw = dict(key=local, on_change=_write_back, args=(local, shared))
    if shared == state.KEY_GAIN:
        st.radio("NDCG gain", list(sidebar.GAIN_LABELS), format_func=sidebar.GAIN_LABELS.get, **kw)
    elif shared == state.KEY_OOS:
        st.radio("Out-of-scope queries", list(sidebar.OOS_LABELS), format_func=sidebar.OOS_LABELS.get, **kw)
    elif shared == state.KEY_RECALL:
        st.radio("Recall denominator", list(sidebar.RECALL_LABELS), format_func=sidebar.RECALL_LABELS.get, **kw)
    else:
        st.number_input("Relevance level L (grade ≥ L is relevant)", min_value=1, max_value=10, step=1, **kw)
    st.caption(CONVENTION_HELP[shared])


# ---- charts ------------------------------------------------------------------------------------
def curve_chart(curve: pd.DataFrame, k: int, highlight: tuple[str, ...] = ("precision", "recall")) -> alt.LayerChart:
    """Every metric against K for the sandbox list; precision and recall drawn bold."""
    from ui.views import k_x, label, metric_scale

    df = curve.copy()
    df["Metric"] = [label(m) for m in df["metric"]]
    df["bold"] = df["metric"].isin(highlight)
    metrics = list(dict.fromkeys(df["metric"]))
    scale = metric_scale(metrics)
    base = alt.Chart(df).encode(
        x=k_x(int(df["k"].max()) if len(df) else 2),
        y=alt.Y("value:Q", title="value", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("Metric:N", scale=scale, legend=alt.Legend(orient="bottom", title=None, columns=2)),
        tooltip=["Metric", "k", alt.Tooltip("value:Q", format=".3f")])
    lines = base.mark_line(point=True).encode(
        strokeWidth=alt.condition("datum.bold", alt.value(3.5), alt.value(1.2)),
        opacity=alt.condition("datum.bold", alt.value(1.0), alt.value(0.45)))
    rule = alt.Chart(pd.DataFrame({"k": [k]})).mark_rule(strokeDash=[4, 4], color="#555").encode(x="k:Q")
    return (lines + rule).properties(height=260)


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    ctx = state.current_or_stop()
    opts = ctx.settings.options
    L, recall_den, gain = opts.relevance_level, opts.recall_denominator, ctx.settings.ndcg_gain

    st.title("Learn: the metric sandbox")
    views.conventions_caption()
    st.caption("One query, one ranked list. Mark which results are relevant (grade 0–3), move them up or down, "
               "and every metric is recomputed at K with its formula and your numbers substituted. The numbers come "
               "from the same code as the dashboard.")

    sb = sandbox()

    # ---- guided scenarios ------------------------------------------------------------------------------
    views.section("Guided scenarios", "One click loads a list from the lesson; switch between its two sides to see "
                  "which metric moves.")
    cols = st.columns(len(S.SCENARIOS))
    for col, sc in zip(cols, S.SCENARIOS):
        col.button(sc.title, key=f"learn_sc_{sc.key}", on_click=load_scenario, args=(sc.key, "before"),
                   width="stretch", type="primary" if state.value(LEARN_SCENARIO) == sc.key else "secondary")

    active = state.value(LEARN_SCENARIO)
    if active:
        sc = S.scenario(active)
        with st.container(border=True):
            st.markdown(f"**{sc.title}.** {sc.lesson}")
            table = S.scenario_table(sc, L, recall_den, gain)
            # the table the whole width (its two headers are the scenario's lists: beside the buttons, the second
            # was cut at a projector's 1024 px), the two buttons under it
            st.dataframe(
                {"Metric": [f"{'➜ ' if h else ''}{lab}" for lab, h in zip(table["label"], table["highlighted"])],
                 f"{sc.before_label} (K = {sc.k_before})": [views.fmt(v) for v in table["before"]],
                 f"{sc.after_label} (K = {sc.k_after})": [views.fmt(v) for v in table["after"]]},
                hide_index=True, width="stretch")
            side = state.value(LEARN_SIDE, "before")
            st.caption(f"Showing in the sandbox below: **{sc.before_label if side == 'before' else sc.after_label}**. "
                       "➜ marks the metrics the scenario is about. Edit the list below freely; this table keeps the "
                       "scenario's own lists.")
            left, right = st.columns(2)
            left.button(f"Show: {sc.before_label}", key="learn_side_before", on_click=load_scenario,
                        args=(sc.key, "before"), width="stretch", disabled=side == "before")
            right.button(f"Show: {sc.after_label}", key="learn_side_after", on_click=load_scenario,
                         args=(sc.key, "after"), width="stretch", disabled=side == "after")

    # ---- source ---------------------------------------------------------------------------------------
    views.section("Your ranked list")
    in_scope = [q for q in ctx.golden if q.in_scope]
    src_l, src_m, src_r = st.columns([2, 5, 2], gap="medium", vertical_alignment="bottom")
    with src_l:
        source = st.radio("Start from", ["golden", "free"], key=LEARN_SOURCE, horizontal=True,
                          format_func={"golden": "A golden question", "free": "A blank list"}.get)
    with src_m:
        if source == "golden" and in_scope:
            by_id = {q.id: q for q in in_scope}
            state.keep_choice(LEARN_QUESTION, list(by_id), in_scope[0].id)
            qid = st.selectbox("Golden question", list(by_id), key=LEARN_QUESTION,
                               format_func=lambda i: f"{i} · {views.one_line(by_id[i].question, 36)}")
        elif source == "golden":
            st.info("The golden set has no in-scope question; start from a blank list.")
            qid = None
        else:
            qid = None
            st.caption("Ten results named result 1 … result 10, none relevant: mark the relevant ones yourself.")


    def _load_golden(query_id: str) -> None:
        try:
            load(S.from_ranking(ctx.result, query_id, N_ITEMS, ctx.id_text), k=min(ctx.k, N_ITEMS))
        except InputError as err:
            state.notice(str(err), "error")


    with src_r:
        if source == "golden" and qid:
            st.button("Load its top 10", key="learn_load", on_click=_load_golden, args=(qid,), width="stretch",
                      icon=":material/download:",
                      help=f"The top 10 of the sidebar's retriever ({ctx.settings.retriever}) with the golden labels.")
        elif source == "free":
            st.button("Load a blank list", key="learn_load_free", on_click=lambda: load(S.free_form(N_ITEMS)),
                      width="stretch", icon=":material/restart_alt:")

    note = state.notice()
    if note:
        getattr(st, note[0], st.info)(views.esc(note[1]))

    if sb.source != "free-form":
        st.caption(f"Loaded from golden question {views.esc(sb.source)}:")
        views.plain_text(sb.question)

    # ---- the list and the metrics --------------------------------------------------------------------
    left, right = st.columns([7, 4], gap="large")
    with left:
        st.caption("Grade 0 = not relevant; 1–3 = relevant, 3 the most (the sample golden set's scale).")
        cols = [0.5, 5.0, 1.3, 3.1]  # the four grades side by side whole in a projector's 1024 px
        head = st.columns(cols)
        head[0].caption("#")
        head[1].caption("Grade")
        head[2].caption("Move")
        head[3].caption("Result")
        n = len(sb.items)
        new_grades: dict[str, int] = {}
        for i, item in enumerate(sb.items):
            key = grade_key(item.id)
            state.default(key, item.grade)
            row = st.columns(cols, vertical_alignment="center")
            row[0].markdown(f"**{i + 1}**")
            with row[1]:
                g = st.segmented_control(f"Grade of rank {i + 1}", [0, 1, 2, 3], key=key, required=True,
                                         label_visibility="collapsed")
                new_grades[item.id] = int(g) if g is not None else item.grade
            with row[2]:
                u, d = st.columns(2, gap="small")
                u.button("", key=f"learn_up_{i}", icon=":material/arrow_upward:", on_click=move, args=(i, -1),
                         disabled=i == 0, help="Move up")
                d.button("", key=f"learn_down_{i}", icon=":material/arrow_downward:", on_click=move, args=(i, 1),
                         disabled=i == n - 1, help="Move down")
            with row[3]:
                flat = " ".join(item.text.split())
                st.text(item.id + (f"\n{flat[:70]}{'…' if len(flat) > 70 else ''}" if flat else ""),
                        help=item.text[:1500] if flat else None)
        sb = sb.with_grades(new_grades)
        ukey = unretrieved_key()
        state.default(ukey, len(sb.unretrieved))
        missing = st.number_input("Relevant but not retrieved", min_value=0, max_value=50, step=1, key=ukey,
                                  help="Relevant ids the retriever did not return. They count in |R| (recall, MAP) and "
                                       "in the ideal DCG. Golden labels keep their grades; new ones get grade 1.")
        sb = sb.with_unretrieved(int(missing))
        store(sb)
        if sb.unretrieved:
            st.caption("Their grades: " + ", ".join(str(g) for g in sb.unretrieved) + ".")

    with right:
        restore_k(n)
        k = st.slider("K (the sandbox's cutoff)", 1, max(n, 1), key=K, on_change=remember_k,
                      help="The sandbox has its own K (1–10); the sidebar's K drives the other pages.")
        R = sb.n_relevant(L)
        if R == 0:
            if opts.out_of_scope == "exclude":
                st.info("No relevant result and none missing: this query is **out of scope**. Under the trec_eval "
                        "convention it is left out of every mean and measured by abstention instead; every value "
                        "below is 0.", icon=":material/info:")
            else:
                st.warning("No relevant result: this query is **out of scope**, and with \"counted as misses\" it "
                           "enters every mean as 0.", icon=":material/info:")
        table = S.metric_table(sb, k, L, recall_den, gain)
        # two per row, one when the column beside the list is too narrow (ui.shell's cards_* rule): on a projector
        # a value is never cut and a label never breaks mid-word
        cards = st.container(key="cards_learn").columns(2)
        for j, r in enumerate(table.to_dict("records")):
            cards[j % 2].metric(f"{r['label']}@{k}", views.fmt(r["value"]), border=True,
                                help=views.metric_help(r["metric"]))
        hits = sum(1 for g in sb.grades[:k] if g >= L)
        st.caption(f"hits@{k} = {hits} relevant in the top {k} · |R| = {R} relevant in all "
                   f"({sum(1 for g in sb.grades if g >= L)} listed, {sum(1 for g in sb.unretrieved if g >= L)} not "
                   f"retrieved) · relevance level L = {L}.")

    views.section(f"The arithmetic at K = {k}",
                  "Each metric's formula, then the same formula with this list's numbers.")
    grid = st.columns(2, gap="large")
    for j, r in enumerate(table.to_dict("records")):
        with grid[j % 2]:
            st.markdown(f"**{r['label']}@{k} = {views.fmt(r['value'])}** · `{r['formula']}`")
            st.code(r["substituted"], language=None, wrap_lines=True)

    left, right = st.columns([3, 2], gap="large")
    with left:
        views.section("Rank by rank", "Which ranks count at K, the running hit count, the AP terms hits_i / i at "
                      "relevant ranks, and the DCG terms gain / log2(rank + 1).")
        terms = S.term_table(sb, k, L, gain)
        st.dataframe(
            {"Rank": terms["rank"], "Grade": terms["grade"],
             f"Relevant (≥ {L})": ["yes" if r else "" for r in terms["relevant"]],
             f"In top {k}": ["yes" if r else "" for r in terms["in_top_k"]],
             "Hits so far": terms["hits"],
             "AP term": [views.fmt(v, 4) if v == v else "" for v in terms["ap_term"]],
             "log2(rank+1)": [views.fmt(d, 4) for d in terms["discount"]],
             "DCG term": [views.fmt(v, 4) if v == v else "" for v in terms["dcg_term"]]},
            hide_index=True, width="stretch", height=38 + 35 * len(terms))
    with right:
        views.section("Every metric against K", "For this list. Larger K: recall can only go up; precision usually "
                      "goes down, because the divisor K grows faster than the hits.")
        st.altair_chart(curve_chart(S.curve(sb, L, recall_den, gain), k), width="stretch")

    # ---- conventions ----------------------------------------------------------------------------------
    views.section("Conventions", "The same settings as the sidebar's Evaluation conventions: change them here or "
                  "there, and the dashboard and every page follow. Defaults follow trec_eval.")
    convention_widgets()
    st.markdown(f"**What each convention does to the golden set** (the sidebar's retriever, K = {ctx.k})")
    eff = S.convention_effects(ctx.result, ctx.k)
    st.dataframe(
        {"Convention": eff["convention"],
         "Metric": [f"{views.label(m)}@{kk}" for m, kk in zip(eff["metric"], eff["k"])],
         "Default (trec_eval)": [f"{d}: {views.fmt(v)} (n = {nq})" for d, v, nq in
                                 zip(eff["default"], eff["default_value"], eff["n_default"])],
         "Alternative": [f"{a}: {views.fmt(v)} (n = {nq})" for a, v, nq in
                         zip(eff["alternative"], eff["alternative_value"], eff["n_alternative"])]},
        hide_index=True, width="stretch")
    st.caption("n = queries in the mean. Both columns read the same retrieval run; only the convention differs. "
               "The fifth option (queries the retriever returned nothing for) is in the sidebar.")
