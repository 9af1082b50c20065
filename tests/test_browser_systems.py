"""Real browser: add an uploaded TREC run on the Systems page (through the file input) and compare
it with the bundled dense retriever on Compare A vs B; the sidebar's System select then shows it."""
from __future__ import annotations

from pathlib import Path

import pytest

from app_helpers import chromium, wait_until_idle
from tests.test_browser import CHROMIUM, _wait_idle, server  # noqa: F401  (the fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium"),
]


def run_lines() -> list[str]:
    """The bundled dense ranking with ranks 1 and 4 swapped, as the lines of a TREC run."""
    from app_helpers import library_result

    res = library_result("dense")
    lines = []
    for q in res.query_ids:
        ids = res.ranking(q)["id"].tolist()[:20]
        if len(ids) >= 4:
            ids[0], ids[3] = ids[3], ids[0]
        lines += [f"{q} Q0 {i} {r + 1} {20 - r} prod" for r, i in enumerate(ids)]
    return lines


def _run_file(tmp_path: Path, name: str = "prod.trec") -> Path:
    """:func:`run_lines` written to ``tmp_path / name``."""
    path = tmp_path / name
    path.write_text("\n".join(run_lines()) + "\n")
    return path


def add_run_system(page, name: str, run: Path) -> None:
    """On the Systems page (open): upload ``run`` through the file input as the system ``name``, add it, and
    wait for "Added NAME"."""
    main = page.locator('[data-testid="stMain"]')
    main.get_by_label("Name").first.fill(name)
    main.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(str(run))
    main.locator('[data-testid="stFileUploader"]').first.get_by_text(run.name).wait_for(timeout=60_000)
    wait_until_idle(page)  # the upload's rerun has finished
    main.get_by_role("button", name="Add system").first.click()
    _wait_idle(page, "Systems")
    page.get_by_text(f"Added {name}").first.wait_for(timeout=60_000)


def test_upload_a_run_and_compare_it_in_chromium(server, tmp_path):  # noqa: F811
    run = _run_file(tmp_path)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 2400})
        page.goto(f"{server}/systems")
        _wait_idle(page, "Systems")
        add_run_system(page, "prod run", run)
        main = page.locator('[data-testid="stMain"]')
        assert page.locator('[data-testid="stException"]').count() == 0

        page.goto(f"{server}/compare")
        _wait_idle(page, "Compare A vs B")
        # B: "my production retriever" in two clicks
        page.get_by_role("heading", name="Per metric at K = 5").wait_for(timeout=120_000)
        # the two configuration selects labelled exactly "System" (not "Answer system A/B")
        boxes = main.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text("System", exact=True))
        assert boxes.count() == 2, main.locator('[data-testid="stSelectbox"]').all_inner_texts()
        boxes.nth(1).click()
        page.get_by_role("option", name="Yours: prod run").click()
        _wait_idle(page, "Compare A vs B")
        page.get_by_role("heading", name="Per metric at K = 5").wait_for(timeout=120_000)
        assert main.get_by_text("prod run (yours)").count() >= 1
        assert page.locator('[data-testid="stException"]').count() == 0

        # the sidebar lists it too, and the URL names it once chosen
        page.goto(f"{server}/?system=prod%20run")
        _wait_idle(page, "Dashboard")
        page.get_by_text("system: prod run").first.wait_for(timeout=60_000)
        assert "system=prod" in page.url
        assert page.locator('[data-testid="stException"]').count() == 0
