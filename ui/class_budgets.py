"""The class's per-address and per-server budgets as this browser meets them (class mode): new
seats and wrong guesses (teacher key, rejoin code), counted in the workspace's shared rate file
(:class:`rag_metrics.budgets.RateLimiter`) and logged on the ``rag_metrics.class`` logger.
:mod:`ui.identity` asks these before it makes a seat or checks a guess; the numbers are the
operator's ``[lab.budgets]`` (:mod:`rag_metrics.budgets`)."""
from __future__ import annotations

import logging
import time

import streamlit as st

from rag_metrics.budget_limits import Budgets
from rag_metrics.budgets import RateLimiter, client_address
from rag_metrics.config import class_mode_on, load_server_config
from rag_metrics.errors import InputError
from rag_metrics.server.policy import seat_proof_bits
from rag_metrics.server.proof import SeatProofs, check_answer
from rag_metrics.server.seats import SeatRegistry

__all__ = ["address", "budgets", "guess_failed", "guesses_blocked", "seat_blocked", "seat_challenge"]

_LOG = logging.getLogger("rag_metrics.class")


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


def guesses_blocked(what: str) -> str | None:
    """Why no more guesses are taken from this address (or from anyone): the per-address and
    whole-server budgets of wrong teacher keys and rejoin codes (``lab.budgets.guesses_*``)."""
    b, who = budgets(), address()
    rates = RateLimiter(SeatRegistry().root)
    for key, cap in ((f"guess:{who}", b.guesses_per_address), ("guess:*", b.guesses_per_server)):
        if rates.full(key, cap, b.guess_window_s):
            wait = int(rates.wait(key, b.guess_window_s)) + 1
            _LOG.warning("class: %s refused from %s: %s wrong guesses in %s s (%s)", what, who, cap,
                         b.guess_window_s, "this address" if key != "guess:*" else "the whole server")
            return f"Too many wrong {what}s from {'this network address' if key != 'guess:*' else 'the class'}: " \
                   f"try again in {wait} s."
    return None


def guess_failed(what: str) -> None:
    b, who = budgets(), address()
    rates = RateLimiter(SeatRegistry().root)
    rates.hit(f"guess:{who}", b.guesses_per_address, b.guess_window_s)
    rates.hit("guess:*", b.guesses_per_server, b.guess_window_s)
    _LOG.warning("class: wrong %s from %s", what, who)


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
