"""The teacher's sign-in as a server-side session (no Streamlit here).

Signing in with the teacher key opens a session: a random 256-bit token the browser keeps in an
HttpOnly cookie (:data:`rag_metrics.server.seats.TEACHER_COOKIE`), of which the server keeps only the
SHA-256, its expiry and a fingerprint of the teacher key it was opened with.  So:

- the token is never in the page: the app hands the browser a **claim** (random, single use, valid
  for :data:`CLAIM_TTL` seconds) that a tiny script posts to ``/_lab/teacher-session``; that
  endpoint (:mod:`ui.teacher_route`) answers with the ``Set-Cookie: ...; HttpOnly`` header;
- a session ends when it expires, when the teacher key changes, and when the teacher signs out:
  :meth:`TeacherSessions.end_all` ends every session of every browser at once (a copied cookie
  stops working too).

The store is ``<workspace root>/.class/teacher_sessions.json``, changed under an exclusive lock,
shared by every app process of the class.  A wrong claim (or link) is refused on a read, without the
lock or a write: a flood of forged claims costs a file read each, never a rewrite of the store.

``./lab class`` also prints a **one-time sign-in link** for the operator (:func:`new_link`): a random
token, valid :data:`LINK_TTL` seconds, used once.  The app processes get only its SHA-256 and expiry
(the environment variable :data:`LINK_ENV`), so the token itself is stored nowhere; using it
records its hash here (:meth:`TeacherSessions.use_link`).

>>> import tempfile
>>> ts = TeacherSessions(tempfile.mkdtemp())
>>> token = ts.open("a long teacher key")
>>> ts.valid(token, "a long teacher key"), ts.valid(token, "another key"), ts.valid("forged", "a long teacher key")
(True, False, False)
>>> claim = ts.claim(token); ts.redeem(claim) == token, ts.redeem(claim)
(True, None)
>>> ts.end_all(); ts.valid(token, "a long teacher key")
False
>>> link, spec = new_link(now=0.0)
>>> ts.use_link(link, spec, now=1.0), ts.use_link(link, spec, now=2.0), ts.use_link("forged" * 8, spec, now=1.0)
(None, 'this sign-in link was used already', 'this sign-in link is not valid')
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Any

from rag_metrics.server.budgets import _JsonStore

__all__ = ["CLAIM_TTL", "LINK_ENV", "LINK_TTL", "SESSION_TTL", "TeacherSessions", "new_link"]

#: How long a teacher's sign-in lasts (seconds).
SESSION_TTL = 12 * 3600
#: How long the claim handed to the page may be exchanged for the cookie (seconds).
CLAIM_TTL = 60
#: How long the one-time sign-in link ``./lab class`` prints stays valid (seconds).
LINK_TTL = 15 * 60
#: The environment variable that gives the app processes the link's ``<sha256>:<expiry>``.
LINK_ENV = "RAG_METRICS_TEACHER_LINK"  # rag_metrics.config.SETTINGS["teacher_link"]


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key_id(key: str) -> str:
    return _h("rag-metrics-teacher-key:" + key)[:32]


def new_link(ttl: float = LINK_TTL, now: float | None = None) -> tuple[str, str]:
    """A one-time sign-in link's token and its ``<sha256>:<expiry>`` (what the app processes get in
    :data:`LINK_ENV`; the token goes only into the URL printed for the operator)."""
    now = time.time() if now is None else now
    token = secrets.token_urlsafe(24)
    return token, f"{_h(token)}:{int(now + ttl)}"


class TeacherSessions(_JsonStore):
    """The open teacher sessions and pending claims (module docstring)."""

    name = "teacher_sessions.json"

    def _sessions(self, data: dict[str, Any], now: float) -> dict[str, Any]:
        live = {k: v for k, v in (data.get("sessions") or {}).items()
                if isinstance(v, dict) and float(v.get("expires", 0)) > now}
        data["sessions"] = live
        data["claims"] = {k: v for k, v in (data.get("claims") or {}).items()
                          if isinstance(v, dict) and float(v.get("expires", 0)) > now}
        return live

    def open(self, key: str, ttl: float = SESSION_TTL, now: float | None = None, seat: str | None = None) -> str:
        """A new session for the teacher key ``key``; returns its token (give it only to the cookie).
        ``seat``: the empty seat this browser gave back on signing in (:meth:`gave_back`)."""
        now = time.time() if now is None else now
        token = secrets.token_urlsafe(32)
        with self._change() as data:
            rec: dict[str, Any] = {"expires": now + ttl, "key": _key_id(key)}
            if seat:
                rec["seat"] = seat
            self._sessions(data, now)[_h(token)] = rec
        return token

    def gave_back(self, seat: str | None, now: float | None = None) -> bool:
        """True when an open teacher session was opened by the browser that sat in ``seat`` (the seat
        was given back then): another tab of that browser, still holding the seat, is the teacher's."""
        if not seat:
            return False
        now = time.time() if now is None else now
        return any(isinstance(v, dict) and v.get("seat") == seat and float(v.get("expires", 0)) > now
                   for v in (self._read().get("sessions") or {}).values())

    def valid(self, token: str | None, key: str | None, now: float | None = None) -> bool:
        """True for the token of an open, unexpired session opened with the current teacher key."""
        if not key or not isinstance(token, str) or not 20 <= len(token) <= 200:
            return False
        now = time.time() if now is None else now
        rec = (self._read().get("sessions") or {}).get(_h(token))
        return isinstance(rec, dict) and float(rec.get("expires", 0)) > now \
            and hmac.compare_digest(str(rec.get("key", "")), _key_id(key))

    def end_all(self) -> None:
        """Sign the teacher out everywhere: every session and claim ends."""
        with self._change() as data:
            data["sessions"], data["claims"] = {}, {}

    def claim(self, token: str, ttl: float = CLAIM_TTL, now: float | None = None) -> str:
        """A single-use code the page may exchange for ``token`` within ``ttl`` seconds."""
        now = time.time() if now is None else now
        code = secrets.token_urlsafe(24)
        with self._change() as data:
            self._sessions(data, now)
            data["claims"][_h(code)] = {"expires": now + ttl, "token": token}
        return code

    def redeem(self, code: str | None, now: float | None = None) -> str | None:
        """The token of a pending claim (which is used up), else None."""
        if not isinstance(code, str) or not 20 <= len(code) <= 100:
            return None
        now = time.time() if now is None else now
        h = _h(code)
        seen = (self._read().get("claims") or {}).get(h)
        if not isinstance(seen, dict) or float(seen.get("expires", 0)) <= now:
            return None  # a wrong, used or expired claim: refused on a read, no lock, no write
        with self._change() as data:
            self._sessions(data, now)
            rec = data["claims"].pop(h, None)
        return str(rec["token"]) if isinstance(rec, dict) and rec.get("token") else None

    def use_link(self, token: str | None, spec: str | None, now: float | None = None) -> str | None:
        """Use the one-time sign-in link ``token`` against ``spec`` (``<sha256>:<expiry>``, :func:`new_link`):
        None when it signs in (it is then used up), else why not.  A wrong token writes nothing."""
        now = time.time() if now is None else now
        digest, _, expiry = str(spec or "").partition(":")
        if not isinstance(token, str) or not 20 <= len(token) <= 100 or not digest \
                or not hmac.compare_digest(_h(token), digest):
            return "this sign-in link is not valid"
        try:
            if float(expiry) <= now:
                return "this sign-in link has expired"
        except ValueError:
            return "this sign-in link is not valid"
        with self._change() as data:
            used = data.setdefault("links_used", {})
            if not isinstance(used, dict) or digest in used:
                return "this sign-in link was used already"
            used[digest] = float(expiry)
        return None
