"""Issue 26 gaps: the exercise draft is kept as the student types (not only on Run), and the teacher's CSV
of class progress has per-exercise passed / attempts columns, neutralised like every other cell."""
from __future__ import annotations

import csv
import io

import pytest

from rag_metrics.errors import InputError
from rag_metrics.exercises import EXERCISES
from rag_metrics.exercises.attempts import MAX_CODE_CHARS, AttemptStore, store_for_space
from rag_metrics.lesson import teacher

NAME = "hit_rate_at_k"


def test_a_draft_is_kept_without_counting_a_run_and_a_run_replaces_it(tmp_path):
    store = AttemptStore(tmp_path)
    a = store.save_draft(NAME, "def hit_rate_at_k(golden_dataset, retriever, k):\n    hits = ")
    assert (a.attempts, a.code, a.draft != "", a.drafted != "") == (0, "", True, True)
    again = AttemptStore(tmp_path).load(NAME)
    assert again.current_code == a.draft and again.attempts == 0
    run = store.record(NAME, "def hit_rate_at_k(g, r, k):\n    return 1.0\n", passed=2, total=9)
    assert run.draft == "" and run.current_code == run.code and run.attempts == 1
    store.save_draft(NAME, "x = 1")
    assert store.load(NAME).current_code == "x = 1" and store.load(NAME).code == run.code
    store.save_draft(NAME, "")  # forgotten: the last run's code again
    assert store.load(NAME).current_code == run.code


def test_a_draft_is_size_capped_and_nothing_is_written_for_nothing(tmp_path):
    store = AttemptStore(tmp_path)
    with pytest.raises(InputError, match="limit"):
        store.save_draft(NAME, "x" * (MAX_CODE_CHARS + 1))
    assert not store.path(NAME).exists()
    store.save_draft(NAME, "")  # no draft, no record: no file
    assert not store.path(NAME).exists()
    with pytest.raises(InputError):
        store.save_draft("../../etc/passwd", "x")  # only exercise names make file names
    store.save_draft(NAME, "y")
    mtime = store.path(NAME).stat().st_mtime_ns
    store.save_draft(NAME, "y")  # unchanged: not rewritten
    assert store.path(NAME).stat().st_mtime_ns == mtime


def test_an_old_file_without_a_draft_still_reads(tmp_path):
    store = AttemptStore(tmp_path)
    store.path(NAME).parent.mkdir(parents=True)
    store.path(NAME).write_text('{"format": "rag-metrics-exercise-attempts", "version": 1, "exercise": "hit_rate_at_k",'
                                ' "code": "c", "attempts": 2, "passed": 1, "total": 9, "best": 1, "solved": false,'
                                ' "updated": "t"}', encoding="utf-8")
    a = store.load(NAME)
    assert (a.code, a.draft, a.current_code, a.attempts, store.problem) == ("c", "", "c", 2, None)


def test_the_class_csv_has_passed_and_attempts_per_exercise(tmp_path):
    store_for_space("private-a", tmp_path).record(NAME, "code", passed=7, total=9)
    store_for_space("private-a", tmp_path).record(NAME, "code", passed=9, total=9)
    store_for_space("private-b", tmp_path).save_draft("precision_at_k", "a draft is not an attempt")
    seats = [("=HYPERLINK(\"http://evil\",\"x\")", "private-a"), ("-Bo", "private-b")]
    table = teacher.class_progress(seats, tmp_path)
    rows = list(csv.DictReader(io.StringIO(teacher.progress_csv(table))))
    header = list(rows[0])
    for e in EXERCISES:
        passed, runs = teacher.exercise_columns(e.name)
        assert passed in header and runs in header
    passed, runs = teacher.exercise_columns(NAME)
    assert (rows[0][passed], rows[0][runs]) == ("9", "2")
    assert (rows[1][passed], rows[1][runs]) == ("0", "0")
    p_passed, p_runs = teacher.exercise_columns("precision_at_k")
    assert (rows[1][p_passed], rows[1][p_runs]) == ("0", "0")
    assert rows[0]["seat"].startswith("'=") and rows[1]["seat"] == "'-Bo"  # the CSV-neutralising helper
    assert header.index(runs) < header.index("updated")  # before the bookkeeping columns
    assert "a draft is not an attempt" not in teacher.progress_csv(table)  # no code in the CSV
    assert teacher.class_progress([], tmp_path).columns.tolist()[-2:] == ["updated", "problem"]
