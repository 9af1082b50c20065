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
shared by every app process of the class.

>>> import tempfile
>>> ts = TeacherSessions(tempfile.mkdtemp())
>>> token = ts.open("a long teacher key")
>>> ts.valid(token, "a long teacher key"), ts.valid(token, "another key"), ts.valid("forged", "a long teacher key")
(True, False, False)
>>> claim = ts.claim(token); ts.redeem(claim) == token, ts.redeem(claim)
(True, None)
>>> ts.end_all(); ts.valid(token, "a long teacher key")
False
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Any

from rag_metrics.budgets import _JsonStore

__all__ = ["CLAIM_TTL", "SESSION_TTL", "TeacherSessions"]

#: How long a teacher's sign-in lasts (seconds).
SESSION_TTL = 12 * 3600
#: How long the claim handed to the page may be exchanged for the cookie (seconds).
CLAIM_TTL = 60


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key_id(key: str) -> str:
    return _h("rag-metrics-teacher-key:" + key)[:32]


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

    def open(self, key: str, ttl: float = SESSION_TTL, now: float | None = None) -> str:
        """A new session for the teacher key ``key``; returns its token (give it only to the cookie)."""
        now = time.time() if now is None else now
        token = secrets.token_urlsafe(32)
        with self._change() as data:
            self._sessions(data, now)[_h(token)] = {"expires": now + ttl, "key": _key_id(key)}
        return token

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
        with self._change() as data:
            self._sessions(data, now)
            rec = data["claims"].pop(_h(code), None)
        return str(rec["token"]) if isinstance(rec, dict) and rec.get("token") else None
