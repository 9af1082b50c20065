"""Seats of a class: who a browser is, in class mode (no Streamlit here).

Every browser that opens the lab in class mode gets a **seat** on its first visit, without a form:
a random seat id (its private space is :func:`seat_space` of it) and a server-generated secret of
256 bits (:func:`new_secret`) that the browser keeps in a cookie.  The server stores only the
SHA-256 of each secret, so a copy of the registry lets no one sit in a seat.  The secret is never
taken from a URL and never shown.

A student may **name** the seat and ask for a **rejoin code** (20 base32 characters, 100 bits,
stored hashed, shown once to that student): entering it on another device gives that device a
fresh secret for the same seat (:meth:`SeatRegistry.rejoin`).  Asking for a new code invalidates
the old one.  A code (and the teacher key) is compared first, so the right one always works; wrong
ones are slowed per address and for the server (:mod:`rag_metrics.server.guesses`).

The registry is one JSON file, ``<workspace root>/.class/seats.json``, written atomically under an
exclusive lock (every change is a locked read-modify-write).  The number of seats is capped by the
operator's ``lab.max_private_spaces`` (:class:`ClassFull` over it).  The teacher reads the roster
(:meth:`SeatRegistry.roster`, one :class:`RosterRow` per seat: the data other views extend, e.g.
with lesson progress) and removes seats with their spaces (:meth:`SeatRegistry.remove`,
:meth:`SeatRegistry.remove_idle`).

Examples
--------
>>> import tempfile
>>> reg = SeatRegistry(tempfile.mkdtemp())
>>> seat, secret = reg.create(cap=10)
>>> reg.find(secret) == seat and secret not in reg.path.read_text()
True
>>> code = reg.new_rejoin_code(seat.id)
>>> other, secret2 = reg.rejoin(code)
>>> other.id == seat.id and secret2 != secret and reg.find(secret) is not None
True
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.io.files import loads_json
from rag_metrics.server.access import STUDENT, TEACHER, Caller

__all__ = [
    "CLASS_DIR",
    "COOKIE_NAME",
    "MAX_DEVICES",
    "MAX_NAME",
    "ClassFull",
    "RosterRow",
    "Seat",
    "SeatRegistry",
    "TEACHER_COOKIE",
    "check_teacher_key",
    "check_teacher_token",
    "new_secret",
    "normalize_code",
    "seat_caller",
    "seat_space",
    "teacher_caller",
    "teacher_token",
]

#: Folder of the class's own files under the workspace root (hidden: never a corpus or a space).
CLASS_DIR = ".class"
REGISTRY_FILE = "seats.json"
#: The browser cookie that holds a seat's secret.
COOKIE_NAME = "rag_metrics_seat"
#: Devices (secrets) kept per seat; a rejoin beyond this forgets the oldest device.
MAX_DEVICES = 8
#: Rejoin codes: base32 characters (no padding); 20 characters are 100 bits.
CODE_CHARS = 20
#: The longest seat name (characters): the teacher's tables show it whole.
MAX_NAME = 40
_MAX_NAME = MAX_NAME
_SECRET_RE = re.compile(r"[A-Za-z0-9_-]{40,100}")
_SEAT_ID_RE = re.compile(r"[0-9a-f]{16}")
_TOUCH_EVERY = 300.0  # seconds between two "last seen" writes of one seat
#: At the cap, a seat nobody used (unnamed, no code, nothing saved) is reclaimed after this long unseen.
RECLAIM_AFTER = 3600.0


def new_secret() -> str:
    """A seat secret: 32 random bytes (256 bits), URL-safe base64 (a cookie value as it is)."""
    return secrets.token_urlsafe(32)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seat_space(seat_id: str) -> str:
    """The private space of a seat (derived from the random seat id, never from its secret)."""
    return f"seat-{seat_id}"


def normalize_code(text: str) -> str:
    """A typed rejoin code as stored: upper case, without spaces and dashes (``abcd-efgh`` ->
    ``ABCDEFGH``); the letters a student may confuse are read as base32 has them (0 -> O, 1 -> I,
    8 -> B)."""
    s = re.sub(r"[\s-]+", "", str(text or "")).upper()
    return s.translate(str.maketrans("018", "OIB"))


def _new_code() -> str:
    return base64.b32encode(secrets.token_bytes(15)).decode("ascii")[:CODE_CHARS]


def check_teacher_key(given: str | None, expected: str | None) -> bool:
    """True when ``given`` is the teacher key (constant-time comparison; False when no key is set)."""
    if not expected or not isinstance(given, str) or not given:
        return False
    return hmac.compare_digest(given.strip().encode("utf-8"), expected.encode("utf-8"))


#: The browser cookie that keeps the teacher signed in (a signed, expiring token; see :func:`teacher_token`).
TEACHER_COOKIE = "rag_metrics_teacher"
#: How long a teacher's sign-in lasts in one browser (seconds).
TEACHER_TTL = 12 * 3600


def _teacher_mac(key: str, body: str) -> str:
    return hmac.new(key.encode("utf-8"), f"rag-metrics-teacher:{body}".encode(), hashlib.sha256).hexdigest()


def teacher_token(key: str, now: float | None = None, ttl: float = TEACHER_TTL) -> str:
    """A token that keeps the teacher signed in across reloads and tabs of one browser until it
    expires: ``<expiry>.<nonce>.<HMAC-SHA256 under the teacher key>``.  Nothing is stored on the
    server; changing the teacher key ends every such sign-in."""
    expiry = int((time.time() if now is None else now) + ttl)
    body = f"{expiry}.{secrets.token_urlsafe(16)}"
    return f"{body}.{_teacher_mac(key, body)}"


def check_teacher_token(token: str | None, key: str | None, now: float | None = None) -> bool:
    """True for an unexpired token made by :func:`teacher_token` with this key."""
    if not key or not isinstance(token, str) or len(token) > 200:
        return False
    parts = token.split(".")
    if len(parts) != 3 or not parts[0].isdigit():
        return False
    body = f"{parts[0]}.{parts[1]}"
    if not hmac.compare_digest(parts[2], _teacher_mac(key, body)):
        return False
    return int(parts[0]) > (time.time() if now is None else now)


def seat_caller(seat: Seat) -> Caller:
    """The :class:`~rag_metrics.server.access.Caller` of a student sitting in ``seat``."""
    return Caller(STUDENT, space=seat.space, seat=seat.id)


def teacher_caller() -> Caller:
    """The signed-in teacher (works in the shared space)."""
    return Caller(TEACHER)


class ClassFull(InputError):
    """Every seat is taken (the operator's ``lab.max_private_spaces``)."""


@dataclass(frozen=True)
class Seat:
    """One seat: its random id, the name shown on the roster, when it was created and last seen
    (seconds since the epoch)."""

    id: str
    name: str
    created: float
    last_seen: float
    number: int = 0

    @property
    def space(self) -> str:
        return seat_space(self.id)


@dataclass(frozen=True)
class RosterRow:
    """One line of the teacher's roster.  ``has_work``: the seat's space holds saved files (it is
    made only on the student's first change).  Other views add their own columns keyed by ``seat``."""

    seat: str
    name: str
    space: str
    created: float
    last_seen: float
    idle_days: float
    has_work: bool

    def as_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "name": self.name, "space": self.space, "created": self.created,
                "last_seen": self.last_seen, "idle_days": self.idle_days, "has_work": self.has_work}


class SeatRegistry:
    """The seats of the class, in ``<root>/.class/seats.json`` (``root``: the workspace root,
    default :func:`rag_metrics.workspace.store.default_workspace_dir`)."""

    def __init__(self, root: str | os.PathLike[str] | None = None, state: Any = None) -> None:
        from rag_metrics.io.state import class_state
        from rag_metrics.workspace.store import default_workspace_dir

        self.root = Path(root) if root is not None else default_workspace_dir()
        self.path = self.root / CLASS_DIR / REGISTRY_FILE
        #: where the registry lives: the file above, or PostgreSQL (``lab.state``; :mod:`rag_metrics.io.state`)
        self.state = state if state is not None else class_state(self.root)

    def __repr__(self) -> str:
        return f"SeatRegistry({str(self.path)!r})"

    # ---- the file --------------------------------------------------------------------------------
    def _read(self) -> tuple[list[dict[str, Any]], bool]:
        """``(seat records, damaged)``: a missing file is no seat; a damaged one reads as no seat
        and is kept aside on the next write."""
        return self._parse(self.state.read(REGISTRY_FILE))

    @staticmethod
    def _parse(text: str | None) -> tuple[list[dict[str, Any]], bool]:
        if text is None:
            return [], False
        if not text:
            return [], True
        raw, msg, _ = loads_json(text)
        if msg is not None:
            return [], True
        seats = raw.get("seats") if isinstance(raw, dict) else None
        if not isinstance(seats, list):
            return [], True
        good = [s for s in seats if isinstance(s, dict) and isinstance(s.get("id"), str)
                and _SEAT_ID_RE.fullmatch(s["id"]) and isinstance(s.get("secrets"), list)]
        return good, len(good) != len(seats)

    @contextlib.contextmanager
    def _change(self) -> Iterator[list[dict[str, Any]]]:
        """A locked read-modify-write of the seat records (written atomically on success)."""
        with self.state.change(REGISTRY_FILE) as doc:
            records, damaged = self._parse(doc.text)
            if damaged and doc.text is not None and getattr(self.state, "kind", "files") == "files":
                with contextlib.suppress(OSError):  # a damaged file is kept aside
                    shutil.copyfile(self.path, self.path.with_name(f"seats.damaged-{time.time_ns()}.json"))
            yield records
            doc.text = json.dumps({"version": 1, "seats": records}, indent=1) + "\n"

    @staticmethod
    def _seat(r: dict[str, Any]) -> Seat:
        return Seat(r["id"], str(r.get("name") or ""), float(r.get("created") or 0.0),
                    float(r.get("last_seen") or 0.0), int(r.get("number") or 0))

    # ---- reading ---------------------------------------------------------------------------------
    def seats(self) -> list[Seat]:
        """Every seat, oldest first."""
        return [self._seat(r) for r in self._read()[0]]

    def get(self, seat_id: str) -> Seat | None:
        return next((s for s in self.seats() if s.id == seat_id), None)

    def find(self, secret: str | None) -> Seat | None:
        """The seat whose secret this is (None for an unknown, malformed or missing secret)."""
        if not isinstance(secret, str) or not _SECRET_RE.fullmatch(secret):
            return None
        h = _hash(secret)
        for r in self._read()[0]:
            if any(hmac.compare_digest(h, str(x)) for x in r["secrets"]):
                return self._seat(r)
        return None

    def __len__(self) -> int:
        return len(self._read()[0])

    # ---- changing --------------------------------------------------------------------------------
    def create(self, cap: int, now: float | None = None, reclaim_after: float = RECLAIM_AFTER) -> tuple[Seat, str]:
        """A new seat and its secret (give the secret to the browser; only its hash is kept).

        At the cap, seats nobody used are reclaimed first: never named, no rejoin code, nothing
        saved, not seen for ``reclaim_after`` seconds (a browser that dropped its cookie, a script
        opening sessions).  Raises :class:`ClassFull` when ``cap`` seats are still taken."""
        now = time.time() if now is None else now
        secret = new_secret()
        with self._change() as records:
            if len(records) >= cap:
                unused = [r for r in records if self._unused(r, now, reclaim_after)]
                for r in unused:
                    records.remove(r)
                    self._remove_space(r["id"])
            if len(records) >= cap:
                raise ClassFull(f"the class is full: all {cap} seats are taken. Ask the teacher to remove idle "
                                "seats (Class page), or rejoin your own seat with its code")
            ids = {r["id"] for r in records}
            seat_id = secrets.token_hex(8)
            while seat_id in ids:  # pragma: no cover - 64 random bits
                seat_id = secrets.token_hex(8)
            number = max((int(r.get("number") or 0) for r in records), default=0) + 1
            rec = {"id": seat_id, "name": f"Seat {number}", "number": number, "created": now, "last_seen": now,
                   "secrets": [_hash(secret)], "code": None}
            records.append(rec)
        return self._seat(rec), secret

    def _unused(self, r: dict[str, Any], now: float, idle: float) -> bool:
        from rag_metrics.workspace.store import space_dir

        if r.get("code") or r.get("name") != f"Seat {r.get('number')}" or now - float(r.get("last_seen") or 0) < idle:
            return False
        return not space_dir(seat_space(r["id"]), self.root).exists()

    def _update(self, seat_id: str, change: Any) -> Seat:
        with self._change() as records:
            rec = next((r for r in records if r["id"] == seat_id), None)
            if rec is None:
                raise InputError("this seat no longer exists (the teacher removed it); reload the page for a new one")
            change(rec)
        return self._seat(rec)

    def rename(self, seat_id: str, name: str) -> Seat:
        """Give the seat a name (1-40 printable characters), shown on the teacher's roster."""
        name = " ".join(str(name or "").split())
        if not name:
            raise InputError("the name is empty; type the name the teacher should see")
        if any(not c.isprintable() for c in name):
            raise InputError("use letters, digits, spaces or punctuation for the name")
        if len(name) > _MAX_NAME:
            raise InputError(f"the name has {len(name)} characters; a name has at most {_MAX_NAME} (the teacher's "
                             "table shows it whole): shorten it")
        return self._update(seat_id, lambda r: r.update(name=name))

    def touch(self, seat_id: str, now: float | None = None, every: float = _TOUCH_EVERY) -> None:
        """Record that the seat was seen (written at most once per ``every`` seconds)."""
        now = time.time() if now is None else now
        seat = self.get(seat_id)
        if seat is None or now - seat.last_seen < every:
            return
        with contextlib.suppress(InputError, OSError):
            self._update(seat_id, lambda r: r.update(last_seen=now))

    def new_rejoin_code(self, seat_id: str) -> str:
        """A new rejoin code for the seat (the previous one stops working).  Show it to that
        student only; it is not kept in clear."""
        code = _new_code()
        self._update(seat_id, lambda r: r.update(code=_hash(code)))
        return code

    def has_rejoin_code(self, seat_id: str) -> bool:
        return any(r["id"] == seat_id and r.get("code") for r in self._read()[0])

    def rejoin(self, code: str, now: float | None = None) -> tuple[Seat, str] | None:
        """``(seat, fresh secret)`` for a valid rejoin code (this device is added to the seat), else None."""
        code = normalize_code(code)
        if not re.fullmatch(f"[A-Z2-7]{{{CODE_CHARS}}}", code):
            return None
        h = _hash(code)
        now = time.time() if now is None else now
        secret = new_secret()
        with self._change() as records:
            rec = next((r for r in records if r.get("code") and hmac.compare_digest(h, str(r["code"]))), None)
            if rec is None:
                return None
            rec["secrets"] = [*rec["secrets"], _hash(secret)][-MAX_DEVICES:]
            rec["last_seen"] = now
        return self._seat(rec), secret

    def remove(self, seat_id: str) -> bool:
        """Remove a seat and its private space (files included).  False when there was none."""
        found = False
        with self._change() as records:
            keep = [r for r in records if r["id"] != seat_id]
            found = len(keep) != len(records)
            records[:] = keep
        if found:
            self._remove_space(seat_id)
        return found

    def remove_idle(self, days: float, now: float | None = None) -> list[str]:
        """Remove every seat not seen for ``days`` days (and its space).  Returns the removed ids."""
        if days < 0:
            raise InputError(f"days must be 0 or more, got {days}")
        now = time.time() if now is None else now
        gone: list[str] = []
        with self._change() as records:
            keep = []
            for r in records:
                if now - float(r.get("last_seen") or 0.0) >= days * 86400:
                    gone.append(r["id"])
                else:
                    keep.append(r)
            records[:] = keep
        for seat_id in gone:
            self._remove_space(seat_id)
        return gone

    def _remove_space(self, seat_id: str) -> None:
        from rag_metrics.workspace.store import space_dir

        shutil.rmtree(space_dir(seat_space(seat_id), self.root), ignore_errors=True)

    # ---- the roster ------------------------------------------------------------------------------
    def roster(self, now: float | None = None) -> list[RosterRow]:
        """One :class:`RosterRow` per seat, oldest seat first."""
        from rag_metrics.workspace.store import space_dir

        now = time.time() if now is None else now
        out = []
        for s in self.seats():
            d = space_dir(s.space, self.root)
            try:
                has_work = d.is_dir() and any(d.iterdir())
            except OSError:
                has_work = False
            out.append(RosterRow(s.id, s.name, s.space, s.created, s.last_seen,
                                 max(0.0, (now - s.last_seen) / 86400), has_work))
        return out
