"""Issue 50 in Chromium: a student keeps the Lesson page open while the teacher resets her progress and
golden set, then clicks on.  Her click used to write her old answers back ("2 of 11 steps done" after a
reload); now the reset holds and the page tells her.  The class is ``./lab class`` on a loopback port;
the teacher's reset is the library call the Class progress page makes (rag_metrics.lesson.teacher,
driven through its page in tests/test_app_teacher_versions.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_helpers import CHROMIUM, chromium, give_to_app, lesson_progress, wait_for_cookies, wait_until_idle
from app_helpers import class_server as run_class_server

KEY = "teacher key for the reset test"
WAIT = 120_000  # ms: the worst case on a loaded machine; a rerun takes well under a second

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]


@pytest.fixture
def class_server(tmp_path, app_cache_dir):
    with run_class_server(tmp_path, app_cache_dir, KEY) as served:
        yield served


def test_the_teachers_reset_holds_when_the_student_clicks_on(class_server):
    from rag_metrics.lesson import Progress, store_for_space, teacher, text
    from rag_metrics.server.seats import seat_space
    from rag_metrics.workspace.store import Workspace

    url, ws = class_server
    with chromium() as browser:
        page = browser.new_page()
        page.set_default_timeout(WAIT)
        page.goto(url)
        page.get_by_text("My seat").first.wait_for()
        wait_for_cookies(page.context, {"rag_metrics_seat"})
        seats = json.loads((Path(ws) / ".class" / "seats.json").read_text())["seats"]
        assert len(seats) == 1
        space = seat_space(seats[0]["id"])
        store = store_for_space(space, ws)
        store.save(lesson_progress(2))                     # 2 of 11 steps done, on step 3
        give_to_app(ws)

        page.goto(f"{url}/lesson")                          # the Lesson page, kept open
        page.get_by_text(text("ui.progress", done=2, total=11), exact=True).wait_for()
        wait_until_idle(page)

        assert teacher.reset_student(space, "sample_corpus", root=ws) == ["progress", "golden set"]
        give_to_app(ws)
        assert store.load() == Progress()

        page.locator(".st-key-lesson_prev_top button").locator("visible=true").click()  # she clicks on
        notice = page.locator('[data-testid="stAlert"]').filter(has_text=text("ui.teacher_reset_progress"))
        notice.first.wait_for()
        page.get_by_text(text("ui.progress", done=0, total=11), exact=True).wait_for()
        wait_until_idle(page)
        assert store.load() == Progress()                  # nothing of hers written back
        assert not Workspace("sample_corpus", ws, space=space).path.exists()

        page.reload()
        page.get_by_text(text("ui.progress", done=0, total=11), exact=True).wait_for()
        wait_until_idle(page)
        assert store.load() == Progress()
