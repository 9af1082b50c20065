"""Bring your system: from a RAG app's files to a verdict on one page.

Drop the files (corpus, golden set or reference answers, run / RAG log / trace export); the lab says in
one line what it read from each (:func:`rag_metrics.formats.describe_bytes`, the reader the CLI uses);
one button brings them in through the existing places (a corpus as on the Corpus explorer, a golden
set through the golden session as the Golden set editor imports it, a system through the Systems
store); labels to confirm are linked to the Golden set editor; the verdict is the system's metric
cards.  The Corpus explorer, the Golden set editor, Systems and the sidebar stay, for details.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import streamlit as st

from rag_metrics.authoring import golden_change as change
from rag_metrics.authoring.golden_change import Outcome, SystemUpload, name_problems
from rag_metrics.authoring.golden_edit import import_size_problem
from rag_metrics.errors import InputError
from rag_metrics.formats import FileRead, describe_bytes
from rag_metrics.io.corpus import corpus_from_files
from rag_metrics.server.budgets import mb
from rag_metrics.server.policy import budget_message, limit
from rag_metrics.systems.evaluation import evaluate_systems
from rag_metrics.systems.store import SystemStore
from rag_metrics.types import OUT_OF_SCOPE, GoldenQuery, GoldenSet
from ui import bring_mapping, server, state, systems, views, workers
from ui import session as ui_session
from ui.keys import BRING_FILES as KEY_FILES
from ui.keys import BRING_NAME as KEY_NAME
from ui.keys import BRING_PAIR as KEY_PAIR
from ui.keys import BRING_PENDING as KEY_PENDING
from ui.keys import BRING_READ as _READ_CACHE
from ui.keys import BRING_SYSTEM as KEY_SYSTEM

__all__ = ["KEY_FILES", "KEY_NAME", "KEY_SYSTEM", "Dropped", "bring_in", "labels_to_confirm", "offers_golden_from_log",
           "read_dropped", "render_read", "verdict"]


#: What a kind of file brings in.
ROLES = {"trec_qrels": "golden", "beir_qrels": "golden", "json_qrels": "golden", "golden": "golden",
         "llamaindex": "golden", "queries": "golden", "corpus": "corpus", "documents": "corpus",
         "trec_run": "system", "json_run": "system", "run_table": "system", "rag_log": "system", "trace": "system"}
_ROLE_WORDS = {"golden": "golden set", "corpus": "corpus", "system": "system to evaluate"}


@dataclass
class Dropped:
    """One dropped file: what was read (or why not), and what it brings in (``role``)."""

    name: str
    data: bytes
    read: FileRead | None = None
    error: str | None = None
    roles: list[str] = field(default_factory=list)


def _describe(data: bytes, name: str) -> FileRead:
    """:func:`describe_bytes`; in class mode in a worker with a memory limit (:func:`ui.workers.read`)."""
    return workers.read(describe_bytes, data, name, what=name)


def _read_one(name: str, data: bytes) -> Dropped:
    if PurePath(name).suffix.lower() in (".md", ".markdown", ".txt"):
        try:
            got = _describe(data, name)
        except InputError:  # prose, not a TREC file: a document of the corpus
            return Dropped(name, data, FileRead("documents", f"{name}: a document ({len(data):,} bytes) for the "
                                                             "corpus"), roles=["corpus"])
        return Dropped(name, data, got, roles=[ROLES.get(got.kind, "")])
    try:
        got = _describe(data, name)
    except InputError as e:
        return Dropped(name, data, None, str(e))
    roles = ["golden", "corpus"] if got.kind == "llamaindex" else [ROLES.get(got.kind, "")]
    return Dropped(name, data, got, roles=[r for r in roles if r])


def _read_mapped(name: str, data: bytes, spec: str) -> Dropped:
    """A file read through its column mapping: the rows it maps to (JSON lines in the readers' names)
    are what is brought in."""
    from rag_metrics.io.mapping import apply_mapping

    try:
        mdata, mname = bring_mapping.limited(apply_mapping, data, name, spec, what=name)
    except InputError as e:
        return Dropped(name, data, None, str(e))
    got = _read_one(mname, mdata)
    return got if got.read is not None else Dropped(name, data, None, got.error)


def _question_budget() -> int | None:
    """This session's ``lab.budgets.golden_questions`` (``None``: not limited)."""
    return limit(state.caller(), "golden_questions", server.config().budgets)


def read_dropped(files: list[tuple[str, bytes]]) -> list[Dropped]:
    """Each file read once per content (kept in the session by name and hash); a golden set over the
    seat's budget is refused on its size, before it is parsed."""
    memo: dict[str, Dropped] = ui_session.default(_READ_CACHE, {})
    out = []
    cap = _question_budget()
    for name, data in files:
        spec = bring_mapping.mapping_for(name, data)  # a column mapping given for it, or kept for its shape
        key = f"{name}\0{hashlib.sha256(data).hexdigest()}\0{spec or ''}"
        too_big = import_size_problem(data, name, cap, max_bytes=None, role_known=False)
        if too_big is not None:
            out.append(Dropped(name, data, None, too_big))
            continue
        if key not in memo:
            memo[key] = _read_one(name, data) if not spec else _read_mapped(name, data, spec)
        out.append(memo[key])
    if len(memo) > 64:
        memo.clear()
    return out


#: Kinds of judgments without questions: dropped with a run, they are that run's qrels.
QRELS_KINDS = ("trec_qrels", "beir_qrels", "json_qrels")


def pair_of(items: list[Dropped]) -> tuple[Dropped, list[Dropped]] | None:
    """Qrels dropped with runs (and no corpus): ``(qrels, runs)``, evaluated against each other as
    ``rag-metrics evaluate --qrels Q --run R`` does, not against the app's golden set; else None."""
    usable = [it for it in items if it.read is not None]
    if any("corpus" in it.roles for it in usable):
        return None
    qrels = [it for it in usable if it.read is not None and it.read.kind in QRELS_KINDS]
    runs = _systems_of(usable)
    if len(qrels) != 1 or not runs:
        return None
    return qrels[0], runs


def render_read(items: list[Dropped]) -> None:
    """One line per file: what the lab read and what it brings in, or why it was refused."""
    pair = pair_of(items)
    for it in items:
        if it.read is None:
            st.error(views.esc(it.error or f"{it.name}: not read"), icon=":material/error:")
            continue
        use = " and ".join(_ROLE_WORDS[r] for r in it.roles if r in _ROLE_WORDS)
        if pair is not None and it is pair[0]:
            use = "judgments for " + ", ".join(r.name for r in pair[1])
        elif pair is not None and it in pair[1]:
            use = f"run scored against {pair[0].name}"
        st.success(views.esc(it.read.summary) + (f" → **{use}**" if use else ""), icon=":material/check_circle:")
        for w in it.read.warnings[:3]:
            st.caption(":material/warning: " + views.esc(w))


def offers_golden_from_log(items: list[Dropped]) -> bool:
    """True when no golden set was dropped but a log with reference answers was: its questions can
    start the golden set."""
    usable = [it for it in items if it.read is not None]
    if any("golden" in it.roles for it in usable):
        return False
    return any(it.read is not None and it.read.log is not None and any(r.ground_truth for r in it.read.log)
               for it in usable)


def _corpus_of(items: list[Dropped]) -> tuple[Any, str, str] | None:
    """The corpus the files give: ``(Corpus, level, name)`` or None."""
    for it in items:
        if it.read is not None and it.read.kind == "llamaindex":
            return it.read.corpus, "document", PurePath(it.name).stem
    docs = {it.name: it.data for it in items if "corpus" in it.roles and it.read is not None}
    if not docs:
        return None
    name = PurePath(next(iter(docs))).stem if len(docs) == 1 else "my corpus"
    return corpus_from_files(docs, name=name), "chunk", name


def _golden_of(items: list[Dropped]) -> Dropped | None:
    return next((it for it in items if "golden" in it.roles and it.read is not None), None)


def _systems_of(items: list[Dropped]) -> list[Dropped]:
    return [it for it in items if "system" in it.roles and it.read is not None]


def _over_budget(corpus: tuple[Any, str, str] | None, gold: Dropped | None) -> str | None:
    """Why the corpus or golden set brought in is over this seat's budget (``lab.budgets.corpus_mb``,
    ``golden_questions``: the same as the Corpus explorer's upload and the golden-set import)."""
    budgets = server.config().budgets
    if corpus is not None:
        size = sum(len(d.text.encode("utf-8")) for d in corpus[0])
        over = budget_message(state.caller(), "corpus_mb", budgets, -(-size // mb(1)), "MB of corpus text")
        if over:
            return f"Nothing brought in: {over}"
    golden = getattr(gold.read, "golden", None) if gold is not None else None
    if golden is not None:
        over = budget_message(state.caller(), "golden_questions", budgets, len(golden), "golden questions")
        if over:
            return f"Nothing brought in: {over}"
    return None


def _system_name(name: str, it: Dropped, n: int) -> str:
    return (name or PurePath(it.name).name.split(".")[0]).strip() + (f" {n + 1}" if n else "")


def _golden_from_log(ctx: Any, items: list[Dropped]) -> GoldenSet | None:
    log = next((it.read.log for it in _systems_of(items) if it.read is not None and it.read.log is not None), None)
    if log is None:
        return None
    return GoldenSet(tuple(GoldenQuery(f"q{n:03d}", r.question, "", {}, r.ground_truth or "")
                           for n, r in enumerate(log.rows, 1)), name=ctx.settings.corpus)


def bring_in(ctx: Any, items: list[Dropped], name: str, golden_from_log: bool = False) -> Outcome:
    """Bring the files in, whole or not at all (:func:`rag_metrics.authoring.golden_change.bring_in`:
    every precondition, the system names included, is checked before anything is written); returns
    what was done or refused.  A new corpus is selected first (the page reruns and the rest follows on
    the next run, through :data:`KEY_PENDING`, checked again in full)."""
    pair = pair_of(items)
    if pair is not None:  # qrels and runs dropped together: each other's, as the CLI reads them
        ui_session.set_value(KEY_PAIR, {"name": name, "qrels": (pair[0].name, pair[0].data),
                                      "runs": [(it.name, it.data) for it in pair[1]]})
        ui_session.pop(KEY_SYSTEM, None)
        return Outcome(done=[f"{', '.join(it.name for it in pair[1])} scored against {pair[0].name} (dropped "
                             "together: as rag-metrics evaluate --qrels --run reads them; the app's golden set and "
                             "systems are unchanged)"])
    ui_session.pop(KEY_PAIR, None)
    corpus = _corpus_of(items)
    gold = _golden_of(items)
    over = _over_budget(corpus, gold)
    if over:
        return Outcome(refused=[over.removeprefix("Nothing brought in: ")])
    uploads = [SystemUpload(_system_name(name, it, n), it.name, it.data) for n, it in enumerate(_systems_of(items))]
    if corpus is not None:
        c, level, cname = corpus
        target = SystemStore.for_corpus(cname, space=state.caller().writes_to)
        taken = name_problems(target, [u.name for u in uploads])
        if taken:
            return Outcome(refused=taken)
        seed = gold.read.golden if gold is not None and gold.read is not None and gold.read.kind == "llamaindex" \
            else None
        state.add_corpus(cname, c, level=level, golden=seed)
        rest = [it for it in items if "system" in it.roles
                or ("golden" in it.roles and "corpus" not in it.roles and it is not gold)
                or (it is gold and seed is None and "corpus" not in it.roles)]
        ui_session.set_value(KEY_PENDING, {"name": name, "golden_from_log": golden_from_log,
                                         "files": [(it.name, it.data) for it in rest],
                                         # a corpus dropped with a log is the log's: its questions start the
                                         # corpus's golden set when it has none (nothing is replaced)
                                         "log_corpus": gold is None and _golden_from_log(ctx, items) is not None})
        return Outcome(done=[f"Corpus {cname!r} selected ({len(c)} documents)"
                             + (" with its golden set" if seed else "")])
    session = None
    golden: GoldenSet | None = None
    done, refused = "", []
    if gold is not None and gold.read is not None:
        session = state.golden_session()
        if gold.read.kind in ("trec_qrels", "beir_qrels", "json_qrels"):
            from rag_metrics.formats import sniff

            s = sniff(gold.data, gold.name, role="qrels")
            golden, rep = session.check_import(s.data, s.filename if s.kind != "json_qrels" else gold.name + ".txt",
                                               ctx.known_ids, max_questions=_question_budget())
            if golden is None:
                refused.append(f"golden set not changed: {rep.summary()} in {gold.name}")
            done = f"Labels of {gold.name} imported into the golden set ({len(golden or ())} questions)"
        elif gold.read.golden is not None:
            golden = gold.read.golden
            done = f"Golden set replaced by {gold.name} ({len(golden)} questions)"
    elif golden_from_log:
        golden = _golden_from_log(ctx, items)
        if golden is not None:
            session = state.golden_session()
            kept = "; the set it replaced is kept in Undo" if len(session.golden) else ""
            done = (f"Golden set started from the log's {len(golden)} questions and reference answers (no labels "
                    f"yet: confirm them below{kept})")
    out, added = change.bring_in(session, systems.store(ctx), golden=golden, golden_done=done, uploads=uploads,
                                 chunks=ctx.chunks.chunks, max_questions=_question_budget(), refused=refused)
    if added:
        ui_session.set_value(KEY_SYSTEM, added[-1].name)
    return out


def labels_to_confirm(ctx: Any) -> None:
    """How many golden questions have no label yet, with the way to the review."""
    golden = ctx.golden

    unlabelled = [q for q in golden if q.category != OUT_OF_SCOPE and not q.has_relevant]
    drafted = [q for q in golden if getattr(q, "drafted", False)]
    if not unlabelled and not drafted:
        st.caption(f":material/check_circle: Every one of the {len(golden)} golden questions has labels.")
        return
    parts = []
    if unlabelled:
        parts.append(f"{len(unlabelled)} of {len(golden)} golden questions have no relevant chunk yet")
    if drafted:
        parts.append(f"{len(drafted)} carry labels a judge drafted")
    st.info("; ".join(parts) + ". Confirm them before trusting the verdict: the Golden set editor's labelling "
            "helper and evidence review propose chunks from the reference answers.", icon=":material/rule:")
    st.page_link("pages/golden_set.py", label="Review and confirm labels (Golden set editor)", icon=":material/rule:")


def verdict(ctx: Any, name: str) -> bool:
    """The brought-in system's metric cards at the sidebar's K; False when it is not (or no longer) there."""
    found, errors = systems.systems_of(ctx)
    chosen = [(n, s) for n, s in found if n == name]
    if name in errors:
        st.error(f"**{views.esc(name)}**: {views.esc(errors[name])}", icon=":material/error:")
        return True
    if not chosen:
        return False
    with st.spinner(f"Ranking the golden questions with {name}…"):
        (ev,) = evaluate_systems(chosen, ctx.golden, ctx.settings.options, ctx.memo.depth,
                                 chunk_to_doc=ctx.chunks.doc if ctx.settings.options.level == "document" else None,
                                 chunks=ctx.chunks.chunks)  # judged as the Dashboard judges it
    if not ev.ok:
        st.error(f"**{views.esc(name)}**: {views.esc(ev.error or '')}", icon=":material/error:")
        return True
    res = ev.result
    metrics = [m for m in ctx.settings.metrics if m != "judged"]
    st.markdown(f"**{views.esc(name)}** on {res.n_queries} golden questions of "
                f"{views.esc(ctx.corpus.label or ctx.settings.corpus)} · {views.esc(views.answered_absent(res))}")
    if views.verdict_banner(res, name):  # no verdict: the banner says why, and no card shows a number
        views.metric_cards(res.summary(metrics, [ctx.k]), key="bring")
    if ev.system_run is not None:
        for note in ev.system_run.notes[:4]:
            st.caption(views.esc(note))
        if ev.system_run.unmatched_rows:
            st.caption(f"{len(ev.system_run.unmatched_rows)} row(s) of the file matched no golden question; the "
                       "Systems page lists them.")
    st.page_link("pages/systems.py", label="Details: coverage, matching, pooled labels (Systems)",
                 icon=":material/hub:")
    return True


def pair_verdict(ctx: Any) -> bool:
    """The verdict of runs dropped with their qrels (:func:`pair_of`): each run scored against those
    qrels, as ``rag-metrics evaluate --qrels Q --run R`` scores it, at the sidebar's K and conventions;
    False when no such pair was brought in."""
    from rag_metrics.cli._common import id_to_doc
    from rag_metrics.evaluation import evaluate
    from rag_metrics.systems.uploads import run_for_qrels

    pair = ui_session.value(KEY_PAIR)
    if not pair:
        return False
    qname, qdata = pair["qrels"]
    (q,) = read_dropped([(qname, qdata)])
    golden = q.read.golden if q.read is not None else None
    if golden is None:
        st.error(views.esc(q.error or f"{qname}: no judgments read"), icon=":material/error:")
        return True
    opts = ctx.settings.options
    metrics = [m for m in ctx.settings.metrics if m != "judged"]
    for n, (rname, rdata) in enumerate(pair["runs"]):
        label = (pair["name"] or PurePath(rname).name.split(".")[0]).strip() + (f" {n + 1}" if n else "")
        run, notes = run_for_qrels(rdata, rname, golden, ctx.chunks.chunks)
        if run is None:
            st.error(f"**{views.esc(label)}**: {views.esc('; '.join(notes))}", icon=":material/error:")
            continue
        res = evaluate(golden, run, opts, chunk_to_doc=id_to_doc(run, golden) if opts.level == "document" else None)
        if res.n_answered == 0 or res.n_queries == 0:
            st.error(f"**{views.esc(label)}** ({views.esc(rname)}) answers none of the {len(golden)} queries of "
                     f"{views.esc(qname)}: no verdict. Check that the run and the qrels use the same query ids.",
                     icon=":material/block:")
            continue
        st.markdown(f"**{views.esc(label)}** ({views.esc(rname)}) against **{views.esc(qname)}**: "
                    f"{res.n_queries} queries · {views.esc(views.answered_absent(res))}")
        if views.verdict_banner(res, label):  # no number as a result when it is no verdict
            views.metric_cards(res.summary(metrics, [ctx.k]), key=f"bring_pair_{n}")
        for note in notes[:4]:
            st.caption(views.esc(note))
    return True
