"""The "Ask the tutor" box of every lesson step and every exercise, and the teacher's tutor settings.

The tutor itself is the library's (:mod:`rag_metrics.tutor`: it finds the course's passages, asks the class's
model, guards the reply); this module draws it.  :func:`box` sends the question with where the student is,
their current code and last verdict (an exercise) and the lesson's language, streams the model's answer
(``st.write_stream`` over the ``Token`` events), then shows the passages it cited as links.  A reply the guard
withheld, and an answer without a model (the best matching passages and the diagnosis of the last run), are
labelled as such; nothing pretends to be a model.

Who may ask is the policy's (``allowed(caller, "ask-tutor", on)``); how much, too: ``limit(caller,
"tutor_questions_per_seat" | "tutor_tokens_per_seat", budgets)`` over the operator's ``[lab.budgets]`` with the
teacher's numbers in their place (:class:`rag_metrics.server.budgets.TutorSettings`), counted per seat in the class's
shared :class:`rag_metrics.server.budgets.TutorLedger`.  Every string a person typed (the question) and every passage
is shown as plain text.  Widget and session keys start with ``tutor_`` / ``_tutor_``.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.server.budgets import TutorLedger, TutorPlan, TutorSettings
from rag_metrics.server.policy import allowed, limit
from ui import identity, server, state
from ui.context import esc
from ui.keys import TUTOR_REPLIES as _REPLIES
from ui.keys import TUTOR_SAVED as _SAVED
from ui.keys import tutor_widget

_T: dict[str, tuple[str, str]] = {
    "title": ("Ask the tutor", "Spørg vejlederen"),
    "intro": ("Ask about this step in your own words. The tutor answers from the course's own texts and guides "
              "you toward the answer; it never gives you the solution.",
              "Spørg om dette trin med dine egne ord. Vejlederen svarer ud fra kursets egne tekster og hjælper dig "
              "på vej; den giver dig aldrig løsningen."),
    "intro_exercise": ("Ask about this exercise: the tutor sees your current code and your last run's verdict, "
                       "and guides you toward the mistake; it never gives you the solution.",
                       "Spørg om denne opgave: vejlederen ser din nuværende kode og din seneste kørsels resultat "
                       "og hjælper dig med at finde fejlen; den giver dig aldrig løsningen."),
    "question": ("Your question", "Dit spørgsmål"),
    "placeholder": ("e.g. Why is my hit rate above 1?", "f.eks. Hvorfor er min hit rate over 1?"),
    "ask": ("Ask", "Spørg"),
    "empty": ("Type a question first.", "Skriv et spørgsmål først."),
    "too_long": ("Your question is {n:,} characters; keep it under {cap:,}.",
                 "Dit spørgsmål er {n:,} tegn; hold det under {cap:,}."),
    "thinking": ("The tutor is thinking…", "Vejlederen tænker…"),
    "checking": ("Checking the reply before it is shown…", "Tjekker svaret, før det vises…"),
    "sources": ("From the course", "Fra kurset"),
    "no_model": ("No tutor model is configured: here are the best matching passages of the course and the "
                 "diagnosis of your last run.",
                 "Der er ingen vejledermodel sat op: her er de bedst matchende afsnit fra kurset og diagnosen af "
                 "din seneste kørsel."),
    "no_model_lesson": ("No tutor model is configured: here are the best matching passages of the course.",
                        "Der er ingen vejledermodel sat op: her er de bedst matchende afsnit fra kurset."),
    "no_model_note": ("No tutor model is configured on this server: the tutor shows the course's best matching "
                      "passages.",
                      "Der er ingen vejledermodel på denne server: vejlederen viser kursets bedst matchende afsnit."),
    "model_failed": ("The tutor's model did not answer ({why}): here is what the course says instead.",
                     "Vejlederens model svarede ikke ({why}): her er, hvad kurset siger i stedet."),
    "no_answer": ("no answer", "intet svar"),
    "diagnosis": ("Your last run", "Din seneste kørsel"),
    "no_diagnosis": ("No run yet: press Run checks to get a diagnosis.",
                     "Ingen kørsel endnu: tryk Kør tjek for at få en diagnose."),
    "no_passages": ("No passage of the course matches this question; try other words.",
                    "Intet afsnit i kurset matcher spørgsmålet; prøv med andre ord."),
    "cached": ("Answered from the tutor's cache (costs nothing).", "Besvaret fra vejlederens cache (koster intet)."),
    "left": ("{q} of {qcap} questions left · {t:,} of {tcap:,} tokens left",
             "{q} af {qcap} spørgsmål tilbage · {t:,} af {tcap:,} tokens tilbage"),
    "unlimited": ("The tutor has no budget for you (teacher or operator): questions and tokens are not limited.",
                  "Vejlederen har intet budget for dig (lærer eller operatør): spørgsmål og tokens er ubegrænsede."),
    "spent_questions": ("You have asked all {cap} of your questions to the tutor. Ask your teacher, or read the "
                        "step again and the hints.",
                        "Du har stillet alle dine {cap} spørgsmål til vejlederen. Spørg din lærer, eller læs trinnet "
                        "og tipsene igen."),
    "spent_tokens": ("Your tutor budget of {cap:,} tokens is spent. Ask your teacher, or read the step again and "
                     "the hints.",
                     "Dit vejlederbudget på {cap:,} tokens er brugt. Spørg din lærer, eller læs trinnet og tipsene "
                     "igen."),
    "off": ("The tutor is turned off for this class (the teacher's setting).",
            "Vejlederen er slået fra for denne klasse (lærerens indstilling)."),
    "off_teacher": ("The tutor is turned off for the students; you can still try it.",
                    "Vejlederen er slået fra for eleverne; du kan stadig prøve den."),
    "not_allowed": ("Only a student with a seat, the teacher or the operator may ask the tutor.",
                    "Kun en elev med en plads, læreren eller operatøren kan spørge vejlederen."),
    "unavailable": ("The tutor is not available on this server yet.", "Vejlederen findes endnu ikke på denne server."),
    # the teacher's part (Class progress)
    "class_title": ("The tutor", "Vejlederen"),
    "class_caption": ("Turn the tutor on or off for the students and set what each seat may spend of the class's "
                      "model. Questions answered from the tutor's cache, and answers without a model, cost nothing.",
                      "Slå vejlederen til eller fra for eleverne, og bestem, hvad hver plads må bruge af klassens "
                      "model. Svar fra vejlederens cache og svar uden model koster intet."),
    "on": ("The tutor is on for the students", "Vejlederen er slået til for eleverne"),
    "questions_per_seat": ("Questions per seat", "Spørgsmål pr. plads"),
    "tokens_per_seat": ("Tokens per seat", "Tokens pr. plads"),
    "operator_default": ("The operator's number (lab.budgets.{name}) is {n:,}.",
                         "Operatørens tal (lab.budgets.{name}) er {n:,}."),
    "save": ("Save the tutor's settings", "Gem vejlederens indstillinger"),
    "saved": ("Saved: the tutor is {state}; {q:,} questions and {t:,} tokens per seat.",
              "Gemt: vejlederen er {state}; {q:,} spørgsmål og {t:,} tokens pr. plads."),
    "state_on": ("on", "slået til"),
    "state_off": ("off", "slået fra"),
    "model_line": ("Model: {model} (the operator's [lab.judge]).", "Model: {model} (operatørens [lab.judge])."),
    "no_model_line": ("No model is configured ([lab.judge] in the server configuration): the tutor shows the "
                      "course's passages and the diagnosis of the student's last run.",
                      "Ingen model er sat op ([lab.judge] i serverens konfiguration): vejlederen viser kursets "
                      "afsnit og diagnosen af elevens seneste kørsel."),
    "student": ("Student", "Elev"),
    "col_asked": ("questions asked", "spørgsmål stillet"),
    "col_counted": ("to the model", "til modellen"),
    "col_tokens": ("tokens", "tokens"),
    "show_questions": ("A student's questions to the tutor", "En elevs spørgsmål til vejlederen"),
    "col_when": ("when", "hvornår"),
    "col_where": ("where", "hvor"),
    "col_question": ("question", "spørgsmål"),
    "none_asked": ("No student has asked the tutor yet.", "Ingen elev har spurgt vejlederen endnu."),
    "none_for": ("This student has not asked the tutor yet.", "Denne elev har ikke spurgt vejlederen endnu."),
}

_LOG = logging.getLogger("rag_metrics.tutor")
#: The longest question sent (characters): a question, not a document.
MAX_QUESTION = 1000
#: The fence that opens a code block: streamed text stops there until the guard has checked the whole reply.
_FENCE = "```"
#: A passage shown without a model is cut here (its link opens the whole step or exercise).
_PASSAGE_CHARS = 700


def T(key: str, lang: str, **values: Any) -> str:
    en, da = _T[key]
    return (da if lang == "da" else en).format(**values)


# ---- the library, asked in one place (tests put a scripted tutor here) -------------------------------------
def _library() -> Any:
    """The tutor's library module (:mod:`rag_metrics.tutor.ask`), or None while it is not installed."""
    import importlib

    try:
        return importlib.import_module("rag_metrics.tutor.ask")  # the module (the package may export ask())
    except ImportError:
        return None


def endpoint() -> Any | None:
    """The class's model for the tutor (the operator's ``[lab.judge]``, as the judge's), or None: no model."""
    lib = _library()
    finder = getattr(lib, "endpoint_from_config", None) if lib is not None else None
    if finder is None:
        return None
    try:
        return finder(server.config())
    except InputError:
        return None


def _ask(request: Any, model: Any) -> Iterator[Any]:
    lib = _library()
    assert lib is not None
    return lib.ask(request, endpoint=model, cache=_cache())


@st.cache_resource(show_spinner=False)
def _cache() -> Any:
    """The process's reply cache (replies keyed by question, code, verdict, language and where)."""
    lib = _library()
    maker = getattr(lib, "ReplyCache", None) if lib is not None else None
    return maker() if maker is not None else None


@st.cache_resource(show_spinner=False)
def _warm_index(lang: str) -> Any:
    """Once per server process and language, when a tutor box is first drawn: build the tutor's index of ``lang``
    in a daemon thread (its model's load took the first question about 8 s), the model's client (its imports, about
    1 s) and the guard's view of every exercise's solution, so a student's first question does not wait for them.
    ``RAG_METRICS_WARM=0`` turns it off (as :func:`ui.cache.warm_in_background`)."""
    import atexit
    import threading

    from rag_metrics.config import setting

    if setting("warm") in ("0", "false", "no"):
        return None

    def build() -> None:
        try:
            from rag_metrics.tutor.retrieve import TutorIndex

            TutorIndex.for_language(lang).search("warm up", 1)
            from rag_metrics.config import load_server_config

            model = _library().endpoint_from_config(load_server_config())
            if model is not None:
                model.client()  # built once per process and kept (its imports and TLS context: about 1 s)
            from rag_metrics.exercises import EXERCISES
            from rag_metrics.tutor.guard import check_reply

            for ex in EXERCISES:  # the guard's view of each solution (built once, cached)
                check_reply("warm up", exercise=ex.name)
        except Exception:  # noqa: BLE001 - the first question then builds it, and says what failed
            pass

    t = threading.Thread(target=build, name=f"rag-metrics-tutor-{lang}", daemon=True)
    t.start()
    atexit.register(t.join, 120)  # a process leaving while torch loads in a thread aborts
    return t


# ---- who may ask, and how much ------------------------------------------------------------------------------
def _root() -> Any:
    from rag_metrics.server.seats import SeatRegistry

    return SeatRegistry().root


def plan() -> TutorPlan:
    """What the teacher set (on/off, budgets); the defaults when it cannot be read."""
    try:
        return TutorSettings(_root()).load()
    except OSError:
        return TutorPlan()


def spender() -> str:
    """Whose questions they are in the ledger: the seat, else the teacher (or the operator)."""
    who = state.caller()
    return who.seat or who.role


def caps() -> tuple[int | None, int | None]:
    """This caller's tutor budgets ``(questions, tokens)`` (``None``: no limit), from the one policy place."""
    budgets = plan().budgets(server.config().budgets)
    who = state.caller()
    return limit(who, "tutor_questions_per_seat", budgets), limit(who, "tutor_tokens_per_seat", budgets)


def budget_line(lang: str) -> str:
    """"3 of 20 questions left · ..." for a student; the teacher and the operator have no limit."""
    qcap, tcap = caps()
    if qcap is None or tcap is None:
        return T("unlimited", lang)
    q, t = TutorLedger(_root()).spent(spender())
    return T("left", lang, q=max(0, qcap - q), qcap=qcap, t=max(0, tcap - t), tcap=tcap)


# ---- what the box sends -----------------------------------------------------------------------------------
def verdict_text(entry: Any, lang: str) -> str:
    """The last run's verdict of an exercise as plain text for the tutor (headline, error, the first failing
    check with its message and hint), from the Exercises page's entry (``{"verdict", "status", "message"}``)."""
    if not isinstance(entry, dict):
        return ""
    v = entry.get("verdict")
    if v is None:
        return str(entry.get("message", ""))
    parts = [v.headline(lang)]
    if v.error:
        parts.append(str(v.error))
    f = v.first_failure
    if f is not None:
        parts.append(f"{f.label}: {f.message}")
        if f.hint:
            parts.append(str(f.hint))
    return "\n".join(p for p in parts if p)


def hidden_values(checks: Iterable[Any], entry: Any = None) -> tuple[Any, ...]:
    """The checks' expected values the student has not been shown (the guard looks for them in a reply); the
    first failing check's expected value is on the page already."""
    shown = None
    v = entry.get("verdict") if isinstance(entry, dict) else None
    if v is not None and v.first_failure is not None:
        shown = v.first_failure.id
    return tuple(c.expected for c in checks if getattr(c, "id", None) != shown)


# ---- the box ------------------------------------------------------------------------------------------------
def box(where: str, lang: str, *, code: Callable[[], str] | None = None, verdict: Callable[[], str] | None = None,
        hidden: Callable[[], Sequence[Any]] | None = None) -> None:
    """"Ask the tutor" for the step or exercise ``where`` (``"lesson:<lesson>:<step>"``,
    ``"exercise:<name>"``) in the lesson's language ``lang``.  ``code``, ``verdict`` and ``hidden`` are read
    when the question is sent (the student's code and verdict of that moment; the values the guard looks for)."""
    with st.container(border=True, key=f"tutor_box_{_slug(where)}"):
        _box_body(where, lang, code, verdict, hidden)


def exercise_box(name: str, lang: str, checks: Sequence[Any], store: Callable[[], Any],
                 verdicts: Callable[[], dict[str, Any]]) -> None:
    """:func:`box` for exercise ``name``: it sends the student's code as the editor last kept it (``store()``:
    the space's :class:`~rag_metrics.exercises.attempts.AttemptStore`), the last run's verdict (``verdicts()``:
    the Exercises page's entries) and the checks' expected values for the guard."""
    def code() -> str:
        kept = store().load(name)
        return str(kept.draft or kept.code or "")

    box(f"exercise:{name}", lang, code=code, verdict=lambda: verdict_text(verdicts().get(name), lang),
        hidden=lambda: hidden_values(checks, verdicts().get(name)))


def _slug(where: str) -> str:
    return hashlib.sha1(where.encode("utf-8")).hexdigest()[:10]


@st.fragment
def _box_body(where: str, lang: str, code: Callable[[], str] | None, verdict: Callable[[], str] | None,
              hidden: Callable[[], Sequence[Any]] | None) -> None:
    """The box's inside, a fragment: asking reruns the box only, never the page (nor the exercise's editor)."""
    exercise = where.startswith("exercise:")
    st.markdown(f"**:material/school: {T('title', lang)}**")
    on = plan().enabled
    who = state.caller()
    if not allowed(who, "ask-tutor", on):
        st.caption(T("off", lang) if not on else T("not_allowed", lang))
        return
    if _library() is None:
        st.caption(T("unavailable", lang))
        return
    if not on:
        st.caption(T("off_teacher", lang))
    st.caption(T("intro_exercise" if exercise else "intro", lang))
    _warm_index("da" if lang == "da" else "en")
    model = endpoint()
    budget = st.empty()
    slug = _slug(where)
    with st.form(tutor_widget("form", slug), clear_on_submit=True, border=False):
        question = st.text_area(T("question", lang), key=tutor_widget("question", slug), height=80,
                                max_chars=MAX_QUESTION, placeholder=T("placeholder", lang))
        sent = st.form_submit_button(T("ask", lang), icon=":material/send:", type="primary")
    replies: dict[str, dict[str, Any]] = state.default(_REPLIES, {})
    if sent:
        record = _send(where, lang, str(question or "").strip(), model, code, verdict, hidden)
        if record is not None:
            replies[where] = record
    elif where in replies:
        _show(replies[where], lang)
    if model is None:
        budget.caption(T("no_model_note", lang))
    else:
        budget.caption(budget_line(lang))


def _send(where: str, lang: str, question: str, model: Any, code: Callable[[], str] | None,
          verdict: Callable[[], str] | None, hidden: Callable[[], Sequence[Any]] | None) -> dict[str, Any] | None:
    """Ask (budget first), stream the answer, and return what to show again on the next runs."""
    if not question:
        st.warning(T("empty", lang), icon=":material/edit:")
        return None
    if len(question) > MAX_QUESTION:
        st.warning(T("too_long", lang, n=len(question), cap=MAX_QUESTION), icon=":material/edit:")
        return None
    ledger, seat = TutorLedger(_root()), spender()
    if model is not None:
        qcap, tcap = caps()
        spent = ledger.take(seat, qcap, tcap)
        if spent is not None:
            msg = T("spent_questions", lang, cap=qcap) if spent == "questions" else T("spent_tokens", lang, cap=tcap)
            st.warning(msg, icon=":material/savings:")
            return {"question": question, "kind": "refused", "text": msg}
    ledger.record(seat, where, question)
    lib = _library()
    request = lib.TutorRequest(question=question, lang=lang, where=where, code=code() if code else "",
                               verdict=verdict() if verdict else "", hidden_values=tuple(hidden() if hidden else ()))
    _asked(question, lang)
    slot = st.empty()
    held: dict[str, Any] = {"passages": [], "final": None}
    failed = ""
    with slot.container(), _answer_bubble():
        try:
            with st.spinner(T("thinking", lang)):
                events = iter(_ask(request, model))
                first = _first_text(events, held)
            if first is not None:
                st.write_stream(_visible(first, events, held, lang))
        except Exception as err:  # noqa: BLE001 - the library's own failures end in a Fallback; never a traceback
            _LOG.exception("tutor: the question at %s failed", where)
            failed = type(err).__name__
    final = None if failed else held["final"]
    record = _record(question, final, held["passages"], lang, exercise=where.startswith("exercise:"),
                     verdict_now=request.verdict, failed=failed or ("" if model is None else T("no_answer", lang)))
    if model is not None:
        if record["kind"] in ("model", "guarded") and not record.get("cached"):
            ledger.add_tokens(seat, int(record.get("tokens", 0)))
        else:
            ledger.refund(seat)  # a cached reply, or no model answered: it cost nothing
    slot.empty()
    with slot.container():
        _show(record, lang, echo=False)
    return record


def _asked(question: str, lang: str) -> None:
    """The question as the student typed it: plain text, in the student's bubble."""
    with st.chat_message("user", avatar=":material/person:"):
        st.text(question)


def _answer_bubble() -> Any:
    return st.chat_message("assistant", avatar=":material/school:")


def _kind(event: Any) -> str:
    return type(event).__name__


def _first_text(events: Iterator[Any], held: dict[str, Any]) -> Any:
    """Read events up to the first ``Token`` (returned) or the final event (kept; None returned)."""
    for ev in events:
        kind = _kind(ev)
        if kind == "Passages":
            held["passages"] = list(getattr(ev, "passages", ()) or ())
        elif kind == "Token":
            return ev
        elif kind in ("Done", "Fallback"):
            held["final"] = ev
            return None
    return None


def _visible(first: Any, events: Iterator[Any], held: dict[str, Any], lang: str) -> Iterator[str]:
    """The streamed tokens as text for ``st.write_stream``, up to the first code block: code is shown only
    once the guard has checked the whole reply (a reply that leaks the solution is withheld)."""
    text, shown, stopped = "", 0, False
    for ev in _chain(first, events):
        kind = _kind(ev)
        if kind in ("Done", "Fallback"):
            held["final"] = ev
            continue
        if kind != "Token" or stopped:
            continue
        text += str(getattr(ev, "text", ""))
        cut = text.find(_FENCE)
        if cut >= 0:
            stopped = True
        else:
            cut = len(text.rstrip("`"))  # a backtick at the end may open a fence
        if cut > shown:
            yield text[shown:cut]
            shown = cut
        if stopped:
            yield f"\n\n*{T('checking', lang)}*"


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def _passage_rows(passages: Iterable[Any]) -> list[dict[str, str]]:
    rows = []
    for p in passages:
        rows.append({"id": str(getattr(p, "id", "")), "title": str(getattr(p, "title", "")),
                     "text": str(getattr(p, "text", "")), "link": str(getattr(p, "link", ""))})
    return rows


def _citations(cited: Iterable[Any], passages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The cited passages (given as passages or as their ids) as ``{"id", "title", "link", "n"}``, each once;
    ``n`` is the number the answer cites it by (``[1]``: the first passage found), "" for one not found."""
    number = {p["id"]: str(i) for i, p in enumerate(passages, start=1)}
    by_id = {p["id"]: p for p in passages}
    out: list[dict[str, str]] = []
    for c in cited or ():
        row = by_id.get(c) if isinstance(c, str) else (_passage_rows([c]) or [None])[0]
        if row and all(row["id"] != o["id"] for o in out):
            out.append({**row, "n": number.get(row["id"], "")})
    return out


def _record(question: str, final: Any, passages: list[Any], lang: str, *, exercise: bool,
            verdict_now: str, failed: str = "") -> dict[str, Any]:
    """What one question got, as plain data (kept in the session, shown on the next runs)."""
    rows = _passage_rows(passages)
    kind = _kind(final)
    if kind == "Done":
        guarded = bool(getattr(final, "guarded", False))
        return {"question": question, "kind": "guarded" if guarded else "model",
                "answer": str(getattr(final, "answer", "")),
                "citations": _citations(getattr(final, "citations", ()), rows),
                "tokens": int(getattr(final, "tokens_used", 0) or 0), "cached": bool(getattr(final, "cached", False)),
                "from_model": bool(getattr(final, "from_model", True))}
    if kind == "Fallback":
        found = _passage_rows(getattr(final, "passages", ()) or ()) or rows
        diagnosis = str(getattr(final, "diagnosis", "") or "") or verdict_now
        why = str(getattr(final, "reason", "") or getattr(final, "error", "") or "") or failed
        return {"question": question, "kind": "fallback", "passages": found, "diagnosis": diagnosis,
                "exercise": exercise, "why": why}
    return {"question": question, "kind": "fallback", "passages": rows, "diagnosis": verdict_now,
            "exercise": exercise, "why": failed}


def _link(row: dict[str, str]) -> str:
    """A passage's title as a markdown link to its step or exercise (the title escaped; the link app-relative)."""
    title = esc(row["title"] or row["id"])
    link = row.get("link", "")
    if not link or any(ch in link for ch in " ()<>\n") or ":" in link.split("?", 1)[0]:
        return title  # only app-relative links, as the library makes them
    return f"[{title}]({link})"


def _show(record: dict[str, Any], lang: str, *, echo: bool = True) -> None:
    """One answer as it is kept: the model's (its citations as links), withheld, without a model, or refused."""
    if echo:
        _asked(record["question"], lang)
    with _answer_bubble():
        _answer(record, lang)


def _answer(record: dict[str, Any], lang: str) -> None:
    kind = record["kind"]
    if kind == "refused":
        st.warning(record["text"], icon=":material/savings:")
        return
    if kind in ("model", "guarded"):
        if kind == "guarded":  # the library's replacement says that the reply was withheld, and gives a hint
            st.warning(record["answer"], icon=":material/shield:")
        else:
            st.markdown(record["answer"])
        if record["citations"]:
            st.caption(T("sources", lang) + ": " + " · ".join(
                (f"\\[{r['n']}\\] " if r.get("n") else "") + _link(r) for r in record["citations"]))
        if record.get("cached"):
            st.caption(T("cached", lang))
        return
    why = record.get("why")
    label = (T("model_failed", lang, why=esc(why)) if why else
             T("no_model" if record.get("exercise") else "no_model_lesson", lang))
    st.info(label, icon=":material/menu_book:")
    if record["passages"]:
        for row in record["passages"]:
            with st.container(border=True):
                st.markdown(f"**{_link(row)}**")
                text = row["text"]
                st.text(text if len(text) <= _PASSAGE_CHARS else text[:_PASSAGE_CHARS].rstrip() + " …")
    else:
        st.caption(T("no_passages", lang))
    if record.get("exercise"):
        st.caption(T("diagnosis", lang))
        if record["diagnosis"]:
            st.text(record["diagnosis"])
        else:
            st.caption(T("no_diagnosis", lang))


# ---- the teacher's part (Class progress) ---------------------------------------------------------------------
def _seats() -> list[tuple[str, str]]:
    """``(label, ledger key)`` of the class: every seat in class mode; the operator in single-user mode."""
    if allowed(state.caller(), "list-seats"):
        from rag_metrics.server.seats import SeatRegistry

        return [(r.name or f"seat {r.seat}", r.seat) for r in SeatRegistry().roster()]
    return [("operator", "operator")]


def _on_save(lang: str) -> None:
    if not allowed(state.caller(), "see-class"):
        return
    p = TutorPlan(bool(state.value(tutor_widget("on", "class"), True)),
                  int(state.value(tutor_widget("questions", "class"), 0)),
                  int(state.value(tutor_widget("tokens", "class"), 0)))
    try:
        TutorSettings(_root()).save(p)
    except (OSError, InputError) as err:
        state.set_value(_SAVED, ("error", esc(str(err))))
        return
    state.set_value(_SAVED, ("success", T("saved", lang, state=T("state_on" if p.enabled else "state_off", lang),
                                          q=p.questions or 0, t=p.tokens or 0)))


def class_view(lang: str) -> None:
    """The teacher's tutor: on/off and the budgets per seat (a form), how many questions each student asked,
    and one student's questions on demand (a table: plain text)."""
    from ui.widgets import section

    section(T("class_title", lang), T("class_caption", lang))
    operator = server.config()
    current = plan()
    effective = current.budgets(operator.budgets)
    judge = operator.judge or {}
    if judge:
        st.caption(T("model_line", lang, model=esc(str(judge.get("chat_model", "")))))  # its address: the operator's
    else:
        st.caption(T("no_model_line", lang))
    with st.form(tutor_widget("form", "class"), border=True):
        st.toggle(T("on", lang), value=current.enabled, key=tutor_widget("on", "class"))
        a, b = st.columns(2)
        a.number_input(T("questions_per_seat", lang), min_value=0, max_value=TutorSettings.MAX, step=1,
                       value=int(effective.tutor_questions_per_seat), key=tutor_widget("questions", "class"),
                       help=T("operator_default", lang, name="tutor_questions_per_seat",
                              n=operator.budgets.tutor_questions_per_seat))
        b.number_input(T("tokens_per_seat", lang), min_value=0, max_value=TutorSettings.MAX, step=1000,
                       value=int(effective.tutor_tokens_per_seat), key=tutor_widget("tokens", "class"),
                       help=T("operator_default", lang, name="tutor_tokens_per_seat",
                              n=operator.budgets.tutor_tokens_per_seat))
        st.form_submit_button(T("save", lang), icon=":material/save:", on_click=_on_save, args=(lang,))
    said = state.pop(_SAVED)
    if said:
        (st.success if said[0] == "success" else st.error)(said[1])
    _usage(lang)


@st.fragment(run_every=identity.REFRESH_S)
def _usage(lang: str) -> None:
    """Questions asked per student (re-read every 5 s, like the other class tables), and one student's
    questions on demand."""
    import pandas as pd

    identity.stop_if_signed_out()
    seats = _seats()
    ledger = TutorLedger(_root())
    usage = ledger.all()
    if not any(usage.get(key, (0, 0, 0))[0] for _, key in seats):
        st.caption(T("none_asked", lang))
        return
    st.dataframe(pd.DataFrame([{T("student", lang): label, T("col_asked", lang): usage.get(key, (0, 0, 0))[0],
                                T("col_counted", lang): usage.get(key, (0, 0, 0))[1],
                                T("col_tokens", lang): usage.get(key, (0, 0, 0))[2]} for label, key in seats]),
                 hide_index=True, width="stretch")
    with st.expander(T("show_questions", lang), icon=":material/forum:"):
        labels = dict((key, label) for label, key in seats)
        key = st.selectbox(T("student", lang), [k for _, k in seats], key=tutor_widget("seat", "class"),
                           format_func=lambda k: labels.get(k, k))
        asked = ledger.asked(key) if key else []
        if not asked:
            st.caption(T("none_for", lang))
            return
        st.dataframe(pd.DataFrame([{T("col_when", lang): _dt.datetime.fromtimestamp(t).strftime("%d %b %H:%M"),
                                    T("col_where", lang): w, T("col_question", lang): q}
                                   for t, w, q in reversed(asked)]), hide_index=True, width="stretch")
