"""Lesson 4, "Building an automated evaluation system", walked in Chromium (issue 49): opened by its link
(``/lesson?lesson=system``), its six steps walked with the page's Next buttons at 1280x720, every task answered with
the answer the library computes for the sample and the dense system (a wrong one first for the computed checks: the
hint, nothing saved), the CI job shown as the library writes it, the lesson's own progress saved; then the course
switched to Danish and the steps walked back with Previous: Danish titles, verdicts and job comments, no English
body.  At every step, in both languages, nothing is clipped at 1024x768 and 1280x720 (:mod:`clipping`; screenshots
in ``screenshots/lesson-system``)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from app_helpers import chromium
from clipping import check_sizes, report
from tests.test_browser import CHROMIUM, server  # noqa: F401  (the fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]

WAIT = 60_000
EXC = '[data-testid="stException"]'


def test_a_student_walks_lesson_four_in_english_and_danish(server, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    from app_helpers import library_result
    from rag_metrics.lesson import LessonContext, store_for_space, text
    from rag_metrics.lesson import system as S

    steps, tasks = S.LESSON.steps, S.LESSON.tasks
    ctx = LessonContext(library_result("dense"), 5)   # what the app shows by default: the sample, dense, K = 5
    cmp = S.comparison(ctx)
    delta, verdict = float(cmp.row["delta"]), cmp.gate.verdict
    more = max(S.needed(ctx) - cmp.gate.n, 0)
    saved = lambda: store_for_space("shared", tmp_path / "workspace", lesson="system").load()  # noqa: E731
    shots = Path(os.environ.get("RAG_METRICS_SCREENSHOT_DIR") or tmp_path / "screenshots") / "lesson-system"
    shots.mkdir(parents=True, exist_ok=True)
    found: dict = {}
    scrolled: dict = {}

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
            key(button_key).locator("button").locator("visible=true").click()

        def radio(widget_key: str, option_text: str) -> None:
            key(widget_key).get_by_text(option_text, exact=True).click()

        def typed(widget_key: str, value: str) -> None:
            box = key(widget_key).locator("input")
            expect(box).to_have_count(1)
            box.fill(value)
            box.press("Enter")

        def check(task_key: str, right: bool) -> None:
            press(f"lesson_check_{task_key}")
            t = tasks[task_key]
            if right:
                alert(f"{text('ui.right')} {text(t.ok)}").first.wait_for()
            else:
                alert(text("ui.wrong", hint=text(t.hint))).first.wait_for()
            no_exception(task_key)
            assert bool(saved().done.get(task_key)) == right, task_key

        def heading(i: int, lang: str):
            return page.get_by_role("heading", name=f"{i + 1}. {text(steps[i].title, lang)}", level=3)

        # ---- English: open by the link, walk forward, answer ------------------------------------------
        page.goto(f"{server}/lesson?lesson=system")
        page.get_by_role("heading", name=text("ui.course_lesson", n=4, title=text("lesson.system.title")),
                         level=1).wait_for(timeout=120_000)
        for i, s in enumerate(steps):
            if i:
                press("lesson_next_top" if i % 2 else "lesson_next_bottom")
            heading(i, "en").wait_for()
            no_exception(f"step {i + 1}")
            check_sizes(page, "lesson", f"system-en-{i + 1}", found, scrolled, shots)  # ends at 1280x720
            if s.key == "l4_ci":   # the job, as the library writes it for this setup
                job = S.ci_workflow(S.CiSetup(retriever="dense", metrics=("mrr", "ndcg"), k=5), "en")
                shown = page.locator('[data-testid="stCode"]').first.inner_text()
                assert [ln.rstrip() for ln in shown.strip().splitlines()] == job.strip().splitlines()
            for t in s.tasks:
                if t.key == "l4_mean_diff":
                    typed(f"lesson_ans_{t.key}", f"{-delta:.3f}")
                    check(t.key, False)
                    typed(f"lesson_ans_{t.key}", f"{delta:.3f}")
                elif t.key == "l4_more":
                    typed(f"lesson_ans_{t.key}", str(more + 1))
                    check(t.key, False)
                    typed(f"lesson_ans_{t.key}", str(more))
                elif t.key == "l4_verdict":
                    wrong = next(o for o in t.options if o != verdict)
                    radio(f"lesson_ans_{t.key}", text(t.option_key(wrong)))
                    check(t.key, False)
                    radio(f"lesson_ans_{t.key}", text(t.option_key(verdict)))
                else:
                    radio(f"lesson_ans_{t.key}", text(t.option_key(t.answer)))
                check(t.key, True)
        assert set(saved().done) == set(tasks) and all(saved().done.values())

        # ---- Danish: the course's language, the steps walked back ---------------------------------------
        key("lesson_lang").get_by_text("Dansk", exact=True).click()
        heading(len(steps) - 1, "da").wait_for()
        for i in reversed(range(len(steps))):
            if i < len(steps) - 1:
                press("lesson_prev_bottom" if i % 2 else "lesson_prev_top")
            heading(i, "da").wait_for()
            no_exception(f"Danish step {i + 1}")
            for t in steps[i].tasks:   # done in English: the verdict is shown again, in Danish
                alert(f"{text('ui.right', 'da')} {text(t.ok, 'da')}").first.wait_for()
            body = page.locator('[data-testid="stMain"]').inner_text()
            assert text(steps[i].body, "en").split("\n")[0][:50] not in body
            if steps[i].key == "l4_ci":
                shown = page.locator('[data-testid="stCode"]').first.inner_text()
                assert text("ui.l4.yaml_gate", "da") in shown and text("ui.l4.yaml_gate", "en") not in shown
            check_sizes(page, "lesson", f"system-da-{i + 1}", found, scrolled, shots)
    assert not any(found.values()), report(found, scrolled)
