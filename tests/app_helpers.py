"""Helpers shared by the page tests (AppTest): the library's own numbers on the sample corpus,
computed once per process, and the checks and interactions every page test uses."""
from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from rag_metrics.evaluation import EvaluationResult, evaluate
from rag_metrics.io.golden import load_golden
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS
from rag_metrics.sample import sample_paths
from rag_metrics.types import GoldenQuery, GoldenSet

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = "sample_corpus"
#: Debian's Chromium, the one browser the browser tests drive (never ``playwright install``).
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
#: What every page of the browser tests prefers: reduced motion, so Streamlit skips its transitions (about
#: 17 % less Chromium CPU over a walk through every page).  The tests check content and layout at rest,
#: which motion does not change; the benchmarks (benchmarks/) keep the default, as users have it.
PAGE_OPTIONS = {"reduced_motion": "reduce"}


# ---- the library's numbers (independent of the app's caches) -------------------------------------
@functools.cache
def sample_index(kind: str = "dense"):
    """The sample corpus indexed with ``kind``, from the shipped embeddings (read-only cache)."""
    from rag_metrics.retrieval import load_sample_index
    from rag_metrics.retrieval.cache import EmbeddingCache

    return load_sample_index(kind=kind, cache=EmbeddingCache(read_only=True))


def sample_golden() -> GoldenSet:
    return load_golden(sample_paths().golden)


@functools.cache
def _sample_result(kind: str) -> EvaluationResult:
    return library_result(kind, sample_golden())


def library_result(kind: str = "dense", golden: GoldenSet | None = None) -> EvaluationResult:
    """What the library computes for ``golden`` (default: the sample set) with retriever ``kind``."""
    if golden is None:
        return _sample_result(kind)
    run = sample_index(kind).retriever.retrieve(golden.questions(), k=100)
    return evaluate(golden, run)


def expected_cards(result: EvaluationResult, k: int, metrics: Iterable[str] = DEFAULT_METRICS) -> dict[str, str]:
    """The dashboard's cards as the library computes them (label@k -> 3 decimals)."""
    return {f"{METRICS[m].label}@{k}": f"{result.mean(m, k):.3f}" for m in metrics}


def edited_golden(qid: str = "q001") -> GoldenSet:
    """The sample set with the labels of ``qid`` removed."""
    g = sample_golden()
    return GoldenSet(tuple(GoldenQuery(q.id, q.question, q.category, {} if q.id == qid else q.relevant,
                                       q.expected_answer) for q in g))


# ---- page checks ---------------------------------------------------------------------------------
def no_exception(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def goto(at, page: str):
    """Switch an AppTest to ``page`` and run it (no exception)."""
    at.switch_page(page).run()
    no_exception(at)
    return at


def open_page(app, page: str):
    """Switch an AppTest to ``page``, run it, and check it shows no exception and no error."""
    goto(app, page)
    assert not app.error, [e.value for e in app.error]
    return app


def shown_cards(at) -> dict[str, str]:
    """Every metric card whose label names a cutoff (``MRR@5``)."""
    return {m.label: m.value for m in at.metric if "@" in m.label}


# ---- interactions --------------------------------------------------------------------------------
def edit_table(at, edits: Mapping[str, Any], key_prefix: str = "golden_editor_"):
    """Send a data editor edit the way the browser does (the editor's widget state, so its
    ``on_change`` callback runs) and rerun.  ``edits``: ``edited_rows`` / ``added_rows`` /
    ``deleted_rows`` relative to the table the editor shows.

    AppTest cannot edit a data editor (``set_value`` raises) and a value assigned through
    ``at.session_state`` does not run callbacks; this builds the widget states of the next run from
    the page's widgets plus the editor's JSON edit state, which is what the browser sends."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    editor = next(d for d in at.data_editor if (d.key or "").startswith(key_prefix))
    states = at._tree.get_widget_states()
    full = {"edited_rows": {}, "added_rows": [], "deleted_rows": [], **edits}
    full["edited_rows"] = {str(r): v for r, v in full["edited_rows"].items()}
    states.widgets.append(WidgetState(id=editor.proto.id, string_value=json.dumps(full)))
    at._run(states)
    no_exception(at)
    return at


def app_golden(at, corpus: str = SAMPLE) -> GoldenSet:
    """The golden set the app's session works on."""
    return at.session_state["_golden"][corpus].golden


def set_app_golden(at, queries: Iterable[GoldenQuery], corpus: str = SAMPLE) -> None:
    """Replace the app session's golden set (saved to the test's workspace), as an edit would."""
    session = at.session_state["_golden"][corpus]
    session.replace(GoldenSet(tuple(queries), name=corpus))


def load_corpus_files(at, files: list[tuple[str, bytes, str]], name: str = "tiny"):
    """Upload ``files`` ``(name, bytes, mime)`` as a corpus on the Corpus explorer page."""
    goto(at, "pages/corpus_explorer.py")
    at.file_uploader(key="corpus_upload").set_value(files).run()
    at.text_input(key="corpus_upload_name").input(name).run()
    at.button(key="corpus_upload_go").click().run()
    no_exception(at)
    return at


def load_beir_folder(at, path: str | Path):
    """Load a BEIR folder on the Corpus explorer page."""
    goto(at, "pages/corpus_explorer.py")
    at.text_input(key="beir_path").input(str(path)).run()
    at.button(key="beir_go").click().run()
    no_exception(at)
    return at


# ---- a real server for the browser tests ---------------------------------------------------------
#: Added to every page the browser tests open (``chromium()``): the top frame's WebSocket and HTTP traffic,
#: as ``window.__labNet``: when the page last sent a message on a WebSocket and last received one, and
#: the requests (fetch, XMLHttpRequest) still open.  A click sends Streamlit's rerun request at once, but
#: the page shows "running" only once the server's answer has come back: the send closes that gap.
NET_JS = """(() => {
  if (window.top !== window || window.__labNet) return;
  const net = window.__labNet = {lastSend: 0, lastRecv: 0, open: new Map(), seq: 0};
  const now = () => performance.now();
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (!this.__labHeard) {  // the socket's answers, from its first message on
      this.__labHeard = true;
      this.addEventListener('message', () => { net.lastRecv = now(); });
    }
    net.lastSend = now();
    return send.call(this, data);
  };
  const opened = () => { const id = ++net.seq; net.open.set(id, now()); return () => net.open.delete(id); };
  const fetch0 = window.fetch;
  window.fetch = function (...args) { const done = opened(); return fetch0.apply(this, args).finally(done); };
  const xsend = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    this.addEventListener('loadend', opened(), {once: true});
    return xsend.apply(this, args);
  };
})();"""

#: ``{"rest", "net"}``: ``rest`` is true when the page is at rest: its script run has finished (Streamlit's
#: ``data-test-script-state``, which it sets for its own end-to-end tests), no element is stale or still
#: loading its code (a skeleton), no "Running" status is shown, every Vega-Lite chart has drawn (a canvas
#: or svg), and (``net``: the page carries :data:`NET_JS`) no request is open and no WebSocket message
#: sent in the last 3 s is still unanswered.
_AT_REST_JS = """() => {
  const net = window.__labNet;
  const out = rest => ({rest, net: !!net});
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return out(false);
  if (document.querySelector('[data-stale="true"]')) return out(false);
  // an element whose code is still loading shows Streamlit's placeholder (Suspense fallback)
  if (document.querySelector('[data-testid="stSkeleton"], [data-testid="stAppSkeleton"]')) return out(false);
  if (document.querySelector('[data-testid="stStatusWidget"]')) return out(false);
  if (![...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].every(c => c.querySelector('canvas, svg')))
    return out(false);
  if (net) {
    const t = performance.now();
    // a request open for over 10 s is not the page's own (a stream): not waited for
    if ([...net.open.values()].some(since => t - since < 10000)) return out(false);
    if (net.lastSend > net.lastRecv && t - net.lastSend < 3000) return out(false);
  }
  return out(true);
}"""

#: How long the page must stay at rest: with :data:`NET_JS` a rerun shows as soon as the click has sent its
#: request, so a short time covers the moment between a click and the rerun it starts; without it (a page
#: not opened through ``chromium()``) the server's answer may take longer to come back.
QUIET, QUIET_BLIND = 0.3, 1.0


def wait_until_idle(page, timeout: float = 120.0, quiet: float | None = None) -> None:
    """Until the page is at rest (script run finished, charts drawn, no request of the page unanswered) and
    stays so for ``quiet`` seconds (default :data:`QUIET`, or :data:`QUIET_BLIND` for a page without
    :data:`NET_JS`); at most ``timeout`` seconds (then the test goes on and its own checks say what is
    missing)."""
    deadline = time.monotonic() + timeout
    since: float | None = None
    while time.monotonic() < deadline:
        now = time.monotonic()
        try:
            state = page.evaluate(_AT_REST_JS)
        except Exception:  # noqa: BLE001 - a navigation replaced the page's context: not at rest yet
            state = {"rest": False, "net": False}
        if state["rest"]:
            since = now if since is None else since
            if now - since >= (quiet if quiet is not None else QUIET if state["net"] else QUIET_BLIND):
                return
        else:
            since = None
        time.sleep(0.1)


def _wait_healthy(url: str, log: Path, what: str) -> None:
    """Until ``url`` answers its health check (up to 2 min), else fail with the end of ``log``."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).status == 200:
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"{what} did not start: " + log.read_text()[-2000:])


def class_dirs(tmp_path: Path, cache_dir: Path) -> tuple[Path, Path, list[Path]]:
    """``(workspace, cache, made)`` for a class deployment of a test.  Started as root, the app
    processes run as an unprivileged user (rag_metrics.server.deploy.run_as_user) and pytest's tmp
    folders are closed to other users: the two then live in fresh folders under /tmp (``made``:
    remove them after)."""

    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return tmp_path / "workspace", cache_dir, []
    made = [Path(tempfile.mkdtemp(prefix="lab-class-ws-")), Path(tempfile.mkdtemp(prefix="lab-class-cache-"))]
    for folder in made:
        folder.chmod(0o755)  # mkdtemp makes them 0700
    return made[0] / "workspace", made[1], made


def class_app_user() -> str:
    """``--app-user`` for a test's class (rag_metrics.server.deploy.APP_USERS): started as root from a clone in
    a folder closed to other users (a fresh ``mktemp -d``, ``/root``), the unprivileged user cannot read the
    code or its venv, so the test's class keeps root (``current``: loopback only, which every test class
    listens on); everywhere else the app processes drop to the unprivileged user, as a real class does."""
    from rag_metrics.server.deploy import closed_to_others

    root_only = hasattr(os, "geteuid") and os.geteuid() == 0 and (
        closed_to_others(ROOT) is not None or closed_to_others(Path(sys.prefix)) is not None)
    return "current" if root_only else "unprivileged"


def give_to_app(workspace: Path) -> None:
    """Files a test wrote into a running class's workspace (seeded seats, progress) handed to the
    workspace's owner: started as root, the app processes run as an unprivileged user who owns the
    workspace (rag_metrics.server.deploy.prepare_run_as) and must be able to write what the test made."""
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return
    owner = workspace.stat()
    for top, dirs, files in os.walk(workspace):
        for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
            os.lchown(name, owner.st_uid, owner.st_gid)


@contextlib.contextmanager
def class_server(tmp_path: Path, cache_dir: Path, teacher_key: str,
                 config_toml: str | None = None) -> Iterator[tuple[str, Path]]:
    """``./lab class`` on a loopback port (the command it prints under ``LAB_DRY_RUN=1``, started as it
    would start it, in class mode); yields ``(url, workspace)`` and stops the whole process group after.
    ``config_toml``: the operator's configuration, written to ``<workspace>/../lab.toml`` (readable by the app
    processes' user; a test may rewrite it: the app reads it anew) and named by ``RAG_METRICS_CONFIG``."""
    import shlex
    import shutil
    import signal

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ws, cache_dir, shared = class_dirs(tmp_path, cache_dir)
    env = {**os.environ, "RAG_METRICS_WORKSPACE": str(ws), "RAG_METRICS_CACHE": str(cache_dir),
           "RAG_METRICS_WARM": "0", "RAG_METRICS_TEACHER_KEY": teacher_key, "HF_HUB_OFFLINE": "1",
           "RAG_METRICS_VENV": str(Path(sys.executable).parents[1]), "LAB_DRY_RUN": "1"}
    env.pop("RAG_METRICS_CONFIG", None)
    if config_toml is not None:
        (ws.parent / "lab.toml").write_text(config_toml, encoding="utf-8")
        env["RAG_METRICS_CONFIG"] = str(ws.parent / "lab.toml")
    out = subprocess.run([str(ROOT / "lab"), "class", "--address", "127.0.0.1", "--port", str(port),
                          "--app-user", class_app_user()], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    argv = shlex.split(out.stdout.strip().splitlines()[-1])
    # this Python; started as root, the deployment itself picks one its unprivileged user can reach
    # (rag_metrics.server.deploy.python_for), as ./lab class does
    argv[0] = sys.executable
    env.pop("LAB_DRY_RUN")
    env["RAG_METRICS_CLASS_MODE"] = "1"  # what ./lab class exports before starting
    url = f"http://127.0.0.1:{port}"
    with open(tmp_path / "server.log", "w") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        _wait_healthy(url, tmp_path / "server.log", "the class server")
        yield url, ws
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except OSError:
            pass  # already gone
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        for folder in shared:
            shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def streamlit_server(tmp_path: Path, cache_dir: Path, workspace: Path) -> Iterator[str]:
    """``python -m ui.launch`` (``streamlit run app.py`` as ``./lab app`` runs it) on a free loopback
    port (workspace and embedding cache given); yields its URL once ``/_stcore/health`` answers, and
    stops it afterwards."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAG_METRICS_WORKSPACE": str(workspace),
           "RAG_METRICS_CACHE": str(cache_dir)}
    with open(tmp_path / "streamlit.log", "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ui.launch", "--server.headless", "true",  # as ./lab app starts it
             "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, tmp_path / "streamlit.log", "streamlit")
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


#: The one Playwright and Chromium of this test process (:func:`chromium`), started on first use.
_SHARED: dict[str, Any] = {}


def _shared_browser():
    """This process's Chromium, launched on first use (again if it has gone away)."""
    browser = _SHARED.get("browser")
    if browser is not None and browser.is_connected():
        return browser
    stop_chromium()
    from playwright.sync_api import sync_playwright

    _SHARED["playwright"] = sync_playwright().start()
    _SHARED["browser"] = _SHARED["playwright"].chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    return _SHARED["browser"]


def stop_chromium() -> None:
    """Close this process's Chromium and its Playwright (the end of a test session; at exit otherwise)."""
    browser, playwright = _SHARED.pop("browser", None), _SHARED.pop("playwright", None)
    with contextlib.suppress(Exception):  # already gone with its driver
        if browser is not None:
            browser.close()
    with contextlib.suppress(Exception):
        if playwright is not None:
            playwright.stop()


atexit.register(stop_chromium)


@contextlib.contextmanager
def chromium():
    """Debian's headless Chromium through Playwright (the one launcher of the browser tests).  One Chromium
    serves every test of a process (a launch with its Playwright driver costs about 2 core-s, and a run
    had 12): what a block opens in it (contexts, pages: each its own cookies, storage and cache) is
    closed when the block ends, so tests share the browser program and nothing else."""
    watched = _Watched(_shared_browser())
    try:
        yield watched
    finally:
        watched.close_opened()


class _Watched:
    """A Playwright browser whose new pages and contexts carry :data:`NET_JS` (what ``wait_until_idle``
    reads) and :data:`PAGE_OPTIONS` (unless a test gives its own), and are closed by :meth:`close_opened`;
    everything else is the browser's own."""

    def __init__(self, browser):
        self._browser = browser
        self._opened: list = []

    def __getattr__(self, name):
        return getattr(self._browser, name)

    def new_context(self, **kwargs):
        context = self._browser.new_context(**{**PAGE_OPTIONS, **kwargs})
        self._opened.append(context)
        context.add_init_script(NET_JS)
        return context

    def new_page(self, **kwargs):
        page = self._browser.new_page(**{**PAGE_OPTIONS, **kwargs})
        self._opened.append(page.context)  # a page made this way has a context of its own
        page.add_init_script(NET_JS)
        return page

    def close_opened(self) -> None:
        """Close every context (with its pages) opened through this block."""
        while self._opened:
            with contextlib.suppress(Exception):  # closed already by the test
                self._opened.pop().close()


def lesson_progress(n_steps: int, quiz: tuple[str, ...] = ()):
    """A student part-way through the lesson: every task of the first ``n_steps`` steps solved, the quiz
    answered with ``quiz`` in order (right or wrong), on the step reached (what Class progress shows)."""
    from rag_metrics.lesson import QUIZ, STEPS, Progress

    p = Progress()
    for s in STEPS[:n_steps]:
        for t in s.tasks:
            p = p.with_answer(t.key, t.answer or "(solved)", True)
    for t, a in zip(QUIZ, quiz):
        p = p.with_answer(t.key, a, a == t.answer)
    return p.with_step(min(n_steps, len(STEPS) - 1))


def wait_for_cookies(context, names: set[str], timeout: float = 60.0) -> None:
    """Until the browser ``context`` holds the cookies ``names`` (set by a script or a request the page
    makes after it is drawn, which takes longer on a loaded machine than any fixed wait)."""
    end = time.monotonic() + timeout
    have: set[str] = set()
    while time.monotonic() < end:
        have = {c["name"] for c in context.cookies()}
        if names <= have:
            return
        time.sleep(0.2)
    raise AssertionError(f"cookies {sorted(names)} not set within {timeout:.0f} s (the browser has {sorted(have)})")


def sign_in_as_teacher(page, key: str, timeout: float = 120.0) -> None:
    """Sign in with the teacher key in the sidebar and wait until the browser holds the teacher's
    cookie: "Signed in" shows first, then the page's script exchanges its claim for the HttpOnly cookie
    (rag_metrics.server.teacher_sessions); a page opened by URL before that would be a student's."""
    from rag_metrics.server.seats import TEACHER_COOKIE

    box = page.get_by_label("Teacher key").first
    signed_in = page.get_by_text("Signed in as the").first
    for attempt in range(3):  # on a loaded machine a rerun can redraw the popover between typing and the click
        wait_until_idle(page, timeout)
        if signed_in.is_visible():
            break
        for _ in range(8):  # the popover opens once the page is idle
            if box.is_visible():
                break
            page.get_by_text("Teacher sign-in").first.click()
            try:
                box.wait_for(timeout=8_000)
                break
            except Exception:  # noqa: BLE001 - not open yet
                page.wait_for_timeout(1000)
        box.fill(key)
        page.get_by_role("button", name="Sign in").first.click()
        try:
            signed_in.wait_for(timeout=(timeout if attempt == 2 else timeout / 3) * 1000)
            break
        except Exception as err:  # not signed in yet: look again once the page is idle
            if attempt == 2:
                shown = page.locator('[data-testid="stSidebar"], [data-testid="stMain"]').all_inner_texts()
                raise AssertionError(f"the teacher's sign-in did not show after 3 tries, at {page.url}; the "
                                     f"page shows: {' | '.join(shown)[:2000]!r}") from err
    wait_for_cookies(page.context, {TEACHER_COOKIE}, timeout)
