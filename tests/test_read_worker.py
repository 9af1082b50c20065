"""Parsing that can still be costly runs in a worker with a memory limit, killed when its session ends
(issue 50): the Bring page's reader in class mode (:mod:`rag_metrics.io.worker`)."""
from __future__ import annotations

import gzip
import multiprocessing
import os
import time

import pytest

from rag_metrics.errors import InputError
from rag_metrics.formats import describe_bytes
from rag_metrics.io.worker import Cancelled, run_limited, within


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
    assert "3 questions" in run_limited(within, 1 << 20, describe_bytes, data, "log.jsonl").summary
    with pytest.raises(InputError, match=r"log\.jsonl\.gz: the gzip file's content is over the limit of 1,048,576"):
        run_limited(within, 1 << 20, describe_bytes, gzip.compress(b"a" * (2 << 20)), "log.jsonl.gz")


def test_a_sweep_json_reads_in_the_worker_as_in_the_page():
    import json

    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.io.golden import load_golden
    from rag_metrics.sample import sample_paths
    from rag_metrics.tuning import grid_from_choices, run_sweep
    from rag_metrics.tuning.store import read_sweep_upload, sweep_to_dict

    p = sample_paths()
    res = run_sweep(grid_from_choices(chunk_sizes=[500], chunk_overlap=100, kinds=["bm25"]),
                    load_corpus(str(p.docs)), load_golden(p.root / "golden_evidence.jsonl"))
    data = gzip.compress(json.dumps(sweep_to_dict(res)).encode())
    back = run_limited(within, 1 << 20, read_sweep_upload, data, "sweep.json.gz")
    assert sweep_to_dict(back) == sweep_to_dict(read_sweep_upload(data, "sweep.json.gz"))


def test_the_worker_never_runs_the_page_script_streamlit_installs_as_main(tmp_path, monkeypatch):
    import sys
    import types

    marker = tmp_path / "ran"
    page = tmp_path / "page.py"
    page.write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit('the page ran in the worker')\n")
    fake = types.ModuleType("__main__")  # as Streamlit's script runner does for every run
    fake.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", fake)
    assert run_limited(os.getpid) != os.getpid()
    assert not marker.exists()
