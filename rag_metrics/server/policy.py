"""The one policy place: every feature asks :func:`allowed` (what a caller may do) and :func:`limit`
(how much a caller may spend), in the style of Datasette's ``permission_allowed`` and JupyterHub's
scopes.  Nothing else compares role names or reads the mode.

Who the caller is comes from :mod:`rag_metrics.server.access` (:class:`~rag_metrics.server.access.Caller`); what the
operator configured from :mod:`rag_metrics.config` (the one module that reads the environment
and the ``[lab]`` table, budgets included).

Actions
-------
The table :data:`ACTIONS` names each one with the rule it follows; :func:`allowed` raises for a name
not in it, so a typo never silently allows or refuses.

Budgets
-------
:func:`limit` is the number a :class:`~rag_metrics.config.Budgets` field allows this caller (``None``:
no limit).  Budgets bind a student's seat; the operator (single user) and the teacher are not limited,
except that every judge run over ``judge_confirm_over`` planned calls asks to confirm.

>>> from rag_metrics.server.access import Caller, STUDENT, TEACHER, operator
>>> allowed(Caller(STUDENT, space="seat-1", seat="1"), "write-space", "shared")
False
>>> allowed(Caller(TEACHER), "manage-class"), allowed(operator(), "see-class")
(True, True)
>>> from rag_metrics.config import Budgets
>>> student = Caller(STUDENT, space="seat-1", seat="1")
>>> limit(student, "golden_questions", Budgets()), limit(operator(), "golden_questions", Budgets())
(1000, None)
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rag_metrics.config import Budgets
from rag_metrics.server.access import OPERATOR, STUDENT, TEACHER, Caller

__all__ = ["ACTIONS", "JudgePlan", "allowed", "budget_message", "judge_plan", "limit", "seat_proof_bits"]

Rule = Callable[[Caller, Any], bool]

#: Every action a feature may ask about, with its rule (``resource`` is the space for the space actions).
ACTIONS: dict[str, Rule] = {
    "write-shared": lambda c, r: c.may_write_shared,             # golden sets, corpora, systems everyone sees
    "manage-class": lambda c, r: c.may_manage_class,             # roster, reset, push, export, remove seats
    "see-class": lambda c, r: c.role in (OPERATOR, TEACHER),     # the teacher's pages (single user: the operator)
    "resolve-typed-secrets": lambda c, r: c.resolves_typed_secrets,
    "any-host": lambda c, r: c.any_host,
    "see-server-replies": lambda c, r: c.sees_server_replies,
    "any-folder": lambda c, r: c.any_folder,
    "see-server-paths": lambda c, r: c.role == OPERATOR,         # file paths of the server in messages
    "choose-space": lambda c, r: not c.class_mode,               # pick a workspace (URL ?ws=, the picker)
    "read-space": lambda c, r: c.may_read(str(r)),
    "write-space": lambda c, r: c.may_write(str(r)),
    "list-seats": lambda c, r: c.class_mode,                     # the class is its seats (else: every space)
    "take-seat": lambda c, r: c.role == STUDENT,                 # a browser that is a student holds a seat
    "choose-judge": lambda c, r: not c.class_mode,               # type a judge's URL (else the operator's judge)
    "type-folder": lambda c, r: not c.class_mode,                # type a server folder (else pick a class dataset)
    # ask the course's tutor: a student on a seat, the teacher, the operator (resource: the teacher's switch,
    # True when the tutor is on; the teacher and the operator may always ask, e.g. to try it before class)
    "ask-tutor": lambda c, r: (c.role == STUDENT and c.seat is not None and bool(r)) or c.role in (OPERATOR, TEACHER),
}


def allowed(caller: Caller, action: str, resource: Any = None) -> bool:
    """True when ``caller`` may do ``action`` (on ``resource``); see :data:`ACTIONS`."""
    try:
        rule = ACTIONS[action]
    except KeyError:
        raise ValueError(f"unknown action {action!r}; one of {', '.join(sorted(ACTIONS))}") from None
    return bool(rule(caller, resource))


#: Budgets that bind everyone; the rest bind a student's seat only.
_EVERYONE = frozenset({"workers", "upload_files_per_session", "upload_mb_per_session", "process_memory_mb"})
#: Budgets that bind everyone in class mode, the teacher too (a confirmation, not a refusal).
_CLASS = frozenset({"judge_confirm_over"})


def limit(caller: Caller, name: str, budgets: Budgets) -> int | None:
    """The limit ``budgets.<name>`` sets for ``caller`` (``None``: not limited)."""
    value = int(getattr(budgets, name))
    if name in _EVERYONE or caller.role == STUDENT or (name in _CLASS and caller.class_mode):
        return value
    return None


def seat_proof_bits(class_mode: bool, budgets: Budgets) -> int:
    """Leading zero bits a browser proves (:mod:`rag_metrics.server.proof`) before it gets a new seat:
    ``lab.budgets.seat_proof_bits`` in class mode (0: the operator turned it off); 0 in single-user mode,
    which has no seats.

    >>> b = Budgets()
    >>> seat_proof_bits(True, b), seat_proof_bits(True, Budgets(seat_proof_bits=0)), seat_proof_bits(False, b)
    (16, 0, 0)
    """
    return int(budgets.seat_proof_bits) if class_mode else 0


def budget_message(caller: Caller, name: str, budgets: Budgets, wanted: int, what: str) -> str | None:
    """Why ``wanted`` of ``what`` is over the caller's budget (``None`` when it fits)."""
    cap = limit(caller, name, budgets)
    if cap is None or wanted <= cap:
        return None
    return (f"{wanted:,} {what} is over this seat's budget of {cap:,} (lab.budgets.{name}); use fewer, or ask the "
            "teacher")


@dataclass(frozen=True)
class JudgePlan:
    """What may happen with a judge run of ``calls`` planned calls and about ``tokens`` tokens."""

    calls: int
    tokens: int
    refused: str | None = None     # why it may not run (over the seat's remaining budget)
    confirm: bool = False          # over lab.budgets.judge_confirm_over: ask first, showing the plan

    @property
    def may_run(self) -> bool:
        return self.refused is None


def judge_plan(caller: Caller, budgets: Budgets, calls: int, tokens: int, spent: tuple[int, int] = (0, 0)) -> JudgePlan:
    """Decide a judge run before any call: refused when the seat's spending so far (``spent`` =
    calls, tokens) plus the plan passes its budget; to be confirmed when it plans more than
    ``judge_confirm_over`` calls (everyone in class mode).

    >>> from rag_metrics.server.access import Caller, STUDENT
    >>> b = Budgets(judge_calls_per_seat=100, judge_confirm_over=10)
    >>> judge_plan(Caller(STUDENT, space="s", seat="s"), b, 15_099, 6_200_000).refused[:29]
    '15,099 planned judge calls is'
    >>> p = judge_plan(Caller(STUDENT, space="s", seat="s"), b, 20, 900, spent=(50, 0)); (p.may_run, p.confirm)
    (True, True)
    """
    calls_cap = limit(caller, "judge_calls_per_seat", budgets)
    tokens_cap = limit(caller, "judge_tokens_per_seat", budgets)
    refused = None
    if calls_cap is not None and spent[0] + calls > calls_cap:
        refused = (f"{calls:,} planned judge calls is more than this seat has left ({max(0, calls_cap - spent[0]):,} "
                   f"of {calls_cap:,}, lab.budgets.judge_calls_per_seat); use a smaller K, fewer samples or fewer "
                   "questions, or ask the teacher")
    elif tokens_cap is not None and spent[1] + tokens > tokens_cap:
        refused = (f"about {tokens:,} planned judge tokens is more than this seat has left "
                   f"({max(0, tokens_cap - spent[1]):,} of {tokens_cap:,}, lab.budgets.judge_tokens_per_seat)")
    over = limit(caller, "judge_confirm_over", budgets)
    return JudgePlan(calls, tokens, refused, over is not None and calls > over)
