"""Who may do what: the one place that decides what a browser session may reach.

Every feature that writes shared work, resolves a secret, opens a server folder or connects to a
host asks the :class:`Caller` of the session (built once per session by the app, or by the CLI as
the operator) instead of deciding for itself.

Roles
-----
``operator``  single-user mode (``./lab app``, loopback only) and the CLI: the person at the
              keyboard runs the server, so ``${VAR}`` references resolve against the environment and
              Streamlit secrets, any folder and any host is reachable, and the shared workspace is theirs.
``teacher``   class mode, signed in with the teacher key: changes the shared workspace (golden sets,
              corpora, systems), manages the class (roster, reset, push), uses the operator's named
              connections and judge.  Settings typed in a browser still never resolve server secrets.
``student``   class mode, everyone else: reads the shared work, writes only their own private space,
              uses only the operator's named connections, datasets and judge.

The rules are the properties below; nothing else in the code compares role names.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OPERATOR", "ROLES", "STUDENT", "TEACHER", "Caller", "operator"]

OPERATOR, TEACHER, STUDENT = "operator", "teacher", "student"
ROLES = (OPERATOR, TEACHER, STUDENT)


@dataclass(frozen=True)
class Caller:
    """The person behind one browser session (or the CLI).

    Attributes
    ----------
    role
        One of :data:`ROLES`.
    space
        The workspace space this caller's own work is saved in (``"shared"`` for the operator and
        the teacher, the seat's private space for a student).
    seat
        The student's seat id (``None`` for the operator and the teacher).
    """

    role: str
    space: str = "shared"
    seat: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown role {self.role!r}; one of {', '.join(ROLES)}")

    # ---- the rules -------------------------------------------------------------------------------
    @property
    def class_mode(self) -> bool:
        """True for the teacher and students: the people in the browsers are not the operator."""
        return self.role != OPERATOR

    @property
    def may_write_shared(self) -> bool:
        """Change the shared workspace (golden sets, corpora, systems, connections)."""
        return self.role in (OPERATOR, TEACHER)

    @property
    def may_manage_class(self) -> bool:
        """See the roster and every seat's progress; reset, push, export, remove seats."""
        return self.role == TEACHER

    @property
    def resolves_typed_secrets(self) -> bool:
        """``${VAR}`` in settings typed in a browser resolves against the server's environment and
        secrets only for the operator; in class mode a typed reference is refused."""
        return self.role == OPERATOR

    @property
    def any_host(self) -> bool:
        """Connect to any host (single user); in class mode only the operator's allowlist."""
        return self.role == OPERATOR

    @property
    def sees_server_replies(self) -> bool:
        """Error messages may quote what a remote server answered (single user); in class mode they
        name the failure class only ("HTTP 404"), so a reply never becomes a way to read a host."""
        return self.role == OPERATOR

    @property
    def any_folder(self) -> bool:
        """Open any server folder (single user); in class mode only inside the operator's data roots."""
        return self.role == OPERATOR

    @property
    def writes_to(self) -> str:
        """The space new work of this caller goes to (uploads, systems, runs, progress)."""
        return self.space

    @property
    def reads(self) -> tuple[str, ...]:
        """The spaces whose saved things (golden sets, corpora, systems) this caller sees, own space
        first: a student reads their own and the shared one (read-only); nobody reads another's."""
        return (self.space,) if self.space == "shared" else (self.space, "shared")

    def may_read(self, space: str) -> bool:
        """See (list, open, evaluate) what is saved in ``space``."""
        return space in self.reads

    def may_write(self, space: str) -> bool:
        """Write into ``space``: one's own space, or the shared one when :attr:`may_write_shared`."""
        return space == self.space or (space == "shared" and self.may_write_shared)


def operator() -> Caller:
    """The caller of the CLI and of single-user mode."""
    return Caller(OPERATOR)
