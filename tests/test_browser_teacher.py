"""The teacher in control, in a real browser on ``./lab class`` (issue 50): the one-time sign-in link the
command prints signs the operator in once and leaves no seat; Class progress shows whole 40-character
names and every progress column at 1024x768 and 1280x720 (screenshots: ``$RAG_METRICS_SCREENSHOT_DIR``,
else ``/tmp/projector-shots``); a tab on Class progress stops at once when the teacher signs out in
another tab; the teacher-session route refuses another site's requests on the real server."""
from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from app_helpers import CHROMIUM, chromium, give_to_app, lesson_progress, wait_for_cookies, wait_until_idle
from app_helpers import class_server as run_class_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]

KEY = "teacher key for the control test"
NAMES = ["Maximiliana Alexandrova-Whitfield Smythe", "Bo", "Jean-Baptiste Emmanuel Zorg de la Montagne"[:40]]
#: The grid's column model (glide's, read from React, as tests/clipping.py does) and each name's width in its font.
GRID_JS = """(names) => {
  const cv = document.querySelector('canvas[data-testid="data-grid-canvas"]');
  const key = Object.keys(cv).find(k => k.startsWith('__reactFiber'));
  let f = cv[key], cols = null, theme = null;
  for (let i = 0; f && i < 20; i++, f = f.return) {
    const p = f.memoizedProps;
    if (p && Array.isArray(p.columns) && p.headerHeight !== undefined) { cols = p.columns; theme = p.theme; break; }
  }
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = (theme.baseFontStyle || '400 14px') + ' ' + theme.fontFamily;
  return {cols: cols.map(c => [c.title, c.width]), grid: cv.getBoundingClientRect().width,
          pad: theme.cellHorizontalPadding, names: names.map(n => ctx.measureText(n).width)};
}"""


@pytest.fixture
def class_server(tmp_path, app_cache_dir):
    with run_class_server(tmp_path, app_cache_dir, KEY) as served:
        yield served + (tmp_path / "server.log",)


def _seed(ws: Path) -> None:
    from rag_metrics.lesson import store_for_space
    from rag_metrics.server.seats import SeatRegistry
    from rag_metrics.workspace.store import ensure_space

    seats = SeatRegistry(ws)
    for i, name in enumerate(NAMES):
        seat, _ = seats.create(cap=30)
        seats.rename(seat.id, name)
        ensure_space(seat.space, ws)
        store_for_space(seat.space, ws).save(lesson_progress(3 * i + 2, ("4", "0.4")[:i]))
    give_to_app(ws)


def _post(url: str, headers: dict[str, str]) -> int:
    req = urllib.request.Request(f"{url}/_lab/teacher-session", data=b"end=1", method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded", **headers})
    try:
        return urllib.request.urlopen(req, timeout=30).status
    except urllib.error.HTTPError as e:
        return e.code


def test_the_teacher_in_control_in_a_real_browser(class_server):
    url, ws, log = class_server
    _seed(ws)
    host = url.removeprefix("http://")
    assert _post(url, {"Origin": "http://evil.example"}) == 403  # a page on another site cannot sign out
    assert _post(url, {"Sec-Fetch-Site": "cross-site", "Origin": url}) == 403
    assert _post(url, {"Origin": url, "Host": host}) == 204
    deadline = time.monotonic() + 60
    while not (m := re.search(r"one-time sign-in link.*?(http://\S+teacher_link=\S+)", log.read_text())):
        assert time.monotonic() < deadline, log.read_text()[-2000:]
        time.sleep(0.2)
    link = m.group(1)
    shots = Path(os.environ.get("RAG_METRICS_SCREENSHOT_DIR") or "/tmp/projector-shots")
    shots.mkdir(parents=True, exist_ok=True)
    with chromium() as browser:
        teacher = browser.new_context(viewport={"width": 1024, "height": 768})
        page = teacher.new_page()
        page.goto(link)
        page.get_by_text("Signed in as the teacher with the one-time link").first.wait_for(timeout=120_000)
        assert "teacher_link" not in page.url  # the token leaves the address bar
        wait_for_cookies(teacher, {"rag_metrics_teacher"})  # the page's script exchanged its claim for the cookie
        page.goto(f"{url}/class_progress")
        page.get_by_text("Export progress as CSV").first.wait_for(timeout=120_000)
        for w, h in ((1024, 768), (1280, 720)):
            page.set_viewport_size({"width": w, "height": h})
            wait_until_idle(page, 60)
            grid = page.evaluate(GRID_JS, NAMES)
            page.screenshot(path=str(shots / f"class_progress-teacher-control-{w}x{h}.png"))
            widths = dict(grid["cols"])
            assert max(grid["names"]) + 2 * grid["pad"] <= widths["Seat"], (w, grid)  # every name whole
            shown = 0.0
            for title, width in grid["cols"]:
                shown += width
                if title in ("Seat", "Steps", "Done", "Quiz"):  # the progress itself, never behind a scroll
                    assert shown <= grid["grid"] + 1, (w, title, grid)
        assert "rag_metrics_seat" not in {c["name"] for c in teacher.cookies()}  # the teacher's browser: no seat
        assert len(json.loads((ws / ".class" / "seats.json").read_text())["seats"]) == len(NAMES)

        other = teacher.new_page()  # the teacher signs out in another tab
        other.goto(f"{url}/lesson")
        other.get_by_role("button", name="Sign out").first.click()
        other.get_by_text("Signed out everywhere").first.wait_for(timeout=60_000)
        # the Class progress tab, untouched, stops within a refresh (5 s) instead of showing the class
        page.get_by_text("signed out as the teacher").first.wait_for(timeout=30_000)
        assert page.get_by_text("Export progress as CSV").count() == 0

        again = browser.new_context().new_page()  # the link works once
        again.goto(link)
        again.get_by_text("This sign-in link was used already").first.wait_for(timeout=120_000)
    lines = log.read_text()
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ INFO rag_metrics\.class: class: teacher sign-in from "
                     r"\S+: signed in \(one-time link\)", lines)
    assert "teacher sign-out from" in lines and KEY not in lines
