"""The AppTest fixtures' shared caches (``SHARED_CACHES`` in tests/conftest.py): the read-only ones stay warm
from one test to the next, everything else starts fresh, and a changed setting clears them all.  Fails
when a Streamlit upgrade moves the cache registries (the tests would then rebuild everything: slower)."""
from __future__ import annotations

from conftest import SHARED_CACHES, _clear_streamlit_caches, shared_cache


def test_shared_caches_are_ui_caches():
    for name in SHARED_CACHES:
        assert callable(getattr(shared_cache(name), "clear", None)), name


def test_read_only_caches_stay_warm_and_the_rest_starts_fresh(app_env):
    from ui import cache

    _clear_streamlit_caches(keep_shared=True)  # the settings of this test are now those of the shared entries
    corpus, fp = cache.sample_corpus()
    chunks = cache.chunk_set(corpus, fp, 500, 100)
    memo = cache.retrieval_memo(chunks, chunks.fingerprint, "bm25")
    budget = cache.budget()
    _clear_streamlit_caches(keep_shared=True)  # as between two tests
    assert cache.sample_corpus()[0] is corpus  # shared: not read again
    fresh = cache.chunk_set(corpus, fp, 500, 100)
    assert fresh is not chunks  # not shared: rebuilt
    assert cache.retrieval_memo(fresh, fresh.fingerprint, "bm25") is not memo
    assert cache.budget() is not budget


def test_a_changed_setting_clears_every_cache(app_env, monkeypatch):
    from ui import cache

    _clear_streamlit_caches(keep_shared=True)
    corpus, _ = cache.sample_corpus()
    monkeypatch.setenv("RAG_METRICS_CACHE_MB", "64")
    _clear_streamlit_caches(keep_shared=True)
    again, _ = cache.sample_corpus()
    assert again is not corpus
    monkeypatch.delenv("RAG_METRICS_CACHE_MB")
    _clear_streamlit_caches(keep_shared=True)  # back to the earlier settings: still cleared
    assert cache.sample_corpus()[0] is not again
