"""Rendering of the Exercises page ("Write the metric yourself") and the teacher's exercise table.

The exercises are data in :mod:`rag_metrics.exercises`; the student's code runs in their browser
(:mod:`ui.exercise_editor`); this module builds the checks of the current golden set and system,
grades what the browser reports (:func:`rag_metrics.exercises.grade`, which never executes code),
keeps code and attempts in the student's space (:mod:`rag_metrics.exercises.attempts`) and shows
the verdict.  Widget and session keys start with ``ex_`` / ``_ex_``.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from rag_metrics import exercises as EX
from rag_metrics import lesson as LS
from rag_metrics.errors import InputError as EX_InputError
from rag_metrics.exercises import attempts as AT
from rag_metrics.lesson import course as Course
from ui import exercise_editor, lesson, session, state, tutor, views
from ui.keys import EX_CHECKS as _CHECKS
from ui.keys import EX_HINTS as _HINTS
from ui.keys import EX_LANG as LANG
from ui.keys import EX_LESSON as LESSON_PICK
from ui.keys import EX_NONCE as _NONCE
from ui.keys import EX_PICK as PICK
from ui.keys import EX_PICK_KEPT as _PICK_KEPT
from ui.keys import EX_QP_SEEN as _QP_SEEN
from ui.keys import EX_RERUN_EDITOR as _RERUN_EDITOR
from ui.keys import EX_RERUNS as _RERUNS
from ui.keys import EX_RESET as _RESET
from ui.keys import EX_VERDICT as _VERDICT

_T: dict[str, tuple[str, str]] = {
    "title": ("Write the metric yourself", "Skriv metrikken selv"),
    "intro": ("Write each of the lesson's functions in Python. Your code runs in your own browser (in Pyodide, a "
              "sandbox with no access to the server or this page); the lab checks the values it returns "
              "against its own engine, under the lesson's conventions.",
              "Skriv hver af lektionens funktioner i Python. Din kode kører i din egen browser (i Pyodide, en "
              "sandkasse uden adgang til serveren eller denne side); laboratoriet tjekker de værdier, den "
              "returnerer, mod sin egen motor med lektionens konventioner."),
    "pick": ("Exercise", "Opgave"),
    "examples": ("Worked examples", "Gennemregnede eksempler"),
    "hint": ("Hint {n}", "Tip {n}"),
    "show_hint": ("Show a hint ({n} of {total})", "Vis et tip ({n} af {total})"),
    "no_more_hints": ("That was the last hint.", "Det var det sidste tip."),
    "reset": ("Start again from the starter code", "Start forfra med startkoden"),
    "run": ("Run checks", "Kør tjek"),
    "running": ("Running your code…", "Kører din kode…"),
    "loading": ("Starting Python in your browser (the first time takes a few seconds)…",
                "Starter Python i din browser (første gang tager det nogle sekunder)…"),
    "grading": ("Checking the values…", "Tjekker værdierne…"),
    "stopped": ("stopped: ran longer than {s} s", "stoppet: kørte længere end {s} s"),
    "stopped_long": ("Your code was stopped: it ran longer than {s} s. Look for a loop that never ends (a `while` "
                     "whose condition stays true), then run the checks again.",
                     "Din kode blev stoppet: den kørte længere end {s} s. Se efter en løkke, der aldrig slutter "
                     "(en `while`, hvis betingelse bliver ved med at være sand), og kør tjekkene igen."),
    "failed": ("The runner failed; run the checks again", "Kørslen fejlede; kør tjekkene igen"),
    "failed_long": ("Your code could not be run to the end in the browser ({msg}). Run the checks again; if it "
                    "happens again, reload the page.",
                    "Din kode kunne ikke køres færdig i browseren ({msg}). Kør tjekkene igen; sker det igen, så "
                    "genindlæs siden."),
    "too_large": ("The result was too large to send", "Resultatet var for stort til at sende"),
    "too_large_long": ("Your function's results were too large to check (more than {n:,} characters). Return a "
                       "number (or the small structure the exercise asks for), not a big list.",
                       "Din funktions resultater var for store til at blive tjekket (over {n:,} tegn). Returnér et "
                       "tal (eller den lille struktur, opgaven beder om), ikke en stor liste."),
    "too_long": ("Your code is too long to run (the limit is {n:,} characters)",
                 "Din kode er for lang til at køre (grænsen er {n:,} tegn)"),
    "editor": ("Your Python code", "Din Python-kode"),
    "first_failure": ("First failing check: {label}", "Første tjek, der fejler: {label}"),
    "input": ("Input", "Input"),
    "expected": ("Expected", "Forventet"),
    "got": ("Your function returned", "Din funktion returnerede"),
    "hint_label": ("Hint", "Tip"),
    "all_checks": ("All checks", "Alle tjek"),
    "col_check": ("Check", "Tjek"),
    "col_ok": ("Passed", "Bestået"),
    "col_message": ("Result", "Resultat"),
    "done": ("Every check passed: your function computes what the lab computes.",
             "Alle tjek bestået: din funktion beregner det samme som laboratoriet."),
    "yours": ("Your {metric} (mean)", "Din {metric} (gennemsnit)"),
    "dashboard": ("Lab's {metric}, lesson's conventions (Dashboard: trec_eval's)",
                  "Laboratoriets {metric}, lektionens konventioner (Dashboard: trec_evals)"),
    "same_questions": ("Both over the same {n} questions of the current golden set and system, under the "
                       "lesson's conventions. The Dashboard uses trec_eval's conventions, so its {metric} "
                       "can differ from these two.",
                       "Begge over de samme {n} spørgsmål i det nuværende guldsæt og system, med lektionens "
                       "konventioner. Dashboardet bruger trec_evals konventioner, så dets {metric} kan afvige "
                       "fra disse to."),
    "runs": ("Runs so far: {n} · best: {best} of {total} checks",
             "Kørsler indtil nu: {n} · bedst: {best} af {total} tjek"),
    "solved": ("solved", "løst"),
    "no_assets": ("The code editor's files (Pyodide and the editor) are not installed on this server. The "
                  "operator runs `./lab app` (or `./lab class`) once, which installs them with npm into "
                  "static/vendor/.",
                  "Kodeeditorens filer (Pyodide og editoren) er ikke installeret på denne server. Den, der driver "
                  "serveren, kører `./lab app` (eller `./lab class`) én gang, så installeres de med npm i "
                  "static/vendor/."),
    "not_saved": ("Your code was checked but not saved: {msg}", "Din kode blev tjekket, men ikke gemt: {msg}"),
    "draft_not_saved": ("Your draft was not saved: {msg}", "Dit udkast blev ikke gemt: {msg}"),
    "language": ("Language", "Sprog"),
    "printed": ("What your code printed (`print()`)", "Det, din kode skrev ud (`print()`)"),
    "printed_cut": ("Cut: only the first {n} characters are shown.", "Afkortet: kun de første {n} tegn vises."),
    "shapes": ("What your function gets: one real item", "Det, din funktion får: et rigtigt eksempel"),
    "shapes_caption": ("From the current golden set and system: the data the check on your golden set calls your "
                       "function with. `golden_dataset` is a list of such dicts; `retriever.retrieve()` returns a "
                       "list of such dicts, best first.",
                       "Fra det nuværende guldsæt og system: de data, tjekket på dit guldsæt kalder din funktion "
                       "med. `golden_dataset` er en liste af sådanne dicts; `retriever.retrieve()` returnerer en "
                       "liste af sådanne dicts, bedste først."),
    # the teacher's table
    "class_title": ("Code exercises", "Kodeopgaver"),
    "class_caption": ("Per student and exercise: checks passed by the last run of total, and (in brackets) how "
                      "many times they ran the checks. These results are **reported by the student's browser**: "
                      "the server checks the values it was sent, but cannot see which code produced them. Re-run "
                      "a student's code in your own browser below: its result shows beside the reported one "
                      "(✓ re-run: every check passed in your browser; ✗ re-run: not).",
                      "Pr. elev og opgave: tjek bestået i den seneste kørsel ud af alle, og (i parentes) hvor "
                      "mange gange de har kørt tjekkene. Resultaterne er **meldt af elevens browser**: serveren "
                      "tjekker de værdier, den fik, men kan ikke se, hvilken kode der gav dem. Kør en elevs kode "
                      "igen i din egen browser herunder: resultatet vises ved siden af det meldte "
                      "(✓ kørt igen: alle tjek bestået i din browser; ✗ kørt igen: ikke)."),
    "reported": ("reported {passed}/{total} ({runs})", "meldt {passed}/{total} ({runs})"),
    "rerun_cell": ("{mark} re-run {passed}/{total}", "{mark} kørt igen {passed}/{total}"),
    "class_none": ("No student has run an exercise yet.", "Ingen elev har kørt en opgave endnu."),
    "show_code": ("A student's code: read it, or re-run it in your browser",
                  "En elevs kode: læs den, eller kør den igen i din browser"),
    "rerun_help": ("Run checks below runs this code in **your** browser's sandbox (never on the server), on the "
                   "shared golden set and system; the result is yours, not the student's report.",
                   "Kør tjek herunder kører koden i **din** browsers sandkasse (aldrig på serveren) på det delte "
                   "guldsæt og system; resultatet er dit, ikke elevens melding."),
    "rerun_run": ("Re-run in my browser", "Kør igen i min browser"),
    "rerun_result": ("Re-run in your browser: {text}", "Kørt igen i din browser: {text}"),
    "student": ("Student", "Elev"),
    "no_code": ("This student has not run this exercise yet.", "Denne elev har ikke kørt denne opgave endnu."),
    "tries": ("Runs: {n}", "Kørsler: {n}"),
}


def T(key: str, lang: str, **values: Any) -> str:
    en, da = _T[key]
    return (da if lang == "da" else en).format(**values)


# ---- language (the Lesson's setting, kept in the student's progress) ------------------------------
def _on_lang() -> None:
    lesson.set_language(state.value(LANG, "en"))


def language() -> str:
    """The segmented control of the Lesson's language; returns ``"en"`` or ``"da"``."""
    lang = lesson.lang()
    state.set_value(LANG, lang)
    st.segmented_control(T("language", lang), list(LS.LANGUAGES), key=LANG, format_func=LS.LANGUAGES.get,
                         required=True, on_change=_on_lang)
    return lang


# ---- which exercise ---------------------------------------------------------------------------------
def _names() -> list[str]:
    return [e.name for e in EX.EXERCISES]


def _on_pick() -> None:
    state.set_value(_PICK_KEPT, state.value(PICK))
    st.query_params["exercise"] = str(state.value(PICK))


def lesson_groups() -> dict[str, list[EX.Exercise]]:
    """The exercises grouped by the course's lesson, in the course's order (a lesson with none is left out; an
    exercise of a lesson not in the course comes last, under its key)."""
    order = {x.key: x.number for x in Course.COURSE}
    groups: dict[str, list[EX.Exercise]] = {}
    for e in sorted(EX.EXERCISES, key=lambda e: order.get(e.lesson, len(order) + 1)):
        groups.setdefault(e.lesson, []).append(e)
    return groups


def lesson_title(key: str, lang: str) -> str:
    """``Lesson 3: Generation metrics …`` in ``lang`` (the key itself for a lesson not in the course)."""
    x = next((x for x in Course.COURSE if x.key == key), None)
    if x is None:
        return key
    return LS.text("ui.course_lesson", lang, n=x.number, title=LS.text(x.title, lang))


def _on_pick_lesson() -> None:
    group = lesson_groups().get(str(state.value(LESSON_PICK)))
    if group:
        state.set_value(PICK, group[0].name)
        _on_pick()


def pick(lang: str) -> str:
    """The exercise picker, grouped by lesson (a lesson picker first, when two or more lessons have exercises);
    ``?exercise=NAME`` opens that exercise (an unknown name: the first one)."""
    names = _names()
    asked = st.query_params.get("exercise")
    if asked in names and asked != state.value(_QP_SEEN):
        state.set_value(_QP_SEEN, asked)
        state.set_value(PICK, asked)
    if state.value(PICK) not in names:  # Streamlit drops a widget's key on a page that does not draw it
        kept = state.value(_PICK_KEPT)
        state.set_value(PICK, kept if kept in names else names[0])
    state.set_value(_PICK_KEPT, state.value(PICK))
    groups = lesson_groups()
    here = EX.exercise(str(state.value(PICK))).lesson
    if len(groups) > 1:
        state.set_value(LESSON_PICK, here)
        st.selectbox(LS.text("ui.course_pick", lang), list(groups), key=LESSON_PICK, on_change=_on_pick_lesson,
                     format_func=lambda k: lesson_title(k, lang))
    shown = groups[here]
    store = _store()
    solved = {e.name for e in shown if store.load(e.name).solved}
    titles = {e.name: f"{'✓' if e.name in solved else '○'} {i}. {e.text('title', lang)}"
              for i, e in enumerate(shown, start=1)}
    st.selectbox(T("pick", lang), [e.name for e in shown], key=PICK, format_func=titles.get, on_change=_on_pick)
    return str(state.value(PICK))


# ---- checks, storage --------------------------------------------------------------------------------
def _store() -> AT.AttemptStore:
    return AT.store_for_space(state.space())


def checks_for(ctx: state.Lab, name: str, lang: str = "en") -> tuple[EX.Check, ...]:
    """The exercise's checks on the current golden set and system, their made-up edge cases in ``lang``
    (built once per exercise, evaluation and language; the same checks grade the report of the payload
    they were sent in)."""
    kept = state.value(_CHECKS)
    if kept and kept[0] == name and kept[1] == (ctx.key, lang):
        return kept[2]
    checks = EX.build_checks(name, ctx.result.golden, ctx.result.run, lang=lang)
    state.set_value(_CHECKS, (name, (ctx.key, lang), checks))
    return checks


def _verdicts() -> dict[str, dict[str, Any]]:
    return session.default(_VERDICT, {})


def handle_report(name: str, checks: tuple[EX.Check, ...], lang: str) -> None:
    """Grade the browser's report (put into ``st.session_state[REPORT]`` by the component, or by a
    test), count the attempt and keep the code in the student's space.  Reports for another
    exercise than the one shown, and a report already handled, are dropped."""
    report = session.pop(exercise_editor.REPORT, None)
    if not isinstance(report, dict):
        return
    nonce = str(report.get("nonce", ""))[:100]
    if nonce and nonce == state.value(_NONCE):
        return
    state.set_value(_NONCE, nonce)
    doc = str(report.get("doc", name))
    if doc.split(":", 1)[0] != name:
        return
    code = report.get("code")
    code = code if isinstance(code, str) else ""
    status = str(report.get("status", ""))[:20]
    entry: dict[str, Any] = {"verdict": None, "status": status, "message": "", "nonce": nonce}
    if len(code) > AT.MAX_CODE_CHARS:
        entry.update(status="error", message=T("too_long", lang, n=AT.MAX_CODE_CHARS))
        _verdicts()[name] = entry
        return
    if status == "ok":
        entry["verdict"] = EX.grade(name, checks, report.get("result", ""), lang)
    elif status == "timeout":
        entry["message"] = T("stopped_long", lang, s=exercise_editor.TIMEOUT_S)
    elif status == "too_large":
        entry["message"] = T("too_large_long", lang, n=exercise_editor.LIMITS["max_result"])
    else:
        msg = views.esc(str(report.get("message", ""))[:300])
        entry.update(status="error", message=T("failed_long", lang, msg=msg))
    _verdicts()[name] = entry
    passed = entry["verdict"].passed if entry["verdict"] is not None else 0
    try:
        _store().record(name, code, passed=passed, total=len(checks))
    except (OSError, EX_InputError) as err:
        state.notice(T("not_saved", lang, msg=views.esc(str(err))), "error")


def handle_draft(lang: str) -> None:
    """Keep the editor's draft (put into ``st.session_state[DRAFT]`` by the component) in the student's own
    space: only for an exercise of the catalogue, for the editor's current document of it (a draft of the
    code a reset replaced is dropped), and within the size limit (:meth:`AttemptStore.save_draft`)."""
    draft = session.pop(exercise_editor.DRAFT, None)
    if not isinstance(draft, dict) or not isinstance(draft.get("code"), str):
        return
    name, _, fresh = str(draft.get("doc", "")).partition(":")
    if name not in _names() or fresh != str(session.value(_RESET, {}).get(name, 0)):
        return
    try:
        _store().save_draft(name, draft["code"])
    except (OSError, EX_InputError) as err:
        state.notice(T("draft_not_saved", lang, msg=views.esc(str(err))), "error")


def _result_line(name: str, lang: str) -> dict[str, str] | None:
    """The editor's result line for the last run of ``name`` in this session."""
    entry = _verdicts().get(name)
    if not entry:
        return None
    v, nonce = entry["verdict"], entry.get("nonce", "")
    if v is not None:
        return {"text": v.headline(lang), "kind": "pass" if v.all_passed else "fail", "nonce": nonce}
    if entry["status"] == "timeout":
        return {"text": T("stopped", lang, s=exercise_editor.TIMEOUT_S), "kind": "stopped", "nonce": nonce}
    if entry["status"] == "too_large":
        return {"text": T("too_large", lang), "kind": "error", "nonce": nonce}
    return {"text": T("failed", lang), "kind": "error", "nonce": nonce}


# ---- the page -----------------------------------------------------------------------------------------
def hints(ex: EX.Exercise, lang: str) -> None:
    """The graded hints, revealed one at a time (gentlest first)."""
    shown: dict[str, int] = session.default(_HINTS, {})
    items = ex.hints.get(lang) or ex.hints["en"]
    n = min(shown.get(ex.name, 0), len(items))
    for i in range(n):
        st.info(f"**{T('hint', lang, n=i + 1)}.** {items[i]}", icon=":material/lightbulb:")
    if n < len(items):
        def more() -> None:
            shown[ex.name] = n + 1
        st.button(T("show_hint", lang, n=n + 1, total=len(items)), key=f"ex_hint_{ex.name}", on_click=more,
                  icon=":material/lightbulb:")


def _labels(lang: str) -> dict[str, str]:
    return {"run": T("run", lang), "running": T("running", lang), "loading": T("loading", lang),
            "grading": T("grading", lang), "stopped": T("stopped", lang, s=exercise_editor.TIMEOUT_S),
            "failed": T("failed", lang), "too_large": T("too_large", lang),
            "too_long": T("too_long", lang, n=AT.MAX_CODE_CHARS), "editor": T("editor", lang)}


def _shown(value: Any) -> str:
    """A value as short literal text in Python's spelling (``None``, ``True``: what the student's function
    returned, not JSON's ``null``), for st.code: never interpreted."""
    text = repr(value)
    return text if len(text) <= 2000 else text[:2000] + "…"


def _printed(v: EX.Verdict, lang: str) -> None:
    """What the student's code printed, as text (``st.code``: never interpreted), bounded, saying so when cut."""
    if not v.stdout and not v.stdout_cut:
        return
    st.caption(T("printed", lang))
    st.code(v.stdout, language="text", wrap_lines=True)
    if v.stdout_cut:
        st.caption(T("printed_cut", lang, n=len(v.stdout)))


def shapes(checks: tuple[EX.Check, ...], lang: str) -> None:
    """One real ``golden_dataset`` item and one real ``retrieve()`` result, as Python values (from the check on
    the current data: what the student's function is called with)."""
    import pprint

    found = EX.example_values(checks)
    if found is None:
        return
    item, results, k = found
    with st.expander(T("shapes", lang), expanded=True):
        st.caption(T("shapes_caption", lang))
        st.code("golden_dataset[0]\n" + pprint.pformat(item, width=90, sort_dicts=False), language="python",
                wrap_lines=True)
        st.code(f"retriever.retrieve(golden_dataset[0]['question'], top_k={k})\n"
                + pprint.pformat(results, width=90, sort_dicts=False), language="python", wrap_lines=True)


def verdict_view(name: str, lang: str) -> None:
    """The last run's verdict: headline, plain-words error, the first failure, the Dashboard's mean."""
    entry = _verdicts().get(name)
    if not entry:
        return
    v = entry["verdict"]
    if v is None:
        st.error(entry["message"], icon=":material/timer_off:" if entry["status"] == "timeout"
                 else ":material/error:")
        return
    if v.error:   # one message with its line: nothing was checked, so no count and no list of checks
        st.error(views.esc(v.error), icon=":material/error:")
        _printed(v, lang)
        return
    if v.all_passed:
        st.success(f"**{views.esc(v.headline(lang))}.** {T('done', lang)}", icon=":material/check_circle:")
    else:
        st.warning(f"**{views.esc(v.headline(lang))}**", icon=":material/rule:")
    _printed(v, lang)
    f = v.first_failure
    if f is not None and not v.error:
        with st.container(border=True):
            st.markdown(f"**{views.esc(T('first_failure', lang, label=f.label))}**")
            st.markdown(views.esc(lesson.numbers_in(f.message, lang)))
            if f.input:
                st.caption(T("input", lang))
                st.code(_shown(dict(f.input)), language="python", wrap_lines=True)
            left, right = st.columns(2)
            left.caption(T("expected", lang))
            left.code(_shown(f.expected), language="python", wrap_lines=True)
            right.caption(T("got", lang))
            right.code(_shown(f.got), language="python", wrap_lines=True)
            if f.hint:
                st.info(f"**{T('hint_label', lang)}:** {f.hint}", icon=":material/lightbulb:")
    if v.dashboard:
        d = v.dashboard
        metric = views.esc(str(d.get("metric", "")))
        a, b = st.columns(2)
        a.metric(T("yours", lang, metric=metric), lesson.num(d.get("student"), 4))
        b.metric(T("dashboard", lang, metric=metric), lesson.num(d.get("dashboard"), 4))
        st.caption(T("same_questions", lang, n=d.get("questions", 0), metric=metric))
    with st.expander(T("all_checks", lang)):
        import pandas as pd

        st.dataframe(pd.DataFrame({T("col_check", lang): [r.label for r in v.results],
                                   T("col_ok", lang): [r.passed for r in v.results],
                                   T("col_message", lang): [lesson.numbers_in(r.message, lang)
                                                            for r in v.results]}),
                     hide_index=True, width="stretch")


def render(ctx: state.Lab) -> None:
    """The whole Exercises page."""
    lang = language()
    st.title(T("title", lang))
    st.caption(T("intro", lang))
    views.show_notice()
    name = pick(lang)
    ex = EX.exercise(name)
    try:
        checks = checks_for(ctx, name, lang)
    except EX_InputError as err:
        views.input_error(err, "Cannot build the checks")
        return
    handle_draft(lang)
    handle_report(name, checks, lang)
    st.subheader(ex.text("title", lang), divider="gray")
    st.markdown(ex.text("prompt", lang))
    examples = ex.examples.get(lang) or ex.examples.get("en") or ()
    if examples:
        with st.expander(T("examples", lang)):
            for md in examples:
                st.markdown(md)
    shapes(checks, lang)
    hints(ex, lang)
    saved = _store().load(name)
    resets: dict[str, int] = session.default(_RESET, {})
    if not exercise_editor.assets_ready():
        st.error(T("no_assets", lang), icon=":material/error:")
    else:
        fresh = resets.get(name, 0)
        code = saved.draft or (ex.starter if fresh or not saved.code else saved.code)  # a draft survives a reload
        exercise_editor.editor(doc_id=f"{name}:{fresh}", code=code,
                               payload=EX.browser_payload(name, checks, lang), harness=EX.HARNESS,
                               labels=_labels(lang), verdict=_result_line(name, lang),
                               keep=exercise_editor.keep_key(state.space(), name))

    def reset() -> None:
        resets[name] = resets.get(name, 0) + 1
        _verdicts().pop(name, None)
        try:
            _store().save_draft(name, "")  # the starter again, also after a reload
        except (OSError, EX_InputError):
            pass

    st.button(T("reset", lang), key=f"ex_reset_{name}", on_click=reset, icon=":material/restart_alt:")
    if saved.attempts:
        st.caption(T("runs", lang, n=saved.attempts, best=saved.best, total=saved.total)
                   + (f" · ✓ {T('solved', lang)}" if saved.solved else ""))
    verdict_view(name, lang)
    tutor.exercise_box(name, lang, checks, _store, _verdicts)


# ---- the teacher's view -------------------------------------------------------------------------------
def class_view() -> None:
    """Per student and exercise: passed/total of the last run and the number of runs; one student's
    code on demand, shown read-only (``st.code``: text, escaped, never run)."""
    lang = lesson.lang()
    seats = lesson.roster()
    names = _names()
    st.subheader(T("class_title", lang), divider="gray")
    table = AT.class_attempts(seats, names)
    if table.empty or not table["attempts"].any():
        st.caption(T("class_none", lang))
        return
    st.caption(T("class_caption", lang))
    _handle_rerun(lang)  # before the table, which shows its result
    reruns = _reruns()
    rows = []
    for (seat, space), group in table.groupby(["seat", "space"], sort=False):
        row: dict[str, Any] = {T("student", lang): seat}
        for r in group.itertuples():
            cell = T("reported", lang, passed=r.passed, total=r.total, runs=r.attempts) if r.attempts else "—"
            if r.attempts:
                again = reruns.get((space, r.exercise, _code_key(AT.store_for_space(space).load(r.exercise).code)))
                if again:
                    mark = "✓" if again["total"] and again["passed"] == again["total"] else "✗"
                    cell += " · " + T("rerun_cell", lang, mark=mark, passed=again["passed"], total=again["total"])
            row[r.exercise] = cell
        rows.append(row)
    import pandas as pd

    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    with st.expander(T("show_code", lang)):
        labels = {space: seat for seat, space in seats}
        space = st.selectbox(T("student", lang), [space for _, space in seats], key="ex_class_seat",
                             format_func=lambda s: labels.get(s, s))
        name = st.selectbox(T("pick", lang), names, key="ex_class_exercise")
        if space and name:
            a = AT.store_for_space(space).load(name)
            if a.attempts:
                st.caption(T("tries", lang, n=a.attempts) + f" · {a.passed}/{a.total} · {views.esc(a.updated)}")
                st.code(a.code, language="python")
                _rerun(space, name, a.code, lang)
            else:
                st.caption(T("no_code", lang))


# ---- the teacher re-runs a student's code in the teacher's own browser (issue 50) ----------------------
def _code_key(code: str) -> str:
    import hashlib

    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def _reruns() -> dict[tuple[str, str, str], dict[str, Any]]:
    return session.default(_RERUNS, {})


def _handle_rerun(lang: str) -> None:
    """Grade the report of the teacher's re-run (its editor's document names the student's space, the
    exercise and the code) like a student's, and keep it for the table (this session only; never saved in
    the student's space).  A report for code that is not the student's saved code is dropped."""
    report = session.pop(exercise_editor.REPORT, None)
    if not isinstance(report, dict) or not str(report.get("doc", "")).startswith("rerun:"):
        return
    space, _, rest = str(report["doc"])[len("rerun:"):].partition(":")
    name = rest.split(":", 1)[0]
    code = report.get("code")
    if name not in _names() or not isinstance(code, str) or AT.store_for_space(space).load(name).code != code:
        return
    try:
        checks = checks_for(state.current(), name, lang)
    except EX_InputError:
        return
    entry: dict[str, Any] = {"passed": 0, "total": len(checks), "kind": "error",
                             "nonce": str(report.get("nonce", ""))[:100]}
    if report.get("status") == "ok":
        v = EX.grade(name, checks, report.get("result", ""), lang)
        entry.update(passed=v.passed, text=v.headline(lang), kind="pass" if v.all_passed else "fail")
    elif report.get("status") == "timeout":
        entry["text"] = T("stopped", lang, s=exercise_editor.TIMEOUT_S)
    else:
        entry["text"] = T("failed", lang)
    _reruns()[(space, name, _code_key(code))] = entry


def _rerun(space: str, name: str, code: str, lang: str) -> None:
    """The editor on the student's code: its "Run checks" runs it in the teacher's browser sandbox (as
    the Exercises page does for a student), on the shared golden set and system (:func:`_handle_rerun`
    grades what it reports)."""
    ctx = state.current_or_stop()
    try:
        checks = checks_for(ctx, name, lang)
    except EX_InputError as err:
        views.input_error(err, "Cannot build the checks")
        return
    doc = f"rerun:{space}:{name}:{_code_key(code)[:16]}"
    key = (space, name, _code_key(code))
    st.caption(T("rerun_help", lang))
    if not exercise_editor.assets_ready():
        st.error(T("no_assets", lang), icon=":material/error:")
        return
    done = _reruns().get(key)
    verdict = {k: done[k] for k in ("text", "kind", "nonce")} if done else None
    exercise_editor.editor(doc_id=doc, code=code, payload=EX.browser_payload(name, checks, lang), harness=EX.HARNESS,
                           labels={**_labels(lang), "run": T("rerun_run", lang)}, verdict=verdict,
                           key=_RERUN_EDITOR)
    if done:
        show = st.success if done["kind"] == "pass" else st.warning
        show(views.esc(T("rerun_result", lang, text=done["text"])), icon=":material/replay:")
