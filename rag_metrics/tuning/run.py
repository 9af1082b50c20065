"""Run a sweep: every configuration of a :class:`~rag_metrics.tuning.grid.Grid`, scored on the same
evidence labels, with its cost measured on this machine.

No waste
--------
- Each chunking is chunked and labelled once; each ``(chunking, model)`` dense index is built once
  and shared by the dense and hybrid configurations; each ``(chunking, k1, b)`` BM25 index once.
- Chunk and question embeddings go through the on-disk :class:`~rag_metrics.retrieval.cache.EmbeddingCache`
  (keyed by model and text): a second sweep with a new BM25 or fusion setting embeds nothing, and a
  new chunk size embeds only its new texts.  :attr:`SweepResult.embedded` counts the texts actually
  encoded, :attr:`SweepResult.embed_requested` the distinct texts asked for.
- Cancelling (``cancel`` set, or Ctrl-C) stops within one embedding slab or one configuration;
  the finished configurations are kept (:attr:`SweepResult.cancelled`).

Cost figures
------------
``build_s``: wall time to build the configuration's index(es) in this sweep (embedding included
when it was not cached, so a warm sweep builds faster; ``embedded_chunks`` says which).
``index_bytes``: the vectors (float32, as the flat FAISS index holds them) plus the BM25 score
matrix and vocabulary.  Latency: each question alone, as a user would send it: the question's
embedding (the model runs on one thread, never the cache), the search, and for hybrid both searches
and the fusion; ``p50_ms`` / ``p95_ms`` over the questions.
"""
from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.metrics.registry import parse_metric
from rag_metrics.retrieval import get_encoder
from rag_metrics.retrieval.chunking import chunk_corpus
from rag_metrics.retrieval.encoders import DEFAULT_MODEL, DEFAULT_MODEL_ALIASES, query_encoder
from rag_metrics.tuning.grid import Grid, SweepConfig
from rag_metrics.types import Chunk, Corpus, GoldenSet

__all__ = ["ConfigResult", "SweepResult", "SweepCancelled", "run_sweep", "new_result", "estimate", "Estimate",
           "stratified_split", "REPORTED_METRICS", "CANDIDATE_DEPTH"]

#: The metrics kept per query for every configuration (at the grid metric's cutoff).
REPORTED_METRICS = ("ndcg", "hit_rate", "mrr", "recall", "precision", "map")
#: Rows each part of a hybrid retrieves before fusion (as :class:`HybridRetriever`'s default).
CANDIDATE_DEPTH = 100

Progress = Callable[[str, float], None]


class SweepCancelled(Exception):
    """Raised inside the sweep when ``cancel`` is set; :func:`run_sweep` catches it."""


@dataclass(frozen=True)
class ConfigResult:
    """One configuration's figures: per-query metric values (golden order) and its costs."""

    config: SweepConfig
    values: Mapping[str, tuple[float, ...]]   # "ndcg@10" -> one value per golden query
    n_chunks: int
    build_s: float
    index_bytes: int
    latency_ms: tuple[float, ...]              # per question
    embedded_chunks: int                       # chunk texts encoded for this configuration's index

    @property
    def p50_ms(self) -> float:
        return float(np.percentile(self.latency_ms, 50)) if self.latency_ms else math.nan

    @property
    def p95_ms(self) -> float:
        return float(np.percentile(self.latency_ms, 95)) if self.latency_ms else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config.to_dict(), "values": {k: list(v) for k, v in self.values.items()},
                "n_chunks": self.n_chunks, "build_s": self.build_s, "index_bytes": self.index_bytes,
                "latency_ms": list(self.latency_ms), "embedded_chunks": self.embedded_chunks}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str) -> ConfigResult:
        try:
            return cls(config=SweepConfig.from_dict(d["config"], where), values={
                str(k): tuple(float(x) for x in v) for k, v in d["values"].items()},
                n_chunks=int(d["n_chunks"]), build_s=float(d["build_s"]), index_bytes=int(d["index_bytes"]),
                latency_ms=tuple(float(x) for x in d["latency_ms"]), embedded_chunks=int(d["embedded_chunks"]))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputError(f"{where}: not a sweep configuration result ({type(e).__name__}: {e}).") from None


@dataclass
class SweepResult:
    """A sweep's results (finished configurations only, in grid order)."""

    grid: Grid
    query_ids: tuple[str, ...]
    categories: tuple[str, ...]
    included: tuple[bool, ...]                 # in scope: enters the means
    tuning: tuple[bool, ...]                   # the tuning questions (the rest of the included: held out)
    results: list[ConfigResult] = field(default_factory=list)
    baseline: SweepConfig | None = None        # the app's current system, scored alongside
    cancelled: bool = False
    embedded: int = 0
    embed_requested: int = 0
    seconds: float = 0.0
    corpus_fingerprint: str = ""
    golden_fingerprint: str = ""

    @property
    def held_out(self) -> tuple[bool, ...]:
        return tuple(i and not t for i, t in zip(self.included, self.tuning))

    @property
    def cache_hit_ratio(self) -> float:
        """Share of the distinct texts asked for that came from the cache."""
        return 1.0 - self.embedded / self.embed_requested if self.embed_requested else math.nan

    def result(self, config: SweepConfig) -> ConfigResult | None:
        for r in self.results:
            if r.config == config:
                return r
        return None


@dataclass(frozen=True)
class Estimate:
    n_configs: int
    n_chunkings: int
    texts_to_embed: int
    texts_cached: int
    seconds: float

    def describe(self) -> str:
        mins = self.seconds / 60
        t = f"about {self.seconds:.0f} s" if self.seconds < 120 else f"about {mins:.0f} min"
        return (f"{self.n_configs} configuration{'s' * (self.n_configs != 1)} over {self.n_chunkings} "
                f"chunking{'s' * (self.n_chunkings != 1)}; {self.texts_to_embed} text(s) to embed, "
                f"{self.texts_cached} cached; {t}.")


def stratified_split(query_ids: Sequence[str], categories: Sequence[str], included: Sequence[bool],
                     share: float, seed: int) -> tuple[bool, ...]:
    """The tuning mask: within each category, ``round(share * n)`` included questions (seeded shuffle)
    are held out and the rest tune.  A category with one question keeps it for tuning."""
    rng = np.random.default_rng(seed)
    tuning = [bool(i) for i in included]
    by_cat: dict[str, list[int]] = {}
    for n, (c, inc) in enumerate(zip(categories, included)):
        if inc:
            by_cat.setdefault(c or "(none)", []).append(n)
    for cat in sorted(by_cat):
        idx = by_cat[cat]
        n_held = int(math.floor(share * len(idx) + 0.5)) if len(idx) > 1 else 0
        n_held = min(n_held, len(idx) - 1)
        for j in rng.permutation(len(idx))[:n_held]:
            tuning[idx[int(j)]] = False
    return tuple(tuning)


class _CountingEncoder:
    """An encoder that counts the texts it encodes (the cache's misses) and checks ``cancel``."""

    def __init__(self, inner: Any, cancel: threading.Event | None, counts_to: _CountingEncoder | None = None) -> None:
        self.inner, self.cancel, self.count = inner, cancel, 0
        self.name, self.dim = inner.name, inner.dim
        self._counts_to = counts_to
        self._twin: _CountingEncoder | None = None

    def for_queries(self) -> _CountingEncoder:
        """The model's query side (e5: ``"query: "``), counted into this encoder; itself for other models."""
        inner_q = query_encoder(self.inner)
        if inner_q is self.inner:
            return self
        if self._twin is None:
            self._twin = _CountingEncoder(inner_q, self.cancel, counts_to=self)
        return self._twin

    def encode(self, texts: Sequence[str], progress: Any = None) -> Any:
        if self.cancel is not None and self.cancel.is_set():
            raise SweepCancelled
        (self._counts_to or self).count += len(texts)
        return self.inner.encode(texts, progress=progress)


def _chunk(corpus: Corpus, size: int, overlap: int) -> list[Chunk]:
    return chunk_corpus(corpus, size, overlap)


def estimate(grid: Grid, corpus: Corpus, evidence: GoldenSet, *, cache: Any = None,
             passages_per_s: float | None = None) -> Estimate:
    """How many texts a sweep would embed (cache looked up, nothing encoded) and the time it should take.

    ``passages_per_s`` defaults to a figure measured here (``benchmarks/bench_sweep.py``); the app
    passes its own measured speed when it has one.
    """
    from rag_metrics.retrieval.cache import EmbeddingCache, text_key

    cache = EmbeddingCache() if cache is None else cache
    speed = passages_per_s or DEFAULT_PASSAGES_PER_S
    texts: dict[str, set[bytes]] = {}
    for size, overlap in grid.chunkings:
        chunks = _chunk(corpus, size, overlap)
        for m in {c.model for c in grid.configs if c.chunking == (size, overlap) and c.model}:
            texts.setdefault(m, set()).update(text_key(c.text) for c in chunks)
    qkeys = {text_key(q.question) for q in evidence}
    to_embed = cached = 0
    for m, keys in texts.items():
        keys = keys | qkeys
        name = DEFAULT_MODEL if m in DEFAULT_MODEL_ALIASES else m
        found = cache.get_many(name, list(keys), None)
        cached += len(found)
        to_embed += len(keys) - len(found)
    n_q = len(evidence)
    seconds = to_embed / speed + len(grid.configs) * n_q * 0.02 + 2.0 * len(grid.chunkings)
    return Estimate(len(grid.configs), len(grid.chunkings), to_embed, cached, seconds)


#: Passages per second of the bundled model on this 2-core machine (benchmarks/bench_sweep.py).
DEFAULT_PASSAGES_PER_S = 40.0


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Time one question on one thread, as one request in a serving process: with several threads on
    a shared machine a single short encode waits for descheduled peers (on this 2-core machine under
    load: p95 1.4 s with 2 threads against 40 ms with one)."""
    import sys

    torch = sys.modules.get("torch")  # only a model that runs on torch has loaded it
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _bm25_bytes(bm25: Any) -> int:
    inner = getattr(bm25, "_bm25", None)
    total = 0
    scores = getattr(inner, "scores", None) or {}
    for v in scores.values():
        total += int(getattr(v, "nbytes", 0))
    vocab = getattr(inner, "vocab_dict", None) or {}
    total += sum(len(str(k)) + 8 for k in vocab)
    return total


def new_result(grid: Grid, corpus: Corpus, evidence: GoldenSet,
               baseline: SweepConfig | None = None) -> SweepResult:
    """An empty :class:`SweepResult` for ``grid``: the questions, their scope and the seeded split."""
    golden = evidence
    qids = tuple(golden.ids)
    cats = tuple(q.category or "(none)" for q in golden)
    included = tuple(q.in_scope for q in golden)
    return SweepResult(grid=grid, query_ids=qids, categories=cats, included=included,
                       tuning=stratified_split(qids, cats, included, grid.held_out, grid.seed),
                       baseline=baseline, corpus_fingerprint=corpus.fingerprint(),
                       golden_fingerprint=golden.fingerprint())


def run_sweep(grid: Grid, corpus: Corpus, evidence: GoldenSet, *, cache: Any = None,
              baseline: SweepConfig | None = None, cancel: threading.Event | None = None,
              progress: Progress | None = None,
              on_result: Callable[[ConfigResult], None] | None = None,
              encoder_factory: Callable[[str], Any] | None = None,
              result: SweepResult | None = None) -> SweepResult:
    """Run every configuration of ``grid`` (plus ``baseline`` when it is not one of them).

    ``progress(message, fraction)`` reports each step; ``on_result`` gets each finished
    configuration (the CLI writes them as they come, the app shows them).  ``cancel`` stops the work
    within one embedding slab; the result then holds the finished configurations and
    ``cancelled=True``.  A KeyboardInterrupt is treated the same way.  ``result`` (from
    :func:`new_result`) is filled in place, so a caller that is itself stopped keeps what finished.
    """
    from rag_metrics.retrieval.cache import EmbeddingCache
    from rag_metrics.retrieval.dense import DenseRetriever
    from rag_metrics.retrieval.hybrid import HybridRetriever
    from rag_metrics.retrieval.lexical import BM25Retriever

    t_start = time.perf_counter()
    cache = EmbeddingCache() if cache is None else cache
    make_encoder = encoder_factory or get_encoder
    from rag_metrics.metrics.evidence import CorpusIndex, EvidenceJudge

    golden = evidence
    qids = tuple(golden.ids)
    questions = golden.questions()
    index = CorpusIndex.of(corpus)
    key = parse_metric(grid.metric)
    k = key.k or 10
    keys = [f"{m}@{k}" for m in REPORTED_METRICS]
    if str(key) not in keys:
        keys.insert(0, str(key))
    if result is None:
        result = new_result(grid, corpus, evidence, baseline)
    result.cancelled = True  # until every configuration has finished (a stopped app run keeps this)
    configs = list(grid.configs)
    if baseline is not None and baseline not in configs:
        configs.append(baseline)
    by_chunking: dict[tuple[int, int], list[SweepConfig]] = {}
    for c in configs:
        by_chunking.setdefault(c.chunking, []).append(c)
    total = len(configs)
    done = 0
    encoders: dict[str, _CountingEncoder] = {}

    def say(msg: str) -> None:
        if cancel is not None and cancel.is_set():
            raise SweepCancelled
        if progress is not None:
            progress(msg, done / total if total else 1.0)

    def encoder(model: str) -> _CountingEncoder:
        if model not in encoders:
            encoders[model] = _CountingEncoder(make_encoder(model), cancel)
        return encoders[model]

    def query_vec_ms(model: str) -> dict[str, tuple[Any, float]]:
        """Per question: its vector, encoded alone by the model (timed; never from the cache)."""
        enc = encoder(model).for_queries().inner
        out = {}
        with _one_thread():
            enc.encode([questions[qids[0]]])  # the model is loaded and warm before the clock starts
            for qid in qids:
                say(f"timing questions ({model})")
                t0 = time.perf_counter()
                v = np.asarray(enc.encode([questions[qid]]), dtype=np.float32)
                out[qid] = (v, (time.perf_counter() - t0) * 1000)
        return out

    qtimes: dict[str, dict[str, tuple[Any, float]]] = {}
    requested: set[tuple[str, str]] = set()
    try:
        for (size, overlap), cfgs in by_chunking.items():
            say(f"chunking {size}/{overlap}")
            chunks = _chunk(corpus, size, overlap)
            judge = EvidenceJudge(index, chunks)
            dense: dict[str, tuple[Any, float, int]] = {}
            lexical: dict[tuple[float, float], tuple[Any, float]] = {}
            for cfg in cfgs:
                say(f"{cfg.label}: building")
                if cfg.kind in ("dense", "hybrid") and cfg.model not in dense:
                    enc = encoder(cfg.model)
                    before = enc.count
                    requested.update((cfg.model, c.text) for c in chunks)
                    requested.update((cfg.model, q) for q in questions.values())
                    d = DenseRetriever(enc, cache)
                    t0 = time.perf_counter()
                    step = f"{cfg.label}: embedding"
                    d.index(chunks, progress=lambda *_, _m=step: say(_m))
                    d.embed_queries(questions)  # cached for the quality run
                    dense[cfg.model] = (d, time.perf_counter() - t0, enc.count - before)
                if cfg.kind in ("bm25", "hybrid") and (cfg.k1, cfg.b) not in lexical:
                    bm = BM25Retriever(k1=cfg.k1, b=cfg.b)
                    t0 = time.perf_counter()
                    bm.index(chunks)
                    lexical[(cfg.k1, cfg.b)] = (bm, time.perf_counter() - t0)
                say(f"{cfg.label}: retrieving")
                build_s, nbytes, embedded, lat = 0.0, 0, 0, []
                if cfg.kind == "dense":
                    d, bs, embedded = dense[cfg.model]
                    build_s, nbytes = bs, int(d.vectors.nbytes)
                    run = d.retrieve(questions, cfg.depth)
                elif cfg.kind == "bm25":
                    bm, bs = lexical[(cfg.k1, cfg.b)]
                    build_s, nbytes = bs, _bm25_bytes(bm)
                    run = bm.retrieve(questions, cfg.depth)
                else:
                    d, bs_d, embedded = dense[cfg.model]
                    bm, bs_b = lexical[(cfg.k1, cfg.b)]
                    build_s, nbytes = bs_d + bs_b, int(d.vectors.nbytes) + _bm25_bytes(bm)
                    hy = HybridRetriever(d, bm, method=cfg.fusion,  # type: ignore[arg-type]  # checked by the grid rrf_k=cfg.rrf_k, weight=cfg.weight,
                                         normalisation=cfg.normalisation or "minmax",  # type: ignore[arg-type]
                                         candidate_depth=CANDIDATE_DEPTH)
                    run = hy.retrieve(questions, cfg.depth)
                # latency: each question alone
                if cfg.model and cfg.model not in qtimes:
                    qtimes[cfg.model] = query_vec_ms(cfg.model)
                for qid in qids:
                    say(f"{cfg.label}: timing")
                    one = {qid: questions[qid]}
                    if cfg.kind == "bm25":
                        t0 = time.perf_counter()
                        bm.retrieve(one, cfg.depth)
                        lat.append((time.perf_counter() - t0) * 1000)
                        continue
                    vec, enc_ms = qtimes[cfg.model][qid]
                    t0 = time.perf_counter()
                    if cfg.kind == "dense":
                        d.search_vectors([qid], vec, cfg.depth)
                    else:
                        from rag_metrics.retrieval.hybrid import rrf_fuse, weighted_fuse

                        depth = max(cfg.depth, CANDIDATE_DEPTH)
                        ra = d.search_vectors([qid], vec, depth)
                        rb = bm.retrieve(one, depth)
                        if cfg.fusion == "rrf":
                            rrf_fuse([ra, rb], cfg.rrf_k, [2 * cfg.weight, 2 * (1 - cfg.weight)], cfg.depth)
                        else:
                            weighted_fuse([ra, rb], [cfg.weight, 1 - cfg.weight],
                                          cfg.normalisation or "minmax",  # type: ignore[arg-type]  # grid-checked
                                          cfg.depth)
                    lat.append(enc_ms + (time.perf_counter() - t0) * 1000)
                ev = evaluate(golden, run, EvalOptions(), evidence=judge)
                values = {kk: tuple(float(x) for x in ev.values(kk)) for kk in keys}
                r = ConfigResult(config=cfg, values=values, n_chunks=len(chunks), build_s=build_s,
                                 index_bytes=nbytes, latency_ms=tuple(lat), embedded_chunks=embedded)
                result.results.append(r)
                done += 1
                if on_result is not None:
                    on_result(r)
                say(f"{cfg.label}: done")
        result.cancelled = False
    except (SweepCancelled, KeyboardInterrupt):
        result.cancelled = True
    result.embedded = sum(e.count for e in encoders.values())
    result.embed_requested = len(requested)
    result.seconds = time.perf_counter() - t_start
    return result
