"""AppTest of "Ask the tutor" (issue 48) on a lesson step and on an exercise, with a scripted tutor in place of
:mod:`rag_metrics.tutor.ask` (the library is tested on its own; the browser test drives the real one through a
loopback model): the streamed answer and its citations as links, the question shown as text, the code and the
verdict sent, the labelled answer without a model, a seat's spent budget refused, and the teacher's switch."""
from __future__ import annotations

import json
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

from app_helpers import goto, no_exception
from rag_metrics.server.budgets import TutorLedger, TutorPlan, TutorSettings
from tests.test_app_class import KEY, klass, seat_of, shown_text, sign_in  # noqa: F401 - klass is a fixture
from ui import tutor
from ui.keys import tutor_widget

LESSON = "pages/lesson.py"
EXERCISES = "pages/exercises.py"
CLASS = "pages/class_progress.py"
NAME = "hit_rate_at_k"
WHERE_STEP = "lesson:retrieval:why"


# ---- a scripted tutor (the contract of rag_metrics.tutor.ask) ------------------------------------------------
@dataclass(frozen=True)
class Passage:
    id: str
    lang: str
    title: str
    text: str
    link: str


@dataclass(frozen=True)
class Passages:
    passages: list


@dataclass(frozen=True)
class Token:
    text: str


@dataclass(frozen=True)
class Done:
    answer: str
    citations: list
    guarded: bool
    tokens_used: int
    from_model: bool
    cached: bool


@dataclass(frozen=True)
class Fallback:
    passages: list
    diagnosis: str


@dataclass(frozen=True)
class TutorRequest:
    question: str
    lang: str
    where: str
    code: str = ""
    verdict: str = ""
    hidden_values: tuple = ()


P1 = Passage("lesson.retrieval.step.hit_rate", "en", "Hit rate <at> k", "Count each *question* once.",
             "lesson?lesson=retrieval&step=2")


@dataclass
class Script:
    model: bool = True
    answer: str = "Look at how often you count one question. What happens when two relevant chunks are found?"
    guarded: bool = False
    requests: list = field(default_factory=list)

    def module(self) -> Any:
        def ask(req, *, endpoint, cache=None):
            self.requests.append((req, endpoint))
            yield Passages([P1])
            if endpoint is None:
                yield Fallback([P1], "")
                return
            for word in self.answer.split(" "):
                yield Token(word + " ")
            yield Done(self.answer, [P1.id], self.guarded, 120, True, False)

        return types.SimpleNamespace(ask=ask, TutorRequest=TutorRequest,
                                     endpoint_from_config=lambda cfg: "loopback" if self.model else None)


@pytest.fixture
def script(monkeypatch):
    s = Script()
    monkeypatch.setattr(tutor, "_library", s.module)
    return s


@pytest.fixture(autouse=True)
def assets(monkeypatch):
    import ui.exercise_editor

    monkeypatch.setattr(ui.exercise_editor, "assets_ready", lambda: True)


def ask(at, where: str, question: str, lang: str = "en"):
    slug = tutor._slug(where)
    at.text_area(key=tutor_widget("question", slug)).input(question)  # sent with the form's button
    at.button(key=f"FormSubmitter:{tutor_widget('form', slug)}-{tutor.T('ask', lang)}").click().run()
    no_exception(at)
    return at


# ---- a lesson step and an exercise ----------------------------------------------------------------------------
def test_a_lesson_step_streams_the_answer_and_links_its_citations(app, script):
    at = goto(app, LESSON)
    assert any(tutor.T("title", "en") in m.value for m in at.markdown)
    ask(at, WHERE_STEP, "Why **is** <b>it</b> above 1?")
    req, endpoint = script.requests[-1]
    assert (req.question, req.lang, req.where, endpoint) == ("Why **is** <b>it</b> above 1?", "en", WHERE_STEP,
                                                             "loopback")
    assert [t.value for t in at.text][-1] == "Why **is** <b>it</b> above 1?"  # the question: plain text
    assert any(script.answer in m.value for m in at.markdown)
    sources = next(c.value for c in at.caption if c.value.startswith(tutor.T("sources", "en")))
    assert "\\[1\\] [Hit rate \\<at\\> k](lesson?lesson=retrieval&step=2)" in sources  # escaped, linked
    assert "20 questions left" not in shown_text(at)  # the operator is not limited
    assert tutor.T("unlimited", "en") in shown_text(at)


def test_an_exercise_sends_the_code_and_the_verdict_and_without_a_model_shows_passages(app, app_env, script):
    from rag_metrics.exercises.attempts import store_for_space
    from ui.exercise_editor import REPORT

    script.model = False
    at = goto(app, EXERCISES)
    code = "def hit_rate_at_k(d, r, k):\n    return 0\n"
    result = {"ok": True, "error": None, "results": {}, "stdout": ""}
    at.session_state[REPORT] = {"nonce": "n1", "doc": f"{NAME}:0", "code": code, "status": "ok",
                                "result": json.dumps(result)}
    at.run()
    no_exception(at)
    assert store_for_space("shared", app_env).load(NAME).code == code
    ask(at, f"exercise:{NAME}", "where is my mistake?")
    req, endpoint = script.requests[-1]
    assert endpoint is None and req.where == f"exercise:{NAME}" and req.code == code
    assert req.verdict.startswith("Passed 0 of") and req.hidden_values  # the checks' values, for the guard
    text = shown_text(at)
    assert tutor.T("no_model", "en") in [i.value for i in at.info]
    assert "Count each *question* once." in [t.value for t in at.text]  # a passage: plain text
    assert req.verdict in [t.value for t in at.text]  # the diagnosis of the last run
    assert tutor.T("no_model_note", "en") in text


def test_a_reply_the_guard_withheld_shows_the_librarys_replacement_as_a_warning(app, script):
    script.guarded, script.answer = True, "The reply was withheld. A hint instead: count each question once."
    at = ask(goto(app, LESSON), WHERE_STEP, "give me the code")
    assert script.answer.strip() in [w.value.strip() for w in at.warning]
    assert not any(script.answer in m.value for m in at.markdown)  # not shown as an answer


def test_the_danish_lesson_asks_in_danish(app, script, app_env):
    from rag_metrics.lesson import store_for_space

    s = store_for_space("shared", app_env)
    s.save(s.load().with_language("da"))
    at = ask(goto(app, LESSON), WHERE_STEP, "hvorfor?", "da")
    assert script.requests[-1][0].lang == "da"
    assert any(tutor.T("title", "da") in m.value for m in at.markdown)


# ---- budgets and the teacher --------------------------------------------------------------------------------
def test_a_students_spent_budget_is_refused_and_shown(klass, script, tmp_path, monkeypatch):  # noqa: F811
    conf = tmp_path / "lab.toml"
    conf.write_text("[lab.budgets]\ntutor_questions_per_seat = 1\n", encoding="utf-8")
    monkeypatch.setenv("RAG_METRICS_CONFIG", str(conf))
    at = goto(klass.tab("a"), LESSON)
    assert "1 of 1 questions left" in shown_text(at)
    ask(at, WHERE_STEP, "first question")
    assert "0 of 1 questions left" in shown_text(at) and len(script.requests) == 1
    ask(at, WHERE_STEP, "second question")
    assert len(script.requests) == 1  # never sent
    assert tutor.T("spent_questions", "en", cap=1) in [w.value for w in at.warning]
    ledger = TutorLedger(klass.root)
    assert ledger.spent(seat_of(at)) == (1, 120)
    assert [q for _, _, q in ledger.asked(seat_of(at))] == ["first question"]


def test_the_teacher_turns_the_tutor_off_and_sees_the_questions(klass, script):  # noqa: F811
    student = goto(klass.tab("a"), LESSON)
    ask(student, WHERE_STEP, "<script>alert(1)</script> why?")
    teacher = goto(sign_in(klass.tab("t"), KEY), CLASS)
    assert not teacher.exception
    teacher.toggle(key=tutor_widget("on", "class")).set_value(False)  # a form: sent with its button
    teacher.number_input(key=tutor_widget("questions", "class")).set_value(3)
    teacher.button(key=f"FormSubmitter:{tutor_widget('form', 'class')}-{tutor.T('save', 'en')}").click().run()
    no_exception(teacher)
    assert TutorSettings(klass.root).load() == TutorPlan(False, 3, 40_000)
    frames = [d.value for d in teacher.dataframe]
    asked = next(f for f in frames if tutor.T("col_asked", "en") in f.columns)
    assert asked[tutor.T("col_asked", "en")].tolist() == [1]
    questions = next(f for f in frames if tutor.T("col_question", "en") in f.columns)
    assert questions[tutor.T("col_question", "en")].tolist() == ["<script>alert(1)</script> why?"]  # a table cell
    off = goto(klass.tab("a"), LESSON)
    assert tutor.T("off", "en") in shown_text(off)
    assert not [t for t in off.text_area if (t.key or "").startswith("tutor_")]


def test_the_first_box_drawn_builds_the_tutors_index_before_any_question(app, script, monkeypatch):
    from rag_metrics.tutor.retrieve import TutorIndex

    built: list[str] = []

    class Index:
        def search(self, question, k=3, *, where=None):
            return []

    monkeypatch.setenv("RAG_METRICS_WARM", "1")
    monkeypatch.setattr(TutorIndex, "for_language", classmethod(lambda cls, lang: built.append(lang) or Index()))
    tutor._warm_index.clear()
    goto(app, LESSON)
    tutor._warm_index("en").join(30)  # the thread the page started (cached per process and language)
    assert built == ["en"] and not script.requests  # built before the first question, which nobody asked
    tutor._warm_index.clear()
