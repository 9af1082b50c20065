"""The course the lab teaches, as data and pure checks (no streamlit here): four lessons
(:data:`COURSE`), lesson 2 (retrieval metrics) the lab's first.

- :mod:`rag_metrics.lesson.texts`     every text in English and Danish (``TEXTS``, :func:`text`)
- :mod:`rag_metrics.lesson.steps`     lesson 2's steps in order, their tasks and checks, the quiz
- :mod:`rag_metrics.lesson.course`    the course: its lessons (``COURSE``, :class:`Lesson`), lesson 2 among them
- :mod:`rag_metrics.lesson.progress`  a student's progress, saved per space (``ProgressStore``)
- :mod:`rag_metrics.lesson.teacher`   the teacher's view: the class table, CSV, reset, push the golden set

>>> from rag_metrics.lesson import STEPS, text
>>> [s.key for s in STEPS][:3], text("ui.check", "da")
(['why', 'hit_rate', 'mrr'], 'Tjek')
"""
from __future__ import annotations

from rag_metrics.lesson.progress import Progress, ProgressStore, store_for_space
from rag_metrics.lesson.steps import NONE, QUIZ, STEPS, TASKS, LessonContext, Step, Task, check, choices
from rag_metrics.lesson.texts import LANGUAGES, TEXTS, teacher_change_text, text

# last: the lesson modules (rag_metrics.lesson.why, ...) import Lesson from course while it loads them
from rag_metrics.lesson.course import COURSE, Lesson  # isort: skip

__all__ = ["COURSE", "LANGUAGES", "Lesson", "NONE", "QUIZ", "STEPS", "TASKS", "TEXTS", "LessonContext", "Progress",
           "ProgressStore", "Step", "Task", "check", "choices", "store_for_space", "teacher_change_text", "text"]
