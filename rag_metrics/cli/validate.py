"""``rag-metrics validate``: list every problem in a golden set (and optionally a run).

Exit code 1 when the validated files have errors.
"""
from __future__ import annotations

import argparse
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``validate`` on an ``argparse`` subparsers object."""
    va = subparsers.add_parser("validate", help="list every problem in a golden set (and optionally a run)",
                               description="Validate a golden set / qrels file; exit 1 when it has errors.")
    va.add_argument("golden", metavar="GOLDEN", help="golden set (.csv/.json/.jsonl), TREC/BEIR qrels, or BEIR folder")
    va.add_argument("--corpus", metavar="PATH", help="corpus to check ids against (folder, .jsonl, BEIR folder)")
    va.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE,
                    help=f"chunking used for the corpus ids (default {DEFAULT_CHUNK_SIZE})")
    va.add_argument("--chunk-overlap", type=int, default=DEFAULT_CHUNK_OVERLAP,
                    help=f"chunk overlap (default {DEFAULT_CHUNK_OVERLAP})")
    va.add_argument("--run", metavar="PATH", help="also validate a run against the golden set: every format "
                                                  "evaluate --run accepts (TREC, CSV/JSON, RAG log, trace export)")
    va.add_argument("--match-threshold", type=float, default=90.0, metavar="S",
                    help="least rapidfuzz ratio (0-100) for a fuzzy context match of a RAG log --run (default 90)")
    from rag_metrics.cli._systems import add_map_option

    add_map_option(va)
    va.add_argument("--propose-evidence", metavar="OUT.jsonl",
                    help="with --corpus: for every question with a reference answer (ragas reference / ground_truth, "
                         "DeepEval expected_output) and no label, propose the passages of the corpus that support it "
                         "and write the golden set with them to OUT.jsonl, marked \"status\": \"proposed\" "
                         "(unreviewed: never judged until a person accepts them; see docs/evidence.md)")
    return va


def run(args: argparse.Namespace) -> int:
    """Handler of ``rag-metrics validate``; returns 1 when there are errors, else 0."""
    from rag_metrics.cli._systems import read_mapped_qrels
    from rag_metrics.io.golden import validate_golden
    from rag_metrics.io.trec import read_qrels, read_run, validate_run

    got = read_mapped_qrels(args, args.golden)
    golden, report = got if got is not None else read_qrels(args.golden, with_report=True)
    known = None
    if args.corpus:
        from rag_metrics.io.corpus import load_corpus
        from rag_metrics.retrieval.chunking import chunk_corpus

        corpus = load_corpus(args.corpus)
        chunks = chunk_corpus(corpus, size=args.chunk_size, overlap=args.chunk_overlap)
        known = {c.id for c in chunks} | {d.id for d in corpus}
    validate_golden(golden, known, report, source=str(args.golden))
    if args.run:
        from rag_metrics.cli._systems import is_upload, read_upload_run

        if is_upload(args.run, args):  # the same test as evaluate: a RAG log, trace export or CSV/JSON run
            try:
                trec_run = read_upload_run(args, args.run, golden)
            except InputError as e:
                report.error(str(e))
            else:
                validate_run(trec_run, golden, known, report, source=str(args.run))
        else:
            trec_run, rrep = read_run(args.run)
            report.extend(rrep.problems)
            if len(trec_run):
                validate_run(trec_run, golden, known, report, source=str(args.run))
    if args.propose_evidence:
        if not args.corpus:
            raise InputError("--propose-evidence needs --corpus PATH: the corpus the reference answers come from")
        from rag_metrics.authoring.evidence_proposals import propose_evidence
        from rag_metrics.io.golden import save_golden

        proposed = propose_evidence(golden, corpus)
        save_golden(proposed, args.propose_evidence)
        n = sum(1 for q in proposed if q.proposed_evidence)
        print(f"{args.propose_evidence}: evidence proposed for {n} question(s) "
              f"({sum(len(q.proposed_evidence) for q in proposed)} passages), marked \"status\": \"proposed\". "
              "Review them (the app's Golden set page, or edit the file: delete a rejected item, remove the status "
              "of an accepted one); unreviewed proposals are never judged.")
    n_oos = sum(1 for q in golden if not q.in_scope and not q.awaiting_labels)
    n_wait = sum(1 for q in golden if q.awaiting_labels)
    for line in report.lines():
        print(line)
    wait = (f"; {n_wait} awaiting evidence review (a reference answer, no label: --propose-evidence OUT.jsonl)"
            if n_wait else "")
    print(f"{args.golden}: {len(golden)} queries ({n_oos} out of scope{wait}); {report.summary()}")
    return 1 if report.errors else 0
