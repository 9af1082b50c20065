"""One question's labels, one row per label: the golden editor's detail view for long label lists.

A BEIR question can name 50-155 relevant documents; in the table's single cell such a list cannot
be read or edited.  Here the chosen question's labels are a small table (id, grade), edited and
saved through the corpus's golden session (:meth:`GoldenSession.save_labels`).
"""
from __future__ import annotations

import streamlit as st

from rag_metrics.authoring import golden_edit
from rag_metrics.errors import InputError
from ui import state, views
from ui.keys import LABEL_DETAIL_PICK as PICK
from ui.keys import LABEL_DETAIL_SAVE as SAVE

__all__ = ["LONG", "PICK", "render"]

#: From this many labels a question is pointed to the detail editor.
LONG = 10


def render(ctx: state.Lab, label_ids: list[str], as_text: bool) -> None:
    """The detail editor inside an expander (expanded when some question has :data:`LONG` labels
    or more); ``label_ids`` are the id choices, typed as text when ``as_text``."""
    session = ctx.golden_session
    golden = ctx.golden
    if not len(golden):
        return
    counts = {q.id: len(q.relevant) for q in golden}
    texts = {q.id: q.question for q in golden}
    long = [i for i, n in counts.items() if n >= LONG]
    title = f"One question's labels, one row each ({len(long)} question(s) with {LONG} or more labels)"
    with st.expander(title, expanded=bool(long), icon=":material/format_list_numbered:"):
        order = sorted(counts, key=lambda i: -counts[i]) if long else list(counts)
        state.keep_choice(PICK, order, order[0])
        qid = st.selectbox("Question", order, key=PICK,
                           format_func=lambda i: f"{i} · {counts[i]} label(s) · {texts[i][:80]}")
        q = golden.get(qid)
        if q is None:
            return
        rows = golden_edit.label_rows(q)
        id_col = (st.column_config.TextColumn(f"{ctx.unit.capitalize()} id", required=True) if as_text else
                  st.column_config.SelectboxColumn(f"{ctx.unit.capitalize()} id", options=label_ids, required=True))
        edited = st.data_editor(
            rows, key=f"label_rows_{qid}_{session.fingerprint[:12]}", num_rows="dynamic", hide_index=True,
            width="stretch", height=min(38 + 35 * (len(rows) + 1), 420),
            column_config={"id": id_col,
                           "grade": st.column_config.NumberColumn("Grade", min_value=1, max_value=3, step=1,
                                                                  help="3 = answers fully, 2 = mostly, 1 = partly")})
        st.caption(f"{len(edited)} label(s). Add rows at the bottom, delete with the row checkbox, then save: the "
                   "question's labels become exactly this list.")
        if st.button("Save these labels", key=SAVE, type="primary", icon=":material/save:"):
            try:
                labels = golden_edit.labels_from_rows(q.relevant, edited.to_dict("records"), q.id)
                res = session.save_labels(q.question, labels, query_id=q.id)
            except InputError as err:
                views.input_error(err, "Labels not saved")
            else:
                state.notice_saved(session, res,
                                   f"Saved {sum(1 for g in labels.values() if g > 0)} label(s) for {views.esc(q.id)}.")
                st.rerun()
