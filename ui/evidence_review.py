"""The evidence review queue: reference answers become labels, one question per screen.

Questions with a reference answer and no label (a ragas / DeepEval set) get passages proposed from
the corpus (:func:`rag_metrics.authoring.evidence_proposals.propose_evidence`, one click); a person then
accepts or rejects each proposal.  The bar with **Save and next** is at the top of the screen, so
it is in view however long the passages are.  Saving writes the accepted passages as reviewed
evidence, and their labels on the current chunking (the rule of docs/evidence.md), into the golden
set through its autosave; rejected ones are dropped; undecided ones stay proposed (never judged).
"""
from __future__ import annotations

import streamlit as st

from rag_metrics.authoring.evidence_proposals import chunk_labels, propose_evidence, review
from rag_metrics.errors import InputError
from rag_metrics.metrics.evidence import CorpusIndex
from rag_metrics.types import GoldenSet
from ui import session as ui_session
from ui import state, views
from ui.keys import EVIDENCE_POS as POS
from ui.keys import evidence_decision as _wkey

DECISIONS = ("Accept", "Reject")


def _queue(golden) -> list:
    """Questions with proposals to review, in golden order."""
    return [q for q in golden if q.proposed_evidence]


def _on_propose(corpus: str, chunks) -> None:
    session = state.golden_session(corpus)
    try:
        new = propose_evidence(session.golden, chunks)
    except InputError as err:
        state.notice(f"Nothing proposed: {views.esc(str(err))}", "error")
        return
    session.replace(new)
    n = sum(1 for q in new if q.proposed_evidence)
    state.notice(f"Proposed evidence for {n} question(s): review them one at a time below.", "info")


def _on_move(corpus: str, step: int, size: int) -> None:
    pos = ui_session.default(POS, {})
    pos[corpus] = max(0, min(size - 1, pos.get(corpus, 0) + step))


def _on_save(corpus: str, qid: str, chunks, then_next: bool) -> None:
    session = state.golden_session(corpus)
    golden = session.golden
    q = golden.get(qid)
    if q is None:
        return
    decisions: dict[int, bool] = {}
    for i in range(len(q.proposed_evidence)):
        choice = ui_session.value(_wkey(qid, i))
        if choice in DECISIONS:
            decisions[i] = choice == "Accept"
    new_q = review(q, decisions)
    if new_q.reviewed_evidence:
        new_q = new_q.relabelled(chunk_labels(new_q, CorpusIndex.of(chunks), chunks))

    try:
        res = session.replace(GoldenSet(tuple(new_q if g.id == qid else g for g in golden), golden.name))
    except InputError as err:
        state.notice(f"Not saved: {views.esc(str(err))}", "error")
        return
    accepted = sum(decisions.values())
    state.notice_saved(session, res, f"Saved: {accepted} passage(s) accepted, {len(decisions) - accepted} rejected "
                       f"for “{views.esc(q.question.strip()[:80])}”.")
    if then_next:
        pos = ui_session.default(POS, {})
        # the saved question leaves the queue when nothing is left undecided: the next one takes its place
        if new_q.proposed_evidence:
            pos[corpus] = pos.get(corpus, 0) + 1


def render(ctx) -> None:
    """The review queue of the current corpus's golden set (nothing when there is nothing to review)."""
    corpus, golden = ctx.settings.corpus, ctx.golden
    waiting = [q for q in golden if q.awaiting_labels and not q.proposed_evidence]
    queue = _queue(golden)
    if not waiting and not queue:
        st.caption(":material/check_circle: No question awaits evidence review: every question with a reference "
                   "answer has labels or reviewed evidence.")
        return
    if waiting:
        st.info(f"**{len(waiting)} question(s) have a reference answer but no label**, so they are neither in nor "
                "out of scope yet. Propose the passages of the corpus that support each reference answer, then "
                "accept or reject them here.", icon=":material/fact_check:")
        st.button(f"Propose evidence for {len(waiting)} question(s)", key="ev_propose", type="primary",
                  on_click=_on_propose, args=(corpus, ctx.chunks.chunks))
    if not queue:
        return
    pos = min(ui_session.default(POS, {}).get(corpus, 0), len(queue) - 1)
    q = queue[pos]
    chunks = ctx.chunks.chunks
    with st.container(border=True, key="ev_bar"):  # the bar stays at the top: Save and next is always in view
        a, b, c, d = st.columns([3, 1, 1, 2], vertical_alignment="center")
        a.markdown(f"**Question {pos + 1} of {len(queue)}** to review")
        b.button("← Previous", key="ev_prev", on_click=_on_move, args=(corpus, -1, len(queue)), disabled=pos == 0,
                 width="stretch")
        c.button("Skip", key="ev_skip", on_click=_on_move, args=(corpus, 1, len(queue)),
                 disabled=pos >= len(queue) - 1, width="stretch")
        d.button("Save and next →", key="ev_save_next", type="primary", on_click=_on_save,
                 args=(corpus, q.id, chunks, True), width="stretch")
    st.markdown(f"#### {views.esc(q.question)}")
    st.caption(f"Reference answer: {views.esc(q.expected_answer or '')}")
    for i, e in enumerate(q.proposed_evidence):
        with st.container(border=True):
            x, y = st.columns([4, 2], vertical_alignment="center")
            score = "" if e.score is None else f" · support {views.fmt(e.score)}"
            x.markdown(f"**{i + 1}.** {views.esc(e.doc)}{score} · suggested grade {e.grade}")
            y.radio("Decision", DECISIONS, index=None, key=_wkey(q.id, i), horizontal=True,
                    label_visibility="collapsed")
            views.plain_text(e.quote, height=90)
    st.caption("Accepted passages become evidence (judged whatever the chunking) and labels of the chunks that hold "
               "them; rejected ones are dropped; undecided ones stay proposed and are never judged.")
