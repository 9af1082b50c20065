"""Shipped embeddings of the sample corpus, and the fast-start sample index.

``sample_corpus/embeddings/`` holds the embeddings of the default chunking
(:data:`~rag_metrics.retrieval.chunking.DEFAULT_CHUNK_SIZE` /
:data:`~rag_metrics.retrieval.chunking.DEFAULT_CHUNK_OVERLAP`) and of the sample golden questions
(manifest ids ``question:<qid>``) for the default model, so the app starts without embedding
anything and without loading the model (format in :mod:`rag_metrics.retrieval.cache`).

Rebuild (after editing ``sample_corpus/docs``)::

    HF_HUB_OFFLINE=1 python -m rag_metrics.retrieval.build_sample_cache          # rewrite
    HF_HUB_OFFLINE=1 python -m rag_metrics.retrieval.build_sample_cache --check  # exit 1 if stale

Only chunks whose text changed are re-embedded (the old folder is used as a cache layer).
At load time (:func:`load_sample_index`) the array is verified by SHA-256 and each chunk by the
SHA-256 of its text; mismatched chunks are re-embedded (and stored in the user's on-disk cache),
the shipped files themselves are only rewritten by this script.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from rag_metrics.corpus import load_corpus
from rag_metrics.retrieval.cache import EmbeddingCache, read_shipped, ship_embeddings
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, chunk_corpus
from rag_metrics.types import Chunk, Corpus

#: Manifest ids of shipped golden-question embeddings (the other ids are chunk ids).
QUESTION_PREFIX = "question:"

__all__ = ["QUESTION_PREFIX", "SAMPLE_CORPUS_DIR", "SampleIndex", "sample_paths", "load_sample_index", "main"]

#: ``sample_corpus/`` at the repository root (override with ``$RAG_METRICS_SAMPLE_DIR``).
SAMPLE_CORPUS_DIR = Path(os.environ.get("RAG_METRICS_SAMPLE_DIR")
                         or Path(__file__).resolve().parents[2] / "sample_corpus")


def sample_paths(root: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """``{"root", "docs", "golden", "embeddings"}`` paths of the sample corpus."""
    r = Path(root) if root is not None else SAMPLE_CORPUS_DIR
    return {"root": r, "docs": r / "docs", "golden": r / "golden.jsonl",
            "embeddings": r / "embeddings"}


@dataclass
class SampleIndex:
    """The sample corpus, its default chunks and an indexed retriever."""

    corpus: Corpus
    chunks: list[Chunk]
    retriever: Any
    #: shipped embeddings were found and their array hash verified
    shipped_ok: bool = False
    #: chunk ids whose text differs from the shipped manifest (re-embedded at load)
    stale: list[str] = field(default_factory=list)


def load_sample_index(
    model: str | None = None, *, root: str | os.PathLike[str] | None = None,
    cache: EmbeddingCache | None = None, kind: str = "dense", progress: Any = None,
) -> SampleIndex:
    """Load, chunk (default settings) and index the sample corpus, using the shipped embeddings.

    Parameters
    ----------
    model : str, optional
        Embedding model; the shipped embeddings only help for the default model.
    root : path-like, optional
        The ``sample_corpus`` folder.
    cache : EmbeddingCache, optional
        Default: the user's on-disk cache.  The shipped embeddings are added to it as a
        read-only layer.
    kind : {"dense", "bm25", "hybrid"}
        Retriever to build (see :func:`rag_metrics.retrieval.make_retriever`).
    progress : callable, optional
        ``progress(done, total)`` while (re-)embedding.
    """
    from rag_metrics.retrieval import make_retriever

    paths = sample_paths(root)
    corpus = load_corpus(paths["docs"], name="sample_corpus")
    chunks = chunk_corpus(corpus, DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP)
    cache = cache if cache is not None else EmbeddingCache()
    shipped = cache.add_shipped(paths["embeddings"])
    stale = shipped.stale_chunks([c.id for c in chunks], [c.text for c in chunks]) \
        if shipped is not None else [c.id for c in chunks]
    retriever = make_retriever(kind, model, cache)  # type: ignore[arg-type]
    retriever.index(chunks, progress)
    return SampleIndex(corpus, chunks, retriever, shipped is not None, stale)


def _golden_questions(golden_path: Path) -> tuple[list[str], list[str]]:
    """``(["question:<qid>", ...], [question text, ...])`` of the sample golden set (may be absent)."""
    if not golden_path.is_file():
        return [], []
    from rag_metrics.golden import load_golden

    golden = load_golden(golden_path)
    pairs = list(dict.fromkeys((q.question, q.id) for q in golden if q.question))
    return [f"{QUESTION_PREFIX}{qid}" for _, qid in pairs], [text for text, _ in pairs]


def _stderr_progress(done: int, total: int) -> None:
    if total:
        print(f"\rembedding {done}/{total}", end="" if done < total else "\n", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    from rag_metrics.retrieval import get_encoder

    ap = argparse.ArgumentParser(prog="python -m rag_metrics.retrieval.build_sample_cache",
                                 description="(Re)build sample_corpus/embeddings.")
    ap.add_argument("--root", default=None, help="sample_corpus folder")
    ap.add_argument("--check", action="store_true", help="exit 1 if the shipped files are stale")
    args = ap.parse_args(argv)
    paths = sample_paths(args.root)
    corpus = load_corpus(paths["docs"], name="sample_corpus")
    chunks = chunk_corpus(corpus, DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP)
    ids, texts = [c.id for c in chunks], [c.text for c in chunks]
    # The golden questions are shipped too, so a first start embeds nothing (and loads no model).
    qids, qtexts = _golden_questions(paths["golden"])
    ids, texts = ids + qids, texts + qtexts
    shipped = read_shipped(paths["embeddings"])
    stale = shipped.stale_chunks(ids, texts) if shipped is not None else ids
    up_to_date = shipped is not None and not stale and shipped.chunk_ids == ids
    if args.check:
        print("up to date" if up_to_date else
              f"stale: {len(stale)} of {len(ids)} chunks changed" if shipped else "missing")
        return 0 if up_to_date else 1
    if up_to_date:
        print(f"{paths['embeddings']}: up to date ({len(ids) - len(qids)} chunks, {len(qids)} questions)")
        return 0
    cache = EmbeddingCache(read_only=True)
    cache.add_shipped(paths["embeddings"])
    encoder = get_encoder(None)
    ship_embeddings(paths["embeddings"], encoder, ids, texts, cache=cache,
                    extra={"chunk_size": DEFAULT_CHUNK_SIZE, "chunk_overlap": DEFAULT_CHUNK_OVERLAP,
                           "corpus": "sample_corpus/docs"},
                    progress=_stderr_progress)
    print(f"{paths['embeddings']}: wrote {len(ids) - len(qids)} chunks and {len(qids)} golden questions "
          f"({len(stale)} embedded)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
