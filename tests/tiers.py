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

Parallel runs
-------------
``./lab test`` runs the tests on several processes (pytest-xdist, ``-n``; ``LAB_TEST_WORKERS`` sets
how many, 1 turns it off), then the tests marked ``@pytest.mark.serial`` alone, one after another
(``--serial only``; the parallel part runs with ``--serial skip``).  Mark ``serial`` a test that
measures time or must not share the machine.

Mark ``heavy`` a file whose checks depend on the browser's own speed (Pyodide under the exercises' 5-second
run limit, in a class behind nginx): it is kept out of the parallel part, and runs after it, one heavy file after
another, with ``./lab lint`` beside them, before the serial tests.  Their ids go to
``$LAB_HEAVY_LIST`` (``--serial skip``) and ``--serial only`` runs them too.  (Side by side, one a
process, they took 89 s against 123 s one after the other, and 135 s against 154 s in a fresh-clone CI
run, on 2026-12-02; but with the machine loaded, one of four such CI runs failed: a teacher's sign-in
not shown within 120 s on the second class server.  Tried again at 09:00 UTC, with a sign-in helper
that tries again: 104 s against 131 s, but the fresh-clone CI run failed two exercise tests, a hostile
run stopped by the sandbox's 5-second limit and a select box that did not open.  The exercises measure
the browser's time, so the heavy files stay one after the other.  Since 2026-12-02 the one heavy file is the
exercises' (Pyodide under the sandbox's 5-second limit): the projector pages' class deployment is no heavier
than the class and seat tests of the parallel part, and runs there.)

The tests of one file stay on one process (``--dist loadfile``), so a module-scoped server or
database starts once.  Files are handed out longest tier first (:func:`longest_first`).

``LAB_TEST_TIMELINE=FILE`` appends one line per test to FILE: the process (xdist worker or
``main``), start and end (Unix time) and the test's id; ``tools/test_timeline.py FILE`` shows what
each process ran when, file by file (where a parallel run waits on its slowest file).

Skips
-----
pytrec_eval is a hard requirement: a test skipped because of it fails, everywhere.  Under CI
(``CI=true``) every skip fails, so a missing Chromium or missing datasets cannot pass silently;
only the optional comparisons in ``CI_OPTIONAL_SKIPS`` may skip there.  On a developer's machine
the other skips stay skips and say why.
"""
from __future__ import annotations

import os
import time

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
SERIAL_CHOICES = ("all", "only", "skip")


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


def pytest_configure(config: pytest.Config) -> None:
    global _CONTROLLER
    # pytest-xdist's controller sees every worker's tests too: only the processes that run them record
    _CONTROLLER = bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")
    config.addinivalue_line("markers", "serial: runs alone, after the parallel part of ./lab test (it measures "
                            "time or must not share the machine; see tests/tiers.py)")
    config.addinivalue_line("markers", "heavy: checks that depend on the browser's own speed (Pyodide): runs after the "
                            "parallel part of ./lab test, beside the lint (see tests/tiers.py)")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tier", choices=(*TIERS, "all"), default="all",
                     help="run one test tier: " + ", ".join(TIERS) + " (default: all)")
    parser.addoption("--serial", choices=SERIAL_CHOICES, default="all",
                     help="tests marked serial: all (run them with the rest), only (just them), skip (not them); "
                          "./lab test runs the rest in parallel with 'skip', then them alone with 'only'")


@pytest.hookimpl(tryfirst=True)  # mark before `-m` selects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = config.getoption("--tier")
    serial = config.getoption("--serial")
    keep, drop = [], []
    later: dict[str, list[str]] = {"serial": [], "heavy": []}
    for item in items:
        tier = tier_of(item)
        if item.get_closest_marker(tier) is None:
            item.add_marker(tier)
        apart = next((m for m in later if item.get_closest_marker(m) is not None), None)
        if apart and serial == "skip" and wanted in ("all", tier):
            later[apart].append(item.nodeid)
        selected = wanted in ("all", tier) and serial != ("skip" if apart else "only")
        (keep if selected else drop).append(item)
    if serial == "skip":
        _write_list("LAB_SERIAL_LIST", later["serial"])
        _write_list("LAB_HEAVY_LIST", later["heavy"])
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = longest_first(keep)


#: The order in which files of each tier are handed out (tier -> rank): the longest first.
TIER_ORDER = {"browser": 0, "slow": 1, "app": 2, "lib": 3}


def longest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` with whole files reordered by tier, browser files first, then slow, app and lib, each
    file's tests kept together in their own order.  pytest-xdist's ``loadfile`` hands files out in this
    order (``./lab test`` passes ``--no-loadscope-reorder``: by default it would sort files by their number
    of tests), so the long files start first and the many short ones fill the gaps at the end (a long
    file handed out last kept one process busy for minutes while the other waited)."""
    rank: dict[object, tuple[int, int]] = {}
    for i, item in enumerate(items):
        r = TIER_ORDER.get(tier_of(item), len(TIER_ORDER))
        first = rank.get(item.path, (r, i))
        rank[item.path] = (min(first[0], r), first[1])
    order = sorted(range(len(items)), key=lambda i: (rank[items[i].path], i))
    return [items[i] for i in order]


def _write_list(variable: str, nodeids: list[str]) -> None:
    """With ``--serial skip``, the serial (or heavy) tests left out, one node id a line, to the file
    ``$LAB_SERIAL_LIST`` (``$LAB_HEAVY_LIST``): ``./lab test`` then runs just them, without collecting
    every module again."""
    path = os.environ.get(variable)
    if not path:
        return
    tmp = f"{path}.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(n + "\n" for n in nodeids)
    os.replace(tmp, path)


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


_STARTED: dict[str, float] = {}
_CONTROLLER = False


def pytest_runtest_logstart(nodeid: str, location: object) -> None:
    if os.environ.get("LAB_TEST_TIMELINE") and not _CONTROLLER:
        _STARTED[nodeid] = time.time()


def pytest_runtest_logfinish(nodeid: str, location: object) -> None:
    """One line per test to ``$LAB_TEST_TIMELINE`` (module docstring)."""
    path = os.environ.get("LAB_TEST_TIMELINE")
    if not path or nodeid not in _STARTED:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(path, "a", encoding="utf-8") as f:  # one short append per line: whole lines from every process
        f.write(f"{worker}\t{_STARTED.pop(nodeid):.2f}\t{time.time():.2f}\t{nodeid}\n")
