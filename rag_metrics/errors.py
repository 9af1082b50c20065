"""Errors and validation reports.

Every message says where (file:line, field or query id), what was wrong (the value received) and
how to fix it.  Validation collects all problems at once into a :class:`ValidationReport`.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["InputError", "Problem", "ValidationReport"]

Severity = Literal["error", "warning"]


class InputError(ValueError):
    """Bad user input (file, argument or value).  ``str(err)`` is a one-line, complete message.

    ``report`` carries the full :class:`ValidationReport` when the error came from validation.
    """

    def __init__(self, message: str, report: ValidationReport | None = None) -> None:
        super().__init__(message)
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
        where = self.where
        return f"{self.severity}: {where}: {self.message}" if where else f"{self.severity}: {self.message}"


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

    def lines(self) -> list[str]:
        return [str(p) for p in self.errors + self.warnings]

    def summary(self) -> str:
        return f"{len(self.errors)} error(s), {len(self.warnings)} warning(s)"

    def raise_if_errors(self, what: str = "input", *, hint: str = "run `rag-metrics validate` to list all") -> None:
        """Raise :class:`InputError` naming the first error and the count of the rest."""
        errs = self.errors
        if errs:
            more = f" (and {len(errs) - 1} more error(s); {hint})" if len(errs) > 1 else ""
            raise InputError(f"{str(errs[0])[len('error: '):]}{more}", report=self)
