"""The "Label with retrieval" view: a queue over the golden set's questions.

The queue (:class:`rag_metrics.authoring.label_queue.LabelQueue`, one per corpus in the session state) holds
the ticks of every question apart, so a tick made for one question is never shown for, or saved
with, another.  Every widget acts through an ``on_click``/``on_change`` callback: the run after a
click draws the new state at once (no second click), and the view the user is in is kept.

Widgets are keyed by the question's queue key and the chunk id, so Streamlit never hands one
question's checkbox state to the next question.
"""
from __future__ import annotations

import streamlit as st

from rag_metrics.authoring.golden_session import labelling_rows
from rag_metrics.authoring.label_queue import LabelQueue
from rag_metrics.authoring.label_suggest import questions_to_propose
from rag_metrics.errors import InputError
from ui import cache_insights, drafting, encoding, state, views
from ui import session as ui_session
from ui.keys import LABEL_GO
from ui.keys import LABEL_LIVE as LIVE
from ui.keys import LABEL_N as N_SHOWN
from ui.keys import label_widget as _wkey
from ui.label_session import QUEUE, queue

GRADES = (1, 2, 3)
N_PROPOSED = 5


# ---- callbacks -----------------------------------------------------------------------------------
def _on_tick(corpus: str, item_key: str, chunk_id: str) -> None:
    q = ui_session.item(QUEUE)[corpus]
    if q.current is None or q.current.key != item_key:
        return
    ticked = bool(ui_session.value(_wkey("tick", item_key, chunk_id)))
    grade = int(ui_session.value(_wkey("grade", item_key, chunk_id)) or 1)
    try:
        q.tick(chunk_id, grade if ticked else 0)
    except InputError as err:
        state.notice(views.esc(str(err)), "error")


def _on_save(corpus: str, then_next: bool) -> None:
    q = ui_session.item(QUEUE)[corpus]
    session = state.golden_session(corpus)
    cur = q.current
    if cur is None:
        return
    try:
        new = q.apply(session.golden)
        res = session.replace(new)
    except InputError as err:
        state.notice(f"Not saved: {views.esc(str(err))}", "error")
        return
    n = sum(1 for g in q.ticks.get(q.current.key, {}).values() if g > 0)
    state.notice_saved(session, res, f"Saved {n} label(s) for “{views.esc(cur.question.strip()[:80])}”.")
    if then_next:
        q.next()


def _on_accept(corpus: str, item_key: str, chunk_ids: list[str]) -> None:
    """A person accepts proposed chunks: ticked for this question (saved only with Save)."""
    q = ui_session.item(QUEUE)[corpus]
    if q.current is None or q.current.key != item_key:
        return
    try:
        q.accept(chunk_ids)
    except InputError as err:
        state.notice(views.esc(str(err)), "error")
        return
    for cid in chunk_ids:  # the checkbox of a chunk also in the retrieval list shows the tick
        ui_session.set_value(_wkey("tick", item_key, cid), True)
    state.notice(f"Accepted {len(chunk_ids)} proposed {'chunk' if len(chunk_ids) == 1 else 'chunks'}: ticked, "
                 "not saved yet — press Save to keep them.", "info")


def _proposals(ctx, q: LabelQueue, corpus: str) -> None:
    """Chunks proposed from the current question's reference answer (none saved without a click)."""
    cur = q.current
    gq = next((g for g in questions_to_propose(ctx.golden) if g.id == cur.query_id), None) if cur else None
    if gq is None or ctx.unit != "chunk":
        return
    with st.spinner("Finding the chunks that support the reference answer…"):
        df = cache_insights.reference_proposals(ctx.chunks, ctx.chunks.fingerprint, gq.expected_answer or "",
                                                N_PROPOSED, ctx.corpus.model)
    q.propose(cur.key, list(zip(df["chunk_id"], df["score"])))
    ticks = q.current_ticks()
    with st.container(border=True):
        st.markdown("**Proposed from the reference answer** (not labels until you accept and save)")
        st.caption(f"Reference answer: {views.esc(gq.expected_answer or '')}  \nRanked by "
                   f"{views.esc(encoding.label(ctx.corpus.model))} similarity to the reference answer and rapidfuzz "
                   "matching of its sentences (score = half each).")
        if df.empty:
            st.caption("No chunk to propose.")
            return
        for r in df.to_dict("records"):
            x, y = st.columns([6, 1], vertical_alignment="center")
            done = ticks.get(r["chunk_id"], 0) > 0
            x.markdown(f"**{r['rank']}.** {views.esc(r['chunk_id'])} · score {views.fmt(r['score'])} "
                       f"(similarity {views.fmt(r['semantic'])}, sentence match {views.fmt(r['lexical'])})")
            y.button("Accepted" if done else "Accept", key=_wkey("accept", cur.key, r["chunk_id"]), disabled=done,
                     on_click=_on_accept, args=(corpus, cur.key, [r["chunk_id"]]), width="stretch")
            views.plain_text(ctx.chunks.text.get(r["chunk_id"], ""), height=100)
        todo = [i for i in df["chunk_id"] if ticks.get(i, 0) <= 0]
        st.button(f"Accept all {len(todo)} proposed", key=_wkey("accept_all", cur.key, ""), disabled=not todo,
                  on_click=_on_accept, args=(corpus, cur.key, todo))


def _on_move(corpus: str, how: str) -> None:
    q = ui_session.item(QUEUE)[corpus]
    getattr(q, how)()


def _on_go(corpus: str) -> None:
    q = ui_session.item(QUEUE)[corpus]
    q.go(ui_session.item(LABEL_GO))


def _on_add(corpus: str) -> None:
    q = ui_session.item(QUEUE)[corpus]
    text = ui_session.value(LIVE, "")
    try:
        q.add_question(text, state.golden_session(corpus).golden)
    except InputError as err:
        state.notice(views.esc(str(err)), "error")
        return
    ui_session.set_value(LIVE, "")


# ---- the view ------------------------------------------------------------------------------------
def render(ctx) -> None:
    corpus, golden, unit = ctx.settings.corpus, ctx.golden, ctx.unit
    q = queue(corpus, golden)
    st.caption(f"Label the questions one at a time: read what the retriever returns, tick the relevant "
               f"{unit}s with their grade, then **Save and next**. Ticks belong to one question; unticking a "
               f"labelled {unit} removes its label. Skip leaves a question as it is.")
    drafting.pending_drafts_box(ctx)
    c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
    c1.text_input("Add a question from the live query box", key=LIVE,
                  placeholder="e.g. How do I export my notes?")
    c2.button("Add to the queue", key="label_add", on_click=_on_add, args=(corpus,), width="stretch")
    cur = q.current
    if cur is None:
        st.info("The golden set has no questions yet: type one above and add it to the queue.")
        return
    p = q.progress()
    keys = [it.key for it in q.items]
    # numbered: a selectbox's value travels as its label, so two equal questions need distinct labels
    labels = {it.key: f"{n}. {it.question[:90]}" for n, it in enumerate(q.items, 1)}
    a, b = st.columns([4, 1], vertical_alignment="bottom")
    if ui_session.value(LABEL_GO) != cur.key:  # the queue moved (buttons): show where it is
        ui_session.set_value(LABEL_GO, cur.key)
    a.selectbox("Question", keys, key=LABEL_GO, on_change=_on_go, args=(corpus,),
                format_func=lambda k: labels.get(k, str(k)))
    b.number_input(f"{unit.capitalize()}s shown", 3, 30, 10, key=N_SHOWN)
    st.caption(f"Question {q.pos + 1} of {p['total']} · {p['saved']} saved · {p['skipped']} skipped · "
               f"{p['pending']} to do")
    st.markdown(f"#### {views.esc(cur.question)}")
    _proposals(ctx, q, corpus)
    ticks = q.current_ticks()
    try:
        with st.spinner("Retrieving…"):
            rows = labelling_rows(ctx.memo.search(cur.question), int(ui_session.value(N_SHOWN, 10)),
                                  ctx.chunks.text, ticks, ctx.chunks.doc if unit == "document" else None)
    except InputError as err:
        views.input_error(err, "Retrieval failed")
        rows = labelling_rows([], 0, {})
    shown = set()
    for r in rows.to_dict("records"):
        rid, g0 = r["id"], int(ticks.get(r["id"], 0))
        shown.add(rid)
        with st.container(border=True):
            x, y, z = st.columns([5, 1, 1], vertical_alignment="center")
            hint = drafting.suggestion_caption(drafting.suggestion(corpus, cur.query_id, rid))
            x.markdown(f"**{r['rank']}.** {views.esc(rid)} · score {views.fmt(r['score'])}"
                       + (f" · :violet-badge[{views.esc(hint)}]" if hint and g0 == 0 else ""))
            y.checkbox("Relevant", value=g0 > 0, key=_wkey("tick", cur.key, rid), on_change=_on_tick,
                       args=(corpus, cur.key, rid))
            z.selectbox("Grade", GRADES, index=GRADES.index(g0) if g0 in GRADES else 0,
                        key=_wkey("grade", cur.key, rid), on_change=_on_tick, args=(corpus, cur.key, rid),
                        label_visibility="collapsed", help="3 = answers fully, 2 = mostly, 1 = partly")
            views.plain_text(r["text"] or "", height=140)
    drafting.render_pool_candidates(ctx, cur)
    hidden = {i: g for i, g in ticks.items() if i not in shown}
    if hidden:
        st.caption("Also labelled (not in this list, kept): " + ", ".join(
            f"{views.esc(i)} ({g})" for i, g in hidden.items()) + ".")
    b1, b2, b3, b4 = st.columns(4)
    b1.button("← Previous", key="label_prev", on_click=_on_move, args=(corpus, "previous"),
              disabled=q.pos == 0, width="stretch")
    b2.button("Skip", key="label_skip", on_click=_on_move, args=(corpus, "skip"), width="stretch")
    b3.button("Save", key="label_save", on_click=_on_save, args=(corpus, False), width="stretch")
    b4.button("Save and next →", key="label_save_next", type="primary", on_click=_on_save,
              args=(corpus, True), width="stretch")
