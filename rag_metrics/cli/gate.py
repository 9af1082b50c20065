"""``rag-metrics gate``: the regression gate for CI -- pass, fail or inconclusive against a baseline.

Exit codes: 0 pass, 1 fail (some metric significantly worse than the baseline, a ``--fail-under``
threshold missed, or the run or the baseline run is no verdict: :mod:`rag_metrics.verdict`, the last
line says why), 3 inconclusive (the set is too small to see a change of ``--min-change``; the
smallest change it can detect and about how many more questions are needed are printed), 2 bad input.
The rule is :mod:`rag_metrics.compare.gate`'s.
"""
from __future__ import annotations

import argparse
from typing import Any

from rag_metrics.cli._output import PROG, stderr

__all__ = ["EPILOG", "add_gate_options", "add_parser", "print_gate", "run"]

EPILOG = """exit codes:
  0  pass: no metric is significantly worse, and a drop of --min-change would have been seen
  1  fail: some metric is significantly worse than the baseline (paired t-test, Benjamini-Hochberg),
     or a --fail-under threshold is missed, or a run is no verdict (nothing matched the golden
     questions, no retrieval, no in-scope question answered, or most contexts not located in
     --corpus): the last line says why and the fix
  2  bad input (a file that cannot be read, an unknown metric): one line on stderr
  3  inconclusive: not significantly worse, but this set is too small to see a change of
     --min-change; the smallest change it can detect (80% power) and about how many more
     questions are needed are printed

example:
  rag-metrics evaluate --qrels golden.csv --run main.trec --save-run baseline.json
  rag-metrics gate --qrels golden.csv --run branch.trec --baseline baseline.json --metrics ndcg --k 10
"""


def add_gate_options(p: argparse.ArgumentParser) -> None:
    """``--min-change`` and ``--power``: the size of change the gate must be able to see."""
    from rag_metrics.compare.power import MIN_EFFECT, POWER

    p.add_argument("--min-change", type=float, default=MIN_EFFECT, metavar="D",
                   help=f"the smallest drop that matters (default {MIN_EFFECT:g} on a 0-1 metric): a set that cannot "
                        "detect it gives 'inconclusive' (exit 3) instead of a pass")
    p.add_argument("--power", type=float, default=POWER, metavar="P",
                   help=f"power for the smallest detectable change (default {POWER:g})")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``gate`` on an ``argparse`` subparsers object."""
    from rag_metrics.cli._common import add_judgment_options

    gp = subparsers.add_parser(
        "gate", help="regression gate for CI: pass, fail or inconclusive against a baseline run",
        description="Compare a run with a baseline (a run saved by `evaluate --save-run`, or a run file scored "
                    "with the same qrels), paired per question, and answer pass, fail or inconclusive.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_judgment_options(gp, "hit_rate,mrr,ndcg,recall", "5,10")
    gp.add_argument("--run", required=True, metavar="PATH", help="the current run (any format evaluate reads)")
    gp.add_argument("--baseline", required=True, metavar="PATH",
                    help="a run saved by evaluate --save-run (.json), or a baseline run file")
    gp.add_argument("--fail-under", action="append", metavar="METRIC@K=VALUE",
                    help="also exit 1 when a mean is below the threshold (repeatable), e.g. ndcg@10=0.4")
    add_gate_options(gp)
    return gp


def print_gate(checks: list[Any], verdict: str, baseline_name: str) -> None:
    """One line per metric and the gate's verdict, on stderr (stdout stays the evaluation)."""
    for c in checks:
        stderr(f"{PROG}: gate: {c.sentence}")
    stderr(f"{PROG}: gate: {verdict.upper()} against baseline {baseline_name!r}")


def _is_saved_run(path: str) -> bool:
    from rag_metrics.io.files import loads_json, read_bytes

    try:
        head = read_bytes(path)[:1 << 22].decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - the reader below says what is wrong
        return False
    if not head.lstrip().startswith("{"):
        return False
    value, msg, _ = loads_json(head)
    return msg is None and isinstance(value, dict) and "values" in value and "query_ids" in value


def run(args: argparse.Namespace) -> int:
    """Handler of ``rag-metrics gate``; returns 0 pass, 1 fail, 3 inconclusive."""
    from rag_metrics.cli._common import (
        eval_options,
        fail_under,
        fmt,
        id_to_doc,
        load_inputs,
        metric_keys,
        verdict_line,
    )
    from rag_metrics.cli._output import Progress
    from rag_metrics.cli._systems import evidence_judge, unmatched_rows
    from rag_metrics.compare.gate import EXIT_CODES, gate_checks, gate_verdict
    from rag_metrics.compare.history import compare_runs, load_saved_run, saved_run
    from rag_metrics.errors import InputError
    from rag_metrics.evaluation import evaluate

    if not 0 < args.power < 1:
        raise InputError(f"--power must be between 0 and 1, got {args.power}")
    if not args.min_change > 0:
        raise InputError(f"--min-change must be above 0, got {args.min_change}")
    keys = metric_keys(args)
    thresholds = fail_under(args.fail_under or [])
    saved = _is_saved_run(args.baseline)
    paths = [args.run] if saved else [args.run, args.baseline]
    golden, runs = load_inputs(args, paths, Progress(False))
    opts = eval_options(args)
    results = []
    for r in runs:
        c2d = id_to_doc(r, golden) if opts.level == "document" else None
        results.append(evaluate(golden, r, opts, chunk_to_doc=c2d, evidence=evidence_judge(args, r, golden),
                                unmatched_rows=unmatched_rows(r)))
    lines = [verdict_line(res, r.name) for res, r in zip(results, runs) if res.no_verdict is not None]
    if lines:  # no pass or fail computed from nothing: the reason is the last line
        import sys

        if args.format == "json":
            import json

            json.dump({"verdict": "fail", "exit_code": EXIT_CODES["fail"], "no_verdict": lines}, sys.stdout, indent=2)
            print()
        stderr(f"{PROG}: gate: FAIL: no verdict (exit {EXIT_CODES['fail']})")
        for line in lines:
            print(line, file=sys.stdout if args.format != "json" else sys.stderr)
        return EXIT_CODES["fail"]
    current = saved_run(results[0], keys, runs[0].name or "run", args.run)
    if saved:
        baseline = load_saved_run(args.baseline)
    else:
        baseline = saved_run(results[1], keys, runs[1].name or "baseline", args.baseline)
    names = [str(k) for k in keys]
    table, notes = compare_runs(baseline, current, [k for k in names if k in baseline.values] or None)
    for note in notes:
        stderr(f"{PROG}: gate: {note}")
    checks = gate_checks(table, args.min_change, args.power)
    verdict = gate_verdict(checks)
    means = {str(k): results[0].mean(k) for k, _ in thresholds}
    missed = [(k, v) for k, v in thresholds if not means[str(k)] >= v]
    for k, v in missed:
        stderr(f"{PROG}: FAIL {k} = {fmt(means[str(k)])} is below --fail-under {v}")
    if missed:
        verdict = "fail"
    if args.format == "json":
        import json
        import sys

        json.dump({"verdict": verdict, "exit_code": EXIT_CODES[verdict], "baseline": baseline.name,
                   "checks": [{"key": c.key, "verdict": c.verdict, "n": c.n, "baseline": c.baseline,
                               "current": c.current, "delta": c.delta, "ci_low": c.ci_low, "ci_high": c.ci_high,
                               "alpha": c.alpha, "power": c.power, "min_change": c.min_change,
                               "detectable": c.detectable, "questions_needed": c.needed, "more_questions": c.more}
                              for c in checks]}, sys.stdout, indent=2, allow_nan=True)
        print()
    else:
        for c in checks:
            print(c.sentence)
        print(f"gate: {verdict.upper()}")
    stderr(f"{PROG}: gate: {verdict.upper()} against baseline {baseline.name!r} (exit {EXIT_CODES[verdict]})")
    return EXIT_CODES[verdict]
