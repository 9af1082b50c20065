"""Proof of a real browser before a seat is made (hashcash / Anubis style; no Streamlit here).

A browser without a seat cookie gets a **challenge** (:func:`make_challenge`) instead of a seat: a
server-made string ``<bits>.<expiry>.<nonce>.<mac>`` whose MAC (HMAC-SHA256 under a secret only the
server knows, :meth:`SeatProofs.key`) covers the difficulty, the expiry, a random nonce and the
client's address, so the client can change none of them.  The page's script looks for a counter such
that ``SHA-256("<challenge>.<counter>")`` starts with ``bits`` zero bits (about ``2**bits`` hashes:
:func:`solve` is the same loop in Python), keeps the **answer** ``<challenge>.<counter>`` in a
short-lived cookie (:data:`PROOF_COOKIE`) and reloads.  :func:`check_answer` verifies it (one hash and
one HMAC: cheap for the server) and :meth:`SeatProofs.redeem` also makes it single use, so one answer
makes at most one seat.  The difficulty is the operator's ``lab.budgets.seat_proof_bits`` (0 turns
the proof off); :func:`rag_metrics.server.policy.seat_proof_bits` decides where it applies (class mode).

This does not stop a determined script (it solves the challenge too, in milliseconds of native
code); it puts a price on every seat and, with the per-address seat budget
(``lab.budgets.seats_per_address``), keeps one client from filling the class.

>>> key = b"k" * 32
>>> ch = make_challenge(key, bits=8, address="10.0.0.5", now=1000.0)
>>> answer = solve(ch)
>>> check_answer(key, answer, bits=8, address="10.0.0.5", now=1001.0) is None
True
>>> check_answer(key, answer, bits=8, address="10.0.0.6", now=1001.0)
'the challenge was not made by this server for this browser'
>>> check_answer(key, answer, bits=8, address="10.0.0.5", now=1000.0 + CHALLENGE_TTL + 1)
'the challenge expired'
>>> wrong = next(f"{ch}.{i}" for i in range(99)
...               if leading_zero_bits(hashlib.sha256(f"{ch}.{i}".encode()).digest()) < 8)
>>> check_answer(key, wrong, bits=8, address="10.0.0.5", now=1001.0)
'the answer is wrong'
>>> check_answer(key, "4" + answer[1:], bits=4, address="10.0.0.5", now=1001.0)  # an easier challenge, forged
'the challenge was not made by this server for this browser'
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import time

from rag_metrics.server.budgets import _JsonStore

__all__ = ["CHALLENGE_TTL", "PROOF_COOKIE", "PROOF_MAX_AGE", "SeatProofs", "check_answer", "leading_zero_bits",
           "make_challenge", "solve"]

#: The cookie that carries a solved challenge (the answer) to the server.
PROOF_COOKIE = "rag_metrics_proof"
#: Seconds a challenge may be answered in (solving plus the reload).
CHALLENGE_TTL = 300
#: The answer cookie's max-age (seconds): only long enough for the reload that uses it.
PROOF_MAX_AGE = 120
_MAX_BITS = 32
_ANSWER_RE = re.compile(r"(\d{1,2})\.(\d{1,12})\.([0-9a-f]{32})\.([0-9a-f]{32})\.(\d{1,12})")
_KEY_FILE = "proof_key"


def leading_zero_bits(digest: bytes) -> int:
    """How many zero bits ``digest`` starts with.

    >>> leading_zero_bits(bytes([0, 0, 0b00010000])), leading_zero_bits(b"\\xff")
    (19, 0)
    """
    n = 0
    for byte in digest:
        if byte:
            return n + 8 - byte.bit_length()
        n += 8
    return n


def _mac(key: bytes, body: str, address: str) -> str:
    return hmac.new(key, f"rag-metrics-seat-proof:{body}:{address}".encode(), hashlib.sha256).hexdigest()[:32]


def make_challenge(key: bytes, bits: int, address: str, now: float | None = None, ttl: float = CHALLENGE_TTL) -> str:
    """A challenge of ``bits`` zero bits for the browser at ``address``, valid ``ttl`` seconds."""
    if not 0 < bits <= _MAX_BITS:
        raise ValueError(f"bits must be 1 to {_MAX_BITS}, got {bits}")
    expiry = int((time.time() if now is None else now) + ttl)
    body = f"{int(bits)}.{expiry}.{secrets.token_hex(16)}"
    return f"{body}.{_mac(key, body, address)}"


def _digest(answer: str) -> bytes:
    return hashlib.sha256(answer.encode("ascii")).digest()


def solve(challenge: str, limit: int = 1 << 34) -> str:
    """The answer to ``challenge`` (what the browser's script computes): the first counter from 0
    whose hash has the challenge's leading zero bits."""
    bits = int(challenge.split(".", 1)[0])
    prefix = hashlib.sha256(f"{challenge}.".encode("ascii"))  # the hash of the common start, copied per try
    for counter in range(limit):
        h = prefix.copy()
        h.update(str(counter).encode("ascii"))
        if leading_zero_bits(h.digest()) >= bits:
            return f"{challenge}.{counter}"
    raise ValueError("no answer found")  # pragma: no cover - 2**34 tries


def check_answer(key: bytes, answer: str | None, bits: int, address: str, now: float | None = None) -> str | None:
    """Why ``answer`` proves nothing (``None``: a valid answer to a challenge this server made for
    ``address``, unexpired, of at least ``bits`` bits).  Not single use by itself: see
    :meth:`SeatProofs.redeem`."""
    m = _ANSWER_RE.fullmatch(answer or "")
    if m is None:
        return "no answer, or not one in the challenge's form"
    got_bits, expiry, nonce, mac, _ = m.groups()
    body = f"{got_bits}.{expiry}.{nonce}"
    if not hmac.compare_digest(mac, _mac(key, body, address)):
        return "the challenge was not made by this server for this browser"
    if int(expiry) < (time.time() if now is None else now):
        return "the challenge expired"
    if int(got_bits) < bits:
        return "the challenge is easier than the server now asks"
    if leading_zero_bits(_digest(str(answer))) < int(got_bits):
        return "the answer is wrong"
    return None


class SeatProofs(_JsonStore):
    """The class's proof-of-work state, shared by every app process: the secret key
    (``.class/proof_key``, made once) and the answers already used (``.class/proofs.json``, kept
    until their challenge expires).

    >>> import tempfile
    >>> proofs = SeatProofs(tempfile.mkdtemp())
    >>> answer = solve(proofs.challenge(4, "10.0.0.5"))
    >>> proofs.redeem(answer, 4, "10.0.0.5"), proofs.redeem(answer, 4, "10.0.0.5")
    (None, 'the answer was used already')
    """

    name = "proofs.json"

    def key(self) -> bytes:
        """The server's secret (32 random bytes, made on first use, readable by the server only; with
        ``lab.state`` in PostgreSQL, the document ``proof_key``, hex, made once for every host)."""
        from rag_metrics.io.files import atomic_write_bytes, locked

        if getattr(self.state, "kind", "files") != "files":
            got = self.state.read(_KEY_FILE) or ""
            if len(got) == 64:
                return bytes.fromhex(got)
            with self.state.change(_KEY_FILE) as doc:
                if len(doc.text or "") != 64:
                    doc.text = secrets.token_bytes(32).hex()
                return bytes.fromhex(doc.text or "")
        path = self.path.with_name(_KEY_FILE)
        try:
            data = path.read_bytes()
            if len(data) == 32:
                return data
        except OSError:
            pass
        with locked(path):
            try:
                data = path.read_bytes()
            except OSError:
                data = b""
            if len(data) != 32:
                data = secrets.token_bytes(32)
                atomic_write_bytes(path, data)
                os.chmod(path, 0o600)
        return data

    def challenge(self, bits: int, address: str, now: float | None = None) -> str:
        """A new challenge for the browser at ``address`` (:func:`make_challenge`)."""
        return make_challenge(self.key(), bits, address, now)

    def redeem(self, answer: str | None, bits: int, address: str, now: float | None = None) -> str | None:
        """Why ``answer`` may not make a seat (``None``: valid, and now used up)."""
        now = time.time() if now is None else now
        why = check_answer(self.key(), answer, bits, address, now)
        if why is not None:
            return why
        nonce, expiry = str(answer).split(".")[2], float(str(answer).split(".")[1])
        with self._change() as used:
            for k in [k for k, v in used.items() if not isinstance(v, (int, float)) or v < now]:
                del used[k]
            if nonce in used:
                return "the answer was used already"
            used[nonce] = expiry
        return None
