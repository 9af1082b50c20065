"""CPU as a budget (issue 50): the texts a student's seat embeds are counted per seat and for the class
in a sliding window, and a batch over either is refused before anything is embedded."""
from __future__ import annotations

import pytest

from rag_metrics import jobs
from rag_metrics.config import Budgets, parse_budgets
from rag_metrics.errors import InputError
from rag_metrics.retrieval import EmbeddingCache
from rag_metrics.retrieval.cache import encode_with_cache
from rag_metrics.retrieval.memo import LazyEncoder
from rag_metrics.server.budgets import EmbeddingBudgetExceeded, EmbedLedger, embed_meter
from tests.test_retrieval_cache import CountingEncoder

pytestmark = pytest.mark.usefixtures("class_state_backend")  # files and PostgreSQL (issue 52)


def test_a_batch_over_the_seats_budget_is_refused_before_any_text_is_embedded(tmp_path):
    enc, cache = CountingEncoder(), EmbeddingCache(tmp_path / "cache")
    charge = embed_meter("s1", Budgets(embed_texts_per_seat=10, embed_window_s=600), tmp_path)
    with jobs.metered(charge):
        encode_with_cache(enc, [f"text {i}" for i in range(8)], cache)
        encode_with_cache(enc, [f"text {i}" for i in range(8)], cache)  # all cached: costs nothing
        with pytest.raises(EmbeddingBudgetExceeded) as err:
            encode_with_cache(enc, [f"other {i}" for i in range(3)], cache)
    assert len(enc.seen) == 8  # the refused batch embedded nothing
    msg = str(err.value)
    assert "3 new texts" in msg and "8 of 10" in msg and "lab.budgets.embed_texts_per_seat" in msg
    assert "resets in 10 minutes" in msg and isinstance(err.value, InputError)  # pages show it as a message
    assert EmbedLedger(tmp_path).used("seat:s1", 600) == 8
    encode_with_cache(enc, [f"other {i}" for i in range(3)], cache)  # no meter (the CLI, the teacher): free


def test_the_class_budget_binds_every_seat_together(tmp_path):
    b = Budgets(embed_texts_per_seat=100, embed_texts_per_class=10)
    embed_meter("a", b, tmp_path)(7)
    with pytest.raises(EmbeddingBudgetExceeded, match="the class's embedding budget: 7 of 10"):
        embed_meter("b", b, tmp_path)(4)
    assert EmbedLedger(tmp_path).all_used(3600) == {"seat:a": 7, "class": 7}  # nothing counted for b


def test_the_window_slides():
    import tempfile

    led = EmbedLedger(tempfile.mkdtemp())
    assert led.spend([("seat:a", 10)], 10, 60, now=0) is None
    assert led.spend([("seat:a", 10)], 1, 60, now=30) == ("seat:a", 10, 10, 30.0)
    assert led.spend([("seat:a", 10)], 10, 60, now=61) is None
    for t in range(100, 130):  # many small batches in one minute: one entry (the file stays small)
        led.spend([("seat:b", 1000)], 1, 3600, now=t)
    assert led._read()["seat:b"] == [[100.0, 30.0]] and led.used("seat:b", 3600, now=200) == 30


def test_the_apps_encoder_charges_what_it_embeds_directly(tmp_path):
    enc = LazyEncoder("fake", dim=16)
    enc._encoder = CountingEncoder()  # loaded (no model in this test)
    with jobs.metered(embed_meter("s1", Budgets(embed_texts_per_seat=2), tmp_path)), \
            pytest.raises(EmbeddingBudgetExceeded):
        enc.encode(["one", "two", "three"])  # e.g. a sweep's latency probe, outside the cache
    assert enc._encoder.seen == []


def test_the_meter_provider_finds_a_threads_meter_and_metered_none_wins(tmp_path, monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(jobs, "meter_provider", lambda: calls.append)
    jobs.charge(5)
    with jobs.metered(None):
        jobs.charge(7)  # paid already (encode_with_cache's own batches)
    jobs.charge(0)
    assert calls == [5]


def test_the_budgets_parse_and_bound():
    b = parse_budgets({"embed_texts_per_seat": 50, "corpora_per_seat": 2, "corpora_mb_per_seat": 3})
    assert (b.embed_texts_per_seat, b.corpora_per_seat, b.corpora_mb_per_seat) == (50, 2, 3)
    with pytest.raises(InputError, match="embed_window_s"):
        parse_budgets({"embed_window_s": 0})
