"""Class-day budgets in the app (issue 27): new seats per address, guesses per address and for the
whole server (logged), the teacher's browser never a seat.  Browsers are cookie jars (see
tests/test_app_class.py); the budgets come from the operator's [lab.budgets]."""
from __future__ import annotations

import logging

import pytest

from tests.test_app_class import KEY, caller_of, klass, shown_text, sign_in  # noqa: F401 - klass is a fixture


@pytest.fixture
def budgets(tmp_path, monkeypatch):
    def set_budgets(**values: int) -> None:
        conf = tmp_path / "lab.toml"
        conf.write_text("[lab.budgets]\n" + "".join(f"{k} = {v}\n" for k, v in values.items()), encoding="utf-8")
        monkeypatch.setenv("RAG_METRICS_CONFIG", str(conf))
    return set_budgets


def test_one_address_cannot_fill_the_class_with_seats(klass, budgets, caplog):  # noqa: F811
    budgets(seats_per_address=2)
    with caplog.at_level(logging.WARNING, logger="rag_metrics.class"):
        tabs = [klass.tab(f"script{i}") for i in range(3)]  # three cookieless sessions from one address
    assert len(klass.registry) == 2
    assert "_identity_caller" not in tabs[2].session_state
    assert "made 2 seats" in shown_text(tabs[2])
    assert any("new seat refused" in r.getMessage() for r in caplog.records)
    assert caller_of(klass.tab("script0")).role == "student"  # a browser with its cookie keeps its seat


def test_teacher_key_guessing_is_limited_across_sessions_and_logged(klass, budgets, caplog):  # noqa: F811
    budgets(guesses_per_address=3)
    with caplog.at_level(logging.WARNING, logger="rag_metrics.class"):
        for i in range(3):  # a fresh session per guess: the per-session lockout alone never triggers
            sign_in(klass.tab("t"), f"wrong guess number {i}")
        at = sign_in(klass.tab("t"), KEY)
    assert caller_of(at).role == "student"
    assert "Too many wrong teacher keys from this network address" in shown_text(at)
    assert sum("wrong teacher key" in r.getMessage() for r in caplog.records) == 3
    assert any("teacher key refused" in r.getMessage() for r in caplog.records)


def test_rejoin_code_guessing_is_limited_for_the_whole_server(klass, budgets):  # noqa: F811
    budgets(guesses_per_server=2)
    for i in range(3):
        at = klass.tab(f"b{i}")
        at.text_input(key="identity_rejoin_code").input("AAAA BBBB CCCC DDDD EEEE").run()
        at.button(key="identity_rejoin").click().run()
    assert "Too many wrong rejoin codes from the class" in shown_text(at)


def test_the_teachers_browser_is_never_a_seat(klass, budgets):  # noqa: F811
    budgets()
    at = sign_in(klass.tab("teacher"), KEY)
    klass.tab("student")
    assert caller_of(at).role == "teacher"
    assert len(klass.registry) == 1  # the student only: not counted on the roster, the CSV or a push
