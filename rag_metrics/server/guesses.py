"""Wrong guesses are slowed; the right key is never refused (no Streamlit here).

A teacher key, a rejoin code or a sign-in link is always compared first (in constant time). The right
one signs in at once, whatever the budgets say. A wrong one is counted per client address and for the
whole server (:class:`rag_metrics.server.budgets.RateLimiter`, ``guess:<address>`` and ``guess:*``), and its
answer waits :func:`guess_delay` seconds: nothing for the first ``guesses_per_address`` wrong guesses
of an address (and ``guesses_per_server`` on the server) in ``guess_window_s``, then 1 s, 2 s, 4 s ...
up to :data:`MAX_DELAY_S`. So students mistyping behind the teacher's NAT, or a hostile classmate,
can no longer lock the teacher out: they only slow their own wrong guesses.

>>> from rag_metrics.config import Budgets
>>> b = Budgets(guesses_per_address=10, guesses_per_server=40)
>>> [guess_delay(n, n, b) for n in (1, 10, 11, 12, 13, 40)]
[0.0, 0.0, 1.0, 2.0, 4.0, 30.0]
>>> guess_delay(1, 41, b)
1.0
"""
from __future__ import annotations

from rag_metrics.config import Budgets
from rag_metrics.server.budgets import RateLimiter

__all__ = ["MAX_DELAY_S", "count_wrong_guess", "guess_delay"]

#: The longest a wrong guess's answer waits (seconds).
MAX_DELAY_S = 30.0
#: Wrong guesses counted past a budget (then the delay is at its longest): the rate file stays small
#: under a flood.
_PAST = 16


def guess_delay(by_address: int, by_server: int, budgets: Budgets) -> float:
    """Seconds the answer to a wrong guess waits, given the wrong guesses counted in the window (this
    one included) from its address and on the whole server."""
    over = max(by_address - budgets.guesses_per_address, by_server - budgets.guesses_per_server)
    return 0.0 if over <= 0 else float(min(MAX_DELAY_S, 2.0 ** (over - 1)))


def count_wrong_guess(rates: RateLimiter, address: str, budgets: Budgets,
                      now: float | None = None) -> tuple[int, int, float]:
    """Count one wrong guess from ``address``: ``(wrong guesses of the address, of the server, delay)``.
    Past a budget by :data:`_PAST` guesses nothing more is written (the delay is then the longest)."""
    window = budgets.guess_window_s
    counts = []
    for key, cap in ((f"guess:{address}", budgets.guesses_per_address), ("guess:*", budgets.guesses_per_server)):
        if not rates.hit(key, cap + _PAST, window, now):
            counts.append(cap + _PAST + 1)
        else:
            counts.append(len(rates._read().get(key, [])))
    return counts[0], counts[1], guess_delay(counts[0], counts[1], budgets)
