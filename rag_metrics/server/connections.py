"""What the settings of one session may reach on this server: variables, hosts, folders, the
operator's named connections and judge.

:class:`ServerEnv` is built once per request from the session's :class:`~rag_metrics.server.access.Caller`
and the operator's :class:`~rag_metrics.config.ServerConfig`, and passed wherever a
connection is built (the ``env`` argument of the backends, :func:`rag_metrics.systems.store.build_system`,
:func:`rag_metrics.systems.evaluation.evaluate_stored`).  It is a mapping of the variables ``${VAR}``
may use (the environment and Streamlit secrets for the operator; none in class mode, where a
reference is refused with a message naming the class's connections) and carries the
:class:`~rag_metrics.server.outbound.OutboundPolicy` and the :class:`~rag_metrics.server.folders.FolderPolicy`.

Named connections (``[lab.connections.<name>]``) are stored in a workspace by name only
(``SystemSpec(kind="connection", settings={"connection": name})``); their settings and secrets are
read from the configuration when a request is built and sent only to the connection's own URL.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag_metrics.config import ServerConfig, class_mode_on, environment, load_server_config
from rag_metrics.errors import InputError
from rag_metrics.server.access import STUDENT, Caller, operator
from rag_metrics.server.folders import FolderPolicy
from rag_metrics.server.outbound import OutboundPolicy
from rag_metrics.server.policy import allowed
from rag_metrics.server.secrets import Variables

__all__ = ["NAMED_KIND", "NamedRef", "ServerEnv", "folders_of", "judge_api_key",
           "named_connection", "policy_of", "server_env", "typed_in_class"]

#: The stored kind of a system that uses a named connection.
NAMED_KIND = "connection"
_NAMED_KEY = "RAG_METRICS_NAMED_CONNECTION_KEY"


class ServerEnv(Variables):
    """The variables, outbound policy and folders of one session (module docstring)."""

    def __init__(self, caller: Caller, config: ServerConfig, variables: Mapping[str, str] | None = None,
                 policy: OutboundPolicy | None = None, folders: FolderPolicy | None = None) -> None:
        values = None
        if allowed(caller, "resolve-typed-secrets"):
            values = environment() if variables is None else variables
        super().__init__(values, tuple(config.connections))
        self.caller = caller
        self.config = config
        self.policy = policy if policy is not None else OutboundPolicy.for_caller(caller, config)
        self.folders = folders if folders is not None else FolderPolicy.for_caller(caller, config)

    def for_named(self) -> ServerEnv:
        """The environment a named connection's settings are used in: written by the operator, so
        ``${VAR}`` in the configuration file resolves against the server's environment, and its
        folders are the operator's; the outbound policy stays the session's (declared connections
        are on it)."""
        return ServerEnv(operator(), self.config, environment(), self.policy, FolderPolicy.open())


def server_env(caller: Caller | None = None, config: ServerConfig | None = None,
               variables: Mapping[str, str] | None = None) -> ServerEnv:
    """A :class:`ServerEnv` (defaults: the operator, the configuration file, ``os.environ``)."""
    return ServerEnv(caller or operator(), config if config is not None else load_server_config(), variables)


def _fail_closed() -> ServerEnv | None:
    """On a class server (``RAG_METRICS_CLASS_MODE``), a connection built without a session's
    :class:`ServerEnv` gets a student's policy, never the operator's: a code path that forgot to
    pass one fails closed."""
    return ServerEnv(Caller(STUDENT), load_server_config()) if class_mode_on() else None


def policy_of(env: Mapping[str, str] | None) -> OutboundPolicy:
    """The outbound policy ``env`` carries (open for a plain mapping or None: the CLI, the operator;
    on a class server a student's, see :func:`_fail_closed`)."""
    if isinstance(env, ServerEnv):
        return env.policy
    closed = _fail_closed()
    return closed.policy if closed is not None else OutboundPolicy.open()


def folders_of(env: Mapping[str, str] | None) -> FolderPolicy:
    """The folder policy ``env`` carries (any folder for a plain mapping or None; on a class server
    a student's)."""
    if isinstance(env, ServerEnv):
        return env.folders
    closed = _fail_closed()
    return closed.folders if closed is not None else FolderPolicy.open()


def typed_in_class(env: Mapping[str, str] | None) -> bool:
    """True when settings used with ``env`` were typed in a browser in class mode (no server
    variable, no server credential may reach them)."""
    return isinstance(env, Variables) and env.closed


@dataclass(frozen=True)
class NamedRef:
    """The stored settings of a system on a named connection: its name only."""

    connection: str

    def __post_init__(self) -> None:
        name = str(self.connection).strip()
        if not name:
            raise InputError("choose one of the class's connections")
        object.__setattr__(self, "connection", name)

    def public(self) -> dict[str, Any]:
        return {"connection": self.connection}


def named_connection(env: Mapping[str, str] | None, name: str) -> Any:
    """The :class:`~rag_metrics.config.NamedConnection` called ``name``; InputError naming the
    declared ones when there is none."""
    config = env.config if isinstance(env, ServerEnv) else load_server_config()
    conn = config.connections.get(name)
    if conn is None:
        raise InputError(f"the class has no connection {name!r} (connections: "
                         f"{', '.join(sorted(config.connections)) or 'none'}); choose another or ask the operator")
    return conn



def judge_api_key(env: Mapping[str, str] | None, base_url: str) -> str | None:
    """The API key to send to the judge at ``base_url``: the operator's ``lab.judge.api_key`` when
    ``base_url`` is the configured judge; in single-user mode otherwise ``None`` (the judge reads
    its environment variable).  In class mode no other URL ever gets a key."""
    if not isinstance(env, ServerEnv) or not env.config.judge:
        return None
    if env.policy.may_send_judge_key(base_url):
        key = env.config.judge.get("api_key")
        return str(key) if key else None
    return None
