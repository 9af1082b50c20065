"""Parsing that can still be costly runs in a worker with a memory limit, killed when its session ends
(issue 50): the Bring page's reader in class mode (:mod:`rag_metrics.worker`)."""
from __future__ import annotations

import gzip
import multiprocessing
import os
import time

import pytest

from rag_metrics.errors import InputError
from rag_metrics.worker import Cancelled, describe_within, run_limited


def test_a_parse_over_the_worker_s_memory_ends_in_the_worker_with_a_clear_message():
    with pytest.raises(InputError, match=r"big\.jsonl: reading it needs more than 256 MB of memory"):
        run_limited(bytearray, 2**31, what="big.jsonl", memory_mb=256)  # 2 GB asked for in the worker
    assert run_limited(os.getpid) != os.getpid()


def test_the_worker_is_killed_when_the_session_ends():
    with pytest.raises(Cancelled):
        run_limited(time.sleep, 600, cancelled=lambda: True)
    assert not multiprocessing.active_children()


def test_the_worker_reads_within_the_caller_s_budget():
    data = b'{"question": "q?", "contexts": ["a"], "answer": "x"}\n' * 3
    assert "3 questions" in run_limited(describe_within, data, "log.jsonl", 1 << 20).summary
    with pytest.raises(InputError, match=r"log\.jsonl\.gz: the gzip file's content is over the limit of 1,048,576"):
        run_limited(describe_within, gzip.compress(b"a" * (2 << 20)), "log.jsonl.gz", 1 << 20)
