"""Rendering of the Lesson page and the teacher's Class progress page (the lesson itself is data in
:mod:`rag_metrics.lesson`).

The student's :class:`~rag_metrics.lesson.Progress` is read once per session and space from the
space's :class:`~rag_metrics.lesson.ProgressStore` and written back after every change (step,
language, checked answer), so it survives reloads and restarts.  Widget keys start with
``lesson_``; the answer widget of task ``t`` is ``lesson_ans_<t>``, its Check button
``lesson_check_<t>``.

Over 500 lines: the lesson's steps, tasks, quiz and the teacher's Class progress read one progress store and
one step list.
"""
from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics import lesson as LS
from rag_metrics.evaluation import evaluate
from rag_metrics.exercises import EXERCISES, UI_TEXT, exercises_for_step
from rag_metrics.jobs import pool
from rag_metrics.lesson import course as Course
from rag_metrics.lesson import steps as LSteps
from rag_metrics.lesson import teacher
from rag_metrics.lesson.sandbox import Sandbox, explain
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS
from rag_metrics.server.policy import allowed
from rag_metrics.workspace.store import DEFAULT_SPACE, Workspace, list_spaces
from ui import navigation, server, session, state, tutor, views
from ui.keys import LESSON_GENERATION as _GENERATION
from ui.keys import LESSON_KEY, LESSON_QP_SEEN, LESSON_STEP_PICK, lesson_answer
from ui.keys import LESSON_LANG as LANG
from ui.keys import LESSON_LAST as _LAST
from ui.keys import LESSON_PROGRESS as _PROGRESS
from ui.keys import LESSON_SANDBOX as _SANDBOX
from ui.session import notice_also


# ---- who may see the class ---------------------------------------------------------------------
def may_see_class() -> bool:
    """The teacher (``Caller.may_manage_class``); in single-user mode the operator, who runs the server."""
    return allowed(state.caller(), "see-class")


def roster() -> list[tuple[str, str]]:
    """The class: ``(seat label, space)`` pairs.  In class mode the seats of the class
    (:meth:`rag_metrics.server.seats.SeatRegistry.roster`: the name a student gave, else the seat id);
    in single-user mode every saved workspace."""
    if allowed(state.caller(), "list-seats"):
        from rag_metrics.server.seats import SeatRegistry

        return [(row.name or f"seat {row.seat}", row.space) for row in SeatRegistry().roster()]
    return [(name, name) for name in list_spaces()]


# ---- the course's lesson shown --------------------------------------------------------------------
#: The query parameter naming the lesson (``?lesson=generation``) and, optionally, its step (``&step=3``,
#: 1-based, or a step's key): a link opens the course there.
PARAM_LESSON = "lesson"
PARAM_STEP = "step"
FIRST = "retrieval"   # the lesson shown when none was chosen (the lab's first lesson, lesson 2)


def current() -> Course.Lesson:
    """The lesson shown (the session's choice; lesson 2 when none was made or it left the course)."""
    key = state.value(LESSON_KEY)
    return next((x for x in Course.COURSE if x.key == key), Course.lesson(FIRST))


def choose(key: str) -> None:
    """Show lesson ``key`` (its progress, where it was left) and say so in the URL."""
    state.set_value(LESSON_KEY, key)
    state.pop(LESSON_STEP_PICK)
    try:
        st.query_params[PARAM_LESSON] = key
        if PARAM_STEP in st.query_params:
            del st.query_params[PARAM_STEP]
    except Exception:  # noqa: BLE001 - the URL is a convenience
        pass


def _step_param(value: str, x: Course.Lesson) -> int | None:
    """``?step=`` as a 0-based index of ``x``'s steps: a number from 1, or a step's key; ``None`` otherwise."""
    v = value.strip()
    if v.isdigit() and 1 <= int(v) <= len(x.steps):
        return int(v) - 1
    return next((i for i, s in enumerate(x.steps) if s.key == v), None)


def follow_url() -> None:
    """``?lesson=<key>`` (and ``&step=``) opens that lesson (at that step) when the link is new to the session; an
    unknown value is ignored with a note in the lesson's language.  The lesson shown is then written to the URL."""
    qp = st.query_params
    asked, step = qp.get(PARAM_LESSON), qp.get(PARAM_STEP)
    seen = state.value(LESSON_QP_SEEN)
    if (asked, step) != seen and (asked is not None or step is not None):
        state.set_value(LESSON_QP_SEEN, (asked, step))
        keys = [x.key for x in Course.COURSE]
        if asked is not None and asked not in keys:
            state.notice(t("ui.course_bad_link", value=views.esc(repr(str(asked)[:40])), keys=", ".join(keys)),
                         "warning")
        else:
            if asked is not None:
                state.set_value(LESSON_KEY, asked)
            if step is not None:
                index = _step_param(str(step), current())
                if index is None:
                    state.notice(t("ui.course_bad_step", value=views.esc(repr(str(step)[:40])),
                                   total=len(current().steps)), "warning")
                else:
                    save(progress().with_step(index, current().steps))
                try:   # applied: a reload later opens the step the student is on, not the link's
                    del qp[PARAM_STEP]
                except Exception:  # noqa: BLE001 - the URL is a convenience
                    pass
    try:
        if qp.get(PARAM_LESSON) != current().key:
            qp[PARAM_LESSON] = current().key
    except Exception:  # noqa: BLE001 - the URL is a convenience; never break the page for it
        pass


# ---- progress --------------------------------------------------------------------------------------
def _keys(key: str) -> tuple[str, str]:
    """The session keys of lesson ``key``'s progress and generation (lesson 2's are the ones it always had)."""
    if key == FIRST:
        return _PROGRESS, _GENERATION
    return f"{_PROGRESS}:{key}", f"{_GENERATION}:{key}"


def store(key: str | None = None) -> LS.ProgressStore:
    """The progress store of lesson ``key`` (default: the lesson shown) in this space."""
    return LS.store_for_space(state.space(), lesson=key or current().key)


def _load(s: LS.ProgressStore) -> LS.Progress:
    """Read the space's progress and the teacher's generation of it into the session."""
    space = state.space()
    p, generation = s.load_versioned()
    kp, kg = _keys(s.lesson)
    state.set_value(kp, (space, p))
    state.set_value(kg, (space, generation))
    return p


def progress(key: str | None = None) -> LS.Progress:
    """This space's progress of lesson ``key`` (default: the lesson shown; read from disk once per session and
    space)."""
    key = key or current().key
    space = state.space()
    kp, kg = _keys(key)
    kept = state.value(kp)
    held = state.value(kg)
    if not kept or kept[0] != space or not held or held[0] != space:
        s = store(key)
        p = _load(s)
        if s.problem:
            state.notice(f"Lesson progress could not be read ({views.esc(s.problem)}); starting afresh.", "warning")
        return p
    return kept[1]


def _take_teacher_change(change: Any, *, refused: bool) -> None:
    """The teacher changed this space's progress (a versioned change): take the saved progress and say so,
    in the lesson's language as it was."""
    before = lang()
    for x in Course.COURSE:   # a reset is of every lesson: drop every lesson's copy
        for k in _keys(x.key):
            state.pop(k)
    _load(store())
    state.pop(_LAST)  # the last checks' verdicts and the answers typed were of the old progress
    state.pop(_SANDBOX)
    for key in [k for k in session.store() if str(k).startswith("lesson_ans_")]:
        state.pop(str(key))
    notice_also(LS.teacher_change_text("progress", change.kind, before, refused=refused))


def follow_teacher() -> None:
    """Take the teacher's change of the progress when there is one newer than the session's copy (one
    ``stat`` when nothing moved): called once per run of the Lesson page, before anything is drawn."""
    progress()
    change = store().generation()
    if change.generation != state.value(_keys(current().key)[1])[1]:
        _take_teacher_change(change, refused=False)


def save(p: LS.Progress, key: str | None = None) -> None:
    """Save the session's progress of lesson ``key`` (default: the lesson shown), unless the teacher changed it
    since it was loaded (then nothing is written: the session takes the teacher's change and tells the student)."""
    key = key or current().key
    space = state.space()
    progress(key)  # the generation this session holds
    kp, kg = _keys(key)
    held = state.value(kg)[1]
    try:
        refused = store(key).save(p, held)
    except OSError as err:
        state.set_value(kp, (space, p))
        state.notice(f"Lesson progress not saved: {views.esc(str(err))}", "error")
        return
    if refused is not None:
        _take_teacher_change(refused, refused=True)
        return
    state.set_value(kp, (space, p))


def set_language(language: str) -> None:
    """The course's language (kept in lesson 2's progress, where it always was)."""
    save(progress(FIRST).with_language(language), FIRST)


def lang() -> str:
    """The course's language (``"en"`` or ``"da"``), one for every lesson."""
    return progress(FIRST).language


def t(key: str, **values: Any) -> str:
    return LS.text(key, lang(), **values)


def num(v: float | None, decimals: int = 3) -> str:
    """A number in the lesson's language (Danish writes a decimal comma)."""
    s = views.fmt(v, decimals)
    return s.replace(".", ",") if lang() == "da" else s


_BRACKETED = re.compile(r"(\[[^\]]*\]|\{[^}]*\}|\([^)]*\))")
_DECIMAL = re.compile(r"(?<![\w.])(-?\d+\.\d+)(?!\w|\.\d)")


def numbers_in(text: str, language: str, decimals: int = 3) -> str:
    """``text`` (a verdict's message) with its decimal numbers written as the lesson writes them in
    ``language``: Danish ``0,739`` for ``0.738992``.  Numbers inside brackets (a list, a dict, a call) stay as
    Python writes them; when rounding would make two different numbers of the text look equal (expected vs
    got), they keep their digits and only change their decimal mark."""
    if language != "da":
        return text
    parts = _BRACKETED.split(text)
    found = [m for i, p in enumerate(parts) if i % 2 == 0 for m in _DECIMAL.findall(p)]
    rounded = {m: f"{float(m):.{decimals}f}" for m in found}
    keep = len(set(rounded.values())) < len({float(m) for m in found})

    def one(m: re.Match[str]) -> str:
        return (m.group(1) if keep else rounded[m.group(1)]).replace(".", ",")

    return "".join(p if i % 2 else _DECIMAL.sub(one, p) for i, p in enumerate(parts))


def _on_lang() -> None:
    set_language(state.value(LANG, "en"))
    state.follow_lesson_language(lang())  # the sample in the lesson's language


def _go(step: int) -> None:
    save(progress().with_step(step, current().steps))


def _step_by(delta: int) -> None:
    """Previous / Next: relative to the step saved when the click arrives, not the one the button was
    drawn for (a click on a button still shown from the last run, while a rerun draws the next step,
    would otherwise jump back to the old step's neighbour; two quick clicks move two steps)."""
    _go(progress().step + delta)


def _on_pick_step() -> None:
    _go(int(state.value(LESSON_STEP_PICK, 0)))


def context(ctx: state.Lab) -> LS.LessonContext:
    """The checks' view of the lab: the evaluation, K, and the shared golden set a new label is
    compared with (the shared space's set, or the shipped one when the student works in the shared
    space itself)."""
    baseline = ctx.corpus.seed_golden
    if state.space() != DEFAULT_SPACE:
        try:
            loaded = Workspace(ctx.settings.corpus).load()
        except Exception:  # noqa: BLE001 - a bad shared file: compare with the shipped set
            loaded = None
        if loaded is not None:
            baseline = loaded[0]
    return LS.LessonContext(ctx.result, ctx.k, baseline=baseline, ndcg=ctx.settings.ndcg_metric)


# ---- the page ------------------------------------------------------------------------------------
def picker() -> None:
    """The course's lessons side by side, each with its progress; a click opens that lesson where it was
    left (a student can start at any lesson).  Nothing is drawn while the course has one lesson."""
    if len(Course.COURSE) < 2:
        return
    shown = current().key
    with st.container(key="lesson_course"):
        cols = st.columns(len(Course.COURSE))
        for col, x in zip(cols, Course.COURSE):
            p = progress(x.key)
            done = sum(p.steps_done(x.steps))
            with col.container(border=True):
                col_here = x.key == shown
                st.button(t("ui.course_button", n=x.number), key=f"lesson_course_{x.key}", on_click=choose,
                          args=(x.key,), type="primary" if col_here else "secondary", width="stretch",
                          icon=":material/check_circle:" if x.steps and done == len(x.steps) else None)
                st.markdown(t(x.title))
                st.caption(t("ui.course_progress", done=done, total=len(x.steps))
                           + (f" · {t('ui.course_here')}" if col_here else ""))


def header(ctx: state.Lab) -> None:
    follow_teacher()
    x = current()
    p = progress()
    state.default(LANG, lang())
    st.segmented_control(LS.text("ui.language", lang()), list(LS.LANGUAGES), key=LANG,
                         format_func=LS.LANGUAGES.get, required=True, on_change=_on_lang)
    picker()
    if x.key == FIRST:   # lesson 2 as it always was
        st.title(t("ui.title"))
        st.caption(t("ui.intro"))
    else:
        st.title(t("ui.course_lesson", n=x.number, title=t(x.title)))
        st.caption(t(x.intro))
    views.conventions_caption(lang())
    done = sum(p.steps_done(x.steps))
    st.progress(p.fraction(x.steps), text=t("ui.progress", done=done, total=len(x.steps)))


def step_nav(position: str) -> None:
    """The step picker (top only) and the Previous / Next buttons (two wide columns: their labels are
    never cut, also at 1024 px)."""
    p = progress()
    steps = current().steps
    n = len(steps)
    if position == "top":
        done = p.steps_done(steps)
        labels = {i: f"{'✓' if done[i] else '○'} {i + 1}. {t(steps[i].title)}" for i in range(n)}
        state.set_value(LESSON_STEP_PICK, p.step)
        st.selectbox(t("ui.steps"), list(range(n)), key=LESSON_STEP_PICK, on_change=_on_pick_step,
                     label_visibility="collapsed", format_func=labels.get)  # a pure lookup: AppTest calls it later
    left, right = st.columns(2)
    left.button(t("ui.previous"), key=f"lesson_prev_{position}", on_click=_step_by, args=(-1,),
                disabled=p.step == 0, icon=":material/arrow_back:", width="stretch")
    right.button(t("ui.next"), key=f"lesson_next_{position}", on_click=_step_by, args=(1,),
                 disabled=p.step >= n - 1, icon=":material/arrow_forward:", width="stretch",
                 type="primary" if p.step_done(steps[p.step]) else "secondary")


def _cards(key: str, cards: list[tuple[str, str, str | None]]) -> None:
    """Metric cards ``(label, value, help)``, at most four a row (a projector's 1024 px)."""
    with st.container(key=key):
        for start in range(0, len(cards), 4):
            row = cards[start:start + 4]
            cols = st.columns(len(row))
            for col, (label, value, help_) in zip(cols, row):
                col.metric(label, value, border=True, help=help_)


def _figures(lctx: LS.LessonContext, s: LS.Step) -> list[tuple[str, str]] | str:
    """The step's own live figures (:attr:`~rag_metrics.lesson.steps.Step.figures`), or why they could not be
    computed (the message, escaped)."""
    if s.figures is None:
        return []
    try:
        return [(str(label), str(value)) for label, value in s.figures(lctx, lang())]
    except Exception as err:  # noqa: BLE001 - a figure that fails must not hide the step
        return t("ui.figures_failed", error=views.esc(f"{type(err).__name__}: {str(err)[:200]}"))


def live_numbers(ctx: state.Lab, s: LS.Step, lctx: LS.LessonContext | None = None) -> None:
    """The step's numbers for the current corpus and system (the Dashboard's means), and its own live figures."""
    rows = LSteps.live_numbers(s, ctx.result, ctx.k, ctx.settings.ndcg_metric)
    figures = _figures(lctx if lctx is not None else context(ctx), s)
    extra = current().key == FIRST and s.key in ("precision", "categories", "ragas")
    if not rows and not extra and not figures:
        return
    st.markdown(f"**{t('ui.live')}**")
    own = f"lesson.{current().key}.live_caption"   # a lesson whose figures are not the Dashboard's says what they are
    st.caption(t(own if own in LS.TEXTS else "ui.live_caption", corpus=ctx.corpus.label or ctx.settings.corpus,
                 system=ctx.settings.system_name, k=ctx.k))
    if rows:
        _cards("cards_lesson", [(METRICS[metric].label + ("" if k is None else f"@{k}"), num(v),
                                 views.metric_help(metric, lang())) for metric, k, v in rows])
    if isinstance(figures, str):
        st.warning(figures, icon=":material/warning:")
    elif figures:
        _cards("cards_lesson_figures", [(views.esc(label), value, None) for label, value in figures])
    if not extra:
        return
    if s.key == "precision":
        if lang() == "da":  # the targets' sentences in the lesson's language
            from rag_metrics.insights.readouts import target_checks

            views.target_cards(target_checks(ctx.result, unit=ctx.unit, lang="da"), "da")
        else:
            views.target_cards(ctx.targets())
    elif s.key == "categories":
        cat = ctx.by_category("hit_rate")
        if not cat.empty:
            st.dataframe(pd.DataFrame({"category": cat["category"], "n": cat["n"],
                                       f"Hit rate@{ctx.k}": [num(v) for v in cat["mean"]]}),
                         hide_index=True, width="stretch")
    elif s.key == "ragas" and ctx.result.n_queries:
        from rag_metrics.insights.ragas import context_metrics_summary

        summ = context_metrics_summary(ctx.result, ctx.k, ci=False)
        with st.container(key="cards_lesson_ragas"):
            cols = st.columns(len(summ))
            for col, r in zip(cols, summ.to_dict("records")):
                col.metric(f"{r['label']}@{ctx.k}", num(r["mean"]), border=True)


class _Blank(dict):  # type: ignore[type-arg]
    """A prompt's values: a placeholder the page does not know stays as written (never a KeyError)."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _prompt(task: LS.Task, ctx: state.Lab) -> str:
    template = LS.TEXTS[task.prompt][lang()]
    return template.format_map(_Blank(_prompt_values(ctx)))


def _prompt_values(ctx: state.Lab) -> dict[str, Any]:
    return {"k": ctx.k, "n": ctx.result.n_queries, "mrr": num(ctx.result.mean("mrr"))}


def _verdict(task: LS.Task) -> None:
    p = progress()
    last = (state.value(_LAST) or {}).get(task.key)
    if p.done.get(task.key) and last is not False:
        st.success(f"{t('ui.right')} {t(task.ok)}", icon=":material/check_circle:")
    elif last is False:
        st.warning(t("ui.wrong", hint=t(task.hint)), icon=":material/lightbulb:")


def _record(task: LS.Task, answer: Any, lctx: LS.LessonContext) -> None:
    ok = LS.check(task, answer, lctx)
    last = dict(state.value(_LAST) or {})
    last[task.key] = ok
    state.set_value(_LAST, last)
    save(progress().with_answer(task.key, answer, ok))


def task_box(ctx: state.Lab, lctx: LS.LessonContext, task: LS.Task, index: int) -> None:
    with st.container(border=True):
        st.markdown(f"**{t('ui.task')} {index}.** {_prompt(task, ctx)}")
        answer = _answer_widget(ctx, lctx, task)
        c1, c2 = st.columns([1, 4], vertical_alignment="center")
        if c1.button(t("ui.check"), key=f"lesson_check_{task.key}", type="primary", width="stretch"):
            _record(task, answer, lctx)
            st.rerun()
        with c2.popover(t("ui.hint"), icon=":material/lightbulb:"):
            st.markdown(t(task.hint))
        _verdict(task)


def _saved(task: LS.Task) -> Any:
    return progress().answers.get(task.key)


def _answer_widget(ctx: state.Lab, lctx: LS.LessonContext, task: LS.Task) -> Any:
    key = lesson_answer(task.key)
    kind = task.kind
    if kind == "choice":
        opts = LS.choices(task, lctx)
        labels = {v: (t(k) if k else views.esc(v)) for v, k in opts}  # a live option (category) is user text
        saved = _saved(task)
        if saved in labels:
            state.default(key, saved)
        return st.radio(t("ui.your_answer"), list(labels), key=key, index=None, format_func=labels.get,
                        label_visibility="collapsed")
    if kind == "number":
        saved = _saved(task)
        state.default(key, "" if saved is None else str(saved))
        return st.text_input(t("ui.your_answer"), key=key, label_visibility="collapsed", placeholder="0.000")
    if kind == "sandbox":
        return _sandbox_widget()
    if kind == "k_predict":
        depth = max(1, ctx.result.depth)
        kk = st.number_input(t("ui.new_k"), 1, max(depth, 1), value=min(depth, 10 if ctx.k != 10 else 3), step=1,
                             key=key + "_k")
        picked = st.multiselect(t("ui.will_change"), list(DEFAULT_METRICS), key=key + "_m",
                                format_func=lambda m: METRICS[m].label)
        return {"k": int(kk), "metrics": list(picked)}
    if kind == "label":
        return _label_widget(ctx, key)
    if kind == "query":
        ids = [q for q, inc in zip(ctx.result.query_ids, ctx.result.included) if inc]
        shown = {**{q.id: f"{q.id} · {q.question}" for q in ctx.golden}, LS.NONE: t("ui.none")}
        return st.selectbox(t("ui.question"), [*ids, LS.NONE], key=key, index=None, format_func=shown.get)
    if kind == "judge":   # lesson 3: the class's judge on the student's own question (ui/lesson_generation.py)
        from ui import lesson_generation

        return lesson_generation.judge_widget(ctx, key, lang())
    if kind == "failure":
        fails = ctx.result.failures(ctx.k)
        if fails.empty:
            st.info(t("ui.no_failures", k=ctx.k))
            return {"query_id": LS.NONE}
        qs = dict(zip(fails["query_id"], fails["question"]))
        qid = st.selectbox(t("ui.question"), list(qs), key=key + "_q", format_func=lambda i: f"{i} · {qs[i]}")
        reasons = {o: t(task.option_key(o)) for o in task.options}
        reason = st.radio(t("ui.reason"), list(reasons), key=key + "_r", index=None, format_func=reasons.get)
        return {"query_id": qid, "reason": reason}
    return None


def _move(i: int, step: int) -> None:
    grades = list(state.value(_SANDBOX) or LSteps.sandbox_start())
    j = min(max(i + step, 0), len(grades) - 1)
    grades.insert(j, grades.pop(i))
    state.set_value(_SANDBOX, grades)


def _sandbox_widget() -> list[int]:
    saved = _saved(LS.TASKS["mrr_sandbox"])
    if state.value(_SANDBOX) is None:
        state.set_value(_SANDBOX, list(saved) if isinstance(saved, list) and len(saved) == 5
                        else LSteps.sandbox_start())
    grades = list(state.value(_SANDBOX))
    for i, g in enumerate(grades):
        c0, c1, c2, c3 = st.columns([0.6, 4, 1, 1], vertical_alignment="center")
        c0.markdown(f"**{i + 1}**")
        c1.markdown(f":material/check_circle: **{t('ui.relevant')}**" if g else f"— {t('ui.not_relevant')}")
        c2.button("", key=f"lesson_sb_up_{i}", on_click=_move, args=(i, -1), disabled=i == 0,
                  icon=":material/arrow_upward:", help=t("ui.move_up"))
        c3.button("", key=f"lesson_sb_down_{i}", on_click=_move, args=(i, 1),
                  disabled=i == len(grades) - 1, icon=":material/arrow_downward:", help=t("ui.move_down"))
    mrr = explain(Sandbox.from_grades(grades), len(grades))["mrr"].value
    st.caption(t("ui.sandbox_mrr", value=num(mrr)))
    return grades


def _label_widget(ctx: state.Lab, key: str) -> dict[str, Any]:
    res = ctx.result
    ids = [q for q, inc in zip(res.query_ids, res.in_scope) if inc]
    by_id = {q.id: q.question for q in ctx.golden}
    if not ids:
        return {}
    qid = st.selectbox(t("ui.question"), ids, key=key + "_q", format_func=lambda i: f"{i} · {by_id.get(i, '')}")
    ranking = res.ranking(qid).head(10)
    texts = ctx.id_text
    st.dataframe(pd.DataFrame({"#": ranking["rank"], "id": ranking["id"],
                               t("ui.relevant"): ["✓" if r else "" for r in ranking["relevant"]],
                               "text": [" ".join(texts.get(i, "").split())[:160] for i in ranking["id"]]}),
                 hide_index=True, width="stretch", height=38 + 35 * len(ranking))
    candidates = [i for i, r in zip(ranking["id"], ranking["relevant"]) if not r]
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    chunk = c1.selectbox(t("ui.label_chunk"), candidates, key=key + "_c") if candidates else None
    if c2.button(t("ui.label_button"), key=key + "_label", disabled=chunk is None, width="stretch"):
        state.golden_judge(qid, str(chunk), 1)
        st.rerun()
    recall = st.text_input(t("ui.recall_now", k=ctx.k), key=key + "_r", placeholder="0.000")
    return {"query_id": qid, "recall": recall}


def _next_lesson(x: Course.Lesson) -> None:
    """On a lesson's last step: the way on to the next lesson of the course (when there is one)."""
    later = [y for y in Course.COURSE if y.number > x.number]
    if not later:
        return
    y = later[0]
    st.button(t("ui.course_next", n=y.number, title=t(y.title)), key="lesson_next_lesson", on_click=choose,
              args=(y.key,), icon=":material/school:", type="primary")


def render(ctx: state.Lab) -> None:
    """The whole Lesson page: the course's lessons, and the current step of the lesson shown."""
    follow_url()
    header(ctx)
    views.show_notice()
    x = current()
    p = progress()
    s = x.steps[p.step]
    step_nav("top")
    st.subheader(f"{p.step + 1}. {t(s.title)}", divider="gray")
    st.caption(t("ui.step_of", n=p.step + 1, total=len(x.steps)))
    st.markdown(t(s.body))
    lctx = context(ctx)
    live_numbers(ctx, s, lctx)
    if x.key == "generation":   # lesson 3's example tables (ui/lesson_generation.py)
        from ui import lesson_generation

        lesson_generation.show(s.key, lang())
    if x.key == "system":   # lesson 4's CI job for the student's setup (ui/lesson_system.py)
        from ui import lesson_system

        lesson_system.show(s.key, lang(), ctx)
    lesson_code(s, x.key)
    for i, task in enumerate(s.tasks, start=1):
        task_box(ctx, lctx, task, i)
    quiz = {q.key for q in x.quiz}
    if quiz and quiz <= {task.key for task in s.tasks}:
        right = sum(1 for q in x.quiz if p.done.get(q.key))
        st.markdown(f"**{t('ui.quiz_score', right=right, total=len(x.quiz))}**")
    if p.step == len(x.steps) - 1:
        if all(p.steps_done(x.steps)):
            st.success(t("ui.finished"), icon=":material/school:")
        _next_lesson(x)
    tutor.box(f"lesson:{x.key}:{s.key}", lang())
    step_nav("bottom")


# ---- the lesson's code (issue 26) --------------------------------------------------------------------
#: The page of the code exercises (its ``?exercise=NAME`` opens one exercise).
EXERCISE_PAGE = "pages/exercises.py"


def lesson_code(s: LS.Step, key: str = FIRST) -> None:
    """The lesson's version of the step's function, the conventions it implies, and a link to its exercise
    (an exercise with no lesson code: the link alone)."""
    lg = lang()
    for ex in exercises_for_step(s.key, key):
        names = " / ".join(f"`{n}`" for n in (*ex.extra_functions, ex.name))
        if not ex.lesson_code:
            _exercise_link(ex.name, f"{UI_TEXT['open'][lg]}: {names}")
            continue
        with st.expander(f"{UI_TEXT['lesson_code'][lg]}: {names}", icon=":material/code:"):
            st.code(ex.lesson_code, language="python")
            conventions = ex.conventions.get(lg) or ex.conventions.get("en", ())
            st.markdown(UI_TEXT["conventions"][lg] + "\n" + "".join(f"\n- {c}" for c in conventions))
            _exercise_link(ex.name, UI_TEXT["open"][lg])


def _exercise_link(name: str, label: str) -> None:
    """A link to the exercise page opened on exercise ``name``; a plain link while that page is not
    in the app's menu (:func:`ui.navigation.registered`), since ``st.page_link`` needs a registered page."""
    from pathlib import Path


    registered = navigation.registered(EXERCISE_PAGE)
    if registered and (Path(__file__).resolve().parents[1] / EXERCISE_PAGE).is_file():
        st.page_link(EXERCISE_PAGE, label=label, icon=":material/edit_note:", query_params={"exercise": name})
    else:
        st.markdown(f":material/edit_note: [{label}](exercises?exercise={name})")


# ---- the teacher's view ------------------------------------------------------------------------------
#: Seconds between two refreshes of the class table (a fragment: only the table reruns).
REFRESH_S = 5


def space_metrics(ctx: state.Lab, pending: list[str] | None = None):
    """``metrics(space)`` for the class table: the space's golden set for the current corpus, ranked by
    the current system's memo, under the current conventions (hit rate@K, MRR, NDCG@K).

    Never computed in the teacher's run: a result kept for this (space, golden file version, corpus,
    system, K, conventions) is read; a missing one is queued in the process's bounded pool
    (:func:`rag_metrics.jobs.pool`, ``lab.budgets.workers`` threads) and shows as empty until the
    table's next refresh finds it.  Spaces still computing are appended to ``pending``."""
    k = ctx.k
    jobs = pool(server.config().budgets.workers)
    empty = {f"hit_rate@{k}": math.nan, "mrr": math.nan, f"ndcg@{k}": math.nan}

    def values(res: Any) -> dict[str, float]:
        return {f"hit_rate@{k}": res.mean("hit_rate", k), "mrr": res.mean("mrr"), f"ndcg@{k}": res.mean("ndcg", k)}

    def metrics(space: str) -> dict[str, float]:
        if space == state.space():  # the teacher's own: already computed for this page
            return values(ctx.result) if ctx.result is not None else empty
        if ctx.settings.system or ctx.corpus.level != "chunk":
            return empty
        ws = Workspace(ctx.settings.corpus, space=space)
        try:
            version = ws.path.stat().st_mtime_ns
        except OSError:
            version = 0  # reads the shared (seed) golden set
        key = ("class-metrics", space, version, ctx.settings.corpus, ctx.settings.retriever, k,
               repr(ctx.settings.options), id(ctx.memo))

        def compute() -> dict[str, float]:
            loaded = ws.load()
            golden = loaded[0] if loaded is not None else ctx.corpus.seed_golden
            if golden is None:
                return empty
            return values(evaluate(golden, ctx.memo.run_for(golden), ctx.settings.options))

        state_, got = jobs.result(key, compute)
        if state_ == "done":
            return dict(got)
        if state_ in ("pending", "busy") and pending is not None:
            pending.append(space)
        return empty  # an error in one space must not hide the class
    return metrics


def _reset_all(spaces: list[str]) -> None:
    teacher.reset_progress(spaces)
    for x in Course.COURSE:
        state.pop(_keys(x.key)[0])
    state.notice(f"Lesson progress reset in {len(spaces)} space(s).", "success")


def _shared_golden(ctx: state.Lab) -> Any:
    loaded = Workspace(ctx.settings.corpus).load()
    return loaded[0] if loaded is not None else ctx.corpus.seed_golden


def _push_all(ctx: state.Lab, spaces: list[str]) -> None:
    golden = _shared_golden(ctx)
    if golden is None:
        state.notice("The shared space has no golden set for this corpus yet.", "warning")
        return
    # only the private sets that differ (a space with none reads the shared set already)
    written = teacher.push_golden(golden, ctx.settings.corpus,
                                  teacher.golden_would_change(golden, ctx.settings.corpus, spaces))
    state.drop_golden_sessions()
    state.notice(f"Pushed the shared golden set ({len(golden)} questions) to {len(written)} private space(s).",
                 "success")


def _reset_one(ctx: state.Lab, space: str, label: str, what: str) -> None:
    """Reset one student: their lesson ``progress``, their private ``golden`` set of the current corpus, or ``both``."""
    if not allowed(state.caller(), "see-class"):
        return
    done = teacher.reset_student(space, ctx.settings.corpus, progress=what in ("progress", "both"),
                                 golden=what in ("golden", "both"))
    state.drop_golden_sessions()
    state.notice(f"Reset {views.esc(label)}: {', '.join(done) or 'nothing to reset'}.", "success")


def _one_student(ctx: state.Lab, seats: list[tuple[str, str]]) -> None:
    """The teacher's controls for one student: reset their progress, their private golden set, or both."""
    private = [(label, space) for label, space in seats if space != DEFAULT_SPACE]
    if not private:
        return
    labels = {space: label for label, space in private}
    # the student on a line of their own: a 40-character name whole at 1024 px (in a third it was cut)
    pick = st.selectbox("Student", list(labels), format_func=labels.get, key="class_one_pick")
    c2, c3 = st.columns([3, 2], vertical_alignment="bottom")
    what = c2.selectbox("Reset", ["progress", "golden", "both"], key="class_one_what",
                        format_func={"progress": "lesson progress", "golden": "private golden set",
                                     "both": "progress and golden set"}.get)
    c3.button("Reset this student", key="class_one_reset", icon=":material/person_remove:", on_click=_reset_one,
              args=(ctx, str(pick), labels.get(pick, ""), str(what)), disabled=pick is None)


def class_view(ctx: state.Lab) -> None:
    """The teacher's view: the class table (refreshing itself), its CSV, reset (everyone or one student)
    and push."""
    views.show_notice()
    if allowed(state.caller(), "manage-class"):  # class mode: the seats live on the Class page
        st.page_link("pages/roster.py", label="The Class page: seats, budgets and what each seat spent",
                     icon=":material/groups:")
    seats = roster()
    _class_table(ctx)
    private = [space for _, space in seats if space != DEFAULT_SPACE]
    views.section("Manage the class")
    _one_student(ctx, seats)
    _manage(ctx, seats, private)


def _class_table_body(ctx: state.Lab) -> None:
    """The class table and its CSV (re-read from the seats' progress files on every refresh)."""
    seats = roster()
    pending: list[str] = []
    table = teacher.class_progress(seats, metrics=space_metrics(ctx, pending))
    st.caption(f"{len(seats)} seat(s) · corpus {views.esc(ctx.corpus.label or ctx.settings.corpus)} · system "
               f"{views.esc(ctx.settings.system_name)} · K = {ctx.k}. A step is done when all its tasks are solved. "
               f"Refreshes every {REFRESH_S} s" + (f"; metrics of {len(pending)} seat(s) are being computed"
                                                   if pending else "") + ".")
    _render_table(table)


def stop_if_signed_out() -> None:
    """First thing in every self-refreshing teacher table (:func:`ui.identity.stop_if_signed_out`)."""
    from ui import identity

    identity.stop_if_signed_out()


@st.fragment(run_every=REFRESH_S)
def _class_table(ctx: state.Lab) -> None:
    stop_if_signed_out()
    _class_table_body(ctx)


#: The class table's step marks: done, the step the student is on, not yet.
STEP_MARKS = ("●", "◆", "○")  # ◐ fell back to a wider font; ▸ was too small to see


def seat_column_width(names: list[str]) -> int:
    """Pixels for the class table's Seat column (:func:`ui.identity.name_column_width`)."""
    from ui import identity

    return identity.name_column_width(names)


def _header_px(title: str) -> int:
    """A short header's width in the table: capitals and "@" are wider than the rest (nDCG@5 needs 68 px)."""
    return int(20 + sum(10 if ch.isupper() or ch == "@" else 7.5 for ch in title))


def _steps_marks(table: pd.DataFrame, steps: list[str]) -> list[str]:
    done, on, todo = STEP_MARKS
    return ["".join(done if bool(row[c]) else on if i == int(row["step"]) - 1 else todo for i, c in enumerate(steps))
            for _, row in table.iterrows()]


def _render_table(table: pd.DataFrame) -> None:
    steps = teacher.step_columns()
    # the 11 steps as one column of marks (one narrow column each cut the table at 1024 px: issue 50), so the
    # whole name, the steps, the quiz and the metrics fit a projector's 1024 px; the quiz answers follow
    view = table.assign(marks=_steps_marks(table, steps) if len(table) else [],
                        done=[f"{int(n)}/{len(steps)}" for n in table["steps_done"]] if len(table) else [])
    n_quiz = len(LS.QUIZ)
    config: dict[str, Any] = {
        "seat": st.column_config.TextColumn("Seat", pinned=True, width=seat_column_width(list(table["seat"]))),
        "marks": st.column_config.TextColumn("Steps", width=116, help=(
            "One mark per step of lesson 2: ● done, ◆ the step the student is on, ○ not yet. Steps: " + "; ".join(
                f"{i + 1} {LS.text(s.title)}" for i, s in enumerate(LS.STEPS)))),
        "done": st.column_config.TextColumn("Done", width=46, help="Steps done (all their tasks solved)."),
        "quiz": st.column_config.NumberColumn("Quiz", width=44, help=f"Quiz answers right, of {n_quiz}.")}
    lessons = teacher.lesson_columns() if len(Course.COURSE) > 1 else []
    for c, x in zip(lessons, Course.COURSE):   # a column per lesson of the course: steps done / total
        config[c] = st.column_config.TextColumn(f"L{x.number}", width=48, help=(
            f"Lesson {x.number}, {LS.text(x.title)}: steps done / steps."))
    for c in table.columns:  # the space's current metrics, short headers (the name in the help)
        if c not in config and table[c].dtype.kind == "f":
            title = str(c).replace("hit_rate", "hit").replace("ndcg", "nDCG").replace("mrr", "MRR")
            config[c] = st.column_config.NumberColumn(title, format="%.3f", help=str(c),
                                                      width=max(52, _header_px(title)))
    first = ["seat", "marks", "done", "quiz", *lessons]

    # the code exercises have their own table below (ui.exercises.class_view); their columns go to the CSV
    hidden = {"space", "step", "steps_done", *steps, *teacher.lesson_columns(),
              *(c for e in EXERCISES for c in teacher.exercise_columns(e.name))}
    rest = [c for c in table.columns if c not in first and c not in hidden]
    numbers = [c for c in rest if table[c].dtype.kind == "f"]  # the space's current metrics, then the answers
    order = first + numbers + [c for c in rest if c not in numbers]
    st.dataframe(view, hide_index=True, width="stretch", column_config=config, column_order=order, key="class_table")
    course = (f" {', '.join(f'L{x.number}' for x in Course.COURSE)}: each lesson of the course, steps done / steps."
              if lessons else "")
    st.caption("Steps: one mark per step of lesson 2, ● done, ◆ the step the student is on, ○ not yet (hover the "
               "header for the steps' titles)." + course + " Then the space's current metrics and, to the right, "
               "each quiz answer. The CSV has one column per step of lesson 2, one per lesson of the course and, per "
               "code exercise, the checks passed by the last run (as the student's browser reported them) and the "
               "number of runs.")
    st.download_button("Export progress as CSV", teacher.progress_csv(table), file_name="class_progress.csv",
                       mime="text/csv", icon=":material/download:", key="class_csv")


def _manage(ctx: state.Lab, seats: list[tuple[str, str]], private: list[str]) -> None:
    c1, c2 = st.columns(2, gap="large")
    with c1:
        sure = st.checkbox("Yes, reset every student's lesson progress", key="class_reset_sure",
                           help="Every lesson of the course starts afresh for every student.")
        st.button("Reset progress", key="class_reset", disabled=not sure, on_click=_reset_all,
                  args=([space for _, space in seats],), icon=":material/restart_alt:")
    with c2:
        # short labels: in half of a 1024 px page the long ones were cut ("… every pri…")
        golden = _shared_golden(ctx)
        changing = teacher.golden_would_change(golden, ctx.settings.corpus, private) if golden is not None else []
        sure_push = st.checkbox(f"Yes, overwrite {len(changing)} private golden set(s)", key="class_push_sure",
                                help=f"The private golden sets that differ from the shared one ({len(changing)} of "
                                     f"{len(private)} space(s)); the others read the shared set already.")
        st.button("Push the shared golden set", key="class_push",
                  disabled=not (sure_push and changing), on_click=_push_all, args=(ctx, private),
                  icon=":material/publish:",
                  help="To every private space. Each private space's previous golden set stays in its undo "
                       "history.")
