"""The app's plain data and pure logic, without Streamlit (an import contract in ``.importlinter`` keeps it so).

What every page reads is a :class:`LabData` (built by :func:`ui.state.current` as a :class:`ui.state.Lab`):
the :class:`Settings` chosen in the sidebar, the :class:`CorpusEntry`, the :class:`ChunkSet`, and the
:class:`EvalKey` every cached table is keyed by.  Also here: the sidebar's :data:`DEFAULTS`, K's one clamp
(:func:`clamp_k`), the bundled samples' names, and the formatting every page shares (:func:`fmt`,
:func:`esc`, the chart records the caches keep).
"""
from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rag_metrics.authoring.golden_session import GoldenSession
from rag_metrics.evaluation import EvaluationResult
from rag_metrics.insights import readouts
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, DEFAULT_RETRIEVER, RETRIEVER_KINDS
from rag_metrics.retrieval.memo import RetrievalMemo
from rag_metrics.sample import sample_paths
from rag_metrics.types import Chunk, Corpus, GoldenSet
from ui.keys import (
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
    KEY_RECALL,
    KEY_RECALL_EMPTY,
    KEY_RETRIEVER,
    KEY_SYSTEM,
)

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


# ---- the data of one session's lab ----------------------------------------------------------------
@dataclass(frozen=True)
class CorpusEntry:
    corpus: Corpus
    fingerprint: str
    level: str = "chunk"        # "document" when the labels are document ids (BEIR)
    seed_golden: GoldenSet | None = None
    label: str = ""
    model: str = ""             # the embedding model it is evaluated with ("" = the bundled default)


@dataclass(frozen=True, eq=False)
class ChunkSet:
    """One chunking of one corpus, with the lookups every page needs."""

    corpus: Corpus
    chunks: tuple[Chunk, ...]
    size: int
    overlap: int
    fingerprint: str
    text: dict[str, str] = field(default_factory=dict)
    doc: dict[str, str] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.chunks]


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


def settings_from(values: Mapping[str, Any], level: str, gains: tuple, chunking: tuple[int, int]) -> Settings:
    """The :class:`Settings` of the sidebar's ``values`` (session values by key; a missing one takes its
    default), the corpus's label ``level``, the parsed custom ``gains`` and the corpus's ``chunking``."""
    get = values.get
    opts = EvalOptions(relevance_level=int(get(KEY_LEVEL, 1)), out_of_scope=get(KEY_OOS, "exclude"),
                       recall_denominator=get(KEY_RECALL, "all"),
                       missing_queries=get(KEY_MISSING, "zero"), level=level,  # type: ignore[arg-type]
                       gains=gains, judged_only=bool(get(KEY_JUDGED_ONLY, False)),
                       mrr=get(KEY_MRR, "first"), nonpositive_scores=get(KEY_NONPOS, "retrieved"),
                       ndcg_relevance=get(KEY_NDCG_REL, "graded"),
                       recall_empty=get(KEY_RECALL_EMPTY, "zero"))
    size, overlap = chunking
    system = str(get(KEY_SYSTEM) or DEFAULT_RETRIEVER)
    return Settings(get(KEY_CORPUS, SAMPLE), get(KEY_RETRIEVER, DEFAULT_RETRIEVER), int(get(KEY_K, DEFAULTS[KEY_K])),
                    opts, get(KEY_GAIN, "linear"), size, overlap, "" if system in RETRIEVER_KINDS else system)


@dataclass(frozen=True)
class EvalKey:
    """What one evaluation depends on: the cache key of the evaluation and of every table, chart
    and report derived from it (built once per rerun by :func:`ui.state.current`; the Compare page builds
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


@dataclass(frozen=True, eq=False)
class LabData:
    """Everything a page reads: settings, chunks, retrieval, golden session, evaluation and its key
    (:class:`ui.state.Lab` adds the cached tables)."""

    settings: Settings
    corpus: CorpusEntry
    chunks: ChunkSet
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
        """Cache key of :attr:`known_ids` and ``id_text`` (the chunking and the label level)."""
        return f"{self.chunks.fingerprint}:{self.corpus.level}"

    @property
    def known_ids(self) -> list[str]:
        """Ids a label may use: chunk ids, or document ids for document-level corpora."""
        if self.corpus.level == "document":
            return [d.id for d in self.corpus.corpus]
        return self.chunks.ids


class NotEvaluated:
    """The ``result`` of a context built with ``evaluate=False``: any use is a programming error."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"this lab context was built without its evaluation (current(evaluate=False)); "
                           f"it has no result.{name}")


# ---- K: clamped here and nowhere else ----------------------------------------------------------------
def depth_of(chunks: ChunkSet) -> int:
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


# ---- the bundled samples ------------------------------------------------------------------------
def is_sample(name: str) -> bool:
    """Whether ``name`` is one of the bundled samples (English or Danish)."""
    return name in SAMPLE_LANGUAGES


def samples() -> list[str]:
    """The bundled samples this installation has (the Danish one only where its folder exists)."""
    return [n for n, lang in SAMPLE_LANGUAGES.items()
            if n == SAMPLE or sample_paths(required=False, language=lang).docs.is_dir()]


def sample_for_language(language: str) -> str:
    """The sample written in ``language`` (the English one when there is none)."""
    return next((n for n in samples() if SAMPLE_LANGUAGES[n] == language), SAMPLE)


def reset_wording(sample: bool, has_seed: bool) -> tuple[str, str, str]:
    """What resetting a golden set does, in words: (button, question, notice).

    The sample goes back to the shipped set; an uploaded corpus to the judged queries it came with
    (a BEIR folder), or, when it came with none, to an empty golden set (never "the shipped set")."""
    if sample:
        return ("Reset to the shipped set…", "Replace your golden set with the shipped one?",
                "Golden set reset to the shipped version.")
    if has_seed:
        return ("Reset to the queries that came with this corpus…",
                "Replace your golden set with the judged queries loaded with this corpus?",
                "Golden set reset to the queries that came with the corpus.")
    return ("Clear the golden set…", "This corpus came without a golden set: remove every question of yours?",
            "Golden set cleared.")


# ---- formatting shared by every page and the caches ------------------------------------------------------
DECIMALS = 3
_MD_SPECIAL = "\\`*_{}[]()#+-.!|<>~$:"
#: The abstention chart's two series.
ABSTAIN_NAMES = {"oos_refused_rate": "Out-of-scope correctly refused",
                 "in_scope_refused_rate": "In-scope wrongly refused"}


def fmt(x: float | None, decimals: int = DECIMALS) -> str:
    """``0.812``; an em dash for a missing value."""
    if x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA:
        return "—"
    return f"{float(x):.{decimals}f}"


def label(metric: str) -> str:
    spec = METRICS.get(metric)
    return spec.label if spec else metric


def esc(text: str) -> str:
    """Escape markdown (and HTML-significant) characters so ``text`` shows literally in st.markdown."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


def curve_records(curve: pd.DataFrame) -> list[dict]:
    """The metric-vs-K table as chart records (cache this per evaluation)."""
    df = curve.copy()
    df["Metric"] = [label(m) for m in df["metric"]]
    df["value_fmt"] = [fmt(v) for v in df["value"]]
    return df.to_dict("records")


def abstention_records(sweep: pd.DataFrame) -> list[dict]:
    d = sweep.melt(id_vars="threshold", value_vars=list(ABSTAIN_NAMES), var_name="series", value_name="rate")
    d["series"] = d["series"].map(ABSTAIN_NAMES)
    d["rate_fmt"] = [fmt(v) for v in d["rate"]]
    return d.to_dict("records")


# ---- small readouts the caches keep (pages do no arithmetic) ------------------------------------------------
def abstention_setup(result: EvaluationResult) -> dict[str, float | None]:
    """The abstention slider's range and start: ``lo``, ``hi`` (top-score range), ``suggested``
    (Youden's J, ``None`` without both kinds of query) and ``start`` (suggested, else the middle),
    rounded to the slider's step (0.001)."""
    lo, hi = readouts.score_range(result)
    suggested = readouts.suggest_threshold(result)
    lo_r, hi_r = round(lo, 3), round(hi, 3)
    start = round(suggested if suggested is not None else lo + (hi - lo) / 2, 3)
    return {"lo": lo_r, "hi": hi_r, "suggested": suggested, "start": min(max(start, lo_r), hi_r)}


def abstention_counts(result: EvaluationResult, threshold: float) -> dict[str, int]:
    """:meth:`EvaluationResult.abstention` at ``threshold`` plus the two totals (``out_of_scope``,
    ``in_scope``)."""
    a = dict(result.abstention(float(threshold)))
    a["out_of_scope"] = a["out_of_scope_refused"] + a["out_of_scope_answered"]
    a["in_scope"] = a["in_scope_refused"] + a["in_scope_answered"]
    return a


def duplicate_groups(duplicates: pd.DataFrame) -> int:
    """How many groups of identical chunks a ``rag_metrics.insights.health.exact_duplicates`` table has."""
    return int(duplicates["group"].nunique()) if len(duplicates) else 0


def too_easy_count(too_easy: pd.DataFrame) -> int:
    """How many in-scope questions a ``rag_metrics.insights.health.too_easy_queries`` table flags."""
    return int(too_easy["too_easy"].sum()) if len(too_easy) else 0


def overall_ci_row(widths: pd.DataFrame) -> dict | None:
    """The ``(all)`` row of a ``rag_metrics.insights.health.ci_width_by_category`` table (``None`` when no
    query enters the mean)."""
    from rag_metrics.insights.health import ALL_CATEGORIES

    rows = widths[widths["category"] == ALL_CATEGORIES].to_dict("records")
    return rows[0] if rows else None


def legends_below(spec: dict) -> dict:
    """The corpus map's Vega-Lite ``spec`` with its legends below the plot, two columns wide, and the
    coverage legend above it, so the plot gets the page width within a projector's 1024 px; the
    selected question's label on lines (:func:`wrap_question_labels`).  Streamlit fits the whole chart,
    legends included, into the height.  Changes and returns ``spec``."""
    spec.setdefault("config", {})["legend"] = {"orient": "bottom", "direction": "vertical",
                                               "labelLimit": 170, "symbolLimit": 80}

    def wide_legends(node: Any) -> None:
        if isinstance(node, dict):
            leg = node.get("legend")
            if isinstance(leg, dict) and "columns" in leg:
                leg["columns"] = 2  # within a projector's 1024 px
            shape = (node.get("encoding") or {}).get("shape")
            if isinstance(shape, dict) and shape.get("legend", {}) is not None:  # coverage: above, not beside
                shape["legend"] = {**(shape.get("legend") or {}), "orient": "top", "direction": "horizontal"}
            for v in node.values():
                wide_legends(v)
        elif isinstance(node, list):
            for v in node:
                wide_legends(v)

    wide_legends(spec)
    return wrap_question_labels(spec)


def editor_options(golden: GoldenSet, known: Sequence[str]) -> tuple[list[str], list[str]]:
    """The golden editor's choices: categories (the usual ones plus any in the set) and label ids (the
    corpus ids plus any id the set names)."""
    from rag_metrics.authoring.golden_edit import CATEGORIES

    categories = list(dict.fromkeys([*CATEGORIES, *(q.category for q in golden if q.category)]))
    ids = list(dict.fromkeys([*known, *(i for q in golden for i in q.relevant)]))
    return categories, ids


def mean_chunk_length(chunks: ChunkSet) -> float:
    """Mean chunk length in characters (0 without chunks)."""
    n = len(chunks.chunks)
    return sum(len(c.text) for c in chunks.chunks) / n if n else 0.0


def uncovered_count(cmap: Any) -> int:
    """Chunks of a corpus map that no question labels or retrieves."""
    return int((~cmap.chunks["covered_by_any_question"]).sum())


def failures_found_lower(result: EvaluationResult, k: int) -> int:
    """Failures at ``k`` whose first relevant id is retrieved below ``k`` (a larger K would fix them)."""
    f = result.failures(k)
    return int(f["first_relevant_rank"].notna().sum()) if len(f) else 0


def one_line(text: str, width: int = 40) -> str:
    """``text`` on one line of at most ``width`` characters, ending in " …" when shortened: a select box
    shows its choice on one line, which must fit a projector's column (1024 px) whole; the page shows the
    full text beside it."""
    return textwrap.shorten(" ".join(text.split()), width, placeholder=" …")


def wrap_question_labels(spec: dict, width: int = 34) -> dict:
    """``spec`` (a Vega-Lite dict) with every text mark showing a ``question`` field drawn on lines of at
    most ``width`` characters: the corpus map's label of the selected question ran past the plot's edge
    on a projector (1024 px).  Changes ``spec`` in place and returns it."""
    def marks(node: object) -> None:
        if isinstance(node, dict):
            mark, enc = node.get("mark"), node.get("encoding")
            if isinstance(mark, dict) and mark.get("type") == "text" and isinstance(enc, dict) and \
                    isinstance(enc.get("text"), dict) and enc["text"].get("field") == "question":
                mark["lineBreak"] = "\n"
                enc["text"]["field"] = "question_lines"
            for v in node.values():
                marks(v)
        elif isinstance(node, list):
            for v in node:
                marks(v)

    marks(spec)
    for rows in spec.get("datasets", {}).values():
        for row in rows:
            if isinstance(row, dict) and isinstance(row.get("question"), str):
                row["question_lines"] = "\n".join(textwrap.wrap(row["question"], width)) or row["question"]
    return spec
