"""Streamlit pieces of drafting the golden set with a judge: the drafts' review, relevance
suggestions beside the chunks of the labelling queue, and "Judge vs people".

Every rule lives in the library (:mod:`rag_metrics.authoring.drafting`, :mod:`rag_metrics.authoring.relevance_judge`,
:mod:`rag_metrics.authoring.judge_agreement`, :mod:`rag_metrics.insights.provenance`); this module keeps the session's
review queue and suggestions, draws them, and saves through the golden session like every edit.
Long judge runs show a progress bar (calls, cache hits, tokens) and stop on any click (Streamlit
reruns; replies already paid for stay in the judge's cache).

Over 500 lines: the drafting panel, its badges and the judge-vs-people section share one pool of candidates
and one judge run.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics.authoring.drafting.questions import CATEGORIES, Draft
from rag_metrics.authoring.judge_agreement import ranking_change, relevance_agreement
from rag_metrics.errors import InputError
from rag_metrics.insights.provenance import LABEL_GROUPS, filter_golden, metrics_by_provenance, provenance_counts
from rag_metrics.retrieval.choice import text_encoders
from rag_metrics.retrieval.defaults import RETRIEVER_KINDS
from rag_metrics.server.budgets import SpendLedger
from rag_metrics.server.policy import judge_plan
from ui import cache, server, state, views
from ui import session as ui_session
from ui.judge_settings import judge_settings
from ui.keys import AGREEMENT, LAST_COST, SUGGESTIONS, draft_reason, draft_text
from ui.keys import DRAFT_REVIEW as REVIEW
from ui.keys import GOLDEN_VIEW as VIEW
from ui.keys import JUDGE_SAMPLES as SAMPLES


# ---- session objects -----------------------------------------------------------------------------
def review(corpus: str) -> Any:
    from rag_metrics.authoring.drafting.review import DraftReview

    return ui_session.default(REVIEW, {}).setdefault(corpus, DraftReview())


def suggestions(corpus: str) -> dict[tuple[str, str], Any]:
    return ui_session.default(SUGGESTIONS, {}).setdefault(corpus, {})


def suggestion(corpus: str, query_id: str | None, chunk_id: str) -> Any:
    """The judge's suggestion for one pair, if any (shown beside the chunk; a person's label wins)."""
    if query_id is None:
        return None
    return suggestions(corpus).get((query_id, chunk_id))


def suggestion_caption(s: Any) -> str:
    if s is None:
        return ""
    if not s.ok:
        return f"judge: no grade ({s.status})"
    spread = [g for g in s.samples if g is not None]
    extra = f", samples {'/'.join(map(str, spread))}" if len(spread) > 1 else ""
    return f"judge suggests {s.grade}{extra}"


def _progress_bar(what: str):
    bar = st.progress(0.0, text=f"{what}: starting…")

    def progress(p: Any) -> None:
        bar.progress(min(1.0, p.done / max(p.total, 1)),
                     text=f"{what}: {p.done}/{p.total} calls · {p.cache_hits} from cache · {p.tokens:,} tokens · "
                          f"{p.elapsed:.1f} s")
    return bar, progress


def _cost(p: Any) -> str:
    return (f"{p.done - p.cache_hits} judge call(s) made, {p.cache_hits} from the cache, "
            f"{p.prompt_tokens:,} prompt + {p.completion_tokens:,} completion tokens, {p.elapsed:.1f} s")


# ---- the judge budget ------------------------------------------------------------------------------
def _spender() -> str:
    """Who a judge run is accounted to on the Class page: the seat, else the teacher (or operator)."""
    who = state.caller()
    return who.seat or who.role


def judge_gate(what: str, calls: int, tokens: int) -> bool:
    """Ask the policy before a judge run (:func:`rag_metrics.server.policy.judge_plan`): refused over the
    seat's budget (said why), and a run over ``lab.budgets.judge_confirm_over`` planned calls runs
    only after the person ticks a box naming its planned calls.  True when it may run."""
    plan = judge_plan(state.caller(), server.config().budgets, calls, tokens, SpendLedger().spent(_spender()))
    if plan.refused:
        st.warning(plan.refused, icon=":material/savings:")
        return False
    if plan.confirm:
        return bool(st.checkbox(f"Yes, make up to {calls:,} judge calls (about {tokens:,} prompt tokens)",
                                key=f"judge_confirm_{what}",
                                help="A large judge run costs the class's judge budget; cached replies cost nothing."))
    return True


def account(calls: int, tokens: int) -> None:
    """Add a finished judge run's calls and tokens to this seat's spending (the Class page shows it)."""
    if calls or tokens:
        SpendLedger().add(_spender(), calls, tokens)


def all_runs(ctx: Any) -> dict[str, Any]:
    """``{system: Run}`` of the golden questions: the bundled dense, BM25 and hybrid retrievers
    and every stored system (uploads, RAG logs, live backends)."""
    runs: dict[str, Any] = {}
    for kind in RETRIEVER_KINDS:
        memo = ctx.memo if kind == ctx.settings.retriever else cache.config_memo(ctx.chunks, ctx.chunks.fingerprint,
                                                                                  kind, ctx.corpus.model)
        runs[kind] = memo.run_for(ctx.golden, kind)
    try:
        from ui.systems import evaluations

        for e in evaluations(ctx):
            if e.system_run is not None and not e.name.startswith("bundled "):
                runs[e.name] = e.system_run.run
    except InputError as err:  # a stored system that cannot answer now: the bundled ones still count
        st.caption(f"Stored systems left out: {views.esc(str(err))}")
    return runs


def _document_level(ctx: Any) -> bool:
    if ctx.unit == "chunk":
        return False
    st.info("Drafting and relevance suggestions work on chunk-level golden sets; this corpus is labelled by "
            "document.", icon=":material/info:")
    return True


# ---- drafts --------------------------------------------------------------------------------------
def _question_encoder(ctx: Any) -> Any:
    """The encoder comparing drafted questions with the golden ones: the corpus's model (the one encoder rule,
    :mod:`rag_metrics.retrieval.choice`), on its query side (texts compared with each other)."""
    return text_encoders(ctx.corpus.model).queries if ctx.corpus.model else cache.encoder()


def _searchers(ctx: Any) -> dict[str, Any]:
    out = {}
    for kind in RETRIEVER_KINDS:
        memo = ctx.memo if kind == ctx.settings.retriever else cache.config_memo(ctx.chunks, ctx.chunks.fingerprint,
                                                                                  kind, ctx.corpus.model)

        def search(questions: list[str], memo: Any = memo) -> list[list[str]]:
            memo.ensure(questions)
            return [[i for i, _ in memo.search(q)] for q in questions]
        out[kind] = search
    return out


def _badge_line(d: Any) -> str:
    b = d.badges
    parts = []
    ans = b.get("answerable")
    if d.category == "out_of_scope":
        parts.append(":green-badge[not answerable by its source]" if ans is False else
                     ":orange-badge[the source may answer it]" if ans else ":gray-badge[answerable: unknown]")
    else:
        parts.append(":green-badge[answerable]" if ans else ":red-badge[not answerable]" if ans is False
                     else ":gray-badge[answerable: unknown]")
    parts.append(":green-badge[self-contained]" if b.get("self_contained") else
                 f":red-badge[not self-contained: {views.esc(b.get('self_contained_reason', ''))}]")
    if b.get("near_duplicate"):
        near = b.get("nearest") or {}
        parts.append(f":red-badge[near-duplicate of {views.esc(str(near.get('id')))} "
                     f"({float(near.get('similarity', 0)):.2f})]")
    elif b.get("near_duplicate") is False:
        parts.append(":green-badge[no near-duplicate]")
    ov = float(b.get("word_overlap") or 0)
    parts.append(f":orange-badge[too easy for keyword search: {ov:.0%} of its words in the source]"
                 if b.get("too_easy") else f":blue-badge[word overlap {ov:.0%}]")
    for name, found in (b.get("found_within_k") or {}).items():
        parts.append(f":{'green' if found else 'orange'}-badge[{views.esc(name)} "
                     f"{'finds' if found else 'misses'} the source in top {b.get('k')}]")
    if b.get("edited"):
        parts.append(":violet-badge[edited]")
    return " ".join(parts)


def _on_accept(corpus: str, draft_id: str, then_label: bool) -> None:
    rv = review(corpus)
    session = state.golden_session(corpus)
    try:
        text = ui_session.value(draft_text(draft_id))
        if text is not None:
            rv.edit(draft_id, text, state.chunk_set(corpus).text)
        new = rv.accept(draft_id, session.golden)
        res = session.replace(new)
    except InputError as err:
        state.notice(f"Not added: {views.esc(str(err))}", "error")
        return
    qid = rv.query_ids[draft_id]
    state.notice_saved(session, res, f"Added the drafted question {views.esc(qid)} with its provenance (drafted, "
                       f"source chunks {views.esc(', '.join(rv.get(draft_id).source_chunk_ids))}).")
    if then_label:
        from ui.label_session import queue

        queue(corpus, session.golden).go(qid)
        ui_session.set_value(VIEW, "label")


def _on_reject(corpus: str, draft_id: str) -> None:
    try:
        review(corpus).reject(draft_id, ui_session.value(draft_reason(draft_id)) or "")
    except InputError as err:
        state.notice(views.esc(str(err)), "error")


def render_drafts(ctx: Any) -> None:
    """Draft questions from the corpus's chunks, then review them (accept, edit, reject)."""
    from rag_metrics.authoring.drafting.review import planned_calls, planned_prompt_tokens

    corpus = ctx.settings.corpus
    if _document_level(ctx):
        return
    rv = review(corpus)
    st.caption("The judge drafts questions from chunks sampled evenly across the documents; the lab computes the "
               "badges (answerable, self-contained, near-duplicate, word overlap, found by each bundled retriever). "
               "Nothing enters the golden set until you accept it.")
    judge = judge_settings("draft")
    a, b, c = st.columns([1, 3, 1], vertical_alignment="bottom")
    n = int(a.number_input("Questions", 1, 200, 20, key="draft_n"))
    cats = b.multiselect("Categories", list(CATEGORIES), default=list(CATEGORIES), key="draft_cats")
    k = int(c.number_input("Found within K", 1, 50, 5, key="draft_k"))
    chunks = ctx.chunks.chunks
    try:
        planned = planned_calls(chunks, n, cats or list(CATEGORIES))
        tokens = planned_prompt_tokens(chunks, n, cats or list(CATEGORIES))
    except InputError as err:
        views.input_error(err, "Cannot draft")
        return
    st.caption(f"Planned: at most **{planned}** judge calls ({n} drafts + one answerability check per source chunk), "
               f"about {tokens:,} prompt tokens; cached replies cost nothing.")
    if ui_session.value(LAST_COST, {}).get("draft"):
        st.caption(":material/receipt_long: Last run: " + ui_session.item(LAST_COST)["draft"])
    may = judge_gate("draft", planned, tokens)
    go = st.button(f"Draft {n} questions", key="draft_go", type="primary", icon=":material/edit_note:",
                   disabled=judge is None or not may)
    if go and judge is not None and may:  # a forged click on the disabled button runs nothing
        from rag_metrics.authoring.drafting.badges import BadgeSettings
        from rag_metrics.authoring.drafting.review import draft_golden_questions

        cfg, key = judge
        st.button("Stop", key="draft_stop", icon=":material/cancel:")
        bar, progress = _progress_bar("Drafting")
        try:
            with views.costly("Drafting"):  # one of the process's worker slots (lab.budgets.workers)
                res = draft_golden_questions(chunks, n, cfg, categories=cats or list(CATEGORIES), golden=ctx.golden,
                                             encoder=_question_encoder(ctx), rankings=_searchers(ctx),
                                             settings=BadgeSettings(k=k), api_key=key, policy=server.env().policy,
                                             progress=lambda phase, p: progress(p))
        except InputError as err:
            views.input_error(err, "Drafting failed")
            return
        bar.empty()
        account(res.calls, res.tokens)
        added = rv.add(res.drafts)
        bad = len(res.drafts) - sum(1 for d in res.drafts if d.ok)
        ui_session.default(LAST_COST, {})["draft"] = (
            f"planned {res.planned}; {res.calls} call(s) made, {res.cache_hits} from the cache, {res.tokens:,} tokens")
        state.notice(f"{added} draft(s) added to the review queue" + (f"; {bad} without a usable question "
                     f"({', '.join(sorted({d.status for d in res.drafts if not d.ok}))})" if bad else "") + ".",
                     "success" if added else "warning")
        st.rerun()
    up = st.file_uploader("Or load drafts written by `rag-metrics draft` (JSONL)", type=["jsonl"], key="draft_file")
    if up is not None and st.button("Add these drafts to the review", key="draft_file_add"):
        from rag_metrics.authoring.golden_edit import import_size_problem
        from rag_metrics.io.files import loads_json
        from rag_metrics.server.policy import limit

        too_big = import_size_problem(up.getvalue(), up.name, limit(state.caller(), "golden_questions",
                                                                    server.config().budgets))
        if too_big is not None:  # refused on its size, before any line is parsed
            views.input_error(InputError(too_big), "Not loaded")
            return
        try:
            drafts = []
            for n, line in enumerate(up.getvalue().decode("utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                obj, msg, _ = loads_json(line)
                if msg is not None or not isinstance(obj, dict):
                    raise InputError(f"line {n}: {msg or 'not a JSON object'}")
                drafts.append(Draft.from_json(obj))
        except (UnicodeDecodeError, InputError) as err:
            views.input_error(InputError(f"{up.name}: {err}"), "Not loaded")
            return
        state.notice(f"{rv.add(drafts)} draft(s) added from {views.esc(up.name)}.")
        st.rerun()
    _review_list(ctx, rv)


def pending_drafts_box(ctx: Any) -> None:
    """In the labelling queue: the drafts still to review (accept, edit, reject with a reason)."""
    rv = review(ctx.settings.corpus)
    n = len(rv.pending())
    if n:
        with st.container(border=True):  # not an expander: the review has expanders inside
            st.markdown(f":material/edit_note: **{n} drafted question(s) to review**")
            _review_list(ctx, rv, limit=3)


def _review_list(ctx: Any, rv: Any, limit: int = 10) -> None:
    p = rv.progress()
    if not p["total"]:
        return
    st.markdown(f"**Review** · {p['pending']} to review · {p['accepted']} accepted · {p['rejected']} rejected")
    pending = rv.pending()
    if not pending:
        st.success("Every draft is reviewed. Accepted drafts are in the golden set (origin: drafted); label them "
                   "in **Label with retrieval**, where the pooled candidates of every system are offered.",
                   icon=":material/check_circle:")
    corpus = ctx.settings.corpus
    texts = ctx.chunks.text
    for d in pending[:limit]:
        with st.container(border=True):
            st.caption(f"{views.esc(d.category)} · from {views.esc(', '.join(d.source_chunk_ids))} · "
                       f"{views.esc(str(d.generation.get('model', '')))}")
            st.text_input("Question", value=rv.question(d.id), key=draft_text(d.id),
                          label_visibility="collapsed")
            st.markdown(_badge_line(d))
            with st.expander("Source chunk(s)"):
                for i in d.source_chunk_ids:
                    st.markdown(f"**{views.esc(i)}**")
                    views.plain_text(texts.get(i, ""), height=120)
            x, y, z, w = st.columns([1, 1, 2, 1], vertical_alignment="bottom")
            x.button("Accept", key=f"draft_accept_{d.id}", on_click=_on_accept, args=(corpus, d.id, False),
                     type="primary", width="stretch")
            y.button("Accept and label →", key=f"draft_label_{d.id}", on_click=_on_accept, args=(corpus, d.id, True),
                     width="stretch")
            z.text_input("Reason to reject", key=draft_reason(d.id), placeholder="e.g. duplicate, too easy")
            w.button("Reject", key=f"draft_reject_{d.id}", on_click=_on_reject, args=(corpus, d.id), width="stretch")
    if len(pending) > limit:
        st.caption(f"{len(pending) - limit} more draft(s) after these.")
    done = [d for d in rv.drafts if rv.status.get(d.id) != "pending"]
    if done:
        with st.expander(f"Reviewed drafts ({len(done)})"):
            st.dataframe(pd.DataFrame([{"question": rv.question(d.id), "category": d.category,
                                        "status": rv.status.get(d.id), "reason": rv.reasons.get(d.id, ""),
                                        "query id": rv.query_ids.get(d.id, "")} for d in done]),
                         hide_index=True, width="stretch")


# ---- suggestions in the labelling queue ----------------------------------------------------------


def _samples_input() -> int:
    return int(st.number_input("Samples per pair", 1, 3, 1, key=SAMPLES,
                               help="2 or 3: each pair is asked again; pairs whose samples disagree are shown first "
                                    "(the judge is least reliable there). Calls multiply."))


def _run_suggestions(ctx: Any, pairs: list[Any], judge: tuple[Any, str | None], what: str) -> list[Any] | None:
    from rag_metrics.authoring.relevance_judge import RelevanceJudge

    cfg, key = judge
    st.button("Stop", key=f"suggest_stop_{what}", icon=":material/cancel:")
    bar, progress = _progress_bar("Grading")
    rj = RelevanceJudge(cfg, api_key=key, n_samples=int(ui_session.value(SAMPLES) or 1),
                        policy=server.env().policy)
    with views.costly("Grading"):  # one of the process's worker slots (lab.budgets.workers)
        out = rj.grade(pairs, progress=progress)
    bar.empty()
    lp = rj.last_progress
    if lp is not None:
        account(lp.done - lp.cache_hits, lp.prompt_tokens + lp.completion_tokens)
    ui_session.default(LAST_COST, {})[what] = f"planned {rj.planned_calls(len(pairs))}; " + _cost(
        rj.last_progress)
    store = suggestions(ctx.settings.corpus)
    for s in out:
        store[s.key] = s
    return out


def _on_take_judge(corpus: str, query_id: str) -> None:
    from rag_metrics.authoring.relevance_judge import completed_golden

    session = state.golden_session(corpus)
    mine = [s for (q, _), s in suggestions(corpus).items() if q == query_id]
    new = completed_golden(session.golden, mine)
    n = len(new.get(query_id).relevant) - len(session.golden.get(query_id).relevant)
    try:
        res = session.replace(new)
    except InputError as err:
        state.notice(f"Not added: {views.esc(str(err))}", "error")
        return
    state.notice_saved(session, res, f"Added {n} judge label(s) to {views.esc(query_id)}, marked as the judge's "
                       "(label origin: judge).")


def render_pool_candidates(ctx: Any, item: Any) -> None:
    """For the queue's current question: the pooled candidates of every system not labelled yet,
    with the judge's suggestions, least reliable first; label them one by one."""
    from rag_metrics.authoring.relevance_judge import RelevanceSuggestion, least_reliable_first, pooled_pairs

    if item is None or item.query_id is None or ctx.unit != "chunk":
        return
    q = ctx.golden.get(item.query_id)
    if q is None or q.category == "out_of_scope":
        return
    corpus = ctx.settings.corpus
    if not st.toggle("Pooled candidates from every system, with the judge's suggestions", value=q.drafted,
                     key=f"label_pool_on_{q.id}", help="On by default for drafted questions: their source chunk "
                     "is rarely the only relevant one."):
        return
    with st.container(border=True):
        from rag_metrics.types import GoldenSet

        one = GoldenSet((q,))
        k = int(st.number_input("Pool depth K", 1, 50, min(10, ctx.memo.depth), key="label_pool_k"))
        runs = all_runs(ctx)
        pairs = pooled_pairs(one, runs, k, ctx.chunks.text)
        have = suggestions(corpus)
        st.caption(f"{len(pairs)} unlabelled chunk(s) in the top {k} of {len(runs)} system(s) "
                   f"({', '.join(runs)}). The source chunk is rarely the only relevant one.")
        if not pairs:
            return
        todo = [p for p in pairs if (p.query_id, p.item_id) not in have]
        judge = judge_settings("suggest")
        n_samples = _samples_input()
        from rag_metrics.authoring.relevance_judge import planned_prompt_tokens

        may = judge_gate("suggest", len(todo) * n_samples, planned_prompt_tokens(todo, n_samples) if todo else 0)
        if st.button(f"Suggest grades for {len(todo)} pair(s) ({len(todo) * n_samples} judge calls at most)",
                     key="suggest_go",
                     disabled=judge is None or not todo or not may, icon=":material/gavel:") \
                and judge is not None and todo and may:  # a forged click on the disabled button runs nothing
            _run_suggestions(ctx, todo, judge, "suggest")
            st.rerun()  # the chunks listed above show the suggestions too
        if ui_session.value(LAST_COST, {}).get("suggest"):
            st.caption(":material/receipt_long: Last run: " + ui_session.item(LAST_COST)["suggest"])
        rows = [have.get((p.query_id, p.item_id)) or RelevanceSuggestion(p.query_id, p.item_id, None, "not_asked")
                for p in pairs]
        by_id = {p.item_id: p for p in pairs}
        ordered = least_reliable_first(r for r in rows if r.status != "not_asked") + \
            [r for r in rows if r.status == "not_asked"]
        st.dataframe(pd.DataFrame([{"chunk": r.item_id, "judge": r.grade, "status": r.status,
                                    "systems": by_id[r.item_id].n_systems, "best rank": by_id[r.item_id].best_rank,
                                    "text": by_id[r.item_id].text[:160]} for r in ordered]),
                     hide_index=True, width="stretch", height=min(420, 38 + 35 * len(ordered)))
        a, b, c = st.columns([3, 2, 1], vertical_alignment="bottom")
        pick = a.selectbox("Chunk", [r.item_id for r in ordered], key="pool_pick")
        sugg = have.get((q.id, pick))
        default = int(sugg.grade) if sugg is not None and sugg.ok and sugg.grade is not None else 0
        grade = b.radio("Your grade", [0, 1, 2, 3], index=default, horizontal=True, key=f"pool_grade_{q.id}_{pick}",
                        help="Starts at the judge's suggestion; your label is a person's label and always wins.")
        if c.button("Save label", key="pool_save", width="stretch"):
            state.golden_judge(q.id, str(pick), int(grade))
            st.rerun()
        if pick in by_id:
            views.plain_text(by_id[pick].text, height=120)
        graded = [r for r in rows if r.ok]
        if graded:
            st.button(f"Take the judge's grades for the {len(graded)} graded chunk(s) as judge labels",
                      key="pool_take", on_click=_on_take_judge, args=(corpus, q.id),
                      help="Marked label origin = judge in the golden file: filterable, and metrics can be shown "
                           "with and without them.")


# ---- judge vs people -----------------------------------------------------------------------------
def render_judge_vs_people(ctx: Any) -> None:
    """Confusion matrix, Cohen's kappa and the ranking change, and metrics per provenance group."""
    from rag_metrics.authoring.relevance_judge import (
        completed_golden,
        judge_golden,
        planned_prompt_tokens,
        pooled_pairs,
    )

    corpus = ctx.settings.corpus
    if _document_level(ctx):
        return
    st.caption("The judge grades (UMBRELA 0-3) every chunk in the top K of every system; the pairs people judged "
               "measure it. Kappa: binary at the relevance level, and graded 0-3 (quadratic-weighted and plain). "
               "Ranking change: Kendall tau between the systems ranked with people's labels and with the judge's.")
    judge = judge_settings("agree")
    a, c, b = st.columns([1, 1, 3], vertical_alignment="bottom")
    k = int(a.number_input("Pool depth K", 1, 50, min(5, ctx.memo.depth), key="agree_k"))
    with c:
        n_samples = _samples_input()
    complete = b.toggle("People's labels are complete (an unlabelled pooled chunk counts as the people's 0)",
                        value=state.is_sample(corpus), key="agree_complete",
                        help="True for the sample: every chunk overlapping an evidence quote is labelled. For TREC-"
                             "style pooled qrels turn it off: an unjudged chunk is not a judgement.")
    runs = all_runs(ctx)
    pairs = pooled_pairs(ctx.golden, runs, k, ctx.chunks.text, unjudged_only=False, unlabelled_as_zero=complete)
    n_people = sum(1 for p in pairs if p.people is not None)
    st.caption(f"{len(pairs)} pooled pair(s) from {len(runs)} system(s) ({views.esc(', '.join(runs))}): {n_people} "
               f"judged by people. Planned: at most **{len(pairs) * n_samples}** judge calls, about "
               f"{planned_prompt_tokens(pairs, n_samples):,} prompt tokens "
               "(cached replies cost nothing).")
    if ui_session.value(LAST_COST, {}).get("agree"):
        st.caption(":material/receipt_long: Last run: " + ui_session.item(LAST_COST)["agree"])
    key = (ctx.golden.fingerprint(), k, complete, tuple(runs))
    may = judge_gate("agree", len(pairs) * n_samples, planned_prompt_tokens(pairs, n_samples) if pairs else 0)
    if st.button(f"Grade {len(pairs)} pairs", key="agree_go", type="primary",
                 disabled=judge is None or not pairs or not may, icon=":material/gavel:") \
            and judge is not None and pairs and may:  # a forged click on the disabled button runs nothing
        out = _run_suggestions(ctx, pairs, judge, "agree")
        ui_session.default(AGREEMENT, {})[corpus] = (key, out)
    got = ui_session.value(AGREEMENT, {}).get(corpus)
    if got is not None:
        if got[0] != key:
            st.caption("The labels, K or systems changed since the judge graded: grade again for current numbers.")
        sugg = got[1]
        agree = relevance_agreement(((s.people, s.grade if s.ok else None) for s in sugg),
                                    ctx.settings.options.relevance_level)
        x, y, z, w = st.columns(4)
        x.metric("Pairs compared", f"{agree.n:,}")
        y.metric(f"Kappa, binary (grade ≥ {agree.relevance_level})", views.fmt(agree.kappa_binary))
        z.metric("Kappa, graded quadratic", views.fmt(agree.kappa_quadratic))
        w.metric("Kappa, graded plain", views.fmt(agree.kappa_plain))
        if agree.n_unusable:
            st.caption(f"{agree.n_unusable} pair(s) people judged got no usable grade from the judge.")
        c1, c2 = st.columns(2)
        c1.markdown("**Confusion matrix** (rows: people, columns: judge)")
        c1.dataframe(agree.confusion, width="stretch")
        c2.markdown("**At the relevance level**")
        c2.dataframe(agree.binary, width="stretch")
        holes = [s for s in sugg if s.people is None]
        labels = {"people": ctx.golden, "judge": judge_golden(ctx.golden, sugg)}
        if holes:
            labels["completed"] = completed_golden(ctx.golden, holes)
        metric = f"{ctx.settings.ndcg_metric}@{ctx.k}"
        rc = ranking_change(labels, runs, metric, ctx.settings.options)
        st.markdown(f"**Systems ranked by {views.esc(rc.metric)}**")
        st.dataframe(rc.table, hide_index=True, width="stretch")
        st.caption(" · ".join(f"Kendall tau, people vs {n}: {views.fmt(t)}" for n, t in rc.tau.items())
                   + f" (over {len(runs)} systems)")
    st.markdown("**Provenance**")
    st.dataframe(provenance_counts(ctx.golden), hide_index=True)
    by = st.segmented_control("Metrics per group of", ["question", "labels"], key="prov_by", default="question",
                              required=True, format_func={"question": "question origin",
                                                          "labels": "label origin"}.get) or "question"
    st.dataframe(metrics_by_provenance(ctx.result, ctx.settings.metrics, (ctx.k,), by=by), hide_index=True,
                 width="stretch")
    flt = st.selectbox("Show the questions", ["all", "hand-written", "drafted", "human", "with judge labels",
                                              "with source labels"], key="prov_filter")

    sub = ctx.golden if flt == "all" else filter_golden(
        ctx.golden, origin=flt if flt in ("hand-written", "drafted") else None,
        labels=flt if flt in LABEL_GROUPS else None)
    st.dataframe(pd.DataFrame([{"id": q.id, "question": q.question, "category": q.category, "origin": q.origin,
                                "labels": len(q.relevant), "judge labels": sum(1 for o in q.label_origin.values()
                                                                               if o == "judge")} for q in sub]),
                 hide_index=True, width="stretch", height=260)
