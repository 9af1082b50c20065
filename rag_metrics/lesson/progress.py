"""A student's progress through a lesson, kept in their space: one file per lesson of the course,
``<space dir>/lesson/progress.json`` for lesson 2 (``retrieval``, the lab's first lesson: the file it always had)
and ``<space dir>/lesson/progress-<key>.json`` for the others (:func:`progress_file`).

:class:`Progress` is a frozen record (current step, the last answer to each task and whether it
was right, the language); :class:`ProgressStore` reads and writes it atomically (temporary file +
``os.replace``).  A missing file is a fresh start; an unreadable or malformed one is a fresh start
too, with :attr:`ProgressStore.problem` saying why (the file is left as it is until the next save).
This is the one interface the Lesson page and the teacher's view use.

The teacher's reset is a versioned change (:mod:`rag_metrics.workspace.versions`): a session loads
with :meth:`ProgressStore.load_versioned` and saves with the generation it loaded, so a save never
writes an older copy over the reset (it is refused, and the session takes the reset progress).

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> store = ProgressStore(folder)
>>> store.save(Progress().with_answer("why_pick", "mrr", True).with_step(1))
>>> p = ProgressStore(folder).load()
>>> p.step, p.answers["why_pick"], p.done["why_pick"]
(1, 'mrr', True)
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rag_metrics.io.files import atomic_write_text, loads_json, locked
from rag_metrics.lesson.steps import STEPS, Step
from rag_metrics.lesson.texts import LANGUAGES
from rag_metrics.workspace import versions

__all__ = ["PROGRESS_FILE", "LESSON_DIR", "MAX_PROGRESS_BYTES", "Progress", "ProgressStore", "progress_file",
           "store_for_space"]

LESSON_DIR = "lesson"
PROGRESS_FILE = "progress.json"
#: The lesson whose progress is :data:`PROGRESS_FILE` (the others: ``progress-<key>.json``).
FIRST_LESSON = "retrieval"
#: A progress file above this size is not read (answers are small).
MAX_PROGRESS_BYTES = 1024 * 1024
_FORMAT = "rag-metrics-lesson-progress"


@dataclass(frozen=True)
class Progress:
    """Where a student is: ``step`` (0-based index into :data:`~rag_metrics.lesson.steps.STEPS`),
    ``answers`` (task key -> the last answer checked), ``done`` (task key -> whether it was right),
    ``language`` (``"en"`` or ``"da"``), ``updated`` (UTC time of the last change)."""

    step: int = 0
    answers: Mapping[str, Any] = field(default_factory=dict)
    done: Mapping[str, bool] = field(default_factory=dict)
    language: str = "en"
    updated: str = ""

    def with_answer(self, task_key: str, answer: Any, ok: bool) -> Progress:
        """The record after a check: the answer is kept; a task once solved stays solved."""
        return replace(self, answers={**self.answers, task_key: answer},
                       done={**self.done, task_key: bool(ok) or bool(self.done.get(task_key))}, updated=_now())

    def with_step(self, step: int, steps: Sequence[Step] = STEPS) -> Progress:
        return replace(self, step=max(0, min(int(step), len(steps) - 1)), updated=_now())

    def with_language(self, language: str) -> Progress:
        return replace(self, language=language if language in LANGUAGES else "en")

    def step_done(self, s: Step) -> bool:
        """Every task of the step solved."""
        return all(self.done.get(t.key) for t in s.tasks)

    def steps_done(self, steps: Sequence[Step] = STEPS) -> list[bool]:
        return [self.step_done(s) for s in steps]

    def fraction(self, steps: Sequence[Step] = STEPS) -> float:
        """Share of steps done (the progress bar)."""
        return sum(self.steps_done(steps)) / len(steps) if steps else 0.0

    # ---- JSON ------------------------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps({"format": _FORMAT, "version": 1, "step": self.step, "language": self.language,
                           "updated": self.updated, "answers": dict(self.answers), "done": dict(self.done)},
                          ensure_ascii=False, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, steps: Sequence[Step] = STEPS) -> tuple[Progress, str | None]:
        """``(progress, problem)``: what could be read, and a message when something was wrong
        (``steps``: the lesson's, which the step index is kept within)."""
        value, msg, _ = loads_json(text)
        if msg is not None:
            return cls(), msg
        if not isinstance(value, dict) or value.get("format") != _FORMAT:
            return cls(), "not a lesson progress file"
        step = value.get("step", 0)
        answers = value.get("answers", {})
        done = value.get("done", {})
        lang = value.get("language", "en")
        if isinstance(step, bool) or not isinstance(step, int) or not isinstance(answers, dict) \
                or not isinstance(done, dict):
            return cls(), "malformed lesson progress (step, answers or done)"
        return cls(step=max(0, min(step, len(steps) - 1)), answers={str(k): v for k, v in answers.items()},
                   done={str(k): v is True for k, v in done.items()},
                   language=lang if lang in LANGUAGES else "en",
                   updated=str(value.get("updated", ""))), None


def progress_file(lesson: str = FIRST_LESSON) -> str:
    """The name of lesson ``lesson``'s progress file in ``<space dir>/lesson/``.

    >>> progress_file("retrieval"), progress_file("generation")
    ('progress.json', 'progress-generation.json')
    """
    return PROGRESS_FILE if lesson == FIRST_LESSON else f"progress-{lesson}.json"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


class ProgressStore:
    """The progress file of one lesson in one space: ``<folder>/lesson/progress.json`` for lesson 2,
    ``<folder>/lesson/progress-<key>.json`` for another (``folder``: the space's folder,
    :func:`rag_metrics.workspace.store.space_dir`; ``lesson``: a key of
    :data:`rag_metrics.lesson.course.COURSE`, :class:`InputError` for another)."""

    def __init__(self, folder: str | os.PathLike[str], lesson: str = FIRST_LESSON) -> None:
        from rag_metrics.lesson.course import lesson as _lesson

        self.folder = Path(folder)
        self.lesson = lesson
        self.steps: tuple[Step, ...] = _lesson(lesson).steps
        self.path = self.folder / LESSON_DIR / progress_file(lesson)
        self.problem: str | None = None

    def __repr__(self) -> str:
        return f"ProgressStore({str(self.path)!r})"

    def load(self) -> Progress:
        """The saved progress, or a fresh one (see :attr:`problem` for why, when the file was bad)."""
        self.problem = None
        try:
            if self.path.stat().st_size > MAX_PROGRESS_BYTES:
                self.problem = f"{self.path.name} is over {MAX_PROGRESS_BYTES:,} bytes; starting afresh"
                return Progress()
            data = self.path.read_bytes()
        except FileNotFoundError:
            return Progress()
        except OSError as e:
            self.problem = f"cannot read {self.path.name} ({e.strerror})"
            return Progress()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.problem = f"{self.path.name} is not UTF-8"
            return Progress()
        progress, msg = Progress.from_json(text, self.steps)
        self.problem = f"{self.path.name}: {msg}" if msg else None
        return progress

    def generation(self) -> versions.Change:
        """The teacher's last change of this progress (generation 0: none)."""
        return versions.current(self.folder, versions.PROGRESS)

    def load_versioned(self) -> tuple[Progress, int]:
        """``(progress, generation)``: the generation is read first, then the file (a reset in between
        makes the next save refused once, never lets it through)."""
        generation = versions.current(self.folder, versions.PROGRESS, fresh=True).generation
        return self.load(), generation

    def save(self, progress: Progress, generation: int | None = None) -> versions.Change | None:
        """Write atomically (never a half-written file).

        With ``generation`` (what the session loaded, :meth:`load_versioned`) the write is a
        compare-and-swap under the file's lock: when the teacher changed the progress since, nothing
        is written and the teacher's :class:`~rag_metrics.workspace.versions.Change` is returned (load
        again).  ``None``: saved."""
        with locked(self.path):
            if generation is not None:
                newer = versions.newer(self.folder, versions.PROGRESS, generation)
                if newer is not None:
                    return newer
            atomic_write_text(self.path, progress.to_json() + "\n")
        return None

    def reset(self) -> versions.Change | None:
        """Start the lesson afresh in this space (the teacher's reset: a versioned change).  The file is
        removed (kept with only the language when that is not English).  Returns the change, or
        ``None`` when there was nothing to reset (no file: nothing written, a new seat stays empty)."""
        if not self.path.exists():  # before the lock, which would make the folder
            return None
        with locked(self.path):
            if not self.path.exists():
                return None
            language = self.load().language
            if language != "en":
                atomic_write_text(self.path, Progress(language=language).to_json() + "\n")
            else:
                self.path.unlink(missing_ok=True)
            return versions.record(self.folder, versions.PROGRESS, "reset")


def store_for_space(space: str, root: str | os.PathLike[str] | None = None, lesson: str = FIRST_LESSON
                    ) -> ProgressStore:
    """The progress store of lesson ``lesson`` in a workspace space (:func:`rag_metrics.workspace.store.space_dir`)."""
    from rag_metrics.workspace.store import space_dir

    return ProgressStore(space_dir(space, root), lesson)
