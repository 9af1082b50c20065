"""``rag-metrics report``: retrieve, evaluate and write the self-contained HTML report.

    rag-metrics report --corpus sample_corpus/docs --golden sample_corpus/golden.jsonl \\
        --retriever bm25 --k 5 --out report.html

Registered by :func:`add_parser` on the main CLI's sub-parsers; :func:`run` returns an exit code and
raises :class:`~rag_metrics.errors.InputError` for bad input (printed as one line, exit 2).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Literal

from rag_metrics.cli._common import check_int
from rag_metrics.cli._output import stderr
from rag_metrics.errors import InputError
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
from rag_metrics.retrieval.defaults import DEFAULT_RETRIEVER, RETRIEVER_KINDS

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``report`` command to ``subparsers`` (from ``ArgumentParser.add_subparsers``)."""

    p = subparsers.add_parser(
        "report", help="retrieve, evaluate and write a self-contained HTML report",
        description="Chunk the corpus, retrieve every golden question, evaluate, and write one HTML file "
                    "that opens offline: headline metrics with 95%% CIs, metric-vs-k and per-category charts, "
                    "best and worst questions with their passages, and the configuration.")
    p.add_argument("--corpus", required=True, metavar="PATH",
                   help="folder of .md/.txt files, a .jsonl corpus, or a BEIR folder")
    p.add_argument("--golden", required=True, metavar="PATH", help="golden set (.csv/.json/.jsonl)")
    p.add_argument("--retriever", choices=RETRIEVER_KINDS, default=DEFAULT_RETRIEVER,
                   help=f"retriever (default {DEFAULT_RETRIEVER})")
    p.add_argument("--k", type=int, default=5, metavar="K", help="cutoff of the headline metrics (default 5)")
    p.add_argument("--model", default=None, metavar="NAME",
                   help="embedding model for dense/hybrid (default all-MiniLM-L6-v2, bundled)")
    p.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, metavar="N",
                   help=f"chunk size in characters (default {DEFAULT_CHUNK_SIZE})")
    p.add_argument("--chunk-overlap", type=int, default=DEFAULT_CHUNK_OVERLAP, metavar="N",
                   help=f"chunk overlap in characters (default {DEFAULT_CHUNK_OVERLAP})")
    p.add_argument("--depth", type=int, default=20, metavar="N",
                   help="retrieval depth, the right end of the metric-vs-k chart (default 20)")
    p.add_argument("--compare-with", choices=RETRIEVER_KINDS, default=None, metavar="RETRIEVER",
                   help="also run this retriever and add the paired comparison verdict (dense, bm25 or hybrid)")
    p.add_argument("--relevance-level", type=int, default=1, metavar="L", help="grade >= L is relevant (default 1)")
    p.add_argument("--corpus-map", action="store_true",
                   help="add the corpus map (2-D projection of chunk and question embeddings; uses --model)")
    p.add_argument("--answers", default=None, metavar="FILE",
                   help="RAG log with generated answers (.jsonl/.json/.csv: question, answer, contexts): adds an "
                        "'Answer quality' section with the offline approximations (context support, "
                        "answer-question similarity) of the answers to the golden questions")
    p.add_argument("--title", default=None, help="report title")
    p.add_argument("--out", default="report.html", metavar="PATH", help="output HTML file (default report.html)")
    return p


def run(args: argparse.Namespace) -> int:
    """Handler of ``rag-metrics report``; returns the exit code (0 when the file was written)."""
    from rag_metrics.compare.paired import compare
    from rag_metrics.evaluation import evaluate
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.io.golden import atomic_write_text, load_golden, validate_golden
    from rag_metrics.metrics.options import EvalOptions
    from rag_metrics.report.html import build_report, offline_javascript
    from rag_metrics.retrieval import chunk_corpus, make_retriever

    check_int("--k", args.k, 1)
    check_int("--depth", args.depth, 1)
    out = Path(args.out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"--out {args.out}: the report is an HTML file; give a path ending in .html")
    if out.exists() and out.is_dir():
        raise InputError(f"--out {args.out}: is a folder; give a file path such as {out / 'report.html'}")
    offline_javascript()  # fail early (InputError) when vl-convert-python is missing
    if args.answers is not None and not Path(args.answers).is_file():
        raise InputError(f"--answers {args.answers}: file not found; give a RAG log (.jsonl, .json, .csv) with "
                         "question, answer and contexts columns")

    corpus = load_corpus(args.corpus)
    chunks = chunk_corpus(corpus, args.chunk_size, args.chunk_overlap)
    if not chunks:
        raise InputError(f"{args.corpus}: the corpus has no text to chunk")
    golden = load_golden(args.golden)
    if not len(golden):
        raise InputError(f"{args.golden}: the golden set has no question")
    chunk_ids = {c.id for c in chunks}
    doc_ids = {c.doc_id for c in chunks}
    labelled = {i for q in golden for i in q.relevant}
    level: Literal["chunk", "document"] = (
        "document" if labelled and labelled <= doc_ids and not (labelled & chunk_ids) else "chunk")
    known = doc_ids if level == "document" else chunk_ids
    report = validate_golden(golden, known, source=str(args.golden))
    if report.errors:
        first = report.errors[0]
        raise InputError(f"{first.where}: {first.message} ({len(report.errors)} unknown id(s) in total; the golden "
                         f"labels must match the chunk ids of --chunk-size {args.chunk_size} --chunk-overlap "
                         f"{args.chunk_overlap}; run `rag-metrics validate {args.golden} --corpus {args.corpus}`)",
                         report=report)
    options = EvalOptions(relevance_level=args.relevance_level, level=level)
    c2d = {c.id: c.doc_id for c in chunks}
    questions = {q.id: q.question for q in golden if q.question.strip()}
    depth = max(args.depth, args.k)

    def evaluate_with(kind: str):
        retriever = make_retriever(kind, model=args.model)
        stderr(f"rag-metrics report: {kind}: indexing {len(chunks)} chunks, retrieving {len(questions)} questions ...")
        retriever.index(chunks)
        r = retriever.retrieve(questions, k=depth)
        r = type(r)(r.qids, r.ids, r.scores, name=kind)
        return evaluate(golden, r, options, chunk_to_doc=c2d if level == "document" else None)

    result = evaluate_with(args.retriever)
    comparison = None
    names = (args.retriever, args.compare_with or "")
    if args.compare_with:
        if args.compare_with == args.retriever:
            raise InputError("--compare-with names the same retriever as --retriever; choose another one")
        other = evaluate_with(args.compare_with)
        keys = [f"hit_rate@{args.k}", f"mrr@{args.k}", f"ndcg@{args.k}", f"recall@{args.k}"]
        comparison = compare(result, other, keys)
    model = "-" if args.retriever == "bm25" and not args.compare_with else (args.model or "all-MiniLM-L6-v2 (default)")
    config = {
        "corpus": str(args.corpus), "documents": len(corpus), "chunks": len(chunks),
        "chunk size / overlap (characters)": f"{args.chunk_size} / {args.chunk_overlap}",
        "golden set": str(args.golden), "questions": len(golden),
        "retriever": args.retriever, "embedding model": model, "retrieval depth": depth,
    }
    if args.compare_with:
        config["compared with"] = args.compare_with
    cmap = None
    if args.corpus_map:
        from rag_metrics.insights.projection import project_corpus
        from rag_metrics.retrieval import EmbeddingCache, encode_with_cache, get_encoder

        enc = get_encoder(args.model)
        cache = EmbeddingCache()
        stderr(f"rag-metrics report: corpus map: embedding with {enc.name} ...")
        cx = encode_with_cache(enc, [c.text for c in chunks], cache)
        qx = encode_with_cache(enc, [q.question for q in golden], cache)
        cmap = project_corpus(chunks, cx, golden, qx, result, k=args.k, relevance_level=args.relevance_level)
        config["corpus map"] = f"PCA of {enc.name} embeddings"
    answers = _answer_section(args.answers, golden) if args.answers else None
    if answers is not None:
        config["answers"] = f"{args.answers} ({int(answers.summary['n'].max()) if len(answers.summary) else 0} "\
                            f"answers per system, judge: {answers.judge})"
    html = build_report(result, k=args.k, corpus_map=cmap, answers=answers, chunk_text={c.id: c.text for c in chunks},
                        config=config,
                        comparison=comparison, comparison_names=names,
                        title=args.title or (f"Retrieval report: {corpus.name or Path(args.corpus).name} "
                                             f"({args.retriever})"),
                        max_k=depth)
    try:
        atomic_write_text(out, html)
    except OSError as e:
        raise InputError(f"--out {args.out}: cannot write ({e.strerror})") from None
    print(f"wrote {out} ({len(html) // 1024} KiB): {result.n_queries} in-scope questions, "
          f"ndcg@{args.k} = {result.mean('ndcg', args.k):.3f}")
    return 0


def _answer_section(path: str, golden: Any) -> Any:
    """The report's answer section: the answers of ``path`` to questions of ``golden``, scored by
    the offline judge (cached sentence vectors; the shipped ones for the sample answers)."""
    from rag_metrics.answers.data import read_answers
    from rag_metrics.answers.offline import OfflineJudge
    from rag_metrics.answers.scoring import evaluate_answers
    from rag_metrics.answers.summary import answer_section, answers_for_golden

    items, rep = read_answers(path)
    rep.raise_if_errors(f"--answers {path}")
    matched = answers_for_golden(items, golden)
    if not matched:
        raise InputError(f"--answers {path}: none of its {len(items)} answers is to a question of the golden set "
                         "(an answer matches a golden question by its question text, and by question_id when "
                         "given); give the answers to these golden questions")
    stderr(f"rag-metrics report: scoring {len(matched)} answers offline ...")
    ev = evaluate_answers(matched, [OfflineJudge()])
    return answer_section(ev, f"{Path(path).name}: {len(matched)} of {len(items)} answers match golden questions")
