"""The tutor (issue 48): grounded in the course's own texts, found with the lab's own retriever.

- :mod:`rag_metrics.tutor.passages`  the course's passages (lessons, exercises, docs), stable ids, app links
- :mod:`rag_metrics.tutor.retrieve`  :class:`~rag_metrics.tutor.retrieve.TutorIndex`: one index per language,
  ``search(question, k, where=...)``

Importing this package is light: the retriever is built on the first ``TutorIndex``.  No streamlit here.
"""
from __future__ import annotations

from rag_metrics.tutor.passages import Passage, course_passages
from rag_metrics.tutor.retrieve import TutorIndex

__all__ = ["Passage", "TutorIndex", "course_passages"]
