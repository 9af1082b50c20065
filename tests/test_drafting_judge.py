"""Drafting golden questions and relevance suggestions with a judge, against the loopback
OpenAI-compatible server with scripted replies (tests/judge_script_server.py).

The scripted judge grades by word overlap and writes questions from the passage's words: the
kappa and tau it gives are plumbing checks, not a measurement of any model.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from judge_script_server import ScriptedJudge

from rag_metrics.answers.llm import JudgeConfig
from rag_metrics.answers.llm_cache import JudgeCache
from rag_metrics.authoring.drafting.badges import BadgeSettings, self_contained, word_overlap
from rag_metrics.authoring.drafting.questions import CATEGORIES, Draft, sample_sources
from rag_metrics.authoring.drafting.review import ACCEPTED, PENDING, DraftReview, draft_golden_questions, planned_calls
from rag_metrics.authoring.judge_agreement import ranking_change, relevance_agreement
from rag_metrics.authoring.judge_replies import MAX_REPLY_CHARS, find_json, parse_grade, parse_question
from rag_metrics.authoring.label_queue import LabelQueue
from rag_metrics.authoring.relevance_judge import (
    RelevanceJudge,
    RelevancePair,
    RelevanceSuggestion,
    completed_golden,
    judge_golden,
    least_reliable_first,
    pooled_pairs,
    umbrela_prompt,
)
from rag_metrics.insights.provenance import (
    filter_golden,
    metrics_by_provenance,
    provenance_counts,
    without_judge_labels,
)
from rag_metrics.io.corpus import load_corpus
from rag_metrics.io.golden import golden_to_text, load_golden, parse_golden
from rag_metrics.io.trec import read_qrels, write_trec_run
from rag_metrics.retrieval import make_retriever
from rag_metrics.retrieval.chunking import chunk_corpus
from rag_metrics.retrieval.encoders import HashingEncoder
from rag_metrics.types import DRAFTED, JUDGE, SOURCE, GoldenQuery, GoldenSet

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_corpus"


@pytest.fixture(scope="module")
def sample():
    corpus = load_corpus(SAMPLE / "docs")
    chunks = chunk_corpus(corpus, 500, 100)
    return chunks, load_golden(SAMPLE / "golden.jsonl")


@pytest.fixture(scope="module")
def runs(sample):
    """The bundled retrievers on the sample, with a small hashing encoder in place of MiniLM."""
    chunks, golden = sample
    qs = {q.id: q.question for q in golden}
    out = {}
    for kind in ("dense", "bm25", "hybrid"):
        r = make_retriever(kind, "hashing-64", cache=False)
        r.index(chunks)
        out[kind] = r.retrieve(qs, 20)
    return out


# ---- tolerant parsing ----------------------------------------------------------------------------
@pytest.mark.parametrize("reply, grade", [
    ("M: 2, T: 1\n##final score: 2", 2),
    ("##final score: 1 ... on reflection ##final score: 3", 3),         # the last one counts
    ("**Final Score:** 2", 2),
    ("<html><body><p>Reasoning...</p><p>##final score: <b>3</b></p></body></html>", 3),
    ('Sure! Here is my grading: {"score": 1, "reason": "related"} Hope it helps', 1),
    ('```json\n{"grade": "2"}\n```', 2),
    ('[{"passage": 1, "score": 0}]', 0),                                 # a JSON list
    ("[3]", 3),
    ("2", 2),
    ("garbage \x00\x01 ~~~ }{ ][", None),
    ("", None),
    ('{"score": 7}', None),                                              # not a 0-3 grade
    ("##final score: 12", None),
    ("I would say it is quite relevant overall.", None),
    ("<div>No score here</div>", None),
    ("x" * (3 * MAX_REPLY_CHARS) + "\n##final score: 1", 1),             # huge: the tail is read
    ("{" * 50_000, None),                                                # huge and broken
    ("[" * 20_000 + "]" * 20_000, None),                                 # nested deeper than Python parses
    ('{"score": ' + "9" * 5000 + "}", None),                             # an integer Python refuses
])
def test_parse_grade_reply_shapes(reply, grade):
    assert parse_grade(reply) == grade


@pytest.mark.parametrize("reply, question", [
    ('{"question": "How long is the Team trial?"}', "How long is the Team trial?"),
    ('Here you go:\n```json\n{"question": "Can I export to PDF?"}\n```', "Can I export to PDF?"),
    ('[{"question": "Where are invoices kept?"}, {"question": "second"}]', "Where are invoices kept?"),
    ('["What does Plus cost?"]', "What does Plus cost?"),
    ("Question: How do I turn on two-step verification?", "How do I turn on two-step verification?"),
    ("<p>Can admins force SSO?</p>", "Can admins force SSO?"),
    ('{"q": "how many devices on free"}', "how many devices on free"),
    ("Sorry, I cannot help with that.", None),
    ('{"answer": "42"}', None),
    ('{"question": ""}', None),
    ("garbage ][}{", None),
    ('{"question": "' + "very " * 400 + 'long?"}', None),
])
def test_parse_question_reply_shapes(reply, question):
    assert parse_question(reply) == question


def test_find_json_prefers_an_object_and_survives_many_braces():
    assert find_json('noise [1, 2] then {"a": 1}') == {"a": 1}
    assert find_json("[1, 2]") == [1, 2]
    assert find_json("{" * 10_000 + "nothing") is None


def test_umbrela_prompt_has_the_scale_and_the_answer_line():
    p = umbrela_prompt("how much storage on free?", "Free includes 2 GB.")
    for g in "0123":
        assert f"\n{g} = " in p
    assert "Query: how much storage on free?" in p and "Passage: Free includes 2 GB." in p
    assert p.rstrip().endswith("##final score: score")


# ---- relevance suggestions -----------------------------------------------------------------------
def _pairs() -> list[RelevancePair]:
    texts = ["Free includes 2 GB of storage.", "GARBAGE-PASSAGE", "HTML-PASSAGE", "LIST-PASSAGE", "HUGE-PASSAGE",
             "BOOM-PASSAGE", "Refunds within 14 days."]
    return [RelevancePair("q1", "how much storage does free include", f"c{n}", t) for n, t in enumerate(texts)]


def test_relevance_suggestions_statuses_cache_and_counts(tmp_path):
    from answers_server import Scenario

    replies = {"GARBAGE-PASSAGE": "lorem ipsum }{", "HTML-PASSAGE": "<p>##final score: <i>2</i></p>",
               "LIST-PASSAGE": '[{"score": 1}]', "HUGE-PASSAGE": "blah " * 60_000 + "##final score: 0"}
    sc = Scenario(faults={"BOOM-PASSAGE": "http500"})
    cache = JudgeCache(tmp_path / "c.sqlite3")
    with ScriptedJudge(scenario=sc, replies=replies) as srv:
        cfg = JudgeConfig(srv.base_url, "scripted", max_retries=0)
        judge = RelevanceJudge(cfg, cache=cache)
        pairs = _pairs()
        assert judge.planned_calls(len(pairs)) == 7
        seen = []
        out = judge.grade(pairs, progress=seen.append)
        got = {s.item_id: (s.status, s.grade) for s in out}
        assert got["c0"] == ("ok", 3)          # storage, free, include shared
        assert got["c1"][0] == "unusable_reply" and got["c1"][1] is None
        assert got["c2"] == ("ok", 2)
        assert got["c3"] == ("ok", 1)
        assert got["c4"] == ("ok", 0)
        assert got["c5"][0] == "http_error"
        assert got["c6"] == ("ok", 0)
        p = judge.last_progress
        assert p.done == 7 and p.cache_hits == 0 and p.tokens > 0 and seen
        n_requests = srv.chat_requests()
        again = judge.grade(pairs)
        assert [s.grade for s in again] == [s.grade for s in out]
        p2 = judge.last_progress
        assert p2.cache_hits == 6 and srv.chat_requests() == n_requests + 1   # only the HTTP error is asked again


def test_cancel_marks_pairs_not_asked():
    with ScriptedJudge() as srv:
        judge = RelevanceJudge(JudgeConfig(srv.base_url, "scripted", concurrency=1), cache=False)
        out = judge.grade(_pairs()[:1] * 40, cancel=lambda: True)
    assert any(s.status == "cancelled" for s in out)
    assert judge.last_progress.done < 40


def test_two_samples_and_least_reliable_first():
    a = RelevanceSuggestion("q", "a", 3, samples=(3, 3))
    b = RelevanceSuggestion("q", "b", 1, samples=(1, 3))     # the samples disagree by 2
    c = RelevanceSuggestion("q", "c", 2, samples=(2, 2))     # the 1-2 boundary
    d = RelevanceSuggestion("q", "d", None, "unusable_reply")
    e = RelevanceSuggestion("q", "e", 1, samples=(1, 2))
    assert [s.item_id for s in least_reliable_first([a, b, c, d, e])] == ["d", "b", "e", "c", "a"]


def test_a_persons_label_always_wins(sample):
    _, golden = sample
    q = golden.queries[0]
    mine = next(iter(q.relevant))
    sugg = [RelevanceSuggestion(q.id, mine, 0), RelevanceSuggestion(q.id, "new#1", 2),
            RelevanceSuggestion(q.id, "bad#1", None, "unusable_reply")]
    done = completed_golden(golden, sugg)
    q2 = done.get(q.id)
    assert q2.relevant[mine] == q.relevant[mine] and q2.label_source(mine) == "human"
    assert q2.relevant["new#1"] == 2 and q2.label_source("new#1") == JUDGE
    assert "bad#1" not in q2.relevant
    instead = judge_golden(golden, sugg).get(q.id)
    assert instead.relevant[mine] == 0 and instead.label_source(mine) == JUDGE
    assert without_judge_labels(done).get(q.id).relevant == q.relevant


def test_judge_vs_people_on_the_sample_kappa_and_ranking_change(sample, runs):
    chunks, golden = sample
    texts = {c.id: c.text for c in chunks}
    pairs = pooled_pairs(golden, runs, 5, texts, unjudged_only=False, unlabelled_as_zero=True)
    assert pairs and all(p.people is not None for p in pairs)
    assert not pooled_pairs(golden, runs, 5, texts, unjudged_only=True, unlabelled_as_zero=True)
    holes = pooled_pairs(golden, runs, 5, texts)     # without the completeness assumption
    assert holes and all(p.people is None for p in holes)
    with ScriptedJudge() as srv:
        judge = RelevanceJudge(JudgeConfig(srv.base_url, "scripted"), cache=False)
        sugg = judge.grade(pairs)
    agree = relevance_agreement((s.people, s.grade) for s in sugg)
    assert agree.n == len(pairs) == int(agree.confusion.to_numpy().sum())
    assert int(agree.binary.to_numpy().sum()) == agree.n
    for v in (agree.kappa_binary, agree.kappa_quadratic, agree.kappa_plain):
        assert -1.0 <= v <= 1.0
    rc = ranking_change({"people": golden, "judge": judge_golden(golden, sugg)}, runs, "ndcg@5")
    assert list(rc.table["system"]) == ["dense", "bm25", "hybrid"]
    assert set(rc.tau) == {"judge"} and -1.0 <= rc.tau["judge"] <= 1.0
    print(f"scripted judge on the sample: kappa={agree.kappa_binary:.3f} n={agree.n} tau={rc.tau['judge']:.3f}")


def test_kappa_by_hand():
    # people 0,0,1,1 vs judge 0,1,1,1: p_o = 3/4, p_e = (2/4)(1/4) + (2/4)(3/4) = 1/2, kappa = (3/4-1/2)/(1/2)
    a = relevance_agreement([(0, 0), (0, 1), (1, 1), (1, 1)])
    assert a.kappa_binary == pytest.approx((3 / 4 - 1 / 2) / (1 / 2))
    assert a.kappa_plain == pytest.approx(a.kappa_binary)          # same two classes
    both_one_class = relevance_agreement([(1, 1), (1, 1)])
    assert both_one_class.kappa_binary != both_one_class.kappa_binary  # NaN: undefined
    assert relevance_agreement([(2, None), (1, 1)]).n_unusable == 1


# ---- drafting ------------------------------------------------------------------------------------
def test_sources_are_even_across_documents(sample):
    chunks, _ = sample
    plan = sample_sources(chunks, 52, ("factual",))
    per_doc: dict[str, int] = {}
    for _, src, _ in plan:
        per_doc[src[0].doc_id] = per_doc.get(src[0].doc_id, 0) + 1
    assert len(per_doc) == 26 and set(per_doc.values()) == {2}
    cmp = sample_sources(chunks, 8, ("comparison",))
    assert all(len(src) == 2 and src[0].doc_id != src[1].doc_id for _, src, _ in cmp)


def test_drafting_20_questions_gives_20_reviewable_badged_drafts_and_accepting_one_keeps_provenance(sample):
    chunks, golden = sample
    bm25 = make_retriever("bm25")
    bm25.index(chunks)

    def search(questions):
        ranked = bm25.retrieve({str(n): q for n, q in enumerate(questions)}, 5).rankings()
        return [[i for i, _ in ranked.get(str(n), [])] for n in range(len(questions))]

    with ScriptedJudge() as srv:
        cfg = JudgeConfig(srv.base_url, "scripted")
        planned = planned_calls(chunks, 20)
        res = draft_golden_questions(chunks, 20, cfg, golden=golden, encoder=HashingEncoder(64),
                                     rankings={"bm25": search}, cache=False)
        assert srv.chat_requests() == planned == res.planned == res.calls
    assert len(res.drafts) == 20 and all(d.ok for d in res.drafts)
    assert {d.category for d in res.drafts} == set(CATEGORIES)
    for d in res.drafts:
        assert d.source_chunk_ids and d.generation["model"] == "scripted" and d.generation["prompt_version"]
        for badge in ("answerable", "self_contained", "near_duplicate", "word_overlap", "too_easy", "found_within_k"):
            assert badge in d.badges, (badge, d.badges)
        if d.category != "out_of_scope":
            assert set(d.badges["found_within_k"]) == {"bm25"}
        assert Draft.from_json(json.loads(json.dumps(d.to_json()))) == d
    review = DraftReview()
    assert review.add(res.drafts) == 20 and len(review.pending()) == 20
    d = next(x for x in res.drafts if x.category == "factual")
    review.edit(d.id, "How much storage does the Free plan include?", {c.id: c.text for c in chunks})
    new = review.accept(d.id, golden)
    assert len(new) == len(golden) + 1 and review.status[d.id] == ACCEPTED
    q = new.queries[-1]
    assert q.origin == DRAFTED and q.question == "How much storage does the Free plan include?"
    assert q.draft["source_chunk_ids"] == list(d.source_chunk_ids) and q.draft["generation"]["model"] == "scripted"
    assert q.draft["drafted_question"] == d.question
    assert all(q.label_source(i) == SOURCE for i in d.source_chunk_ids)
    with pytest.raises(Exception, match="say why"):
        review.reject(res.drafts[1].id, "  ")
    review.reject(res.drafts[1].id, "duplicate of q003")
    assert review.progress() == {PENDING: 18, ACCEPTED: 1, "rejected": 1, "total": 20}
    # the golden file keeps the provenance; the labelling queue then offers the question
    back, rep = parse_golden(golden_to_text(new, "jsonl"), "jsonl")
    assert rep.ok and back.queries == new.queries
    lq = LabelQueue.from_golden(new)
    lq.go(q.id)
    lq.tick("faq#9", 1)
    after = lq.apply(new).get(q.id)
    assert after.origin == DRAFTED and after.draft == q.draft and after.label_source("faq#9") == "human"


def test_badges_by_hand():
    assert self_contained("How long is the trial?") == (True, "")
    assert not self_contained("What does the passage say about refunds?")[0]
    assert not self_contained("It costs how much per month?")[0]
    assert word_overlap("storage limit free plan", ["The Free plan storage limit is 2 GB."]) == 1.0
    assert word_overlap("how do I kick a lost phone off", ["Sign out of active sessions."]) == 0.0
    with pytest.raises(Exception, match="in \\[0, 1\\]"):
        BadgeSettings(near_duplicate=1.5)


# ---- provenance ----------------------------------------------------------------------------------
def test_old_golden_files_load_unchanged_and_provenance_round_trips(sample):
    _, golden = sample
    assert golden_to_text(golden, "jsonl") == (SAMPLE / "golden.jsonl").read_text(encoding="utf-8")
    assert all(q.origin == "hand-written" and not q.label_origin and q.draft is None for q in golden)
    row = {"id": "d1", "question": "how long is the trial?", "relevant": {"a#0": 2, "b#1": 1},
           "origin": "drafted", "draft": {"source_chunk_ids": ["a#0"]}, "label_origin": {"a#0": "source",
                                                                                      "b#1": "judge", "zz": "judge"}}
    g, rep = parse_golden(json.dumps(row) + "\n", "jsonl")
    assert rep.ok and len(rep.warnings) == 1          # zz has no label
    q = g.queries[0]
    assert q.drafted and q.label_source("a#0") == SOURCE and q.label_source("b#1") == JUDGE
    assert parse_golden(golden_to_text(g, "json"), "json")[0] == g
    bad, rep2 = parse_golden(json.dumps({**row, "origin": "robot", "label_origin": {"a#0": "alien"}}), "jsonl")
    assert rep2.ok and len(rep2.warnings) == 2 and bad.queries[0].origin == "hand-written"
    # a person's edit of a judge label makes it the person's
    q2 = q.relabelled({"a#0": 2, "b#1": 3})
    assert q2.label_source("a#0") == SOURCE and q2.label_source("b#1") == "human"
    assert g.fingerprint() != GoldenSet((GoldenQuery("d1", q.question, "", q.relevant),)).fingerprint()


def test_metrics_per_provenance_group(sample, runs):
    from rag_metrics.evaluation import evaluate

    _, golden = sample
    qs = list(golden.queries)
    qs[0] = GoldenQuery(qs[0].id, qs[0].question, qs[0].category, qs[0].relevant, origin=DRAFTED)
    qs[1] = qs[1].relabelled({**qs[1].relevant, "faq#0": 1}, by=JUDGE)
    g = GoldenSet(tuple(qs))
    res = evaluate(g, runs["bm25"])
    by_q = metrics_by_provenance(res, ("hit_rate",), (5,), by="question")
    assert dict(zip(by_q["group"], by_q["n"])) == {"drafted": 1, "hand-written": res.n_queries - 1}
    mean = by_q.set_index("group")["mean"]
    hits = res.values("hit_rate", 5)[res.included]
    assert (mean["drafted"] * 1 + mean["hand-written"] * (res.n_queries - 1)) / res.n_queries == pytest.approx(
        hits.mean())
    by_l = metrics_by_provenance(res, ("hit_rate",), (5,), by="labels")
    assert dict(zip(by_l["group"], by_l["n"]))["with judge labels"] == 1
    assert len(filter_golden(g, origin=DRAFTED)) == 1 and len(filter_golden(g, labels="with judge labels")) == 1
    counts = provenance_counts(g).set_index(["what", "group"])["n"]
    assert counts[("questions", "drafted")] == 1 and counts[("labels", "judge")] == 1


# ---- CLI -----------------------------------------------------------------------------------------
def test_cli_judge_relevance_writes_completed_qrels_and_ends_with_kappa(tmp_path, runs, capsys):
    from rag_metrics.cli import main

    paths = []
    for name, run in runs.items():
        p = tmp_path / f"{name}.trec"
        write_trec_run(run, p, tag=name)
        paths += ["--run", str(p)]
    out = tmp_path / "completed.qrels"
    with ScriptedJudge() as srv:
        code = main(["judge-relevance", "--qrels", str(SAMPLE / "golden.jsonl"), *paths, "--judge-url", srv.base_url,
                     "--judge-model", "scripted", "--k", "5", "--out", str(out), "--no-cache"])
    text = capsys.readouterr().out
    assert code == 0, text
    lines = text.strip().splitlines()
    assert re.fullmatch(r"kappa=(-?\d\.\d{4}|nan) n=\d+", lines[-1]), lines[-1]
    assert "planned judge calls:" in text and "judge calls made:" in text and "Kendall tau" in text
    completed = read_qrels(out)
    people = load_golden(SAMPLE / "golden.jsonl")
    for q in people:
        if q.relevant:
            assert {i: g for i, g in completed.get(q.id).relevant.items() if i in q.relevant} == dict(q.relevant)
    assert sum(len(q.relevant) for q in completed) > sum(len(q.relevant) for q in people)
    # with complete labels (the sample's), every pooled pair is the people's: kappa over all of them
    with ScriptedJudge() as srv:
        code = main(["judge-relevance", "--qrels", str(SAMPLE / "golden.jsonl"), *paths, "--judge-url", srv.base_url,
                     "--judge-model", "scripted", "--k", "5", "--out", str(out), "--no-cache", "--unlabelled-as-zero"])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert code == 0 and int(last.split("n=")[1]) > int(lines[-1].split("n=")[1])


def test_cli_draft_writes_one_object_per_draft(tmp_path, capsys):
    from rag_metrics.cli import main

    out = tmp_path / "drafts.jsonl"
    with ScriptedJudge() as srv:
        code = main(["draft", "--corpus", str(SAMPLE / "docs"), "--n", "8", "--category", "factual,procedural",
                     "--judge-url", srv.base_url, "--judge-model", "scripted", "--out", str(out), "--no-cache",
                     "--retrievers", "bm25", "--model", "hashing-64", "--golden", str(SAMPLE / "golden.jsonl")])
    text = capsys.readouterr().out
    assert code == 0, text
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 8 and {r["category"] for r in rows} == {"factual", "procedural"}
    for r in rows:
        assert r["question"] and r["source_chunk_ids"] and r["status"] == "ok"
        assert {"answerable", "self_contained", "near_duplicate", "too_easy", "found_within_k"} <= set(r["badges"])
        assert set(r["badges"]["found_within_k"]) == {"bm25"}
    assert "planned judge calls: 16" in text and "judge calls made: 16" in text


def test_cli_from_a_fresh_process_dry_run_and_bad_input(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "rag_metrics", "draft", "--corpus", str(SAMPLE / "docs"), "--n", "20",
                        "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--out",
                        str(tmp_path / "d.jsonl"), "--dry-run"], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "planned judge calls: 45" in r.stdout
    r = subprocess.run([sys.executable, "-m", "rag_metrics", "draft", "--corpus", str(SAMPLE / "docs"), "--n", "2",
                        "--category", "trivia", "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--out",
                        str(tmp_path / "d.jsonl")], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and "unknown question category 'trivia'" in r.stderr and "Traceback" not in r.stderr


def test_unreachable_judge_gives_statuses_not_a_crash(sample):
    chunks, _ = sample
    with ScriptedJudge() as srv:
        url = srv.base_url
    res = draft_golden_questions(chunks, 3, JudgeConfig(url, "m", max_retries=0, timeout=2), cache=False)
    assert [d.status for d in res.drafts] == ["unreachable"] * 3
    assert DraftReview().add(res.drafts) == 0


@pytest.mark.skipif(not os.environ.get("RAG_METRICS_JUDGE_URL"), reason="set RAG_METRICS_JUDGE_URL "
                    "(and RAG_METRICS_JUDGE_MODEL) to draft and grade against a real endpoint")
def test_real_endpoint_drafts_and_grades(sample):
    chunks, golden = sample
    cfg = JudgeConfig(os.environ["RAG_METRICS_JUDGE_URL"], os.environ.get("RAG_METRICS_JUDGE_MODEL", "llama3.1"))
    res = draft_golden_questions(chunks, 4, cfg, golden=golden, cache=False)
    assert sum(d.ok for d in res.drafts) >= 3, [d.message for d in res.drafts]
    q = golden.queries[0]
    sugg = RelevanceJudge(cfg, cache=False).grade(
        [RelevancePair(q.id, q.question, i, {c.id: c.text for c in chunks}[i]) for i in list(q.relevant)[:2]])
    assert all(s.ok and 0 <= s.grade <= 3 for s in sugg), [s.message for s in sugg]


def test_two_samples_disagreeing_put_the_pair_first():
    import itertools
    import threading

    lock = threading.Lock()
    counts: dict[str, itertools.count] = {}

    def script(prompt: str) -> str:
        with lock:
            n = next(counts.setdefault(prompt, itertools.count()))
        if "Refunds" in prompt:           # the judge changes its mind between samples
            return f"##final score: {1 if n == 0 else 3}"
        return "##final score: 3"

    pairs = [RelevancePair("q1", "refund window", "steady", "Free includes 2 GB of storage."),
             RelevancePair("q1", "refund window", "shaky", "Refunds within 14 days.")]
    with ScriptedJudge(script=script) as srv:
        judge = RelevanceJudge(JudgeConfig(srv.base_url, "scripted", concurrency=1), n_samples=2, cache=False)
        assert judge.planned_calls(2) == 4
        out = judge.grade(pairs)
        assert srv.chat_requests() == 4
    shaky = next(s for s in out if s.item_id == "shaky")
    assert sorted(shaky.samples) == [1, 3] and shaky.grade == 1     # median of two, rounded down
    assert [s.item_id for s in least_reliable_first(out)] == ["shaky", "steady"]
