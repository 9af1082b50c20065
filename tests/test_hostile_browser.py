"""Real browser (issue 11): label three questions in a row in "Label with retrieval" and check that
exactly those labels were saved (re-read from disk), one click per step."""
from __future__ import annotations

import re

import pytest

from app_helpers import CHROMIUM, chromium, streamlit_server, wait_until_idle
from rag_metrics.io.golden import load_golden
from rag_metrics.sample import sample_paths
from rag_metrics.workspace.store import Workspace

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium"),
]


@pytest.fixture
def served(tmp_path, app_cache_dir):
    ws = tmp_path / "workspace"
    with streamlit_server(tmp_path, app_cache_dir, ws) as url:
        yield url, ws


def test_label_three_questions_in_chromium(served, tmp_path):
    url, ws_root = served
    original = {q.id: dict(q.relevant) for q in load_golden(sample_paths().golden)}
    expected = dict(original)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 2400})
        page.goto(f"{url}/golden_set")
        page.get_by_role("heading", name="Golden set editor", level=1).wait_for(timeout=120_000)
        wait_until_idle(page)
        page.get_by_text("Label with retrieval").first.click()
        wait_until_idle(page)
        for n in range(3):
            qid = list(original)[n]
            page.get_by_text(f"Question {n + 1} of").first.wait_for(timeout=60_000)
            boxes = page.locator('[data-testid="stCheckbox"]').filter(has_text="Relevant")
            boxes.first.wait_for(timeout=60_000)
            # the first candidate that is not ticked yet: tick it
            target = None
            for i in range(boxes.count()):
                if not boxes.nth(i).locator("input").is_checked():
                    target = i
                    break
            assert target is not None
            rows = page.locator('[data-testid="stMarkdown"]').filter(has_text=re.compile(r"· score"))
            assert rows.count() == boxes.count()  # one text row per checkbox, in the same order
            m = re.search(r"\d+\.\s*(\S+)\s*·\s*score", rows.nth(target).inner_text())
            assert m, rows.nth(target).inner_text()[:300]
            chunk_id = m.group(1)
            boxes.nth(target).locator("label").click()
            wait_until_idle(page)
            page.get_by_role("button", name="Save and next →").click()  # one click
            wait_until_idle(page)
            expected[qid] = {**original[qid], chunk_id: 1}
            assert page.locator('[data-testid="stException"]').count() == 0
        page.get_by_text("Question 4 of").first.wait_for(timeout=60_000)  # still in the labelling view
        page.screenshot(path=str(tmp_path / "labelled.png"))
    golden, report, _ = Workspace("sample_corpus", ws_root).load()
    assert report.ok
    assert {q.id: dict(q.relevant) for q in golden} == expected
