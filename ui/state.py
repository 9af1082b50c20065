"""Session state of the app: one place for keys, defaults, the golden session and the evaluation key.

Everything a page needs comes from :func:`current`, which returns a :class:`Lab` (the settings
chosen in the shared sidebar, the chunk set, the retrieval memo, the golden session, the
evaluation and its :class:`EvalKey`).  Pages never read ``st.session_state`` themselves: their
own widgets' values go through :func:`value` / :func:`default` / :func:`set_value`.

State kinds
-----------
- **Sidebar widgets** (``KEY_*``): rendered by the shell on every run, so they survive page
  switches.  Defaults in :data:`DEFAULTS`; :func:`init_state` applies them once per session
  (a later URL-query-parameter sync can override them there).
- **Golden sessions** per corpus (:class:`rag_metrics.authoring.golden_session.GoldenSession` in
  ``st.session_state[_GOLDEN]``): the one working copy, loaded from the workspace (or the shipped
  set) and changed only through its methods, which autosave atomically and record conflicts.  The
  golden editor saves from its ``on_change`` callback (:func:`on_golden_edit`), never on a rerun.
- **Corpora** (``_CORPORA``): the sample plus corpora loaded in this session (uploads, BEIR).
- **Chunking** per corpus (``_CHUNKING``): size and overlap.
- **K**: clamped to the retrieval depth in one place, :func:`clamp_k`.
- **Workspace** (``_SPACE``): the named workspace this browser saves to.  Single-user mode: chosen
  once per session from the URL (``?ws=``, :func:`rag_metrics.workspace.store.choose_space`).  Class
  mode: the caller's own (:func:`caller`, :mod:`ui.identity`): the shared one for the teacher, the
  seat's private space for a student, never one named by a URL.  Every :class:`Workspace` is built
  by :func:`workspace`; a private space reads the shared files until its first change
  (:func:`rag_metrics.workspace.store.read_through`).
- **Ownership**: kept corpora and systems are listed, opened and removed through
  :mod:`rag_metrics.systems.ownership` with :func:`caller`, so a session sees the shared ones and its own.
"""
from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import streamlit as st

from rag_metrics.authoring.golden_session import GoldenSession
from rag_metrics.errors import InputError
from rag_metrics.evaluation import EvaluationResult
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.metrics.registry import DEFAULT_METRICS
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, DEFAULT_RETRIEVER, RETRIEVER_KINDS
from rag_metrics.retrieval.memo import RetrievalMemo
from rag_metrics.server.access import Caller
from rag_metrics.server.policy import allowed
from rag_metrics.types import Corpus, GoldenSet
from rag_metrics.workspace.store import DEFAULT_SPACE, Workspace, choose_space, ensure_space, read_through
from ui import cache, encoding

# ---- keys --------------------------------------------------------------------------------------
KEY_CORPUS = "corpus"
KEY_RETRIEVER = "retriever"    # the bundled retriever behind live searches (the last bundled system chosen)
KEY_SYSTEM = "system"          # the sidebar's system: a bundled retriever kind or a stored system's name
KEY_K = "k"
KEY_LEVEL = "relevance_level"
KEY_OOS = "out_of_scope"
KEY_RECALL = "recall_denominator"
KEY_GAIN = "ndcg_gain"
KEY_MISSING = "missing_queries"
KEY_GAINS = "ndcg_gains"          # text "1=1,2=3" (trec_eval gain parameters, ir_measures nDCG(gains=...))
KEY_JUDGED_ONLY = "judged_only"   # trec_eval -J
KEY_MRR = "mrr_rule"              # "first" (trec_eval) or "granular" (LlamaIndex)
KEY_NONPOS = "nonpositive_scores"  # "retrieved" (trec_eval) or "not_retrieved" (torchmetrics)
KEY_NDCG_REL = "ndcg_relevance"
KEY_RECALL_EMPTY = "recall_empty"  # no sidebar widget: set by the conventions presets
KEY_PRESET = "conventions_preset"   # the sidebar's one switch: trec_eval / as in the lesson (metrics.presets)

_CORPORA = "_corpora"
_GOLDEN = "_golden"
_CHUNKING = "_chunking"
_TOKEN = "_session_token"
_NOTICE = "_notice"
_PENDING = "_pending_widgets"
_SPACE = "_space"
PARAM_SPACE = "ws"
_LABEL_QUEUE = "_label_queue"        # ui.labelling's queues (dropped with the golden sessions)
EDITOR_PREFIX = "golden_editor_"   # the golden editor's widget key: EDITOR_PREFIX + table id

SAMPLE = "sample_corpus"
SAMPLE_DA = "sample_corpus_da"
#: The bundled samples by corpus name -> their language (rag_metrics.sample.SAMPLE_FOLDERS).
SAMPLE_LANGUAGES = {SAMPLE: "en", SAMPLE_DA: "da"}

#: Defaults of the sidebar settings (trec_eval conventions; K = 5 as in the lesson).
DEFAULTS: dict[str, Any] = {
    KEY_CORPUS: SAMPLE,
    KEY_RETRIEVER: DEFAULT_RETRIEVER,
    KEY_SYSTEM: DEFAULT_RETRIEVER,
    KEY_K: 5,
    KEY_LEVEL: 1,
    KEY_OOS: "exclude",
    KEY_RECALL: "all",
    KEY_GAIN: "linear",
    KEY_MISSING: "zero",
    KEY_GAINS: "",
    KEY_JUDGED_ONLY: False,
    KEY_MRR: "first",
    KEY_NONPOS: "retrieved",
    KEY_NDCG_REL: "graded",
    KEY_RECALL_EMPTY: "zero",
}

#: The sidebar key of each setting a conventions preset fixes (``rag_metrics.metrics.presets.PRESETS``).
PRESET_KEYS = {"relevance_level": KEY_LEVEL, "out_of_scope": KEY_OOS, "recall_denominator": KEY_RECALL,
               "missing_queries": KEY_MISSING, "ndcg_relevance": KEY_NDCG_REL, "ndcg_gain": KEY_GAIN,
               "recall_empty": KEY_RECALL_EMPTY}


@dataclass(frozen=True)
class CorpusEntry:
    corpus: Corpus
    fingerprint: str
    level: str = "chunk"        # "document" when the labels are document ids (BEIR)
    seed_golden: GoldenSet | None = None
    label: str = ""
    model: str = ""             # the embedding model it is evaluated with ("" = the bundled default)


@dataclass(frozen=True)
class Settings:
    corpus: str
    retriever: str
    k: int                      # as chosen; read the clamped value from Lab.k
    options: EvalOptions
    ndcg_gain: str
    chunk_size: int
    chunk_overlap: int
    system: str = ""            # the stored system evaluated ("" = the bundled ``retriever``)

    @property
    def system_name(self) -> str:
        """What is evaluated: the stored system's name, else the bundled retriever's kind."""
        return self.system or self.retriever

    @property
    def ndcg_metric(self) -> str:
        return "ndcg" if self.ndcg_gain == "linear" else "ndcg_exp"

    @property
    def metrics(self) -> tuple[str, ...]:
        """The dashboard's metrics (NDCG with the chosen gain)."""
        return tuple(self.ndcg_metric if m == "ndcg" else m for m in DEFAULT_METRICS)


@dataclass(frozen=True)
class EvalKey:
    """What one evaluation depends on: the cache key of the evaluation and of every table, chart
    and report derived from it (built once per rerun by :func:`current`; the Compare page builds
    one per configuration).  Hashable, and hashed by Streamlit's caches field by field."""

    corpus: str                 # corpus fingerprint
    chunk_size: int
    chunk_overlap: int
    system: str                 # retriever kind, or "<stored name>#<system fingerprint>"
    golden: str                 # golden-set fingerprint
    options: EvalOptions        # conventions, evaluation level included
    model: str = ""             # embedding model ("" = the bundled default)
    depth: int = DEFAULT_DEPTH
    labels_on: str = ""         # chunking the labels were made on, when carried to this one

    @property
    def chunks(self) -> str:
        """The chunking's fingerprint (``ChunkSet.fingerprint``)."""
        return f"{self.corpus}:{self.chunk_size}:{self.chunk_overlap}"

    def __str__(self) -> str:
        o = self.options
        return (f"{self.chunks}/{self.system}{'/' + self.model if self.model else ''}/d{self.depth}/g{self.golden}"
                f"{'@' + self.labels_on if self.labels_on else ''}/L{o.relevance_level}/{o.out_of_scope}/"
                f"{o.recall_denominator}/{o.missing_queries}/{o.level}"
                + (f"/gains{o.gains}" if o.gains else "") + ("/J" if o.judged_only else "")
                + (f"/mrr-{o.mrr}" if o.mrr != "first" else "")
                + ("/pos-only" if o.nonpositive_scores != "retrieved" else "")
                + ("/binary" if o.ndcg_relevance == "binary" else "")
                + ("/recall-skip" if o.recall_empty == "skip" else ""))


# ---- init --------------------------------------------------------------------------------------
def init_state() -> None:
    """Apply defaults once per session (idempotent)."""
    ss = st.session_state
    if KEY_CORPUS not in ss:  # the sample in the lesson's language
        ss[KEY_CORPUS] = sample_for_language(_lesson_language())
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
    if ss[KEY_CORPUS] not in corpus_names():
        ss[KEY_CORPUS] = SAMPLE
    if ss[KEY_SYSTEM] in RETRIEVER_KINDS:  # a bundled system is also the retriever of live searches
        ss[KEY_RETRIEVER] = ss[KEY_SYSTEM]


def system_names(corpus_name: str | None = None) -> list[str]:
    """The sidebar's systems: the bundled retrievers, then the systems stored for the corpus."""
    from ui.systems import stored_names

    return [*RETRIEVER_KINDS, *stored_names(corpus_name or st.session_state.get(KEY_CORPUS, SAMPLE))]


# ---- the workspace (space) of this browser session ------------------------------------------------
def space() -> str:
    """The workspace this session saves to.  Class mode: the caller's own (the shared one for the
    teacher, the seat's for a student; a URL never chooses it).  Single-user mode: chosen once per
    session (URL ``?ws=``, else the shared one)."""
    ss = st.session_state
    if not allowed(caller(), "choose-space"):
        return caller().writes_to
    if _SPACE not in ss:
        from ui.views import esc

        try:
            name, warn = choose_space(st.query_params.get(PARAM_SPACE), ss.get(_TOKEN) or secrets.token_hex(4),
                                      class_mode_on=False)
        except (InputError, OSError) as err:
            name, warn = DEFAULT_SPACE, f"Could not open the workspace from the link ({err}); using the shared one."
        ss[_SPACE] = name
        if warn:
            notice(esc(warn), "warning")
    return ss[_SPACE]


def caller() -> Caller:
    """Who this browser session is (:class:`rag_metrics.server.access.Caller`): every permission check in
    the app asks it.  Single-user mode: the operator; class mode: the student of this browser's seat,
    or the teacher after signing in (:func:`ui.identity.caller`)."""
    from rag_metrics.config import class_mode_on
    from rag_metrics.server.access import operator

    if not class_mode_on():  # who the browser is (the authenticator); what it may do: rag_metrics.server.policy
        return operator()
    from ui import identity

    return identity.caller()


def forget_space_state() -> None:
    """Drop what this session loaded from its space (golden sessions, chunkings, kept corpora):
    called when the caller changes (the teacher signs in or out, a student rejoins a seat)."""
    ss = st.session_state
    ss.pop(_SPACE, None)
    ss[_CHUNKING] = {}
    ss[_CORPORA] = {}
    drop_golden_sessions()


def workspace(name: str) -> Workspace:
    """The saved files of corpus ``name`` in this session's workspace."""
    return Workspace(name, space=space())


def drop_golden_sessions() -> None:
    """Forget every golden session and labelling queue (they reload from the workspace when used)."""
    ss = st.session_state
    ss[_GOLDEN] = {}
    ss.pop(_LABEL_QUEUE, None)


def set_space(name: str, *, create: bool = False) -> None:
    """Work in another workspace from now on (``create``: a new one, a copy of the current one)."""
    name = name.strip()
    if create:
        ensure_space(name, copy_from=space())  # raises InputError for a bad name
    ss = st.session_state
    ss[_SPACE] = name
    ss[_CHUNKING] = {}
    drop_golden_sessions()
    sync_space_param()


def sync_space_param() -> None:
    """Carry the workspace in the URL (only when it is not the shared one, and only when it differs).
    Class mode: never (a ``?ws=`` in the URL is removed)."""
    name = space()
    if name == DEFAULT_SPACE or not allowed(caller(), "choose-space"):
        if PARAM_SPACE in st.query_params:
            del st.query_params[PARAM_SPACE]
    elif st.query_params.get(PARAM_SPACE) != name:
        st.query_params[PARAM_SPACE] = name


# ---- page widgets' values (pages never touch st.session_state) -----------------------------------
def value(key: str, default_value: Any = None) -> Any:
    """The value of a widget or page setting (``default_value`` when it has none yet)."""
    return st.session_state.get(key, default_value)


def default(key: str, default_value: Any) -> Any:
    """Give a widget its starting value once (before it is drawn); returns its value."""
    return st.session_state.setdefault(key, default_value)


def set_value(key: str, new_value: Any) -> None:
    """Set a page setting (or, before it is drawn, a widget of this page)."""
    st.session_state[key] = new_value


def pop(key: str, default_value: Any = None) -> Any:
    return st.session_state.pop(key, default_value)


def keep_choice(key: str, options: list, fallback: Any) -> Any:
    """Make a selection widget's value one of ``options`` (``fallback`` when it is not); returns it."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = fallback
    return st.session_state[key]


# ---- corpora -----------------------------------------------------------------------------------
def is_sample(name: str) -> bool:
    """Whether ``name`` is one of the bundled samples (English or Danish)."""
    return name in SAMPLE_LANGUAGES


def _samples() -> list[str]:
    """The bundled samples this installation has (the Danish one only where its folder exists)."""
    from rag_metrics.sample import sample_paths

    return [n for n, lang in SAMPLE_LANGUAGES.items()
            if n == SAMPLE or sample_paths(required=False, language=lang).docs.is_dir()]


def sample_for_language(language: str) -> str:
    """The sample written in ``language`` (the English one when there is none)."""
    return next((n for n in _samples() if SAMPLE_LANGUAGES[n] == language), SAMPLE)


def _lesson_language() -> str:
    """The lesson's language saved in this session's space ("en" when it cannot be read).  Read from
    the file, not through ``ui.lesson.progress`` (the Lesson page reads, and reports, it itself)."""
    try:
        from rag_metrics.lesson import store_for_space

        return store_for_space(space()).load().language
    except Exception:  # noqa: BLE001 - the default corpus never fails a page
        return "en"


def follow_lesson_language(language: str) -> None:
    """The lesson switched to ``language``: when a sample is selected, select the sample in that
    language (a corpus of the user's own stays selected).  Call before the sidebar is drawn (a callback)."""
    ss = st.session_state
    if is_sample(ss.get(KEY_CORPUS, SAMPLE)):
        ss[KEY_CORPUS] = sample_for_language(language)


def _kept() -> dict[str, Any]:
    """Corpora kept in the workspace that this session sees (uploads of earlier sessions: the shared
    ones and, for a student, their own): name -> StoredCorpus."""
    from rag_metrics.systems.ownership import visible_corpora

    return {n: c for n, (c, _) in visible_corpora(caller()).items() if not is_sample(n)}


def corpus_names() -> list[str]:
    """The sample, the corpora loaded in this session, then those kept in the workspace."""
    loaded = list(st.session_state.get(_CORPORA, {}))
    return [*_samples(), *loaded, *(n for n in _kept() if n not in loaded)]


def corpus_label(name: str) -> str:
    if is_sample(name):
        return cache.sample_info(SAMPLE_LANGUAGES[name]).label
    e = st.session_state.get(_CORPORA, {}).get(name)
    if e is None:
        kept = _kept().get(name)
        return kept.label if kept else name
    return e.label or name


def corpus_entry(name: str | None = None) -> CorpusEntry:
    name = name or st.session_state.get(KEY_CORPUS, SAMPLE)
    if is_sample(name):
        lang = SAMPLE_LANGUAGES[name]
        corpus, fp = cache.sample_corpus(lang)
        info = cache.sample_info(lang)  # its model: the one encoder rule (rag_metrics.retrieval.choice)
        return CorpusEntry(corpus, fp, "chunk", cache.sample_golden(lang), corpus_label(name),
                           encoding.corpus_model(corpus, fp, language=info.language, declared=info.model))
    entries = st.session_state.setdefault(_CORPORA, {})
    if name not in entries:  # kept in the workspace by an earlier session: read it back once
        from rag_metrics.systems.ownership import corpus_space
        from rag_metrics.workspace.corpora import load_corpus

        where = corpus_space(caller(), name)
        if where is None:
            raise InputError(f"corpus {name!r} is not one this session may open; load it on the Corpus explorer page")
        corpus, info, seed = load_corpus(name, space=where)
        fp = corpus.fingerprint()
        entries[name] = CorpusEntry(corpus, fp, info.level, seed, info.label, encoding.corpus_model(corpus, fp))
    return entries[name]


def add_corpus(name: str, corpus: Corpus, *, level: str = "chunk", golden: GoldenSet | None = None,
               label: str = "") -> str:
    """Register a corpus loaded in this session, keep it in the caller's space of the workspace (it
    comes back after a reload or a restart; a corpus over the size cap stays in this session only,
    and its label says so) and select it.  A student's corpus named like a shared one is kept as
    ``name (mine)``.  Returns its name."""
    from rag_metrics.systems.ownership import own_name
    from rag_metrics.workspace.corpora import save_corpus, stored_corpora

    ss = st.session_state
    who = caller()
    if who.writes_to != DEFAULT_SPACE:
        name = own_name(who, name, frozenset({*SAMPLE_LANGUAGES, *(c.name for c in stored_corpora())}))
    label = label or name
    try:
        save_corpus(name, corpus, level=level, label=label, seed_golden=golden, space=who.writes_to)
    except (InputError, OSError):
        label = f"{label} (this session only: not kept)"
    fp = corpus.fingerprint()
    entry = CorpusEntry(corpus, fp, level, golden, label, encoding.corpus_model(corpus, fp))
    ss[_CORPORA][name] = entry
    ss[_GOLDEN].pop(name, None)
    set_widget(KEY_CORPUS, name)
    return name


def set_widget(key: str, new_value: Any) -> None:
    """Set a sidebar widget's value from a page: applied at the start of the next run
    (a widget's value cannot change after it was drawn in the current run).  Call st.rerun()."""
    st.session_state.setdefault(_PENDING, {})[key] = new_value


def chunking(name: str | None = None) -> tuple[int, int]:
    """Chunk size and overlap of a corpus: this session's, else the workspace's, else the default."""
    ss = st.session_state
    name = name or ss.get(KEY_CORPUS, SAMPLE)
    ss.setdefault(_CHUNKING, {})
    if name not in ss[_CHUNKING]:
        # a private space reads the shared settings until it saves its own
        saved = read_through(name, space(), settings=True).load_settings()
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
    workspace(name).save_settings(chunk_size=int(size), chunk_overlap=int(overlap))


def chunk_set(name: str | None = None) -> cache.ChunkSet:
    """The chunks of a corpus under its current chunking (cached)."""
    entry = corpus_entry(name)
    size, overlap = chunking(name)
    return cache.chunk_set(entry.corpus, entry.fingerprint, size, overlap)


# ---- K: clamped here and nowhere else ----------------------------------------------------------------
def depth_of(chunks: cache.ChunkSet) -> int:
    """Retrieval depth of a chunking: :data:`DEFAULT_DEPTH`, or fewer when the corpus has fewer chunks
    (the retrieval memo's own bound)."""
    return max(1, min(DEFAULT_DEPTH, len(chunks.chunks)))


def clamp_k(k: Any, depth: int) -> int:
    """K within ``1..depth`` (a corpus of one chunk has K = 1)."""
    try:
        k = int(k)
    except (TypeError, ValueError):
        k = int(DEFAULTS[KEY_K])
    return max(1, min(k, max(int(depth), 1)))


def sync_k(depth: int) -> int:
    """Clamp the sidebar's K to ``depth`` before the K widget is drawn; returns it."""
    ss = st.session_state
    ss[KEY_K] = clamp_k(ss.get(KEY_K, DEFAULTS[KEY_K]), depth)
    return ss[KEY_K]


# ---- settings ----------------------------------------------------------------------------------
def gains_setting() -> tuple[tuple[tuple[int, float], ...], str | None]:
    """The sidebar's custom NDCG gains and the problem with the text (then no custom gains apply)."""
    from rag_metrics.metrics.options import parse_gains

    text = str(st.session_state.get(KEY_GAINS) or "").strip()
    if not text:
        return (), None
    try:
        return parse_gains(text, "custom gains"), None
    except InputError as e:
        return (), str(e)


def settings() -> Settings:
    ss = st.session_state
    name = ss.get(KEY_CORPUS, SAMPLE)
    level = corpus_entry(name).level
    opts = EvalOptions(relevance_level=int(ss.get(KEY_LEVEL, 1)), out_of_scope=ss.get(KEY_OOS, "exclude"),
                       recall_denominator=ss.get(KEY_RECALL, "all"),
                       missing_queries=ss.get(KEY_MISSING, "zero"), level=level,  # type: ignore[arg-type]
                       gains=gains_setting()[0], judged_only=bool(ss.get(KEY_JUDGED_ONLY, False)),
                       mrr=ss.get(KEY_MRR, "first"), nonpositive_scores=ss.get(KEY_NONPOS, "retrieved"),
                       ndcg_relevance=ss.get(KEY_NDCG_REL, "graded"),
                       recall_empty=ss.get(KEY_RECALL_EMPTY, "zero"))
    size, overlap = chunking(name)
    system = str(ss.get(KEY_SYSTEM) or DEFAULT_RETRIEVER)
    return Settings(name, ss.get(KEY_RETRIEVER, DEFAULT_RETRIEVER), int(ss.get(KEY_K, DEFAULTS[KEY_K])), opts,
                    ss.get(KEY_GAIN, "linear"), size, overlap, "" if system in RETRIEVER_KINDS else system)


def preset() -> str:
    """The conventions preset the current settings match (``rag_metrics.metrics.presets.preset_of``)."""
    from rag_metrics.metrics.presets import preset_of

    s = settings()
    return preset_of(s.options, s.ndcg_gain)


def apply_preset(name: str) -> None:
    """Set every convention the preset fixes (a callback, or before the sidebar is drawn)."""
    from rag_metrics.metrics.presets import PRESETS

    for field_name, value in PRESETS[name].items():
        if field_name in PRESET_KEYS:  # out_of_scope_rule has no sidebar setting (always the golden set's)
            st.session_state[PRESET_KEYS[field_name]] = value


def conventions_line() -> str:
    """One line naming the conventions behind the numbers (``rag_metrics.metrics.presets.describe_conventions``)."""
    from rag_metrics.metrics.presets import describe_conventions

    s = settings()
    return describe_conventions(s.options, s.ndcg_gain)


# ---- the golden session --------------------------------------------------------------------------
def golden_session(name: str | None = None) -> GoldenSession:
    """The golden session of a corpus: loaded from the workspace, else the seed set."""
    ss = st.session_state
    name = name or ss.get(KEY_CORPUS, SAMPLE)
    session = ss[_GOLDEN].get(name)
    if session is None:
        ws, seed = workspace(name), corpus_entry(name).seed_golden
        source = read_through(name, ws.space)
        if source is not ws:  # copy-on-write: start from the shared set; the first change saves a private copy
            try:
                loaded = source.load()
            except InputError:
                loaded = None
            if loaded is not None:
                seed = loaded[0]
        session = GoldenSession(ws, seed, name=name, session_id=ss.get(_TOKEN, "session"))
        ss[_GOLDEN][name] = session
    return session


def golden_editor(relevant_as_text: bool) -> tuple[str, int, Any]:
    """``(widget key, table id, base table)`` of the golden editor.  A new base (and key) when the
    set changed elsewhere or the editor's own state was dropped (another page was shown)."""
    session = golden_session()
    tid, table = session.table(relevant_as_text=relevant_as_text)
    if EDITOR_PREFIX + str(tid) not in st.session_state and not session.table_is_current:
        tid, table = session.table(relevant_as_text=relevant_as_text, rebuild=True)
    return EDITOR_PREFIX + str(tid), tid, table


def on_golden_edit(key: str, table_id: int) -> None:
    """The golden editor's ``on_change``: apply its edit state and autosave (once per edit)."""
    out = golden_session().apply_table_edits(table_id, st.session_state.get(key) or {})
    if out.saved is not None and out.saved.saved:
        notice("Saved", "toast")


def _golden_action(action: Callable[[GoldenSession], Any], done: str, kind: str = "success") -> Any:
    """Run ``action`` on the golden session with a notice for the next run; an ``InputError``
    becomes an error notice."""
    from ui.views import esc

    try:
        res = action(golden_session())
    except InputError as err:
        notice(f"Could not change the golden set: {esc(str(err))}", "error")
        return None
    if res is not None and getattr(res, "conflict", False):
        notice(f"{done} Not saved over the file: another session changed it (see the Golden set editor).",
               "warning")
    else:
        notice(done, kind)
    return res


def golden_keep_mine() -> None:
    _golden_action(lambda s: s.keep_mine(), "Your version is saved.")


def golden_reload() -> None:
    session = golden_session()
    beside = session.conflict_path
    session.reload()
    from ui.views import esc

    notice("Loaded the saved golden set." + (f" Your copy stays in {esc(str(beside))}." if beside else ""), "info")


def golden_judge(query_id: str, item_id: str, grade: int) -> None:
    """A label queue button: judge one id for one question (the editor's path; autosaved)."""
    from ui.views import esc

    what = f"relevant (grade {grade})" if grade > 0 else "not relevant"
    _golden_action(lambda s: s.judge(query_id, item_id, grade),
                   f"Labelled {esc(item_id)} as {what} for {esc(query_id)}; every metric is updated.")


def reset_wording(name: str | None = None) -> tuple[str, str, str]:
    """What resetting the golden set of corpus ``name`` does, in words: (button, question, notice).

    The sample goes back to the shipped set; an uploaded corpus to the judged queries it came with
    (a BEIR folder), or, when it came with none, to an empty golden set (never "the shipped set")."""
    name = name or st.session_state.get(KEY_CORPUS, SAMPLE)
    if is_sample(name):
        return ("Reset to the shipped set…", "Replace your golden set with the shipped one?",
                "Golden set reset to the shipped version.")
    if corpus_entry(name).seed_golden is not None:
        return ("Reset to the queries that came with this corpus…",
                "Replace your golden set with the judged queries loaded with this corpus?",
                "Golden set reset to the queries that came with the corpus.")
    return ("Clear the golden set…", "This corpus came without a golden set: remove every question of yours?",
            "Golden set cleared.")


def golden_reset() -> None:
    """Restore the seed set (the shipped set, the queries an uploaded corpus came with, or none), its labels
    carried to the current chunking when it differs."""
    name = st.session_state.get(KEY_CORPUS, SAMPLE)
    entry = corpus_entry(name)
    size, overlap = chunking(name)
    old = new = None
    if entry.level == "chunk" and (size, overlap) != (DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP):
        old = cache.chunk_set(entry.corpus, entry.fingerprint, DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP).chunks
        new = cache.chunk_set(entry.corpus, entry.fingerprint, size, overlap).chunks
    _golden_action(lambda s: s.reset(old, new), reset_wording(name)[2])


def notice(message: str | None = None, kind: str = "success") -> tuple[str, str] | None:
    """Set (or pop, with no argument) a one-shot message shown after a rerun."""
    if message is not None:
        st.session_state[_NOTICE] = (kind, message)
        return None
    return st.session_state.pop(_NOTICE, None)


# ---- the lab context ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Lab:
    """Everything a page reads: settings, chunks, retrieval, golden session, evaluation and its key."""

    settings: Settings
    corpus: CorpusEntry
    chunks: cache.ChunkSet
    memo: RetrievalMemo
    golden_session: GoldenSession
    result: EvaluationResult
    key: EvalKey
    k: int                      # the sidebar's K, clamped to the retrieval depth

    @property
    def golden(self) -> GoldenSet:
        return self.golden_session.golden

    @property
    def unit(self) -> str:
        """What a label names: ``"chunk"`` or ``"document"``."""
        return "document" if self.corpus.level == "document" else "chunk"

    @property
    def ids_key(self) -> str:
        """Cache key of :attr:`known_ids` and :attr:`id_text` (the chunking and the label level)."""
        return f"{self.chunks.fingerprint}:{self.corpus.level}"

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


class _NotEvaluated:
    """The ``result`` of a context built with ``evaluate=False``: any use is a programming error."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"this lab context was built without its evaluation (current(evaluate=False)); "
                           f"it has no result.{name}")


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
        return Lab(s, entry, chunks, memo, g, cast(EvaluationResult, _NotEvaluated()), key,
                   clamp_k(s.k, depth_of(chunks)))
    if s.system:  # a stored system (upload, RAG log, live backend): ranked once, memoised in the library
        from ui.systems import evaluate_named

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
        from ui import views

        views.input_error(err, "Cannot evaluate")
        st.stop()
        raise  # unreachable


def rechunk(size: int, overlap: int, progress=None):
    """Switch the current corpus to another chunking: embed new chunk texts (cached, with
    ``progress``), carry the golden labels across, save both.  Returns the library's
    ``LabelReport`` (``None`` for document-level corpora, whose labels do not depend on chunks)."""
    from rag_metrics.retrieval.chunking import validate_chunk_args

    size, overlap = validate_chunk_args(size, overlap)
    name = st.session_state.get(KEY_CORPUS, SAMPLE)
    entry = corpus_entry(name)
    old_size, old_overlap = chunking(name)
    old = cache.chunk_set(entry.corpus, entry.fingerprint, old_size, old_overlap)
    new = cache.chunk_set(entry.corpus, entry.fingerprint, size, overlap)
    if st.session_state.get(KEY_RETRIEVER, DEFAULT_RETRIEVER) != "bm25":
        cache.prewarm_embeddings(new, progress, entry.model)
    report = None
    if entry.level == "chunk":
        report = golden_session(name).carry_over(old.chunks, new.chunks)
    set_chunking(size, overlap, name)
    return report
