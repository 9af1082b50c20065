"""The tier rule and the skip policy of ``tests/tiers.py`` (library tier)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tiers

TESTS = Path(__file__).resolve().parent


class FakeItem:
    def __init__(self, file: str, marks: tuple[str, ...] = (), fixtures: tuple[str, ...] = ()) -> None:
        self.path = TESTS / file
        self.marks = marks
        self.fixturenames = list(fixtures)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.marks else None


@pytest.mark.parametrize("item, tier", [
    (FakeItem("test_metrics_hand.py"), "lib"),
    (FakeItem("test_app_pages.py"), "app"),
    (FakeItem("test_cold_start.py"), "app"),
    (FakeItem("test_report.py", fixtures=("app_env", "tmp_path")), "app"),
    (FakeItem("test_browser.py"), "browser"),
    (FakeItem("test_report.py", marks=("browser",)), "browser"),
    (FakeItem("test_retrieval_slow.py", marks=("slow",)), "slow"),
    (FakeItem("test_app_pages.py", marks=("slow",)), "slow"),
], ids=["plain", "app-file", "mapped-file", "app-fixture", "browser-file", "browser-mark", "slow-mark",
        "mark-beats-file"])
def test_each_test_gets_one_tier(item: FakeItem, tier: str) -> None:
    assert tiers.tier_of(item) == tier  # type: ignore[arg-type]  # a stand-in for pytest.Item


def test_files_are_handed_out_longest_tier_first_each_file_whole() -> None:
    a1, a2 = FakeItem("test_metrics_hand.py"), FakeItem("test_metrics_hand.py")
    b1, b2 = FakeItem("test_browser.py"), FakeItem("test_browser.py")
    c = FakeItem("test_app_pages.py")
    mixed_lib, mixed_browser = FakeItem("test_report.py"), FakeItem("test_report.py", marks=("browser",))
    items = [a1, b1, mixed_lib, c, a2, mixed_browser, b2]
    got = tiers.longest_first(items)  # type: ignore[arg-type]  # stand-ins for pytest.Item
    assert got == [b1, b2, mixed_lib, mixed_browser, c, a1, a2]


def test_skip_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    assert tiers._why_not_allowed("Chromium not found at /usr/bin/chromium") is None
    assert "hard requirement" in str(tiers._why_not_allowed("could not import 'pytrec_eval'"))
    monkeypatch.setenv("CI", "true")
    assert "CI" in str(tiers._why_not_allowed("shared datasets not present"))
    assert tiers._why_not_allowed("ragas is not installed (pip install ragas)") is None


PROBE = '''
import pytest

def test_runs():
    pass

def test_needs_chromium():
    pytest.skip("Chromium not found")

def test_needs_pytrec_eval():
    pytest.importorskip("pytrec_eval_not_installed_anywhere", reason="pytrec_eval is not installed")

def test_optional_ragas():
    pytest.skip("ragas is not installed (pip install ragas)")
'''


@pytest.mark.parametrize("ci, failed", [("", {"test_needs_pytrec_eval"}),
                                        ("true", {"test_needs_pytrec_eval", "test_needs_chromium"})])
def test_hooks_turn_forbidden_skips_into_failures(tmp_path: Path, ci: str, failed: set[str]) -> None:
    (tmp_path / "conftest.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(TESTS)!r})
        from tiers import pytest_runtest_makereport, pytest_make_collect_report  # noqa: F401
    """), encoding="utf-8")
    (tmp_path / "test_probe.py").write_text(PROBE, encoding="utf-8")
    env = {**os.environ, "CI": ci, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider",
                        str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    got = {line.split("::")[1].split(" ")[0] for line in p.stdout.splitlines() if line.startswith("FAILED")}
    assert got == failed, p.stdout[-3000:]
    assert p.returncode == 1


SERIAL_PROBE = '''
import pytest

def test_parallel():
    pass

@pytest.mark.serial
def test_alone():
    pass

@pytest.mark.heavy
def test_heavy():
    pass
'''


@pytest.mark.parametrize("serial, ran", [("all", {"test_parallel", "test_alone", "test_heavy"}),
                                         ("skip", {"test_parallel"}), ("only", {"test_alone", "test_heavy"})])
def test_serial_tests_run_apart_and_are_listed_for_later(tmp_path: Path, serial: str, ran: set[str]) -> None:
    """``--serial skip`` leaves the serial and heavy tests out and lists them in ``$LAB_SERIAL_LIST`` and
    ``$LAB_HEAVY_LIST`` (what ``./lab test`` runs afterwards); ``--serial only`` runs just them."""
    (tmp_path / "conftest.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(TESTS)!r})
        from tiers import pytest_addoption, pytest_collection_modifyitems, pytest_configure  # noqa: F401
    """), encoding="utf-8")
    (tmp_path / "test_probe.py").write_text(SERIAL_PROBE, encoding="utf-8")
    listed, heavy = tmp_path / "serial.txt", tmp_path / "heavy.txt"
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "LAB_SERIAL_LIST": str(listed),
           "LAB_HEAVY_LIST": str(heavy)}
    p = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                        "--serial", serial, str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout[-3000:]
    got = {line.split("::")[1].split(" ")[0] for line in p.stdout.splitlines() if " PASSED" in line}
    assert got == ran, p.stdout[-3000:]
    if serial == "skip":
        assert listed.read_text(encoding="utf-8").split() == ["test_probe.py::test_alone"]
        assert heavy.read_text(encoding="utf-8").split() == ["test_probe.py::test_heavy"]
    else:
        assert not listed.exists() and not heavy.exists()
