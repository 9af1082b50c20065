"""Test tiers and the skip policy (pytest hooks, imported by ``tests/conftest.py``).

Tiers
-----
Every test belongs to exactly one tier, run by name with ``./lab test TIER`` (``pytest --tier TIER``;
the markers also work with ``-m``):

``lib``      the library, its CLI and its docstring examples; no real model
``app``      every page through Streamlit's ``AppTest``
``slow``     the real embedding model and real collections
``browser``  the real app in Chromium via Playwright

How long each tier takes is measured, with its date, in one place: docs/benchmarks.md#test-suite.

An explicit ``@pytest.mark.browser`` / ``slow`` / ``app`` / ``lib`` wins; otherwise the file decides:
``test_browser*.py`` is browser, ``test_app_*.py`` (and the files in ``FILE_TIERS``) is app, a test
that uses the ``app`` or ``app_env`` fixture is app, and everything else is lib.

Skips
-----
pytrec_eval is a hard requirement: a test skipped because of it fails, everywhere.  Under CI
(``CI=true``) every skip fails, so a missing Chromium or missing datasets cannot pass silently;
only the optional comparisons in ``CI_OPTIONAL_SKIPS`` may skip there.  On a developer's machine
the other skips stay skips and say why.
"""
from __future__ import annotations

import os

import pytest

TIERS = ("lib", "app", "slow", "browser")
FILE_TIERS = {"test_cold_start.py": "app"}  # runs AppTest in a subprocess
APP_FIXTURES = frozenset({"app", "app_env"})
# Skips that CI tolerates: comparisons against packages the project does not install.
CI_OPTIONAL_SKIPS = (
    "ragas is not installed",  # the ragas cross-checks that need ragas inside the project venv
    "set RAG_METRICS_JUDGE_URL",  # a real LLM endpoint: only where the user has one
)
HARD_REQUIREMENTS = ("pytrec_eval",)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def tier_of(item: pytest.Item) -> str:
    """The one tier of a collected test (see the module docstring for the rule)."""
    for tier in ("browser", "slow", "app", "lib"):
        if item.get_closest_marker(tier) is not None:
            return tier
    name = item.path.name
    if name in FILE_TIERS:
        return FILE_TIERS[name]
    if name.startswith("test_browser"):
        return "browser"
    if name.startswith("test_app_") or APP_FIXTURES & set(getattr(item, "fixturenames", ())):
        return "app"
    return "lib"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tier", choices=(*TIERS, "all"), default="all",
                     help="run one test tier: " + ", ".join(TIERS) + " (default: all)")


@pytest.hookimpl(tryfirst=True)  # mark before `-m` selects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = config.getoption("--tier")
    keep, drop = [], []
    for item in items:
        tier = tier_of(item)
        if item.get_closest_marker(tier) is None:
            item.add_marker(tier)
        (keep if wanted in ("all", tier) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _skip_reason(longrepr: object) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _why_not_allowed(reason: str) -> str | None:
    """Why this skip must fail, or None when it may stay a skip."""
    for requirement in HARD_REQUIREMENTS:
        if requirement in reason:
            return f"{requirement} is a hard requirement (requirements-test.txt), never skipped"
    if in_ci() and not any(optional in reason for optional in CI_OPTIONAL_SKIPS):
        return "CI (CI=true) runs every test; a skip there is a failure (install what it names)"
    return None


def _fail_if_required(report: pytest.CollectReport | pytest.TestReport) -> None:
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report.longrepr)
    why = _why_not_allowed(reason)
    if why is not None:
        report.outcome = "failed"
        report.longrepr = f"skipped, but {why}.\nSkip reason: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    outcome = yield
    _fail_if_required(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    outcome = yield
    _fail_if_required(outcome.get_result())
