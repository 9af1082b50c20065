"""``rag-metrics evaluate``: score a TREC run against relevance judgments.

Exit code 1 when a ``--fail-under`` threshold is missed, when the run is no verdict
(:mod:`rag_metrics.verdict`: none of its questions matches a golden question, it holds no retrieved
context, it answers no in-scope golden question, or more than
:data:`rag_metrics.metrics.evidence.UNLOCATED_LIMIT` of its contexts cannot be located in ``--corpus``, "not
comparable"; the last line says so and names the fix, and the table of means is not printed), or
with ``--baseline FILE.json --fail-on-regression`` when some metric is significantly worse than the
saved baseline run by the decision rule of :mod:`rag_metrics.compare.paired`
(:mod:`rag_metrics.compare.history`); 3 when that gate is inconclusive (:mod:`rag_metrics.compare.gate`: the
set is too small to see a change of ``--min-change``).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from rag_metrics.cli._common import (
    add_judgment_options,
    ci_cell,
    eval_options,
    fail_under,
    fmt,
    id_to_doc,
    load_inputs,
    metric_keys,
    table,
    verdict_line,
)
from rag_metrics.cli._output import PROG, Progress, stderr
from rag_metrics.errors import InputError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``evaluate`` on an ``argparse`` subparsers object."""
    ev = subparsers.add_parser("evaluate", help="score a TREC run against relevance judgments",
                               description="Score a TREC run (qid Q0 docid rank score tag) against judgments.")
    add_judgment_options(ev, "hit_rate,mrr,precision,recall,ndcg,map", "1,3,5,10")
    ev.add_argument("--run", required=True, metavar="PATH", help="TREC run file")
    ev.add_argument("--per-query", action="store_true", help="also print every query's values")
    ev.add_argument("--ci", action="store_true", help="add 95%% bootstrap confidence intervals")
    ev.add_argument("--fail-under", action="append", metavar="METRIC@K=VALUE",
                    help="exit 1 when a mean is below the threshold (repeatable), e.g. ndcg@10=0.4")
    ev.add_argument("--save-run", metavar="FILE.json",
                    help="save this evaluation (system, settings, golden fingerprint, per-query values, time) "
                         "as a run to compare later runs with (--baseline) or to open on the History page")
    ev.add_argument("--run-name", metavar="NAME", help="name of the saved run (default: the run file's name)")
    ev.add_argument("--baseline", metavar="FILE.json",
                    help="compare with a run saved by --save-run: paired per query, by the decision rule of "
                         "the Compare page (paired t-test, Benjamini-Hochberg)")
    ev.add_argument("--fail-on-regression", action="store_true",
                    help="with --baseline: the regression gate (as `rag-metrics gate`): exit 1 when some metric is "
                         "significantly worse than the baseline, 3 when the set is too small to see a change of "
                         "--min-change (inconclusive)")
    from rag_metrics.cli.gate import add_gate_options

    add_gate_options(ev)
    return ev


def run(args: argparse.Namespace) -> int:
    """Handler of ``rag-metrics evaluate``; returns the exit code (1 when a threshold is missed)."""
    from rag_metrics.evaluation import evaluate

    progress = Progress(False)
    keys = metric_keys(args)
    thresholds = fail_under(args.fail_under or [])
    golden, (trec_run,) = load_inputs(args, [args.run], progress)
    progress.enabled = progress.enabled or len(trec_run) > 200_000
    opts = eval_options(args)
    t = time.perf_counter()
    chunk_to_doc = id_to_doc(trec_run, golden) if opts.level == "document" else None
    from rag_metrics.cli._systems import evidence_judge, unmatched_rows

    ej = evidence_judge(args, trec_run, golden)
    res = evaluate(golden, trec_run, opts, chunk_to_doc=chunk_to_doc, evidence=ej,
                   unmatched_rows=unmatched_rows(trec_run))
    if ej is not None and res.located is not None:
        stderr(f"{PROG}: {args.run}: {res.located.note()}")
    if res.n_queries == 0 and res.no_verdict is None:
        raise InputError(f"{args.run}: no golden query of {args.qrels} is in the run, and --missing skip "
                         "(--only-answered) leaves nothing to average; check that the run and the qrels use the same "
                         "query ids")
    all_keys = list(dict.fromkeys(keys + [k for k, _ in thresholds]))
    means = {str(k): res.mean(k) for k in all_keys}
    progress(f"evaluated {res.n_queries:,} queries in {time.perf_counter() - t:.1f}s")
    cis = {}
    if args.ci and res.no_verdict is None:
        from rag_metrics.evaluation import bootstrap_ci

        cis = {str(k): bootstrap_ci(res.values(k)[res.included_for(k)]) for k in keys}
    per_query = None
    if args.per_query:
        import numpy as np

        qids = [q for q, inc in zip(res.query_ids, res.included) if inc]
        cols = {str(k): np.where(res.included_for(k), res.values(k), np.nan)[res.included] for k in keys}
        per_query = {q: {name: float(col[i]) for name, col in cols.items()} for i, q in enumerate(qids)}

    out = sys.stdout
    if args.format == "json":
        doc: dict = {"n_queries": res.n_queries, "metrics": {str(k): means[str(k)] for k in keys}}
        if cis:
            doc["ci95"] = {k: list(v) for k, v in cis.items()}
        doc["n_out_of_scope"] = res.n_out_of_scope
        doc["n_answered"], doc["n_absent"] = res.n_answered, res.n_absent
        doc["absent_questions"] = "skipped" if opts.missing_queries == "skip" else "counted as 0"
        if res.no_verdict is not None:  # the means below are no result: say why, machine-readably
            doc["no_verdict"] = {"kind": res.no_verdict.kind, "what": res.no_verdict.what, "fix": res.no_verdict.fix}
        if res.located is not None:
            doc["contexts"] = {"total": res.located.total, "unlocated": res.located.unlocated,
                               "unlocated_share": res.located.share, "comparable": res.located.comparable,
                               "fix": res.located.fix}
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
        for kk in ks:
            cells = ["-" if kk is None else str(kk)]
            for n in names:
                key = f"{n}@{kk}" if kk is not None else n
                if key in means:
                    cell = fmt(means[key])
                    if key in cis:
                        cell += " " + ci_cell(cis[key][0], cis[key][1], res.n_queries)
                    cells.append(cell)
                else:
                    cells.append("")
            rows.append(cells)
        oos = (f", {res.n_out_of_scope} out of scope excluded"
               if res.n_out_of_scope and opts.out_of_scope == "exclude" else "")
        absent = ""
        if res.n_absent:
            absent = (f"; {res.n_answered} answered, {res.n_absent} not in the run "
                      + ("(left out: --only-answered)" if opts.missing_queries == "skip" else
                         "(counted as 0, trec_eval -c; --only-answered leaves them out)"))
        print(f"{res.n_queries} queries{oos}{absent}; run {trec_run.name!r}; relevance level {opts.relevance_level}",
              file=out)
        if res.no_verdict is None:  # else no table of numbers computed from nothing: the last line says why
            print(table(["k"] + names, rows), file=out)
        if per_query is not None and res.no_verdict is None:
            print(file=out)
            hdr = ["query"] + [str(k) for k in keys]
            print(table(hdr, [[q] + [fmt(v[h]) for h in hdr[1:]] for q, v in per_query.items()]), file=out)
    failed = [(k, v, means[str(k)]) for k, v in thresholds if not (means[str(k)] >= v) and res.no_verdict is None]
    for k, v, got in failed:
        stderr(f"{PROG}: FAIL {k} = {fmt(got)} is below --fail-under {v}")
    gate = None
    if res.no_verdict is not None and (args.save_run or args.baseline):  # never a baseline of zeros, nor a pass
        stderr(f"{PROG}: --save-run / --baseline skipped: this run is no verdict (the last line says why)")
    else:
        gate = _history(args, res, keys, trec_run.name)
    verdict = verdict_line(res, trec_run.name)
    if verdict:  # the last line: never a number computed mostly from contexts found nowhere, unsaid
        print(verdict, file=out if args.format == "table" else sys.stderr)
    if failed or gate == "fail" or not res.comparable:
        return 1
    return 3 if gate == "inconclusive" else 0


def _history(args: argparse.Namespace, res: Any, keys: list, run_name: str) -> str | None:
    """``--save-run`` and ``--baseline``; with ``--fail-on-regression`` the gate's verdict (``pass``,
    ``fail``, ``inconclusive``: :mod:`rag_metrics.compare.gate`), else None."""
    if args.fail_on_regression and not args.baseline:
        raise InputError("--fail-on-regression needs --baseline FILE.json (a run saved with --save-run)")
    if not (args.save_run or args.baseline):
        return None
    from rag_metrics.compare.history import compare_runs, load_saved_run, regressions, save_run, saved_run

    settings = {"k": args.k, "metrics": args.metrics, "run": args.run, "qrels": args.qrels}
    current = saved_run(res, keys, args.run_name or run_name or "run", run_name or args.run, settings)
    if args.save_run:
        try:
            save_run(current, args.save_run)
        except OSError as e:
            raise InputError(f"--save-run {args.save_run}: cannot write the file ({e.strerror or e}); give a "
                             "writable file path, e.g. runs/this-run.json") from None
        stderr(f"{PROG}: saved run {current.name!r} ({len(current.query_ids)} queries, {len(keys)} metrics) to "
               f"{args.save_run}")
    if not args.baseline:
        return None
    baseline = load_saved_run(args.baseline)
    table, notes = compare_runs(baseline, current)
    for note in notes:
        stderr(f"{PROG}: baseline: {note}")
    for r in table.to_dict("records"):
        stderr(f"{PROG}: baseline: {r['sentence']}")
    bad = regressions(table)
    for r in bad.to_dict("records"):
        stderr(f"{PROG}: REGRESSION {r['key']} = {fmt(r['mean_b'])}, baseline {baseline.name!r} {fmt(r['mean_a'])} "
               f"(delta {r['delta']:+.4f}, interval [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}], adjusted p "
               f"{r['p_ttest_adj']:.3g})")
    if not len(bad):
        stderr(f"{PROG}: no metric is significantly worse than baseline {baseline.name!r}")
    if not args.fail_on_regression:
        return None
    from rag_metrics.cli.gate import print_gate
    from rag_metrics.compare.gate import gate_checks, gate_verdict

    checks = gate_checks(table, args.min_change, args.power)
    verdict = gate_verdict(checks)
    print_gate(checks, verdict, baseline.name)
    return verdict
