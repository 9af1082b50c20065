"""``rag-metrics compare``: paired comparison of two runs (deltas, CIs, win/loss/tie, tests).

Exit code 0, or 1 when a run is no verdict (:mod:`rag_metrics.verdict`: nothing matched the golden
questions, no retrieval, no in-scope question answered, or most contexts not located in
``--corpus``): no table is printed and the last line(s) say why, with the fix; 2 bad input.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rag_metrics.cli._common import (
    add_judgment_options,
    ci_cell,
    eval_options,
    fmt,
    id_to_doc,
    load_inputs,
    metric_keys,
    table,
    verdict_line,
)
from rag_metrics.cli._output import Progress
from rag_metrics.errors import InputError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``compare`` on an ``argparse`` subparsers object."""
    cp = subparsers.add_parser("compare", help="paired comparison of two runs",
                               description="Paired comparison of two runs: deltas, CIs, win/loss/tie, "
                                           "significance tests.")
    add_judgment_options(cp, "hit_rate,mrr,ndcg,recall", "5,10")
    cp.add_argument("--run", action="append", required=True, metavar="PATH", help="give twice: --run A --run B")
    return cp


def run(args: argparse.Namespace) -> int:
    """Handler of ``rag-metrics compare``; returns the exit code (1 when a run is not comparable)."""
    from rag_metrics.compare.paired import DECISION_RULE, compare, comparison_summary
    from rag_metrics.evaluation import evaluate

    if len(args.run) != 2:
        raise InputError(f"--run: give exactly two runs (--run A --run B), got {len(args.run)}")
    keys = metric_keys(args)
    golden, (ra, rb) = load_inputs(args, args.run, Progress(False))
    opts = eval_options(args)
    c2d = {**id_to_doc(ra, golden), **id_to_doc(rb, golden)} if opts.level == "document" else None
    from rag_metrics.cli._systems import evidence_judge, unmatched_rows

    a = evaluate(golden, ra, opts, chunk_to_doc=c2d, evidence=evidence_judge(args, ra, golden),
                 unmatched_rows=unmatched_rows(ra))
    b = evaluate(golden, rb, opts, chunk_to_doc=c2d, evidence=evidence_judge(args, rb, golden),
                 unmatched_rows=unmatched_rows(rb))
    name_a, name_b = Path(args.run[0]).name, Path(args.run[1]).name
    df = compare(a, b, keys, name_a=name_a, name_b=name_b)
    if args.format == "json":
        rows = json.loads(df.to_json(orient="records"))
        json.dump({"a": args.run[0], "b": args.run[1], "n_queries": int(a.n_queries), "rule": DECISION_RULE,
                   "summary": comparison_summary(df, name_a, name_b), "rows": rows}, sys.stdout, indent=2)
        print()
    elif args.format == "csv":
        df.to_csv(sys.stdout, index=False)
    elif a.no_verdict is not None or b.no_verdict is not None:  # no winner named from nothing
        print(f"A = {args.run[0]}\nB = {args.run[1]}\n{a.n_queries} queries; no comparison: a run is no verdict")
    else:
        print(f"A = {args.run[0]}\nB = {args.run[1]}\n{a.n_queries} queries; delta = B - A\n{DECISION_RULE}")
        rows = []
        for _, r in df.iterrows():
            key = r["metric"] + ("" if r["k"] is None or str(r["k"]) == "<NA>" else f"@{r['k']}")
            rows.append([key, fmt(r.mean_a), fmt(r.mean_b), f"{r.delta:+.4f}",
                         ci_cell(r.ci_low, r.ci_high, int(r.n), signed=True),
                         f"{r.wins}/{r.losses}/{r.ties}", f"{r.p_ttest:.4f}", f"{r.p_ttest_adj:.4f}", r.verdict,
                         fmt(r.mde)])
        print(table(["metric", "A", "B", "delta", f"{df['ci_level'].iloc[0] * 100:.4g}% CI" if len(df) else "CI",
                     "W/L/T", "p", "p adj", "verdict", "MDE"], rows))
        print()
        print(comparison_summary(df, name_a, name_b))
        for _, r in df.iterrows():
            print(r.sentence)
    verdicts = [v for v in (verdict_line(a, name_a), verdict_line(b, name_b)) if v]
    for v in verdicts:  # the last lines: a run that is no verdict says why (or its unlocated share)
        print(v, file=sys.stdout if args.format == "table" else sys.stderr)
    return 1 if not (a.comparable and b.comparable) else 0
