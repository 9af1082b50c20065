"""Readable on a projector, in Danish and as the teacher: nothing clipped at 1024x768 and 1280x720 (issue 27).

The lesson pages (Lesson, Exercises) in Danish, and, as the teacher in class mode, Class progress and the
Class page, at both sizes: no visible text is cut, as :mod:`clipping` measures it on the real layout.
Every page of the app in English is checked the same way by ``test_browser.py``'s page walk (one walk
for its two tests).  Screenshots: ``$RAG_METRICS_SCREENSHOT_DIR``, else ``/tmp/projector-shots``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app_helpers import (
    CHROMIUM,
    class_server,
    give_to_app,
    lesson_progress,
    sign_in_as_teacher,
    streamlit_server,
    wait_until_idle,
)
from clipping import SIZES, check_sizes, report

pytestmark = [
    pytest.mark.browser,
    # Chromium, a server and a class deployment, as test_browser_class.py and test_browser_seats.py run in the
    # parallel part; no Pyodide (what the sandbox's 5-second limit measures), so not heavy (tests/tiers.py)
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]

TEACHER_PAGES = ["class_progress", "roster"]
LESSON_PAGES = ["lesson", "exercises"]  # in Danish
KEY = "projector teacher key"


def _seed_seats(ws: Path) -> None:
    """Three named seats part-way through the lesson and its quiz (what Class progress shows a teacher)."""
    from rag_metrics.lesson import store_for_space
    from rag_metrics.server.seats import SeatRegistry
    from rag_metrics.workspace.store import ensure_space

    seats = SeatRegistry(ws)
    for name, n_steps, quiz in [("Ana Sofie Kristensen-Bach", 11, ("4", "0.4", "recall", "miss", "supported")),
                                ("Bo", 6, ("4",)), ("Clara", 3, ())]:
        seat, _ = seats.create(cap=30)
        seats.rename(seat.id, name)
        ensure_space(seat.space, ws)
        store_for_space(seat.space, ws).save(lesson_progress(n_steps, quiz))


def _shots() -> Path:
    out = Path(os.environ.get("RAG_METRICS_SCREENSHOT_DIR") or "/tmp/projector-shots")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _check(page, url: str, path: str, tag: str, found: dict, scrolled: dict) -> None:
    """Open ``path`` (at the smaller size), then check it at both sizes (:func:`clipping.check_sizes`)."""
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    page.goto(f"{url}/{path}")
    page.locator("h1").first.wait_for(timeout=180_000)
    check_sizes(page, path, tag, found, scrolled, _shots())


def test_nothing_clipped_on_the_danish_lesson_and_the_teachers_pages(browser, tmp_path_factory, app_cache_dir):
    found: dict[str, list[dict]] = {}
    scrolled: dict[str, list[str]] = {}
    tmp = tmp_path_factory.mktemp("projector")
    with streamlit_server(tmp, app_cache_dir, tmp / "workspace") as url:
        page = browser.new_page()
        # the lesson in Danish (the Lesson's language switch; it also picks the Danish sample corpus)
        page.goto(f"{url}/lesson")
        page.locator("h1").first.wait_for(timeout=120_000)
        wait_until_idle(page, 60)
        page.get_by_text("Dansk", exact=True).click()
        page.get_by_role("heading", level=1).filter(has_text="Lektion").first.wait_for(timeout=120_000)
        for path in LESSON_PAGES:
            _check(page, url, path, "da", found, scrolled)
        page.close()
    ctmp = tmp_path_factory.mktemp("projector_class")
    with class_server(ctmp, app_cache_dir, KEY) as (url, ws):
        _seed_seats(ws)
        give_to_app(ws)  # written as root: the app's unprivileged user must own it
        page = browser.new_page(viewport={"width": 1280, "height": 1400})  # the sign-in's button in view
        page.goto(f"{url}/lesson")
        page.locator("h1").first.wait_for(timeout=180_000)
        wait_until_idle(page, 120)
        sign_in_as_teacher(page, KEY)
        for path in TEACHER_PAGES:
            _check(page, url, path, "teacher", found, scrolled)
        page.close()
    print(report(found, scrolled))
    assert len(found) == 2 * (len(LESSON_PAGES) + len(TEACHER_PAGES))
    clipped = {where: bad for where, bad in found.items() if bad}
    assert not clipped, "clipped on a projector:\n" + report(clipped, {}) + "\n" + json.dumps(clipped)[:3000]
