"""Every Streamlit cache of the Answers page (:mod:`rag_metrics.answers`): the shipped sample answers, uploads,
the answers of stored systems, their offline scoring and the tables and report section made from it."""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics.answers.data import items_fingerprint, load_sample_answers, merge_answer_sets, parse_answers
from rag_metrics.answers.embed import add_shipped_answer_embeddings
from rag_metrics.answers.offline import OfflineJudge
from rag_metrics.answers.reference import ReferenceMetrics
from rag_metrics.answers.scoring import evaluate_answers
from rag_metrics.answers.summary import answer_section, combine, compare_systems, restrict, summary_rows
from rag_metrics.answers.summary import answers_for_golden as match
from rag_metrics.errors import InputError
from rag_metrics.retrieval.choice import thresholds_for
from rag_metrics.systems.store import SystemStore
from rag_metrics.types import GoldenSet
from ui import session, workers
from ui.cache import _default_cache_dir, _encoders, embedding_cache
from ui.keys import ANSWERS_RESULT


@st.cache_resource(show_spinner=False, max_entries=1)
def answers_sample() -> tuple:
    """The shipped sample answers and their human labels."""
    return load_sample_answers()


@st.cache_resource(show_spinner=False, max_entries=1)
def answers_sample_key() -> str:
    """The content fingerprint of the shipped sample answers (hashed once, not on every rerun)."""
    return items_fingerprint(answers_sample()[0])


@st.cache_data(show_spinner=False, max_entries=8)
def answers_upload(data: bytes, filename: str, system: str | None = None) -> tuple:
    """Answer items of an uploaded RAG log (or trace export) and the reader's report (in a class, read in the
    memory-limited worker: :func:`ui.workers.read`)."""
    return workers.read(parse_answers, data, filename, system, what=filename)


@st.cache_resource(show_spinner=False, max_entries=16)
def stored_answers(corpus_name: str, name: str, version: tuple) -> tuple | None:
    """``(items, items key, source, report)`` of the system ``name`` stored for ``corpus_name`` when
    its upload is a RAG log or trace export with answers, else None; ``version`` (the store's folder,
    the file, its size and time: the caller's own space or the shared one, chosen by
    ``ui.answer_views``) keys it, so a rerun neither re-reads nor re-hashes the file."""
    store = SystemStore(version[0])
    spec = store.get(name)
    if spec is None:
        return None
    try:
        data = store.read_upload(spec)
    except InputError:
        return None
    items, rep = parse_answers(data, spec.filename or str(spec.file), spec.name)
    if not any(it.answer for it in items):
        return None
    return tuple(items), items_fingerprint(items), f"System {spec.name} ({spec.filename})", rep


@st.cache_resource(show_spinner=False, max_entries=8)
def merged_answers(_sets: tuple, key: str) -> tuple:
    """``(items, items key)`` of several stored systems' answers as one list (``key``: theirs joined)."""
    items = tuple(merge_answer_sets(list(_sets)))
    return items, items_fingerprint(items)


@st.cache_resource(show_spinner=False, max_entries=8)
def answers_offline(_items: tuple, items_key: str, threshold: float, model: str = "") -> Any:
    """Offline approximations and reference metrics of ``_items`` (keyed by their fingerprint), with
    ``model`` (texts compared with each other: the query side of an e5 model) and context support's
    ``threshold`` (the model's: :func:`ui.encoding.thresholds`)."""
    enc = _encoders(model).queries
    emb = add_shipped_answer_embeddings(embedding_cache(_default_cache_dir()))
    return evaluate_answers(list(_items), [OfflineJudge(enc, emb, threshold), ReferenceMetrics(enc, emb)])


@st.cache_resource(show_spinner=False, max_entries=16)
def answers_for_golden(_items: tuple, items_key: str, _golden: GoldenSet, golden_fp: str, _llm: Any,
                       llm_key: str, model: str = "") -> Any:
    """The answers of ``_items`` to questions of ``_golden``, scored offline (the Answers page's
    cached run on the whole file, restricted) and by the LLM judge when ``_llm`` holds its run;
    ``None`` when no answer matches a golden question."""
    matched = match(_items, _golden)
    if not matched:
        return None
    offline = answers_offline(_items, items_key, thresholds_for(model).support, model)
    return combine([restrict(_llm, matched) if _llm is not None else None, restrict(offline, matched)])


@st.cache_data(show_spinner=False, max_entries=32)
def answers_summary_rows(_ev: Any, ev_key: str) -> pd.DataFrame:
    """:func:`rag_metrics.answers.summary.summary_rows` of an :func:`answers_for_golden` result."""
    return summary_rows(_ev)


@st.cache_data(show_spinner=False, max_entries=32)
def answers_comparison(_ev: Any, ev_key: str, system_a: str, system_b: str) -> pd.DataFrame:
    """:func:`rag_metrics.answers.summary.compare_systems` of an :func:`answers_for_golden` result."""
    return compare_systems(_ev, system_a, system_b)


@st.cache_resource(show_spinner=False, max_entries=16)
def answers_report_section(_ev: Any, ev_key: str, source: str) -> Any:
    """:func:`rag_metrics.answers.summary.answer_section` (the report's and Presenter view's)."""
    return answer_section(_ev, source)


def llm_result(items_key: str) -> tuple[Any, Any] | None:
    """The last LLM judge result for these items in this session, if any (the Answers page keeps it)."""
    r = session.value(ANSWERS_RESULT)
    if r is None or r[0] != items_key:
        return None
    return r[2], r[3]
