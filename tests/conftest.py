"""Shared pytest fixtures.  (Others may append fixtures below; keep each one self-contained.)

Test tiers (lib, app, slow, browser: ``./lab test TIER``) and the skip policy (pytrec_eval never
skips; under ``CI=true`` nothing skips) are pytest hooks in ``tests/tiers.py``, imported here.

App fixtures
------------
``app_env``  points ``RAG_METRICS_WORKSPACE`` at a fresh tmp folder per test and
             ``RAG_METRICS_CACHE`` at one tmp folder per test session (question embeddings are
             computed once), sets ``HF_HUB_OFFLINE`` and clears the Streamlit caches before and
             after the test (caches persist across AppTest runs in one process), all but the
             read-only ones in ``SHARED_CACHES``, which the tests of one process share (warm).
``app``      an ``AppTest`` of ``app.py`` already run once (dashboard, dense retriever, K = 5).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tiers import (  # noqa: F401  (pytest hooks: pytest registers them from this module)
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_make_collect_report,
    pytest_runtest_logfinish,
    pytest_runtest_logstart,
    pytest_runtest_makereport,
)

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# One thread per model in a test process (and the app servers it starts): the tests run one process per
# core, so a second thread only spins waiting for a core (MiniLM on 300 passages beside two busy loops:
# 9.2 core-s with two threads, 5.6 with one).  Set before anything imports torch.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# No background model warm-up in tests: each AppTest process would load torch for nothing (the
# warm-up itself is tested with it switched on, in tests/test_app_scale.py).
os.environ.setdefault("RAG_METRICS_WARM", "0")
# ragas (its equality and cross-checks, tests/answers_ragas_env.py) posts usage events to its makers' server from
# every LLM call, in its own and a background thread; with no internet each post waited on a DNS lookup (10 of the
# equality test's 17 s).  Its documented opt-out; nothing of ours is sent anywhere.
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
# The app hides error details from users (.streamlit/config.toml); tests want them in failures.
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")


def _replace_once(module: str, name: str, make) -> None:
    """``module.name = make(real)`` once per process (``real``: Streamlit's own function; ``name`` may be
    ``Class.method``); nothing when this Streamlit version has no such module."""
    import importlib

    try:
        owner = importlib.import_module(module)
    except ImportError:  # another Streamlit version: nothing to change
        return
    *path, name = name.split(".")
    for part in path:
        owner = getattr(owner, part)
    real = getattr(owner, name)
    if getattr(real, "_lab_replaced", False):
        return
    new = make(real)
    new._lab_replaced = True
    setattr(owner, name, new)


def _scan_once(real):
    """Every ``AppTest`` scans the metadata of every installed package for Streamlit components
    (``streamlit.components.v2.manifest_scanner``), about 0.25 s each time, which the real server
    does once at start.  The installed packages do not change during a test session, so the scan's
    answer is kept for the process (a copy of the list each time)."""
    found: list = []

    def scan(max_workers: int | None = None):
        if not found:
            found.append(real(max_workers))
        return list(found[0])

    return scan


def _join_the_script_thread(real):
    """``AppTest.run`` waits for the script run's end by waking every millisecond to scan every event
    the run has emitted (``local_script_runner.require_widgets_deltas``); with hundreds of events a
    run, that loop takes the interpreter lock from the script thread it waits for.  The run's end is
    its thread's end (the SHUTDOWN event is emitted just before), so this waits on the thread instead,
    with Streamlit's timeout and error."""

    def require_widgets_deltas(runner, timeout: float = 3) -> None:
        thread = getattr(runner, "_script_thread", None)
        if thread is not None:
            thread.join(timeout)
            if runner.script_stopped():
                return
            runner.request_stop()  # not ended in time: stopped, with Streamlit's error
            runner.join()
            raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")
        real(runner, timeout)

    return require_widgets_deltas


def _compile_once(real):
    """Every ``AppTest`` run has a new ``ScriptCache``, so each run compiled ``app.py`` and its page again
    (798 compiles in two app files, 0.64 s of their 36 s).  The compiled code is kept for the process,
    keyed by the script's path, size and modification time and the magic setting, so an edited script
    is compiled again."""
    import os

    from streamlit import config

    done: dict[tuple, object] = {}

    def get_bytecode(self, script_path: str):
        path = os.path.abspath(script_path)
        try:
            info = os.stat(path)
        except OSError:
            return real(self, script_path)  # Streamlit's own error
        key = (path, info.st_size, info.st_mtime_ns, config.get_option("runner.magicEnabled"))
        code = done.get(key)
        if code is None:
            code = done[key] = real(self, script_path)
        return code

    return get_bytecode


@pytest.fixture(scope="session", autouse=True)
def _streamlit_harness_once():
    """What conftest changes in Streamlit's test harness, once per process (each function says why)."""
    _replace_once("streamlit.components.v2.manifest_scanner", "scan_component_manifests", _scan_once)
    _replace_once("streamlit.testing.v1.local_script_runner", "require_widgets_deltas", _join_the_script_thread)
    _replace_once("streamlit.runtime.scriptrunner.script_cache", "ScriptCache.get_bytecode", _compile_once)


@pytest.fixture(scope="session")
def app_cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("rag_metrics_cache")


@pytest.fixture(scope="module")
def browser():
    """The process's headless Chromium (``app_helpers.chromium``) for the tests of a module; each test opens
    its own pages or contexts in it, and what is left open is closed after the module."""
    from app_helpers import chromium

    with chromium() as b:
        yield b


@pytest.fixture(scope="session", autouse=True)
def _stop_chromium_at_the_end():
    """The process's Chromium (if a test started it) closes with the session, in the tests' thread."""
    yield
    if "app_helpers" in sys.modules:
        sys.modules["app_helpers"].stop_chromium()


#: The ``ui/cache.py`` caches the tests of one process share instead of rebuilding them for every
#: test (the sample's corpus, golden set and answers, the embedding cache, and the tables computed
#: from one evaluation).  Each is a pure function of its key: content fingerprints (corpus, golden
#: set, answers), an ``EvalKey`` (which names the chunking, system, golden set and options of the
#: evaluation), the cache folder, or the bytes of an upload; none reads the workspace, and none is
#: something a test counts or stubs.  Not shared, so every test sees them fresh: chunk sets,
#: indexes and rankings (``retrieval_memo``: tests count its retrievals), evaluations, embeddings
#: of chunks and questions (tests stub the encoder), the memory budget, the encoder, anything
#: holding session, workspace, LLM-judge or report state.  A test that changes a ``RAG_METRICS_*``
#: setting (other than the workspace) clears everything, before the next test too.
SHARED_CACHES = (
    # inputs: the shipped sample and the embedding cache (one folder per test session)
    "sample_corpus", "sample_golden", "sample_info", "embedding_cache", "document_text",
    "answers_sample", "answers_sample_key", "answers_offline", "answers_upload", "golden_file",
    # tables of one evaluation (keyed by its EvalKey) or of one chunking / golden set (fingerprints)
    "summary_table", "target_readouts", "curve_table", "curve_records", "abstention_records", "abstention_setup",
    "abstention_counts", "worst_query", "category_table", "hit_rate_table", "target_table", "abstention_table",
    "failures_found_lower", "comparison", "ab_category_table", "context_table", "context_summary", "ragas_export",
    "health_candidates", "health_ci_width", "health_ci_overall", "health_ci_curve_spec", "mean_chunk_length",
    "health_exact_duplicates", "health_duplicate_groups", "health_unknown", "health_unlabelled", "health_too_easy",
    "health_too_easy_count", "golden_export", "golden_validation", "golden_editor_options",
)
#: The modules that hold the app's caches (ui/cache.py and the caches split out of it).
CACHE_MODULES = ("ui.cache", "ui.cache_insights", "ui.cache_answers")
_shared_settings: list[dict[str, str]] = []  # the RAG_METRICS_* settings the shared entries were made under


def shared_cache(name: str):
    """The cached function ``name`` of :data:`SHARED_CACHES`, from whichever cache module holds it."""
    import importlib

    for module in CACHE_MODULES:
        fn = getattr(importlib.import_module(module), name, None)
        if fn is not None:
            return fn
    raise AttributeError(f"no cache called {name!r} in {', '.join(CACHE_MODULES)}")


def _settings() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("RAG_METRICS_") and k != "RAG_METRICS_WORKSPACE"}


def _take_shared() -> list[tuple[object, dict]]:
    """Detach the ``SHARED_CACHES`` from Streamlit's registries (so a clear of all caches passes them
    by); ``[]`` when this Streamlit keeps its caches otherwise (then every cache is cleared: slower,
    never less isolated)."""
    try:
        from streamlit.runtime.caching import cache_data_api, cache_resource_api

        keys = {shared_cache(name)._function_key for name in SHARED_CACHES}
        managers = (cache_data_api._data_caches, cache_resource_api._resource_caches)
        taken = []
        for manager in managers:
            with manager._caches_lock:
                shared = manager._function_caches.get(None, {})
                taken.append((manager, {k: shared.pop(k) for k in list(shared) if k in keys}))
        return taken
    except (ImportError, AttributeError):
        return []


def _clear_streamlit_caches(keep_shared: bool = False) -> None:
    """Clear every Streamlit cache, or every one but ``SHARED_CACHES`` (``keep_shared``, while the
    ``RAG_METRICS_*`` settings are those they were made under)."""
    import streamlit as st

    now = _settings()
    taken = _take_shared() if keep_shared and _shared_settings == [now] else []
    st.cache_data.clear()
    st.cache_resource.clear()
    for manager, caches in taken:
        with manager._caches_lock:  # type: ignore[attr-defined]
            manager._function_caches.setdefault(None, {}).update(caches)  # type: ignore[attr-defined]
    _shared_settings[:] = [now]


@pytest.fixture
def app_env(tmp_path, app_cache_dir, monkeypatch):
    ws = tmp_path / "workspace"
    monkeypatch.setenv("RAG_METRICS_WORKSPACE", str(ws))
    monkeypatch.setenv("RAG_METRICS_CACHE", str(app_cache_dir))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(ROOT)
    _clear_streamlit_caches(keep_shared=True)
    yield ws
    _clear_streamlit_caches(keep_shared=True)


@pytest.fixture
def proven_browser(monkeypatch):
    """Class mode's AppTest sessions are browsers that have solved the seat challenge
    (:mod:`rag_metrics.server.proof`): each session without a seat sends an answer, computed here in
    Python, to a challenge the server made for its address; the app checks and uses it up as it does
    a real browser's.  (AppTest runs no page script; tests/test_app_class.py's jars solve the
    challenge the page shows instead.)"""
    import streamlit as st

    from rag_metrics.server.policy import seat_proof_bits
    from rag_metrics.server.proof import PROOF_COOKIE, SeatProofs, solve
    from rag_metrics.server.seats import SeatRegistry
    from ui import class_budgets, identity

    real = identity.read_cookies

    def cookies():
        got = dict(real())
        bits = seat_proof_bits(True, class_budgets.budgets())
        if bits and "_identity_seat" not in st.session_state and PROOF_COOKIE not in got:
            got[PROOF_COOKIE] = solve(SeatProofs(SeatRegistry().root).challenge(bits, class_budgets.address()))
        return got

    monkeypatch.setattr(identity, "read_cookies", cookies)


APP_TIMEOUT = 180  # the first test of a session may load the embedding model


@pytest.fixture
def app(app_env):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APP_TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# ---- downloads (issue 6 pages) -----------------------------------------------------------------
@pytest.fixture
def downloads(monkeypatch):
    """What the app's download buttons would send: ``downloads.data(button)`` returns the bytes or
    text of an ``AppTest`` download button (deferred callables are called, as on a click)."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    class Downloads:
        def __init__(self) -> None:
            self.deferred: dict[str, object] = {}
            self.files: dict[str, object] = {}

        def data(self, button):
            proto = button.proto
            if proto.deferred_file_id:
                return self.deferred[proto.deferred_file_id]()
            return self.files[proto.url]

    spy = Downloads()
    add_deferred, add = MediaFileManager.add_deferred, MediaFileManager.add

    def _add_deferred(self, data_callable, *args, **kwargs):
        fid = add_deferred(self, data_callable, *args, **kwargs)
        spy.deferred[fid] = data_callable
        return fid

    def _add(self, path_or_data, *args, **kwargs):
        url = add(self, path_or_data, *args, **kwargs)
        spy.files[url] = path_or_data
        return url

    monkeypatch.setattr(MediaFileManager, "add_deferred", _add_deferred)
    monkeypatch.setattr(MediaFileManager, "add", _add)
    return spy


# ---- the class's shared state in PostgreSQL (rag_metrics.io.state; issue 52) -------------------
@pytest.fixture(scope="session")
def class_state_pg():
    """One real PostgreSQL (``pgserver``, on a Unix socket) per test process; its DSN."""
    import tempfile

    pgserver = pytest.importorskip("pgserver")
    folder = tempfile.mkdtemp(prefix="rag_metrics_state_pg_")
    srv = pgserver.get_server(folder, cleanup_mode="delete")
    yield srv.get_uri()
    from rag_metrics.io import pg_state

    for backend in list(pg_state._BACKENDS.values()):
        backend.close()
    pg_state._BACKENDS.clear()
    srv.cleanup()


@pytest.fixture(params=["files", "postgresql"])
def class_state_backend(request, monkeypatch):
    """Run a test of the class's stores once with files and once with PostgreSQL (``RAG_METRICS_STATE``
    set to a real server, its ``lab_state`` emptied first): both backends pass the same tests.  Use it
    with ``pytestmark = pytest.mark.usefixtures("class_state_backend")``."""
    if request.param == "files":
        monkeypatch.delenv("RAG_METRICS_STATE", raising=False)
        return "files"
    dsn = request.getfixturevalue("class_state_pg")
    from rag_metrics.io.state import class_state

    backend = class_state(".", dsn)
    with backend._connection() as conn:  # (the first connection applies the migrations)
        conn.execute("TRUNCATE lab_state")
    monkeypatch.setenv("RAG_METRICS_STATE", dsn)
    return "postgresql"
