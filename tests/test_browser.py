"""Real-browser test: `streamlit run app.py` on a loopback port, Debian Chromium through Playwright.

One walk through every page (:func:`walk`, the costliest part of the browser tests, so done once for
two tests).  Each page is opened by URL (the first request goes straight to a page, which exercises the
shell guard; the Dashboard both at "/" and at "/dashboard"): no exception element, no "Page not found"
dialog, the shared sidebar present, a screenshot (pytest tmp dir, or $RAG_METRICS_SCREENSHOT_DIR).  Then,
without reloading, the same page at the two projector sizes: nothing clipped (:mod:`clipping`, issue 27)
and no metric card clipped (issue 17; with the README's Lesson and Class progress screenshots, of a
workspace with three students).
The other tests interact with the K slider, Learn, Compare, a link, the map and the report.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import clipping
from app_helpers import CHROMIUM, lesson_progress, streamlit_server, wait_until_idle
from rag_metrics.sample import sample_paths

PAGES = [("failures", "Failures and drill-down"), ("", "Dashboard"), ("dashboard", "Dashboard"),
         ("golden_set", "Golden set editor"), ("corpus_explorer", "Corpus explorer")]  # "/" and "/dashboard"
PAGES += [("learn", "Learn: the metric sandbox"), ("compare", "Compare A vs B")]  # issue 5 pages
PAGES += [("ragas", "RAGAS context metrics"), ("health", "Golden-set health"), ("corpus_map", "Corpus map"),
          ("presenter", "Retrieval report")]  # issue 6 pages
PAGES += [("systems", "Systems"), ("answers", "Answers")]  # issues 9 and 10
PAGES += [("history", "History")]  # issue 20
PAGES += [("lesson", "Lesson: measuring retrieval"), ("class_progress", "Class progress")]  # issue 17
PAGES += [("exercises", "Write the metric yourself")]  # issue 26
PAGES += [("tune", "Tune the retriever"), ("bring_your_system", "Bring your system")]  # issues 30 and 29

#: The pages whose metric cards issue 17's projector check reads (:data:`METRIC_CLIPPED_JS`).
METRIC_PAGES = ["", "lesson", "ragas"]
#: Labels and values of metric cards whose text is cut by an ancestor that hides overflow (or that
#: spill out of their card).
METRIC_CLIPPED_JS = """() => {
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

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
]


@pytest.fixture
def server(tmp_path, app_cache_dir):
    """A server of its own for one test, on the workspace ``tmp_path / "workspace"`` (the browser tests
    of other modules import it and check that workspace)."""
    with streamlit_server(tmp_path, app_cache_dir, tmp_path / "workspace") as url:
        yield url


def _seed_class(root: Path) -> None:
    """Three students part-way through the lesson (what Class progress and its screenshot show)."""
    from rag_metrics.lesson import store_for_space
    from rag_metrics.workspace.store import ensure_space

    for name, n_steps, quiz in [("Seat 01 Ana", 11, ("4", "0.4", "recall", "miss", "supported")),
                                ("Seat 02 Bo", 6, ()), ("Seat 03 Clara", 3, ())]:
        ensure_space(name, root)
        store_for_space(name, root).save(lesson_progress(n_steps, quiz))


@pytest.fixture(scope="module")
def module_server(tmp_path_factory, app_cache_dir):
    """One server for the tests of this module: they only read the sample and keep what they change
    (K, scenario, selection) in their own browser session, so they can share it.  Its workspace holds
    :func:`_seed_class`'s students (other spaces than the single user's: only Class progress shows them)."""
    tmp = tmp_path_factory.mktemp("browser_server")
    _seed_class(tmp / "workspace")
    with streamlit_server(tmp, app_cache_dir, tmp / "workspace") as url:
        yield url


def _wait_idle(page, title: str, timeout: float = 120.0) -> None:
    """Until the page titled ``title`` is drawn, its script run has finished and its charts are drawn
    (readiness, not a fixed wait: ``app_helpers.wait_until_idle``)."""
    page.get_by_role("heading", name=title, level=1).wait_for(timeout=timeout * 1000)
    wait_until_idle(page, timeout)


@pytest.fixture(scope="module")
def walk(module_server, browser, tmp_path_factory):
    """One walk through :data:`PAGES`: what :func:`test_every_page_in_chromium` checks of each page, at
    1440x2200, and then, the page resized, not reloaded: for :data:`clipping.PAGES`, what is clipped at
    the projector sizes, with the metric cards of :data:`METRIC_PAGES`
    (:func:`test_no_clipped_metric_on_a_projector`, which also gets the README's Lesson and Class progress
    screenshots at 1280x720, into ``screenshots/projector``).  Returns ``{"pages": {path: facts},
    "found", "scrolled", "metrics": {(path, (w, h)): {"cards", "clipped"}}, "out": dir, "shots": dir}``."""
    out = Path(os.environ.get("RAG_METRICS_SCREENSHOT_DIR") or tmp_path_factory.mktemp("walk") / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    shots = out / "projector"
    shots.mkdir(exist_ok=True)
    facts: dict[str, dict] = {}
    found: dict[str, list[dict]] = {}
    scrolled: dict[str, list[str]] = {}
    metrics: dict[tuple, dict] = {}
    page = browser.new_page(viewport={"width": 1440, "height": 2200})

    def metric_cards(path: str):
        def at_size(w: int, h: int) -> None:
            cards = page.locator('[data-testid="stMetric"]').count()
            metrics[(path, (w, h))] = {"cards": cards, "clipped": page.evaluate(METRIC_CLIPPED_JS)}
            if (w, h) == (1280, 720) and path == "lesson":
                page.screenshot(path=str(shots / "screenshot-lesson.png"))
        return at_size if path in METRIC_PAGES else None

    for path, title in PAGES:
        page.set_viewport_size({"width": 1440, "height": 2200})
        page.goto(f"{module_server}/{path}")
        _wait_idle(page, title)
        exc = page.locator('[data-testid="stException"]')
        facts[path] = {
            "exception": exc.first.inner_text()[:2000] if exc.count() else None,
            # opened by URL, every page is found (Streamlit shows a "Page not found" dialog otherwise)
            "not_found": page.get_by_text("Page not found").count(),
            "sidebar_sliders": page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').count(),
        }
        page.screenshot(path=str(out / f"{path or 'root'}.png"))
        if path in clipping.PAGES:
            clipping.check_sizes(page, path, "en", found, scrolled, shots, metric_cards(path))
        if path == "class_progress":  # the README's screenshot of the teacher's page
            page.set_viewport_size({"width": 1280, "height": 720})
            _wait_idle(page, title)
            facts[path]["exception_1280x720"] = exc.count()
            page.screenshot(path=str(shots / "screenshot-class.png"))
    page.close()
    return {"pages": facts, "found": found, "scrolled": scrolled, "metrics": metrics, "out": out, "shots": shots}


def test_every_page_in_chromium(walk, module_server, browser):
    for path, _title in PAGES:
        seen = walk["pages"][path]
        assert seen["exception"] is None, f"exception on /{path}: {seen['exception']}"
        assert seen["not_found"] == 0, f"/{path}: Page not found"
        assert seen["sidebar_sliders"] >= 1, f"shared sidebar missing on /{path}"
    out = walk["out"]
    # interact: move K with the keyboard and check the cards follow
    page = browser.new_page(viewport={"width": 1440, "height": 2200})
    page.goto(module_server)
    _wait_idle(page, "Dashboard")
    page.get_by_text("Hit rate@5").first.wait_for(timeout=120_000)
    page.locator('[data-testid="stSidebar"] [data-testid="stSlider"] input[type="range"]').first.focus()
    page.keyboard.press("ArrowRight")
    page.get_by_text("Hit rate@6").first.wait_for(timeout=120_000)  # the cards follow K
    _wait_idle(page, "Dashboard")
    assert page.locator('[data-testid="stException"]').count() == 0
    page.screenshot(path=str(out / "dashboard_k6.png"))
    page.close()
    assert len(list(out.glob("*.png"))) == len(PAGES) + 1


def test_nothing_clipped_on_any_page_at_projector_sizes(walk):
    """Every page of the app, in English, at 1024x768 and 1280x720 (the Danish lesson and the teacher's
    pages: ``test_browser_projector_pages.py``)."""
    found, scrolled = walk["found"], walk["scrolled"]
    print(clipping.report(found, scrolled))
    assert len(found) == 2 * len(clipping.PAGES)
    clipped = {where: bad for where, bad in found.items() if bad}
    assert not clipped, "clipped on a projector:\n" + clipping.report(clipped, {}) + "\n" + json.dumps(clipped)[:3000]


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
def test_no_clipped_metric_on_a_projector(walk, size):
    """Issue 17: no metric card's label or value is clipped ("Hi… 0…") at the projector sizes, measured on
    the real layout (:data:`METRIC_CLIPPED_JS`: the text's own box must fit inside every ancestor that
    hides overflow, up to its card); at 1280x720 the README's Lesson and Class progress screenshots."""
    w, h = size
    for path in METRIC_PAGES:
        seen = walk["metrics"][(path, size)]
        assert walk["pages"][path]["exception"] is None
        assert seen["cards"] > 0, f"/{path} at {w}x{h}: no metric card"
        assert not seen["clipped"], f"/{path} at {w}x{h}: clipped metric text {seen['clipped']}"
    if size == (1280, 720):
        assert walk["pages"]["class_progress"]["exception_1280x720"] == 0
        assert (walk["shots"] / "screenshot-lesson.png").exists()
        assert (walk["shots"] / "screenshot-class.png").exists()


def test_learn_and_compare_interactions_in_chromium(module_server, browser, tmp_path):
    """Learn: a scenario button and a grade click change the cards; Compare: the A/B table and verdicts."""
    server = module_server  # one server for this module's tests

    out = Path(os.environ.get("RAG_METRICS_SCREENSHOT_DIR") or tmp_path / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 3000})
    title = "Learn: the metric sandbox"
    page.goto(f"{server}/learn")
    _wait_idle(page, title)
    cards = page.locator('[data-testid="stMetric"]')
    assert "0.200" in cards.filter(has_text="MRR@5").first.inner_text()
    page.get_by_role("button", name="Show: relevant at rank 1").click()
    _wait_idle(page, title)
    assert "1.000" in cards.filter(has_text="MRR@5").first.inner_text()
    page.get_by_role("button", name="Rank 6 → rank 2").click()
    _wait_idle(page, title)
    assert "0.613" in cards.filter(has_text="NDCG@5").first.inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0
    page.screenshot(path=str(out / "learn_rank6.png"))

    title = "Compare A vs B"
    page.goto(f"{server}/compare")
    _wait_idle(page, title)
    page.get_by_role("heading", name="Per metric at K = 5").wait_for(timeout=120_000)
    page.get_by_role("heading", name="When the metrics disagree (K = 5)").wait_for(timeout=120_000)
    _wait_idle(page, title)
    assert page.get_by_text("Hit rate@5: A is better").count() >= 1
    assert page.locator('[data-testid="stException"]').count() == 0
    page.screenshot(path=str(out / "compare_default.png"))


def test_link_map_and_report_download_in_chromium(module_server, browser, tmp_path):
    """A link reproduces the view (page, K, retriever); a bad link warns; the corpus map draws the
    selected question's lines; the presenter's "Download report (HTML)" gives the headline numbers
    and the file renders its charts offline."""
    server = module_server  # one server for this module's tests

    from rag_metrics.evaluation import evaluate
    from rag_metrics.io.golden import load_golden
    from rag_metrics.retrieval import load_sample_index
    from rag_metrics.retrieval.cache import EmbeddingCache

    golden = load_golden(sample_paths().golden)
    idx = load_sample_index(kind="dense", cache=EmbeddingCache(read_only=True))
    result = evaluate(golden, idx.retriever.retrieve(golden.questions(), k=100))
    out = Path(os.environ.get("RAG_METRICS_SCREENSHOT_DIR") or tmp_path / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 1800}, accept_downloads=True)
    # a link opens the map with K and retriever from the URL
    page.goto(f"{server}/?page=corpus_map&k=3&retriever=bm25")
    _wait_idle(page, "Corpus map")
    page.get_by_text("system: bm25 · K = 3").first.wait_for(timeout=60_000)
    assert "k=3" in page.url and "system=bm25" in page.url and "page=corpus_map" in page.url
    chart = page.locator('[data-testid="stVegaLiteChart"]').first
    chart.wait_for(timeout=60_000)
    wait_until_idle(page)  # the chart has drawn
    box = chart.bounding_box()
    assert box is not None and box["height"] > 400, box
    assert page.get_by_text("Selected question").count() >= 1
    assert page.locator('[data-testid="stException"]').count() == 0
    page.screenshot(path=str(out / "corpus_map_link.png"))
    # clicking a question (◆) in the chart selects it on the page (find one by its tooltip)
    page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').first.click()
    page.keyboard.type("(none selected)")
    page.keyboard.press("Enter")
    _wait_idle(page, "Corpus map")
    assert page.get_by_role("heading", name="Selected question").count() == 0
    # the question marks, by the description Vega gives each (ARIA): the pointer goes to each in turn
    # until its tooltip names the question (a mark drawn under another may not get the pointer)
    found = None
    marks = chart.locator('path[aria-roledescription="point"][aria-label*="question id"]')
    tip = page.locator("#vg-tooltip-element")
    for i in range(min(marks.count(), 30)):
        mb = marks.nth(i).bounding_box()
        if not mb or mb["width"] <= 0:
            continue
        x, y = mb["x"] + mb["width"] / 2, mb["y"] + mb["height"] / 2
        page.mouse.move(x, y)
        for _ in range(10):
            if tip.count() and tip.is_visible() and "question id" in tip.inner_text():
                lines = [t.strip() for t in tip.inner_text().splitlines() if t.strip()]
                found = (x, y, lines[lines.index("question") + 1])
                break
            page.wait_for_timeout(100)
        if found:
            break
    assert found, "no question found under the pointer"
    page.mouse.click(found[0], found[1])
    page.locator('[data-testid="stCode"]').filter(has_text=found[2]).first.wait_for(timeout=60_000)
    _wait_idle(page, "Corpus map")
    assert page.locator('[data-testid="stException"]').count() == 0

    # a bad link: a gentle warning, the defaults, no traceback
    page.goto(f"{server}/?k=abc&retriever=foo")
    _wait_idle(page, "Dashboard")
    page.get_by_text("Ignored k='abc'").first.wait_for(timeout=60_000)
    assert page.get_by_text("Ignored retriever='foo'").count() >= 1
    assert page.locator('[data-testid="stException"]').count() == 0
    page.get_by_text("Hit rate@5").first.wait_for(timeout=60_000)

    # the presenter view and its one-click report
    page.goto(f"{server}/presenter")
    _wait_idle(page, "Retrieval report")
    main = page.locator('[data-testid="stMain"]')
    with page.expect_download(timeout=120_000) as dl:
        main.get_by_role("button", name="Download report (HTML)").click()
    path = tmp_path / "report.html"
    dl.value.save_as(path)
    html = path.read_text(encoding="utf-8")
    for m in ("hit_rate", "mrr", "ndcg"):
        assert f"{result.mean(m, 5):.3f}" in html, m
    page.screenshot(path=str(out / "presenter_view.png"))
    report = browser.new_page(viewport={"width": 1280, "height": 1600})
    report.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:")
                 else route.continue_())
    report.goto(path.as_uri())
    report.locator("#chart-curve svg").first.wait_for(timeout=60_000)
    report.locator("#chart-category svg").first.wait_for(timeout=60_000)
    report.screenshot(path=str(out / "report_from_app.png"))
