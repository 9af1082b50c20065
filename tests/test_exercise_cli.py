"""``rag-metrics exercise list|check`` as a user runs it (a subprocess): pass, fail with a hint, an
endless loop stopped, bad input, refused in class mode."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag_metrics.exercises import exercise

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if k != "RAG_METRICS_CLASS_MODE"}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "rag_metrics", "exercise", *args], cwd=ROOT, env=e,
                          capture_output=True, text=True, timeout=timeout)


def test_list_names_every_exercise():
    p = _cli("list")
    assert p.returncode == 0, p.stderr
    assert "1. hit_rate_at_k" in p.stdout and "4. ndcg_at_k (+ dcg_at_k, mean_ndcg_at_k)" in p.stdout
    assert "7. analyze_failures" in p.stdout
    assert "hit_rate_at_k: Hit rate@K (lesson 2, step 'hit_rate')" in p.stdout   # each exercise names its lesson


def test_the_lessons_code_passes(tmp_path):
    f = tmp_path / "mine.py"
    f.write_text(exercise("recall_at_k").lesson_code, encoding="utf-8")
    p = _cli("check", "recall_at_k", str(f))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Passed 8 of 8 checks" in p.stdout
    assert "Your mean 0.6510; the Dashboard's recall@5 (As in the lesson) 0.6510, the same 76 questions" in p.stdout


def test_a_wrong_solution_fails_with_its_input_and_a_hint_in_danish(tmp_path):
    f = tmp_path / "mine.py"
    f.write_text(exercise("precision_at_k").lesson_code.replace("n_relevant / k", "n_relevant / len(retrieved_ids)"),
                 encoding="utf-8")
    p = _cli("check", "precision_at_k", str(f), "--lang", "da")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Bestod 7 af 8 tjek" in p.stdout and "K = 10, større end de 3 resultater" in p.stdout
    assert "Første fejlede tjek" in p.stdout and "Tip:" in p.stdout and "Forventet" in p.stdout
    assert "Traceback" not in p.stdout + p.stderr


def test_a_syntax_error_names_the_line(tmp_path):
    f = tmp_path / "mine.py"
    f.write_text("def hit_rate_at_k(golden_dataset, retriever, k=5):\n    return (1\n", encoding="utf-8")
    p = _cli("check", "hit_rate_at_k", str(f))
    assert p.returncode == 1 and "Not checked" in p.stdout and "Passed" not in p.stdout
    assert p.stdout.count("syntax error on line 2") == 1 and "Traceback" not in p.stdout + p.stderr


def test_an_endless_loop_is_stopped(tmp_path):
    f = tmp_path / "loop.py"
    f.write_text("def hit_rate_at_k(golden_dataset, retriever, k=5):\n    while True:\n        pass\n",
                 encoding="utf-8")
    p = _cli("check", "hit_rate_at_k", str(f), "--timeout", "2")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "stopped" in p.stdout and "endless loop" in p.stdout and "Not checked" in p.stdout
    assert "Passed" not in p.stdout


@pytest.mark.parametrize("args,message", [
    (("check", "nope", "x.py"), "unknown exercise 'nope'"),
    (("check", "hit_rate_at_k", "/no/such/file.py"), "file not found"),
    (("check", "hit_rate_at_k", "README.md", "--timeout", "-1"), "--timeout"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    p = _cli(*args)
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr


def test_refused_in_class_mode(tmp_path):
    f = tmp_path / "mine.py"
    f.write_text(exercise("hit_rate_at_k").lesson_code, encoding="utf-8")
    p = _cli("check", "hit_rate_at_k", str(f), env={"RAG_METRICS_CLASS_MODE": "1"})
    assert p.returncode == 2 and "class server" in p.stderr and "Passed" not in p.stdout


def test_a_golden_set_that_does_not_fit_the_corpus_is_named(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Hello\n\nSome text about nothing at all.\n", encoding="utf-8")
    f = tmp_path / "mine.py"
    f.write_text(exercise("hit_rate_at_k").lesson_code, encoding="utf-8")
    p = _cli("check", "hit_rate_at_k", str(f), "--corpus", str(tmp_path / "docs"), "--retriever", "bm25")
    assert p.returncode == 2 and "none of its labels names a chunk or document" in p.stderr
