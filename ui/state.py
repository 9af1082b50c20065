"""Session state of the app: one place for keys, defaults and the golden working copy.

Everything a page needs comes from :func:`current`, which returns a :class:`Lab` (the settings
chosen in the shared sidebar, the chunk set, the retrieval memo, the golden set and its
evaluation).  Pages never read ``st.session_state`` keys directly except through this module.

State kinds
-----------
- **Sidebar widgets** (``KEY_*``): rendered by ``app.py`` on every run, so they survive page
  switches.  Defaults in :data:`DEFAULTS`; :func:`init_state` applies them once per session
  (a later URL-query-parameter sync can override them there).
- **Golden working copy** per corpus (:class:`GoldenEntry` in ``st.session_state[_GOLDEN]``):
  loaded from the workspace (or the shipped sample), changed only through :func:`set_golden`,
  which autosaves atomically and records conflicts.
- **Corpora** (``_CORPORA``): the sample plus corpora loaded in this session (uploads, BEIR).
- **Chunking** per corpus (``_CHUNKING``): size and overlap.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import streamlit as st

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.evaluate import EvalOptions, EvaluationResult
from rag_metrics.metrics.registry import DEFAULT_METRICS
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
from rag_metrics.retrieval.defaults import DEFAULT_RETRIEVER
from rag_metrics.retrieval.memo import RetrievalMemo
from rag_metrics.types import Corpus, GoldenSet
from rag_metrics.workspace import SaveResult, Workspace
from ui import cache

# ---- keys --------------------------------------------------------------------------------------
KEY_CORPUS = "corpus"
KEY_RETRIEVER = "retriever"
KEY_K = "k"
KEY_LEVEL = "relevance_level"
KEY_OOS = "out_of_scope"
KEY_RECALL = "recall_denominator"
KEY_GAIN = "ndcg_gain"
KEY_MISSING = "missing_queries"

_CORPORA = "_corpora"
_GOLDEN = "_golden"
_CHUNKING = "_chunking"
_TOKEN = "_session_token"
_NOTICE = "_notice"
_PENDING = "_pending_widgets"

SAMPLE = "sample_corpus"

#: Defaults of the sidebar settings (trec_eval conventions; K = 5 as in the lesson).
DEFAULTS: dict[str, Any] = {
    KEY_CORPUS: SAMPLE,
    KEY_RETRIEVER: DEFAULT_RETRIEVER,
    KEY_K: 5,
    KEY_LEVEL: 1,
    KEY_OOS: "exclude",
    KEY_RECALL: "all",
    KEY_GAIN: "linear",
    KEY_MISSING: "zero",
}


@dataclass(frozen=True)
class CorpusEntry:
    corpus: Corpus
    fingerprint: str
    level: str = "chunk"        # "document" when the labels are document ids (BEIR)
    seed_golden: GoldenSet | None = None
    label: str = ""


@dataclass
class GoldenEntry:
    """The golden working copy of one corpus in this session."""

    golden: GoldenSet
    fingerprint: str
    version: str | None                 # workspace version last loaded or saved by this session
    workspace: Workspace
    last_save: SaveResult | None = None
    conflict_path: Path | None = None
    load_report: ValidationReport = field(default_factory=ValidationReport)
    revision: int = 0                   # bumped on every change (editors rebase on it)
    save_error: str | None = None       # last autosave failure (disk), shown by the editor


@dataclass(frozen=True)
class Settings:
    corpus: str
    retriever: str
    k: int
    options: EvalOptions
    ndcg_gain: str
    chunk_size: int
    chunk_overlap: int

    @property
    def ndcg_metric(self) -> str:
        return "ndcg" if self.ndcg_gain == "linear" else "ndcg_exp"

    @property
    def metrics(self) -> tuple[str, ...]:
        """The dashboard's metrics (NDCG with the chosen gain)."""
        return tuple(self.ndcg_metric if m == "ndcg" else m for m in DEFAULT_METRICS)


# ---- init --------------------------------------------------------------------------------------
def init_state() -> None:
    """Apply defaults once per session (idempotent)."""
    ss = st.session_state
    for k, v in DEFAULTS.items():
        if k not in ss:
            ss[k] = v
    if _TOKEN not in ss:
        ss[_TOKEN] = secrets.token_hex(4)
    ss.setdefault(_CORPORA, {})
    ss.setdefault(_GOLDEN, {})
    ss.setdefault(_CHUNKING, {})
    for k, v in ss.pop(_PENDING, {}).items():  # values set by a page for sidebar widgets
        ss[k] = v
    if ss[KEY_CORPUS] != SAMPLE and ss[KEY_CORPUS] not in ss[_CORPORA]:
        ss[KEY_CORPUS] = SAMPLE


# ---- corpora -----------------------------------------------------------------------------------
def corpus_names() -> list[str]:
    return [SAMPLE, *st.session_state.get(_CORPORA, {})]


def corpus_label(name: str) -> str:
    if name == SAMPLE:
        return "Sample: Lumen Notes handbook"
    e = st.session_state.get(_CORPORA, {}).get(name)
    return (e.label or name) if e else name


def corpus_entry(name: str | None = None) -> CorpusEntry:
    name = name or st.session_state.get(KEY_CORPUS, SAMPLE)
    if name == SAMPLE:
        corpus, fp = cache.sample_corpus()
        return CorpusEntry(corpus, fp, "chunk", cache.sample_golden(), corpus_label(SAMPLE))
    entries = st.session_state.get(_CORPORA, {})
    if name not in entries:
        raise InputError(f"corpus {name!r} is not loaded in this session; load it on the Corpus explorer page")
    return entries[name]


def add_corpus(name: str, corpus: Corpus, *, level: str = "chunk", golden: GoldenSet | None = None,
               label: str = "") -> str:
    """Register a corpus loaded in this session and select it.  Returns its name."""
    ss = st.session_state
    entry = CorpusEntry(corpus, corpus.fingerprint(), level, golden, label or name)
    ss[_CORPORA][name] = entry
    ss[_GOLDEN].pop(name, None)
    set_widget(KEY_CORPUS, name)
    return name


def set_widget(key: str, value: Any) -> None:
    """Set a sidebar widget's value from a page: applied at the start of the next run
    (a widget's value cannot change after it was drawn in the current run).  Call st.rerun()."""
    st.session_state.setdefault(_PENDING, {})[key] = value


def chunking(name: str | None = None) -> tuple[int, int]:
    """Chunk size and overlap of a corpus: this session's, else the workspace's, else the default."""
    ss = st.session_state
    name = name or ss.get(KEY_CORPUS, SAMPLE)
    ss.setdefault(_CHUNKING, {})
    if name not in ss[_CHUNKING]:
        saved = Workspace(name).load_settings()
        try:
            size, overlap = int(saved["chunk_size"]), int(saved["chunk_overlap"])
            from rag_metrics.retrieval.chunking import validate_chunk_args

            size, overlap = validate_chunk_args(size, overlap)
        except (KeyError, TypeError, ValueError, InputError):
            size, overlap = DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP
        ss[_CHUNKING][name] = (size, overlap)
    return ss[_CHUNKING][name]


def set_chunking(size: int, overlap: int, name: str | None = None) -> None:
    """Use another chunking for a corpus (saved in the workspace with the labels made on it)."""
    name = name or st.session_state.get(KEY_CORPUS, SAMPLE)
    st.session_state.setdefault(_CHUNKING, {})[name] = (int(size), int(overlap))
    Workspace(name).save_settings(chunk_size=int(size), chunk_overlap=int(overlap))


# ---- settings ----------------------------------------------------------------------------------
def settings() -> Settings:
    ss = st.session_state
    name = ss.get(KEY_CORPUS, SAMPLE)
    level = corpus_entry(name).level
    opts = EvalOptions(relevance_level=int(ss.get(KEY_LEVEL, 1)), out_of_scope=ss.get(KEY_OOS, "exclude"),
                       recall_denominator=ss.get(KEY_RECALL, "all"),
                       missing_queries=ss.get(KEY_MISSING, "zero"), level=level)  # type: ignore[arg-type]
    size, overlap = chunking(name)
    return Settings(name, ss.get(KEY_RETRIEVER, DEFAULT_RETRIEVER), int(ss.get(KEY_K, 5)), opts,
                    ss.get(KEY_GAIN, "linear"), size, overlap)


# ---- golden working copy -----------------------------------------------------------------------
def golden_entry(name: str | None = None) -> GoldenEntry:
    """The golden working copy of a corpus: loaded from the workspace, else the seed set."""
    ss = st.session_state
    name = name or ss.get(KEY_CORPUS, SAMPLE)
    entry = ss[_GOLDEN].get(name)
    if entry is not None:
        return entry
    ws = Workspace(name)
    report = ValidationReport()
    loaded = None
    try:
        loaded = ws.load()
    except InputError as err:
        report.error(str(err))
    if loaded is not None:
        golden, report, version = loaded
        golden = GoldenSet(golden.queries, name=name)
    else:
        seed = corpus_entry(name).seed_golden
        golden, version = (seed if seed is not None else GoldenSet((), name=name)), None
    entry = GoldenEntry(golden, golden.fingerprint(), version, ws, load_report=report)
    ss[_GOLDEN][name] = entry
    return entry


def set_golden(golden: GoldenSet, *, force: bool = False, name: str | None = None) -> SaveResult | None:
    """Replace the working copy and autosave it (atomic; a conflicting save is kept beside).

    Returns the save result, or ``None`` when nothing changed.
    """
    entry = golden_entry(name)
    fp = golden.fingerprint()
    if fp == entry.fingerprint and not force:
        return None
    entry.golden, entry.fingerprint = golden, fp
    entry.revision += 1
    try:
        res = entry.workspace.save(golden, entry.version, session=st.session_state[_TOKEN], force=force)
    except OSError as err:  # unwritable workspace: keep working in memory, say so
        entry.save_error = (f"Cannot save to {entry.workspace.path} ({err.strerror or err}); your edits are kept "
                            "in this browser session only. Set RAG_METRICS_WORKSPACE to a writable folder.")
        return None
    entry.save_error = None
    entry.last_save = res
    if res.saved:
        entry.version = res.version
        entry.conflict_path = None
    else:
        entry.conflict_path = res.conflict_path
    return res


def reload_from_workspace(name: str | None = None) -> None:
    """Drop this session's copy and load the saved one (resolves a conflict in favour of disk)."""
    ss = st.session_state
    name = name or ss.get(KEY_CORPUS, SAMPLE)
    old = ss[_GOLDEN].pop(name, None)
    new = golden_entry(name)
    if old is not None:
        new.revision = old.revision + 1


def reset_to_seed(name: str | None = None) -> SaveResult | None:
    """Restore the shipped (seed) golden set and save it over the workspace.

    The shipped labels are made on the default chunking; under another chunking they are carried
    across (``carry_labels``) so they name the current chunks.
    """
    name = name or st.session_state.get(KEY_CORPUS, SAMPLE)
    entry = corpus_entry(name)
    seed = entry.seed_golden or GoldenSet(())
    size, overlap = chunking(name)
    if entry.level == "chunk" and len(seed) and (size, overlap) != (DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP):
        from rag_metrics.retrieval.relabel import carry_labels

        old = cache.chunk_set(entry.corpus, entry.fingerprint, DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP)
        new = cache.chunk_set(entry.corpus, entry.fingerprint, size, overlap)
        seed, _ = carry_labels(seed, old.chunks, new.chunks)
    return set_golden(GoldenSet(seed.queries, name=name), force=True, name=name)


def notice(message: str | None = None, kind: str = "success") -> tuple[str, str] | None:
    """Set (or pop, with no argument) a one-shot message shown after a rerun."""
    if message is not None:
        st.session_state[_NOTICE] = (kind, message)
        return None
    return st.session_state.pop(_NOTICE, None)


# ---- the lab context ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Lab:
    """Everything a page reads: settings, chunks, retrieval, golden set, evaluation."""

    settings: Settings
    corpus: CorpusEntry
    chunks: cache.ChunkSet
    memo: RetrievalMemo
    golden_entry: GoldenEntry
    result: EvaluationResult
    eval_key: str

    @property
    def golden(self) -> GoldenSet:
        return self.golden_entry.golden

    @property
    def k(self) -> int:
        return min(self.settings.k, self.memo.depth)

    @property
    def known_ids(self) -> list[str]:
        """Ids a label may use: chunk ids, or document ids for document-level corpora."""
        if self.corpus.level == "document":
            return [d.id for d in self.corpus.corpus]
        return self.chunks.ids

    @property
    def id_text(self) -> dict[str, str]:
        """Text of every id a ranking or a label can name (chunk texts, or document texts)."""
        if self.corpus.level == "document":
            return {d.id: d.text for d in self.corpus.corpus}
        return self.chunks.text

    def summary(self):
        return cache.summary_table(self.result, self.eval_key, self.k, self.settings.metrics)

    def curve(self):
        return cache.curve_table(self.result, self.eval_key, self.settings.metrics)

    def curve_records(self):
        """The metric-vs-K table shaped for the chart (cached per evaluation)."""
        return cache.curve_records(self.result, self.eval_key, self.settings.metrics)

    def by_category(self, metric: str):
        return cache.category_table(self.result, self.eval_key, metric, self.k)

    def hit_rates(self):
        return cache.hit_rate_table(self.result, self.eval_key)

    def abstention_curve(self):
        return cache.abstention_table(self.result, self.eval_key)

    def abstention_records(self):
        return cache.abstention_records(self.result, self.eval_key)


def current() -> Lab:
    """Build (from the caches) the lab context of the current settings."""
    init_state()
    s = settings()
    entry = corpus_entry(s.corpus)
    chunks = cache.chunk_set(entry.corpus, entry.fingerprint, s.chunk_size, s.chunk_overlap)
    memo = cache.retrieval_memo(chunks, chunks.fingerprint, s.retriever)
    g = golden_entry(s.corpus)
    options = s.options
    if options.level == "document":
        eval_key = f"{chunks.fingerprint}/{s.retriever}/{g.fingerprint}/{repr(options)}"
        result = cache.evaluation_documents(memo, g.golden, options, chunks, eval_key)
    else:
        eval_key = f"{chunks.fingerprint}/{s.retriever}/{g.fingerprint}/{repr(options)}"
        result = cache.evaluation(memo, g.golden, options, eval_key)
    return Lab(s, entry, chunks, memo, g, result, eval_key)


def current_or_stop() -> Lab:
    """:func:`current`, or an error box and ``st.stop()`` when the input is bad (no traceback)."""
    try:
        with st.spinner("Preparing retrieval and evaluation…"):
            return current()
    except InputError as err:
        from ui import views

        views.input_error(err, "Cannot evaluate")
        st.stop()
        raise  # unreachable


def rechunk(size: int, overlap: int, progress=None):
    """Switch the current corpus to another chunking: embed new chunk texts (cached, with
    ``progress``), carry the golden labels across, save both.  Returns the library's
    ``LabelReport`` (``None`` for document-level corpora, whose labels do not depend on chunks)."""
    from rag_metrics.retrieval.chunking import validate_chunk_args
    from rag_metrics.retrieval.relabel import carry_labels

    size, overlap = validate_chunk_args(size, overlap)
    name = st.session_state.get(KEY_CORPUS, SAMPLE)
    entry = corpus_entry(name)
    old_size, old_overlap = chunking(name)
    old = cache.chunk_set(entry.corpus, entry.fingerprint, old_size, old_overlap)
    new = cache.chunk_set(entry.corpus, entry.fingerprint, size, overlap)
    if st.session_state.get(KEY_RETRIEVER, DEFAULT_RETRIEVER) != "bm25":
        cache.prewarm_embeddings(new, progress)
    report = None
    if entry.level == "chunk":
        g = golden_entry(name)
        carried, report = carry_labels(g.golden, old.chunks, new.chunks)
        set_golden(GoldenSet(carried.queries, name=g.golden.name), name=name)
    set_chunking(size, overlap, name)
    return report
