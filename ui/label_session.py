"""The labelling queue of each corpus, kept in the session: shared by the Label and the Draft views."""
from __future__ import annotations

from rag_metrics.authoring.label_queue import LabelQueue
from ui import session
from ui.keys import LABEL_QUEUE as QUEUE


def queue(corpus: str, golden) -> LabelQueue:
    """The corpus's labelling queue, following edits made elsewhere (editor, import, other pages)."""
    queues = session.default(QUEUE, {})
    q = queues.get(corpus)
    if q is None:
        q = LabelQueue.from_golden(golden)
        queues[corpus] = q
    else:
        q.sync(golden)
    return q
