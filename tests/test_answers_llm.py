"""LLM judge through a real OpenAI-compatible HTTP server on loopback (canned replies)."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from answers_server import JudgeServer, Scenario, embedding

from rag_metrics.answers.llm import JudgeConfig, LLMJudge
from rag_metrics.answers.llm_cache import JudgeCache
from rag_metrics.answers.scoring import evaluate_answers
from rag_metrics.answers.types import AnswerItem
from rag_metrics.errors import InputError

CTX = ("The Free plan includes 2 GB of storage.", "Plus costs $6 per month.")
A1 = AnswerItem("a1", "How much storage does Free have?",
                "The Free plan includes 2 GB of storage. It also includes unlimited devices.", CTX)
A2 = AnswerItem("a2", "How much is Plus?", "It depends on many things.", CTX)


def _cos(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _judge(srv, cache=None, **kw):
    cfg = JudgeConfig(srv.base_url, "canned-chat", kw.pop("embed_model", "canned-embed"), **kw)
    return LLMJudge(cfg, cache=cache if cache is not None else JudgeCache(None))


def test_faithfulness_and_relevancy_arithmetic_through_http():
    sc = Scenario(unsupported={"It also includes unlimited devices."}, noncommittal={A2.answer})
    with JudgeServer(sc) as srv:
        [r1, r2] = _judge(srv).judge([A1, A2])
    f1 = r1.scores["faithfulness"]
    assert f1.value == pytest.approx(1 / 2)  # 2 statements, verdicts [1, 0]
    assert [s.verdict for s in f1.statements] == ["supported", "unsupported"]
    assert "1 of 2" in f1.arithmetic
    ar1 = r1.scores["answer_relevancy"]
    gq = f"What does this say: {A1.answer[:60]}?"
    expected = _cos(embedding(A1.question), embedding(gq))  # the 3 generated questions are equal
    assert ar1.value == pytest.approx(expected, abs=1e-12)
    assert [q.question for q in ar1.questions] == [gq] * 3
    # every generated question of A2 is flagged noncommittal -> 0
    assert r2.scores["answer_relevancy"].value == 0.0
    assert all(q.noncommittal for q in r2.scores["answer_relevancy"].questions)
    assert r2.scores["faithfulness"].value == 1.0


def test_cache_makes_a_rerun_free_and_counts_hits(tmp_path):
    cache = JudgeCache(tmp_path / "judge.sqlite3")
    with JudgeServer() as srv:
        judge = _judge(srv, cache)
        first = judge.judge([A1, A2])
        n = srv.chat_requests()
        assert n == 2 * (2 + 3)  # statements + verdicts + 3 question samples per item
        assert judge.last_progress.cache_hits == 0 and judge.last_progress.prompt_tokens > 0
        again = _judge(srv, JudgeCache(tmp_path / "judge.sqlite3"))  # a new process would reopen it
        second = again.judge([A1, A2])
        assert srv.chat_requests() == n  # nothing asked twice
        p = again.last_progress
        assert (p.done, p.cache_hits, p.prompt_tokens) == (p.total, p.total, 0)
    assert [j.scores["faithfulness"].value for j in first] == [j.scores["faithfulness"].value for j in second]


def test_faults_are_per_item_statuses_and_the_rest_is_scored(tmp_path):
    items = [A1,
             AnswerItem("bad", "q?", "BADJSON answer here.", CTX),
             AnswerItem("ref", "q?", "REFUSE this one.", CTX),
             AnswerItem("slow", "q?", "SLOW answer.", CTX),
             AnswerItem("err", "q?", "ERR500 answer.", CTX),
             AnswerItem("none", "q?", "NOSTATEMENTS here.", CTX),
             AnswerItem("empty", "q?", "   ", CTX),
             AnswerItem("noctx", "q?", "An answer.", ())]
    sc = Scenario(faults={"BADJSON": "invalid_json", "REFUSE": "refusal", "SLOW": "slow",
                          "ERR500": "http500", "NOSTATEMENTS": "empty"}, slow_seconds=2.0)
    cache = JudgeCache(tmp_path / "c.sqlite3")
    with JudgeServer(sc) as srv:
        ev = evaluate_answers(items, [_judge(srv, cache, timeout=0.5, max_retries=0)])
    st = {i: ev.scores[i]["faithfulness"].status for i in ev.scores}
    assert st == {"a1": "ok", "bad": "invalid_json", "ref": "refusal", "slow": "timeout", "err": "http_error",
                  "none": "no_statements", "empty": "empty_answer", "noctx": "missing_contexts"}
    assert ev.scores["err"]["faithfulness"].message.startswith("HTTP 500")
    assert all(ev.scores[i]["faithfulness"].value is None for i in st if i != "a1")
    assert ev.to_json()["metrics"]["faithfulness"] == pytest.approx(1.0)
    # the invalid reply was paid for: it is cached (two attempts), the timeout was not
    assert len(cache) > 0


def test_unreachable_endpoint():
    with JudgeServer() as srv:
        url = srv.base_url
    judge = LLMJudge(JudgeConfig(url, "m", "e", max_retries=0, timeout=2), cache=False)
    [r] = judge.judge([A1])
    assert r.scores["faithfulness"].status == "unreachable"
    assert r.scores["answer_relevancy"].status == "unreachable"
    assert "is the server running" in r.scores["faithfulness"].message


def test_cancel_marks_pending_items():
    stop = threading.Event()
    seen = []

    def progress(p):
        seen.append(p)
        if p.done >= 1:
            stop.set()

    sc = Scenario(faults={"": "slow"}, slow_seconds=0.3)
    items = [AnswerItem(f"i{n}", "q?", f"Answer {n}.", CTX) for n in range(12)]
    with JudgeServer(sc) as srv:
        res = _judge(srv, concurrency=1, embed_model=None).judge(items, progress=progress, cancel=stop.is_set)
    statuses = [r.scores["faithfulness"].status for r in res]
    assert "cancelled" in statuses and statuses.count("cancelled") >= 8
    assert seen and seen[-1].total >= seen[-1].done


def test_config_validation_names_the_fix():
    with pytest.raises(InputError, match="http"):
        JudgeConfig("localhost:11434", "m")
    with pytest.raises(InputError, match="never the key itself"):
        JudgeConfig("http://x/v1", "m", api_key_env="sk-123")
    with pytest.raises(InputError, match="concurrency"):
        JudgeConfig("http://x/v1", "m", concurrency=0)


def test_api_key_is_not_in_the_config_or_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-secret-123")
    cache = JudgeCache(tmp_path / "k.sqlite3")
    with JudgeServer() as srv:
        cfg = JudgeConfig(srv.base_url, "m", "e", api_key_env="MY_JUDGE_KEY")
        LLMJudge(cfg, cache=cache).judge([A1])
        auth = [r for r in srv.requests]
    assert "sk-secret-123" not in repr(cfg)
    assert b"sk-secret-123" not in (tmp_path / "k.sqlite3").read_bytes()
    assert auth


@pytest.mark.skipif(not os.environ.get("RAG_METRICS_JUDGE_URL"), reason="set RAG_METRICS_JUDGE_URL "
                    "(and RAG_METRICS_JUDGE_MODEL, RAG_METRICS_JUDGE_EMBED_MODEL) to run against a real endpoint")
def test_real_endpoint():
    cfg = JudgeConfig(os.environ["RAG_METRICS_JUDGE_URL"], os.environ.get("RAG_METRICS_JUDGE_MODEL", "llama3.1"),
                      os.environ.get("RAG_METRICS_JUDGE_EMBED_MODEL") or None)
    res = LLMJudge(cfg, cache=False).judge([A1])
    for s in res[0].scores.values():
        assert s.ok, s.message
        assert 0.0 <= s.value <= 1.0 + 1e-9
