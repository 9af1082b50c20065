"""Run the harness on a local file in a separate process (the CLI and the tests; never the app).

``python -I`` (isolated: no user site, no ``PYTHONPATH``, not the current folder) reads
``{"code", "payload"}`` on stdin and writes the harness's JSON report on stdout.  The process is
killed after ``timeout`` seconds, and at most ``max_output`` characters of its output are kept.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import IO, Any

from rag_metrics.exercises.grading import HARNESS, LIMITS
from rag_metrics.exercises.harness_source import STDIN_FLAG

__all__ = ["run_harness", "TimedOut", "REPORT_LIMIT"]

#: Characters of the process's output kept (the report; the student's prints are capped inside).
REPORT_LIMIT = 2_000_000


class TimedOut(Exception):
    """The student's code ran longer than the time limit."""


def _drain(stream: IO[bytes], keep: list[bytes], limit: int) -> None:
    size = 0
    while True:
        block = stream.read(65536)
        if not block:
            return
        if size < limit:
            keep.append(block[:limit - size])
            size += len(keep[-1])


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - not POSIX
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


def run_harness(code: str, payload: Mapping[str, Any], *, timeout: float | None = None,
                max_output: int = REPORT_LIMIT) -> str:
    """The harness's JSON report for ``code`` on ``payload`` (from :func:`browser_payload`).

    Raises :class:`TimedOut` when the code runs longer than ``timeout`` seconds (default
    ``LIMITS["timeout_s"]``).  A crash of the process itself comes back as a report with an error.
    """
    timeout = float(LIMITS["timeout_s"] if timeout is None else timeout)
    request = json.dumps({"code": code, "payload": json.dumps(payload)}).encode("utf-8")
    proc = subprocess.Popen([sys.executable, "-I", "-c", HARNESS, STDIN_FLAG], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [threading.Thread(target=_drain, args=(proc.stdout, out, max_output), daemon=True),
               threading.Thread(target=_drain, args=(proc.stderr, err, 4000), daemon=True)]
    for t in readers:
        t.start()
    try:
        assert proc.stdin is not None
        proc.stdin.write(request)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.wait()
        raise TimedOut(f"stopped after {timeout:g} s") from None
    finally:
        _kill(proc)  # anything the code started in its session
        for t in readers:
            t.join(timeout=2)
    text = b"".join(out).decode("utf-8", "replace")
    if proc.returncode != 0 or not text.strip():
        tail = b"".join(err).decode("utf-8", "replace").strip().splitlines()
        why = tail[-1] if tail else f"exit code {proc.returncode}"
        return json.dumps({"ok": False, "results": {}, "stdout": "",
                           "error": {"kind": "exception", "line": None, "message": f"the run stopped: {why}"}})
    return text
