"""One change that replaces the golden set and adds systems, checked in full before anything is written.

The Bring your system page drops a golden set (or starts one from a RAG log's questions) and one or
more systems at once.  :func:`bring_in` is that change, whole or not at all:

1. **check** every precondition first: the set can be saved (:func:`_check_saveable`), it is within
   the seat's budget, no other session saved the golden set since this one loaded it, every system
   name is free (in the store and within the batch), every upload parses;
2. any refusal: **nothing is written**, and the :class:`Outcome` lists every reason;
3. else the golden set is replaced (atomically; the set it replaces is kept in the undo history) and
   the systems are added under one lock with one atomic index write.  Should the systems still be
   refused (another session took a name in between), the golden set is put back (undo).

A crash (``kill -9``) between the two writes leaves the new golden set (the old one in undo) and no
system: doing the same change again completes it (replacing a set by itself writes nothing).

:class:`Outcome` is also how the app words any golden change: ``kind`` is ``"success"`` only when
everything was done, never for a refusal or a partial change.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag_metrics.errors import InputError
from rag_metrics.types import Chunk, GoldenSet
from rag_metrics.workspace.checks import _check_saveable

if TYPE_CHECKING:  # pragma: no cover
    from rag_metrics.authoring.golden_session import GoldenSession
    from rag_metrics.systems.store import SystemSpec, SystemStore
    from rag_metrics.workspace.store import SaveResult

__all__ = ["Outcome", "SystemUpload", "bring_in", "name_problems", "save_outcome"]


@dataclass
class Outcome:
    """What a change did (``done``) and what it refused and why (``refused``)."""

    done: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """``success`` (all done), ``error`` (refused, nothing done), ``warning`` (part done), ``info``
        (nothing to do)."""
        if self.refused:
            return "warning" if self.done else "error"
        return "success" if self.done else "info"

    @property
    def ok(self) -> bool:
        return not self.refused

    def message(self) -> str:
        """One line: what was done, then what was refused."""
        parts = list(self.done)
        if self.refused:
            head = "Nothing was changed" if not self.done else "Not done"
            parts.append(f"{head}: " + "; ".join(self.refused))
        return " · ".join(parts)


def save_outcome(session: GoldenSession, res: SaveResult | None, done: str) -> Outcome:
    """How a golden change saved by ``session`` (``res``: what its save returned) is told: ``done`` only
    when it was written; kept in this session only (unwritable workspace), written beside another
    session's save (conflict) or refused by a teacher's newer change are said as such, never as done."""
    if session.save_error:
        return Outcome(done=[f"{done.rstrip('.')} (in this browser session only)"], refused=[session.save_error])
    if res is not None and getattr(res, "teacher", None) is not None:
        return Outcome(refused=["the teacher changed the golden set since you loaded it, so nothing was saved; "
                                "their set is loaded"])
    if res is not None and res.conflict:
        return Outcome(done=[f"{done.rstrip('.')} (your copy)"],
                       refused=["not saved over the file: another session changed it (see the Golden set editor)"])
    if res is not None and not res.saved:
        return Outcome(refused=[res.message or "not saved"])
    return Outcome(done=[done])


@dataclass(frozen=True)
class SystemUpload:
    """A system to add: its name, the file's name and bytes."""

    name: str
    filename: str
    data: bytes


def _check_golden(session: GoldenSession, golden: GoldenSet, max_questions: int | None) -> str | None:
    if max_questions is not None and len(golden) > max_questions:
        return (f"the golden set would have {len(golden):,} questions, over this seat's budget of {max_questions:,} "
                "(lab.budgets.golden_questions)")
    try:
        _check_saveable(golden)
    except InputError as e:
        return str(e)
    if session.conflict_path is not None or session.disk_changed():
        return ("another session saved this golden set since you loaded it; load the saved set (Golden set "
                "editor) and bring the files in again")
    return None


def name_problems(store: SystemStore, names: Sequence[str]) -> list[str]:
    """Why some of ``names`` cannot be added to ``store`` (taken, invalid, twice in the list), writing nothing."""
    problems, seen = [], set()
    for name in names:
        try:
            name = store._check_name(name)
        except InputError as e:
            problems.append(str(e))
            continue
        if name in seen:
            problems.append(f"two files would be added as system {name!r}; name them apart")
        seen.add(name)
    return problems


def _prepare_systems(store: SystemStore, uploads: Sequence[SystemUpload],
                     chunks: Sequence[Chunk] | Mapping[str, str] | None,
                     refused: list[str]) -> list[tuple[SystemSpec, bytes]]:
    prepared: list[tuple[SystemSpec, bytes]] = []
    seen: set[str] = set()
    for up in uploads:
        try:
            spec, report = store.prepare_upload(up.name, up.filename, up.data, chunks)
        except InputError as e:
            refused.append(f"{up.filename}: {e}")
            continue
        if spec is None:
            refused.append(f"{up.filename}: {report.summary()}: " + "; ".join(report.lines()[:3]))
            continue
        if spec.name in seen:
            refused.append(f"{up.filename}: two files would be added as system {spec.name!r}; name them apart")
            continue
        seen.add(spec.name)
        prepared.append((spec, up.data))
    from rag_metrics.systems.store import MAX_SYSTEMS

    if prepared and len(store.specs()) + len(prepared) > MAX_SYSTEMS:
        refused.append(f"{MAX_SYSTEMS} systems at most are stored for this corpus; remove one first")
    return prepared


def bring_in(session: GoldenSession | None, store: SystemStore, *, golden: GoldenSet | None = None,
             golden_done: str = "", uploads: Sequence[SystemUpload] = (),
             chunks: Sequence[Chunk] | Mapping[str, str] | None = None,
             max_questions: int | None = None, refused: Sequence[str] = ()) -> tuple[Outcome, list[SystemSpec]]:
    """Replace the golden set with ``golden`` (when given) and add ``uploads`` as systems: every
    precondition checked first, then all done or nothing (see the module's text).

    ``golden_done`` words the replacement in the outcome; ``refused``: problems the caller found already
    (nothing is written, the rest is still checked so every reason is listed).  Returns the outcome and
    the systems added.
    """
    out = Outcome(refused=list(refused))
    if golden is not None:
        if session is None:
            raise ValueError("a golden set to bring in needs the golden session")
        problem = _check_golden(session, golden, max_questions)
        if problem is not None:
            out.refused.append(f"golden set not replaced: {problem}")
    prepared = _prepare_systems(store, uploads, chunks, out.refused)
    if out.refused:
        return out, []
    replaced = False
    if golden is not None and session is not None:
        before = session.version
        res = session.replace(golden)
        told = save_outcome(session, res, golden_done or f"Golden set replaced ({len(golden)} questions)")
        out.done.extend(told.done)
        if told.refused:  # not written (kept in this session only, a conflict, the teacher's change): no system
            out.refused.extend([*told.refused, "no system added"])
            return out, []
        replaced = res is not None and res.saved and res.version != before
    try:
        added = store.add_prepared(prepared)
    except InputError as e:
        if replaced and session is not None:
            undo = session.undo()
            out.done.clear()
            if not undo.saved:
                out.done.append(golden_done or "Golden set replaced")
                out.refused.append(f"the golden set could not be put back ({undo.message}); use Undo")
        out.refused.append(f"no system added: {e}")
        return out, []
    out.done.extend(f"System {spec.name!r} added from {spec.filename or spec.file}" for spec in added)
    return out, added
