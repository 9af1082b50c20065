"""The tutor's budgets per seat (issue 48): who may ask (the policy's "ask-tutor"), what a seat may spend
(``limit`` over [lab.budgets] with the teacher's numbers in their place) and the class's shared ledger."""
from __future__ import annotations

import pytest

from rag_metrics.config import Budgets, parse_budgets
from rag_metrics.server.access import STUDENT, TEACHER, Caller, operator
from rag_metrics.server.budgets import TutorLedger, TutorPlan, TutorSettings
from rag_metrics.server.policy import allowed, limit

pytestmark = pytest.mark.usefixtures("class_state_backend")  # files and PostgreSQL (issue 52)

STUDENT_SEAT = Caller(STUDENT, space="seat-1", seat="1")


def test_a_student_asks_while_the_tutor_is_on_the_teacher_and_the_operator_always():
    assert allowed(STUDENT_SEAT, "ask-tutor", True) and not allowed(STUDENT_SEAT, "ask-tutor", False)
    assert not allowed(Caller(STUDENT, space="x"), "ask-tutor", True)  # no seat: nobody to count it to
    assert allowed(Caller(TEACHER), "ask-tutor", False) and allowed(operator(), "ask-tutor", False)


def test_the_teachers_numbers_replace_the_operators_and_bind_students_only():
    operator_budgets = parse_budgets({"tutor_questions_per_seat": 7, "tutor_tokens_per_seat": 900})
    assert limit(STUDENT_SEAT, "tutor_questions_per_seat", operator_budgets) == 7
    mine = TutorPlan(True, questions=3).budgets(operator_budgets)
    assert (limit(STUDENT_SEAT, "tutor_questions_per_seat", mine), limit(STUDENT_SEAT, "tutor_tokens_per_seat", mine)) \
        == (3, 900)
    assert limit(Caller(TEACHER), "tutor_questions_per_seat", mine) is None
    assert limit(operator(), "tutor_tokens_per_seat", Budgets()) is None


def test_the_ledger_refuses_a_spent_seat_and_keeps_its_questions(tmp_path):
    led = TutorLedger(tmp_path)
    assert [led.take("s1", 2, None) for _ in range(3)] == [None, None, "questions"]
    assert led.take("s2", None, 100) is None
    led.add_tokens("s2", 100)
    assert led.take("s2", None, 100) == "tokens" and led.spent("s2") == (1, 100)
    question = "<b>why?</b>" + "x" * 5000
    led.record("s1", "exercise:hit_rate_at_k", question, now=1.0)
    assert led.asked("s1") == [(1.0, "exercise:hit_rate_at_k", question[:TutorLedger.QUESTION_CHARS])]
    assert TutorLedger(tmp_path).all()["s1"] == (1, 2, 0)  # another process reads the same file


def test_the_teachers_settings_survive_and_a_broken_file_reads_as_the_defaults(tmp_path):
    s = TutorSettings(tmp_path)
    s.save(TutorPlan(False, 0, 5000))
    assert TutorSettings(tmp_path).load() == TutorPlan(False, 0, 5000)
    with s.state.change(s.name) as doc:  # the file, or the PostgreSQL row, written by hand
        doc.text = '{"enabled": "no", "questions": -4, "tokens": true}'
    assert s.load() == TutorPlan()
