"""Command line: ``rag-metrics evaluate | compare | validate | retrieve | report``.

Exit codes: 0 success; 1 a ``--fail-under`` threshold was missed (evaluate) or the validated file
has errors (validate); 2 bad input, with a one-line message on stderr and never a traceback.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Sequence

from rag_metrics.errors import InputError, ValidationReport

__all__ = ["main", "build_parser"]

PROG = "rag-metrics"


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) that point to --help."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}; see `{self.prog} --help`\n")


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class _Progress:
    """Stage messages on stderr, only for long inputs (or when RAG_METRICS_PROGRESS=1)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled or os.environ.get("RAG_METRICS_PROGRESS") == "1"
        self.t0 = time.perf_counter()

    def __call__(self, msg: str) -> None:
        if self.enabled:
            _stderr(f"{PROG}: [{time.perf_counter() - self.t0:6.1f}s] {msg}")


def _options(args: argparse.Namespace):
    from rag_metrics.evaluate import EvalOptions

    return EvalOptions(relevance_level=args.relevance_level, out_of_scope=args.out_of_scope,
                       recall_denominator=args.recall_denominator, missing_queries=args.missing,
                       level="document" if args.level == "document" else "chunk")


def _keys(args: argparse.Namespace):
    """Metric keys ``name@k`` for every requested metric and k (``name@k`` entries kept as given)."""
    from rag_metrics.metrics.registry import MetricKey, parse_ks, parse_metric, METRICS

    ks = parse_ks(args.k, "--k")
    keys: list[MetricKey] = []
    for tok in [t.strip() for t in args.metrics.split(",") if t.strip()]:
        if "@" in tok:
            keys.append(parse_metric(tok, "--metrics"))
            continue
        name = tok.lower()
        if name not in METRICS:
            raise InputError(f"--metrics: unknown metric {tok!r}; known metrics: {', '.join(METRICS)}")
        keys.extend(MetricKey(name, k) for k in ks)
    if not keys:
        raise InputError("--metrics: no metric given; e.g. --metrics hit_rate,mrr,ndcg")
    return list(dict.fromkeys(keys))


def _fail_under(items: Sequence[str]):
    from rag_metrics.metrics.registry import parse_metric

    out = []
    for item in items:
        for part in [p for p in item.split(",") if p.strip()]:
            if "=" not in part:
                raise InputError(f"--fail-under: cannot read {part!r}; write METRIC@K=VALUE, e.g. ndcg@10=0.4")
            key_s, val_s = part.split("=", 1)
            key = parse_metric(key_s, "--fail-under")
            try:
                val = float(val_s)
            except ValueError:
                raise InputError(f"--fail-under: threshold {val_s!r} in {part!r} is not a number; e.g. ndcg@10=0.4") from None
            if not (0.0 <= val <= 1.0) or math.isnan(val):
                raise InputError(f"--fail-under: threshold {val} in {part!r} is outside [0, 1]")
            out.append((key, val))
    return out


def _id_to_doc(run, golden) -> dict[str, str]:
    """Chunk id ``<doc_id>#<n>`` -> doc id, for --level document without a corpus."""
    ids = set(run.factorized_ids()[1].tolist())
    for q in golden:
        ids.update(q.relevant)
    return {i: i.rsplit("#", 1)[0] for i in ids if "#" in i}


def _load_inputs(args: argparse.Namespace, run_paths: Sequence[str], progress: _Progress):
    from rag_metrics.io import read_qrels, read_run, validate_run

    golden, report = read_qrels(args.qrels, with_report=True)
    report.raise_if_errors()
    if len(golden) == 0:
        raise InputError(f"{args.qrels}: no judgments found")
    if not any(q.in_scope for q in golden):
        raise InputError(f"{args.qrels}: no query has a relevant id (grade >= 1), so there is nothing to evaluate; "
                         "--qrels takes TREC qrels, a BEIR qrels .tsv or folder, or a golden set with relevant ids "
                         "(a corpus.jsonl or queries.jsonl holds no judgments)")
    runs = []
    for rp in run_paths:
        t = time.perf_counter()
        run, rrep = read_run(rp)
        rrep.raise_if_errors(hint=f"run `{PROG} validate {args.qrels} --run {rp}` to list all")
        if len(run) == 0:
            raise InputError(f"{rp}: run has no lines; expected 'qid Q0 docid rank score tag'")
        progress(f"read {len(run):,} lines of {rp} in {time.perf_counter() - t:.1f}s")
        for p in validate_run(run, golden, source=str(rp)).problems:
            _stderr(f"{PROG}: {p}")
        runs.append(run)
    for p in report.warnings[:20]:
        _stderr(f"{PROG}: {p}")
    if len(report.warnings) > 20:
        _stderr(f"{PROG}: ... {len(report.warnings) - 20} more warnings (run `{PROG} validate {args.qrels}`)")
    return golden, runs


def _fmt(v: float) -> str:
    return "nan" if isinstance(v, float) and math.isnan(v) else f"{v:.4f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def cmd_evaluate(args: argparse.Namespace) -> int:
    from rag_metrics.evaluate import evaluate

    progress = _Progress(False)
    keys = _keys(args)
    thresholds = _fail_under(args.fail_under or [])
    golden, (run,) = _load_inputs(args, [args.run], progress)
    progress.enabled = progress.enabled or len(run) > 200_000
    opts = _options(args)
    t = time.perf_counter()
    res = evaluate(golden, run, opts, chunk_to_doc=_id_to_doc(run, golden) if opts.level == "document" else None)
    if res.n_queries == 0:
        raise InputError(f"{args.run}: no golden query of {args.qrels} is in the run, and --missing skip leaves "
                         "nothing to average; check that the run and the qrels use the same query ids")
    all_keys = list(dict.fromkeys(keys + [k for k, _ in thresholds]))
    means = {str(k): res.mean(k) for k in all_keys}
    progress(f"evaluated {res.n_queries:,} queries in {time.perf_counter() - t:.1f}s")
    cis = {}
    if args.ci:
        from rag_metrics.evaluate import bootstrap_ci

        cis = {str(k): bootstrap_ci(res.values(k)[res.included]) for k in keys}
    per_query = None
    if args.per_query:
        import numpy as np

        qids = [q for q, inc in zip(res.query_ids, res.included) if inc]
        cols = {str(k): res.values(k)[res.included] for k in keys}
        per_query = {q: {name: float(col[i]) for name, col in cols.items()} for i, q in enumerate(qids)}

    out = sys.stdout
    if args.format == "json":
        doc: dict = {"n_queries": res.n_queries, "metrics": {str(k): means[str(k)] for k in keys}}
        if cis:
            doc["ci95"] = {k: list(v) for k, v in cis.items()}
        doc["n_out_of_scope"] = res.n_out_of_scope
        if per_query is not None:
            doc["per_query"] = per_query
        json.dump(doc, out, indent=2 if not args.per_query else None, allow_nan=True)
        out.write("\n")
    elif args.format == "csv":
        import csv

        w = csv.writer(out, lineterminator="\n")
        w.writerow(["query_id", "metric", "k", "value"])
        for k in keys:
            w.writerow(["all", k.name, "" if k.k is None else k.k, repr(means[str(k)])])
        if per_query is not None:
            for q, vals in per_query.items():
                for k in keys:
                    w.writerow([q, k.name, "" if k.k is None else k.k, repr(vals[str(k)])])
    else:
        names = list(dict.fromkeys(k.name for k in keys))
        ks = list(dict.fromkeys(k.k for k in keys))
        rows = []
        for k in ks:
            cells = ["-" if k is None else str(k)]
            for n in names:
                key = f"{n}@{k}" if k is not None else n
                if key in means:
                    cell = _fmt(means[key])
                    if key in cis:
                        cell += f" [{_fmt(cis[key][0])}, {_fmt(cis[key][1])}]"
                    cells.append(cell)
                else:
                    cells.append("")
            rows.append(cells)
        oos = f", {res.n_out_of_scope} out of scope excluded" if res.n_out_of_scope and opts.out_of_scope == "exclude" else ""
        print(f"{res.n_queries} queries{oos}; run {run.name!r}; relevance level {opts.relevance_level}", file=out)
        print(_table(["k"] + names, rows), file=out)
        if per_query is not None:
            print(file=out)
            hdr = ["query"] + [str(k) for k in keys]
            print(_table(hdr, [[q] + [_fmt(v[h]) for h in hdr[1:]] for q, v in per_query.items()]), file=out)
    failed = [(k, v, means[str(k)]) for k, v in thresholds if not (means[str(k)] >= v)]
    for k, v, got in failed:
        _stderr(f"{PROG}: FAIL {k} = {_fmt(got)} is below --fail-under {v}")
    return 1 if failed else 0


def cmd_compare(args: argparse.Namespace) -> int:
    from rag_metrics.compare import DECISION_RULE, compare, comparison_summary
    from rag_metrics.evaluate import evaluate

    if len(args.run) != 2:
        raise InputError(f"--run: give exactly two runs (--run A --run B), got {len(args.run)}")
    keys = _keys(args)
    progress = _Progress(False)
    golden, (ra, rb) = _load_inputs(args, args.run, progress)
    opts = _options(args)
    c2d = {**_id_to_doc(ra, golden), **_id_to_doc(rb, golden)} if opts.level == "document" else None
    a = evaluate(golden, ra, opts, chunk_to_doc=c2d)
    b = evaluate(golden, rb, opts, chunk_to_doc=c2d)
    name_a, name_b = Path(args.run[0]).name, Path(args.run[1]).name
    df = compare(a, b, keys, name_a=name_a, name_b=name_b)
    if args.format == "json":
        rows = json.loads(df.to_json(orient="records"))
        json.dump({"a": args.run[0], "b": args.run[1], "n_queries": int(a.n_queries), "rule": DECISION_RULE,
                   "summary": comparison_summary(df, name_a, name_b), "rows": rows}, sys.stdout, indent=2)
        print()
    elif args.format == "csv":
        df.to_csv(sys.stdout, index=False)
    else:
        print(f"A = {args.run[0]}\nB = {args.run[1]}\n{a.n_queries} queries; delta = B - A\n{DECISION_RULE}")
        rows = []
        for _, r in df.iterrows():
            key = r["metric"] + ("" if r["k"] is None or str(r["k"]) == "<NA>" else f"@{r['k']}")
            rows.append([key, _fmt(r.mean_a), _fmt(r.mean_b), f"{r.delta:+.4f}", f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}]",
                         f"{r.wins}/{r.losses}/{r.ties}", f"{r.p_ttest:.4f}", f"{r.p_ttest_adj:.4f}", r.verdict,
                         _fmt(r.mde)])
        print(_table(["metric", "A", "B", "delta", f"{df['ci_level'].iloc[0] * 100:.4g}% CI" if len(df) else "CI",
                      "W/L/T", "p", "p adj", "verdict", "MDE"], rows))
        print()
        print(comparison_summary(df, name_a, name_b))
        for _, r in df.iterrows():
            print(r.sentence)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from rag_metrics.golden import validate_golden
    from rag_metrics.io import read_qrels, read_run, validate_run

    golden, report = read_qrels(args.golden, with_report=True)
    known = None
    if args.corpus:
        from rag_metrics.corpus import load_corpus
        from rag_metrics.retrieval.chunking import chunk_corpus

        corpus = load_corpus(args.corpus)
        chunks = chunk_corpus(corpus, size=args.chunk_size, overlap=args.chunk_overlap)
        known = {c.id for c in chunks} | {d.id for d in corpus}
    validate_golden(golden, known, report, source=str(args.golden))
    if args.run:
        run, rrep = read_run(args.run)
        report.extend(rrep.problems)
        if len(run):
            validate_run(run, golden, known, report, source=str(args.run))
    n_oos = sum(1 for q in golden if not q.in_scope)
    for line in report.lines():
        print(line)
    print(f"{args.golden}: {len(golden)} queries ({n_oos} out of scope); {report.summary()}")
    return 1 if report.errors else 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Exact, trec_eval-compatible retrieval metrics for RAG.")
    p.add_argument("--version", action="version", version=f"{PROG} " + __import__("rag_metrics").__version__)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def common(sp: argparse.ArgumentParser, metrics_default: str, k_default: str) -> None:
        sp.add_argument("--qrels", required=True, metavar="PATH",
                        help="TREC qrels, BEIR qrels .tsv, BEIR folder, or a golden set (.csv/.json/.jsonl)")
        sp.add_argument("--k", default=k_default, metavar="KS", help=f"cutoffs: 1,3,5,10 or 1-100 (default {k_default})")
        sp.add_argument("--metrics", default=metrics_default, metavar="LIST",
                        help=f"comma-separated metrics (default {metrics_default}); known: "
                             "hit_rate, mrr, precision, recall, ndcg, ndcg_exp, map")
        sp.add_argument("--relevance-level", type=int, default=1, metavar="L",
                        help="grade >= L is relevant (trec_eval -l; default 1)")
        sp.add_argument("--out-of-scope", choices=["exclude", "miss"], default="exclude",
                        help="queries with no relevant id: excluded from means (default) or counted as misses")
        sp.add_argument("--recall-denominator", choices=["all", "cap"], default="all",
                        help="recall divides by |R| (default, trec_eval) or min(k, |R|) (BEIR R_cap)")
        sp.add_argument("--missing", choices=["zero", "skip"], default="zero",
                        help="golden queries absent from the run: 0 in the mean (default, trec_eval -c) or skipped")
        sp.add_argument("--level", choices=["chunk", "document"], default="chunk",
                        help="document: collapse ids '<doc>#<n>' to '<doc>' (first chunk's rank wins)")
        sp.add_argument("--format", choices=["table", "json", "csv"], default="table")

    ev = sub.add_parser("evaluate", help="score a TREC run against relevance judgments",
                        description="Score a TREC run (qid Q0 docid rank score tag) against judgments.")
    common(ev, "hit_rate,mrr,precision,recall,ndcg,map", "1,3,5,10")
    ev.add_argument("--run", required=True, metavar="PATH", help="TREC run file")
    ev.add_argument("--per-query", action="store_true", help="also print every query's values")
    ev.add_argument("--ci", action="store_true", help="add 95%% bootstrap confidence intervals")
    ev.add_argument("--fail-under", action="append", metavar="METRIC@K=VALUE",
                    help="exit 1 when a mean is below the threshold (repeatable), e.g. ndcg@10=0.4")
    ev.set_defaults(func=cmd_evaluate)

    cp = sub.add_parser("compare", help="paired comparison of two runs",
                        description="Paired comparison of two runs: deltas, CIs, win/loss/tie, significance tests.")
    common(cp, "hit_rate,mrr,ndcg,recall", "5,10")
    cp.add_argument("--run", action="append", required=True, metavar="PATH", help="give twice: --run A --run B")
    cp.set_defaults(func=cmd_compare)

    va = sub.add_parser("validate", help="list every problem in a golden set (and optionally a run)",
                        description="Validate a golden set / qrels file; exit 1 when it has errors.")
    va.add_argument("golden", metavar="GOLDEN", help="golden set (.csv/.json/.jsonl), TREC/BEIR qrels, or BEIR folder")
    va.add_argument("--corpus", metavar="PATH", help="corpus to check ids against (folder, .jsonl, BEIR folder)")
    va.add_argument("--chunk-size", type=int, default=500, help="chunking used for the corpus ids (default 500)")
    va.add_argument("--chunk-overlap", type=int, default=100, help="chunk overlap (default 100)")
    va.add_argument("--run", metavar="PATH", help="also validate a TREC run against the golden set")
    va.set_defaults(func=cmd_validate)

    for mod, fn in (("rag_metrics.retrieval.cli", "add_retrieve_parser"), ("rag_metrics.report_cli", "add_report_parser")):
        try:
            add = getattr(__import__(mod, fromlist=[fn]), fn)
        except (ImportError, AttributeError):
            continue
        add(sub)
    return p


def _return_freed_memory_promptly() -> None:
    """Fix glibc's mmap threshold at 1 MiB for this command.

    By default glibc raises the threshold after large blocks are freed, so later large NumPy
    temporaries come from the heap and stay resident after use; with a fixed threshold every large
    temporary goes back to the OS when freed (about 10 % lower peak memory on a 2M-line run).
    No effect, and no error, on other C libraries.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return


def main(argv: Sequence[str] | None = None) -> int:
    _return_freed_memory_promptly()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        return int(args.func(args) or 0)
    except InputError as e:
        _stderr(f"{PROG} {args.command}: error: {e}")
        return 2
    except KeyboardInterrupt:
        _stderr(f"{PROG}: interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:
        _stderr(f"{PROG} {args.command}: error: out of memory; evaluate a smaller run or fewer cutoffs")
        return 2
    except Exception as e:  # never a traceback for the user; RAG_METRICS_DEBUG=1 shows it
        if os.environ.get("RAG_METRICS_DEBUG"):
            raise
        _stderr(f"{PROG} {args.command}: error: unexpected {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                " (set RAG_METRICS_DEBUG=1 for details and please report it)")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
