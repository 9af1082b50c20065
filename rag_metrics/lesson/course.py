"""The course: four lessons, one framework (issue 49).  No streamlit here.

A :class:`Lesson` is data, like lesson 2 always was: its steps and tasks (the records of
:mod:`rag_metrics.lesson.steps`), its quiz, its texts (English and Danish, merged into
:data:`rag_metrics.lesson.texts.TEXTS`) and the names of its code exercises
(:mod:`rag_metrics.exercises.catalogue`).  :data:`COURSE` holds the lessons in the course's order:

1. ``why``         why evaluation matters in RAG         (:mod:`rag_metrics.lesson.why`)
2. ``retrieval``   retrieval metrics: hit rate, MRR, NDCG (:mod:`rag_metrics.lesson.steps`, the lab's first lesson)
3. ``generation``  generation metrics: faithfulness, answer relevancy (:mod:`rag_metrics.lesson.generation`)
4. ``system``      an automated evaluation system        (:mod:`rag_metrics.lesson.system`)

Each lesson other than 2 is its own module exporting ``LESSON: Lesson``; a lesson whose module is not
there is left out (no placeholder).  Text keys are unique across the course (lessons 1, 3 and 4 prefix
their keys ``l1_``, ``l3_``, ``l4_``; ``lesson.<key>.title|intro`` name each lesson): merging a key twice
raises at import.

>>> [x.key for x in COURSE if x.number == 2], lesson("retrieval").steps[0].key
(['retrieval'], 'why')
>>> from rag_metrics.lesson.texts import text
>>> text("lesson.retrieval.title", "da")
'Retrieval-mål: hit rate, MRR og NDCG'
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from rag_metrics.errors import InputError
from rag_metrics.lesson import steps as _steps
from rag_metrics.lesson.steps import Step, Task
from rag_metrics.lesson.texts import LANGUAGES, TEXTS

__all__ = ["COURSE", "LESSON_KEYS", "Lesson", "RETRIEVAL", "lesson", "lesson_of_exercise", "merge_texts"]

#: Every lesson of the course, in order (a lesson whose module is absent is not in :data:`COURSE`).
LESSON_KEYS = ("why", "retrieval", "generation", "system")


@dataclass(frozen=True)
class Lesson:
    """One lesson of the course.

    ``key``: ``"why"`` (1), ``"retrieval"`` (2), ``"generation"`` (3), ``"system"`` (4); ``steps``: the path,
    in order (:class:`~rag_metrics.lesson.steps.Step` records, the same as lesson 2's); ``quiz``: the quiz's
    tasks (also the tasks of a step, usually the last); ``texts``: text key -> ``(en, da)``, merged into
    :data:`~rag_metrics.lesson.texts.TEXTS` (``lesson.<key>.title`` and ``lesson.<key>.intro`` among them);
    ``exercises``: the names of the lesson's code exercises, in order."""

    key: str
    number: int
    steps: tuple[Step, ...]
    quiz: tuple[Task, ...] = ()
    texts: Mapping[str, tuple[str, str]] = field(default_factory=lambda: MappingProxyType({}))
    exercises: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """The text key of the lesson's title."""
        return f"lesson.{self.key}.title"

    @property
    def intro(self) -> str:
        """The text key of the lesson's one-paragraph introduction."""
        return f"lesson.{self.key}.intro"

    @property
    def tasks(self) -> dict[str, Task]:
        """Every task of the lesson by key."""
        return {t.key: t for s in self.steps for t in s.tasks}

    def step_index(self, key: str) -> int:
        """The 0-based index of step ``key`` (:class:`InputError` for an unknown one)."""
        for i, s in enumerate(self.steps):
            if s.key == key:
                return i
        raise InputError(f"lesson {self.key!r} has no step {key!r}; steps: {', '.join(s.key for s in self.steps)}")


_RETRIEVAL_TEXTS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "lesson.retrieval.title": ("Retrieval metrics: hit rate, MRR and NDCG", "Retrieval-mål: hit rate, MRR og NDCG"),
    "lesson.retrieval.intro": (
        "Does the retriever find the right chunks, and does it rank them near the top? Hit rate, MRR, precision, "
        "recall and NDCG on your corpus and system, step by step.",
        "Finder retrieveren de rigtige chunks, og placerer den dem tæt på toppen? Hit rate, MRR, precision, "
        "recall og NDCG på dit korpus og system, trin for trin."),
})

#: The names of lesson 2's code exercises, in order (``Exercise.lesson == "retrieval"``; a test checks the two agree).
_RETRIEVAL_EXERCISES = ("hit_rate_at_k", "mean_reciprocal_rank", "precision_at_k", "ndcg_at_k", "recall_at_k",
                        "evaluate_by_category", "analyze_failures")

#: Lesson 2, the lab's first lesson: its steps, quiz and texts unchanged.
RETRIEVAL = Lesson("retrieval", 2, _steps.STEPS, _steps.QUIZ, _RETRIEVAL_TEXTS, _RETRIEVAL_EXERCISES)


def merge_texts(texts: Mapping[str, tuple[str, str]], owner: str) -> None:
    """Add ``texts`` (key -> ``(en, da)``) to :data:`~rag_metrics.lesson.texts.TEXTS`; a key that is already
    there with another text raises :class:`InputError` (keys are unique across the course)."""
    for key, pair in texts.items():
        if not isinstance(pair, tuple) or len(pair) != len(LANGUAGES):
            raise InputError(f"lesson {owner!r}: text {key!r} must be a pair (English, Danish)")
        row = dict(zip(LANGUAGES, pair))
        if key in TEXTS and TEXTS[key] != row:
            raise InputError(f"lesson {owner!r}: text key {key!r} is used by another lesson; prefix the key "
                             f"(l1_, l3_, l4_) to make it unique")
        TEXTS[key] = row


def _load(name: str) -> Lesson | None:
    """The ``LESSON`` of module ``rag_metrics.lesson.<name>``, ``None`` when that module does not exist (any
    other error, including an import error inside the module, is raised)."""
    module = f"rag_metrics.lesson.{name}"
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name == module:
            return None
        raise
    found = getattr(mod, "LESSON", None)
    if not isinstance(found, Lesson):
        raise InputError(f"{module} must define LESSON, a rag_metrics.lesson.course.Lesson")
    return found


def _course() -> tuple[Lesson, ...]:
    lessons = [RETRIEVAL]
    for name in ("why", "generation", "system"):
        found = _load(name)
        if found is not None:
            lessons.append(found)
    lessons.sort(key=lambda x: x.number)
    keys = [x.key for x in lessons]
    if len(set(keys)) != len(keys) or len({x.number for x in lessons}) != len(lessons):
        raise InputError(f"the course's lessons must have distinct keys and numbers: {keys}")
    for x in lessons:
        merge_texts(x.texts, x.key)
    return tuple(lessons)


#: The lessons in the course's order (1..4; only those whose module exists).
COURSE: tuple[Lesson, ...] = _course()


def lesson(key: str) -> Lesson:
    """The lesson ``key``; :class:`InputError` naming the course's lessons otherwise."""
    for x in COURSE:
        if x.key == key:
            return x
    raise InputError(f"the course has no lesson {str(key)[:80]!r}; lessons: {', '.join(x.key for x in COURSE)}")


def lesson_of_exercise(name: str) -> Lesson | None:
    """The lesson whose ``exercises`` name exercise ``name`` (``None``: no lesson lists it)."""
    return next((x for x in COURSE if name in x.exercises), None)
