"""Embedding cache: hits, invalidation (model, text), persistence, safety; shipped embeddings."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from rag_metrics.retrieval import DenseRetriever, EmbeddingCache, HashingEncoder
from rag_metrics.retrieval.cache import (
    COMPACT_AFTER,
    encode_with_cache,
    read_shipped,
    ship_embeddings,
    text_key,
)
from rag_metrics.types import Chunk


class CountingEncoder:
    """HashingEncoder that records every text it embeds."""

    def __init__(self, name: str = "fake", dim: int = 16) -> None:
        self.name, self.dim = name, dim
        self._inner = HashingEncoder(dim)
        self.seen: list[str] = []

    def encode(self, texts: Sequence[str], progress=None) -> np.ndarray:
        self.seen.extend(texts)
        return self._inner.encode(texts, progress)


def test_second_call_is_all_hits_and_persists_on_disk(tmp_path: Path) -> None:
    enc = CountingEncoder()
    texts = ["alpha", "beta", "alpha", "gamma"]
    first = encode_with_cache(enc, texts, EmbeddingCache(tmp_path))
    assert enc.seen == ["alpha", "beta", "gamma"]  # duplicates embedded once
    enc.seen.clear()
    fresh = EmbeddingCache(tmp_path)  # a new process would do the same
    again = encode_with_cache(enc, texts, fresh)
    assert enc.seen == [] and fresh.hits == 3 and fresh.misses == 0
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first[0], first[2])


def test_digests_ending_in_zero_bytes_survive_the_disk(tmp_path: Path) -> None:
    # NumPy's S32 dtype strips trailing NULs; a digest ending in 0x00 must still hit
    text = next(t for t in (f"text {i}" for i in range(100_000)) if text_key(t)[-1] == 0)
    enc = CountingEncoder()
    encode_with_cache(enc, [text], EmbeddingCache(tmp_path))
    enc.seen.clear()
    encode_with_cache(enc, [text], EmbeddingCache(tmp_path))
    assert enc.seen == []


def test_early_s32_shards_are_still_read(tmp_path: Path) -> None:
    text = next(t for t in (f"text {i}" for i in range(100_000)) if text_key(t)[-1] == 0)
    cache = EmbeddingCache(tmp_path)
    d = cache.model_dir("fake")
    d.mkdir(parents=True)
    vec = HashingEncoder(16).encode([text])
    np.savez(d / "shard-0-old.npz", keys=np.array([text_key(text)], dtype="S32"), vectors=vec)
    enc = CountingEncoder()
    np.testing.assert_array_equal(encode_with_cache(enc, [text], cache), vec)
    assert enc.seen == []


def test_text_change_re_embeds_only_that_text(tmp_path: Path) -> None:
    enc = CountingEncoder()
    cache = EmbeddingCache(tmp_path)
    encode_with_cache(enc, ["one", "two", "three"], cache)
    enc.seen.clear()
    encode_with_cache(enc, ["one", "two!", "three"], cache)
    assert enc.seen == ["two!"]


def test_model_change_invalidates(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    a, b = CountingEncoder("model-a"), CountingEncoder("model-b")
    encode_with_cache(a, ["x", "y"], cache)
    encode_with_cache(b, ["x", "y"], cache)
    assert b.seen == ["x", "y"]
    assert cache.model_dir("model-a") != cache.model_dir("model-b")
    # names that sanitise alike still get separate folders
    assert cache.model_dir("a/b") != cache.model_dir("a_b")


def test_dimension_change_under_same_name_starts_afresh(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    encode_with_cache(CountingEncoder("m", 8), ["x"], cache)
    enc16 = CountingEncoder("m", 16)
    out = encode_with_cache(enc16, ["x"], EmbeddingCache(tmp_path))
    assert enc16.seen == ["x"] and out.shape == (1, 16)


def test_files_are_numpy_without_pickle_and_corrupt_shards_are_ignored(tmp_path: Path) -> None:
    enc = CountingEncoder()
    cache = EmbeddingCache(tmp_path)
    encode_with_cache(enc, ["x"], cache)
    (shard,) = cache.model_dir("fake").glob("shard-*.npz")
    with np.load(shard, allow_pickle=False) as z:
        assert z["keys"].dtype == np.uint8 and z["keys"].shape == (1, 32)
        assert z["vectors"].dtype == np.float32
        assert z["keys"][0].tobytes() == text_key("x")
    shard.write_bytes(b"garbage")
    enc.seen.clear()
    encode_with_cache(enc, ["x"], EmbeddingCache(tmp_path))
    assert enc.seen == ["x"]  # re-embedded, no crash
    assert not list(cache.model_dir("fake").glob(".tmp-*"))  # no leftovers of atomic writes


def test_compaction_merges_shards(tmp_path: Path) -> None:
    enc = CountingEncoder()
    for i in range(COMPACT_AFTER + 2):
        encode_with_cache(enc, [f"t{i}"], EmbeddingCache(tmp_path))
    cache = EmbeddingCache(tmp_path)
    enc.seen.clear()
    encode_with_cache(enc, [f"t{i}" for i in range(COMPACT_AFTER + 2)], cache)
    assert enc.seen == []
    # 33 shards were merged into one when the 34th cache opened the folder
    assert len(list(cache.model_dir("fake").glob("shard-*.npz"))) == 2


def test_read_only_cache_never_writes(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, read_only=True)
    encode_with_cache(CountingEncoder(), ["x"], cache)
    assert not any(tmp_path.rglob("*.npz"))


def test_progress_reports_only_embedded_texts(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    cache = EmbeddingCache(tmp_path)
    encode_with_cache(CountingEncoder(), ["a", "b", "a"], cache, lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, 2)  # the count is known before the first batch (and the model load)
    assert calls[-1] == (2, 2)
    calls.clear()
    encode_with_cache(CountingEncoder(), ["a", "b"], cache, lambda d, t: calls.append((d, t)))
    assert calls == [(0, 0)]


def test_dense_retriever_never_re_embeds_unchanged_chunks_or_questions(tmp_path: Path) -> None:
    enc = CountingEncoder(dim=64)
    chunks = [Chunk("a#0", "a", "red apples", 0, 10), Chunk("b#0", "b", "green pears", 0, 11)]
    r = DenseRetriever(enc, EmbeddingCache(tmp_path))
    r.index(chunks)
    r.retrieve({"q": "apples"})
    enc.seen.clear()
    r2 = DenseRetriever(enc, EmbeddingCache(tmp_path))  # rerun
    r2.index(chunks)
    r2.retrieve({"q": "apples"})
    assert enc.seen == []
    # re-chunking that keeps a chunk's text does not re-embed it
    r2.index([Chunk("a#7", "a", "red apples", 5, 15), Chunk("c#0", "c", "blue plums", 0, 10)])
    assert enc.seen == ["blue plums"]


# -- shipped embeddings ----------------------------------------------------------------------------
def test_ship_and_preload(tmp_path: Path) -> None:
    enc = CountingEncoder(dim=8)
    ids, texts = ["d#0", "d#1"], ["first chunk", "second chunk"]
    ship_embeddings(tmp_path / "emb", enc, ids, texts, extra={"chunk_size": 500})
    manifest = json.loads((tmp_path / "emb" / "manifest.json").read_text())
    assert manifest["model"] == "fake" and manifest["chunk_size"] == 500
    assert manifest["text_sha256"] == [text_key(t).hex() for t in texts]
    shipped = read_shipped(tmp_path / "emb")
    assert shipped is not None and shipped.vectors.shape == (2, 8)
    assert shipped.stale_chunks(ids, ["first chunk", "changed"]) == ["d#1"]

    enc.seen.clear()
    cache = EmbeddingCache(tmp_path / "user")
    cache.add_shipped(tmp_path / "emb")
    encode_with_cache(enc, ["first chunk", "changed"], cache)
    assert enc.seen == ["changed"]  # only the mismatched chunk is re-embedded


def test_tampered_shipped_array_is_rejected(tmp_path: Path) -> None:
    enc = CountingEncoder(dim=8)
    ship_embeddings(tmp_path, enc, ["a#0"], ["text"])
    arr = np.load(tmp_path / "embeddings.npy")
    arr[0, 0] += 1
    np.save(tmp_path / "embeddings.npy", arr)
    assert read_shipped(tmp_path) is None
    assert EmbeddingCache(tmp_path / "c").add_shipped(tmp_path) is None
    assert read_shipped(tmp_path / "missing") is None


def test_default_cache_dir_honours_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_METRICS_CACHE", str(tmp_path / "c"))
    assert EmbeddingCache().directory == tmp_path / "c"


def test_an_interrupted_embedding_keeps_its_finished_slabs(tmp_path: Path, monkeypatch) -> None:
    """Cancelling a long embedding (the app's Cancel button stops the script at the next progress
    update) keeps every finished slab: the next call embeds only the rest."""
    import rag_metrics.retrieval.cache as cache_mod

    monkeypatch.setattr(cache_mod, "SLAB", 4)
    texts = [f"text {i}" for i in range(10)]

    class Cancelled(Exception):
        pass

    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done > 8:  # the hashing encoder reports at the end of each slab: 4, 8 (both stored), then 10
            raise Cancelled  # raised inside the third slab's encode, before it is stored

    enc = CountingEncoder()
    with pytest.raises(Cancelled):
        encode_with_cache(enc, texts, EmbeddingCache(tmp_path), progress)
    assert seen[0] == (0, 10) and all(t == 10 for _, t in seen)  # counts are over all 10 texts
    enc.seen.clear()
    out = encode_with_cache(enc, texts, EmbeddingCache(tmp_path))
    assert enc.seen == texts[8:]  # only the slab that was cut short
    np.testing.assert_array_equal(out, HashingEncoder(16).encode(texts))
