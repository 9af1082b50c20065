"""The teacher's view of the class: a query over the students' progress records, not a copy of them.

Every function takes the roster as ``(seat label, space name)`` pairs, so the seat list can come
from anywhere (today :func:`rag_metrics.workspace.store.list_spaces`; a class roster later).  Access is
decided by the caller (:attr:`rag_metrics.server.access.Caller.may_manage_class`), never here.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rag_metrics.io.files import csv_text, locked
from rag_metrics.lesson.progress import store_for_space
from rag_metrics.lesson.steps import QUIZ, STEPS

if TYPE_CHECKING:
    import pandas as pd

    from rag_metrics.types import GoldenSet
    from rag_metrics.workspace.store import Workspace
else:
    from rag_metrics.lazy import pandas as pd

__all__ = ["Seat", "class_progress", "exercise_columns", "golden_would_change", "lesson_column", "lesson_columns",
           "progress_csv", "push_golden", "quiz_column", "reset_progress", "reset_student", "step_columns"]

#: ``(seat label, space name)``.
Seat = tuple[str, str]


def step_columns() -> list[str]:
    """The per-step columns of :func:`class_progress`: ``"1 why"``, ``"2 hit_rate"``, ..."""
    return [f"{i + 1} {s.key}" for i, s in enumerate(STEPS)]


def lesson_column(key: str) -> str:
    """The class table's column of one lesson of the course: ``"lesson 2 retrieval"``, holding
    ``"steps done / total"`` (``"3 / 11"``)."""
    from rag_metrics.lesson.course import lesson

    return f"lesson {lesson(key).number} {key}"


def lesson_columns() -> list[str]:
    """A column per lesson of the course (:func:`lesson_column`), in the course's order."""
    from rag_metrics.lesson.course import COURSE

    return [lesson_column(x.key) for x in COURSE]


def _lesson_cells(space: str, root: str | os.PathLike[str] | None) -> tuple[dict[str, str], list[str]]:
    """``({lesson column: "done / total"}, problems)`` of every lesson of the course in ``space``."""
    from rag_metrics.lesson.course import COURSE

    cells: dict[str, str] = {}
    problems: list[str] = []
    for x in COURSE:
        store = store_for_space(space, root, lesson=x.key)
        p = store.load()
        if store.problem and x.key != "retrieval":   # lesson 2's problem is reported with its own columns
            problems.append(store.problem)
        cells[lesson_column(x.key)] = f"{sum(p.steps_done(x.steps))} / {len(x.steps)}"
    return cells, problems


def quiz_column(key: str) -> str:
    """The class table's column of one quiz answer: ``"quiz mrr"`` (not ``"quiz quiz_mrr"``)."""
    return f"quiz {key.removeprefix('quiz_')}"


def exercise_columns(name: str) -> tuple[str, str]:
    """The class table's columns of one code exercise: checks passed by the last run, as the student's
    browser reported them (the server never runs a student's code; the teacher can re-run it in their own
    browser on Class progress), and runs (``"ex hit_rate_at_k passed (browser-reported)"``,
    ``"ex hit_rate_at_k attempts"``)."""
    return f"ex {name} passed (browser-reported)", f"ex {name} attempts"


def _exercise_names() -> list[str]:
    from rag_metrics.exercises.catalogue import EXERCISES

    return [e.name for e in EXERCISES]


def class_progress(seats: Sequence[Seat], root: str | os.PathLike[str] | None = None,
                   metrics: Callable[[str], Mapping[str, float]] | None = None) -> pd.DataFrame:
    """One row per seat: seat, space, step (the step of lesson 2 they are on, 1-based), steps_done, one boolean
    column per step of lesson 2 (:func:`step_columns`), quiz (right answers), ``quiz <task>`` (each quiz
    answer, "" when unanswered), a column per lesson of the course with its ``"steps done / total"``
    (:func:`lesson_columns`), per code exercise of every lesson the checks passed by its last run and the number of
    runs (:func:`exercise_columns`; 0 and 0 before the first run), updated, problem (a progress file that
    could not be read) and, with ``metrics(space) -> {name: value}``, those values (e.g. the space's
    current hit rate@5).  No student code is read beyond its counts."""
    from rag_metrics.exercises.attempts import store_for_space as attempts_for_space

    names = _exercise_names()
    ex_cols = [c for n in names for c in exercise_columns(n)]
    rows = []
    for seat, space in seats:
        store = store_for_space(space, root)
        p = store.load()
        done = p.steps_done()
        row: dict[str, Any] = {"seat": seat, "space": space, "step": p.step + 1, "steps_done": sum(done)}
        row.update(dict(zip(step_columns(), done)))
        row["quiz"] = sum(1 for t in QUIZ if p.done.get(t.key))
        for t in QUIZ:
            row[quiz_column(t.key)] = str(p.answers.get(t.key, ""))
        cells, lesson_problems = _lesson_cells(space, root)
        row.update(cells)
        attempts = attempts_for_space(space, root)
        problems = [store.problem] if store.problem else []
        problems += lesson_problems
        for name in names:
            a = attempts.load(name)
            if attempts.problem:
                problems.append(attempts.problem)
            passed, runs = exercise_columns(name)
            row[passed], row[runs] = a.passed, a.attempts
        row["updated"] = p.updated
        row["problem"] = "; ".join(problems)
        if metrics is not None:
            row.update(metrics(space))
        rows.append(row)
    cols = ["seat", "space", "step", "steps_done", *step_columns(), "quiz", *(quiz_column(t.key) for t in QUIZ),
            *lesson_columns(), *ex_cols, "updated", "problem"]
    out = pd.DataFrame(rows)
    return out if rows else pd.DataFrame(columns=cols)


def progress_csv(table: pd.DataFrame) -> str:
    """The class table as CSV text (UTF-8, one header row); a cell a spreadsheet would run as a
    formula (a seat named ``=HYPERLINK(...)``) is written as text (:func:`rag_metrics.io.files.csv_text`)."""
    return csv_text(table)


def _reset_lessons(space: str, root: str | os.PathLike[str] | None) -> None:
    """Every lesson of the course afresh in ``space`` (each progress file; a versioned change)."""
    from rag_metrics.lesson.course import COURSE

    for x in COURSE:
        store_for_space(space, root, lesson=x.key).reset()


def reset_progress(spaces: Sequence[str], root: str | os.PathLike[str] | None = None) -> list[str]:
    """Start every lesson of the course afresh in each space (a versioned change: a student's open session
    takes it before its next save, :mod:`rag_metrics.workspace.versions`); returns the spaces reset."""
    for space in spaces:
        _reset_lessons(space, root)
    return list(spaces)


def _versioned_golden_write(ws: Workspace, kind: str, write: Callable[[], bool]) -> bool:
    """The teacher's change of a student's golden set: ``write()`` (True when it changed the file) and
    a new generation, both under the golden file's lock, the lock every save of the set holds
    (:meth:`rag_metrics.workspace.store.Workspace.save` checks the generation there)."""
    from rag_metrics.workspace import versions
    from rag_metrics.workspace.store import space_dir

    with locked(ws.path):
        if not write():
            return False
        versions.record(space_dir(ws.space, ws.root), versions.golden_target(ws.name), kind)
    return True


def reset_student(space: str, corpus: str, *, progress: bool = True, golden: bool = True,
                  root: str | os.PathLike[str] | None = None) -> list[str]:
    """Reset one student's space: their lesson ``progress`` (start afresh) and/or their private
    ``golden`` set of ``corpus`` (removed: the space reads the shared one again).  The shared space
    is never touched.  Returns what was reset (``"progress"``, ``"golden set"``).  Each is a
    versioned change: the student's open session takes it before its next save and says so."""
    from rag_metrics.workspace.store import DEFAULT_SPACE, Workspace

    if space == DEFAULT_SPACE:
        return []
    done = []
    if progress:
        _reset_lessons(space, root)
        done.append("progress")
    if golden:
        ws = Workspace(corpus, root, space=space)

        def remove() -> bool:
            if not ws.path.exists():
                return False  # nothing private: nothing to version (a new seat stays empty)
            ws.delete()
            return True

        if ws.path.exists():
            _versioned_golden_write(ws, "reset", remove)
        done.append("golden set")
    return done


def golden_would_change(golden: GoldenSet, corpus: str, spaces: Sequence[str],
                        root: str | os.PathLike[str] | None = None) -> list[str]:
    """The spaces whose golden set of ``corpus`` a push of ``golden`` would change: those that keep
    their own saved set and it differs (same questions, ids, labels and answers count as equal:
    :meth:`GoldenSet.fingerprint`).  A space with nothing saved reads the shared set already, and the
    shared space is never pushed to.  An unreadable saved set counts as one that would change."""
    from rag_metrics.errors import InputError
    from rag_metrics.workspace.store import DEFAULT_SPACE, Workspace

    want = golden.fingerprint()
    out = []
    for space in spaces:
        if space == DEFAULT_SPACE:
            continue
        ws = Workspace(corpus, root, space=space)
        if not ws.path.exists():
            continue
        try:
            loaded = ws.load()
        except InputError:
            out.append(space)
            continue
        if loaded is not None and loaded[0].fingerprint() != want:
            out.append(space)
    return out


def push_golden(golden: GoldenSet, corpus: str, spaces: Sequence[str],
                root: str | os.PathLike[str] | None = None) -> list[str]:
    """Overwrite the golden set of ``corpus`` in every space with ``golden`` (the shared one; the
    previous version of each stays in its undo history).  The shared space itself is skipped.
    Each write is a versioned change (a student's open session takes the pushed set before its next
    save and says so).  Returns the spaces written."""
    from rag_metrics.workspace.store import DEFAULT_SPACE, Workspace

    written = []
    for space in spaces:
        if space == DEFAULT_SPACE:
            continue
        ws = Workspace(corpus, root, space=space)

        def write(ws: Workspace = ws) -> bool:
            return ws.save(golden, None, session="teacher", force=True).saved

        _versioned_golden_write(ws, "push", write)
        written.append(space)
    return written
