"""Real browser: the "Bring your system" page (issue 29) in Chromium.  A golden set (the sample's first 40
questions, as JSONL) and a TREC run (the bundled dense ranking with ranks 1 and 4 swapped) go in through
the page's file input, with a broken run beside them; the page says what it read from each file, the
broken one refused with its name and line (no traceback); one button brings the files in, and the
verdict shows the library's numbers for the same bytes.  Every wait is on readiness (no fixed sleep)."""
from __future__ import annotations

from pathlib import Path

import pytest

from app_helpers import chromium, sample_golden, wait_until_idle
from tests.test_browser import CHROMIUM, _wait_idle, server  # noqa: F401  (the fixture)
from tests.test_browser_systems import _run_file, run_lines

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium"),
]

TITLE = "Bring your system"
N_GOLDEN = 40
BAD_LINE = 3  # the broken run's line with four fields


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``(golden set, run, broken run)`` written into ``tmp_path``."""
    from rag_metrics.authoring.golden_edit import export_golden
    from rag_metrics.types import GoldenSet

    golden = tmp_path / "my_golden.jsonl"
    golden.write_text(export_golden(GoldenSet(sample_golden().queries[:N_GOLDEN]), "jsonl"))
    run = _run_file(tmp_path, "prod_run.trec")
    lines = run_lines()
    bad = tmp_path / "broken_run.trec"
    broken = lines[:BAD_LINE - 1] + [" ".join(lines[BAD_LINE - 1].split()[:4])] + lines[BAD_LINE:10]
    bad.write_text("\n".join(broken) + "\n")
    return golden, run, bad


def _text(alert: str) -> str:
    """An alert's text without its icon's name (the first line, e.g. ``check_circle``)."""
    lines = [line.strip() for line in alert.strip().splitlines() if line.strip()]
    return " ".join(lines[1:] if len(lines) > 1 and lines[0].replace("_", "").isalpha() else lines)


def _expected(golden_path: Path, run_path: Path) -> tuple[int, dict[str, str]]:
    """The library's question count and cards (MRR and recall at K = 5) for the same two files."""
    from app_helpers import sample_index
    from rag_metrics.evaluation import evaluate
    from rag_metrics.io.golden import load_golden
    from rag_metrics.systems.uploads import parse_upload

    golden = load_golden(golden_path)
    system, report = parse_upload(run_path.read_bytes(), run_path.name, sample_index("dense").chunks)
    assert report.ok and system is not None
    res = evaluate(golden, system.rank(golden.questions(), 100).run)
    return res.n_queries, {"MRR@5": f"{res.mean('mrr', 5):.3f}", "Recall@5": f"{res.mean('recall', 5):.3f}"}


def test_files_to_a_verdict_in_chromium(server, tmp_path):  # noqa: F811
    golden, run, bad = _files(tmp_path)
    n_queries, cards = _expected(golden, run)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 2400})
        page.goto(f"{server}/bring_your_system")
        _wait_idle(page, TITLE)
        main = page.locator('[data-testid="stMain"]')
        main.get_by_text("Bring in a run, RAG log or trace export above").wait_for(timeout=60_000)

        # 1. drop the three files at once
        main.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
            [str(golden), str(run), str(bad)])
        uploader = main.locator('[data-testid="stFileUploader"]').first
        for f in (golden, run, bad):
            uploader.get_by_text(f.name).wait_for(timeout=60_000)
        main.get_by_role("button", name="Bring in and evaluate").wait_for(timeout=60_000)
        wait_until_idle(page)  # the upload's rerun has finished

        # 2. one line per file: what was read, or why not (the file and the line, no traceback)
        read = [_text(t) for t in main.locator('[data-testid="stAlertContentSuccess"]').all_inner_texts()]
        assert any(t.startswith(f"{golden.name}: a golden set") and t.endswith("→ golden set") for t in read), read
        assert any(t.startswith(f"{run.name}: a TREC run") and t.endswith("→ system to evaluate") for t in read), \
            read
        (refused,) = [_text(t) for t in main.locator('[data-testid="stAlertContentError"]').all_inner_texts()]
        assert refused.startswith(f"{bad.name}: looks like a TREC run"), refused
        assert f"{bad.name}:{BAD_LINE}: expected 6 fields" in refused, refused
        assert "Traceback" not in page.content()
        assert page.locator('[data-testid="stException"]').count() == 0

        # 3. bring them in under a name (the broken file is left out)
        main.get_by_label("System name").fill("prod run")
        main.get_by_role("button", name="Bring in and evaluate").click()
        page.get_by_text(f"System 'prod run' added from {run.name}").first.wait_for(timeout=120_000)
        _wait_idle(page, TITLE)
        notice = main.get_by_text(f"System 'prod run' added from {run.name}").first.inner_text()
        assert f"Golden set replaced by {golden.name} ({N_GOLDEN} questions)" in notice, notice

        # 4. the verdict: the system on the uploaded golden set, with the library's numbers
        verdict = main.get_by_text(f"prod run on {n_queries} golden questions of").first
        verdict.wait_for(timeout=120_000)
        assert main.locator('[data-testid="stMetric"]').count() >= len(cards)
        shown = {}
        for metric in main.locator('[data-testid="stMetric"]').all():
            label = metric.locator('[data-testid="stMetricLabel"]').inner_text().strip()
            shown[label] = metric.locator('[data-testid="stMetricValue"]').inner_text().strip()
        assert {k: shown.get(k) for k in cards} == cards, shown
        assert "Traceback" not in page.content()
        assert page.locator('[data-testid="stException"]').count() == 0
