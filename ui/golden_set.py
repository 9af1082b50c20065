"""Golden set editor: table editing, labelling with retrieval, import/export, reset; autosaved.

Every change goes through the corpus's golden session (:mod:`rag_metrics.authoring.golden_session`): the
table saves from the editor's ``on_change`` callback, once per edit; a rerun parses nothing.

``pages/golden_set.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import streamlit as st

from rag_metrics.authoring import golden_edit
from rag_metrics.errors import InputError
from rag_metrics.io.golden import LIST_SEPARATOR
from rag_metrics.types import OUT_OF_SCOPE
from ui import cache_insights, label_editor, state, views
from ui import session as ui_session
from ui.keys import CONFIRM_RESET, EXPORT_FORMAT, GOLDEN_VIEW


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    MULTISELECT_MAX = 5000             # above this many ids, relevant ids are edited as text

    ctx = state.current_or_stop()  # a full run: the header's counts; the table's fragment builds its own
    views.page_header("Golden set editor", ctx)
    views.show_notice()


    def save_status(ctx: state.Lab) -> None:
        """Where the set is saved, and any conflict with another session's save."""
        session = ctx.golden_session
        if session.conflict_path is not None:
            st.warning(
                "Another session saved this golden set after you loaded it, so your edits were **not** written over "
                f"it. Your copy is saved beside it in {views.server_path(session.conflict_path)}. Choose which version "
                "to keep.",
                icon=":material/sync_problem:")
            c1, c2, _ = st.columns([1, 1, 2])
            c1.button("Keep mine (overwrite the saved set)", key="conflict_keep", on_click=state.golden_keep_mine)
            c2.button("Load the saved set", key="conflict_load", on_click=state.golden_reload)
        else:
            if session.disk_changed():  # one stat() per run; the file is read only when it moved
                st.info("The saved golden set was changed by another session since this page loaded it.",
                        icon=":material/sync:")
                st.button("Load the saved set", key="stale_load", on_click=state.golden_reload)
            status = "Autosaved" if session.saved else ("Not modified yet (the shipped set is in use)"
                                                        if state.is_sample(ctx.settings.corpus) else "Not modified yet")
            st.caption(f":material/save: {status} · {views.server_path(session.workspace.path)} · {len(ctx.golden)} "
                       "queries")
        if session.save_error:
            st.error(session.save_error, icon=":material/error:")
        if session.load_report.errors:
            views.report(session.load_report, title="Problems in the saved workspace file")


    # A view selector kept in the session state (st.tabs snaps back to the first tab whenever the page
    # re-renders differently, e.g. after a notice)
    VIEWS = {"edit": ":material/table_edit: Edit the table", "label": ":material/label: Label with retrieval",
             "evidence": ":material/fact_check: Review evidence",
             "draft": ":material/edit_note: Draft with a judge", "judge": ":material/balance: Judge vs people",
             "io": ":material/import_export: Import, export, reset"}
    if ctx.result.n_awaiting_labels and ui_session.value(GOLDEN_VIEW) != "evidence":
        st.info(f"**{ctx.result.n_awaiting_labels} question(s) await evidence review**: a reference answer, no "
                f"label yet. "
                "Open **Review evidence** to propose the passages that support each answer and accept or reject them.",
                icon=":material/fact_check:")
    view = st.segmented_control("View", list(VIEWS), key=GOLDEN_VIEW, default="edit", format_func=VIEWS.get,
                                required=True, label_visibility="collapsed") or "edit"


    # ---- table editor ---------------------------------------------------------------------------------
    @st.fragment
    def edit_table() -> None:
        """The table, its save status and its problems.  A fragment: an edit reruns only this part, and
    evaluates nothing (the metrics of the new set are computed when a page shows them)."""
        views.show_notice()  # the "Saved" toast of this fragment's own edit
        ctx = state.current_or_stop(evaluate=False)
        session, golden, known, unit = ctx.golden_session, ctx.golden, ctx.known_ids, ctx.unit
        save_status(ctx)
        as_text = len(known) > MULTISELECT_MAX
        key, table_id, table = state.golden_editor(relevant_as_text=as_text)
        categories, label_ids = cache_insights.golden_editor_options(golden, known, session.fingerprint, ctx.ids_key)
        if as_text:
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
        st.data_editor(
            table, key=key, num_rows="dynamic", hide_index=True, width="stretch", height=560,
            on_change=state.on_golden_edit, args=(key, table_id),
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
        label_editor.render(ctx, label_ids, as_text)  # long label lists, one row per label
        if not session.edit_report.ok:
            st.error(f"Not saved: {len(session.edit_report.errors)} problem(s) to fix in the table. The metrics use "
                     "the last valid version.", icon=":material/error:")
        problems = cache_insights.golden_validation(golden, known, session.fingerprint, ctx.ids_key)
        if problems or session.edit_report:
            views.report(session.edit_report, show_ok=False, title="Problems in the last edit")
            views.report(problems, show_ok=False, title="Problems")
        else:
            st.caption(":material/check_circle: No problems: every label names a real "
                       f"{unit}, every in-scope question has a label.")


    if view == "edit":
        edit_table()
    else:
        session, golden, known = ctx.golden_session, ctx.golden, ctx.known_ids
        save_status(ctx)

    # ---- evidence review: reference answers become labels ----------------------------------------------
    if view == "evidence":
        from ui import evidence_review

        evidence_review.render(ctx)

    # ---- labelling helper -----------------------------------------------------------------------------
    if view == "label":
        from ui import labelling

        labelling.render(ctx)

    # ---- drafting with a judge, and the judge measured against people ---------------------------------
    if view == "draft":
        from ui import drafting

        drafting.render_drafts(ctx)

    if view == "judge":
        from ui import drafting

        drafting.render_judge_vs_people(ctx)

    # ---- import / export / reset ----------------------------------------------------------------------
    if view == "io":
        from ui import workspace_ui

        st.markdown("**Import**")
        st.caption(f"CSV, JSON or JSONL golden sets replace the whole set; TREC qrels (`qid 0 id grade`) replace "
                   f"the labels of matching query ids. Limit {golden_edit.MAX_IMPORT_BYTES // (1024 * 1024)} MB. "
                   "A file with errors is rejected and your current set is kept.")
        up = st.file_uploader("Golden set or qrels file", type=["csv", "json", "jsonl", "txt", "qrels", "tsv"],
                              key="golden_upload")
        if st.button("Import", key="golden_import", disabled=up is None):
            from rag_metrics.server.policy import limit
            from ui import server

            new, rep = session.import_file(up.getvalue(), up.name, known,
                                           chunks=ctx.chunks.chunks if ctx.unit == "chunk" else None,
                                           max_questions=limit(state.caller(), "golden_questions",
                                                               server.config().budgets))
            if new is None:
                st.error(f"Import rejected: {rep.summary()} in {views.esc(up.name)}. Your golden set is unchanged.",
                         icon=":material/error:")
                views.report(rep, title="Validation report")
            else:
                state.notice_saved(session, session.last_save, f"Imported {len(new)} queries from {views.esc(up.name)}"
                                   + (f" ({rep.summary()})." if rep else "."))
                st.rerun()

        st.markdown("**Export**")
        c1, c2, _ = st.columns([2, 1, 1], vertical_alignment="bottom")
        fmt = c1.segmented_control("Format", list(golden_edit.EXPORT_FORMATS), key=EXPORT_FORMAT, default="jsonl",
                                   format_func=str.upper, required=True) or "jsonl"
        try:  # only the chosen format is built, once per version of the set
            data = cache_insights.golden_export(golden, session.fingerprint, fmt)
            c2.download_button(fmt.upper(), data, file_name=f"golden.{fmt}", mime=golden_edit.EXPORT_FORMATS[fmt],
                               key="golden_export", icon=":material/download:", width="stretch")
        except InputError as err:
            c2.button(fmt.upper(), disabled=True, key="golden_export", width="stretch")
            st.caption(views.esc(str(err)))

        st.markdown("**Undo**")
        workspace_ui.undo_button(ctx.settings.corpus)

        st.markdown("**The whole workspace as one file**")
        workspace_ui.archive_controls()

        st.markdown("**Reset**")
        reset_button, reset_question, _ = state.reset_wording(ctx.settings.corpus)
        if not state.value(CONFIRM_RESET):
            st.button(reset_button, key="reset_ask", icon=":material/restart_alt:",
                      on_click=state.set_value, args=(CONFIRM_RESET, True))
        else:
            st.warning(f"{reset_question} Your edits will be overwritten (export them first to keep a copy).",
                       icon=":material/warning:")
            c1, c2, _ = st.columns([1, 1, 3])
            if c1.button("Yes, reset", key="reset_yes", type="primary"):
                state.golden_reset()
                state.set_value(CONFIRM_RESET, False)
                st.rerun()
            c2.button("Cancel", key="reset_no", on_click=state.set_value, args=(CONFIRM_RESET, False))
