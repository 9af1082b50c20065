"""Streamlit parts of the Systems page: add (upload or connection form), test, list, evaluate,
remove, and the pooled labelling queue.  Logic lives in :mod:`rag_metrics.systems`.

Secrets: in single-user mode connection forms take ``${VAR}`` references only; values come from the
environment or Streamlit secrets (:func:`secrets_env`) at request time and are never stored or
shown.  In class mode the form offers the operator's named connections (stored by name, their
secrets read from the configuration at request time) and typed settings that never resolve a
server variable and reach only what the class's outbound policy allows.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.systems.bundled import BundledSystem
from rag_metrics.systems.evaluation import SystemEvaluation, coverage, evaluate_systems
from rag_metrics.systems.ownership import system_stores
from rag_metrics.systems.pooling import judged_readout, pooled_queue, system_table
from rag_metrics.systems.store import MAX_STORED_BYTES, SystemStore
from rag_metrics.systems.textmatch import UNMATCHED_PREFIX
from ui import cache, state, views
from ui.keys import SYSTEMS_CONN_NAME as KEY_CONN_NAME
from ui.keys import SYSTEMS_KIND as KEY_KIND
from ui.keys import SYSTEMS_NAMED as KEY_NAMED
from ui.keys import SYSTEMS_POOL_K as KEY_POOL_K
from ui.keys import SYSTEMS_UPLOAD as KEY_UPLOAD
from ui.keys import SYSTEMS_UPLOAD_NAME as KEY_UPLOAD_NAME
from ui.stored_systems import evaluate_named, failed_questions, secrets_env, stored_names

__all__ = [
    "KEY_KIND",
    "KEY_UPLOAD",
    "add_connection_form",
    "add_upload_form",
    "evaluate_named",
    "evaluations",
    "judged_note",
    "pool_section",
    "secrets_env",
    "store",
    "system_details",
    "systems_of",
    "stored_names",
    "systems_table",
    "unmatched_contexts",
]



def store(ctx: Any) -> SystemStore:
    """Where this session's new systems for the current corpus are kept: the caller's own space
    (a student's private space in class mode, else the shared one)."""
    return SystemStore.for_corpus(ctx.settings.corpus, space=state.caller().writes_to)


def visible_specs(ctx: Any) -> list[tuple[Any, str]]:
    """``(SystemSpec, space)`` of every stored system this session sees for the current corpus: its
    own and the shared ones (never another student's), own first (:mod:`rag_metrics.systems.ownership`)."""
    seen: dict[str, tuple[Any, str]] = {}
    for space, st_ in system_stores(state.caller(), ctx.settings.corpus):
        for spec in st_.specs():
            seen.setdefault(spec.name, (spec, space))
    return list(seen.values())


def judged_note(ctx: Any) -> None:
    """judged@K of the current system under the metrics with a warning when it is low, where it means
    something (:func:`rag_metrics.systems.pooling.records_nonrelevant`); otherwise what an unlabelled chunk means."""
    r = judged_readout(ctx.golden, float(ctx.result.mean("judged", ctx.k)), ctx.k, ctx.settings.system_name)
    st.caption(views.esc(r.note))
    if r.warning:
        st.warning(r.warning[0].upper() + r.warning[1:] + " (Systems page).", icon=":material/help:")
    failed = failed_questions(ctx.key.system)
    if failed:
        st.warning(f"{failed} question(s) failed on {views.esc(ctx.settings.system_name)} and count as retrieving "
                   "nothing; see which and retry them on the Systems page.", icon=":material/warning:")


def unmatched_contexts(ctx: Any, ids: Any) -> pd.DataFrame:
    """For the drill-down: the logged contexts behind ``unmatched:...`` ids among ``ids`` (the current
    system's ranking), with the closest chunk, its text and similarity; empty when there is none."""
    ids = [str(i) for i in ids if str(i).startswith(UNMATCHED_PREFIX)]
    spec = store(ctx).get(ctx.settings.system) if ids and ctx.settings.system else None
    if spec is None or spec.kind != "upload":
        return pd.DataFrame()
    try:
        system = store(ctx).system(spec, ctx.chunks.chunks, None, ctx.chunks.fingerprint)
    except InputError:
        return pd.DataFrame()
    describe = getattr(system, "unmatched_contexts", None)
    if not callable(describe):
        return pd.DataFrame()
    df = describe(ids)
    df["closest_text"] = [ctx.id_text.get(c, "") if c else "" for c in df["closest_chunk"]]
    return df


def systems_of(ctx: Any) -> tuple[list[tuple[str, Any]], dict[str, str]]:
    """``(name, System)`` pairs (the sidebar's bundled retriever first), and build errors by name."""
    out: list[tuple[str, Any]] = [(f"bundled {ctx.settings.retriever}",
                                   BundledSystem(ctx.memo, f"bundled {ctx.settings.retriever}",
                                                 ctx.chunks.fingerprint))]
    errors: dict[str, str] = {}
    env = secrets_env()
    for spec, space in visible_specs(ctx):  # the shared systems and this session's own, never another's
        owner = SystemStore.for_corpus(ctx.settings.corpus, space=space)
        try:
            out.append((spec.name, owner.system(spec, ctx.chunks.chunks, cache.encoder(), ctx.chunks.fingerprint,
                                                env)))
        except InputError as e:
            errors[spec.name] = str(e)
    return out, errors


def evaluations(ctx: Any, retry_failed: bool = False) -> list[SystemEvaluation]:
    """Every system evaluated with the sidebar's conventions (backends answer from the memo after
    the first time; failed questions are asked again only when ``retry_failed``)."""
    systems, errors = systems_of(ctx)
    with st.spinner("Ranking the golden questions with every system…"):
        evals = evaluate_systems(systems, ctx.golden, ctx.settings.options, ctx.memo.depth,
                                 chunk_to_doc=ctx.chunks.doc if ctx.settings.options.level == "document" else None,
                                 retry_failed=retry_failed, chunks=ctx.chunks.chunks)
    return evals + [SystemEvaluation(n, None, None, e) for n, e in errors.items()]


def retry_button(evals: list[SystemEvaluation]) -> bool:
    """A "Retry failed questions" button, shown when a system has failed questions."""
    failed = sum(len(e.system_run.failures) for e in evals if e.system_run is not None)
    if not failed:
        return False
    st.warning(f"{failed} question(s) failed on live systems and count as retrieving nothing (details below).",
               icon=":material/warning:")
    return st.button("Retry failed questions", key="systems_retry")


# ---- add ---------------------------------------------------------------------------------------
def upload_limit_mb() -> int:
    """The one upload limit of the Systems page, in MB: what the store keeps (``MAX_STORED_BYTES``) and
    what the server lets through (``server.maxUploadSize``), whichever is smaller; the uploader and its
    caption both use it."""
    return int(min(MAX_STORED_BYTES // (1024 * 1024), int(st.get_option("server.maxUploadSize"))))


def add_upload_form(ctx: Any) -> None:
    """Upload a TREC run, CSV/JSON run or RAG log; it is validated, then kept in the workspace."""
    st.caption("TREC run (`qid Q0 id rank score tag`); CSV/TSV with `query_id` or `question`, `chunk_id`, `score` or "
               "`rank`; JSON `{qid: {id: score}}`; JSONL rows with a ranked `ids` list; or a RAG log "
               "(`question`, `contexts`, optional `context_ids`, `answer`, `ground_truth`), whose contexts are "
               "matched to this corpus's chunks by text when they have no ids; or a trace export (OpenInference / "
               "Phoenix spans, Langfuse observations, LangSmith runs; JSON or JSONL). A log with answers is also "
               "judged on the Answers page, without a second upload. "
               f"Up to {upload_limit_mb()} MB; kept in the "
               "workspace folder, so it comes back after a reload.")
    with st.form("systems_upload_form", clear_on_submit=True):
        name = st.text_input("Name", key=KEY_UPLOAD_NAME, placeholder="my production retriever")
        up = st.file_uploader("Run or RAG log", key=KEY_UPLOAD, max_upload_size=upload_limit_mb(),
                              type=["trec", "run", "txt", "tsv", "csv", "json", "jsonl", "ndjson"])
        threshold = st.slider("Fuzzy match threshold (RAG logs without ids)", 50, 100, 90,
                              help="Least rapidfuzz ratio (0-100) between a context and a chunk for a fuzzy match.")
        submitted = st.form_submit_button("Add system", type="primary")
    if submitted:
        if up is None or not (name or "").strip():
            st.error("Give a name and choose a file.")
            return
        try:
            spec, report = store(ctx).add_upload(name, up.name, up.getvalue(), ctx.chunks.chunks, float(threshold))
        except InputError as e:
            views.input_error(e, "Not added")
            return
        if spec is None:
            st.error(f"{views.esc(up.name)} was not added: fix the problems below and upload it again.")
            views.report(report, show_ok=False)
            return
        state.notice(f"Added {views.esc(spec.name)} ({views.esc(spec.filename or '')}).")
        st.rerun()


def _http_settings(in_class: bool) -> dict[str, Any]:
    url = st.text_input("URL", placeholder="http://127.0.0.1:8000/search")
    headers = st.text_area("Headers (one 'Name: value' per line)" if in_class else
                           "Headers (one 'Name: value' per line; secrets as ${VAR})",
                           placeholder="Accept-Language: en" if in_class else "Authorization: Bearer ${MY_TOKEN}",
                           height=80)
    c1, c2, c3, c4 = st.columns(4)
    results_path = c1.text_input("Results path", placeholder="data.hits")
    timeout = c2.number_input("Timeout (s)", 0.5, 120.0, 10.0)
    concurrency = c3.number_input("Concurrency", 1, 64, 4)
    retries = c4.number_input("Retries", 0, 10, 2)
    from rag_metrics.systems.backends.http import parse_header

    hdrs = [list(parse_header(line)) for line in headers.splitlines() if line.strip()]
    return {"url": url, "headers": hdrs, "results_path": results_path or None, "timeout": float(timeout),
            "concurrency": int(concurrency), "retries": int(retries)}


def _pgvector_settings(in_class: bool) -> dict[str, Any]:
    dsn = st.text_input("DSN (host, port, dbname, user, password, sslmode)" if in_class else
                        "DSN (password as ${VAR}, or set PGPASSWORD)",
                        placeholder="postgresql://me@db.example:5432/rag" if in_class else
                        "postgresql://me:${PGPASS}@localhost:5432/rag")
    table = st.text_input("Table", placeholder="public.chunks")
    c1, c2, c3, c4 = st.columns(4)
    return {"dsn": dsn, "table": table, "id_column": c1.text_input("Id column", "id"),
            "embedding_column": c2.text_input("Embedding column", "embedding"),
            "text_column": c3.text_input("Text column", "text") or None,
            "metric": c4.selectbox("Order", ["cosine", "inner_product"])}


def _qdrant_settings(in_class: bool) -> dict[str, Any]:
    where = st.radio("Qdrant", ["server URL", "local folder"], horizontal=True)
    url = st.text_input("URL", placeholder="http://localhost:6333") if where == "server URL" else None
    path = st.text_input("Local folder inside the lab's data folders" if in_class else "Local folder (or :memory:)"
                         ) if where == "local folder" else None
    c1, c2, c3 = st.columns(3)
    api_key = None if in_class else (c2.text_input("API key (as ${VAR})", placeholder="${QDRANT_API_KEY}") or None)
    return {"collection": c1.text_input("Collection"), "url": url or None, "path": path or None,
            "api_key": api_key, "id_payload_key": c3.text_input("Payload field with the chunk id", "chunk_id") or None}


def _named_settings(env: Any) -> dict[str, Any]:
    conns = env.config.connections
    if not conns:
        st.info("The class has no connections yet; the operator declares them in the server's configuration "
                "([lab.connections.<name>]).", icon=":material/info:")
        return {"connection": ""}
    name = st.selectbox("Class connection", sorted(conns), key=KEY_NAMED,
                        format_func=lambda n: f"{n} ({_KIND_LABELS.get(conns[n].kind, conns[n].kind)})")
    return {"connection": name or ""}


_KIND_LABELS = {"connection": "Class connection", "http": "HTTP endpoint", "pgvector": "PostgreSQL + pgvector",
                "qdrant": "Qdrant"}


def add_connection_form(ctx: Any) -> None:
    """Connect an HTTP endpoint, a pgvector table or a Qdrant collection (in class mode also, and
    first, one of the operator's named connections); test it; keep it."""
    env = secrets_env()
    in_class = env.closed  # type: ignore[attr-defined]
    kinds = ["connection", "http", "pgvector", "qdrant"] if in_class else ["http", "pgvector", "qdrant"]
    kind = st.radio("Kind", kinds, key=KEY_KIND, horizontal=True, format_func=_KIND_LABELS.get)
    if in_class:
        st.caption("Class connections are set up by the operator, with their credentials kept on the server. "
                   "Typed settings reach only the hosts the class allows and never use the server's variables, "
                   "passwords or keys. pgvector and Qdrant are queried with the lab's encoder, so they must hold "
                   "embeddings of the same model.")
    else:
        st.caption("Secrets are written as `${VAR}` and read from the environment or `.streamlit/secrets.toml` when "
                   "a request is sent; they are never saved, shown or put in a URL or an export. pgvector and Qdrant "
                   "are queried with the lab's encoder, so they must hold embeddings of the same model.")
    name = st.text_input("Name", key=KEY_CONN_NAME, placeholder=f"my {kind}")
    try:
        if kind == "connection":
            settings = _named_settings(env)
        else:
            settings = {"http": _http_settings, "pgvector": _pgvector_settings,
                        "qdrant": _qdrant_settings}[kind](in_class)
    except InputError as e:
        views.input_error(e)
        return
    c1, c2 = st.columns(2)
    test = c1.button("Test on the first golden question", key="systems_test")
    add = c2.button("Add system", key="systems_add", type="primary")
    if test:
        from rag_metrics.systems.store import SystemSpec, build_system

        try:
            system = build_system(SystemSpec(name or kind, kind, settings=settings), cache.encoder(), env)
            q = next(iter(ctx.golden), None)
            if q is None:
                st.warning("The golden set has no question to send.")
                return
            hits = system.test(q.question, 5)
        except InputError as e:
            views.input_error(e, "Test failed")
            return
        st.success(f"Answered {views.esc(q.question)!s} with {len(hits)} result(s).", icon=":material/check_circle:")
        st.dataframe(pd.DataFrame(hits, columns=["id", "score"]), hide_index=True)
    if add:
        try:
            if kind == "connection":
                from rag_metrics.server.connections import named_connection

                named_connection(env, str(settings.get("connection", "")))
            spec = store(ctx).add_connection(name or str(settings.get("connection", "")), kind, settings)
        except InputError as e:
            views.input_error(e, "Not added")
            return
        state.notice(f"Added {views.esc(spec.name)} ({views.esc(spec.description)}).")
        st.rerun()


# ---- results -----------------------------------------------------------------------------------
def systems_table(ctx: Any, evals: list[SystemEvaluation]) -> None:
    """Metrics at K with judged@K beside them, one row per system; warnings under the table."""
    k = ctx.k
    ok = {e.name: e.result for e in evals if e.ok}
    for name, result in list(ok.items()):  # no row of zeros computed from nothing: the banner says why
        if result.no_verdict is not None and result.no_verdict.kind != "unlocated":
            views.verdict_banner(result, name)
            del ok[name]
    if ok:
        df = system_table(ok, [m for m in ctx.settings.metrics if m != "judged"], k)
        warn = df.pop("warning")
        readout = judged_readout(ctx.golden, float("nan"), k, "")
        if not readout.meaningful:  # judged@K would only repeat the share of relevant results
            df = df.drop(columns=[f"judged@{k}"])
            st.caption(views.esc(readout.note))
        st.dataframe(df, hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(c, format="%d" if c in ("answered", "absent")
                                                                     else "%.3f") for c in df.columns[1:]})
        if df["absent"].any():
            st.caption("answered / absent: golden questions in the means that the system has results for, and those "
                       "not in its results (not in the log). Absent questions count 0 (trec_eval -c) unless the "
                       "sidebar's conventions evaluate only the answered ones.")
        for w in warn.dropna():
            st.warning(w, icon=":material/help:")
        for name, result in ok.items():  # each system whose contexts could not all be placed in the corpus
            views.verdict_banner(result, name)
    for e in evals:
        if not e.ok:
            st.error(f"**{views.esc(e.name)}**: {views.esc(e.error or '')}", icon=":material/error:")


def system_details(ctx: Any, evals: list[SystemEvaluation]) -> None:
    """Per system: coverage, notes, match report, unmatched rows, failures; remove button."""
    visible = {s.name: (s, space) for s, space in visible_specs(ctx)}
    specs = {n: s for n, (s, _) in visible.items()}
    who = state.caller()
    for e in evals:
        spec = specs.get(e.name)
        title = f"{e.name} — {spec.description}" if spec else f"{e.name} — the sidebar's retriever"
        with st.expander(views.esc(title), expanded=False):  # a URL or file name is user text
            if e.system_run is not None:
                cov = coverage(e.system_run, ctx.golden)
                c = st.columns(5)
                for col, (label, key) in zip(c, [("Questions", "questions"), ("Answered", "answered"),
                                                 ("Failed", "failed"), ("Absent", "absent"),
                                                 ("Unmatched rows", "unmatched_rows")]):
                    col.metric(label, cov[key])
                for note in e.system_run.notes:
                    st.caption(views.esc(note))
                if e.result is not None and e.result.located is not None and e.result.located.total:
                    st.caption(views.esc(e.result.located.note()))
                cm = e.system_run.context_match
                if cm is not None and (cm.fuzzy_examples or cm.unmatched_examples):
                    st.dataframe(pd.DataFrame(cm.fuzzy_examples + cm.unmatched_examples,
                                              columns=["where", "context", "matched id", "similarity"]),
                                 hide_index=True, width="stretch")
                if e.system_run.unmatched_rows:
                    st.dataframe(pd.DataFrame([(u.where, u.key, u.question, u.reason)
                                               for u in e.system_run.unmatched_rows],
                                              columns=["where", "key", "question", "why not used"]),
                                 hide_index=True, width="stretch")
                if e.system_run.failures:
                    st.dataframe(pd.DataFrame([(f.query_id, f.question, f.message) for f in e.system_run.failures],
                                              columns=["query", "question", "failure"]),
                     hide_index=True, width="stretch")
            if spec is None:
                continue
            space = visible[spec.name][1]
            if not who.may_write(space):
                st.caption("Shared by the teacher: read-only here (add your own systems above).")
            elif st.button("Remove", key=f"systems_remove_{spec.name}"):
                if SystemStore.for_corpus(ctx.settings.corpus, space=space).remove(spec.name):
                    state.notice(f"Removed {views.esc(spec.name)}.")
                st.rerun()


def pool_section(ctx: Any, evals: list[SystemEvaluation]) -> None:
    """The pooled labelling queue, and labelling one chunk at a time into the golden set."""
    runs = {e.name: e.system_run.run for e in evals if e.system_run is not None}
    if not runs:
        return
    k = int(st.number_input("Pool depth K", 1, ctx.memo.depth, value=ctx.k, key=KEY_POOL_K))
    pool = pooled_queue(ctx.golden, runs, k, ctx.id_text)
    if pool.empty:
        st.success(f"Every chunk in the top {k} of every system carries a label.", icon=":material/check_circle:")
        return
    st.caption(f"{len(pool)} unjudged chunk(s) in the top {k} of {len(runs)} system(s), grouped by question, the "
               "chunks retrieved by the most systems first (TREC pooling). Labels go to the golden set like any "
               "other edit.")
    st.dataframe(pool, hide_index=True, width="stretch", height=300)
    options = list(range(len(pool)))
    pick = st.selectbox("Chunk to label", options, key="systems_pool_pick",
                        format_func=lambda i: f"{pool.at[i, 'query_id']} · {pool.at[i, 'chunk_id']}")
    grade = st.radio("Grade", [0, 1, 2, 3], horizontal=True, key="systems_pool_grade",
                     format_func={0: "not relevant", 1: "1", 2: "2", 3: "3 (answers fully)"}.get)
    if st.button("Save label", key="systems_pool_save"):
        row = pool.iloc[int(pick)]
        qid, cid = str(row["query_id"]), str(row["chunk_id"])
        try:
            state.golden_judge(qid, cid, int(grade))  # the golden session's labelling path (autosave, undo)
        except InputError as e:
            views.input_error(e)
            return
        st.rerun()


def render() -> None:
    """Draw the page (its script's body, run on every rerun)."""
    ctx = state.current_or_stop()
    st.title("Systems")
    views.conventions_caption()
    st.caption(f"Every system ranks the same {len(ctx.golden)} golden questions of "
               f"{views.esc(ctx.corpus.label or ctx.settings.corpus)} and is judged the same way (K = {ctx.k} and the "
               "conventions come from the sidebar).")
    msg = state.notice()
    if msg:
        getattr(st, msg[0])(msg[1])

    add_upload, add_conn = st.tabs(["Add by upload", "Add by connection"])
    with add_upload:
        add_upload_form(ctx)
    with add_conn:
        add_connection_form(ctx)

    evals = evaluations(ctx)
    if retry_button(evals):
        evals = evaluations(ctx, retry_failed=True)
    views.section("Metrics", f"Means at K = {ctx.k}, with judged@{ctx.k} (the share of the top {ctx.k} that carries a "
                  "label) beside them when the golden set records non-relevant labels.")
    systems_table(ctx, evals)
    views.section("Coverage and matching", "How each system's rows were matched to the golden questions.")
    system_details(ctx, evals)
    views.section("Pooled labelling queue", "Unjudged chunks in the top K of every system.")
    pool_section(ctx, evals)
