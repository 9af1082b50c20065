"""AppTest of the one encoder rule (issue 27, in Danish end to end): on the Danish sample, the health
check's near duplicates, the corpus map and the answer metrics embed with multilingual-e5-small (the
name shown is the model that ran, and the numbers are that model's); an uploaded Danish corpus gets it
too; the English sample keeps all-MiniLM-L6-v2."""
from __future__ import annotations

import json

import pytest

from app_helpers import goto, load_corpus_files, no_exception
from rag_metrics.answers.data import parse_answers
from rag_metrics.answers.embed import encoder_for_items
from rag_metrics.answers.offline import OfflineJudge
from rag_metrics.answers.reference import ReferenceMetrics
from rag_metrics.answers.scoring import evaluate_answers
from rag_metrics.insights.health import near_duplicates
from rag_metrics.io.corpus import load_corpus
from rag_metrics.retrieval import chunk_corpus, get_encoder
from rag_metrics.retrieval.cache import EmbeddingCache, encode_with_cache
from rag_metrics.retrieval.choice import thresholds_for
from rag_metrics.retrieval.encoders import DEFAULT_MODEL, MULTILINGUAL_MODEL
from rag_metrics.sample import sample_paths

DA = "sample_corpus_da"


@pytest.fixture
def fresh_encoders(monkeypatch):
    """A process without loaded encoders (other tests in this process may have loaded the model)."""
    import rag_metrics.retrieval.factory as factory

    monkeypatch.setattr(factory, "_ENCODERS", {})


def _texts(at) -> str:
    """Every text of the page, markdown escapes removed (names are escaped where they are shown)."""
    return "\n".join(str(e.value) for kind in ("caption", "markdown", "info", "warning", "success")
                     for e in getattr(at, kind)).replace("\\", "")


def _danish_near_duplicates(threshold: float = thresholds_for(MULTILINGUAL_MODEL).near_duplicate) -> int:
    """The library's near-duplicate pairs of the Danish sample, from its shipped multilingual passage vectors, at
    the model's own threshold (the Health page's default)."""
    paths = sample_paths(language="da")
    cache = EmbeddingCache(read_only=True)
    cache.add_shipped(paths.embeddings)
    chunks = chunk_corpus(load_corpus(paths.docs))
    vectors = encode_with_cache(get_encoder(MULTILINGUAL_MODEL), [c.text for c in chunks], cache)
    return len(near_duplicates(vectors, [c.id for c in chunks], threshold, doc_ids=[c.doc_id for c in chunks]))


def test_health_and_the_corpus_map_of_the_danish_sample_use_its_model(fresh_encoders, app):
    app.selectbox(key="corpus").set_value(DA).run()
    no_exception(app)
    assert "Dense (multilingual-e5-small)" in app.selectbox(key="system").help
    health = goto(app, "pages/health.py")
    assert "Embeddings: multilingual-e5-small, the corpus's model." in _texts(health)
    near = next(m for m in health.metric if m.label == "Near duplicates")
    assert near.value == str(_danish_near_duplicates())
    assert "multilingual-e5-small" in near.help
    cmap = goto(app, "pages/corpus_map.py")
    assert "Embeddings: multilingual-e5-small (chunks as passages, questions as queries)." in _texts(cmap)
    assert not cmap.error
    # chunks and questions came from the sample's shipped passage and query vectors: no model was loaded
    assert not get_encoder(MULTILINGUAL_MODEL).loaded  # type: ignore[attr-defined]


def test_the_english_sample_keeps_minilm(app):
    assert "Dense (all-MiniLM-L6-v2)" in app.selectbox(key="system").help
    health = goto(app, "pages/health.py")
    assert f"Embeddings: {DEFAULT_MODEL}, the corpus's model." in _texts(health)


def _danish_log() -> bytes:
    rows = [{"id": "a1", "question": "hvor lang tid kan jeg prøve det gratis?",
             "answer": "Du kan prøve Tidsrum gratis i 30 dage, og du skal ikke bruge et betalingskort.",
             "contexts": ["Prøveperioden varer 30 dage, og du behøver ikke et betalingskort for at prøve Tidsrum."],
             "ground_truth": "30 dage, uden betalingskort."},
            {"id": "a2", "question": "hvad koster en ekstra sms?",
             "answer": "Katten sover på sofaen i stuen hele eftermiddagen, og det regner udenfor.",
             "contexts": ["En ekstra sms koster 0,45 kr. og lægges på den næste faktura."],
             "ground_truth": "0,45 kr. pr. ekstra sms, lagt på næste faktura."}]
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode("utf-8")


def test_danish_answers_are_scored_with_the_multilingual_model(app):
    app.selectbox(key="corpus").set_value(DA).run()
    at = goto(app, "pages/answers.py")
    at.radio(key="answers_source").set_value("Upload a RAG log").run()
    at.file_uploader(key="answers_upload").set_value([("svar.jsonl", _danish_log(), "application/json")]).run()
    no_exception(at)
    assert "Offline scores embed with multilingual-e5-small" in _texts(at)
    items, _ = parse_answers(_danish_log(), "svar.jsonl")
    enc = encoder_for_items(items)
    assert enc.name == f"{MULTILINGUAL_MODEL}:query"
    ev = evaluate_answers(items, [OfflineJudge(enc), ReferenceMetrics(enc)])
    from rag_metrics.metrics.answer_registry import ANSWER_METRICS

    means = at.dataframe[0].value
    summary = ev.summary().set_index("metric")
    for metric in ("context_support", "answer_question_similarity", "semantic_similarity"):
        row = means[means.label.str.startswith(ANSWER_METRICS[metric].label)].iloc[0]
        assert row["mean"] == pytest.approx(summary.loc[metric, "mean"]), metric
    # the on-topic answer scores above the unrelated one
    assert ev.scores["a1"]["answer_question_similarity"].value > ev.scores["a2"]["answer_question_similarity"].value


def test_an_uploaded_danish_corpus_gets_the_multilingual_model(app):
    docs = sample_paths(language="da").docs
    files = [(p.name, p.read_bytes(), "text/markdown") for p in sorted(docs.glob("*.md"))[:3]]
    at = load_corpus_files(app, files, name="mine-da")
    assert at.selectbox(key="corpus").value == "mine-da"
    assert "Dense (multilingual-e5-small)" in at.selectbox(key="system").help
    health = goto(at, "pages/health.py")
    assert "Embeddings: multilingual-e5-small, the corpus's model." in _texts(health)
