"""In a class, a file dropped on Bring your system is read in a worker process with a memory limit
(issue 50), under Streamlit's script runner (which installs the page script as ``__main__``)."""
from __future__ import annotations

import json
import os

from tests.test_app_class import klass  # noqa: F401 - a fixture
from tests.test_app_class_budgets import budgets  # noqa: F401 - a fixture


def test_a_dropped_log_is_read_in_the_worker(klass, budgets, monkeypatch):  # noqa: F811
    from app_helpers import no_exception
    from rag_metrics.io import worker

    budgets()
    pids: list[int] = []
    real = worker.run_limited
    monkeypatch.setattr(worker, "run_limited", lambda fn, *a, **k: pids.append(real(os.getpid)) or real(fn, *a, **k))
    at = klass.tab("s")
    at.switch_page("pages/bring_your_system.py").run()
    rows = [{"question": f"question {i}?", "contexts": ["a text"], "answer": "an answer"} for i in range(3)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    at.file_uploader(key="bring_files").set_value([("log.jsonl", data, "application/jsonl")]).run()
    no_exception(at)
    assert pids and pids[0] != os.getpid()
    said = [s.value.replace("\\", "") for s in at.success]
    assert any(s.startswith("log.jsonl: a RAG log") and "3 questions" in s for s in said), said


def test_an_answers_upload_is_read_in_the_worker(monkeypatch):
    from rag_metrics.answers.data import items_fingerprint, parse_answers
    from rag_metrics.io import worker
    from ui import cache_answers

    monkeypatch.setenv("RAG_METRICS_CLASS_MODE", "1")
    pids: list[int] = []
    real = worker.run_limited
    monkeypatch.setattr(worker, "run_limited", lambda fn, *a, **k: pids.append(real(os.getpid)) or real(fn, *a, **k))
    rows = [{"question": f"question {i}?", "contexts": ["a text"], "answer": f"answer {i}"} for i in range(3)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    items, _rep = cache_answers.answers_upload(data, "answers-worker.jsonl")
    assert pids and pids[0] != os.getpid()
    assert items_fingerprint(items) == items_fingerprint(parse_answers(data, "answers-worker.jsonl")[0])
