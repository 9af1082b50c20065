"""Session state of the app: the one entry point of the pages (:func:`current`) and, re-exported, every
session accessor they use (``state.value``, ``state.corpus_entry``, ``state.golden_session``, ...).

Everything a page needs comes from :func:`current`, which returns a :class:`Lab` (the settings
chosen in the shared sidebar, the chunk set, the retrieval memo, the golden session, the
evaluation and its :class:`EvalKey`).  Pages never read ``st.session_state`` themselves: their
own widgets' values go through :func:`value` / :func:`default` / :func:`set_value`.

Where each part lives (bottom first; no module imports one above it):

- :mod:`ui.keys`     every session key; :mod:`ui.context` the plain types (:class:`Settings`, :class:`EvalKey`,
                     :class:`CorpusEntry`, :class:`ChunkSet`), the sidebar's :data:`DEFAULTS`, :func:`clamp_k`
                     (no Streamlit)
- :mod:`ui.cache`    every ``st.cache_*``
- :mod:`ui.session`  widget values, the one-shot notice, forgetting the space's state
- :mod:`ui.identity` who the browser is (class mode's seats); :mod:`ui.spaces` the caller and the workspace
- :mod:`ui.corpora`  the corpora and their chunking; :mod:`ui.golden` the golden session of each corpus
- this module        the sidebar's settings and presets, K, :func:`current` and :func:`rechunk`

**Sidebar widgets** (``KEY_*``): rendered by the shell on every run, so they survive page switches.
Defaults in :data:`DEFAULTS`; :func:`init_state` applies them once per session (a later URL-query-parameter
sync can override them there).  **K**: clamped to the retrieval depth in one place, :func:`clamp_k`.
"""
from __future__ import annotations

import secrets
from typing import cast

import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.evaluation import EvaluationResult
from rag_metrics.metrics.options import parse_gains
from rag_metrics.metrics.presets import PRESETS, describe_conventions, preset_of
from rag_metrics.retrieval.chunking import validate_chunk_args
from rag_metrics.retrieval.defaults import DEFAULT_RETRIEVER, RETRIEVER_KINDS
from ui import cache, session
from ui.context import (
    DEFAULTS,
    PRESET_KEYS,
    SAMPLE,
    SAMPLE_DA,
    SAMPLE_LANGUAGES,
    ChunkSet,
    CorpusEntry,
    EvalKey,
    LabData,
    NotEvaluated,
    Settings,
    clamp_k,
    depth_of,
    is_sample,
    sample_for_language,
    settings_from,
)
from ui.corpora import (
    add_corpus,
    chunk_set,
    chunking,
    corpus_entry,
    corpus_label,
    corpus_names,
    follow_lesson_language,
    lesson_language,
    set_chunking,
)
from ui.golden import (
    golden_editor,
    golden_judge,
    golden_keep_mine,
    golden_reload,
    golden_reset,
    golden_session,
    on_golden_edit,
    reset_wording,
)
from ui.keys import (
    CHUNKING,
    CORPORA,
    EDITOR_PREFIX,
    GOLDEN,
    KEY_CORPUS,
    KEY_GAIN,
    KEY_GAINS,
    KEY_JUDGED_ONLY,
    KEY_K,
    KEY_LEVEL,
    KEY_MISSING,
    KEY_MRR,
    KEY_NDCG_REL,
    KEY_NONPOS,
    KEY_OOS,
    KEY_PRESET,
    KEY_RECALL,
    KEY_RECALL_EMPTY,
    KEY_RETRIEVER,
    KEY_SYSTEM,
    PENDING,
    TOKEN,
)
from ui.session import (
    default,
    drop_golden_sessions,
    forget_space_state,
    keep_choice,
    notice,
    notice_outcome,
    notice_saved,
    pop,
    set_value,
    set_widget,
    value,
)
from ui.spaces import PARAM_SPACE, caller, set_space, space, sync_space_param, workspace
from ui.stored_systems import evaluate_named, stored_names
from ui.widgets import input_error

__all__ = [
    # the keys and plain types (ui.keys, ui.context)
    "DEFAULTS", "EDITOR_PREFIX", "KEY_CORPUS", "KEY_GAIN", "KEY_GAINS", "KEY_JUDGED_ONLY", "KEY_K", "KEY_LEVEL",
    "KEY_MISSING", "KEY_MRR", "KEY_NDCG_REL", "KEY_NONPOS", "KEY_OOS", "KEY_PRESET", "KEY_RECALL",
    "KEY_RECALL_EMPTY", "KEY_RETRIEVER", "KEY_SYSTEM", "PARAM_SPACE", "PRESET_KEYS", "SAMPLE", "SAMPLE_DA",
    "SAMPLE_LANGUAGES", "ChunkSet", "CorpusEntry", "EvalKey", "Lab", "Settings", "clamp_k", "depth_of", "is_sample",
    "sample_for_language",
    # session values (ui.session), the caller and the workspace (ui.spaces)
    "caller", "default", "drop_golden_sessions", "forget_space_state", "keep_choice", "notice", "notice_outcome",
    "notice_saved", "pop", "set_space", "set_value", "set_widget", "space", "sync_space_param", "value", "workspace",
    # corpora (ui.corpora) and golden sessions (ui.golden)
    "add_corpus", "chunk_set", "chunking", "corpus_entry", "corpus_label", "corpus_names", "follow_lesson_language",
    "set_chunking", "golden_editor", "golden_judge", "golden_keep_mine", "golden_reload", "golden_reset",
    "golden_session", "on_golden_edit", "reset_wording",
    # this module
    "apply_preset", "conventions_line", "current", "current_or_stop", "gains_setting", "init_state", "preset",
    "rechunk", "settings", "sync_k", "system_names",
]


# ---- init --------------------------------------------------------------------------------------
def init_state() -> None:
    """Apply defaults once per session (idempotent)."""
    ss = session.store()
    if KEY_CORPUS not in ss:  # the sample in the lesson's language
        ss[KEY_CORPUS] = sample_for_language(lesson_language())
    for k, v in DEFAULTS.items():
        if k not in ss:
            ss[k] = v
    if TOKEN not in ss:
        ss[TOKEN] = secrets.token_hex(4)
    ss.setdefault(CORPORA, {})
    ss.setdefault(GOLDEN, {})
    ss.setdefault(CHUNKING, {})
    for k, v in ss.pop(PENDING, {}).items():  # values set by a page for sidebar widgets
        ss[k] = v
    if ss[KEY_CORPUS] not in corpus_names():
        ss[KEY_CORPUS] = SAMPLE
    if ss[KEY_SYSTEM] in RETRIEVER_KINDS:  # a bundled system is also the retriever of live searches
        ss[KEY_RETRIEVER] = ss[KEY_SYSTEM]


def system_names(corpus_name: str | None = None) -> list[str]:
    """The sidebar's systems: the bundled retrievers, then the systems stored for the corpus."""
    return [*RETRIEVER_KINDS, *stored_names(corpus_name or session.value(KEY_CORPUS, SAMPLE))]


def sync_k(depth: int) -> int:
    """Clamp the sidebar's K to ``depth`` before the K widget is drawn; returns it."""
    ss = session.store()
    ss[KEY_K] = clamp_k(ss.get(KEY_K, DEFAULTS[KEY_K]), depth)
    return ss[KEY_K]


# ---- settings ----------------------------------------------------------------------------------
def gains_setting() -> tuple[tuple[tuple[int, float], ...], str | None]:
    """The sidebar's custom NDCG gains and the problem with the text (then no custom gains apply)."""
    text = str(session.value(KEY_GAINS) or "").strip()
    if not text:
        return (), None
    try:
        return parse_gains(text, "custom gains"), None
    except InputError as e:
        return (), str(e)


def settings() -> Settings:
    """The sidebar's :class:`Settings` (:func:`ui.context.settings_from` of the session's values)."""
    name = session.value(KEY_CORPUS, SAMPLE)
    level = corpus_entry(name).level
    return settings_from(session.store(), level, gains_setting()[0], chunking(name))


def preset() -> str:
    """The conventions preset the current settings match (``rag_metrics.metrics.presets.preset_of``)."""
    s = settings()
    return preset_of(s.options, s.ndcg_gain)


def apply_preset(name: str) -> None:
    """Set every convention the preset fixes (a callback, or before the sidebar is drawn)."""
    for field_name, field_value in PRESETS[name].items():
        if field_name in PRESET_KEYS:  # out_of_scope_rule has no sidebar setting (always the golden set's)
            session.set_value(PRESET_KEYS[field_name], field_value)


def conventions_line(lang: str = "en") -> str:
    """One line naming the conventions behind the numbers (``rag_metrics.metrics.presets.describe_conventions``),
    in ``lang`` (``"da"`` on the Danish lesson)."""
    s = settings()
    return describe_conventions(s.options, s.ndcg_gain, lang)


# ---- the lab context ---------------------------------------------------------------------------
class Lab(LabData):
    """Everything a page reads (:class:`ui.context.LabData`), with the tables derived from the
    evaluation, each cached per evaluation in :mod:`ui.cache`."""

    @property
    def id_text(self) -> dict[str, str]:
        """Text of every id a ranking or a label can name (chunk texts, or document texts)."""
        if self.corpus.level == "document":
            return cache.document_text(self.corpus.corpus, self.corpus.fingerprint)
        return self.chunks.text

    @property
    def context_text(self) -> dict[str, str]:
        """:attr:`id_text` and the logged text of every retrieved context that is not a chunk (a RAG
        log's contexts that match no chunk), so a context always shows its text where it is ranked."""
        extra = getattr(self.result.located, "texts", None) if self.result.located is not None else None
        return {**self.id_text, **extra} if extra else self.id_text

    def summary(self):
        return cache.summary_table(self.result, self.key, self.k, self.settings.metrics)

    def curve_records(self):
        """The metric-vs-K table shaped for the chart (cached per evaluation)."""
        return cache.curve_records(self.result, self.key, self.settings.metrics)

    def by_category(self, metric: str):
        return cache.category_table(self.result, self.key, metric, self.k)

    def hit_rates(self):
        return cache.hit_rate_table(self.result, self.key)

    def targets(self):
        """The lesson's targets at their own cutoffs, beside the best achievable (cached per evaluation)."""
        return cache.target_table(self.result, self.key, self.unit)

    def abstention_records(self):
        return cache.abstention_records(self.result, self.key)

    def abstention_setup(self):
        return cache.abstention_setup(self.result, self.key)


def current(evaluate: bool = True) -> Lab:
    """Build (from the caches) the lab context of the current settings.  ``evaluate=False``: without
    the evaluation (no retrieval, no metrics; ``result`` must not be used), for views that only edit
    the golden set: its metrics are computed when a page shows them, once for several edits."""
    init_state()
    s = settings()
    entry = corpus_entry(s.corpus)
    chunks = cache.chunk_set(entry.corpus, entry.fingerprint, s.chunk_size, s.chunk_overlap)
    cache.touch(chunks)  # the chunking in use is dropped last by the memory budget
    # the corpus's own embedding model (the Danish sample: multilingual), else the bundled default
    memo = cache.config_memo(chunks, chunks.fingerprint, s.retriever, entry.model)
    g = golden_session(s.corpus)
    key = EvalKey(entry.fingerprint, s.chunk_size, s.chunk_overlap, s.retriever, g.fingerprint, s.options,
                  model=entry.model if s.retriever != "bm25" else "", depth=memo.depth)
    if not evaluate:
        return Lab(s, entry, chunks, memo, g, cast(EvaluationResult, NotEvaluated()), key,
                   clamp_k(s.k, depth_of(chunks)))
    if s.system:  # a stored system (upload, RAG log, live backend): ranked once, memoised in the library
        result, identity = evaluate_named(s.system, s.corpus, chunks, g.golden, s.options, memo.depth)
        key = EvalKey(entry.fingerprint, s.chunk_size, s.chunk_overlap, identity, g.fingerprint, s.options,
                      depth=memo.depth)
    elif s.options.level == "document":
        result = cache.evaluation_documents(memo, g.golden, chunks, key)
    else:
        result = cache.evaluation(memo, g.golden, key)
    return Lab(s, entry, chunks, memo, g, result, key, clamp_k(s.k, depth_of(chunks)))


def current_or_stop(evaluate: bool = True) -> Lab:
    """:func:`current`, or an error box and ``st.stop()`` when the input is bad (no traceback)."""
    try:
        with st.spinner("Preparing retrieval and evaluation…"):
            return current(evaluate)
    except InputError as err:
        input_error(err, "Cannot evaluate")
        st.stop()
        raise  # unreachable


def rechunk(size: int, overlap: int, progress=None):
    """Switch the current corpus to another chunking: embed new chunk texts (cached, with
    ``progress``), carry the golden labels across, save both.  Returns the library's
    ``LabelReport`` (``None`` for document-level corpora, whose labels do not depend on chunks)."""
    size, overlap = validate_chunk_args(size, overlap)
    name = session.value(KEY_CORPUS, SAMPLE)
    entry = corpus_entry(name)
    old_size, old_overlap = chunking(name)
    old = cache.chunk_set(entry.corpus, entry.fingerprint, old_size, old_overlap)
    new = cache.chunk_set(entry.corpus, entry.fingerprint, size, overlap)
    if session.value(KEY_RETRIEVER, DEFAULT_RETRIEVER) != "bm25":
        cache.prewarm_embeddings(new, progress, entry.model)
    report = None
    if entry.level == "chunk":
        report = golden_session(name).carry_over(old.chunks, new.chunks)
    set_chunking(size, overlap, name)
    return report
