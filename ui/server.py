"""The operator's configuration and what this session may reach, for the pages.

:func:`env` is the :class:`rag_metrics.server.connections.ServerEnv` of the session: every connection the
app builds is given it (variables for ``${VAR}``, the outbound policy, the folder policy, the named
connections).  The rules are in :mod:`rag_metrics.server.access`; nothing here decides them.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from rag_metrics.config import ServerConfig, environment, load_server_config
from rag_metrics.errors import InputError
from rag_metrics.server.connections import ServerEnv
from rag_metrics.server.policy import allowed
from ui.identity import session_caller

__all__ = ["beir_field", "class_mode", "config", "env", "operator_variables"]


def config() -> ServerConfig:
    """The operator's ``[lab]`` configuration; a broken file is shown once and read as empty (in
    class mode that allows nothing: the policy fails closed)."""
    try:
        return load_server_config()
    except InputError as e:
        st.error(f"Server configuration: {e}", icon=":material/error:")
        return ServerConfig(source="broken")


def operator_variables() -> Mapping[str, str]:
    """Environment plus the string values of Streamlit secrets (top level): what ``${VAR}`` resolves
    against in single-user mode."""
    variables = dict(environment())
    try:
        for k, v in st.secrets.items():
            if isinstance(v, (str, int, float)):
                variables.setdefault(str(k), str(v))
    except Exception:  # noqa: BLE001  no secrets.toml: the environment only
        pass
    return variables


def env() -> ServerEnv:
    """This session's :class:`~rag_metrics.server.connections.ServerEnv` (built per call: cheap)."""
    caller = session_caller()
    variables: Any = operator_variables() if allowed(caller, "resolve-typed-secrets") else None
    return ServerEnv(caller, config(), variables)


def class_mode() -> bool:
    """True when the people in the browsers are not the operator (teacher and students)."""
    return not allowed(session_caller(), "choose-space")


def beir_field() -> tuple[str, Any]:
    """The BEIR-folder field of the corpus page and the session's folder policy: a select of the
    class's datasets (BEIR folders under the data roots) in class mode, a path otherwise (checked
    against the data roots when the operator lists some)."""
    e = env()
    folders = e.folders

    if not allowed(e.caller, "type-folder"):
        sets = folders.datasets()
        if not sets:
            st.caption("No BEIR dataset is in the lab's data folders yet (the operator puts them under "
                       "lab.data_roots).")
            return "", folders

        def shown(p: str) -> str:
            from pathlib import Path

            path = Path(p)
            root = next((r for r in folders.roots if path == r or path.is_relative_to(r)), None)
            return path.name if root is None or path == root else str(path.relative_to(root))

        pick = st.selectbox("…or one of the class's BEIR datasets", [str(p) for p in sets], key="beir_path",
                            format_func=shown)
        return str(pick or ""), folders
    label = "…or a BEIR folder on the server (corpus.jsonl, queries.jsonl, qrels/)"
    if not folders.any_folder:
        label += ", inside the lab's data folders"
    return st.text_input(label, key="beir_path", placeholder="/data/scifact"), folders
