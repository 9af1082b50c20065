"""Corpus explorer: browse chunks, query live, re-chunk (labels carried across), load another corpus.

``pages/corpus_explorer.py`` is its thin script: it only calls :func:`render`.
"""
from __future__ import annotations

import streamlit as st

from rag_metrics.authoring import golden_edit
from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.insights import readouts
from rag_metrics.io.corpus import MAX_FILE_BYTES, TEXT_SUFFIXES
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, MIN_CHUNK_SIZE, chunk_corpus
from rag_metrics.retrieval.defaults import DEFAULT_RETRIEVER
from rag_metrics.workspace.corpora import MAX_CORPUS_BYTES
from ui import cache, cache_insights, paging, server, session, state, views
from ui.keys import BROWSE_PAGE, CANCEL_LOAD, CANCEL_RECHUNK, LABEL_REPORT


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    MAX_UPLOAD_TOTAL = 20 * 1024 * 1024  # bytes, all uploaded files together

    ctx = state.current_or_stop()
    views.page_header("Corpus explorer", ctx)
    views.show_notice()
    chunks = ctx.chunks
    level = ctx.settings.options.relevance_level
    unit = "document" if ctx.corpus.level == "document" else "chunk"

    c = st.container(key="cards_corpus").columns(4)  # wraps when narrow (ui.shell's CSS)
    c[0].metric("Documents", len(ctx.corpus.corpus), border=True)
    c[1].metric("Chunks", len(chunks.chunks), border=True)
    c[2].metric("Mean chunk length", f"{cache_insights.mean_chunk_length(chunks, chunks.fingerprint):.0f} chars",
                border=True)
    c[3].metric(f"Labelled {unit}s", len(golden_edit.label_counts(ctx.golden, level)), border=True,
                help=f"{unit.capitalize()}s labelled relevant by at least one golden question.")

    views.cancelled_notice(CANCEL_RECHUNK, "Re-chunking")
    views.cancelled_notice(CANCEL_LOAD, "Loading the corpus")
    tab_browse, tab_query, tab_chunk, tab_load = st.tabs([
        ":material/view_list: Browse chunks", ":material/search: Live query",
        ":material/content_cut: Chunking", ":material/upload_file: Load another corpus"])

    # ---- browse ---------------------------------------------------------------------------------------
    with tab_browse:
        docs = [d.id for d in ctx.corpus.corpus]
        f1, f2 = st.columns([2, 2])
        pick = f1.multiselect("Documents", docs, key="browse_docs", placeholder="All documents")
        needle = f2.text_input("Text contains", key="browse_text", placeholder="e.g. refund")
        table = cache.chunk_table(chunks, ctx.golden if unit == "chunk" else None, chunks.fingerprint,
                                  ctx.golden_session.fingerprint if unit == "chunk" else "", level)
        if pick:
            table = table[table["document"].isin(pick)]
        if needle.strip():
            table = table[table["text"].str.contains(needle.strip(), case=False, regex=False)]
        st.caption(f"{len(table):,} chunk(s). Hover a text cell to read it whole; 'labelled' counts the golden "
                   "questions that label the chunk relevant.")
        st.dataframe(paging.page(table, BROWSE_PAGE, what="chunks"), hide_index=True, width="stretch", height=460,
                     column_config={"id": st.column_config.TextColumn("Chunk", width="medium"),
                                    "document": st.column_config.TextColumn("Document", width="medium"),
                                    "start": st.column_config.NumberColumn("Start", width="small"),
                                    "end": st.column_config.NumberColumn("End", width="small"),
                                    "chars": st.column_config.NumberColumn("Chars", width="small"),
                                    "labelled": st.column_config.NumberColumn("Labelled", width="small"),
                                    "text": st.column_config.TextColumn("Text", width="large")})

    # ---- live query -----------------------------------------------------------------------------------
    with tab_query:
        FREE = "__free__"
        qs = {q.id: q for q in ctx.golden}
        a, b = st.columns([3, 1])
        src = a.selectbox("Query", [FREE, *qs], key="live_pick",
                          format_func=lambda i: "✎ Free text" if i == FREE else f"{i} · {qs[i].question}")
        n = b.number_input("Results", 1, ctx.memo.depth, min(10, ctx.memo.depth), key="live_n")
        if src == FREE:
            text = st.text_input("Ask the corpus", key="live_text",
                                 placeholder="e.g. how do I turn on two-factor login?")
            labels = None
        else:
            text = qs[src].question
            labels = dict(qs[src].relevant)
            st.caption("Relevance comes from this question's golden labels.")
        if text.strip():
            try:
                with st.spinner("Retrieving…"):
                    live = readouts.live_results(ctx.memo, text, int(n), chunks.text, chunks.doc, labels, level)
            except InputError as err:
                views.input_error(err, "Retrieval failed")
            else:
                if labels is not None:
                    live["relevance"] = [views.relevance_chip(g, r) for g, r in zip(live["grade"], live["relevant"])]
                cols = ["rank", *(["relevance"] if labels is not None else []), "id", "score", "text"]
                st.dataframe(live[cols], hide_index=True, width="stretch",
                             column_config={"rank": st.column_config.NumberColumn("Rank", width="small"),
                                            "relevance": st.column_config.TextColumn("Relevance", width="medium"),
                                            "id": st.column_config.TextColumn("Chunk", width="medium"),
                                            "score": st.column_config.NumberColumn("Score", format="%.3f",
                                                                                   width="small"),
                                            "text": st.column_config.TextColumn("Text", width="large")})
                st.caption(f"Retriever: {ctx.settings.retriever}. Each distinct question text is retrieved once "
                           f"(to depth {ctx.memo.depth}) and remembered.")
        else:
            st.info("Type a question, or pick a golden one.")

    # ---- chunking ---------------------------------------------------------------------------------------
    with tab_chunk:
        st.caption("Chunks are character spans cut on paragraph, sentence or word boundaries. Re-chunking "
                   "re-indexes the corpus (embeddings are cached by text, so only new chunk texts are embedded) "
                   "and carries the golden labels to the new chunks through their document and character span.")
        size0, overlap0 = ctx.settings.chunk_size, ctx.settings.chunk_overlap
        with st.form("chunking"):
            a, b = st.columns(2)
            size = a.number_input("Chunk size (characters)", MIN_CHUNK_SIZE, 20000, size0, step=50, key="chunk_size_in")
            overlap = b.number_input("Overlap (characters)", 0, 10000, overlap0, step=25, key="chunk_overlap_in")
            go = st.form_submit_button("Re-chunk and re-index", type="primary", icon=":material/refresh:")
        if go:
            if (int(size), int(overlap)) == (size0, overlap0):
                st.info("These are the current settings.")
            else:
                bar = st.progress(0.0, text=f"Chunking {len(ctx.corpus.corpus):,} documents…")
                views.cancel_button(CANCEL_RECHUNK, "re-chunking")
                try:
                    embedding = views.progress_callback(bar, "Embedding new chunk texts")
                    with views.costly("Re-chunking"):  # one of the process's worker slots (lab.budgets.workers)
                        rep = state.rechunk(int(size), int(overlap), embedding)
                except InputError as err:
                    bar.empty()
                    views.input_error(err)
                else:
                    bar.progress(1.0, text="Done")
                    msg = f"Re-chunked at {int(size)}/{int(overlap)}."
                    if rep is not None:
                        msg += f" Labels: {rep.summary()}."
                        state.set_value(LABEL_REPORT, rep.to_rows())
                    state.notice(msg)
                    st.rerun()
        rows = state.value(LABEL_REPORT)
        if rows:
            with st.expander("Label carry-over report of the last re-chunking"):
                st.dataframe([r for r in rows if r["status"] != "kept"] or rows, hide_index=True, width="stretch")

    # ---- load another corpus -------------------------------------------------------------------------------
    def _prewarm(name: str) -> None:
        """Chunk, embed and index a newly loaded corpus now, each step with what it does and how far
    (the next run then finds everything cached).  Cancelled (the click stops this run at its next
    batch) or failed, the corpus stays loaded but the one selected before stays selected: no later
    run embeds it without a progress bar and a Cancel button."""
        before = session.value(state.KEY_CORPUS)
        try:
            _prewarm_steps(name)
        except BaseException:
            if before and before != name:
                state.set_widget(state.KEY_CORPUS, before)
            raise


    def _prewarm_steps(name: str) -> None:
        bar = st.progress(0.0, text=f"Chunking {len(state.corpus_entry(name).corpus):,} documents…")
        views.cancel_button(CANCEL_LOAD, "loading")
        chunk_set = state.chunk_set(name)
        model = state.corpus_entry(name).model  # the one encoder rule: its language picks it
        kind = state.value(state.KEY_RETRIEVER) or DEFAULT_RETRIEVER
        try:
            if kind != "bm25":
                bar.progress(0.0, text=f"{len(chunk_set.chunks):,} chunks: loading the embedding model…")
                with views.costly("Embedding chunks"):  # one of the process's worker slots (lab.budgets.workers)
                    cache.prewarm_embeddings(chunk_set, views.progress_callback(bar, "Embedding chunks"), model)
            bar.progress(1.0, text=f"Indexing {len(chunk_set.chunks):,} chunks ({kind})…")
            cache.config_memo(chunk_set, chunk_set.fingerprint, kind, model)  # the corpus's model, as ui.state.current
        except InputError as err:
            bar.empty()
            views.input_error(err, "Cannot embed the corpus (switch the retriever to BM25 to use it without a model)")
            st.stop()
        bar.empty()


    with tab_load:
        st.caption(f"Upload Markdown/text files (one document each) or a JSONL corpus (`id`, `text`, optional "
                   f"`title`), up to {MAX_FILE_BYTES // (1024 * 1024)} MB per file and "
                   f"{MAX_UPLOAD_TOTAL // (1024 * 1024)} MB in total. The corpus is kept in the workspace (up to "
                   f"{MAX_CORPUS_BYTES // (1024 * 1024)} MB; a larger one stays in this session only and its label "
                   "says so) "
                   "and comes back after a reload; its golden set is saved beside it under the corpus name.")
        files = st.file_uploader("Documents", type=[s.lstrip(".") for s in TEXT_SUFFIXES] + ["jsonl"],
                                 accept_multiple_files=True, key="corpus_upload")
        name = st.text_input("Corpus name", key="corpus_upload_name", placeholder="my-docs")
        if st.button("Load uploaded files", key="corpus_upload_go", disabled=not files):
            from rag_metrics.server.budgets import mb
            from rag_metrics.server.policy import limit

            total = sum(f.size for f in files)
            seat_cap = limit(state.caller(), "corpus_mb", server.config().budgets)  # None: not limited
            too_big = seat_cap is not None and total > mb(seat_cap)
            if total > MAX_UPLOAD_TOTAL:
                st.error(f"The files hold {total:,} bytes; the limit is {MAX_UPLOAD_TOTAL:,}. Upload fewer files "
                         "or use the CLI for large corpora.", icon=":material/error:")
            elif too_big:
                st.error(f"The files hold {total:,} bytes; this seat may load {seat_cap} MB "
                         "(lab.budgets.corpus_mb). Upload fewer files, or ask the teacher.", icon=":material/savings:")
            else:
                from rag_metrics.io.corpus import corpus_from_files
                from ui.embed_budget import upload_refusal

                rep = ValidationReport()
                cname = (name or "upload").strip()
                try:
                    corpus = corpus_from_files({f.name: f.getvalue() for f in files}, name=cname, report=rep)
                except InputError as err:
                    views.input_error(err, "Upload rejected")
                else:
                    dense = (state.value(state.KEY_RETRIEVER) or DEFAULT_RETRIEVER) != "bm25"
                    # its chunks at the default chunking (a new corpus's): counted in a blink, embedded in minutes
                    texts = len(chunk_corpus(corpus, DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP)) if dense else 0
                    refused = upload_refusal(state.caller(), texts, total)
                    if refused:
                        st.error(views.esc(refused), icon=":material/savings:")
                        st.stop()
                    if state.is_sample(cname):
                        cname = f"{cname}-upload"
                    state.add_corpus(cname, corpus, label=f"Upload: {cname}")
                    _prewarm(cname)
                    state.notice(f"Loaded {len(corpus)} document(s) as “{views.esc(cname)}”." +
                                 (f" {rep.summary()}." if rep else ""))
                    st.rerun()
        st.divider()
        path, folders = server.beir_field()
        if st.button("Load BEIR folder", key="beir_go", disabled=not path.strip()):
            from pathlib import Path

            from rag_metrics.io.trec import load_beir

            try:
                with st.spinner("Reading the BEIR folder (corpus, queries, qrels)…"):
                    corpus, golden = load_beir(folders.confine(path.strip(), "BEIR folder"))
            except InputError as err:
                views.input_error(err, "Cannot load the BEIR folder")
            else:
                cname = Path(path.strip()).name or "beir"
                state.add_corpus(cname, corpus, level="document", golden=golden, label=f"BEIR: {cname}")
                _prewarm(cname)
                state.notice(f"Loaded {len(corpus)} documents and {len(golden)} judged queries from {views.esc(cname)} "
                             "(document-level labels: a document takes the rank of its best chunk).")
                st.rerun()
