"""The systems stored for a corpus, as the sidebar and the evaluation see them: their names and their
evaluation (the Systems page's forms and tables are in :mod:`ui.systems`)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.retrieval.defaults import RETRIEVER_KINDS
from rag_metrics.systems.evaluation import evaluate_stored
from rag_metrics.systems.ownership import system_store, visible_systems
from ui import cache, server
from ui.spaces import caller

__all__ = ["evaluate_named", "failed_questions", "secrets_env", "stored_names"]

_FAILED: dict[str, int] = {}  # questions a live system failed on, per system identity (for ui.systems.judged_note)


def secrets_env() -> Mapping[str, str]:
    """This session's :class:`~rag_metrics.server.connections.ServerEnv`: the variables ``${VAR}`` may use
    (environment plus Streamlit secrets in single-user mode, none in class mode), the outbound
    policy and the folders every connection is built with."""
    return server.env()


def stored_names(corpus_name: str) -> list[str]:
    """Names of the systems kept for a corpus (the sidebar's and Compare's choices beside the bundled ones)."""
    return [n for n, _ in visible_systems(caller(), corpus_name) if n.lower() not in RETRIEVER_KINDS]


def evaluate_named(name: str, corpus_name: str, chunks: Any, golden: Any, options: Any, depth: int
                   ) -> tuple[Any, str]:
    """``(EvaluationResult, cache identity)`` of the system ``name`` stored for ``corpus_name``,
    ranked to ``depth`` and judged under ``options`` (memoised in the library: a rerun, a K change or
    a page switch re-queries nothing).  ``chunks``: the :class:`ui.context.ChunkSet` in use.
    Raises ``InputError`` when it cannot be built or evaluated."""
    owner = system_store(caller(), corpus_name, name)
    if owner is None:
        raise InputError(f"system {name!r} is not one this session may use; add it on the Systems page")
    ev, fp = evaluate_stored(owner, name, golden, options, depth,
                             chunks=chunks.chunks, encoder=cache.encoder(), corpus_key=chunks.fingerprint,
                             env=secrets_env(),
                             chunk_to_doc=chunks.doc if options.level == "document" else None)
    if ev.result is None:
        raise InputError(f"system {name!r} cannot be evaluated: {ev.error}. Fix or remove it on the Systems page")
    identity = f"{name}#{fp}"
    _FAILED[identity] = len(ev.system_run.failures) if ev.system_run is not None else 0
    return ev.result, identity


def failed_questions(identity: str) -> int:
    """How many questions the live system ``identity`` (an :class:`ui.context.EvalKey`'s ``system``) failed on."""
    return _FAILED.get(identity, 0)
