"""Bounds on the numbers users type or upload, and one parser for whole numbers.

Every number that comes from a file, an editor cell, an environment variable or a URL is checked
against an explicit range here, at the edge, so nothing out of the machine's range reaches NumPy
(where it would overflow or wrap around in an ``int32`` array).

Grades
    :data:`GRADE_MIN` .. :data:`GRADE_MAX`.  Relevance grades are small integers in every
    collection (TREC: -2..4; BEIR: 0..2; the lesson: 0..3).  The bound keeps the exponential NDCG
    gain ``2**g - 1`` finite in float64 even when summed over 100,000 judged ids
    (``2**1000 * 1e5 < 1.8e308``) and fits every grade in the judge's ``int32`` arrays.
    The TREC/BEIR readers (:mod:`rag_metrics.io.trec`) and the golden-set reader
    (:mod:`rag_metrics.io.golden`) share these two constants.

Whole numbers from text
    :func:`parse_int` accepts ``12``, ``+3``, ``-1``, ``2.0`` and rejects, with a message saying
    why: booleans, fractions, ``nan``/``inf``, numbers written with other scripts' digits
    (``²``, ``٣`` pass ``str.isdigit()`` but are not ASCII decimal digits), underscores
    (``1_000``, which ``int()`` would accept), and more than :data:`MAX_INT_DIGITS` digits
    (``int()`` refuses more than 4300).
"""
from __future__ import annotations

import math
import re
from typing import Any

__all__ = [
    "GRADE_MAX",
    "GRADE_MIN",
    "MAX_ID_CHARS",
    "MAX_INT_DIGITS",
    "MAX_JSON_DEPTH",
    "grade_error",
    "id_problem",
    "parse_int",
]

#: Smallest accepted relevance grade.
GRADE_MIN = -1000
#: Largest accepted relevance grade (see the module docstring for why).
GRADE_MAX = 1000
#: Longest whole number read from text (digits); longer ones are refused before ``int()``.
MAX_INT_DIGITS = 18
#: JSON nesting deeper than this in user files is refused (Python's parser recurses per level).
MAX_JSON_DEPTH = 64
#: Longest id (query, document or chunk) accepted.
MAX_ID_CHARS = 500

_ASCII_INT = re.compile(r"[+-]?[0-9]+")
_ASCII_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_int(value: Any, lo: int, hi: int, what: str = "value") -> tuple[int | None, str | None]:
    """``(number, None)`` when ``value`` is a whole number in ``[lo, hi]``, else ``(None, message)``.

    Accepts ints, integral floats and ASCII text of either (``" 3 "``, ``"2.0"``, ``"1e2"``).
    The message names the value received (shortened) and the accepted range; it never raises.
    """
    shown = _short(value)
    rng = f"a whole number from {lo} to {hi}"
    if isinstance(value, bool) or value is None:
        return None, f"{what} {shown} is not a number; use {rng}"
    if isinstance(value, int):
        n = value
    elif isinstance(value, float):
        if not math.isfinite(value):
            return None, f"{what} {shown} is not a finite number; use {rng}"
        if not value.is_integer():
            return None, f"{what} {shown} is not an integer; use {rng}"
        if abs(value) > 10 ** MAX_INT_DIGITS:
            return None, f"{what} {shown} is out of range; use {rng}"
        n = int(value)
    elif isinstance(value, str):
        s = value.strip()
        if "_" in s:
            return None, f"{what} {shown} contains '_'; write the digits without separators ({rng})"
        if s and not s.isascii():
            return None, (f"{what} {shown} contains characters that are not the digits 0-9 "
                          f"(e.g. superscripts or other scripts' digits); use {rng}")
        if _ASCII_INT.fullmatch(s):
            digits = s.lstrip("+-").lstrip("0")
            if len(digits) > MAX_INT_DIGITS:
                return None, f"{what} {shown} has {len(digits)} digits and is out of range; use {rng}"
            n = int(s)
        elif len(s) <= 64 and _ASCII_FLOAT.fullmatch(s):
            return parse_int(float(s), lo, hi, what)
        else:
            return None, f"{what} {shown} is not an integer; use {rng}"
    else:
        return None, f"{what} {shown} is not a number ({type(value).__name__}); use {rng}"
    if not lo <= n <= hi:
        return None, f"{what} {shown} is out of range; use {rng}"
    return n, None


def grade_error(value: Any) -> tuple[int | None, str | None]:
    """:func:`parse_int` for a relevance grade, with the grade range and the usual meaning."""
    g, msg = parse_int(value, GRADE_MIN, GRADE_MAX, "grade")
    if msg is not None:
        msg += " (0 = not relevant, 1-3 = relevant)"
    return g, msg


def id_problem(value: str, what: str = "id") -> str | None:
    """Why ``value`` cannot be an id (``None`` when it can).

    Ids are written into TREC qrels and runs, whose columns are separated by whitespace, so an id
    must not contain spaces, tabs, line breaks or other control characters; it must not be empty
    and at most :data:`MAX_ID_CHARS` characters long.
    """
    if not value:
        return f"{what} is empty"
    if len(value) > MAX_ID_CHARS:
        return f"{what} {_short(value)} is {len(value):,} characters long; the limit is {MAX_ID_CHARS}"
    bad = next((c for c in value if c.isspace() or not c.isprintable()), None)
    if bad is not None:
        return (f"{what} {_short(value)} contains {_char_name(bad)}; ids are written into TREC qrels/runs, "
                "which separate columns by whitespace: use '_' or '-' instead")
    return None


def _char_name(c: str) -> str:
    names = {" ": "a space", "\t": "a tab", "\n": "a line break", "\r": "a carriage return"}
    return names.get(c, f"the character U+{ord(c):04X}")


def _short(value: Any, limit: int = 40) -> str:
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + f"... ({len(value):,} characters)"
    try:
        r = repr(value)
    except ValueError:  # an int with more digits than repr allows
        return f"<number with more than {MAX_INT_DIGITS} digits>"
    return r if len(r) <= limit + 2 else r[:limit] + f"... ({len(r):,} characters)"
