"""The budgets' table (:class:`Budgets`, ``[lab.budgets]``) and its parser: what the one configuration
module reads; the limiter and the spending ledger are :mod:`rag_metrics.budgets`."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.limits import parse_int

_MAX = 10**12
#: Budgets whose range is not 1 to _MAX: ``seat_proof_bits`` is 0 (no proof) to 28 (minutes in a browser).
_RANGES = {"seat_proof_bits": (0, 28)}


@dataclass(frozen=True)
class Budgets:
    """The per-seat and per-server limits (module docstring); each field is a whole number."""

    seats_per_address: int = 8
    seats_per_server: int = 300
    seat_window_s: int = 600
    seat_proof_bits: int = 16
    guesses_per_address: int = 10
    guesses_per_server: int = 40
    guess_window_s: int = 600
    upload_files_per_session: int = 30
    upload_mb_per_session: int = 60
    corpus_mb: int = 2
    corpora_per_seat: int = 5
    corpora_mb_per_seat: int = 4
    embed_texts_per_seat: int = 1500
    embed_texts_per_class: int = 15000
    embed_window_s: int = 3600
    golden_questions: int = 1000
    judge_calls_per_seat: int = 2000
    judge_tokens_per_seat: int = 1_000_000
    judge_confirm_over: int = 100
    tutor_questions_per_seat: int = 20
    tutor_tokens_per_seat: int = 40_000
    sweep_configs: int = 12
    workers: int = 2
    process_memory_mb: int = 3072

    def rows(self) -> list[tuple[str, int]]:
        """``(setting, value)`` for the teacher's Class page."""
        return [(f.name, int(getattr(self, f.name))) for f in fields(self)]


def parse_budgets(raw: Any, source: str = "config") -> Budgets:
    """:class:`Budgets` from the ``[lab.budgets]`` table (missing keys keep their defaults)."""
    if raw is None:
        return Budgets()
    if not isinstance(raw, Mapping):
        raise InputError(f"{source}: lab.budgets must be a table ([lab.budgets])")
    known = {f.name for f in fields(Budgets)}
    unknown = sorted(set(map(str, raw)) - known)
    if unknown:
        raise InputError(f"{source}: lab.budgets.{unknown[0]} is not a budget; use one of {', '.join(sorted(known))}")
    values: dict[str, int] = {}
    for key, value in raw.items():
        low, high = _RANGES.get(str(key), (1, _MAX))
        n, msg = parse_int(value, low, high, f"{source}: lab.budgets.{key}")
        if msg is not None:
            raise InputError(msg)
        assert n is not None
        values[str(key)] = n
    return Budgets(**values)
