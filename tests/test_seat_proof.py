"""Proof of a real browser before a seat is made (rag_metrics.server.proof, issue 27): the server's
challenge, the answer a browser computes, and every way an answer is refused."""
from __future__ import annotations

import hashlib

import pytest

from rag_metrics.config import Budgets, parse_budgets
from rag_metrics.errors import InputError
from rag_metrics.server.proof import (
    CHALLENGE_TTL,
    SeatProofs,
    check_answer,
    leading_zero_bits,
    make_challenge,
    solve,
)

pytestmark = pytest.mark.usefixtures("class_state_backend")  # files and PostgreSQL (issue 52)

KEY = bytes(range(32))
WHO = "192.168.1.20"


def _wrong(challenge: str, bits: int) -> str:
    return next(f"{challenge}.{i}" for i in range(10_000)
                if leading_zero_bits(hashlib.sha256(f"{challenge}.{i}".encode()).digest()) < bits)


def test_a_solved_challenge_is_accepted_and_has_the_zero_bits():
    ch = make_challenge(KEY, 10, WHO, now=0)
    answer = solve(ch)
    assert answer.startswith(ch + ".")
    assert leading_zero_bits(hashlib.sha256(answer.encode()).digest()) >= 10
    assert check_answer(KEY, answer, 10, WHO, now=1) is None


def test_a_wrong_answer_is_refused():
    ch = make_challenge(KEY, 10, WHO, now=0)
    assert check_answer(KEY, _wrong(ch, 10), 10, WHO, now=1) == "the answer is wrong"


def test_an_expired_challenge_is_refused():
    ch = make_challenge(KEY, 6, WHO, now=0)
    assert check_answer(KEY, solve(ch), 6, WHO, now=CHALLENGE_TTL + 1) == "the challenge expired"


@pytest.mark.parametrize("forge", [
    lambda a: "1" + a[a.index("."):],                                  # an easier difficulty
    lambda a: a.replace(a.split(".")[1], str(int(a.split(".")[1]) + 10**6)),  # a later expiry
    lambda a: a.replace(a.split(".")[2], "0" * 32),                   # a nonce of the client's choice
])
def test_a_forged_challenge_is_refused(forge):
    answer = solve(make_challenge(KEY, 6, WHO, now=0))
    assert check_answer(KEY, forge(answer), 1, WHO, now=1) == \
        "the challenge was not made by this server for this browser"


def test_another_key_or_address_is_refused_and_an_easier_challenge_than_asked_too():
    answer = solve(make_challenge(KEY, 6, WHO, now=0))
    assert check_answer(b"x" * 32, answer, 6, WHO, now=1) is not None
    assert check_answer(KEY, answer, 6, "10.9.9.9", now=1) is not None
    assert check_answer(KEY, answer, 12, WHO, now=1) == "the challenge is easier than the server now asks"


@pytest.mark.parametrize("junk", [None, "", "x", "6.1.2.3.4", "6" * 300, "../../etc/passwd"])
def test_junk_is_refused_without_an_error(junk):
    assert check_answer(KEY, junk, 6, WHO, now=1) == "no answer, or not one in the challenge's form"


def test_an_answer_is_used_once_across_processes(tmp_path):
    first, second = SeatProofs(tmp_path), SeatProofs(tmp_path)  # two app processes, one workspace
    answer = solve(first.challenge(6, WHO))
    assert second.key() == first.key() and len(first.key()) == 32
    if first.state.kind == "files":  # (in PostgreSQL, a row of lab_state)
        assert (tmp_path / ".class" / "proof_key").stat().st_mode & 0o077 == 0
    assert first.redeem(answer, 6, WHO) is None
    assert second.redeem(answer, 6, WHO) == "the answer was used already"
    assert first.redeem(solve(first.challenge(6, WHO)), 6, WHO) is None  # a new challenge is a new seat


def test_the_difficulty_is_a_budget_that_zero_turns_off():
    assert Budgets().seat_proof_bits == 16
    assert parse_budgets({"seat_proof_bits": 0}).seat_proof_bits == 0
    with pytest.raises(InputError, match="seat_proof_bits"):
        parse_budgets({"seat_proof_bits": 64})
    with pytest.raises(InputError, match="judge_calls_per_seat"):
        parse_budgets({"judge_calls_per_seat": 0})  # the other budgets still start at 1
