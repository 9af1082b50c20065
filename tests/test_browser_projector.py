"""The lesson in Chromium (issue 17): a student checks an answer in the browser.

Issue 17's projector check (no metric card clipped at 1024x768 and 1280x720, and the README's Lesson
and Class progress screenshots) is made in ``test_browser.py``'s walk through every page:
``test_no_clipped_metric_on_a_projector`` there.
"""
from __future__ import annotations

import pytest

from tests.test_browser import CHROMIUM, _wait_idle, server  # noqa: F401  (the fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]

def test_a_student_checks_an_answer_in_chromium(server, browser, tmp_path):  # noqa: F811
    """In the real browser: a wrong answer shows the hint, the right one is saved in the space, the
    Danish switch translates the page, and the teacher's page opens."""
    from rag_metrics.lesson import TASKS, store_for_space, text

    page = browser.new_page(viewport={"width": 1280, "height": 1600})
    try:
        page.goto(f"{server}/lesson")
        _wait_idle(page, text("ui.title"))
        choice = page.locator(".st-key-lesson_ans_why_pick")
        choice.get_by_text(text("opt.why_pick.hit_rate"), exact=True).click()
        page.locator(".st-key-lesson_check_why_pick button").click()
        page.get_by_text(text(TASKS["why_pick"].hint)).first.wait_for(timeout=60_000)
        choice.get_by_text(text("opt.why_pick.mrr"), exact=True).click()
        page.locator(".st-key-lesson_check_why_pick button").click()
        page.get_by_text(text(TASKS["why_pick"].ok)).first.wait_for(timeout=60_000)
        assert store_for_space("shared", tmp_path / "workspace").load().done["why_pick"]
        page.get_by_text("Dansk", exact=True).click()
        _wait_idle(page, text("ui.title", "da"))
        assert page.locator(".st-key-lesson_check_why_pick button").inner_text().strip() == "Tjek"
        assert store_for_space("shared", tmp_path / "workspace").load().language == "da"
        page.goto(f"{server}/class_progress")
        _wait_idle(page, "Class progress")
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.locator('[data-testid="stDataFrame"]').count() == 1
    finally:
        page.close()
