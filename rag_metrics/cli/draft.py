"""``rag-metrics draft``: draft golden questions from a corpus's chunks through a judge endpoint.

::

    rag-metrics draft --corpus C --n N [--category factual --category comparison ...]
        --judge-url URL --judge-model M --out drafts.jsonl

Chunks are sampled evenly across documents; each draft is one JSON object per line: ``id``,
``question``, ``category``, ``source_chunk_ids``, ``badges`` (computed by the lab: answerable,
self-contained, near-duplicate, word overlap / too easy, found within K by each bundled
retriever), ``generation`` (the settings it was drafted with) and ``status`` (``ok``, or why
there is no usable question).  Load the file in the app's labelling queue to review the drafts.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rag_metrics.cli._output import stderr
from rag_metrics.cli.judge_relevance import add_judge_options, judge_config, progress_printer
from rag_metrics.errors import InputError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``draft`` on an ``argparse`` subparsers object."""
    from rag_metrics.authoring.drafting.questions import CATEGORIES
    from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE

    p = subparsers.add_parser(
        "draft", help="draft golden questions from the corpus's chunks with an LLM judge (badged by the lab)",
        description="Sample chunks evenly across documents, ask an OpenAI-compatible judge for one question per "
                    "sample in the lesson's categories, and badge each draft (answerable, self-contained, "
                    "near-duplicate, word overlap, found by the bundled retrievers within K).")
    p.add_argument("--corpus", required=True, metavar="PATH",
                   help="folder of .md/.txt files, .jsonl corpus or BEIR folder")
    p.add_argument("--n", type=int, required=True, metavar="N", help="number of questions to draft")
    p.add_argument("--category", action="append", default=None, metavar="NAME",
                   help=f"category to draft (repeatable or comma-separated; default all: {', '.join(CATEGORIES)})")
    add_judge_options(p)
    p.add_argument("--out", required=True, metavar="PATH", help="drafts to write (JSONL)")
    p.add_argument("--golden", default=None, metavar="PATH",
                   help="existing golden set, for the near-duplicate badge (default: none; drafts among themselves)")
    p.add_argument("--k", type=int, default=5, metavar="K", help="found-within-K badge cutoff (default 5)")
    p.add_argument("--retrievers", default="dense,bm25,hybrid", metavar="LIST",
                   help="bundled retrievers of the found-within-K badge (default dense,bm25,hybrid; 'none' skips)")
    p.add_argument("--model", default=None, metavar="NAME",
                   help="embedding model of dense retrieval and of the near-duplicate badge (default the bundled "
                        "all-MiniLM-L6-v2)")
    p.add_argument("--no-near-duplicates", action="store_true", help="skip the near-duplicate badge (no encoder)")
    p.add_argument("--no-answerable", action="store_true",
                   help="skip the answerable badge (saves one judge call per source chunk)")
    p.add_argument("--seed", type=int, default=0, help="seed of the chunk sampling (default 0)")
    p.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, metavar="N")
    p.add_argument("--chunk-overlap", type=int, default=DEFAULT_CHUNK_OVERLAP, metavar="N")
    return p


def _searchers(kinds: list[str], model: str | None, chunks: list[Any], k: int) -> dict[str, Any]:
    from rag_metrics.retrieval import make_retriever

    out = {}
    for kind in kinds:
        r = make_retriever(kind, model)
        r.index(chunks)

        def search(questions: list[str], r: Any = r) -> list[list[str]]:
            ranked = r.retrieve({f"d{n}": q for n, q in enumerate(questions)}, k).rankings()
            return [[i for i, _ in ranked.get(f"d{n}", [])] for n in range(len(questions))]
        out[kind] = search
    return out


def run(args: argparse.Namespace) -> int:
    """Handler of ``rag-metrics draft``."""
    from rag_metrics.authoring.drafting.badges import BadgeSettings
    from rag_metrics.authoring.drafting.questions import CATEGORIES
    from rag_metrics.authoring.drafting.review import draft_golden_questions, planned_calls, planned_prompt_tokens
    from rag_metrics.errors import ValidationReport
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval.chunking import chunk_corpus, validate_chunk_args
    from rag_metrics.retrieval.defaults import RETRIEVER_KINDS

    if args.n < 1:
        raise InputError(f"--n must be at least 1, got {args.n}")
    out = Path(args.out)
    if not out.parent.exists():
        raise InputError(f"{out}: folder {out.parent} does not exist; create it or choose another --out path")
    cats = [c.strip() for item in (args.category or list(CATEGORIES)) for c in item.split(",") if c.strip()]
    kinds = [] if args.retrievers.strip().lower() == "none" else \
        [x.strip() for x in args.retrievers.split(",") if x.strip()]
    for kind in kinds:
        if kind not in RETRIEVER_KINDS:
            raise InputError(f"--retrievers: unknown retriever {kind!r}; use {', '.join(RETRIEVER_KINDS)} or none")
    settings = BadgeSettings(k=args.k)
    size, overlap = validate_chunk_args(args.chunk_size, args.chunk_overlap)
    report = ValidationReport()
    corpus = load_corpus(args.corpus, report=report)
    for line in report.lines():
        stderr(line)
    chunks = chunk_corpus(corpus, size, overlap)
    golden = None
    if args.golden:
        from rag_metrics.io.golden import load_golden

        golden = load_golden(args.golden)
    planned = planned_calls(chunks, args.n, cats, args.seed, not args.no_answerable)
    print(f"corpus {args.corpus}: {len(corpus)} documents, {len(chunks)} chunks; drafting {args.n} question(s) "
          f"({', '.join(cats)})")
    tokens = planned_prompt_tokens(chunks, args.n, cats, args.seed, not args.no_answerable)
    print(f"planned judge calls: {planned} (at most; cached replies cost nothing), about {tokens:,} prompt tokens")
    if args.dry_run:
        return 0
    encoder = None
    if not args.no_near_duplicates:
        from rag_metrics.retrieval import get_encoder

        encoder = get_encoder(args.model)
    rankings = _searchers(kinds, args.model, chunks, max(args.k, 1)) if kinds else None
    cfg = judge_config(args)
    show = progress_printer("draft")
    res = draft_golden_questions(chunks, args.n, cfg, categories=cats, seed=args.seed, golden=golden, encoder=encoder,
                                 rankings=rankings, settings=settings, check_answerable=not args.no_answerable,
                                 cache=False if args.no_cache else None, progress=lambda phase, p: show(p))
    lines = [json.dumps(d.to_json(), ensure_ascii=False) for d in res.drafts]
    from rag_metrics.io.files import atomic_write_text

    atomic_write_text(out, "".join(line + "\n" for line in lines))
    ok = sum(1 for d in res.drafts if d.ok)
    print(f"judge calls made: {res.calls} (+{res.cache_hits} from the cache), tokens {res.tokens:,}")
    bad: dict[str, int] = {}
    for d in res.drafts:
        if not d.ok:
            bad[d.status] = bad.get(d.status, 0) + 1
    if bad:
        print("no usable question: " + ", ".join(f"{k} x{v}" for k, v in sorted(bad.items())))
    flags = {"answerable": sum(1 for d in res.drafts if d.badges.get("answerable")),
             "too easy for keyword search": sum(1 for d in res.drafts if d.badges.get("too_easy")),
             "near-duplicate": sum(1 for d in res.drafts if d.badges.get("near_duplicate")),
             "not self-contained": sum(1 for d in res.drafts if d.ok and not d.badges.get("self_contained", True))}
    print("badges: " + ", ".join(f"{k} {v}" for k, v in flags.items()))
    print(f"wrote {ok} reviewable draft(s) of {len(res.drafts)} to {out}")
    return 0
