"""Real-browser test of class seats: the command ``./lab class`` builds, on a loopback port, in
Chromium.  The seat cookie is written by the page's script and sent back by the browser (AppTest
cannot show that): a second tab and a reload keep the seat, another browser gets another one, the
teacher's sign-in lasts for that browser's new tab, and a student reaching the Class page by URL
is refused."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_helpers import CHROMIUM, chromium, sign_in_as_teacher, wait_for_cookies, wait_until_idle
from app_helpers import class_server as run_class_server

ROOT = Path(__file__).resolve().parents[1]
KEY = "teacher key for the browser test"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]


@pytest.fixture
def class_server(tmp_path, app_cache_dir):
    with run_class_server(tmp_path, app_cache_dir, KEY) as served:
        yield served


def _seats(ws: Path) -> list[dict]:
    return json.loads((ws / ".class" / "seats.json").read_text())["seats"]


def _open(page, url: str, text: str = "My seat", cookie: str = "rag_metrics_seat") -> None:
    page.goto(url)
    page.get_by_text(text).first.wait_for(timeout=120_000)
    wait_for_cookies(page.context, {cookie})


def test_seats_and_sign_in_in_a_real_browser(class_server):
    url, ws = class_server
    with chromium() as browser:
        student = browser.new_context()
        page = student.new_page()
        _open(page, url)
        cookie = next(c for c in student.cookies() if c["name"] == "rag_metrics_seat")
        assert len(cookie["value"]) >= 43 and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
        assert len(_seats(ws)) == 1
        assert cookie["value"] not in page.url and cookie["value"] not in page.inner_text("body")  # never shown
        _open(student.new_page(), url)  # another tab
        page.reload()
        page.get_by_text("My seat").first.wait_for(timeout=60_000)
        wait_until_idle(page)  # the reloaded page's run has finished (no seat taken meanwhile)
        assert len(_seats(ws)) == 1
        teacher = browser.new_context()
        tpage = teacher.new_page()
        _open(tpage, url)
        assert len(_seats(ws)) == 2
        sign_in_as_teacher(tpage, KEY, 60)  # "Signed in", then the HttpOnly cookie
        # issue 27: the teacher's sign-in is an HttpOnly cookie (set by the server, never by the page, never
        # readable by a script), and the teacher's browser is no seat (its empty seat was given back)
        tcookie = next(c for c in teacher.cookies() if c["name"] == "rag_metrics_teacher")
        assert tcookie["httpOnly"] and tcookie["sameSite"] == "Strict"
        assert tcookie["value"] not in tpage.content() and "rag_metrics_teacher" not in tpage.evaluate(
            "document.cookie")
        assert len(_seats(ws)) == 1
        other = teacher.new_page()
        _open(other, f"{url}/roster", "seat(s)", "rag_metrics_teacher")  # the teacher's new tab: still the teacher
        _open(page, f"{url}/roster", "Only the teacher")  # a student, by URL: refused


# what the page's script writes into the proof cookie, kept (in the tab's session storage) for the test
_KEEP_PROOF_JS = """(() => {
  const d = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie');
  Object.defineProperty(Document.prototype, 'cookie', {configurable: true, get() { return d.get.call(this); },
    set(v) {
      const kept = v.startsWith('rag_metrics_proof=') ? v.split(';')[0].slice(18) : '';
      if (kept) { sessionStorage.setItem('seen_proof', kept); }  // not the app's deletion (an empty value)
      d.set.call(this, v);
    }});
})();"""


def test_a_real_browser_proves_itself_and_gets_its_seat(class_server, tmp_path):
    """Issue 27: a cookieless browser first gets the challenge page; its script solves the challenge
    (the default ``lab.budgets.seat_proof_bits``), keeps the answer in a cookie and reloads, and the
    seat is made from that answer, with nothing typed or clicked.  The answer is then used up and
    forgotten by the browser; sent again, it makes no second seat."""
    url, ws = class_server
    with chromium() as browser:
        ctx = browser.new_context()
        page = ctx.new_page()
        page.add_init_script(_KEEP_PROOF_JS)
        _open(page, url)
        assert len(_seats(ws)) == 1
        used = json.loads((ws / ".class" / "proofs.json").read_text())
        answer = page.evaluate("sessionStorage.getItem('seen_proof')")
        assert len(used) == 1 and answer and answer.split(".")[2] in used  # the seat came from the browser's proof
        wait_until_idle(page)
        assert "rag_metrics_proof" not in {c["name"] for c in ctx.cookies()}  # used: forgotten
        replay = browser.new_context()  # another browser sending the same answer
        host = url.split("//", 1)[1].split(":")[0]
        replay.add_cookies([{"name": "rag_metrics_proof", "value": answer, "domain": host, "path": "/"}])
        rpage = replay.new_page()  # as on http://<lan address>: no crypto.subtle, the script's own SHA-256
        rpage.add_init_script("Object.defineProperty(window, 'isSecureContext', {get: () => false});")
        _open(rpage, url)
        assert len(_seats(ws)) == 2  # its seat came from a proof of its own, not from the replayed answer
        assert len(json.loads((ws / ".class" / "proofs.json").read_text())) == 2
        assert "seat proof refused for 127.0.0.1: the answer was used already" in \
            (tmp_path / "server.log").read_text()
