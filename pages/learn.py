"""Learn: a metric sandbox.  Edit one ranked list (grades, order, relevant ids not retrieved) and
watch every metric's arithmetic at K; the lesson's scenarios in one click; the conventions."""
from __future__ import annotations

import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.lesson import sandbox as S
from ui import learn, state, views
from ui.keys import LEARN_QUESTION, LEARN_SCENARIO, LEARN_SIDE, LEARN_SOURCE
from ui.shell import ensure_shell

ensure_shell()

ctx = state.current_or_stop()
opts = ctx.settings.options
L, recall_den, gain = opts.relevance_level, opts.recall_denominator, ctx.settings.ndcg_gain

st.title("Learn: the metric sandbox")
views.conventions_caption()
st.caption("One query, one ranked list. Mark which results are relevant (grade 0–3), move them up or down, "
           "and every metric is recomputed at K with its formula and your numbers substituted. The numbers come "
           "from the same code as the dashboard.")

sb = learn.sandbox()

# ---- guided scenarios ------------------------------------------------------------------------------
views.section("Guided scenarios", "One click loads a list from the lesson; switch between its two sides to see "
              "which metric moves.")
cols = st.columns(len(S.SCENARIOS))
for col, sc in zip(cols, S.SCENARIOS):
    col.button(sc.title, key=f"learn_sc_{sc.key}", on_click=learn.load_scenario, args=(sc.key, "before"),
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
        left.button(f"Show: {sc.before_label}", key="learn_side_before", on_click=learn.load_scenario,
                    args=(sc.key, "before"), width="stretch", disabled=side == "before")
        right.button(f"Show: {sc.after_label}", key="learn_side_after", on_click=learn.load_scenario,
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
        learn.load(S.from_ranking(ctx.result, query_id, learn.N_ITEMS, ctx.id_text), k=min(ctx.k, learn.N_ITEMS))
    except InputError as err:
        state.notice(str(err), "error")


with src_r:
    if source == "golden" and qid:
        st.button("Load its top 10", key="learn_load", on_click=_load_golden, args=(qid,), width="stretch",
                  icon=":material/download:",
                  help=f"The top 10 of the sidebar's retriever ({ctx.settings.retriever}) with the golden labels.")
    elif source == "free":
        st.button("Load a blank list", key="learn_load_free", on_click=lambda: learn.load(S.free_form(learn.N_ITEMS)),
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
        key = learn.grade_key(item.id)
        state.default(key, item.grade)
        row = st.columns(cols, vertical_alignment="center")
        row[0].markdown(f"**{i + 1}**")
        with row[1]:
            g = st.segmented_control(f"Grade of rank {i + 1}", [0, 1, 2, 3], key=key, required=True,
                                     label_visibility="collapsed")
            new_grades[item.id] = int(g) if g is not None else item.grade
        with row[2]:
            u, d = st.columns(2, gap="small")
            u.button("", key=f"learn_up_{i}", icon=":material/arrow_upward:", on_click=learn.move, args=(i, -1),
                     disabled=i == 0, help="Move up")
            d.button("", key=f"learn_down_{i}", icon=":material/arrow_downward:", on_click=learn.move, args=(i, 1),
                     disabled=i == n - 1, help="Move down")
        with row[3]:
            flat = " ".join(item.text.split())
            st.text(item.id + (f"\n{flat[:70]}{'…' if len(flat) > 70 else ''}" if flat else ""),
                    help=item.text[:1500] if flat else None)
    sb = sb.with_grades(new_grades)
    ukey = learn.unretrieved_key()
    state.default(ukey, len(sb.unretrieved))
    missing = st.number_input("Relevant but not retrieved", min_value=0, max_value=50, step=1, key=ukey,
                              help="Relevant ids the retriever did not return. They count in |R| (recall, MAP) and "
                                   "in the ideal DCG. Golden labels keep their grades; new ones get grade 1.")
    sb = sb.with_unretrieved(int(missing))
    learn.store(sb)
    if sb.unretrieved:
        st.caption("Their grades: " + ", ".join(str(g) for g in sb.unretrieved) + ".")

with right:
    learn.restore_k(n)
    k = st.slider("K (the sandbox's cutoff)", 1, max(n, 1), key=learn.K, on_change=learn.remember_k,
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

views.section(f"The arithmetic at K = {k}", "Each metric's formula, then the same formula with this list's numbers.")
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
    st.altair_chart(learn.curve_chart(S.curve(sb, L, recall_den, gain), k), width="stretch")

# ---- conventions ----------------------------------------------------------------------------------
views.section("Conventions", "The same settings as the sidebar's Evaluation conventions: change them here or "
              "there, and the dashboard and every page follow. Defaults follow trec_eval.")
learn.convention_widgets()
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
