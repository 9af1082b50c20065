"""``rag-metrics retrieve``: index a corpus, answer queries, write a TREC run.

::

    rag-metrics retrieve --corpus PATH --queries PATH [--retriever dense|bm25|hybrid]
        [--model NAME] [--chunk-size N] [--chunk-overlap N] [--level chunk|document] [--depth 100]
        --out run.trec

``--corpus``: a folder of .md/.txt files, a .jsonl corpus or a BEIR folder.  ``--queries``: a BEIR
``queries.jsonl`` (``{"id", "text"}``), a BEIR folder, or any golden set file (.jsonl/.json/.csv).
The run is written in trec_eval order (score desc, id desc) with ranks from 1; with
``--level document`` the ids are document ids (each document at the rank of its best chunk).
Progress goes to stderr; bad input raises :class:`~rag_metrics.errors.InputError` (one line,
exit code 2 from the main CLI).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from rag_metrics.cli._common import add_renamed, spelled
from rag_metrics.cli._output import counter_progress
from rag_metrics.errors import InputError
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH, DEFAULT_RETRIEVER, RETRIEVER_KINDS

__all__ = ["add_parser", "run", "load_queries", "DOC_LEVEL_MIN_CHUNKS"]

#: With ``--level document`` at least this many chunks (and ``10 * k``) are retrieved per query
#: before collapsing to documents.
DOC_LEVEL_MIN_CHUNKS = 1000


def _looks_like_beir_queries(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                if raw.strip():
                    from rag_metrics.io.files import loads_json

                    obj, _, _ = loads_json(raw.decode("utf-8-sig"))
                    return isinstance(obj, dict) and "text" in obj and "question" not in obj \
                        and "relevant" not in obj
    except (OSError, UnicodeDecodeError):
        return False
    return False


def load_queries(path: str | Path) -> dict[str, str]:
    """``{query id: text}`` from a BEIR queries.jsonl, a BEIR folder, or a golden set file.

    Golden-set out-of-scope questions are included (they are retrieved for abstention).
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: queries file not found; pass a queries.jsonl, a BEIR folder or a "
                         "golden set (.jsonl/.json/.csv).")
    if p.is_dir():
        q = p / "queries.jsonl"
        if not q.is_file():
            raise InputError(f"{p}: folder has no queries.jsonl; pass a queries.jsonl or a golden "
                             "set file.")
        p = q
    if p.suffix.lower() == ".jsonl" and _looks_like_beir_queries(p):
        from rag_metrics.io.trec import read_queries_jsonl

        queries, report = read_queries_jsonl(p)
        report.raise_if_errors(str(p))
    else:
        from rag_metrics.io.golden import load_golden

        queries = load_golden(p).questions()
    if not queries:
        raise InputError(f"{p}: no queries found.")
    return queries


def run(args: argparse.Namespace) -> int:
    """Handler of ``rag-metrics retrieve``; returns the exit code (0)."""
    from rag_metrics.errors import ValidationReport
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval import make_retriever
    from rag_metrics.retrieval.chunking import chunk_corpus, chunk_to_doc, validate_chunk_args
    from rag_metrics.retrieval.ranking import collapse_to_documents

    size, overlap = validate_chunk_args(args.chunk_size, args.chunk_overlap)
    if args.depth < 1:
        raise InputError(f"{spelled(args, 'depth', '--depth')} must be at least 1, got {args.depth}.")
    if getattr(args, "backend", "bundled") != "bundled":
        return _run_backend(args)
    if not args.corpus:
        raise InputError("--corpus is required with the bundled retrievers (or query a running service with "
                         "--backend http|pgvector|qdrant)")
    report = ValidationReport()
    corpus = load_corpus(args.corpus, report=report)
    for line in report.lines():
        print(line, file=sys.stderr)
    queries = load_queries(args.queries)
    chunks = chunk_corpus(corpus, size, overlap)
    print(f"corpus {args.corpus}: {len(corpus)} documents, {len(chunks)} chunks "
          f"(size {size}, overlap {overlap}); {len(queries)} queries", file=sys.stderr)

    cache: Any = None
    if args.no_cache:
        cache = False
    elif args.cache_dir:
        from rag_metrics.retrieval.cache import EmbeddingCache

        cache = EmbeddingCache(args.cache_dir)
    model = args.model
    if model is None and args.retriever != "bm25":  # the corpus's model: the one encoder rule
        from rag_metrics.retrieval.choice import choose_encoder, operator_encoders

        model = choose_encoder(corpus=corpus, overrides=operator_encoders()).model
        print(f"embedding model {model} (for the corpus's language; --model picks another)", file=sys.stderr)
    retriever = make_retriever(args.retriever, model, cache, index=args.index,
                               fusion=args.fusion)
    t = time.monotonic()
    retriever.index(chunks, counter_progress("indexing chunks"))
    depth = args.depth if args.level == "chunk" else min(len(chunks), max(DOC_LEVEL_MIN_CHUNKS,
                                                                      10 * args.depth))
    trec_run = retriever.retrieve(queries, depth, counter_progress("queries"))
    if args.level == "document":
        trec_run = collapse_to_documents(trec_run, chunk_to_doc(chunks), k=args.depth)
    tag = args.tag or retriever.name

    out = Path(args.out)
    if not out.parent.exists():
        raise InputError(f"{out}: folder {out.parent} does not exist; create it or choose another "
                         "--out path.")
    from rag_metrics.io.trec import write_trec_run

    write_trec_run(trec_run, out, tag=tag)
    print(f"wrote {len(trec_run)} rows ({args.level} level, {len(trec_run.query_ids())} queries, "
          f"{retriever.name}) to {out} in {time.monotonic() - t:.1f}s", file=sys.stderr)
    return 0


def _run_backend(args: argparse.Namespace) -> int:
    """``retrieve --backend http|pgvector|qdrant``: query a running search service, write a TREC run."""
    from rag_metrics.cli._systems import run_backend
    from rag_metrics.io.trec import write_trec_run
    from rag_metrics.retrieval.ranking import collapse_to_documents

    queries = load_queries(args.queries)
    out = Path(args.out)
    if not out.parent.exists():
        raise InputError(f"{out}: folder {out.parent} does not exist; create it or choose another --out path.")
    t = time.monotonic()
    trec_run = run_backend(args, queries)
    if args.level == "document":
        ids = set(trec_run.factorized_ids()[1].tolist())
        trec_run = collapse_to_documents(trec_run, {i: i.rsplit("#", 1)[0] for i in ids}, k=args.depth)
    tag = args.tag or args.backend
    write_trec_run(trec_run, out, tag=tag)
    print(f"wrote {len(trec_run)} rows ({args.level} level, {len(trec_run.query_ids())} queries, "
          f"{args.backend}) to {out} in {time.monotonic() - t:.1f}s", file=sys.stderr)
    return 0


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``retrieve`` subcommand on an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "retrieve", help="retrieve chunks for queries and write a TREC run",
        description="Chunk and index a corpus, retrieve for every query, write a TREC run that "
                    "`rag-metrics evaluate` and trec_eval can score.")
    p.add_argument("--corpus", default=None, metavar="PATH",
                   help="folder of .md/.txt files, .jsonl corpus, or BEIR folder (required with the bundled "
                        "retrievers)")
    p.add_argument("--queries", required=True, metavar="PATH",
                   help="BEIR queries.jsonl or folder, or a golden set (.jsonl/.json/.csv)")
    p.add_argument("--retriever", choices=RETRIEVER_KINDS, default=DEFAULT_RETRIEVER,
                   help="dense (MiniLM + FAISS, default), bm25, or hybrid (RRF of both)")
    p.add_argument("--model", default=None, metavar="NAME",
                   help="sentence-transformers model name or local folder "
                        "(default: the corpus's language picks it: all-MiniLM-L6-v2 for English, "
                        "multilingual-e5-small otherwise; RAG_METRICS_ENCODER overrides)")
    p.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, metavar="N",
                   help=f"chunk size in characters (default {DEFAULT_CHUNK_SIZE})")
    p.add_argument("--chunk-overlap", type=int, default=DEFAULT_CHUNK_OVERLAP, metavar="N",
                   help=f"chunk overlap in characters (default {DEFAULT_CHUNK_OVERLAP})")
    p.add_argument("--level", choices=["chunk", "document"], default="chunk",
                   help="chunk ids (default) or document ids (each document at its best chunk)")
    add_renamed(p, "--depth", "--k", type=int, default=DEFAULT_DEPTH, metavar="N",
                help=f"results per query (default {DEFAULT_DEPTH}; was --k)")
    p.add_argument("--out", required=True, metavar="PATH", help="TREC run file to write")
    p.add_argument("--index", choices=["flat", "hnsw"], default="flat",
                   help="FAISS index for dense retrieval: flat (exact, default) or hnsw")
    p.add_argument("--fusion", choices=["rrf", "weighted"], default="rrf",
                   help="hybrid fusion: rrf (default) or weighted (min-max normalised, 0.5/0.5)")
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="embedding cache folder (default $RAG_METRICS_CACHE or ~/.cache/rag_metrics)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument("--tag", default=None, help="run tag in the last column (default: retriever)")
    from rag_metrics.cli._systems import add_backend_options

    add_backend_options(p)
    return p
