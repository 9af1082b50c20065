"""``rag-metrics sweep``: tune the lab's retrievers over a grid, with an honest held-out check.

::

    rag-metrics sweep --corpus PATH --golden PATH [--grid grid.toml] --out sweep.json
        [--held-out 0.3] [--seed 0] [--cost p95_ms|index_mb|build_s] [--save-baseline FILE.json] [--yes]

``--golden``: a golden set with evidence labels (``{"question", "category", "evidence": [{"doc",
"quote", "grade"}]}`` per line, like the sample's ``golden_evidence.jsonl``), or with chunk labels made
on the chunking ``--labelled-chunking SIZE/OVERLAP`` (default 500/100): those become evidence, so every
chunking of the grid is judged on the same labels by the lab's evidence rule (docs/evidence.md).
Without ``--grid`` the issue's 12-configuration
grid runs (3 chunk sizes x dense / BM25 / hybrid RRF / hybrid weighted 0.5).

Before it runs, the sweep prints the number of configurations and the estimated time (from the
embeddings already cached and this machine's speed).  Progress goes to stderr; Ctrl-C keeps the
finished configurations and still writes ``--out``.  ``--save-baseline`` writes the chosen
configuration as a saved run for ``rag-metrics evaluate --baseline``.

Exit codes: 0 done; 2 bad input; 130 interrupted (the finished configurations are written).
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from rag_metrics.cli._common import table
from rag_metrics.cli._output import PROG, stderr
from rag_metrics.errors import InputError

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> argparse.ArgumentParser:
    sp = sub.add_parser("sweep", help="tune chunking, retriever, model and depth over a grid (Pareto, held-out check)",
                        description=__doc__.split("\n\n", 1)[0].split(": ", 1)[1],
                        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog())
    sp.add_argument("--corpus", required=True, help="a folder of .md/.txt files, a .jsonl corpus or a BEIR folder")
    sp.add_argument("--golden", required=True, help="an evidence set (.jsonl) or a chunk-id golden set")
    sp.add_argument("--labelled-chunking", default="500/100", metavar="SIZE/OVERLAP",
                    help="the chunking a chunk-id golden set was labelled on (default 500/100)")
    sp.add_argument("--grid", help="the grid (TOML); default: the 12-configuration grid below")
    sp.add_argument("--out", required=True, help="write the results here (JSON; the app's Tune page loads it)")
    sp.add_argument("--held-out", type=float, help="share of questions held out (overrides the grid; default 0.3)")
    sp.add_argument("--seed", type=int, help="seed of the held-out split (overrides the grid; default 0)")
    sp.add_argument("--cost", default="p95_ms", choices=("p95_ms", "index_mb", "build_s"),
                    help="cost axis of the Pareto frontier (default p95_ms)")
    sp.add_argument("--save-baseline", metavar="FILE.json",
                    help="save the chosen configuration as a run for `evaluate --baseline`")
    sp.add_argument("--yes", action="store_true", help="do not ask before a sweep estimated over 10 minutes")
    return sp


def _epilog() -> str:
    from rag_metrics.tuning.grid import DEFAULT_GRID_TOML

    return "The default grid (copy it to a file to change it):\n\n" + "\n".join(
        "    " + line for line in DEFAULT_GRID_TOML.splitlines())


def _chunking(text: str) -> tuple[int, int]:
    try:
        size, overlap = (int(x) for x in text.split("/"))
    except ValueError:
        raise InputError(f"--labelled-chunking {text!r}: write SIZE/OVERLAP, e.g. 500/100") from None
    from rag_metrics.retrieval.chunking import validate_chunk_args

    return validate_chunk_args(size, overlap)


def run(args: argparse.Namespace) -> int:
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.tuning import estimate, load_grid, load_labels, parse_grid, run_sweep, save_sweep
    from rag_metrics.tuning.grid import DEFAULT_GRID_TOML
    from rag_metrics.tuning.select import COST_AXES, best, best_of_n, held_out_check, rows

    if args.held_out is not None and not 0 <= args.held_out < 0.9:
        raise InputError(f"--held-out must be a share from 0 to 0.9, e.g. 0.3; got {args.held_out}")
    out = Path(args.out)
    if not out.parent.exists():
        raise InputError(f"--out {out}: folder {out.parent} does not exist")
    corpus = load_corpus(args.corpus)
    evidence = load_labels(args.golden, corpus, _chunking(args.labelled_chunking))
    if args.grid:
        grid = load_grid(args.grid)
    else:
        import tomllib

        grid = parse_grid(tomllib.loads(DEFAULT_GRID_TOML), source="the default grid")
    if args.held_out is not None or args.seed is not None:
        from dataclasses import replace

        grid = replace(grid, held_out=grid.held_out if args.held_out is None else args.held_out,
                       seed=grid.seed if args.seed is None else args.seed)
    for note in grid.notes:
        stderr(f"{PROG} sweep: {note}")
    est = estimate(grid, corpus, evidence)
    stderr(f"{PROG} sweep: {est.describe()}")
    if est.seconds > 600 and not args.yes:
        if not sys.stdin.isatty():
            raise InputError("the sweep is estimated over 10 minutes; pass --yes to run it anyway")
        if input("Run it? [y/N] ").strip().lower() not in ("y", "yes"):
            stderr(f"{PROG} sweep: not run")
            return 0
    tty = sys.stderr.isatty()
    last = [""]

    def progress(msg: str, frac: float) -> None:
        line = f"{PROG} sweep: [{frac:4.0%}] {msg}"
        if tty:
            sys.stderr.write("\r" + line[:110].ljust(110))
            sys.stderr.flush()
        elif msg.endswith("done") and msg != last[0]:
            stderr(line)
        last[0] = msg

    res = run_sweep(grid, corpus, evidence, progress=progress)
    if tty:
        sys.stderr.write("\n")
    save_sweep(res, out)
    if res.cancelled:
        stderr(f"{PROG} sweep: interrupted; {len(res.results)} of {len(grid.configs)} configurations finished, "
               f"written to {out}")
    if not res.results:
        return 130 if res.cancelled else 0
    table_rows = []
    for r in rows(res, args.cost):
        ci = "too few" if math.isnan(r.ci_low) else f"[{r.ci_low:.3f}, {r.ci_high:.3f}]"
        table_rows.append([r.label, f"{r.tuning:.4f}", ci, f"{r.held_out:.4f}", f"{r.p95_ms:.1f}",
                           f"{r.index_mb:.3f}", f"{r.build_s:.2f}", r.status + (" *" if r.on_frontier else "")])
    print(table([ "configuration", f"{grid.metric} tuning", "95% CI", "held-out", "p95 ms", "index MB", "build s",
                  "verdict"], table_rows))
    print(f"* on the Pareto frontier of {grid.metric} against {COST_AXES[args.cost]}.")
    chosen = best(res)
    if chosen is not None:
        ho = held_out_check(res, chosen)
        print(f"chosen: {chosen.config.label}: {grid.metric} {ho.tuning:.4f} on {ho.n_tuning} tuning questions, "
              f"{ho.held_out:.4f} on {ho.n_held_out} held-out questions"
              + ("" if math.isnan(ho.ci_low) else f" (95% CI [{ho.ci_low:.3f}, {ho.ci_high:.3f}])") + ".")
        bon = best_of_n(res, chosen)
        if bon is not None:
            print(bon.note())
        print("its configuration:\n" + chosen.config.toml())
        if args.save_baseline:
            from rag_metrics.compare.history import save_run
            from rag_metrics.tuning.select import baseline_run

            save_run(baseline_run(res, chosen), args.save_baseline)
            stderr(f"{PROG} sweep: saved the chosen configuration as a baseline run to {args.save_baseline}")
    hit = res.cache_hit_ratio
    stderr(f"{PROG} sweep: {len(res.results)} configurations in {res.seconds:.1f} s; embedded {res.embedded} text(s), "
           f"cache hit ratio {'n/a' if math.isnan(hit) else f'{hit:.0%}'}; results in {out}")
    return 130 if res.cancelled else 0
