"""A golden-set import is refused on its size before it is parsed (issue 27): bytes and a count of
its questions, parsed up to the budget plus one (issue 50), the same check for every import path."""
from __future__ import annotations

import pytest

from rag_metrics.authoring import golden_edit
from rag_metrics.authoring.golden_edit import MAX_IMPORT_BYTES, count_questions, import_golden, import_size_problem
from rag_metrics.io import golden as golden_io
from rag_metrics.io.golden import golden_to_text, parse_golden
from rag_metrics.types import GoldenQuery, GoldenSet

N = 30_000


def _flood(fmt: str) -> bytes:
    golden = GoldenSet(tuple(GoldenQuery(f"q{i}", f"question {i}?", "", {}, None) for i in range(N)))
    if fmt == "json":  # compact, as a script would write it
        import json

        data = json.dumps([{"id": q.id, "question": q.question} for q in golden], separators=(",", ":")).encode()
    elif fmt == "jsonl":
        data = "".join(f'{{"id":"{q.id}","question":"{q.question}"}}\n' for q in golden).encode()
    else:
        data = golden_to_text(golden, fmt).encode()
    assert len(data) <= MAX_IMPORT_BYTES  # within the bytes limit: only the count refuses it
    return data


@pytest.fixture
def no_parser(monkeypatch):
    def fail(*a, **k):
        raise AssertionError("parsed")

    monkeypatch.setattr(golden_io, "parse_golden", fail)
    monkeypatch.setattr(golden_edit, "golden_from_rows", fail)


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_a_30000_question_file_is_refused_and_never_parsed(fmt, no_parser):
    data = _flood(fmt)
    new, report = import_golden(data, f"flood.{fmt}", GoldenSet(()), max_questions=1000)
    assert new is None
    msg = str(report.problems[0])
    assert f"flood.{fmt}" in msg and "more than 1,000 questions" in msg  # counted up to the budget plus one
    assert "lab.budgets.golden_questions" in msg and "split the file" in msg


def test_bytes_over_the_limit_are_refused_first(no_parser):
    problem = import_size_problem(b"x" * (MAX_IMPORT_BYTES + 1), "huge.csv", None)
    assert problem.startswith("huge.csv: the file is") and f"{MAX_IMPORT_BYTES:,} bytes" in problem


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_the_count_is_what_the_parse_finds(fmt):
    from app_helpers import sample_golden

    golden = sample_golden()
    text = golden_to_text(golden, fmt)
    assert count_questions(text.encode(), f"g.{fmt}") == len(parse_golden(text, fmt)[0]) == len(golden)


def test_a_set_within_the_budget_is_imported():
    data = _flood("jsonl")[: 2000]
    data = data[: data.rfind(b"\n") + 1]
    new, report = import_golden(data, "small.jsonl", GoldenSet(()), max_questions=1000)
    assert new is not None and len(new) == data.count(b"\n"), report


def test_a_corpus_dropped_on_the_bring_page_is_not_counted_as_questions():
    docs = b"".join(b'{"id": "d%d", "text": "a document"}\n' % i for i in range(5000))
    assert import_size_problem(docs, "docs.jsonl", 10, max_bytes=None, role_known=False) is None
    assert import_size_problem(_flood("jsonl"), "g.jsonl", 10, max_bytes=None, role_known=False) is not None


def test_escaped_keys_and_compressed_files_are_counted_as_parsed(no_parser):
    import gzip

    escaped = b'{"questio\\u006e": "same?"}\n' * 2000  # parses as "question": the old byte count saw 0
    compressed = gzip.compress(b'{"question": "same?"}\n' * 16_000)  # about 100 bytes
    for data, name in ((escaped, "g.jsonl"), (compressed, "g.jsonl.gz")):
        problem = import_size_problem(data, name, 1000, max_bytes=None, role_known=False)
        assert problem is not None and "more than 1,000 questions" in problem, name


def test_the_count_stops_at_the_budget_plus_one(monkeypatch):
    from rag_metrics.io import files

    parsed: list[str] = []
    real = files.loads_json
    monkeypatch.setattr(files, "loads_json", lambda text, **k: parsed.append(text) or real(text, **k))
    data = b'{"question": "q"}\n' * 50_000
    assert count_questions(data, "g.jsonl", role_known=False, stop=11) == 11
    assert len(parsed) == 11
