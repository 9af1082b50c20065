"""Whose things are whose: the corpora and systems a caller sees, and where their own go (no Streamlit).

Kept things (uploaded corpora, uploaded runs and RAG logs, connections, their result memos) live in
a space of the workspace (:mod:`rag_metrics.workspace.corpora`, :class:`rag_metrics.systems.store.SystemStore`
take a ``space``).  A caller (:class:`rag_metrics.server.access.Caller`) sees the spaces of
:attr:`~rag_metrics.server.access.Caller.reads`: a student their own and the shared one, the teacher and
the operator the shared one.  So nothing kept by one student is listed, evaluated or removable in
another student's session, and a name from a URL resolves only among what the session sees
(:func:`corpus_space`, :func:`system_store`).  New things go to
:attr:`~rag_metrics.server.access.Caller.writes_to`; a student's name that would shadow a shared one gets
a suffix (:func:`own_name`).
"""
from __future__ import annotations

import os

from rag_metrics.server.access import Caller
from rag_metrics.server.policy import allowed
from rag_metrics.systems.store import SystemStore
from rag_metrics.workspace.corpora import StoredCorpus, stored_corpora

__all__ = ["corpus_space", "own_name", "removable", "system_store", "system_stores", "visible_corpora",
           "visible_systems"]

Root = str | os.PathLike[str] | None


def visible_corpora(caller: Caller, root: Root = None) -> dict[str, tuple[StoredCorpus, str]]:
    """The kept corpora this caller sees: ``name -> (StoredCorpus, space)``, own space first (a
    name in both is the caller's own)."""
    out: dict[str, tuple[StoredCorpus, str]] = {}
    for space in caller.reads:
        for c in stored_corpora(root, space=space):
            out.setdefault(c.name, (c, space))
    return out


def corpus_space(caller: Caller, name: str, root: Root = None) -> str | None:
    """The space the caller's corpus ``name`` is read from (None: not one the caller sees)."""
    hit = visible_corpora(caller, root).get(name)
    return hit[1] if hit else None


def own_name(caller: Caller, name: str, taken: set[str] | frozenset[str]) -> str:
    """The name a new thing of the caller is kept under: ``name``, or, when the caller writes a
    private space and ``name`` is ``taken`` by the shared space, ``name (mine)``, ``name (mine 2)``…"""
    if caller.writes_to == "shared" or name not in taken:
        return name
    n, cand = 1, f"{name} (mine)"
    while cand in taken:
        n += 1
        cand = f"{name} (mine {n})"
    return cand


def system_stores(caller: Caller, corpus_name: str, root: Root = None) -> list[tuple[str, SystemStore]]:
    """``(space, SystemStore)`` of every space the caller sees for a corpus, own space first."""
    return [(space, SystemStore.for_corpus(corpus_name, root, space=space)) for space in caller.reads]


def visible_systems(caller: Caller, corpus_name: str, root: Root = None) -> list[tuple[str, str]]:
    """``(name, space)`` of the stored systems the caller sees for a corpus (a name once, own first)."""
    seen: dict[str, str] = {}
    for space, store in system_stores(caller, corpus_name, root):
        for n in store.names():
            seen.setdefault(n, space)
    return list(seen.items())


def system_store(caller: Caller, corpus_name: str, name: str, root: Root = None) -> SystemStore | None:
    """The store holding the caller's system ``name`` for a corpus (None: not one the caller sees)."""
    for _, store in system_stores(caller, corpus_name, root):
        if store.get(name) is not None:
            return store
    return None


def removable(caller: Caller, space: str) -> bool:
    """May the caller remove a thing kept in ``space``? (Their own, or the shared one when they
    may write it.)"""
    return allowed(caller, "write-space", space)
