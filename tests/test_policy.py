"""The one policy place (issue 25/27): every feature asks rag_metrics.server.policy, configuration is read in
rag_metrics.config only, budgets are settings with defaults and clear errors."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag_metrics.config import SETTINGS, Budgets, class_mode_on, parse_budgets, parse_server_config, setting
from rag_metrics.errors import InputError
from rag_metrics.server.access import STUDENT, TEACHER, Caller, operator
from rag_metrics.server.budgets import RateLimiter, SpendLedger, client_address
from rag_metrics.server.policy import ACTIONS, allowed, budget_message, limit

pytestmark = pytest.mark.usefixtures("class_state_backend")  # files and PostgreSQL (issue 52)

ROOT = Path(__file__).resolve().parents[1]
STUDENT_1 = Caller(STUDENT, space="seat-a", seat="a")


def _sources() -> list[Path]:
    files = [*ROOT.glob("rag_metrics/**/*.py"), *ROOT.glob("ui/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    return [f for f in files if f.name != "server_config.py"]


def test_environment_is_read_in_one_module() -> None:
    reads = re.compile(r"os\.environ\.get\(|os\.environ\[|os\.getenv\(|environ\.get\(\"RAG_METRICS")
    offenders = [f"{f.relative_to(ROOT)}:{i}" for f in _sources()
                 for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if reads.search(line)]
    assert offenders == [], "read settings with rag_metrics.config.setting(): " + ", ".join(offenders)


def test_the_mode_is_not_reread_by_features() -> None:
    # workspace.class_mode() stays as a documented alias; no feature calls it or reads the mode itself
    calls = re.compile(r"(?<!def )\bclass_mode\(\)")
    offenders = [f"{f.relative_to(ROOT)}:{i}" for f in _sources()
                 for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if calls.search(line)]
    assert offenders == []


def test_every_rag_metrics_variable_is_a_setting() -> None:
    named = {m for f in _sources() for m in re.findall(r"\"(RAG_METRICS_[A-Z_]+)\"", f.read_text(encoding="utf-8"))}
    known = {s.env for s in SETTINGS.values()} | {"RAG_METRICS_NAMED_CONNECTION_KEY"}  # a ${VAR} name, not read
    assert named - known == set()


def test_settings_and_mode() -> None:
    assert setting("warm", {}) == "1"
    assert setting("workspace", {"RAG_METRICS_WORKSPACE": " /x "}) == "/x"
    assert class_mode_on([], {"RAG_METRICS_CLASS_MODE": "yes"}) and not class_mode_on([], {})
    assert class_mode_on(["--class-mode"], {})


@pytest.mark.parametrize(("action", "op", "teacher", "student"), [
    ("write-shared", True, True, False),
    ("manage-class", False, True, False),
    ("see-class", True, True, False),
    ("resolve-typed-secrets", True, False, False),
    ("any-host", True, False, False),
    ("any-folder", True, False, False),
    ("see-server-paths", True, False, False),
    ("choose-space", True, False, False),
    ("list-seats", False, True, True),
    ("take-seat", False, False, True),
    ("choose-judge", True, False, False),
    ("type-folder", True, False, False),
])
def test_allowed_table(action: str, op: bool, teacher: bool, student: bool) -> None:
    assert (allowed(operator(), action), allowed(Caller(TEACHER), action), allowed(STUDENT_1, action)) == \
        (op, teacher, student)


def test_spaces_and_unknown_actions() -> None:
    assert allowed(STUDENT_1, "write-space", "seat-a") and not allowed(STUDENT_1, "write-space", "shared")
    assert allowed(STUDENT_1, "read-space", "shared") and not allowed(STUDENT_1, "read-space", "seat-b")
    with pytest.raises(ValueError, match="unknown action"):
        allowed(operator(), "write-shraed")
    assert set(ACTIONS) >= {"write-shared", "manage-class"}


def test_budgets_bind_students_only() -> None:
    b = Budgets(golden_questions=10)
    assert limit(STUDENT_1, "golden_questions", b) == 10
    assert limit(Caller(TEACHER), "golden_questions", b) is None and limit(operator(), "golden_questions", b) is None
    assert limit(Caller(TEACHER), "judge_confirm_over", b) == b.judge_confirm_over  # class mode: everyone confirms
    assert limit(operator(), "judge_confirm_over", b) is None  # single user: the operator's own judge
    msg = budget_message(STUDENT_1, "golden_questions", b, 30_000, "questions")
    assert msg is not None and "30,000 questions" in msg and "lab.budgets.golden_questions" in msg
    assert budget_message(STUDENT_1, "golden_questions", b, 10, "questions") is None


def test_budgets_from_config() -> None:
    cfg = parse_server_config({"lab": {"budgets": {"judge_calls_per_seat": 50}}}, "lab.toml", env={})
    assert cfg.budgets.judge_calls_per_seat == 50 and cfg.budgets.golden_questions == Budgets().golden_questions
    with pytest.raises(InputError, match="lab.budgets.judge_calls is not a budget"):
        parse_budgets({"judge_calls": 5}, "lab.toml")
    with pytest.raises(InputError, match="lab.budgets.workers"):
        parse_budgets({"workers": 0}, "lab.toml")


def test_rate_limiter_is_shared_through_the_file(tmp_path: Path) -> None:
    a, b = RateLimiter(tmp_path), RateLimiter(tmp_path)  # two processes' views of one class
    assert a.hit("k", 2, 60, now=0) and b.hit("k", 2, 60, now=1)
    assert not a.hit("k", 2, 60, now=2) and a.full("k", 2, 60, now=2)
    assert a.wait("k", 60, now=2) == pytest.approx(58)
    assert b.hit("k", 2, 60, now=61)


def test_spend_ledger(tmp_path: Path) -> None:
    led = SpendLedger(tmp_path)
    led.add("s1", 2, 300)
    led.add("s2", 1, 10)
    assert led.all() == {"s1": (2, 300), "s2": (1, 10)}
    led.reset("s1")
    assert led.spent("s1") == (0, 0)


def test_client_address_trusts_only_the_local_proxy() -> None:
    assert client_address("127.0.0.1", "1.2.3.4, 10.0.0.9") == "10.0.0.9"
    assert client_address("10.0.0.9", "6.6.6.6") == "10.0.0.9"  # a browser's own header is ignored
    assert client_address(None, "10.0.0.7") == "10.0.0.7"  # Streamlit: no peer address on loopback
    assert client_address(None, None) == "127.0.0.1"


def test_the_class_day_docs_list_every_setting():
    text = (ROOT / "docs" / "class-day.md").read_text(encoding="utf-8")
    assert [s.env for s in SETTINGS.values() if f"`{s.env}`" not in text] == []
    assert all(f"`{name}`" in text for name, _ in Budgets().rows())


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "json"])
def test_a_golden_import_over_the_seat_budget_is_refused_before_its_rows_are_parsed(fmt, monkeypatch) -> None:
    """Issue 27: a 2 MB import of 30,000 questions cost minutes; the budget is checked on a row count."""
    import json

    from rag_metrics.authoring import golden_edit
    from rag_metrics.io import golden as golden_io
    from rag_metrics.types import GoldenSet

    rows = [{"question": f"q {i}?", "relevant": "c1"} for i in range(30_000)]
    text = {"jsonl": "\n".join(json.dumps(r) for r in rows),
            "csv": "question,relevant\n" + "\n".join(f"{r['question']},{r['relevant']}" for r in rows),
            "json": json.dumps(rows)}[fmt]

    def parse(*a, **k):
        raise AssertionError("the rows were parsed")
    monkeypatch.setattr(golden_io, "parse_golden", parse)
    new, rep = golden_edit.import_golden(text.encode(), f"big.{fmt}", GoldenSet(()), max_questions=1000)
    assert new is None
    assert "more than 1,000 questions, over this seat's budget of 1,000" in rep.problems[0].message
    assert "lab.budgets.golden_questions" in rep.problems[0].message
    monkeypatch.undo()
    small, rep = golden_edit.import_golden(b"question,relevant\nq?,c1\n", "s.csv", GoldenSet(()),
                                           max_questions=1)
    assert small is not None and len(small) == 1, rep.summary()
