"""CLI support for systems: RAG logs and other uploads as ``--run``, and live backends for
``rag-metrics retrieve --backend http|pgvector|qdrant``.

Light at import (standard library only); the library modules are imported when called.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_metrics.cli._output import PROG, counter_progress, stderr
from rag_metrics.errors import EXAMPLES_SHOWN, InputError

if TYPE_CHECKING:  # pragma: no cover
    from rag_metrics.types import GoldenSet, Run

__all__ = [
    "BACKENDS",
    "UPLOAD_SUFFIXES",
    "add_backend_options",
    "add_map_option",
    "column_map",
    "add_upload_options",
    "backend_system",
    "corpus_chunks",
    "evidence_judge",
    "is_upload",
    "read_mapped_qrels",
    "read_upload_run",
    "run_backend",
    "unmatched_rows",
]

#: ``--run`` files with these extensions are read as uploads (RAG logs, CSV/JSON runs); any other
#: extension is a TREC run.
UPLOAD_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv")
BACKENDS = ("bundled", "http", "pgvector", "qdrant")


def is_upload(path: str, args: argparse.Namespace | None = None) -> bool:
    """Whether ``--run PATH`` is matched to the golden questions (a RAG log, trace export, CSV/JSON
    run) rather than read as a TREC run: decided by :func:`rag_metrics.formats.is_trec_run`, the
    one test ``evaluate``, ``compare`` and ``validate --run`` share.  With ``--map`` it always is.
    """
    from rag_metrics.formats import is_trec_run

    if args is not None and getattr(args, "map", None):
        return True
    return not is_trec_run(path)


def add_upload_options(sp: argparse.ArgumentParser) -> None:
    """``--corpus`` and matching options for RAG logs given as ``--run``."""
    from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE

    sp.add_argument("--corpus", default=None, metavar="PATH",
                    help="corpus for RAG logs without context ids: contexts are matched to its chunks by text")
    sp.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, metavar="N",
                    help=f"chunking of --corpus (default {DEFAULT_CHUNK_SIZE}, as the golden labels)")
    sp.add_argument("--chunk-overlap", type=int, default=DEFAULT_CHUNK_OVERLAP, metavar="N",
                    help=f"chunk overlap of --corpus (default {DEFAULT_CHUNK_OVERLAP})")
    sp.add_argument("--match-threshold", type=float, default=90.0, metavar="S",
                    help="least rapidfuzz ratio (0-100) for a fuzzy context match (default 90)")
    add_map_option(sp)


#: ``--map``'s help, shared by every command that reads a run or log file.
MAP_HELP = ("name the fields of the run or log file when its own names do not fit: KEY=FIELD,... with keys question, "
            "query_id, contexts, ids, scores, answer, reference; FIELD is dotted for nested objects and takes [] for "
            "every item of a list, e.g. question=query,contexts=results[].text,ids=results[].id "
            "(docs/your-files.md#column-mapping)")
QRELS_MAP_HELP = ("name the fields of the golden set the same way: question, query_id, labels (the relevant ids), "
                  "reference, e.g. query_id=id,question=q,labels=expected_chunk_id")


def add_map_option(sp: argparse.ArgumentParser) -> None:
    """``--map KEY=FIELD,...`` for the run or log and ``--qrels-map`` for the golden set
    (:mod:`rag_metrics.io.mapping`)."""
    sp.add_argument("--map", default=None, metavar="KEY=FIELD,...", help=MAP_HELP)
    sp.add_argument("--qrels-map", default=None, metavar="KEY=FIELD,...", help=QRELS_MAP_HELP)


def column_map(args: argparse.Namespace) -> Any:
    """The parsed ``--map`` (an empty mapping when not given); a bad spec is an :class:`InputError`."""
    from rag_metrics.io.mapping import parse_map

    return parse_map(getattr(args, "map", None))


def read_mapped_qrels(args: argparse.Namespace, path: str) -> Any:
    """``(GoldenSet, report)`` of ``path`` read through ``--qrels-map``, else None (not given)."""
    from rag_metrics.io.mapping import parse_map

    cmap = parse_map(getattr(args, "qrels_map", None), "--qrels-map")
    if not cmap:
        return None
    from rag_metrics.io.files import read_bytes
    from rag_metrics.io.mapping import read_golden_mapped

    return read_golden_mapped(read_bytes(Path(path)), str(path), cmap)


def read_upload_run(args: argparse.Namespace, path: str, golden: GoldenSet) -> Run:
    """A RAG log or CSV/JSON run as a :class:`Run` keyed by golden query ids; notes go to stderr."""
    from rag_metrics.systems.uploads import load_upload

    chunks = None
    if getattr(args, "corpus", None):
        chunks = corpus_chunks(args)[1]
    try:
        system = load_upload(path, chunks, getattr(args, "match_threshold", 90.0), mapping=column_map(args) or None)
    except InputError as e:
        if "give the corpus" in str(e):
            raise InputError(f"{path}: rows have contexts without ids, so they are matched to corpus chunks by "
                             "text; pass --corpus PATH (the corpus the golden set labels)") from None
        raise
    result = system.rank(golden.questions(), 1 << 30)
    for note in result.notes:
        stderr(f"{PROG}: {path}: {note}")
    unused = result.unmatched_rows  # a few examples, then counted, as every reader's repeats (errors.grouped_lines)
    for row in unused[: EXAMPLES_SHOWN + (len(unused) == EXAMPLES_SHOWN + 1)]:
        stderr(f"{PROG}: {path}: {row.where}: {row.key!r} not used: {row.reason}")
    if len(unused) > EXAMPLES_SHOWN + 1:
        stderr(f"{PROG}: {path}: {len(unused) - EXAMPLES_SHOWN:,} more rows not used, like the ones above "
               f"({len(unused):,} in all)")
    run = result.run
    run.name = Path(path).stem
    _UNMATCHED[id(run)] = (run, len(result.unmatched_rows))
    if chunks is not None:
        _CONTEXTS[id(run)] = (run, {**(result.context_texts or {}),
                                    **(getattr(result.context_match, "texts", None) or {})})
    return run


_CONTEXTS: dict[int, tuple[Any, dict[str, str]]] = {}  # run -> texts of its contexts that match no chunk
_UNMATCHED: dict[int, tuple[Any, int]] = {}  # run -> rows of its file that matched no golden question


def unmatched_rows(run: Run) -> int:
    """How many rows of the uploaded file ``run`` was read from matched no golden question (0 for a
    TREC run: its rows for other query ids stay in the run and the rule counts them there)."""
    hit = _UNMATCHED.get(id(run))
    return hit[1] if hit is not None and hit[0] is run else 0
_CHUNKS: dict[tuple[str, int, int], tuple[Any, Any]] = {}


def corpus_chunks(args: argparse.Namespace) -> tuple[Any, Any]:
    """``(corpus, chunks)`` of ``--corpus`` at ``--chunk-size/--chunk-overlap`` (read once)."""
    key = (args.corpus, args.chunk_size, args.chunk_overlap)
    if key not in _CHUNKS:
        from rag_metrics.errors import ValidationReport
        from rag_metrics.io.corpus import load_corpus
        from rag_metrics.retrieval.chunking import chunk_corpus

        report = ValidationReport()
        corpus = load_corpus(args.corpus, report=report)
        report.raise_if_errors()
        _CHUNKS[key] = (corpus, chunk_corpus(corpus, args.chunk_size, args.chunk_overlap))
    return _CHUNKS[key]


def evidence_judge(args: argparse.Namespace, run: Run, golden: GoldenSet) -> Any:
    """The :class:`~rag_metrics.metrics.evidence.EvidenceJudge` for ``run`` when ``--corpus`` is given and the
    run's contexts are not all chunks of it (a RAG log's unmatched texts, another chunking's ids) or
    the golden set labels evidence; else None (ids judged as they are).  An evidence golden set
    without ``--corpus`` is an error that names the option.  At ``--level document`` with
    ``--corpus``, a run whose contexts are not all chunks gets one too: it places each context in its
    document (:meth:`~rag_metrics.metrics.evidence.EvidenceJudge.document_map`: a whole document's text is that
    document) and counts those found nowhere."""
    needs = any(q.reviewed_evidence and not q.relevant for q in golden.queries)
    document_level = getattr(args, "level", "chunk") == "document"
    if not getattr(args, "corpus", None) or (document_level and needs):
        if needs and not any(q.relevant for q in golden.queries):
            raise InputError(f"{args.qrels}: the golden set labels evidence (passages), not ids; pass --corpus PATH "
                             "so retrieved contexts can be located in the corpus")
        return None
    from rag_metrics.metrics.evidence import EvidenceJudge

    corpus, chunks = corpus_chunks(args)
    known = {c.id for c in chunks} | ({c.doc_id for c in chunks} if document_level else set())
    _, uniques = run.factorized_ids()
    if (document_level or not needs) and all(str(i) in known for i in uniques.tolist()):
        return None
    return EvidenceJudge.for_chunks(chunks, texts=_CONTEXTS.get(id(run), (None, {}))[1], corpus=corpus)


def add_backend_options(p: argparse.ArgumentParser) -> None:
    """Options of ``retrieve --backend http|pgvector|qdrant``."""
    g = p.add_argument_group("live backends (--backend http | pgvector | qdrant)")
    g.add_argument("--backend", choices=BACKENDS, default="bundled",
                   help="bundled (index --corpus here, default), or query a running search service")
    g.add_argument("--url", default=None, help="http: endpoint URL; qdrant: server URL")
    g.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                   help="http: request header (repeatable); write secrets as ${VAR}, e.g. "
                        "'Authorization: Bearer ${MY_TOKEN}'")
    g.add_argument("--results-path", default=None, metavar="A.B",
                   help="http: dotted path to the result list in a JSON object response")
    g.add_argument("--timeout", type=float, default=10.0, help="http: seconds per request (default 10)")
    g.add_argument("--concurrency", type=int, default=4, help="http: requests in flight (default 4)")
    g.add_argument("--retries", type=int, default=2, help="http: retries after a failure (default 2)")
    g.add_argument("--dsn", default=None, help="pgvector: connection string; password as ${VAR} or PGPASSWORD")
    g.add_argument("--table", default=None, help="pgvector: table (name or schema.name)")
    g.add_argument("--id-column", default="id", help="pgvector: id column (default id)")
    g.add_argument("--embedding-column", default="embedding", help="pgvector: vector column (default embedding)")
    g.add_argument("--text-column", default="text", help="pgvector: text column (default text)")
    g.add_argument("--metric", choices=["cosine", "inner_product"], default="cosine",
                   help="pgvector: distance order (default cosine)")
    g.add_argument("--path", default=None, help="qdrant: local-mode folder (instead of --url)")
    g.add_argument("--collection", default=None, help="qdrant: collection name")
    g.add_argument("--api-key", default=None, metavar="${VAR}", help="qdrant: API key as a ${VAR} reference")
    g.add_argument("--vector-name", default=None, help="qdrant: named vector to query")
    g.add_argument("--id-payload-key", default="chunk_id",
                   help="qdrant: payload field with the chunk id (default chunk_id; '' = point id)")


def _need(args: argparse.Namespace, *names: str) -> None:
    missing = [f"--{n.replace('_', '-')}" for n in names if not getattr(args, n)]
    if missing:
        raise InputError(f"--backend {args.backend} needs {' and '.join(missing)}")


def backend_system(args: argparse.Namespace) -> Any:
    """The live system of ``retrieve --backend ...`` (an InputError names a missing option)."""
    from rag_metrics.systems.base import ResultMemo

    memo = ResultMemo()
    if args.backend == "http":
        from rag_metrics.systems.backends.http import (
            HttpConfig,
            http_system,
            parse_header,
        )

        _need(args, "url")
        cfg = HttpConfig(args.url, tuple(parse_header(h) for h in args.header), args.results_path,
                         timeout=args.timeout, concurrency=args.concurrency, retries=args.retries)
        return http_system(cfg, name=args.tag or "http", memo=memo)
    from rag_metrics.retrieval.memo import LazyEncoder

    encoder = LazyEncoder(args.model)
    if args.backend == "pgvector":
        from rag_metrics.systems.backends.pgvector import (
            PgvectorConfig,
            pgvector_system,
        )

        _need(args, "dsn", "table")
        cfg2 = PgvectorConfig(args.dsn, args.table, args.id_column, args.embedding_column, args.text_column or None,
                              args.metric)
        return pgvector_system(cfg2, encoder, name=args.tag or "pgvector", memo=memo)
    from rag_metrics.systems.backends.qdrant import QdrantConfig, qdrant_system

    _need(args, "collection")
    if not (args.url or args.path):
        raise InputError("--backend qdrant needs --url (a server) or --path (local mode folder)")
    cfg3 = QdrantConfig(args.collection, url=args.url, path=args.path, api_key=args.api_key,
                        vector_name=args.vector_name, id_payload_key=args.id_payload_key or None)
    return qdrant_system(cfg3, encoder, name=args.tag or "qdrant", memo=memo)


def run_backend(args: argparse.Namespace, queries: dict[str, str]) -> Run:
    """Query the live backend for every query; failures are listed on stderr (exit code stays 0
    when some questions were answered; an InputError when none were)."""
    system = backend_system(args)
    try:
        result = system.rank(queries, args.depth, progress=counter_progress("queries"))
    finally:
        system.close()
    for f in result.failures[:20]:
        stderr(f"{PROG} retrieve: {f}")
    if len(result.failures) > 20:
        stderr(f"{PROG} retrieve: ... {len(result.failures) - 20} more failed questions")
    if result.failures and len(result.run) == 0:
        raise InputError(f"--backend {args.backend}: no question was answered; first failure: {result.failures[0]}")
    if result.failures:
        stderr(f"{PROG} retrieve: {len(result.failures)} of {len(queries)} questions failed and are missing from "
               "the run (they count as retrieving nothing when evaluated); run again to retry them")
    return result.run

