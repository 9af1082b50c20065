"""The corpora this session sees and their chunking.

- **Corpora** (``_corpora``): the bundled samples, the corpora loaded in this session (uploads, BEIR), then those
  kept in the workspace by earlier sessions.  Kept corpora are listed, opened and removed through
  :mod:`rag_metrics.systems.ownership` with the caller, so a session sees the shared ones and its own.
- **Chunking** per corpus (``_chunking``): size and overlap (this session's, else the workspace's, else the
  default).
"""
from __future__ import annotations

from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
from rag_metrics.systems.ownership import own_name, visible_corpora
from rag_metrics.types import Corpus, GoldenSet
from rag_metrics.workspace.corpora import save_corpus, stored_corpora
from rag_metrics.workspace.store import DEFAULT_SPACE, read_through
from ui import cache, encoding, session
from ui.context import SAMPLE, SAMPLE_LANGUAGES, ChunkSet, CorpusEntry, is_sample, sample_for_language, samples
from ui.keys import CHUNKING, CORPORA, GOLDEN, KEY_CORPUS
from ui.session import set_widget
from ui.spaces import caller, space, workspace

__all__ = ["add_corpus", "chunk_set", "chunking", "corpus_entry", "corpus_label", "corpus_names",
           "follow_lesson_language", "lesson_language", "set_chunking"]


def lesson_language() -> str:
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
    ss = session.store()
    if is_sample(ss.get(KEY_CORPUS, SAMPLE)):
        ss[KEY_CORPUS] = sample_for_language(language)


def _kept() -> dict[str, Any]:
    """Corpora kept in the workspace that this session sees (uploads of earlier sessions: the shared
    ones and, for a student, their own): name -> StoredCorpus."""
    return {n: c for n, (c, _) in visible_corpora(caller()).items() if not is_sample(n)}


def corpus_names() -> list[str]:
    """The sample, the corpora loaded in this session, then those kept in the workspace."""
    loaded = list(session.value(CORPORA, {}))
    return [*samples(), *loaded, *(n for n in _kept() if n not in loaded)]


def corpus_label(name: str) -> str:
    if is_sample(name):
        return cache.sample_info(SAMPLE_LANGUAGES[name]).label
    e = session.value(CORPORA, {}).get(name)
    if e is None:
        kept = _kept().get(name)
        return kept.label if kept else name
    return e.label or name


def corpus_entry(name: str | None = None) -> CorpusEntry:
    name = name or session.value(KEY_CORPUS, SAMPLE)
    if is_sample(name):
        lang = SAMPLE_LANGUAGES[name]
        corpus, fp = cache.sample_corpus(lang)
        info = cache.sample_info(lang)  # its model: the one encoder rule (rag_metrics.retrieval.choice)
        return CorpusEntry(corpus, fp, "chunk", cache.sample_golden(lang), corpus_label(name),
                           encoding.corpus_model(corpus, fp, language=info.language, declared=info.model))
    entries = session.default(CORPORA, {})
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
    ss = session.store()
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
    ss[CORPORA][name] = entry
    ss[GOLDEN].pop(name, None)
    set_widget(KEY_CORPUS, name)
    return name


def chunking(name: str | None = None) -> tuple[int, int]:
    """Chunk size and overlap of a corpus: this session's, else the workspace's, else the default."""
    ss = session.store()
    name = name or ss.get(KEY_CORPUS, SAMPLE)
    ss.setdefault(CHUNKING, {})
    if name not in ss[CHUNKING]:
        # a private space reads the shared settings until it saves its own
        saved = read_through(name, space(), settings=True).load_settings()
        try:
            size, overlap = int(saved["chunk_size"]), int(saved["chunk_overlap"])
            from rag_metrics.retrieval.chunking import validate_chunk_args

            size, overlap = validate_chunk_args(size, overlap)
        except (KeyError, TypeError, ValueError, InputError):
            size, overlap = DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP
        ss[CHUNKING][name] = (size, overlap)
    return ss[CHUNKING][name]


def set_chunking(size: int, overlap: int, name: str | None = None) -> None:
    """Use another chunking for a corpus (saved in the workspace with the labels made on it)."""
    name = name or session.value(KEY_CORPUS, SAMPLE)
    session.default(CHUNKING, {})[name] = (int(size), int(overlap))
    workspace(name).save_settings(chunk_size=int(size), chunk_overlap=int(overlap))


def chunk_set(name: str | None = None) -> ChunkSet:
    """The chunks of a corpus under its current chunking (cached)."""
    entry = corpus_entry(name)
    size, overlap = chunking(name)
    return cache.chunk_set(entry.corpus, entry.fingerprint, size, overlap)
