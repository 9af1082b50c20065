"""Errors and validation reports.

Every message says where (file:line, field or query id), what was wrong (the value received) and
how to fix it.  Validation collects all problems at once into a :class:`ValidationReport`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["MAX_ERROR_CHARS", "MAX_MESSAGE_CHARS", "InputError", "Problem", "ValidationReport", "excerpt",
           "grouped_lines"]

Severity = Literal["error", "warning"]

#: Longest message a :class:`Problem` prints; longer ones are cut (a value echoed whole from a file
#: must never make a line of 168 KB).
MAX_MESSAGE_CHARS = 600

#: Repeats of one kind of problem listed before the rest are counted in one line.
EXAMPLES_SHOWN = 3

_VARYING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[-+]?\d[\d,.]*(?:[eE][-+]?\d+)?")


def excerpt(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters with the full length said
    (``'aaaa...' (168,000 characters)``): what a reader echoes of a value from a file."""
    shown = value if isinstance(value, str) else repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else f"{value[:limit]!r}... ({len(value):,} characters)"
    return shown if len(shown) <= limit else f"{shown[:limit]}... ({len(shown):,} characters)"


#: Longest :class:`InputError` message (a one-line refusal may quote a few problems).
MAX_ERROR_CHARS = 4000


def _capped(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... (message cut: {len(message):,} characters)"


def _template(p: Problem) -> tuple[str, str, str | None, str]:
    """What repeats of one problem share: severity, file, field and the message with its quoted
    values and numbers blanked (``id 'd7' judged twice ... grade 2 replaces 1``)."""
    return p.severity, p.file, p.field, _VARYING.sub("…", p.message)


def grouped_lines(problems: Sequence[Problem], examples: int = EXAMPLES_SHOWN) -> list[str]:
    """``problems`` as lines, each kind of problem that repeats (the same message but for its
    values, in the same file and field) listed ``examples`` times and then counted in one line:
    ``warning: qrels.txt: 17,522 more like the ones above (17,525 in all): id … judged twice ...``.
    The one helper every reader's problems are printed through (CLI, app, one-line summaries)."""
    counts: dict[tuple[str, str, str | None, str], int] = {}
    for p in problems:
        key = _template(p)
        counts[key] = counts.get(key, 0) + 1
    seen: dict[tuple[str, str, str | None, str], int] = {}
    out: list[str] = []
    for p in problems:
        key = _template(p)
        n = seen[key] = seen.get(key, 0) + 1
        if n <= examples or counts[key] == examples + 1:
            out.append(str(p))
        elif n == examples + 1:
            severity, file, fld, text = key
            where = ", ".join(x for x in (file, f"field {fld!r}" if fld else "") if x)
            more = counts[key] - examples
            out.append(f"{severity}: {where + ': ' if where else ''}{more:,} more like the ones above "
                       f"({counts[key]:,} in all): {_capped(text)}")
    return out


class InputError(ValueError):
    """Bad user input (file, argument or value).  ``str(err)`` is a one-line, complete message.

    ``report`` carries the full :class:`ValidationReport` when the error came from validation.
    """

    def __init__(self, message: str, report: ValidationReport | None = None) -> None:
        super().__init__(_capped(message, MAX_ERROR_CHARS))  # a name or value echoed whole never makes a 100 KB line
        self.report = report


@dataclass(frozen=True)
class Problem:
    severity: Severity
    message: str
    file: str = ""
    line: int | None = None
    query_id: str | None = None
    field: str | None = None

    @property
    def where(self) -> str:
        parts = []
        if self.file:
            parts.append(f"{self.file}:{self.line}" if self.line is not None else self.file)
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.query_id is not None:
            parts.append(f"query {self.query_id!r}")
        if self.field:
            parts.append(f"field {self.field!r}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where, message = self.where, _capped(self.message)
        return f"{self.severity}: {where}: {message}" if where else f"{self.severity}: {message}"


@dataclass
class ValidationReport:
    """All problems found in one input, errors first when listed."""

    problems: list[Problem] = field(default_factory=list)

    def add(self, severity: Severity, message: str, **where: object) -> None:
        self.problems.append(Problem(severity, message, **where))  # type: ignore[arg-type]

    def error(self, message: str, **where: object) -> None:
        self.add("error", message, **where)

    def warning(self, message: str, **where: object) -> None:
        self.add("warning", message, **where)

    def extend(self, problems: Iterable[Problem]) -> None:
        self.problems.extend(problems)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def __bool__(self) -> bool:  # truthy when there is anything to show
        return bool(self.problems)

    def lines(self, examples: int = EXAMPLES_SHOWN) -> list[str]:
        """Errors, then warnings, one a line; a problem that repeats is listed ``examples`` times
        and then counted in one line (:func:`grouped_lines`)."""
        return grouped_lines(self.errors, examples) + grouped_lines(self.warnings, examples)

    def warning_lines(self, examples: int = EXAMPLES_SHOWN) -> list[str]:
        """The warnings alone, repeats counted (:func:`grouped_lines`)."""
        return grouped_lines(self.warnings, examples)

    def summary(self) -> str:
        return f"{len(self.errors)} error(s), {len(self.warnings)} warning(s)"

    def raise_if_errors(self, what: str = "input", *, hint: str = "run `rag-metrics validate` to list all") -> None:
        """Raise :class:`InputError` naming the first error and the count of the rest."""
        errs = self.errors
        if errs:
            more = f" (and {len(errs) - 1} more error(s); {hint})" if len(errs) > 1 else ""
            raise InputError(f"{str(errs[0])[len('error: '):]}{more}", report=self)
