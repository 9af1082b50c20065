"""The presenter's story (issue 19): targets with what the golden set allows (the ideal ranking), the
verdict sentence, three example questions with highlighted snippets, the baseline in plain words."""
from __future__ import annotations

import pytest

from app_helpers import library_result
from rag_metrics import GoldenSet, Run
from rag_metrics.compare.paired import compare
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.report.story import achievable, ideal_run, pick_examples, presenter_story, snippet, target_readouts

# q1 relevant {a}: ranked 1st (win); q2 relevant {x, y}: first at rank 7 (near miss at K = 5);
# q3 relevant {m}: never retrieved (miss); q4 relevant {p}: rank 3
GOLDEN = GoldenSet.from_qrels({"q1": {"a": 2}, "q2": {"x": 1, "y": 3}, "q3": {"m": 1}, "q4": {"p": 1, "z": 0}})
RUN = Run.from_rankings({"q1": ["a", "b", "c"], "q2": ["b", "c", "d", "e", "f", "g", "x"],
                         "q3": ["b", "c"], "q4": ["b", "c", "p"]})


def test_ideal_ranking_puts_relevant_ids_first_by_grade():
    assert [i for i, _ in ideal_run(GOLDEN).rankings()["q2"]] == ["y", "x"]
    assert "z" not in dict(ideal_run(GOLDEN).rankings()["q4"])  # grade 0 is not part of the ideal ranking
    res = evaluate(GOLDEN, RUN)
    # P@5 of the ideal ranking: (1 + 2 + 1 + 1) / 5 / 4 queries = 5/20
    assert achievable(res, "precision", 5) == pytest.approx((1 / 5 + 2 / 5 + 1 / 5 + 1 / 5) / 4)
    assert achievable(res, "mrr", 5) == 1.0
    # the relevance level counts: at L = 2 only q1 (a: 2) and q2 (y: 3) have relevant ids
    res2 = evaluate(GOLDEN, RUN, EvalOptions(relevance_level=2))
    assert achievable(res2, "precision", 1) == pytest.approx((1 + 1 + 0 + 0) / 4)


def test_targets_say_whether_they_can_be_met():
    res = evaluate(GOLDEN, RUN)
    mrr, p5 = target_readouts(res, 5)
    # the lesson checks MRR over the whole ranking (readouts.TARGETS): q2 counts 1/7
    assert (mrr.metric, mrr.value, mrr.best, mrr.met, mrr.reachable) == ("mrr", (1 + 1 / 7 + 0 + 1 / 3) / 4, 1.0,
                                                                         False, True)
    assert p5.metric == "precision" and p5.best == pytest.approx(0.25) and not p5.reachable
    story = presenter_story(res, 5, system="dense")
    assert "a better ranking can reach it" in story.verdict and "no ranking could meet it" in story.verdict
    assert "best possible is 0.25" in story.verdict


def test_examples_are_a_win_a_miss_and_a_near_miss():
    texts = {"a": "Alpha answers the first question.", "b": "Unrelated text.", "x": "The x chunk.", "g": "G text."}
    ex = pick_examples(evaluate(GOLDEN, RUN), 5, texts)
    assert [(e.kind, e.query_id, e.first_relevant_rank) for e in ex] == [
        ("win", "q1", 1), ("miss", "q3", 0), ("near miss", "q2", 7)]
    assert [c.rank for c in ex[2].chunks] == [1, 7] and ex[2].chunks[1].relevant
    assert "K = 7 would count it" in ex[2].sentence
    assert [c.rank for c in ex[1].chunks] == [1, 0] and ex[1].chunks[1].chunk_id == "m"  # expected, not retrieved


def test_snippet_is_short_and_marks_the_question_words():
    text = ("Intro words. " * 40) + "Free accounts get 2 GB of storage and sync every hour. " + ("Tail. " * 40)
    segs = snippet(text, "How much storage do free accounts get?", chars=120)
    joined = "".join(t for t, _ in segs)
    assert len(joined) <= 125 and joined.startswith("…") and joined.endswith("…")
    marked = {t.lower() for t, h in segs if h}
    assert {"free", "accounts", "storage", "get"} <= marked and "how" not in marked
    assert snippet("Short text.", "text?") == (("Short ", False), ("text", True), (".", False))


def test_sample_story_and_baseline_in_plain_words():
    dense, bm25 = library_result("dense"), library_result("bm25")
    table = compare(dense, bm25, ["mrr@5", "precision@5"])
    story = presenter_story(dense, 5, system="dense", comparison=table, comparison_names=("dense", "bm25"))
    assert [t.metric for t in story.targets] == ["mrr", "precision"]
    assert story.baseline[0].startswith("dense vs bm25") and len(story.baseline) == 3
    assert {e.kind for e in story.examples} <= {"win", "miss", "near miss"} and story.examples[0].kind == "win"
    # P@5 > 0.6 is out of reach on the sample: most questions have 1-3 relevant chunks
    p5 = story.targets[1]
    assert not p5.reachable and p5.best < 0.6
