"""The exercise attempts kept in a student's space (issue 26): counted, the code kept as text (never
run), bad files read as a fresh start with a reason, names that could leave the folder refused, and
the teacher's table over the class."""
from __future__ import annotations

import threading

import pytest

from rag_metrics.errors import InputError
from rag_metrics.exercises import EXERCISES
from rag_metrics.exercises.attempts import (
    COLUMNS,
    MAX_CODE_CHARS,
    MAX_FILE_BYTES,
    AttemptStore,
    class_attempts,
    store_for_space,
)


def test_runs_are_counted_and_the_best_and_solved_are_kept(tmp_path):
    store = AttemptStore(tmp_path)
    assert store.load("hit_rate_at_k").attempts == 0 and store.problem is None
    store.record("hit_rate_at_k", "a", passed=3, total=8)
    store.record("hit_rate_at_k", "b", passed=8, total=8)
    a = store.record("hit_rate_at_k", "c = '<script>'", passed=2, total=8)
    assert (a.attempts, a.passed, a.total, a.best, a.solved) == (3, 2, 8, 8, True)
    again = AttemptStore(tmp_path).load("hit_rate_at_k")
    assert again == a and again.code == "c = '<script>'"
    assert (tmp_path / "exercises" / "hit_rate_at_k.json").is_file()
    assert AttemptStore(tmp_path).load("recall_at_k").attempts == 0  # one file per exercise


@pytest.mark.parametrize("name", ["../escape", "a/b", "", "X", "hit rate", "a" * 100, "..", "é"])
def test_names_that_are_not_plain_identifiers_are_refused(tmp_path, name):
    with pytest.raises(InputError, match="exercise name"):
        AttemptStore(tmp_path).record(name, "x", passed=0, total=1)
    assert not any(tmp_path.rglob("*.json"))


def test_code_longer_than_the_limit_is_refused(tmp_path):
    store = AttemptStore(tmp_path)
    with pytest.raises(InputError, match="limit"):
        store.record("hit_rate_at_k", "x" * (MAX_CODE_CHARS + 1), passed=0, total=1)
    assert store.load("hit_rate_at_k").attempts == 0


@pytest.mark.parametrize("content,reason", [
    (b"{not json", "hit_rate_at_k.json"),
    (b'{"format": "other"}', "not an exercise attempts file"),
    (b'{"format": "rag-metrics-exercise-attempts", "code": 5}', "code is not text"),
    (b"\xff\xfe", "not UTF-8"),
    (b" " * (MAX_FILE_BYTES + 1), "over"),
])
def test_a_bad_file_is_a_fresh_start_with_a_reason(tmp_path, content, reason):
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "hit_rate_at_k.json").write_bytes(content)
    store = AttemptStore(tmp_path)
    a = store.load("hit_rate_at_k")
    assert a.attempts == 0 and a.code == ""
    assert store.problem and reason in store.problem
    assert store.record("hit_rate_at_k", "ok", passed=1, total=2).attempts == 1  # and the next run starts afresh


def test_hostile_counts_in_a_file_are_read_as_zero(tmp_path):
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "hit_rate_at_k.json").write_text(
        '{"format": "rag-metrics-exercise-attempts", "code": "x", "attempts": -5, "passed": true, '
        '"total": 1e999, "best": "9", "solved": "yes"}')
    a = AttemptStore(tmp_path).load("hit_rate_at_k")
    assert (a.attempts, a.passed, a.total, a.best, a.solved) == (0, 0, 0, 0, False)


def test_two_tabs_running_at_once_lose_no_attempt(tmp_path):
    store = AttemptStore(tmp_path)

    def run():
        for _ in range(10):
            AttemptStore(tmp_path).record("precision_at_k", "x", passed=1, total=2)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.load("precision_at_k").attempts == 40


def test_the_teachers_table_has_one_row_per_seat_and_exercise_and_no_code(tmp_path):
    store_for_space("seat-a", tmp_path).record("hit_rate_at_k", "SECRET", passed=8, total=8)
    store_for_space("seat-b", tmp_path).record("recall_at_k", "x", passed=1, total=8)
    names = [e.name for e in EXERCISES]
    table = class_attempts([("Ann", "seat-a"), ("Bo", "seat-b")], names, tmp_path)
    assert list(table.columns) == COLUMNS and len(table) == 2 * len(names)
    assert "SECRET" not in table.to_csv()
    row = table[(table.seat == "Ann") & (table.exercise == "hit_rate_at_k")].iloc[0]
    assert (row.passed, row.total, row.attempts, bool(row.solved)) == (8, 8, 1, True)
    assert table[table.seat == "Bo"].attempts.sum() == 1
    assert class_attempts([], names, tmp_path).empty
