"""Secrets in connection settings: written as ``${VAR}`` references, resolved only when used.

Settings (URLs, header values, DSNs) are stored and shown as written, e.g.
``Authorization: Bearer ${MY_TOKEN}``; :func:`resolve` substitutes the values from the
environment (or a mapping the app passes, e.g. Streamlit secrets) at the moment of the request,
so a resolved secret is never kept in a configuration object, a workspace file, a URL or an export.

In class mode settings typed in a browser get a closed :class:`Variables` (through
:class:`rag_metrics.server.connections.ServerEnv`): every ``${VAR}`` is refused with one message naming
the setting and the class's named connections, and nothing of the server's environment is read.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit, urlunsplit

from rag_metrics.config import REFERENCE, class_mode_on, environment, expand
from rag_metrics.errors import InputError

__all__ = ["SENSITIVE_HEADERS", "Variables", "has_literal_secret", "redact_dsn", "references", "resolve"]

_REF = REFERENCE
#: Header names whose values are secrets (compared case-insensitively).
SENSITIVE_HEADERS = ("authorization", "proxy-authorization", "x-api-key", "api-key", "apikey", "cookie",
                     "x-auth-token")


class Variables(Mapping[str, str]):
    """The variables ``${VAR}`` references in settings may use.

    ``values`` (kept as :attr:`variables`) None means none at all (settings typed in a browser in
    class mode): :func:`resolve` then refuses every reference with one message naming the setting and the class's named
    ``connections``, instead of reading the server's environment."""

    def __init__(self, values: Mapping[str, str] | None, connections: tuple[str, ...] = ()) -> None:
        self.variables: dict[str, str] | None = None if values is None else dict(values)
        self.connections = tuple(connections)

    @property
    def closed(self) -> bool:
        return self.variables is None

    def __getitem__(self, key: str) -> str:
        if self.variables is None:
            raise KeyError(key)
        return self.variables[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.variables or {})

    def __len__(self) -> int:
        return len(self.variables or {})

    def __repr__(self) -> str:  # never print the values
        return f"{type(self).__name__}({'closed' if self.closed else f'{len(self)} variables'})"

    def refusal(self, setting: str) -> InputError:
        names = ", ".join(self.connections) or "none yet (the operator declares them in lab.connections)"
        return InputError(f"{setting}: server variables are not available in class mode; use one of the class's "
                          f"connections: {names}")


def references(template: str) -> list[str]:
    """Names of the ``${VAR}`` references in ``template``."""
    return _REF.findall(template)


def _class_server() -> bool:
    return class_mode_on()


def resolve(template: str, setting: str, env: Mapping[str, str] | None = None) -> str:
    """``template`` with every ``${VAR}`` replaced by its value from ``env`` (default ``os.environ``).

    Raises
    ------
    InputError
        Naming the setting and the variable when a reference is not set.
    """
    if env is None and _class_server():
        env = Variables(None)  # fail closed: a class server never resolves a reference no session vouched for
    if isinstance(env, Variables) and env.closed:
        if _REF.search(template):
            raise env.refusal(setting)
        return template
    source = environment() if env is None else env
    return expand(template, setting, source, environment_too=env is not None and not isinstance(env, Variables))


def has_literal_secret(name: str, value: str) -> bool:
    """True when a sensitive header carries a value that is not a ``${VAR}`` reference."""
    return name.strip().lower() in SENSITIVE_HEADERS and not references(value) and bool(value.strip())


def redact_dsn(dsn: str) -> str:
    """A DSN with any literal password replaced by ``***`` (URL and ``key=value`` forms)."""
    if "://" in dsn:
        parts = urlsplit(dsn)
        if parts.password and not references(parts.password):
            host = parts.hostname or ""
            user = parts.username or ""
            netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
            return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
        return dsn
    return re.sub(r"(password\s*=\s*)('[^']*'|\S+)",
                  lambda m: m.group(0) if references(m.group(2)) else m.group(1) + "***", dsn)
