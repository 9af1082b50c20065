"""Lesson 3 in Chromium at 1280x720 (issue 49): a student walks every step in English, then again in Danish, with the
page's own controls, answering each task with the answer the lab's engine computes (a wrong number first: the hint);
the judge step says the server has no judge and passes without it; then the faithfulness exercise: the lesson's code
passes every check in the browser's sandbox (Pyodide) and a wrong version gets its own hint."""
from __future__ import annotations

from pathlib import Path

import pytest

from app_helpers import chromium
from tests.test_browser import CHROMIUM, _wait_idle, server  # noqa: F401  (the fixture)

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]
WAIT = 60_000
EXC = '[data-testid="stException"]'


def test_a_student_walks_lesson_three_in_english_and_danish_and_writes_faithfulness(server, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    from rag_metrics.exercises.catalogue import exercise
    from rag_metrics.exercises.mistakes import MISTAKES
    from rag_metrics.lesson import generation as G
    from rag_metrics.lesson import store_for_space, text

    steps = G.LESSON.steps
    saved = lambda: store_for_space("shared", tmp_path / "workspace", lesson="generation").load()  # noqa: E731
    relevancy = next(s.value for r, s in G.relevancy_rows() if r.item.id == G.RELEVANCY_EXAMPLE)
    numbers = {"l3_supported_n": str(sum(G.example().supported)), "l3_share": f"{G.extra_claim_share():.3f}",
               "l3_rel_value": f"{relevancy:.3f}"}

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.set_default_timeout(WAIT)

        def key(k: str):
            return page.locator(f".st-key-{k}")

        def press(k: str) -> None:
            key(k).locator("button").locator("visible=true").click()

        def alert(s: str):
            return page.locator('[data-testid="stAlert"]').filter(has_text=s)

        def no_exception(where: str) -> None:
            exc = page.locator(EXC)
            assert exc.count() == 0, f"exception at {where}: {exc.first.inner_text()[:2000]}"

        def walk(lang: str) -> None:
            for i, s in enumerate(steps):
                if i:
                    press("lesson_next_top" if i % 2 else "lesson_next_bottom")
                page.get_by_role("heading", name=f"{i + 1}. {text(s.title, lang)}", level=3).wait_for()
                no_exception(f"{lang} step {i + 1}")
                for t in s.tasks:
                    if t.kind == "number":
                        box = key(f"lesson_ans_{t.key}").locator("input")
                        expect(box).to_have_count(1, timeout=WAIT)  # step 4 may load the encoder first
                        if t.key == "l3_share":   # a wrong share first: the hint
                            box.fill("0.5")
                            press(f"lesson_check_{t.key}")
                            alert(text(t.hint, lang)[:40]).first.wait_for()
                        value = numbers[t.key]
                        box.fill(value.replace(".", ",") if lang == "da" else value)
                        box.press("Enter")
                    elif t.kind == "choice":
                        key(f"lesson_ans_{t.key}").get_by_text(text(t.option_key(t.answer), lang),
                                                               exact=True).click()
                    else:   # the judge step: no judge on this server, said so
                        alert(text("ui.l3.no_judge", lang)[:60]).first.wait_for()
                    press(f"lesson_check_{t.key}")
                    alert(f"{text('ui.right', lang)} {text(t.ok, lang)}").first.wait_for()
                    no_exception(t.key)
                    assert saved().done.get(t.key), t.key
            page.get_by_text(text("ui.progress", lang, done=len(steps), total=len(steps)), exact=True).wait_for()

        page.goto(f"{server}/lesson?lesson=generation")
        _wait_idle(page, text("ui.course_lesson", n=3, title=text(G.LESSON.title)))
        walk("en")
        key("lesson_lang").get_by_text("Dansk", exact=True).click()
        page.get_by_text(text("ui.progress", "da", done=len(steps), total=len(steps)), exact=True).wait_for()
        press("lesson_course_generation")   # open the lesson at its first step again
        key("lesson_step_pick").locator("input").first.click()
        page.get_by_role("option", name=f"✓ 1. {text(steps[0].title, 'da')}", exact=True).click()
        walk("da")

        # ---- the faithfulness exercise in the browser's sandbox -------------------------------------------
        page.set_viewport_size({"width": 1280, "height": 1400})
        page.goto(f"{server}/exercises?exercise=faithfulness")
        page.locator(".ex-run").wait_for(timeout=180_000)
        page.locator(".cm-content").wait_for(timeout=60_000)
        root = page.locator(".ex-root")

        def run(code: str) -> tuple[str, str]:
            root.evaluate("(r, code) => r.exerciseEditor.setCode(code)", code)
            page.locator(".ex-run").click()
            page.wait_for_function("r => r.dataset.runNonce && r.dataset.verdictNonce === r.dataset.runNonce",
                                   arg=root.element_handle(), timeout=180_000)
            status = page.locator(".ex-status")
            return status.get_attribute("data-kind") or "", status.inner_text()

        code = exercise("faithfulness").lesson_code
        kind, said = run(code)
        assert kind == "pass" and said.startswith("Bestod ") and said.endswith(" tjek"), said
        kind, said = run(code.replace("any(supports[claim])", "all(supports[claim])"))
        assert kind == "fail", said
        page.get_by_text(MISTAKES["faith_all_chunks"][1].split("**")[0]).first.wait_for(timeout=30_000)  # Markdown
