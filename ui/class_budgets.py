"""The class's per-address and per-server budgets as this browser meets them (class mode): new
seats and wrong guesses (teacher key, rejoin code, sign-in link: slowed, the right one never refused),
counted in the workspace's shared rate file (:class:`rag_metrics.server.budgets.RateLimiter`) and logged on
the ``rag_metrics.class`` logger.
:mod:`ui.identity` asks these before it makes a seat or checks a guess; the numbers are the
operator's ``[lab.budgets]`` (:mod:`rag_metrics.server.budgets`)."""
from __future__ import annotations

import logging
import time

import streamlit as st

from rag_metrics.config import Budgets, class_mode_on, load_server_config
from rag_metrics.errors import InputError
from rag_metrics.server.budgets import RateLimiter, client_address
from rag_metrics.server.guesses import count_wrong_guess
from rag_metrics.server.policy import seat_proof_bits
from rag_metrics.server.proof import SeatProofs, check_answer
from rag_metrics.server.seats import SeatRegistry

__all__ = ["address", "budgets", "seat_blocked", "seat_challenge", "wrong_guess"]

_LOG = logging.getLogger("rag_metrics.class")
_sleep = time.sleep  # (the tests count the waits instead)


def address() -> str:
    """The address of this browser (behind nginx: the peer nginx saw), for the per-address budgets."""
    try:
        return client_address(st.context.ip_address, st.context.headers.get("X-Forwarded-For"))
    except Exception:  # noqa: BLE001 - no request context (bare script run)
        return "127.0.0.1"


def budgets() -> Budgets:
    """The operator's budgets (the defaults when the configuration cannot be read)."""
    try:
        return load_server_config().budgets
    except InputError:
        return Budgets()


def wrong_guess(what: str) -> float:
    """Count a wrong ``what`` (teacher key, rejoin code, sign-in link) from this address, log it, and
    make its answer wait (:func:`rag_metrics.server.guesses.guess_delay`: nothing within the budgets,
    then 1 s, 2 s, 4 s ... up to 30 s).  The right key is compared first and never waits here."""
    b, who = budgets(), address()
    by_address, by_server, delay = count_wrong_guess(RateLimiter(SeatRegistry().root), who, b)
    _LOG.warning("class: wrong %s from %s (%s from this address, %s on the server in %s s)%s", what, who,
                 by_address, by_server, b.guess_window_s, f"; answered after {delay:g} s" if delay else "")
    if delay:
        _sleep(delay)
    return delay


def seat_challenge(answer: str | None, pending: str | None = None) -> str | None:
    """The challenge this browser must solve before it gets a new seat (:mod:`rag_metrics.server.proof`),
    or None: ``answer`` (the proof cookie) is a valid, unused answer (now used up), or no proof is
    asked (``lab.budgets.seat_proof_bits`` = 0, or not class mode: :func:`rag_metrics.server.policy.seat_proof_bits`).
    ``pending`` (the challenge this session was given) is asked again while it has a minute left."""
    bits = seat_proof_bits(class_mode_on(), budgets())
    if bits <= 0:
        return None
    proofs, who = SeatProofs(SeatRegistry().root), address()
    why = proofs.redeem(answer, bits, who)
    if why is None:
        return None
    if answer:
        _LOG.warning("class: seat proof refused for %s: %s", who, why)
    if pending and check_answer(proofs.key(), f"{pending}.0", bits, who, time.time() + 60) in (
            None, "the answer is wrong"):
        return pending  # still this browser's, with a minute left: the page keeps solving the same one
    return proofs.challenge(bits, who)


def seat_blocked() -> str | None:
    """Why this address may not make a new seat now (``lab.budgets.seats_per_*``), else None (counted)."""
    b, who = budgets(), address()
    rates = RateLimiter(SeatRegistry().root)
    if not rates.hit(f"seat:{who}", b.seats_per_address, b.seat_window_s):
        _LOG.warning("class: new seat refused for %s: %s seats in %s s from this address", who,
                     b.seats_per_address, b.seat_window_s)
        return (f"this network address made {b.seats_per_address} seats in the last {b.seat_window_s // 60} minutes; "
                "rejoin your seat with its code, or wait a few minutes")
    if not rates.hit("seat:*", b.seats_per_server, b.seat_window_s):
        _LOG.warning("class: new seat refused for %s: %s seats in %s s on the server", who, b.seats_per_server,
                     b.seat_window_s)
        return "too many new seats were made in the last minutes; wait a minute and reload"
    return None
