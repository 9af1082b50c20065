"""The whole lesson in Chromium at 1280x720, the way a student walks it (issue 17).

Opens the Lesson page and goes through all eleven steps with the page's own controls (the Next
buttons at the top and the bottom, and the step picker), checks each step's title, answers every
task with the answer the library computes (``rag_metrics.lesson`` and the evaluation of the sample
corpus, as ``tests/test_app_lesson.py`` does through AppTest), first a wrong or malformed answer for
a few of them (the hint appears, nothing breaks), checks each step is then marked done, answers the
quiz, and reloads the page: the progress (``ProgressStore``) is still 11 of 11.  No Streamlit
exception element appears at any point.
"""
from __future__ import annotations

import dataclasses
import re

import pytest

from app_helpers import chromium
from tests.test_browser import CHROMIUM, _wait_idle, server  # noqa: F401  (the fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]

WAIT = 60_000  # ms: one rerun of the Lesson page takes well under a second; this is the worst case
EXC = '[data-testid="stException"]'


def test_a_student_walks_the_whole_lesson_in_chromium(server, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    from app_helpers import library_result
    from rag_metrics.evaluation import evaluate
    from rag_metrics.insights.readouts import achievable
    from rag_metrics.lesson import QUIZ, STEPS, TASKS, store_for_space, text
    from rag_metrics.lesson import steps as LSteps
    from rag_metrics.metrics.registry import METRICS
    from rag_metrics.types import GoldenSet
    from rag_metrics.workspace.store import Workspace

    lib = library_result("dense")  # what the app shows by default: sample corpus, dense, trec_eval, K = 5
    run = lib.run
    n_steps = len(STEPS)
    saved = lambda: store_for_space("shared", tmp_path / "workspace").load()  # noqa: E731

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.set_default_timeout(WAIT)

        def no_exception(where: str) -> None:
            exc = page.locator(EXC)
            assert exc.count() == 0, f"exception at {where}: {exc.first.inner_text()[:2000]}"

        def key(k: str):
            return page.locator(f".st-key-{k}")

        def alert(s: str):
            return page.locator('[data-testid="stAlert"]').filter(has_text=s)

        def press(button_key: str) -> None:
            """Click a button (one with a tooltip has a second, hidden copy in the DOM)."""
            key(button_key).locator("button").locator("visible=true").click()

        def pick(box_key: str, option: str) -> None:
            """Open a selectbox or multiselect, type to filter, click the option (exact text)."""
            key(box_key).locator("input").first.click()
            page.keyboard.type(option[:20])
            page.get_by_role("option", name=option, exact=True).click()

        def radio(task_key: str, option_text: str) -> None:
            key(f"lesson_ans_{task_key}").get_by_text(option_text, exact=True).click()

        def typed(widget_key: str, value: str, enter: bool = True) -> None:
            box = key(widget_key).locator("input")
            # a rerun still drawing can show the box twice for a moment (the old copy, then the new one)
            expect(box).to_have_count(1)
            box.fill(value)
            if enter:
                box.press("Enter")

        def check(task_key: str) -> None:
            press(f"lesson_check_{task_key}")

        def right(task_key: str) -> None:
            """Check and wait for the task's "Right." verdict; saved as done; no hint left."""
            check(task_key)
            t = TASKS[task_key]
            alert(f"{text('ui.right')} {text(t.ok)}").first.wait_for()
            expect(alert(text(t.hint))).to_have_count(0)
            no_exception(task_key)
            assert saved().done.get(task_key), task_key

        def wrong(task_key: str) -> None:
            """Check and wait for the hint; nothing is marked done, the page keeps working."""
            check(task_key)
            alert(text("ui.wrong", hint=text(TASKS[task_key].hint))).first.wait_for()
            no_exception(task_key)
            assert not saved().done.get(task_key), task_key

        def progress_is(done: int) -> None:
            page.get_by_text(text("ui.progress", done=done, total=n_steps), exact=True).wait_for()

        def step_label(i: int, done: bool) -> str:
            return f"{'✓' if done else '○'} {i + 1}. {text(STEPS[i].title)}"

        # ---- open the lesson -----------------------------------------------------------------------
        page.goto(f"{server}/lesson")
        _wait_idle(page, text("ui.title"))
        no_exception("open")
        progress_is(0)

        res = lib          # the evaluation the checks read (changes once a label is added)
        labelled = None    # (query id, chunk) labelled in step 6
        for i, s in enumerate(STEPS):
            # ---- go to the step with the page's controls ----------------------------------------
            if i in (3, 6, 9):          # the step picker at the top
                pick("lesson_step_pick", step_label(i, False))
            elif i > 0:                 # Next: alternately the top and the bottom button
                press("lesson_next_top" if i % 2 else "lesson_next_bottom")
            heading = page.get_by_role("heading", name=f"{i + 1}. {text(s.title)}", level=3)
            heading.wait_for()
            if i == 4:                  # one step back and forward again: the done step stays done
                press("lesson_prev_bottom")
                page.get_by_role("heading", name=f"{i}. {text(STEPS[i - 1].title)}", level=3).wait_for()
                expect(key("lesson_step_pick").get_by_role("combobox")).to_have_value(step_label(i - 1, True))
                alert(f"{text('ui.right')} {text(STEPS[i - 1].tasks[0].ok)}").first.wait_for()
                press("lesson_next_top")
                heading.wait_for()
            page.get_by_text(text("ui.step_of", n=i + 1, total=n_steps), exact=True).wait_for()
            no_exception(f"step {i + 1}")
            assert saved().step == i

            # ---- answer its tasks ---------------------------------------------------------------
            for t in s.tasks:
                if t.key == "hit_count":  # a wrong count first
                    inc = res.included
                    hits = int(res.values("hit_rate", 10)[inc].sum() - res.values("hit_rate", 1)[inc].sum())
                    typed("lesson_ans_hit_count", str(hits + 2))
                    wrong(t.key)
                    typed("lesson_ans_hit_count", str(hits))
                elif t.key == "mrr_sandbox":
                    wrong(t.key)  # the list as it starts: MRR = 1
                    press("lesson_sb_down_0")
                    page.get_by_text(text("ui.sandbox_mrr", value="0.500"), exact=True).wait_for()
                elif t.key == "mrr_row":
                    radio(t.key, text(f"opt.mrr_row.{LSteps.mrr_row(res.mean('mrr'))}"))
                elif t.key == "p5_best":
                    # typed, then Check clicked without Enter (what most students do)
                    typed("lesson_ans_p5_best", f"{achievable(res, 'precision', 5):.3f}", enter=False)
                elif t.key == "ndcg_calc":
                    typed("lesson_ans_ndcg_calc", "not a number")
                    wrong(t.key)
                    typed("lesson_ans_ndcg_calc", "0,387")  # a Danish decimal comma is accepted
                elif t.key == "k_predict":
                    typed("lesson_ans_k_predict_k", "10")
                    for m in LSteps.changing_metrics(res, 5, 10):
                        pick("lesson_ans_k_predict_m", METRICS[m].label)
                        page.keyboard.press("Escape")
                        key("lesson_ans_k_predict_m").get_by_text(METRICS[m].label, exact=True).wait_for()
                elif t.key == "label_missing":
                    # the question and the chunk the page offers first: the first in-scope question and
                    # the first chunk of its top 10 not labelled relevant
                    qid = next(q for q, ok in zip(res.query_ids, res.in_scope) if ok)
                    top = res.ranking(qid).head(10)
                    chunk = next(c for c, r in zip(top["id"], top["relevant"]) if not r)
                    expect(key("lesson_ans_label_missing_q").get_by_role("combobox")).to_have_value(re.compile(
                        f"^{re.escape(qid)} · "))
                    expect(key("lesson_ans_label_missing_c").get_by_role("combobox")).to_have_value(chunk)
                    press("lesson_ans_label_missing_label")
                    page.get_by_text(re.compile(f"Labelled {re.escape(chunk)} as relevant")).first.wait_for()
                    golden = GoldenSet(tuple(dataclasses.replace(q, relevant={**q.relevant, chunk: 1})
                                             if q.id == qid else q for q in res.golden), name=res.golden.name)
                    res = evaluate(golden, run)
                    labelled = (qid, chunk)
                    recall = float(res.values("recall", 5)[res.query_ids.index(qid)])
                    typed("lesson_ans_label_missing_r", f"{recall:.3f}")
                elif t.key == "weakest_category":
                    cats = res.by_category(["hit_rate"], ks=[5], ci=False)
                    radio(t.key, cats.sort_values("mean").iloc[0]["category"])
                elif t.key == "hit_not_ndcg":
                    shown = {q.id: f"{q.id} · {q.question}" for q in res.golden}
                    pick("lesson_ans_hit_not_ndcg", text("ui.none"))
                    wrong(t.key)
                    pick("lesson_ans_hit_not_ndcg", shown[LSteps.hit_not_ndcg(res)[0]])
                elif t.key == "why_failed":
                    fails = res.failures(5)
                    qid = fails["query_id"].iloc[0]
                    pick("lesson_ans_why_failed_q", f"{qid} · {fails['question'].iloc[0]}")
                    radio(t.key + "_r", text(t.option_key(LSteps.failure_reason(res, qid, 5))))
                elif t.key == "quiz_mrr":
                    radio(t.key, text(t.option_key("25")))
                    wrong(t.key)
                    radio(t.key, text(t.option_key(t.answer)))
                elif t.answer is not None:   # a fixed choice: the library's right option
                    radio(t.key, text(t.option_key(t.answer)))
                else:
                    raise AssertionError(f"no solution for {t.key}")
                right(t.key)

            # ---- the step is done -----------------------------------------------------------------
            progress_is(i + 1)
            expect(key("lesson_step_pick").get_by_role("combobox")).to_have_value(step_label(i, True))
            assert saved().step_done(s), s.key
            no_exception(f"step {i + 1} done")

        # the label of step 6 is in the shared space's golden set on disk
        assert labelled is not None
        on_disk = Workspace("sample_corpus", root=tmp_path / "workspace").load()
        assert on_disk is not None
        assert next(q for q in on_disk[0] if q.id == labelled[0]).relevant[labelled[1]] == 1
        quiz_score = text("ui.quiz_score", right=len(QUIZ), total=len(QUIZ))
        page.get_by_text(quiz_score, exact=True).wait_for()
        alert(text("ui.finished")).first.wait_for()
        assert all(saved().steps_done())

        # ---- the progress survives a reload ---------------------------------------------------------
        page.reload()
        page.get_by_role("heading", name=text("ui.title"), level=1).wait_for()
        progress_is(n_steps)
        expect(page.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "100")
        page.get_by_role("heading", name=f"{n_steps}. {text(STEPS[-1].title)}", level=3).wait_for()
        page.get_by_text(quiz_score, exact=True).wait_for()
        alert(text("ui.finished")).first.wait_for()
        for t in QUIZ:  # the saved answers are shown again, each with its verdict
            expect(key(f"lesson_ans_{t.key}").locator("input:checked")).to_have_count(1)
            alert(f"{text('ui.right')} {text(t.ok)}").first.wait_for()
        key("lesson_step_pick").locator("input").first.click()
        options = page.get_by_role("option")
        expect(options).to_have_count(n_steps)
        assert [o.inner_text().strip() for o in options.all()] == [step_label(i, True) for i in range(n_steps)]
        page.keyboard.press("Escape")
        no_exception("reload")
