"""Lesson 1, "Why evaluation matters in RAG" (issue 49): its steps, every check right and wrong on live data (the
answer right for one system is wrong for another), the deliberately bad system evaluated by the engine, and its
texts in English and Danish."""
from __future__ import annotations

import string

import pandas as pd
import pytest

from app_helpers import library_result
from rag_metrics.lesson import NONE, LessonContext, check
from rag_metrics.lesson import why as W


@pytest.fixture(scope="module")
def dense():
    return LessonContext(library_result("dense"), 5)


@pytest.fixture(scope="module")
def bm25():
    return LessonContext(library_result("bm25"), 5)


def _task(key: str):
    return next(t for s in W.LESSON.steps for t in s.tasks if t.key == key)


def test_the_lesson_is_lesson_one_with_short_steps_and_a_quiz():
    assert (W.LESSON.key, W.LESSON.number) == ("why", 1)
    assert [s.key for s in W.LESSON.steps] == ["l1_three", "l1_miss", "l1_low", "l1_unsupported", "l1_cost",
                                               "l1_quiz"]
    assert all(s.tasks for s in W.LESSON.steps)
    assert W.LESSON.quiz == W.LESSON.steps[-1].tasks and len(W.LESSON.quiz) == 3
    keys = [t.key for s in W.LESSON.steps for t in s.tasks]
    assert len(keys) == len(set(keys)) and all(k.startswith("l1_") for k in keys)


def test_each_fixed_choice_has_one_right_option(dense):
    for key, right in [("l1_kind", "unsupported"), ("l1_which_metric", "answer"), ("l1_quiz_rank", "l2"),
                       ("l1_quiz_faithful", "l3"), ("l1_quiz_change", "l4")]:
        t = _task(key)
        assert check(t, right, dense), key
        assert not any(check(t, o, dense) for o in t.options if o != right), key


def test_found_but_not_in_the_first_three_is_counted_live(dense, bm25):
    t = _task("l1_found_not_top")
    for ctx in (dense, bm25):
        r = ctx.result
        inc = r.included
        want = int(((r.values("hit_rate", 10)[inc] > 0) & (r.values("hit_rate", 3)[inc] == 0)).sum())
        assert check(t, str(want), ctx) and check(t, f"{want},0", ctx)
        assert not check(t, str(want + 1), ctx) and not check(t, "", ctx) and not check(t, None, ctx)
    assert W.found_not_top(dense.result) != W.found_not_top(bm25.result)   # 6 and 11 on the sample
    assert not check(t, str(W.found_not_top(bm25.result)), dense)


def test_the_reversed_system_finds_the_same_chunks_and_ranks_them_worse(dense):
    r = dense.result
    bad = W.reversed_result(r)
    assert bad is W.reversed_result(r)                          # computed once per evaluation
    assert bad.mean("hit_rate", 10) == pytest.approx(r.mean("hit_rate", 10))
    assert bad.mean("mrr", 10) < r.mean("mrr", 10) and bad.mean("hit_rate", 3) < r.mean("hit_rate", 3)
    for q in r.query_ids[:5]:
        top = [i for i, _ in r.run.rankings()[q][:10]]
        assert [i for i, _ in bad.run.rankings()[q]] == top[::-1]


def test_the_fall_of_hit_rate_at_three_is_checked_live(dense, bm25):
    t = _task("l1_lost")
    for ctx in (dense, bm25):
        r, bad = ctx.result, W.reversed_result(ctx.result)
        n = int(r.included.sum())
        want = round((r.mean("hit_rate", 3) - bad.mean("hit_rate", 3)) * n)
        assert check(t, want, ctx) and not check(t, want - 1, ctx)
    assert W.fall_when_reversed(dense.result) != W.fall_when_reversed(bm25.result)  # 42 and 27 on the sample
    assert not check(t, W.fall_when_reversed(bm25.result), dense)


def test_why_a_question_misses_is_checked_live(dense, bm25):
    t = _task("l1_why_missed")
    for ctx in (dense, bm25):
        fails = ctx.result.failures(ctx.k)
        assert not fails.empty
        for row in fails.head(4).itertuples():
            right = "not_retrieved" if pd.isna(row.first_relevant_rank) else "below_k"
            assert check(t, {"query_id": row.query_id, "reason": right}, ctx), row
            for wrong in (o for o in t.options if o != right):
                assert not check(t, {"query_id": row.query_id, "reason": wrong}, ctx)
    hit = dense.result.query_ids[0]   # a question the system does not miss is no answer
    assert dense.result.values("hit_rate", 5)[0] == 1
    assert not any(check(t, {"query_id": hit, "reason": o}, dense) for o in t.options)
    assert not check(t, {"query_id": NONE}, dense) and not check(t, "q001", dense)


def test_the_figures_are_live_and_in_the_lessons_language(dense, bm25):
    steps = {s.key: s for s in W.LESSON.steps}
    en = dict(steps["l1_miss"].figures(dense, "en"))
    assert en["Missed in the top 5"] == f"{W.missed(dense.result, 5)[0]} of 64" == "9 of 64"
    assert dict(steps["l1_miss"].figures(bm25, "en"))["Missed in the top 5"] == "24 of 64"
    cost = dict(steps["l1_cost"].figures(dense, "da"))
    now, after = cost["Relevant i top 10: nu → omvendt"].split(" → ")
    assert now == after == "58"                                 # the same chunks found
    now, after = cost["Relevant i top 3: nu → omvendt"].split(" → ")
    assert int(now) - int(after) == W.fall_when_reversed(dense.result) == 42
    support = dict(steps["l1_unsupported"].figures(dense, "en"))
    assert support["Unsupported answers: sloppy"] > support["Unsupported answers: careful"]  # "50 of 64" > "0 of 64"
    for s in W.LESSON.steps:
        if s.figures is None:
            continue
        for (a, _), (b, _) in zip(s.figures(dense, "en"), s.figures(dense, "da")):
            assert a == b if a == "Hit rate@5" else a != b, (a, b)


def test_every_text_has_english_and_danish_with_the_same_placeholders():
    def fields(text: str) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(text) if f}

    needed = {"lesson.why.title", "lesson.why.intro"}
    for s in W.LESSON.steps:
        needed |= {s.title, s.body}
        for t in s.tasks:
            needed |= {t.prompt, t.hint, t.ok} | {t.option_key(o) for o in t.options}
    assert needed <= set(W.TEXTS), needed - set(W.TEXTS)
    for key, (en, da) in W.TEXTS.items():
        assert en.strip() and da.strip() and fields(en) == fields(da), key
        assert key.startswith(("lesson.why.", "ui.l1.")) or ".l1_" in key, key
