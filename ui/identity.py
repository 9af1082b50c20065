"""Who this browser is, in class mode: its seat (a cookie), the teacher's sign-in, and the Class page.

The rules live in :mod:`rag_metrics.server.access`, the seats in :mod:`rag_metrics.server.seats`; this module only
connects them to a browser session:

- :func:`gate` (the shell, every run, before anything reads the workspace): resolves the session's
  :class:`~rag_metrics.server.access.Caller` once per run.  A browser without a seat cookie gets a new seat
  (no form); one whose cookie names a seat sits in it again (another tab, a reload).  When the class
  is full, the page says so and offers the rejoin code and the teacher's sign-in, nothing else.
- The seat secret travels only in the cookie (:data:`rag_metrics.server.seats.COOKIE_NAME`), read from the
  request (:func:`read_cookies`, the one place) and written by a tiny script (:func:`write_cookie`)
  in a same-origin frame writing ``window.parent.document.cookie``.  It is never taken from a URL and
  never shown.  (A cookie set by a script cannot be HttpOnly: a script injected into the page could
  read it; the app renders no user HTML.)
- Before a new seat, the browser proves it is one (:mod:`rag_metrics.server.proof`, ``lab.budgets.seat_proof_bits``):
  a cookieless session gets :func:`no_seat_page`'s challenge, a tiny page (no app page runs) whose
  script solves it (about half a second), keeps the answer in a short-lived cookie and reloads;
  only a valid, unused answer makes the seat.  The rejoin form and the teacher's sign-in are on that page.
- :func:`sidebar_panel` (class mode's sidebar, instead of the workspace picker): the seat's name, the
  rejoin code, rejoining another seat, and the teacher's sign-in / sign-out.  A sign-in is a
  server-side session (:mod:`rag_metrics.server.teacher_sessions`, 12 hours): the browser keeps its token
  in an HttpOnly cookie set by ``/_lab/teacher-session`` (:mod:`ui.teacher_route`), so it lasts for
  the browser's other tabs and reloads and is never in the page; signing out ends every session.
- :func:`class_page` (the teacher's Class page): the roster and its cleanup.

Over 500 lines: the seat, the proof of a browser, the teacher's sign-in and the Class page are one identity
flow per browser session.
"""
from __future__ import annotations

import datetime as _dt
import json
import logging
import re
from collections.abc import Mapping
from pathlib import Path

import streamlit as st

from rag_metrics.config import class_mode_on, load_server_config, setting
from rag_metrics.errors import InputError
from rag_metrics.server.access import Caller, operator
from rag_metrics.server.budgets import CLASS_KEY, EmbedLedger, SpendLedger, process_rss_mb
from rag_metrics.server.policy import allowed
from rag_metrics.server.proof import PROOF_COOKIE, PROOF_MAX_AGE
from rag_metrics.server.seats import (
    COOKIE_NAME,
    MAX_NAME,
    TEACHER_COOKIE,
    ClassFull,
    SeatRegistry,
    check_teacher_key,
    seat_caller,
    teacher_caller,
)
from rag_metrics.server.teacher_sessions import SESSION_TTL, TeacherSessions
from rag_metrics.workspace.corpora import stored_corpora_usage
from ui import session
from ui.class_budgets import address
from ui.class_budgets import budgets as _budgets
from ui.class_budgets import seat_blocked as _seat_blocked
from ui.class_budgets import seat_challenge as _seat_challenge
from ui.class_budgets import wrong_guess as _wrong_guess
from ui.context import esc
from ui.keys import IDENTITY_CALLER as _CALLER
from ui.keys import IDENTITY_CHALLENGE as _CHALLENGE
from ui.keys import IDENTITY_CODE as KEY_CODE
from ui.keys import IDENTITY_COOKIES as _COOKIES
from ui.keys import IDENTITY_FULL as _FULL
from ui.keys import IDENTITY_MSG as _MSG
from ui.keys import IDENTITY_NAME as KEY_NAME
from ui.keys import IDENTITY_NEW_SEAT as _NEW_SEAT
from ui.keys import IDENTITY_PROVEN as _PROVEN
from ui.keys import IDENTITY_SEAT as _SEAT
from ui.keys import IDENTITY_SHOWN_CODE as _SHOWN_CODE
from ui.keys import IDENTITY_SIGNED_OUT as _SIGNED_OUT
from ui.keys import IDENTITY_TEACHER as _TEACHER
from ui.keys import IDENTITY_TEACHER_KEY as KEY_TEACHER
from ui.keys import IDENTITY_WRITTEN as _WRITTEN
from ui.session import forget_space_state
from ui.widgets import section

__all__ = ["caller", "class_page", "gate", "no_seat_page", "read_cookies", "registry", "session_caller",
           "sidebar_panel", "write_cookie"]

MAX_AGE = 400 * 24 * 3600          # the seat cookie's max-age (browsers cap it at 400 days)
_VALUE_OK = re.compile(r"[A-Za-z0-9_.-]{0,200}")
_LOG = logging.getLogger("rag_metrics.class")


# ---- the browser's cookie -----------------------------------------------------------------------
def read_cookies() -> Mapping[str, str]:
    """The cookies the browser sent with this session's request (the one place they are read)."""
    try:
        return dict(st.context.cookies)
    except Exception:  # noqa: BLE001 - no request context (bare script run): no cookie
        return {}


def write_cookie(name: str, value: str, max_age: int = MAX_AGE) -> None:
    """Have the browser keep cookie ``name`` = ``value`` (path=/, SameSite=Strict, ``max_age``
    seconds, 0 deletes it; Secure over HTTPS).  A tiny same-origin script: the name is one of ours
    and the value a checked token, never user text."""
    if name not in (COOKIE_NAME, TEACHER_COOKIE, PROOF_COOKIE) or not _VALUE_OK.fullmatch(value):
        raise ValueError("not one of the lab's cookies")
    if name == TEACHER_COOKIE:  # HttpOnly, set by the server: the page gets a single-use claim, never the token
        from ui.teacher_route import PATH

        body = f"claim={sessions().claim(value)}" if max_age > 0 else "end=1"
        script = (f"<script>fetch('{PATH}',{{method:'POST',credentials:'same-origin',headers:{{'Content-Type':"
                  f"'application/x-www-form-urlencoded'}},body:'{body}'}});</script>")
        st.iframe(script, height="content")
        return
    script = (f"<script>(function(){{var d=window.parent.document;var s=window.parent.location.protocol==='https:'"
              f"?'; Secure':'';d.cookie='{name}={value}; path=/; max-age={int(max_age)}; SameSite=Strict'+s;}})();"
              "</script>")
    st.iframe(script, height="content")  # a same-origin srcdoc frame (st.components.v1.html's successor)


# ---- resolving the caller -----------------------------------------------------------------------
def registry() -> SeatRegistry:
    """The class's seats (in the workspace root)."""
    return SeatRegistry()


def sessions() -> TeacherSessions:
    """The class's teacher sessions (in the workspace root)."""
    return TeacherSessions(registry().root)


def _config():
    return load_server_config()


def _say(text: str, kind: str = "success") -> None:
    """A message about this browser's identity, shown once at the top of the identity controls."""
    session.set_value(_MSG, (kind, text))


def _show_message() -> None:
    msg = session.pop(_MSG, None)
    if msg:
        getattr(st, msg[0])(msg[1])


def _keep_cookie(name: str, value: str, max_age: int) -> None:
    session.default(_COOKIES, {})[name] = (value, max_age)


def _teacher_key() -> str | None:
    try:
        return _config().teacher_key
    except InputError:
        return None


def _sit(seat_id: str, secret: str | None, *, new: bool = False) -> None:
    ss = session.store()
    changed = ss.get(_SEAT) not in (None, seat_id)
    ss[_SEAT] = seat_id
    ss[_NEW_SEAT] = new
    if secret is not None:
        _keep_cookie(COOKIE_NAME, secret, MAX_AGE)
    if changed:
        ss.pop(KEY_NAME, None)
        forget_space_state()


#: Why a browser that was the teacher's in this session has no seat (it gets none until a reload).
_WAS_TEACHER = ("signed out as the teacher. Reload the page to work here as a student (a new seat), rejoin "
                "a seat with its code, or sign in again")


def still_teacher() -> bool:
    """True while this session's teacher sign-in is valid (re-read from the session store): what the
    teacher's self-refreshing tables ask on every refresh, so a tab signed out elsewhere stops at once.
    Not class mode: True (the operator)."""
    if not class_mode_on():
        return True
    token = session.value(_TEACHER)
    return bool(token) and sessions().valid(token, _teacher_key())


def _link_sign_in() -> bool | str:
    """Sign in with the one-time link ``./lab class`` printed (``?teacher_link=``), once: True when it did,
    False without a link, else why it was refused (the browser then gets the teacher's sign-in form, not
    a seat at once).  The token leaves the URL at once; a wrong one is a wrong guess (slowed), and
    nothing is written."""
    token = st.query_params.get("teacher_link")
    if not token:
        return False
    del st.query_params["teacher_link"]
    why = sessions().use_link(str(token), setting("teacher_link") or None)
    expected = _teacher_key()
    if why is None and expected:
        _LOG.info("class: teacher sign-in from %s: signed in (one-time link)", address())
        _open_teacher_session(expected)
        _say("Signed in as the teacher with the one-time link: your changes go to the shared workspace "
             "everyone sees.", "success")
        return True
    _LOG.warning("class: teacher sign-in from %s: refused (one-time link: %s)", address(), why or "no teacher key")
    if why == "this sign-in link is not valid":
        _wrong_guess("sign-in link")
    return f"{why or 'no teacher key is configured'}. Sign in with the teacher key below, or reload the page to " \
           "work here as a student"


def _resolve() -> Caller | None:
    """The caller of this session (None: the class is full and this browser has no seat)."""
    ss = session.store()
    if ss.get(_TEACHER):
        if sessions().valid(ss[_TEACHER], _teacher_key()):
            return teacher_caller()
        ss.pop(_TEACHER, None)  # signed out elsewhere, expired, or a new teacher key
        ss[_SIGNED_OUT] = True
        forget_space_state()
        _LOG.info("class: teacher sign-in ended in a session from %s (signed out elsewhere, expired or a new key)",
                  address())
        _say("The teacher's sign-in ended (signed out, expired or a new key).", "info")
    linked = _link_sign_in()
    if linked is True:
        return teacher_caller()
    if linked:  # a used, expired or wrong link: the sign-in form, no seat made for it
        ss[_FULL] = linked
        return None
    token = read_cookies().get(TEACHER_COOKIE)
    if token and not ss.get(_SIGNED_OUT) and sessions().valid(token, _teacher_key()):
        ss[_TEACHER] = token  # signed in earlier in this browser (another tab, a reload)
        ss[_PROVEN] = True
        _drop_fresh_seat()  # a seat this browser sat in before the sign-in (another tab) is given back
        return teacher_caller()
    reg = registry()
    seat_id = ss.get(_SEAT)
    if seat_id is not None:
        seat = reg.get(seat_id)
        if seat is not None:
            reg.touch(seat.id)
            return seat_caller(seat)
        ss.pop(_SEAT, None)
        ss.get(_COOKIES, {}).pop(COOKIE_NAME, None)
        forget_space_state()
        if sessions().gave_back(seat_id):  # this browser signed in as the teacher in another tab
            ss[_FULL] = "this browser signed in as the teacher in another tab: reload this tab to work as the teacher"
            return None
        _say("Your seat was removed by the teacher; this browser has a new one.", "warning")
    seat = reg.find(read_cookies().get(COOKIE_NAME))
    if seat is not None:
        _sit(seat.id, None)
        reg.touch(seat.id)
        return seat_caller(seat)
    if ss.get(_SIGNED_OUT):  # the teacher's browser is never a seat: none until a reload
        ss[_FULL] = _WAS_TEACHER
        return None
    cookies = read_cookies()
    # prove a real browser first (a valid answer is used up here); a session that did (its seat was removed,
    # the teacher signed out) is not asked again
    challenge = None if ss.get(_PROVEN) else _seat_challenge(cookies.get(PROOF_COOKIE), ss.get(_CHALLENGE))
    if challenge is not None:
        ss[_CHALLENGE] = challenge
        return None
    ss.pop(_CHALLENGE, None)
    ss[_PROVEN] = True
    if cookies.get(PROOF_COOKIE):
        _keep_cookie(PROOF_COOKIE, "", 0)  # used: the browser forgets it
    blocked = _seat_blocked()
    if blocked is not None:
        ss[_FULL] = blocked
        return None
    try:
        cap = _config().max_private_spaces
        seat, secret = reg.create(cap)
    except ClassFull as err:
        ss[_FULL] = str(err)
        return None
    except InputError as err:  # the operator's configuration became unreadable
        ss[_FULL] = f"the server's configuration cannot be read ({err})"
        return None
    _sit(seat.id, secret, new=True)
    return seat_caller(seat)


def gate() -> bool:
    """Resolve this run's caller (class mode; the shell calls it first).  False when the class is
    full and this browser has no seat: then the shell shows :func:`no_seat_page` and nothing else."""
    ss = session.store()
    ss.pop(_FULL, None)
    if st.query_params.get("ws"):  # an old or forged link: the seat decides, never the URL
        _say("Ignored the workspace in the link: in class mode you work in your own seat's space.", "info")
    who = _resolve()
    if who is not None:
        ss[_CALLER] = who
        return True
    ss.pop(_CALLER, None)
    return False


_PROOF_JS = (Path(__file__).with_name("seat_proof.js")).read_text(encoding="utf-8")


def _challenge_page(challenge: str) -> None:
    """The tiny page of a browser without a seat: its script solves ``challenge`` and reloads."""
    bits = int(challenge.split(".", 1)[0])
    script = (_PROOF_JS.replace("__CHALLENGE__", json.dumps(challenge)).replace("__BITS__", str(bits))
              .replace("__NAME__", json.dumps(PROOF_COOKIE)).replace("__AGE__", str(PROOF_MAX_AGE)))
    st.info("Checking that this is a browser before it gets a seat (a second or so)…", icon=":material/hourglass_top:")
    st.iframe('<p id="m" style="font-family:sans-serif;font-size:14px;margin:0">Working…</p><noscript>This lab needs '
              f"JavaScript.</noscript><script>{script}</script>", height=40)
    with st.expander("Have a rejoin code, or are you the teacher?", icon=":material/key:"):
        c1, c2 = st.columns(2)
        with c1:
            _rejoin_form()
        with c2:
            _teacher_form()
    st.stop()


def no_seat_page() -> None:
    """This browser has no seat: either it has not proved yet that it is a browser (the challenge
    page), or the class is full (say so).  Both offer the rejoin code and the teacher's sign-in, and stop."""
    ss = session.store()
    st.title("RAG Metrics Lab")
    _write_cookies()  # e.g. the teacher's cookie deleted after a sign-out (the browser then has no seat)
    _show_message()
    if ss.get(_CHALLENGE) and not ss.get(_FULL):
        _challenge_page(ss[_CHALLENGE])
    if ss.get(_FULL) == _WAS_TEACHER:
        st.info(f"No seat for this browser: you {_WAS_TEACHER}.", icon=":material/logout:")
    elif str(ss.get(_FULL, "")).startswith("this sign-in link"):
        st.warning(str(ss[_FULL]).capitalize() + ".", icon=":material/link_off:")
    else:
        st.error(f"No seat for this browser: {ss.get(_FULL, 'the class is full')}.", icon=":material/event_seat:")
    c1, c2 = st.columns(2)
    with c1:
        _rejoin_form()
    with c2:
        _teacher_form()
    st.stop()


def caller() -> Caller:
    """This run's caller (:func:`gate` resolved it; resolved here when a page runs without the shell)."""
    who = session.value(_CALLER)
    if who is None:
        who = _resolve()
        if who is None:
            raise InputError(session.value(_FULL) or ("this browser has no seat yet: reload the page"
                             if session.value(_CHALLENGE) else "the class is full"))
        session.set_value(_CALLER, who)
    return who


def session_caller() -> Caller:
    """Who this browser session is (:class:`rag_metrics.server.access.Caller`): every permission check in
    the app asks it.  Single-user mode: the operator; class mode: the student of this browser's seat,
    or the teacher after signing in (:func:`caller`)."""
    if not class_mode_on():  # who the browser is (the authenticator); what it may do: rag_metrics.server.policy
        return operator()
    return caller()


# ---- the sidebar ----------------------------------------------------------------------------------
def _on_rename() -> None:
    seat_id = session.value(_SEAT)
    try:
        seat = registry().rename(seat_id, session.value(KEY_NAME) or "")
    except InputError as err:
        _say(esc(str(err)), "error")
        return
    _say(f"Your seat is now called {esc(seat.name)}.", "success")


def _on_new_code() -> None:
    seat_id = session.value(_SEAT)
    try:
        session.set_value(_SHOWN_CODE, registry().new_rejoin_code(seat_id))
    except InputError as err:
        _say(esc(str(err)), "error")


def _on_rejoin() -> None:
    ss = session.store()
    typed = ss.get(KEY_CODE) or ""
    ss[KEY_CODE] = ""
    reg = registry()
    got = reg.rejoin(typed)  # compared first: the right code always works; a wrong one is slowed
    if got is None:
        wait = _wrong_guess("rejoin code")
        _say("That rejoin code is not valid." + (f" Wrong codes from this network address are answered slowly "
                                                 f"(this one after {wait:g} s)." if wait else ""), "error")
        return
    seat, secret = got
    old, was_new = ss.get(_SEAT), ss.get(_NEW_SEAT)
    if ss.pop(_TEACHER, None):
        ss[_SIGNED_OUT] = True
    _sit(seat.id, secret)
    ss.pop(_CALLER, None)
    if old and old != seat.id and was_new:  # the seat this browser got a moment ago, still empty: give it back
        row = next((r for r in reg.roster() if r.seat == old), None)
        if row is not None and not row.has_work:
            reg.remove(old)
    _say(f"Welcome back: this browser now sits in {esc(seat.name)}.", "success")


def _on_sign_in() -> None:
    ss = session.store()
    typed = ss.get(KEY_TEACHER) or ""
    ss[KEY_TEACHER] = ""
    try:
        expected = _config().teacher_key
    except InputError as err:
        _say(f"The server's configuration cannot be read: {esc(str(err))}", "error")
        return
    if expected is None:
        _say("No teacher key is configured on this server (RAG_METRICS_TEACHER_KEY or lab.teacher_key).",
                     "error")
        return
    if not check_teacher_key(typed, expected):  # compared first (constant time): the right key always signs in
        _LOG.warning("class: teacher sign-in from %s: refused (wrong key)", address())
        wait = _wrong_guess("teacher key")
        _say("That is not the teacher key." + (f" Wrong keys from this network address are answered slowly (this "
                                               f"one after {wait:g} s)." if wait else ""), "error")
        return
    _LOG.info("class: teacher sign-in from %s: signed in (teacher key)", address())
    _open_teacher_session(expected)
    _say("Signed in as the teacher: your changes go to the shared workspace everyone sees.", "success")


def _open_teacher_session(key: str) -> None:
    """This browser is the teacher's from now on: its empty seat is given back, a session is opened
    (its HttpOnly cookie set by the route) and the session's state forgets the seat's space."""
    ss = session.store()
    ss[_PROVEN] = True
    dropped = _drop_fresh_seat()  # the teacher's browser is never a seat
    token = sessions().open(key, seat=dropped)
    ss[_TEACHER] = token
    ss.pop(_SIGNED_OUT, None)
    _keep_cookie(TEACHER_COOKIE, token, SESSION_TTL)
    ss.pop(_CALLER, None)
    forget_space_state()


def _drop_fresh_seat() -> str | None:
    """Give back the seat this browser sits in (this session's, else its cookie's) when nobody used it
    (no saved work, no name, no rejoin code): the teacher signing in, whether the seat is from this
    visit or an earlier one (a reload before signing in), never shows on the roster.  Returns the seat
    given back.  A seat with work stays (it may be a student's device): this session just leaves it."""
    ss = session.store()
    reg = registry()
    old = ss.get(_SEAT)
    if not old:
        found = reg.find(read_cookies().get(COOKIE_NAME))
        old = found.id if found is not None else None
    ss.pop(_SEAT, None)
    if not old:
        return None
    row = next((r for r in reg.roster() if r.seat == old), None)
    seat = reg.get(old)
    if row is None or seat is None or row.has_work or seat.name != f"Seat {seat.number}" \
            or reg.has_rejoin_code(old):
        return None
    reg.remove(old)
    ss.get(_COOKIES, {}).pop(COOKIE_NAME, None)
    _keep_cookie(COOKIE_NAME, "", 0)
    return str(old)


def _on_sign_out() -> None:
    sessions().end_all()  # every browser's sign-in ends, a copied cookie included
    _LOG.info("class: teacher sign-out from %s: signed out (every teacher session ended)", address())
    session.pop(_TEACHER, None)
    session.pop(_CALLER, None)
    session.set_value(_SIGNED_OUT, True)
    _keep_cookie(TEACHER_COOKIE, "", 0)  # this browser forgets the sign-in
    forget_space_state()
    _say("Signed out everywhere (every teacher sign-in ended).", "info")


def _rejoin_form() -> None:
    st.text_input("Rejoin code", key=KEY_CODE, placeholder="e.g. ABCD EFGH …", max_chars=40,
                  help="The code your seat showed on another device: this browser then sits in that seat.")
    st.button("Rejoin my seat", key="identity_rejoin", on_click=_on_rejoin)


def _teacher_form() -> None:
    st.text_input("Teacher key", key=KEY_TEACHER, type="password", max_chars=500)
    st.button("Sign in", key="identity_sign_in", on_click=_on_sign_in)


def _write_cookies() -> None:
    """Have the browser keep the cookies this session decided (seat, teacher, used proof)."""
    ss = session.store()
    for name, (value, max_age) in list(ss.get(_COOKIES, {}).items()):
        if name == TEACHER_COOKIE and ss.get(_WRITTEN) == (value, max_age):
            continue  # the teacher's cookie is set once per sign-in / sign-out (each claim is single use)
        write_cookie(name, value, max_age)
        if name == TEACHER_COOKIE:
            ss[_WRITTEN] = (value, max_age)
        if name == PROOF_COOKIE:  # the used proof is deleted once, not on every run
            ss[_COOKIES].pop(name, None)


def sidebar_panel() -> None:
    """Class mode's identity controls (call inside ``st.sidebar``)."""
    ss = session.store()
    who = caller()
    _write_cookies()
    _show_message()
    if allowed(who, "manage-class"):
        st.caption("Signed in as the **teacher**: you change the shared workspace (golden sets, corpora, systems) "
                   "everyone sees. The Class page lists the seats.")
        st.button("Sign out", key="identity_sign_out", icon=":material/logout:", on_click=_on_sign_out)
        return
    seat = registry().get(who.seat or "")
    name = seat.name if seat else "your seat"
    st.caption(f"Class mode · **{esc(name)}**: the teacher's golden sets, corpora and systems are read-only "
               "here; your changes are saved in your own space, which nobody else sees.")
    with st.popover("My seat", icon=":material/event_seat:", width="stretch"):
        if session.value(KEY_NAME) is None:
            session.set_value(KEY_NAME, name)
        # not cut at MAX_NAME while typing (that cut silently): a longer name is refused on saving, with why
        st.text_input("Name (shown to the teacher)", key=KEY_NAME, max_chars=4 * MAX_NAME,
                      help=f"At most {MAX_NAME} characters.")
        st.button("Save the name", key="identity_rename", on_click=_on_rename)
        st.divider()
        code = ss.pop(_SHOWN_CODE, None)
        if code:
            st.code(" ".join(code[i:i + 4] for i in range(0, len(code), 4)), language=None)
            st.caption("Your rejoin code, shown this once: type it on another device to work in this seat there. "
                       "Keep it to yourself; asking for a new one makes this one stop working.")
        st.button("Get a rejoin code" if not code else "Get another code", key="identity_new_code",
                  on_click=_on_new_code)
        st.divider()
        _rejoin_form()
    with st.popover("Teacher sign-in", icon=":material/key:", width="stretch"):
        _teacher_form()


# ---- the teacher's Class page --------------------------------------------------------------------
def _when(t: float, short: bool = False) -> str:
    """A time as the roster shows it (``short``: "01 Dec 20:58", so a long name fits a projector's table)."""
    return _dt.datetime.fromtimestamp(t).strftime("%d %b %H:%M" if short else "%Y-%m-%d %H:%M") if t else ""


def _on_remove(seat_ids: list[str]) -> None:
    if not allowed(caller(), "manage-class"):
        return
    reg = registry()
    n = sum(reg.remove(s) for s in seat_ids)
    _say(f"Removed {n} seat(s) and their work.", "success")


def _on_remove_idle(days: float) -> None:
    if not allowed(caller(), "manage-class"):
        return
    gone = registry().remove_idle(days)
    _say(f"Removed {len(gone)} seat(s) idle for {days:g} day(s) or more.", "success")


def _budgets_panel(spent: Mapping[str, tuple[int, int]], embedded: int = 0) -> None:
    """What each seat may spend (the operator's ``[lab.budgets]``) and what the teacher spent."""
    import pandas as pd

    b = _budgets()
    teacher = spent.get("teacher", (0, 0))
    with st.expander("Budgets per seat (lab.budgets)", icon=":material/savings:"):
        st.caption("Set in the [lab.budgets] table of the server configuration (RAG_METRICS_CONFIG or "
                   ".streamlit/secrets.toml); a restart reads them. They bind students' seats; the judge's "
                   f"confirmation binds everyone. The teacher's own judge use so far: {teacher[0]:,} calls, "
                   f"{teacher[1]:,} tokens. " + (f"A new browser proves itself before its seat (seat_proof_bits = "
                   f"{b.seat_proof_bits}: about {2 ** b.seat_proof_bits:,} hashes, under a second in a browser)."
                   if b.seat_proof_bits else "No proof of a browser is asked before a seat (seat_proof_bits = 0)."))
        st.caption(f"Embedding (CPU): the class embedded {embedded:,} new texts in the last "
                   f"{b.embed_window_s:,} s, of {b.embed_texts_per_class:,} (lab.budgets.embed_texts_per_class); a "
                   f"seat may embed {b.embed_texts_per_seat:,} (embed_texts_per_seat; a 500-character chunk costs "
                   f"about 0.05 CPU-seconds, the longest text 0.11) and keep {b.corpora_per_seat} corpora of "
                   f"{b.corpora_mb_per_seat} MB in all (corpora_per_seat, corpora_mb_per_seat).")
        now, peak = process_rss_mb()
        if now == now:  # not nan: a /proc to read
            st.caption(f"This app process holds {now:,.0f} MB (peak {peak:,.0f} MB) of its "
                       f"{b.process_memory_mb:,} MB (lab.budgets.process_memory_mb).")
        st.dataframe(pd.DataFrame(b.rows(), columns=["budget", "value"]), hide_index=True, width="stretch")


def class_page() -> None:
    """The roster (name, created, last seen, whether the seat saved anything) and its cleanup.
    Refuses anyone but the teacher, whatever the URL."""

    st.title("Class")
    if not allowed(session_caller(), "manage-class"):
        st.error("Only the teacher sees this page: sign in with the teacher key (sidebar, class mode).",
                 icon=":material/lock:")
        st.stop()
    _show_message()
    rows = registry().roster()
    try:
        cap = _config().max_private_spaces
    except InputError:
        cap = None
    st.caption(f"{len(rows)} seat(s)" + (f" of {cap}" if cap else "") + ". A seat is made on a browser's first "
               "visit; its space holds files only after the student's first change.")
    if not rows:
        st.info("No seat yet: students get one when they open the lab.", icon=":material/groups:")
        _budgets_panel({})  # the per-seat budgets are worth reading before the students arrive
        return

    spent = SpendLedger(registry().root).all()
    embedded = EmbedLedger(registry().root).all_used(_budgets().embed_window_s)
    _roster_table()
    _budgets_panel(spent, embedded.get(CLASS_KEY, 0))
    section("Clean up", "Removing a seat deletes its private space; the student gets a new seat on "
                  "their next visit.")
    names = {r.seat: f"{r.name} (last seen {_when(r.last_seen)})" for r in rows}
    pick = st.multiselect("Seats to remove", list(names), format_func=names.get, key="class_remove_pick")
    st.button("Remove the selected seats and their work", key="class_remove", disabled=not pick,
              on_click=_on_remove, args=(list(pick),), icon=":material/delete:")
    days = st.number_input("Idle for at least (days)", min_value=0.0, max_value=3650.0, value=14.0, step=1.0,
                           format="%.1f", key="class_idle_days")
    st.button(f"Remove every seat idle for {days:g} day(s) or more", key="class_remove_idle",
              on_click=_on_remove_idle, args=(float(days),), icon=":material/cleaning_services:")


#: Seconds between two refreshes of the teacher's tables (a fragment: only the table reruns).
REFRESH_S = 5


def name_column_width(names: list[str]) -> int:
    """Pixels for a table's name column: the longest name whole (up to MAX_NAME characters, about 6.4 px
    each in the table's font, with the cell's padding), so a 40-character name is never cut."""
    longest = max((len(str(n)) for n in names), default=0)
    return int(min(300, max(80, 22 + 6.4 * longest)))


def stop_if_signed_out() -> None:
    """First thing in every self-refreshing teacher table: a tab whose teacher sign-in ended (signed
    out in another tab, expired, a new key) reruns the whole page at once, which then shows no class,
    instead of refreshing the class until its next full run."""
    if not still_teacher():
        st.rerun(scope="app")


@st.fragment(run_every=REFRESH_S)
def _roster_table() -> None:
    """The seats and what each spent, re-read on every refresh."""
    import pandas as pd

    stop_if_signed_out()
    rows = registry().roster()
    spent = SpendLedger(registry().root).all()
    embedded = EmbedLedger(registry().root).all_used(_budgets().embed_window_s)
    kept = {r.seat: stored_corpora_usage(registry().root, r.space) for r in rows}
    df = pd.DataFrame([{"name": r.name, "created": _when(r.created, short=True),
                        "last seen": _when(r.last_seen, short=True),
                        "idle (days)": round(r.idle_days, 1), "saved work": r.has_work,
                        "judge calls": spent.get(r.seat, (0, 0))[0], "judge tokens": spent.get(r.seat, (0, 0))[1],
                        "embedded texts": embedded.get(f"seat:{r.seat}", 0), "corpora": kept[r.seat][0],
                        "corpora MB": round(kept[r.seat][1] / 2**20, 2)}
                       for r in rows])
    col = st.column_config  # short headers (the full name in help): the table fits a projector's 1024 px
    st.dataframe(df, hide_index=True, width="stretch",
                 column_config={"name": col.TextColumn("name", width=name_column_width([r.name for r in rows])),
                                "idle (days)": col.NumberColumn("idle", help="idle (days): days since last seen"),
                                "judge calls": col.NumberColumn("calls", help="judge calls this seat made"),
                                "judge tokens": col.NumberColumn("tokens", help="judge tokens this seat spent"),
                                "embedded texts": col.NumberColumn("embedded", help="new texts this seat embedded "
                                                                   "in the last lab.budgets.embed_window_s seconds"),
                                "corpora MB": col.NumberColumn("MB", help="size of the corpora this seat keeps")})
    st.caption(f"Refreshes every {REFRESH_S} s.")
