"""Asking the tutor (issue 48) through a loopback scripted model that streams (tests/tutor_server.py): grounded
(the passages are in the prompt and come first), cited ([n] and [passage id] mapped to the passages with
their links), Danish on a Danish request, a leaking reply withheld and replaced by the exercise's hint (none of
its code streamed), the answer without a model (passages and the diagnosis, labelled), a failing model, the
reply cache and the endpoint from the judge's configuration (its key never in a repr)."""
from __future__ import annotations

import pytest

from rag_metrics.config import ServerConfig
from rag_metrics.errors import InputError
from rag_metrics.exercises.catalogue import exercise
from rag_metrics.exercises.mistakes import MISTAKES
from rag_metrics.exercises.reference import REFERENCE
from rag_metrics.tutor.ask import (
    SYSTEM,
    Done,
    Fallback,
    Passages,
    ReplyCache,
    Token,
    TutorEndpoint,
    TutorRequest,
    ask,
    endpoint_from_config,
    map_citations,
    safe_end,
)
from rag_metrics.tutor.passages import Passage
from tests.tutor_server import TutorServer

P = [Passage("exercise.hit_rate_at_k.hint.1", "en", "Hit rate: hint 1", "Count each question once.",
             "exercises?exercise=hit_rate_at_k"),
     Passage("lesson.retrieval.step.hit_rate", "en", "Hit rate@K", "A question is a hit when ...",
             "lesson?lesson=retrieval&step=2")]


class FakeIndex:
    def __init__(self) -> None:
        self.asked: list[tuple[str, int, str | None]] = []

    def search(self, question, k=3, *, where=None):
        self.asked.append((question, k, where))
        return [(p, 1.0) for p in P[:k]]


def run(req, endpoint, cache=None):
    index = FakeIndex()
    return list(ask(req, endpoint=endpoint, cache=cache, index=index)), index


def endpoint(srv, **kw) -> TutorEndpoint:
    return TutorEndpoint(srv.base_url, "scripted", timeout=5.0, max_retries=0, **kw)


REQ = TutorRequest("why is my hit rate above 1?", "en", "exercise:hit_rate_at_k",
                   code="def hit_rate_at_k(golden_dataset, retriever, k=5):\n    return 1.2\n",
                   verdict="Passed 0 of 8 checks\ncurrent: expected 0.72, got 1.13\n"
                           + MISTAKES["count_every_relevant"][0],
                   hidden_values=(0.7236842105263158,))


def test_a_grounded_streamed_answer_cites_the_passages_given():
    reply = "Look at the line that adds to hits [1]: how much can one question add? See also [{passage}] and [7]."
    with TutorServer({"above 1": reply}) as srv:
        events, index = run(REQ, endpoint(srv))
        sent = srv.requests[-1]
    assert isinstance(events[0], Passages) and events[0].passages == P[:3]
    assert index.asked[0][1:] == (3, "exercise:hit_rate_at_k") and "above 1" in index.asked[0][0]
    tokens = [e for e in events if isinstance(e, Token)]
    done = events[-1]
    assert isinstance(done, Done) and len(tokens) > 1 and not done.guarded and done.from_model and not done.cached
    assert "".join(t.text for t in tokens).strip() == reply.replace("{passage}", P[0].id).strip()
    assert done.answer.startswith("Look at the line") and "[1]: how much" in done.answer
    assert "See also [1] and [7]." in done.answer  # an id rewritten as its number; [7] is not a passage
    assert done.citations == [P[0]] and done.citations[0].link == "exercises?exercise=hit_rate_at_k"
    assert done.tokens_used > 0 and not done.tokens_estimated  # the server's usage, from the stream
    # grounded: the system prompt's hint ladder and the passages, code and verdict in the user message
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    system, user = sent["messages"][0]["content"], sent["messages"][1]["content"]
    assert system == SYSTEM["en"] and "never give the solution" in system and "[1], [2]" in system
    assert f"[1] [{P[0].id}] {P[0].title}" in user and "[2] [lesson.retrieval.step.hit_rate]" in user
    assert REQ.code.strip() in user and "count each question once" in user and REQ.question in user


def test_a_danish_request_gets_the_danish_prompt():
    req = TutorRequest("hvorfor er min hit rate over 1?", "da", "lesson:retrieval:hit_rate")
    with TutorServer(default="Se på linjen, der lægger til hits [2].") as srv:
        events, _ = run(req, endpoint(srv))
        sent = srv.requests[-1]
    assert sent["messages"][0]["content"] == SYSTEM["da"] and "Svar på dansk" in SYSTEM["da"]
    assert "Elevens spørgsmål" in sent["messages"][1]["content"]
    assert events[-1].citations == [P[1]]


@pytest.mark.parametrize("leak", ["code", "value"])
def test_a_leaking_reply_is_withheld_and_replaced_by_the_exercises_hint(leak):
    reply = (f"Here it is:\n\n```python\n{REFERENCE['hit_rate_at_k'].strip()}\n```\n" if leak == "code"
             else "Your function should return 0,7237 on the class's data, not 1.13.")
    cache = ReplyCache()
    with TutorServer(default=reply) as srv:
        events, _ = run(REQ, endpoint(srv), cache)
        again, _ = run(TutorRequest("another question", "en", REQ.where, REQ.code, REQ.verdict, REQ.hidden_values),
                       endpoint(srv), cache)
    done = events[-1]
    assert isinstance(done, Done) and done.guarded and done.citations == []
    assert (done.reason in ("code matching the reference solution", "a key line of the solution") if leak == "code"
            else done.reason == "an expected value")  # code is caught as it streams: by its key line first
    hints = exercise("hit_rate_at_k").hints["en"]
    assert done.answer.startswith("The tutor's reply gave part of the solution away") and hints[0] in done.answer
    assert again[-1].guarded and hints[1] in again[-1].answer  # the next rung of the ladder
    # and the mistake the last run was diagnosed with (the verdict's mistake hint), named
    assert done.answer.endswith("What your last run showed: " + MISTAKES["count_every_relevant"][0])
    streamed = "".join(e.text for e in events if isinstance(e, Token))
    assert "retriever.retrieve" not in streamed and "0,72" not in streamed  # none of the leak was streamed
    assert done.tokens_estimated  # the stream was closed at the leak: no usage from the server


def test_without_a_model_the_passages_and_the_diagnosis_labelled():
    events, _ = run(REQ, None)
    assert [type(e) for e in events] == [Passages, Fallback]
    fb = events[-1]
    assert fb.passages == P[:3] and fb.diagnosis == REQ.verdict.strip() and fb.reason == ""


def test_a_model_that_fails_gives_the_answer_without_a_model():
    dead = TutorEndpoint("http://127.0.0.1:9/v1", "scripted", timeout=2.0, max_retries=0)
    events, _ = run(REQ, dead)
    assert isinstance(events[-1], Fallback) and "could not be reached" in events[-1].reason
    assert not any(isinstance(e, (Token, Done)) for e in events)


def test_the_same_question_on_the_same_code_and_verdict_is_cached():
    cache = ReplyCache(maxsize=2)
    with TutorServer(default="Which line adds to hits? [1]") as srv:
        first, _ = run(REQ, endpoint(srv), cache)
        second, _ = run(REQ, endpoint(srv), cache)
        assert len(srv.requests) == 1
        run(TutorRequest(REQ.question, REQ.lang, REQ.where, REQ.code + "# changed\n", REQ.verdict), endpoint(srv),
            cache)
        assert len(srv.requests) == 2  # other code: asked again
    assert second[-1].cached and not first[-1].cached and second[-1].answer == first[-1].answer
    assert not any(isinstance(e, Token) for e in second)


def test_the_endpoint_is_the_judges_and_its_key_is_never_shown():
    assert endpoint_from_config(ServerConfig()) is None
    cfg = ServerConfig(judge={"base_url": "http://127.0.0.1:8080/v1/", "chat_model": "llama", "api_key": "sk-secret",
                              "timeout": 12})
    ep = endpoint_from_config(cfg)
    assert ep is not None and (ep.base_url, ep.model, ep.timeout, ep.api_key) == (
        "http://127.0.0.1:8080/v1", "llama", 12.0, "sk-secret")
    assert "sk-secret" not in repr(ep)
    assert ep.client() is ep.client()  # one client per process and settings (building one costs the TLS setup)
    assert TutorEndpoint(ep.base_url, ep.model, timeout=12.0, api_key="other").client() is not ep.client()
    with pytest.raises(InputError):
        endpoint_from_config(ServerConfig(judge={"base_url": "ftp://x", "chat_model": "m"}))


def test_citations_and_the_shown_part_of_a_stream():
    text, cited = map_citations("A [2], B [exercise.hit_rate_at_k.hint.1], C [x] [2]", P)
    assert text == "A [2], B [1], C [x] [2]" and cited == [P[1], P[0]]
    assert safe_end("Use `hits += 1") == 4 and safe_end("It is 0,7") == 6 and safe_end("Done.") == 5
    assert safe_end("ok\n```python\ndef f():") == 3
