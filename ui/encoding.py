"""The app's side of the one encoder rule (:mod:`rag_metrics.retrieval.choice`): which embedding model embeds
a corpus's text, and the answers' texts, with the operator's choices (``$RAG_METRICS_ENCODER``,
``[lab.encoders]``), and the model's name as the pages show it.

The app writes the bundled default model as ``""`` (``CorpusEntry.model``, ``EvalKey.model``, the cache
functions' ``model`` argument); :func:`label` gives the name of the model that actually ran.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from rag_metrics.retrieval.choice import CosineThresholds, choose_encoder, operator_encoders, thresholds_for
from rag_metrics.retrieval.encoders import DEFAULT_MODEL

__all__ = ["answers_model", "corpus_model", "label", "overrides", "thresholds"]


def overrides() -> dict[str, str]:
    """The operator's choices (``"*"``: every language; a language code; ``"default"``); a configuration that
    cannot be read gives none (:func:`ui.server.config` shows why)."""
    return operator_encoders()


def _app_name(model: str) -> str:
    return "" if model == DEFAULT_MODEL else model


@st.cache_data(show_spinner=False, max_entries=64)
def _corpus_choice(_corpus: Any, corpus_fp: str, language: str, declared: str, chosen: tuple) -> str:
    return _app_name(choose_encoder(language=language, corpus=_corpus, declared_model=declared,
                                    overrides=dict(chosen)).model)


def corpus_model(corpus: Any, fingerprint: str, *, language: str = "", declared: str = "") -> str:
    """The embedding model of a corpus's text ("" = the bundled default): a sample's declared ``language``
    and ``declared`` model, else the language guessed from its documents (once per corpus version)."""
    return _corpus_choice(corpus, fingerprint, language, declared, tuple(sorted(overrides().items())))


@st.cache_data(show_spinner=False, max_entries=64)
def _texts_choice(items_key: str, _texts: Sequence[str], chosen: tuple) -> str:
    return _app_name(choose_encoder(texts=_texts, overrides=dict(chosen)).model)


def answers_model(items: Sequence[Any], items_key: str) -> str:
    """The embedding model of a set of answers ("" = the bundled default): the language of their questions
    and answers (once per set, keyed by ``items_key``)."""
    texts = [t for it in items for t in (getattr(it, "question", ""), getattr(it, "answer", ""))]
    return _texts_choice(items_key, texts, tuple(sorted(overrides().items())))


def label(model: str) -> str:
    """The model's name as shown (``""``: the bundled default's name)."""
    return model or DEFAULT_MODEL


def thresholds(model: str) -> CosineThresholds:
    """The cosine cut-offs of ``model`` ("" = the bundled default): :func:`rag_metrics.retrieval.choice.thresholds_for`
    (context support's "supported" verdict, the near-duplicate default)."""
    return thresholds_for(model)
