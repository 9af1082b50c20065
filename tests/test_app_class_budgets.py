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


@pytest.fixture
def waits(monkeypatch):
    """The seconds each wrong guess's answer waited (counted here instead of slept)."""
    from ui import class_budgets

    got: list[float] = []
    monkeypatch.setattr(class_budgets, "_sleep", got.append)
    return got


def test_wrong_keys_from_the_teachers_address_never_lock_the_teacher_out(klass, budgets, waits, caplog):  # noqa: F811
    budgets(guesses_per_address=3)
    with caplog.at_level(logging.INFO, logger="rag_metrics.class"):
        for i in range(10):  # ten wrong keys from the teacher's address (a classroom NAT), a fresh session each
            sign_in(klass.tab("t"), f"wrong guess number {i}")
        assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]  # slowed past the address's budget of 3
        at = sign_in(klass.tab("t"), KEY)  # issue 50: refused for 10 minutes, renewable forever
    assert caller_of(at).role == "teacher" and len(waits) == 7  # the right key signs in at once
    lines = [r.getMessage() for r in caplog.records]
    assert sum("wrong teacher key from" in m for m in lines) == 10
    assert any("teacher sign-in from" in m and "signed in (teacher key)" in m for m in lines)
    assert all(KEY not in m and "wrong guess number" not in m for m in lines)  # never a key, right or wrong


def test_sign_ins_and_sign_outs_are_logged(klass, budgets, caplog):  # noqa: F811
    budgets()
    with caplog.at_level(logging.INFO, logger="rag_metrics.class"):
        at = sign_in(klass.tab("t"), KEY)
        at.button(key="identity_sign_out").click().run()
    lines = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("class: teacher sign-in from 127.0.0.1: signed in") for m in lines)
    assert any(m.startswith("class: teacher sign-out from 127.0.0.1: signed out") for m in lines)


def test_rejoin_code_guessing_is_slowed_for_the_whole_server(klass, budgets, waits):  # noqa: F811
    budgets(guesses_per_server=2)
    for i in range(4):
        at = klass.tab(f"b{i}")
        at.text_input(key="identity_rejoin_code").input("AAAA BBBB CCCC DDDD EEEE").run()
        at.button(key="identity_rejoin").click().run()
    assert waits == [1.0, 2.0] and "answered slowly" in shown_text(at)


def test_the_teachers_browser_is_never_a_seat(klass, budgets):  # noqa: F811
    budgets()
    at = sign_in(klass.tab("teacher"), KEY)
    klass.tab("student")
    assert caller_of(at).role == "teacher"
    assert len(klass.registry) == 1  # the student only: not counted on the roster, the CSV or a push


def test_a_students_golden_import_is_bounded_by_the_seat_budget(klass, budgets):  # noqa: F811
    from app_helpers import goto, no_exception

    budgets(golden_questions=2)
    at = klass.tab("s")
    goto(at, "pages/golden_set.py")
    at.segmented_control(key="golden_view").set_value("io").run()
    rows = "".join(f"question number {i}?,factual,plans-and-pricing#0,3\n" for i in range(3))
    data = ("question,category,relevant_chunk_ids,grades\n" + rows).encode()
    at.file_uploader(key="golden_upload").set_value(("big.csv", data, "text/csv")).run()
    at.button(key="golden_import").click().run()
    no_exception(at)
    assert any("Import rejected" in e.value for e in at.error)
    assert "over this seat's budget of 2" in shown_text(at) or any(
        "over this seat's budget of 2" in str(d.value.to_string()) for d in at.dataframe)


def test_a_students_corpus_upload_is_bounded_by_the_seat_budget(klass, budgets):  # noqa: F811
    from app_helpers import load_corpus_files

    budgets(corpus_mb=1)
    at = load_corpus_files(klass.tab("s"), [("big.md", b"# Big\n\n" + b"word " * 300_000, "text/markdown")])
    assert any("lab.budgets.corpus_mb" in e.value for e in at.error), shown_text(at)


def test_judge_runs_are_budgeted_per_seat_and_shown_to_the_teacher(klass, budgets):  # noqa: F811
    from rag_metrics.server.budgets import SpendLedger

    budgets(judge_calls_per_seat=10)
    at = klass.tab("s")
    seat = at.session_state["_identity_seat"]
    SpendLedger(klass.root).add(seat, 7, 7000)  # what earlier runs of this seat spent
    at.session_state["golden_view"] = "judge"
    from app_helpers import goto

    goto(at, "pages/golden_set.py")
    assert "more than this seat has left (3 of 10" in shown_text(at)
    teacher = sign_in(klass.tab("t"), KEY)
    teacher.switch_page("pages/roster.py").run()
    df = teacher.dataframe[0].value
    assert df.set_index("name").loc[klass.registry.get(seat).name, "judge calls"] == 7


def test_the_class_page_shows_the_seat_proof_difficulty(klass, budgets):  # noqa: F811
    budgets(seat_proof_bits=12)
    klass.tab("s")
    teacher = sign_in(klass.tab("t"), KEY)
    teacher.switch_page("pages/roster.py").run()
    table = next(d.value for d in teacher.dataframe if "budget" in d.value.columns).set_index("budget")
    assert table.loc["seat_proof_bits", "value"] == 12
    assert "seat_proof_bits = 12: about 4,096 hashes" in shown_text(teacher)


def test_no_seat_until_the_browser_proves_itself(klass, budgets, caplog):  # noqa: F811
    """A cookieless session gets the challenge page and no seat; a forged, wrong or replayed answer
    makes none either; a valid answer makes exactly one (issue 27: proof of a real browser)."""
    import hashlib

    from rag_metrics.server.proof import PROOF_COOKIE, leading_zero_bits, solve

    budgets(seat_proof_bits=8)
    at = klass.tab("bot", prove=False)
    assert len(klass.registry) == 0 and "_identity_caller" not in at.session_state
    assert "Checking that this is a browser" in shown_text(at)
    assert at.text_input(key="identity_teacher_key") is not None  # sign-in and rejoin stay reachable
    assert at.text_input(key="identity_rejoin_code") is not None
    challenge = at.session_state["_identity_challenge"]
    wrong = next(f"{challenge}.{i}" for i in range(999)
                 if leading_zero_bits(hashlib.sha256(f"{challenge}.{i}".encode()).digest()) < 8)
    good = solve(challenge)
    forged = "1" + good[1:]  # claims an easier challenge: the MAC no longer matches
    with caplog.at_level(logging.WARNING, logger="rag_metrics.class"):
        for answer in (wrong, forged, "8.99.aa.bb.1"):
            klass.jars["bot"] = {PROOF_COOKIE: answer}
            assert "_identity_caller" not in klass.tab("bot", prove=False).session_state
            assert len(klass.registry) == 0
    assert sum("seat proof refused" in r.getMessage() for r in caplog.records) == 3
    klass.jars["bot"] = {PROOF_COOKIE: good}
    assert caller_of(klass.tab("bot", prove=False)).role == "student"
    assert len(klass.registry) == 1
    assert PROOF_COOKIE not in klass.jars["bot"]  # used: the page makes the browser forget it
    klass.jars["copy"] = {PROOF_COOKIE: good}  # the same answer again, from another cookie jar
    assert "_identity_caller" not in klass.tab("copy", prove=False).session_state
    assert len(klass.registry) == 1


def test_proof_off_when_the_operator_sets_zero_bits(klass, budgets):  # noqa: F811
    budgets(seat_proof_bits=0)
    assert caller_of(klass.tab("s", prove=False)).role == "student"


def test_teacher_key_guessing_is_slowed_for_the_whole_server_across_addresses(
        klass, budgets, caplog, monkeypatch, waits):  # noqa: F811
    """Each guess from a new session and a new address: only the server-wide budget slows them, and the
    right key still signs in at once."""
    import streamlit as st

    from ui import class_budgets

    seen: dict[str, int] = {}
    monkeypatch.setattr(class_budgets, "address",
                        lambda: f"10.0.0.{seen.setdefault(str(st.session_state.get('_test_browser')), len(seen) + 1)}")
    budgets(guesses_per_server=3, guesses_per_address=10)
    with caplog.at_level(logging.WARNING, logger="rag_metrics.class"):
        for i in range(5):
            sign_in(klass.tab(f"guesser{i}"), f"wrong guess number {i}")
        at = sign_in(klass.tab("guesser-last"), KEY)
    assert waits == [1.0, 2.0]  # the server's 4th and 5th wrong guesses
    assert caller_of(at).role == "teacher"
    assert sum("wrong teacher key from" in r.getMessage() for r in caplog.records) == 5


def test_a_30000_question_import_is_refused_before_it_is_parsed(klass, budgets, monkeypatch):  # noqa: F811
    """Issue 27: the Golden set page refuses a 2 MB file of 30,000 questions on its size, never parsing it."""
    from app_helpers import goto, no_exception
    from rag_metrics.io import golden as golden_io

    budgets()  # the default golden_questions (1000)
    at = klass.tab("s")
    goto(at, "pages/golden_set.py")
    at.segmented_control(key="golden_view").set_value("io").run()

    def no_parse(*a, **k):
        raise AssertionError("the golden set was parsed")

    monkeypatch.setattr(golden_io, "parse_golden", no_parse)
    data = "".join(f'{{"id": "q{i}", "question": "question number {i}?"}}\n' for i in range(30_000)).encode()
    assert len(data) < 2 * 1024 * 1024
    at.file_uploader(key="golden_upload").set_value(("flood.jsonl", data, "application/jsonl")).run()
    at.button(key="golden_import").click().run()
    no_exception(at)
    text = shown_text(at) + "".join(str(d.value.to_string()) for d in at.dataframe)
    assert any("Import rejected" in e.value for e in at.error)
    assert "more than 1,000 questions, over this seat's budget of 1,000" in text
    assert "lab.budgets.golden_questions" in text


def test_a_30000_question_golden_set_dropped_on_the_bring_page_is_refused_unread(klass, budgets, monkeypatch):  # noqa: F811
    """The Bring page reads dropped files on drop: a golden set over the seat's budget is refused on
    its size first (the same check as the Golden set page), and its reader never runs."""
    from app_helpers import no_exception
    from ui import bring

    budgets()
    at = klass.tab("s")
    at.switch_page("pages/bring_your_system.py").run()

    def no_read(*a, **k):
        raise AssertionError("the dropped golden set was read")

    monkeypatch.setattr(bring, "_describe", no_read)  # (in class mode the reader runs in a worker)
    data = "".join(f'{{"id": "q{i}", "question": "question number {i}?"}}\n' for i in range(30_000)).encode()
    at.file_uploader(key="bring_files").set_value([("flood.jsonl", data, "application/jsonl")]).run()
    no_exception(at)
    (refused,) = [e.value.replace("\\", "") for e in at.error]
    assert refused.startswith("flood.jsonl: more than 1,000 questions, over this seat's budget of 1,000")
