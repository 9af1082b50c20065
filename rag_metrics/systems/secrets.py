"""Secrets in connection settings: written as ``${VAR}`` references, resolved only when used.

Settings (URLs, header values, DSNs) are stored and shown as written, e.g.
``Authorization: Bearer ${MY_TOKEN}``; :func:`resolve` substitutes the values from the
environment (or a mapping the app passes, e.g. Streamlit secrets) at the moment of the request,
so a resolved secret is never kept in a configuration object, a workspace file, a URL or an export.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from rag_metrics.errors import InputError

__all__ = ["SENSITIVE_HEADERS", "has_literal_secret", "redact_dsn", "references", "resolve"]

_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: Header names whose values are secrets (compared case-insensitively).
SENSITIVE_HEADERS = ("authorization", "proxy-authorization", "x-api-key", "api-key", "apikey", "cookie",
                     "x-auth-token")


def references(template: str) -> list[str]:
    """Names of the ``${VAR}`` references in ``template``."""
    return _REF.findall(template)


def resolve(template: str, setting: str, env: Mapping[str, str] | None = None) -> str:
    """``template`` with every ``${VAR}`` replaced by its value from ``env`` (default ``os.environ``).

    Raises
    ------
    InputError
        Naming the setting and the variable when a reference is not set.
    """
    source = os.environ if env is None else env

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        value = source.get(name)
        if value is None and env is not None:
            value = os.environ.get(name)
        if value is None:
            raise InputError(f"{setting} refers to ${{{name}}}, which is not set; export {name}=... before "
                             "starting (or add it to .streamlit/secrets.toml for the app)")
        return str(value)

    return _REF.sub(sub, template)


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
