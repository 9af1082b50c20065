"""Build sample_corpus/embeddings/ (the shipped embeddings of the sample corpus).

Run from the repository root with the project's Python (offline: the bundled model is used)::

    HF_HUB_OFFLINE=1 python sample_corpus/build_embeddings.py          # rewrite
    HF_HUB_OFFLINE=1 python sample_corpus/build_embeddings.py --check  # exit 1 if stale
    python sample_corpus/build_embeddings.py --root sample_corpus_da   # the Danish sample

It embeds the default chunking (:data:`rag_metrics.retrieval.chunking.DEFAULT_CHUNK_SIZE` /
``DEFAULT_CHUNK_OVERLAP``) of ``docs/`` and the questions of ``golden.jsonl`` (manifest ids
``question:<qid>``) with the sample's model (``sample.json``, else the default model), so the app
starts without embedding anything and without loading the model (format in
:mod:`rag_metrics.retrieval.cache`).  A model that embeds queries apart from passages (e5) gets its
question vectors in ``embeddings/queries/``, under its query name.  Only texts that changed
are re-embedded (the old folder is used as a cache layer).  The folder is the one
:func:`rag_metrics.sample.sample_dir` finds (``--root`` or ``$RAG_METRICS_SAMPLE_DIR`` to choose
another).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the checkout whose rag_metrics builds its own sample
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rag_metrics.io.corpus import load_corpus  # noqa: E402
from rag_metrics.retrieval.cache import EmbeddingCache, read_shipped, ship_embeddings  # noqa: E402
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, chunk_corpus  # noqa: E402
from rag_metrics.retrieval.encoders import Encoder, query_encoder  # noqa: E402
from rag_metrics.sample import sample_paths  # noqa: E402

#: Manifest ids of shipped golden-question embeddings (the other ids are chunk ids).
QUESTION_PREFIX = "question:"


def golden_questions(golden_path: Path) -> tuple[list[str], list[str]]:
    """``(["question:<qid>", ...], [question text, ...])`` of the sample golden set (may be absent)."""
    if not golden_path.is_file():
        return [], []
    from rag_metrics.io.golden import load_golden

    golden = load_golden(golden_path)
    pairs = list(dict.fromkeys((q.question, q.id) for q in golden if q.question))
    return [f"{QUESTION_PREFIX}{qid}" for _, qid in pairs], [text for text, _ in pairs]


def _stderr_progress(done: int, total: int) -> None:
    if total:
        print(f"\rembedding {done}/{total}", end="" if done < total else "\n", file=sys.stderr)


def _layers(paths, encoder: Encoder, chunk_ids: list[str], chunk_texts: list[str], qids: list[str],
            qtexts: list[str]) -> list[tuple[Path, Encoder, list[str], list[str]]]:
    """The shipped folders to write: ``(folder, encoder, ids, texts)``.  The questions go with the
    chunks, or into ``embeddings/queries/`` when the model embeds queries apart (e5)."""
    qenc = query_encoder(encoder)
    if qenc is encoder:
        return [(paths.embeddings, encoder, chunk_ids + qids, chunk_texts + qtexts)]
    return [(paths.embeddings, encoder, chunk_ids, chunk_texts), (paths.query_embeddings, qenc, qids, qtexts)]


def main(argv: Sequence[str] | None = None) -> int:
    """Check (``--check``) or rewrite the shipped embeddings; returns the exit code."""
    from rag_metrics.retrieval import get_encoder

    ap = argparse.ArgumentParser(prog="python sample_corpus/build_embeddings.py",
                                 description="(Re)build sample_corpus/embeddings.")
    ap.add_argument("--root", default=None, help="sample_corpus folder (default: rag_metrics.sample.sample_dir())")
    ap.add_argument("--check", action="store_true", help="exit 1 if the shipped files are stale")
    args = ap.parse_args(argv)
    paths = sample_paths(args.root)
    corpus = load_corpus(paths.docs, name=paths.root.name)
    chunks = chunk_corpus(corpus, DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP)
    ids, texts = [c.id for c in chunks], [c.text for c in chunks]
    # The golden questions are shipped too, so a first start embeds nothing (and loads no model).
    qids, qtexts = golden_questions(paths.golden)
    encoder = get_encoder(paths.info.model or None)
    layers = _layers(paths, encoder, ids, texts, qids, qtexts)
    status = []
    for folder, enc, lids, ltexts in layers:
        shipped = read_shipped(folder)
        stale = shipped.stale_chunks(lids, ltexts) if shipped is not None else lids
        fresh = shipped is not None and shipped.model == enc.name and not stale and shipped.chunk_ids == lids
        status.append((fresh, shipped, stale))
    if args.check:
        for (folder, _enc, lids, _t), (fresh, shipped, stale) in zip(layers, status):
            line = "up to date" if fresh else \
                f"stale: {len(stale)} of {len(lids)} chunks changed" if shipped else "missing"
            print(line if len(layers) == 1 else f"{folder}: {line}")
        return 0 if all(fresh for fresh, _s, _st in status) else 1
    if all(fresh for fresh, _s, _st in status):
        print(f"{paths.embeddings}: up to date ({len(ids)} chunks, {len(qids)} questions)")
        return 0
    for (folder, enc, lids, ltexts), (fresh, _shipped, stale) in zip(layers, status):
        if fresh:
            continue
        cache = EmbeddingCache(read_only=True)
        cache.add_shipped(folder)
        ship_embeddings(folder, enc, lids, ltexts, cache=cache,
                        extra={"chunk_size": DEFAULT_CHUNK_SIZE, "chunk_overlap": DEFAULT_CHUNK_OVERLAP,
                               "corpus": f"{paths.root.name}/docs"},
                        progress=_stderr_progress)
        print(f"{folder}: wrote {len(lids)} vectors of {enc.name} ({len(stale)} embedded)")
    return 0


if __name__ == "__main__":
    from rag_metrics.errors import InputError

    try:
        sys.exit(main())
    except InputError as err:
        print(f"build_embeddings.py: error: {err}", file=sys.stderr)
        sys.exit(2)
