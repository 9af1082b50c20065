"""Golden set editor: table editing, labelling with retrieval, import/export, reset; autosaved."""
from __future__ import annotations

import streamlit as st

from rag_metrics import golden_edit
from rag_metrics.errors import InputError
from rag_metrics.golden import LIST_SEPARATOR, validate_golden
from rag_metrics.types import OUT_OF_SCOPE
from ui import state, views
from ui.shell import ensure_shell

ensure_shell()

EDITOR = "_golden_editor"          # {"corpus", "rev", "table", "nonce"}: the editor's base table
CONFIRM_RESET = "_confirm_reset"
MULTISELECT_MAX = 5000             # above this many ids, relevant ids are edited as text

ctx = state.current_or_stop()
entry = ctx.golden_entry
golden = ctx.golden
corpus = ctx.settings.corpus
ss = st.session_state
known = ctx.known_ids
unit = "document" if ctx.corpus.level == "document" else "chunk"

views.page_header("Golden set editor", ctx)
note = state.notice()
if note:
    getattr(st, note[0])(note[1])

# ---- save status / conflicts ----------------------------------------------------------------------
if entry.conflict_path is not None:
    st.warning(
        "Another session saved this golden set after you loaded it, so your edits were **not** written over "
        f"it. Your copy is saved beside it in `{entry.conflict_path}`. Choose which version to keep.",
        icon=":material/sync_problem:")
    c1, c2, _ = st.columns([1, 1, 2])
    if c1.button("Keep mine (overwrite the saved set)", key="conflict_keep"):
        state.set_golden(entry.golden, force=True)
        state.notice("Your version is saved.")
        st.rerun()
    if c2.button("Load the saved set", key="conflict_load"):
        state.reload_from_workspace()
        state.notice(f"Loaded the saved set. Your copy stays in {views.esc(entry.conflict_path)}.", "info")
        st.rerun()
else:
    disk = entry.workspace.version()
    if disk is not None and disk != entry.version:
        st.info("The saved golden set was changed by another session since this page loaded it.",
                icon=":material/sync:")
        if st.button("Load the saved set", key="stale_load"):
            state.reload_from_workspace()
            state.notice("Loaded the saved golden set.", "info")
            st.rerun()
    where = entry.workspace.path
    status = ("Autosaved" if entry.version else "Not modified yet (the shipped set is in use)")
    st.caption(f":material/save: {status} · `{where}` · {len(golden)} queries")
if entry.save_error:
    st.error(entry.save_error, icon=":material/error:")
if entry.load_report.errors:
    views.report(entry.load_report, title="Problems in the saved workspace file")

tab_edit, tab_label, tab_io = st.tabs([":material/table_edit: Edit the table",
                                       ":material/label: Label with retrieval",
                                       ":material/import_export: Import, export, reset"])

# ---- table editor ---------------------------------------------------------------------------------
with tab_edit:
    eb = ss.get(EDITOR)
    key = f"golden_editor_{eb['nonce']}" if eb else ""
    if eb is None or eb["corpus"] != corpus or eb["rev"] != entry.revision or key not in ss:
        nonce = eb["nonce"] + 1 if eb else 0
        table = golden_edit.golden_to_table(golden)
        if len(known) > MULTISELECT_MAX:
            table["relevant"] = [LIST_SEPARATOR.join(ids) for ids in table["relevant"]]
        eb = {"corpus": corpus, "rev": entry.revision, "table": table, "nonce": nonce}
        ss[EDITOR] = eb
        key = f"golden_editor_{nonce}"

    categories = list(dict.fromkeys([*golden_edit.CATEGORIES, *(q.category for q in golden if q.category)]))
    label_ids = list(dict.fromkeys([*known, *(i for q in golden for i in q.relevant)]))
    if len(known) > MULTISELECT_MAX:
        relevant_col = st.column_config.TextColumn(
            f"Relevant {unit} ids", help=f"Ids separated by '{LIST_SEPARATOR}'", width="large")
    else:
        relevant_col = st.column_config.MultiselectColumn(
            f"Relevant {unit}s", options=label_ids, width=300,
            help=f"Pick the {unit}s that answer the question (type to search). Grades go in the next column.")
    st.caption(f"Edit cells directly; add rows at the bottom, delete with the row checkbox. Grades: one per "
               f"relevant {unit}, in the same order, separated by '{LIST_SEPARATOR}' (3 = answers fully, "
               f"2 = mostly, 1 = partly; empty = all 1). Questions the corpus cannot answer: category "
               f"'{OUT_OF_SCOPE}' and no relevant {unit}.")
    edited = st.data_editor(
        eb["table"], key=key, num_rows="dynamic", hide_index=True, width="stretch", height=560,
        column_config={
            "id": st.column_config.TextColumn("Id", disabled=True, width=70,
                                              help="Stable id; new rows get one from the question text."),
            "question": st.column_config.TextColumn("Question", width=280, required=True),
            "category": st.column_config.SelectboxColumn("Category", options=categories, width=115),
            "relevant": relevant_col,
            "grades": st.column_config.TextColumn("Grades", width=70),
            "expected_answer": st.column_config.TextColumn("Expected answer", width="medium"),
        },
    )
    parsed, parse_report = golden_edit.table_to_golden(edited, None, name=golden.name)
    problems = validate_golden(parsed, known)
    problems.extend(parse_report.problems)
    if parse_report.ok:
        res = state.set_golden(parsed)
        if res is not None:
            eb["rev"] = entry.revision  # our own change: keep the editor's state
            if res.saved:
                st.toast("Saved", icon=":material/save:")
            else:
                st.rerun()  # show the conflict banner
    else:
        st.error(f"Not saved: {len(parse_report.errors)} problem(s) to fix in the table. The metrics use the "
                 "last valid version.", icon=":material/error:")
    if problems:
        views.report(problems, title="Problems")
    else:
        st.caption(":material/check_circle: No problems: every label names a real "
                   f"{unit}, every in-scope question has a label.")

# ---- labelling helper -----------------------------------------------------------------------------
with tab_label:
    st.caption("Pick a question (or type a new one), read what the retriever returns, tick the relevant "
               f"{unit}s and their grade, then save. Unticking a labelled {unit} removes its label.")
    NEW = "__new__"
    options = [NEW, *golden.ids]
    qtext = {q.id: q for q in golden}
    c1, c2 = st.columns([3, 1])
    pick = c1.selectbox("Question", options, key="label_pick", index=1 if len(options) > 1 else 0,
                        format_func=lambda i: "✎ Type a new question" if i == NEW else f"{i} · {qtext[i].question}")
    n_show = c2.number_input("Results shown", 3, 30, 10, key="label_n")
    if pick == NEW:
        question = st.text_input("New question", key="label_new_q", placeholder="e.g. How do I export my notes?")
        category = st.selectbox("Category", list(golden_edit.CATEGORIES), key="label_new_cat")
        current_labels: dict[str, int] = {}
        qid = None
    else:
        q = qtext.get(pick)
        question, category, current_labels, qid = q.question, q.category, dict(q.relevant), q.id
    if question.strip():
        try:
            with st.spinner("Retrieving…"):
                results = ctx.memo.search(question)[: int(n_show)]
        except InputError as err:
            views.input_error(err, "Retrieval failed")
            results = []
        if ctx.corpus.level == "document":
            seen: dict[str, tuple[str, float]] = {}
            for cid, sc in results:
                seen.setdefault(ctx.chunks.doc.get(cid, cid), (cid, sc))
            results = [(d, sc) for d, (_, sc) in seen.items()]
        with st.form(f"label_form_{pick}"):
            picks: dict[str, int] = {}
            for rank, (rid, score) in enumerate(results, start=1):
                g0 = int(current_labels.get(rid, 0))
                with st.container(border=True):
                    a, b, c = st.columns([5, 1, 1])
                    a.markdown(f"**{rank}.** {views.esc(rid)} · score {views.fmt(score)}")
                    tick = b.checkbox("Relevant", value=g0 > 0, key=f"lbl_{pick}_{rid}")
                    grade = c.selectbox("Grade", [1, 2, 3], index=max(0, min(g0, 3) - 1) if g0 > 0 else 0,
                                        key=f"grd_{pick}_{rid}", label_visibility="collapsed")
                    text = ctx.chunks.text.get(rid) if unit == "chunk" else next(
                        (ctx.chunks.text[c.id] for c in ctx.chunks.chunks if c.doc_id == rid), "")
                    views.plain_text(text or "")
                    picks[rid] = int(grade) if tick else 0
            hidden = {i: g for i, g in current_labels.items() if i not in picks}
            if hidden:
                st.caption("Labels outside this list are kept: " + ", ".join(
                    f"{views.esc(i)} ({g})" for i, g in hidden.items()) + ".")
            saved = st.form_submit_button("Save labels", type="primary")
        if saved:
            try:
                new = golden_edit.upsert_labels(golden, question, picks, category=category if pick == NEW else "",
                                      query_id=qid)
                state.set_golden(new)
                n = sum(1 for g in picks.values() if g > 0)
                state.notice(f"Saved {n} label(s) for “{views.esc(question.strip()[:80])}”.")
                st.rerun()
            except InputError as err:
                views.input_error(err)
    else:
        st.info("Type a question to see what the retriever returns.")

# ---- import / export / reset ----------------------------------------------------------------------
with tab_io:
    st.markdown("**Import**")
    st.caption(f"CSV, JSON or JSONL golden sets replace the whole set; TREC qrels (`qid 0 id grade`) replace "
               f"the labels of matching query ids. Limit {golden_edit.MAX_IMPORT_BYTES // (1024 * 1024)} MB. A file with "
               "errors is rejected and your current set is kept.")
    up = st.file_uploader("Golden set or qrels file", type=["csv", "json", "jsonl", "txt", "qrels", "tsv"],
                          key="golden_upload")
    if st.button("Import", key="golden_import", disabled=up is None):
        new, rep = golden_edit.import_golden(up.getvalue(), up.name, golden, known)
        if new is None:
            st.error(f"Import rejected: {rep.summary()} in {views.esc(up.name)}. Your golden set is unchanged.",
                     icon=":material/error:")
            views.report(rep, title="Validation report")
        else:
            state.set_golden(new)
            state.notice(f"Imported {len(new)} queries from {views.esc(up.name)}" + (f" ({rep.summary()})." if rep else "."))
            st.rerun()

    st.markdown("**Export**")
    cols = st.columns(4)
    for col, fmt in zip(cols, golden_edit.EXPORT_FORMATS):
        try:
            data = golden_edit.export_golden(golden, fmt)
            col.download_button(f"{fmt.upper()}", data, file_name=f"golden.{fmt if fmt != 'qrels' else 'qrels'}",
                                mime=golden_edit.EXPORT_FORMATS[fmt], key=f"export_{fmt}", icon=":material/download:",
                                width="stretch")
        except InputError as err:
            col.button(fmt.upper(), disabled=True, key=f"export_{fmt}", width="stretch")
            col.caption(str(err))

    st.markdown("**Reset**")
    if not ss.get(CONFIRM_RESET):
        if st.button("Reset to the shipped set…", key="reset_ask", icon=":material/restart_alt:"):
            ss[CONFIRM_RESET] = True
            st.rerun()
    else:
        st.warning("Replace your golden set with the shipped one? Your edits will be overwritten "
                   "(export them first to keep a copy).", icon=":material/warning:")
        c1, c2, _ = st.columns([1, 1, 3])
        if c1.button("Yes, reset", key="reset_yes", type="primary"):
            state.reset_to_seed()
            ss[CONFIRM_RESET] = False
            state.notice("Golden set reset to the shipped version.")
            st.rerun()
        if c2.button("Cancel", key="reset_no"):
            ss[CONFIRM_RESET] = False
            st.rerun()
