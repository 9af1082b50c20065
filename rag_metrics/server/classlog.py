"""The class's log: every teacher sign-in (key, one-time link) and sign-out, every wrong guess and every
refusal, on the ``rag_metrics.class`` logger, with the client address and the outcome (never a key, a
code or a token).  :func:`configure` writes it to stderr of each app process of ``./lab class`` with
the time and level (before, its INFO lines went nowhere: Python's last-resort handler shows warnings
only, without a time).

>>> import io, logging
>>> out = io.StringIO(); h = configure(out)
>>> logging.getLogger(LOGGER).info("class: teacher sign-in from 10.0.0.5: signed in (teacher key)")
>>> import re; line = out.getvalue()
>>> bool(re.match(r"\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d,\\d{3} INFO rag_metrics.class: class: teacher", line))
True
>>> logging.getLogger(LOGGER).removeHandler(h)
"""
from __future__ import annotations

import logging
import sys
from typing import TextIO

__all__ = ["FORMAT", "LOGGER", "configure"]

LOGGER = "rag_metrics.class"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(stream: TextIO | None = None) -> logging.Handler:
    """Write the class's log (INFO and above) to ``stream`` (stderr), once per process."""
    log = logging.getLogger(LOGGER)
    for h in log.handlers:
        if getattr(h, "_lab_class_log", False) and stream is None:
            return h
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler._lab_class_log = True  # type: ignore[attr-defined]
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handler
