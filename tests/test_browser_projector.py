"""The lesson in Chromium, and readable on a projector (issue 17).

At 1024x768 and 1280x720 no metric card's label or value is clipped ("Hi… 0…"), measured on the real
layout: the text's own box must fit inside every ancestor that hides overflow, up to its card.  Also
saves the Lesson page and the teacher's Class progress page at 1280x720 (the README's screenshots;
$RAG_METRICS_SCREENSHOT_DIR to keep them), and checks an answer in the browser.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.app_helpers import lesson_progress, streamlit_server
from tests.test_browser import CHROMIUM, _wait_idle, server  # noqa: F401  (the fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]

#: Labels and values of metric cards whose text is cut by an ancestor that hides overflow (or that
#: spill out of their card).
_CLIPPED_JS = """() => {
  const bad = [];
  document.querySelectorAll('[data-testid="stMetric"]').forEach(card => {
    const cardBox = card.getBoundingClientRect();
    card.querySelectorAll('[data-testid="stMetricValue"], [data-testid="stMetricLabel"]').forEach(el => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const text = range.getBoundingClientRect();
      let clipped = text.right > cardBox.right + 1 || text.left < cardBox.left - 1;
      for (let a = el; a && a !== card; a = a.parentElement) {
        const cs = getComputedStyle(a);
        if (cs.overflowX !== 'visible' || cs.textOverflow === 'ellipsis') {
          const box = a.getBoundingClientRect();
          if (text.right > box.right + 1 || text.left < box.left - 1) clipped = true;
        }
      }
      if (clipped) bad.push(el.innerText.trim());
    });
  });
  return bad;
}"""


def _seed_class(root: Path) -> None:
    """Three students part-way through the lesson (what the teacher's screenshot shows)."""
    from rag_metrics.lesson import store_for_space
    from rag_metrics.workspace.store import ensure_space

    for name, n_steps, quiz in [("Seat 01 Ana", 11, ("4", "0.4", "recall", "miss", "supported")),
                                ("Seat 02 Bo", 6, ()), ("Seat 03 Clara", 3, ())]:
        ensure_space(name, root)
        store_for_space(name, root).save(lesson_progress(n_steps, quiz))


@pytest.fixture(scope="module")
def seeded_server(tmp_path_factory, app_cache_dir):
    """One server for both projector sizes, on a workspace with :func:`_seed_class`'s students (the
    tests only read it)."""
    tmp = tmp_path_factory.mktemp("projector_server")
    _seed_class(tmp / "workspace")
    with streamlit_server(tmp, app_cache_dir, tmp / "workspace") as url:
        yield url


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
def test_no_clipped_metric_on_a_projector(seeded_server, browser, tmp_path, size):
    url = seeded_server
    out = Path(os.environ.get("RAG_METRICS_SCREENSHOT_DIR") or tmp_path / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    w, h = size
    page = browser.new_page(viewport={"width": w, "height": h})
    try:
        for path, title in [("", "Dashboard"), ("lesson", "Lesson: measuring retrieval"), ("ragas",
                            "RAGAS context metrics")]:
            page.goto(f"{url}/{path}")
            _wait_idle(page, title)
            assert page.locator('[data-testid="stException"]').count() == 0
            page.locator('[data-testid="stMetric"]').first.wait_for(timeout=120_000)
            _wait_idle(page, title)
            clipped = page.evaluate(_CLIPPED_JS)
            assert not clipped, f"/{path} at {w}x{h}: clipped metric text {clipped}"
            if (w, h) == (1280, 720) and path == "lesson":
                page.screenshot(path=str(out / "screenshot-lesson.png"))
        if (w, h) == (1280, 720):
            page.goto(f"{url}/class_progress")
            _wait_idle(page, "Class progress")
            assert page.locator('[data-testid="stException"]').count() == 0
            page.screenshot(path=str(out / "screenshot-class.png"))
    finally:
        page.close()


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
