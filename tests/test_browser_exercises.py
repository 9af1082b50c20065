"""Real-browser tests of the code exercises (issue 26): the class server ``./lab class`` starts (app
processes behind nginx when nginx is installed), headless Chromium, and every request that is not
to that server aborted (no internet, no CDN).  Student code runs in Pyodide in a Web Worker inside a
sandboxed, opaque-origin iframe; the server only grades the values the browser reports.

- the lesson's own code passes every exercise's checks; wrong code fails with its hint;
- an endless loop is stopped by the watchdog and the page stays usable;
- code that tries ``js`` (``fetch``, ``XMLHttpRequest``, a new WebAssembly memory), ``pyodide.ffi`` or any
  JavaScript object still held by Python, ``open()`` on server paths or a loop of large allocations
  reaches nothing, stays under the memory cap, and the page keeps working;
- a second student never sees the first one's code; the teacher sees attempts and the code.
"""
from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from app_helpers import CHROMIUM, sign_in_as_teacher, wait_until_idle
from app_helpers import class_server as run_class_server
from rag_metrics.exercises.catalogue import exercises_for_lesson
from rag_metrics.exercises.mistakes import MISTAKES

ROOT = Path(__file__).resolve().parents[1]
KEY = "teacher key for the exercises test"
#: Lesson 2's exercises (the catalogue holds every lesson's; the picker lists one lesson's at a time).
EXERCISES = exercises_for_lesson("retrieval")
LESSON = {e.name: e.lesson_code for e in EXERCISES}

pytestmark = [
    pytest.mark.browser,
    # a whole class (nginx, two app processes) plus several Chromium pages, each loading Pyodide: after the
    # parallel part, beside the lint only (tests/tiers.py)
    pytest.mark.heavy,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
    pytest.mark.skipif(not (ROOT / "static" / "vendor" / "pyodide" / "pyodide.mjs").exists(),
                       reason="the exercises' browser assets are not built (./lab test builds them: npm ci in web/)"),
]


@pytest.fixture(scope="module")
def class_server(tmp_path_factory, app_cache_dir):
    """``./lab class`` on a loopback port, shared by the module's tests."""
    with run_class_server(tmp_path_factory.mktemp("exercises_class"), app_cache_dir, KEY) as served:
        yield served


class Student:
    """One browser context (one seat) whose requests to anything but the app are aborted and logged."""

    def __init__(self, browser, url: str):
        self.url = url
        # tall enough that the sidebar's opened teacher sign-in fits: its button below a 720 px fold could not be
        # scrolled into view on a loaded machine ("element is outside of the viewport")
        self.context = browser.new_context(viewport={"width": 1280, "height": 1400})
        self.requests: list[str] = []
        self.aborted: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()

    def _route(self, route):
        u = route.request.url
        if u.startswith(self.url + "/") or u == self.url:
            self.requests.append(u)
            return route.continue_()
        if not u.startswith("data:"):
            self.aborted.append(u)
        return route.abort()

    def open(self, name: str) -> None:
        self.page.goto(f"{self.url}/exercises?exercise={name}")
        self.page.locator(".ex-run").wait_for(timeout=180_000)
        self.page.locator(".cm-content").wait_for(timeout=60_000)
        assert self.root.evaluate("r => r.exerciseEditor.data.doc_id").startswith(name + ":")

    @property
    def root(self):
        return self.page.locator(".ex-root")

    def run(self, code: str) -> dict:
        """Put ``code`` into the editor, press "Run checks", wait for the verdict of that run; returns
        ``{"kind", "text", "report"}`` (the report the browser sent)."""
        self.root.evaluate("(r, code) => r.exerciseEditor.setCode(code)", code)
        self.page.locator(".ex-run").click()
        handle = self.root.element_handle()
        self.page.wait_for_function("r => r.dataset.runNonce && r.dataset.verdictNonce === r.dataset.runNonce",
                                    arg=handle, timeout=180_000)
        status = self.page.locator(".ex-status")
        return {"kind": status.get_attribute("data-kind"), "text": status.inner_text(),
                "report": self.root.evaluate("r => r.exerciseEditor.lastReport")}

    def pick(self, name: str) -> None:
        """Switch exercise with the page's picker (the editor and its warm sandbox stay mounted)."""
        title = next(e for e in EXERCISES if e.name == name).title["en"]
        _choose(self.page, "Exercise", lambda options: options.filter(has_text=title).first)
        self.page.wait_for_function(
            "([r, n]) => r.exerciseEditor && r.exerciseEditor.data.doc_id.startsWith(n + ':')",
            arg=[self.root.element_handle(), name], timeout=120_000)

    def close(self) -> None:
        self.context.close()


def _open(page, label: str, which=lambda options: options.first, within=None) -> None:
    """Open the select box ``label`` (the first on the page, or ``within`` a part of it) until its option
    ``which(options)`` shows (the list opens once the page is idle: clicked again until it does).  The page
    is first let come to rest: a rerun still drawing would close the list before its option is clicked."""
    wait_until_idle(page)
    for _ in range(8):
        (within or page).get_by_label(label, exact=True).first.click()
        try:
            which(page.get_by_role("option")).wait_for(timeout=8_000)
            return
        except Exception:  # noqa: BLE001 - not open yet
            page.keyboard.press("Escape")
            page.wait_for_timeout(1000)
    which(page.get_by_role("option")).wait_for(timeout=8_000)  # never opened: fail here, saying what is missing


def _choose(page, label: str, which, within=None) -> None:
    """Open the select box ``label`` (see :func:`_open`) and click the option ``which(options)``; opened
    again when the list closed before the click (a late rerun of a loaded page)."""
    for attempt in range(3):
        _open(page, label, which, within)
        try:
            which(page.get_by_role("option")).click(timeout=10_000)
            return
        except Exception:  # the list closed under the pointer
            if attempt == 2:
                raise
            page.keyboard.press("Escape")


def _value(out: dict):
    """What the student's function returned in a run's first check (from the report the browser sent)."""
    result = json.loads(out["report"]["result"])
    return next(iter(result["results"].values()))["value"]


def _wrong(name: str, old: str, new: str) -> str:
    code = LESSON[name]
    assert old in code, old
    return code.replace(old, new)


def test_the_lessons_code_passes_every_exercise_and_wrong_code_gets_its_hint(class_server, browser):
    url, _ = class_server
    s = Student(browser, url)
    try:
        s.open(EXERCISES[0].name)
        for i, ex in enumerate(EXERCISES):
            if i:
                s.pick(ex.name)
            out = s.run(LESSON[ex.name])
            assert out["kind"] == "pass", (ex.name, out["text"], out["report"])
            assert out["text"].startswith("Passed ") and out["text"].endswith(" checks")
            n = out["text"].split()[1]
            assert out["text"] == f"Passed {n} of {n} checks"
        # wrong code: the first failure names the likely mistake
        for name, old, new, mistake in [
            ("hit_rate_at_k", "top_k=k)", "top_k=k + 1)", "k_plus_one"),
            ("recall_at_k", "/ len(relevant))", "/ k)", "divide_by_k"),
        ]:
            s.pick(name)
            out = s.run(_wrong(name, old, new))
            assert out["kind"] == "fail", out
            hint = MISTAKES[mistake][0]
            s.page.get_by_text(hint[:40]).first.wait_for(timeout=30_000)
            assert "First failing check" in s.page.inner_text("body")
        # a syntax error, by line, in plain words
        out = s.run("def hit_rate_at_k(golden_dataset, retriever, k=5):\n    return (1\n")
        assert out["kind"] == "fail"
        s.page.get_by_text("syntax error on line").first.wait_for(timeout=30_000)
        assert not s.aborted or all("fonts.gstatic" in u or "googleapis" in u for u in s.aborted), s.aborted
    finally:
        s.close()


def test_an_endless_loop_is_stopped_and_hostile_code_reaches_nothing(class_server, browser):
    url, _ = class_server
    s = Student(browser, url)
    name = "hit_rate_at_k"
    try:
        s.open(name)
        t0 = time.monotonic()
        out = s.run(f"def {name}(golden_dataset, retriever, k=5):\n    while True:\n        pass\n")
        assert out["kind"] == "stopped" and out["text"] == "stopped: ran longer than 5 s", out
        assert out["report"]["status"] == "timeout"
        assert time.monotonic() - t0 < 120
        s.page.get_by_text("Your code was stopped").first.wait_for(timeout=30_000)
        assert s.run(LESSON[name])["kind"] == "pass"  # the page (and a fresh runner) still work

        # each run gets a fresh interpreter: the next worker starts from the snapshot the first worker took
        # right after start-up (worker.js), so nothing one run leaves behind reaches the next
        s.page.wait_for_function("r => r.dataset.pythonReady === '1'", arg=s.root.element_handle(), timeout=120_000)
        assert s.root.evaluate("r => r.exerciseEditor.loadedHow") == "snapshot"
        left = s.run(f"import builtins, json, sys\n\ndef {name}(golden_dataset, retriever, k=5):\n"
                     "    builtins.LEFT_BEHIND = json.LEFT_BEHIND = 1\n    sys.modules['left_behind'] = json\n"
                     "    return 'left'\n")
        assert _value(left) == "left", left
        found = s.run(f"import builtins, json, sys\n\ndef {name}(golden_dataset, retriever, k=5):\n"
                      "    return str((hasattr(builtins, 'LEFT_BEHIND'), hasattr(json, 'LEFT_BEHIND'),"
                      " 'left_behind' in sys.modules))\n")
        assert _value(found) == "(False, False, False)", found
        # nor can a run reach JavaScript (issue 50): `js`, `pyodide.ffi`, `pyodide_js` and the bridge's C module
        # are gone before student code runs, so it can neither forge the worker's start-up messages nor make
        # memories past the cap; an import says so plainly
        forged = s.run(f"import js\n\ndef {name}(golden_dataset, retriever, k=5):\n"
                       "    js.postMessage('forged')\n    return 'forged'\n")
        error = json.loads(forged["report"]["result"])["error"]
        assert "js is not available in the exercise sandbox" in error["message"] and error["line"] == 1, forged
        s.page.wait_for_function("r => r.dataset.pythonReady === '1'", arg=s.root.element_handle(), timeout=120_000)
        assert s.root.evaluate("r => r.exerciseEditor.loadedHow") == "snapshot"
        assert s.run(LESSON[name])["kind"] == "pass"

        before = len(s.requests)
        hostile = f'''
import gc, sys

def {name}(golden_dataset, retriever, k=5):
    out = []
    for mod in ("js", "pyodide.ffi", "pyodide_js", "_pyodide", "_pyodide_core", "pyodide.http"):
        try:
            __import__(mod)
            out.append(mod + ":imported")
        except ImportError as e:
            out.append(mod + ":" + ("refused" if "exercise sandbox" in str(e) else type(e).__name__))
    for mod in list(sys.modules):  # and dropped from sys.modules, so no re-import around the guard
        if mod.split(".")[0] in ("js", "pyodide", "pyodide_js", "_pyodide", "_pyodide_core"):
            out.append("loaded:" + mod)
    proxies = []
    for o in gc.get_objects():  # any JavaScript object still held by a live Python object
        try:
            proxies += [r for r in gc.get_referents(o) if type(type(r)).__name__ == "_JsProxyMetaClass"]
        except Exception:
            pass
    out.append("proxies:" + str(len(proxies)))
    for p in proxies[:1]:
        try:
            p.constructor.constructor("return globalThis")().WebAssembly.Memory.new({{"initial": 16000}})
            out.append("memory:new")
        except Exception as e:
            out.append("memory:" + type(e).__name__)
    for path in ("/_stcore/health", "/exercise-probe-open", "{url}/exercises", "/app/static/vendor/versions.json"):
        try:
            with open(path) as f:
                out.append("open:read:" + f.read(20))
        except Exception as e:
            out.append("open:" + type(e).__name__)
    hog = []
    try:
        while True:
            hog.append(bytearray(64 * 1024 * 1024))
    except MemoryError:
        out.append("memory:MemoryError:" + str(len(hog)))
    hog = None
    return "|".join(out)
'''
        out = s.run(hostile)
        assert out["kind"] == "fail", out  # a string is no hit rate: graded as a failed check, nothing more
        parts = _value(out).split("|")
        for mod in ("js", "pyodide.ffi", "pyodide_js", "_pyodide", "_pyodide_core", "pyodide.http"):
            assert f"{mod}:refused" in parts, parts
        assert not any(p.startswith("loaded:") for p in parts), parts
        assert "proxies:0" in parts and "memory:new" not in parts, parts
        assert not any(p.startswith("open:read") for p in parts), parts  # the server's files are not there
        hogs = next(p for p in parts if p.startswith("memory:MemoryError:"))
        assert int(hogs.rsplit(":", 1)[1]) < 8, parts  # under 512 MB: the cap holds
        time.sleep(1)
        probes = [u for u in s.requests[before:] + s.aborted if "exercise-probe" in u]
        assert probes == [], probes
        new = [u[len(url):] for u in s.requests[before:]]  # the page's own (Streamlit's scripts) and Pyodide's
        assert all(u.startswith(("/_stcore/", "/static/", "/app/static/vendor/")) for u in new), new
        assert s.run(LESSON[name])["kind"] == "pass"  # and the page still works
        assert s.page.locator(".ex-sandbox").get_attribute("sandbox") == "allow-scripts"
    finally:
        s.close()


def test_students_see_only_their_own_code_and_the_teacher_sees_attempts(class_server, browser):
    url, _ = class_server  # the seats of the module's earlier tests too: the teacher looks through them all
    name = "precision_at_k"
    secret = "SECRET_OF_STUDENT_A_4711"
    a = Student(browser, url)
    b = Student(browser, url)
    teacher = Student(browser, url)
    try:
        a.open(name)
        # the seat's name, as the sidebar shows it to its student ("Class mode · **name**: ...")
        sidebar = a.page.locator('[data-testid="stSidebar"] [data-testid="stCaptionContainer"] strong')
        seat_a = sidebar.first.inner_text()
        out = a.run(LESSON[name].replace('"""', f'"""{secret} ', 1))
        assert out["kind"] == "pass", out
        b.open(name)
        assert secret not in b.root.evaluate("r => r.exerciseEditor.getCode()")
        assert secret not in b.page.inner_text("body")
        out = b.run(_wrong(name, "n_relevant / k", "n_relevant / max(len(relevant), 1)"))
        assert out["kind"] == "fail"
        b.page.goto(f"{url}/class_progress")  # not a student's page: not served to them
        b.page.get_by_text("My seat").first.wait_for(timeout=120_000)
        wait_until_idle(b.page)  # the page has drawn all it will show
        assert secret not in b.page.inner_text("body") and "Code exercises" not in b.page.inner_text("body")
        # the teacher signs in and sees both students' attempts, and A's code on demand
        teacher.page.goto(url)
        teacher.page.get_by_text("My seat").first.wait_for(timeout=180_000)
        sign_in_as_teacher(teacher.page, KEY)
        teacher.page.goto(f"{url}/class_progress")
        teacher.page.get_by_text("Code exercises").first.wait_for(timeout=180_000)
        teacher.page.get_by_text("A student's code: read it").first.click()
        # the page has a "Student" select of the lesson's progress too: this one is in the code's expander
        code = teacher.page.locator('[data-testid="stExpander"]').filter(has_text="A student's code: read it").first
        _choose(teacher.page, "Exercise", lambda options: options.filter(has_text=name).first, code)
        # A's seat by its name (earlier tests of this module hold seats too)
        exact = re.compile(f"^{re.escape(seat_a)}$")
        _choose(teacher.page, "Student", lambda options: options.filter(has_text=exact).first, code)
        wait_until_idle(teacher.page)  # the choice's rerun has drawn
        shown = teacher.page.inner_text("body")
        assert secret in shown
        assert "Runs: 1 · 8/8" in shown  # A's runs and checks passed, beside the code
        # one click re-runs A's code in the teacher's own browser sandbox (issue 50: a report is only a claim)
        run = code.locator(".ex-run")
        run.wait_for(timeout=180_000)
        assert run.inner_text() == "Re-run in my browser"
        run.click()
        teacher.page.get_by_text("Re-run in your browser: Passed 8 of 8 checks").first.wait_for(timeout=180_000)
    finally:
        for s in (a, b, teacher):
            s.close()


def test_the_assets_are_served_with_their_types_through_the_class_server(class_server):
    """What the opaque-origin sandbox needs from the server (through nginx when it is installed)."""
    url, _ = class_server
    for path, kind in [("pyodide/pyodide.mjs", "javascript"), ("pyodide/pyodide.asm.mjs", "javascript"),
                       ("pyodide/pyodide.asm.wasm", "application/wasm"), ("pyodide/python_stdlib.zip", "zip"),
                       ("pyodide/pyodide-lock.json", "application/json"), ("editor.mjs", "javascript")]:
        req = urllib.request.Request(f"{url}/app/static/vendor/{path}", headers={"Origin": "null"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200
            assert kind in r.headers["Content-Type"], (path, r.headers["Content-Type"])
            assert r.headers["Access-Control-Allow-Origin"] == "*", path
    try:
        urllib.request.urlopen(f"{url}/app/static/../app.py", timeout=30)
        raise AssertionError("a path outside static/ was served")
    except urllib.error.HTTPError as e:
        assert e.code in (400, 404)


def test_the_draft_is_kept_while_typing_and_a_reload_opens_on_it(class_server, browser):
    """Issue 26's gap: code is saved as the student types (debounced by the editor), not only on Run."""
    url, _ = class_server
    s = Student(browser, url)
    try:
        s.open("precision_at_k")
        sent = s.root.evaluate("r => Number(r.dataset.draftSent || 0)")
        s.page.locator(".cm-content").click()
        s.page.keyboard.press("Control+End")
        s.page.keyboard.type("\n# my draft, not run yet")
        s.page.wait_for_function("([r, n]) => Number(r.dataset.draftSent || 0) > n",
                                 arg=[s.root.element_handle(), sent], timeout=60_000)
        typed = s.root.evaluate("r => r.exerciseEditor.getCode()")
        assert typed.endswith("# my draft, not run yet")
        for _ in range(60):  # the draft's rerun reaches the server; then the page opened again (a new page
            s.open("precision_at_k")  # load, as a reload) shows the editor on it
            if s.root.evaluate("r => r.exerciseEditor.getCode()") == typed:
                break
            s.page.wait_for_timeout(1000)
        assert s.root.evaluate("r => r.exerciseEditor.getCode()") == typed
    finally:
        s.close()


def test_text_typed_just_before_leaving_the_page_is_there_on_return(class_server, browser):
    """Issue 48: the draft went to the server 1.5 s after the last key stroke, so what was typed in the last 1.5 s
    before leaving the page was lost.  Every change is now kept in the browser too (the seat's own key) and the
    editor opens on it, and sends it to the server, when it was typed on top of the server's copy."""
    url, _ = class_server
    s = Student(browser, url)
    other = Student(browser, url)   # another seat (another browser profile)
    try:
        s.open("recall_at_k")
        s.page.locator(".cm-content").click()
        s.page.keyboard.press("Control+End")
        s.page.keyboard.type("\n# typed just before leaving")
        typed = s.root.evaluate("r => r.exerciseEditor.getCode()")
        assert typed.endswith("# typed just before leaving")
        s.page.goto(f"{url}/lesson")   # left at once, well within the 1.5 s the draft waits for
        s.page.get_by_text("My seat").first.wait_for(timeout=120_000)
        s.open("recall_at_k")
        assert s.root.evaluate("r => r.exerciseEditor.getCode()") == typed
        assert s.root.evaluate("r => r.dataset.restored") == "1"
        # and the server got it as the draft: with the browser's copy gone, a reload still opens on it
        s.page.wait_for_function("r => Number(r.dataset.draftSent || 0) > 0", arg=s.root.element_handle(),
                                 timeout=60_000)
        for _ in range(60):
            s.page.evaluate("() => window.localStorage.clear()")
            s.open("recall_at_k")
            if s.root.evaluate("r => r.exerciseEditor.getCode()") == typed:
                break
            s.page.wait_for_timeout(1000)
        assert s.root.evaluate("r => r.exerciseEditor.getCode()") == typed
        assert s.root.evaluate("r => r.dataset.restored") == ""
        other.open("recall_at_k")
        assert "typed just before leaving" not in other.root.evaluate("r => r.exerciseEditor.getCode()")
    finally:
        s.close()
        other.close()
