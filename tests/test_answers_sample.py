"""The shipped sample answers (format, labels, contexts) and the judge-vs-people arithmetic."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rag_metrics.answers import agreement as ag
from rag_metrics.answers.data import (
    RELEVANCY_LABELS,
    HumanLabels,
    load_sample_answers,
    parse_answers,
)
from rag_metrics.answers.scoring import AnswerEvaluation
from rag_metrics.answers.text import split_sentences
from rag_metrics.answers.types import AnswerItem, MetricScore, StatementVerdict
from rag_metrics.io.golden import load_golden

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_corpus"


@pytest.fixture(scope="module")
def sample():
    return load_sample_answers(SAMPLE / "answers.jsonl")


def test_every_in_scope_question_has_a_careful_and_a_sloppy_answer(sample):
    items, _ = sample
    golden = load_golden(SAMPLE / "golden.jsonl")
    in_scope = {q.id for q in golden if q.relevant}
    text = {q.id: q.question for q in golden}
    by_q: dict[str, set[str]] = {}
    for it in items:
        by_q.setdefault(it.question_id, set()).add(it.system)
        assert it.question == text[it.question_id]
        assert len(it.contexts) == 5 and len(it.context_ids) == 5
        assert it.ground_truth
    assert set(by_q) == in_scope
    assert all(s == {"careful", "sloppy"} for s in by_q.values())


def test_labels_cover_every_sentence_as_our_splitter_cuts_it(sample):
    items, labels = sample
    for it in items:
        lab = labels[it.id]
        assert [t for t, _ in lab.sentences] == split_sentences(it.answer), it.id
        assert lab.relevancy in RELEVANCY_LABELS
    # the careful system never makes an unsupported claim; the sloppy one often does
    assert not any(labels[i.id].has_unsupported for i in items if i.system == "careful")
    assert sum(labels[i.id].has_unsupported for i in items if i.system == "sloppy") >= 30


def test_contexts_are_the_dense_top5():
    proc = subprocess.run([sys.executable, str(SAMPLE / "build_answer_contexts.py"), "--check"],
                          check=False, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr


def test_parse_answers_reads_aliases_and_system_column():
    data = "\n".join(json.dumps(r) for r in [
        {"id": "a", "user_input": "q1", "response": "r1", "retrieved_contexts": ["c"], "reference": "g",
         "system": "mine", "category": "factual"},
        {"user_input": "q2", "response": "r2", "retrieved_contexts": []},
    ])
    items, report = parse_answers(data.encode(), "log.jsonl")
    assert [i.id for i in items] == ["a", "2"]
    assert (items[0].system, items[0].category, items[0].ground_truth) == ("mine", "factual", "g")
    assert items[1].system == "log" and items[1].contexts == ()
    items, report = parse_answers(b"question,contexts\nq,\"[\"\"c\"\"]\"\n", "x.csv")
    assert not report.ok and "no answer column" in " ".join(report.lines())


def _ev():
    def sc(value, *verdicts):
        return MetricScore(value, statements=tuple(StatementVerdict(f"s{i}", v) for i, v in enumerate(verdicts)))
    items = (AnswerItem("1c", "q", "a", system="careful", question_id="1"),
             AnswerItem("1s", "q", "a", system="sloppy", question_id="1"),
             AnswerItem("2c", "q", "a", system="careful", question_id="2"),
             AnswerItem("2s", "q", "a", system="sloppy", question_id="2"))
    scores = {"1c": {"m": sc(0.9, "supported", "supported")},
              "1s": {"m": sc(0.5, "supported", "unsupported")},
              "2c": {"m": sc(0.6, "unsupported", "not a claim")},
              "2s": {"m": sc(0.7, "supported")}}
    labels = {"1c": HumanLabels((("s0", "supported"), ("s1", "supported")), "relevant"),
              "1s": HumanLabels((("s0", "unsupported"), ("s1", "unsupported")), "relevant"),
              "2c": HumanLabels((("s0", "supported"), ("s1", "not a claim")), "partly"),
              "2s": HumanLabels((("s0", "unsupported"),), "noncommittal")}
    return AnswerEvaluation(items, "t", scores), labels


def test_agreement_arithmetic():
    ev, labels = _ev()
    st = ag.sentence_table(ev, labels, "m")
    # sentence pairs (human, judge): 1c (S,S)(S,S); 1s (U,S)(U,U); 2c (S,U)(N,N); 2s (U,S)
    s = ag.agreement_stats(st)
    assert (s["n"], s["tp"], s["fp"], s["fn"]) == (7, 1, 1, 2)
    assert s["agreement"] == pytest.approx(4 / 7)
    assert s["precision_unsupported"] == pytest.approx(1 / 2)
    assert s["recall_unsupported"] == pytest.approx(1 / 3)
    a = ag.agreement_stats(ag.answer_table(ev, labels, "m"))
    # answers (human has U, judge has U): 1c (F,F) 1s (T,T) 2c (F,T) 2s (T,F)
    assert (a["tp"], a["fp"], a["fn"], a["agreement"]) == (1, 1, 1, 0.5)
    o = ag.ordering_table(ev, "m", labels=labels)
    assert list(o["ordered"]) == [1.0, 0.0]
    assert list(o["worse_has_unsupported"]) == [True, True]
    r = ag.relevancy_table(ev, labels, "m")
    assert r.set_index("relevancy")["mean"].to_dict() == pytest.approx({"relevant": 0.7, "partly": 0.6,
                                                                          "noncommittal": 0.7})


def test_precision_is_nan_without_positive_calls():
    t = pd.DataFrame({"human": ["supported"], "judge": ["supported"]})
    assert math.isnan(ag.agreement_stats(t)["precision_unsupported"])


def test_shipped_vectors_cover_every_text_the_offline_judges_embed(sample, tmp_path):
    from rag_metrics.answers.embed import add_shipped_answer_embeddings
    from rag_metrics.answers.offline import OfflineJudge
    from rag_metrics.answers.reference import ReferenceMetrics
    from rag_metrics.retrieval.cache import EmbeddingCache, text_key

    items, _ = sample
    cache = add_shipped_answer_embeddings(EmbeddingCache(tmp_path))
    texts = set(OfflineJudge.texts(items) + ReferenceMetrics.texts(items))
    found = cache.get_many("all-MiniLM-L6-v2", [text_key(t) for t in texts], 384)
    assert len(found) == len(texts)
