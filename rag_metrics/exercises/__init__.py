"""Write the metric yourself: code exercises on the lesson's functions (issue 26).  No streamlit here.

- :mod:`~rag_metrics.exercises.catalogue`   the exercises as data (:data:`EXERCISES`, :func:`exercise`)
- :mod:`~rag_metrics.exercises.checks`      the checks: current data + edge cases, expected from the engine
- :mod:`~rag_metrics.exercises.grading`     :func:`browser_payload`, :func:`grade`, :class:`Verdict`, ``HARNESS``
- :mod:`~rag_metrics.exercises.mistakes`    the typical mistakes a failing check is diagnosed with
- :mod:`~rag_metrics.exercises.reference`   reference solutions (server only, never in a payload)
- :mod:`~rag_metrics.exercises.runner`      the harness in a separate process (CLI and tests only)

The student's code runs in the student's browser (Pyodide) or, with ``rag-metrics exercise check``,
in a separate process on the user's own machine; the server only compares reported values.

>>> [e.name for e in EXERCISES][:3]
['hit_rate_at_k', 'mean_reciprocal_rank', 'precision_at_k']
"""
from __future__ import annotations

from rag_metrics.exercises.catalogue import EXERCISES, UI_TEXT, Exercise, exercise, exercises_for_step
from rag_metrics.exercises.checks import LESSON_OPTIONS, Check, build_checks, example_values, golden_dataset
from rag_metrics.exercises.grading import HARNESS, LIMITS, CheckResult, Verdict, browser_payload, grade

__all__ = ["EXERCISES", "UI_TEXT", "Exercise", "exercise", "exercises_for_step", "Check", "build_checks",
           "golden_dataset", "example_values", "LESSON_OPTIONS", "HARNESS", "LIMITS", "CheckResult", "Verdict",
           "browser_payload", "grade"]
