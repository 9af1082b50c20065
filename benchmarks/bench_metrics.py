"""Metric engine vs pytrec_eval and ranx, side by side in one process, with equality checked.

    .venv/bin/python benchmarks/bench_metrics.py [--sizes 1000,100000] [--cli-queries 20000]

Prints wall times and ratios (machines here are shared and noisy: read the ratios, not the
absolute times).  Targets (issue 2): in memory >= 5x faster than ranx after its JIT warm-up, with
no warm-up of our own; CLI end to end <= 0.5x pytrec_eval's own parse + evaluate; CLI peak memory
within 2x of the input files.  ``bench_cli.py`` times the CLI against pytrec_eval on issue 13's two
input shapes (target <= 0.35x) with a breakdown and the raw cost of reading the files.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

METRICS = ["hit_rate", "mrr", "precision", "recall", "ndcg", "map"]
TREC = {"hit_rate": "success", "precision": "P", "recall": "recall", "ndcg": "ndcg_cut", "map": "map_cut"}


def make_data(n_queries: int, depth: int = 100, n_docs: int = 50_000, seed: int = 0):
    """Columnar run (unique, rank-derived scores: no ties, so every tool agrees) and qrels."""
    rng = np.random.default_rng(seed)
    qids = np.repeat(np.array([f"q{i}" for i in range(n_queries)], dtype=object), depth)
    # distinct docs per query: a random start plus multiples of a prime stride (coprime with n_docs)
    start = rng.integers(0, n_docs, size=(n_queries, 1))
    stride = rng.choice([7919, 7927, 7933, 7937], size=(n_queries, 1))
    docs = (start + np.arange(depth)[None, :] * stride) % n_docs
    doc_names = np.array([f"d{i}" for i in range(n_docs)], dtype=object)
    ids = doc_names[docs.ravel()]
    scores = np.tile(np.arange(depth, 0, -1, dtype=np.float64), n_queries)
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_queries):
        n_rel = int(rng.integers(1, 8))
        # half of the relevant ids are taken from the ranking, half from outside
        inside = rng.choice(depth, size=min(n_rel, depth), replace=False)
        rel = {str(doc_names[docs[q, i]]): int(rng.integers(1, 4)) for i in inside[: n_rel // 2 + 1]}
        for d in rng.integers(0, n_docs, size=n_rel - len(rel)):
            rel.setdefault(str(doc_names[d]), int(rng.integers(0, 4)))
        qrels[f"q{q}"] = rel
    return qids, ids, scores, qrels


def to_dict(qids, ids, scores):
    run: dict[str, dict[str, float]] = {}
    for q, i, s in zip(qids.tolist(), ids.tolist(), scores.tolist()):
        run.setdefault(q, {})[i] = s
    return run


def timed(fn, repeat: int = 1):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def prepare_ours(qids, ids, scores, qrels):
    """Our in-memory structures, built once like ranx's Qrels/Run: a columnar Run with its ids
    dictionary-encoded (cached on the object) and a GoldenSet."""
    from rag_metrics import GoldenSet, Run

    run = Run(qids, ids, scores)
    run.factorized_qids()
    run.factorized_ids()
    return GoldenSet.from_qrels(qrels), run


def ours(golden, run, ks):
    from rag_metrics.evaluation import evaluate

    res = evaluate(golden, run)
    return {f"{m}@{k}": res.mean(m, k) for m in METRICS for k in ks}


def trec(qrels, run_dict, ks):
    import pytrec_eval

    kstr = ",".join(map(str, ks))
    measures = {f"{TREC[m]}.{kstr}" for m in TREC}
    ev = pytrec_eval.RelevanceEvaluator(qrels, measures)
    per = ev.evaluate(run_dict)
    n = len(qrels)
    out = {}
    for m, t in TREC.items():
        for k in ks:
            out[f"{m}@{k}"] = sum(v[f"{t}_{k}"] for v in per.values()) / n
    return out


def ranx_eval(qrels_obj, run_obj, ks):
    from ranx import evaluate as rx

    names = [f"{m}@{k}" for m in METRICS for k in ks]
    return rx(qrels_obj, run_obj, names, make_comparable=True)


def compare_values(a: dict, b: dict, keys, label: str, tol=1e-9) -> str:
    worst = max(abs(a[k] - b[k]) for k in keys)
    return f"{label}: max |diff| = {worst:.1e} {'OK' if worst <= tol else 'DIFFERENT'}"


def bench_in_memory(n_queries: int, ks: list[int], with_ranx: bool) -> None:
    qids, ids, scores, qrels = make_data(n_queries)
    run_dict = to_dict(qids, ids, scores)
    label = f"{n_queries:,} queries x 100, K={'1..100' if len(ks) == 100 else ks}"
    t_prep, (golden, run) = timed(lambda: prepare_ours(qids, ids, scores, qrels))
    reps = 3 if n_queries <= 10_000 else 2
    t_ours, v_ours = timed(lambda: ours(golden, run, ks), repeat=reps)
    t_trec, v_trec = timed(lambda: trec(qrels, run_dict, ks), repeat=reps)
    keys = [f"{m}@{k}" for m in TREC for k in ks]
    print(f"\n[{label}]  (best of {reps}; building each tool's input structures is reported separately)")
    print(f"  rag_metrics   {t_ours:8.3f} s  (no warm-up; building Run + GoldenSet from arrays/dicts {t_prep:.2f} s)")
    print(f"  pytrec_eval   {t_trec:8.3f} s  ratio pytrec/ours = {t_trec / t_ours:6.1f}x   "
          + compare_values(v_ours, v_trec, keys, "equality vs pytrec_eval") + "  (includes its qrels parsing)")
    if with_ranx:
        from ranx import Qrels
        from ranx import Run as RRun

        t_build, (qr, rr) = timed(lambda: (Qrels(qrels), RRun(run_dict)))
        small_q = Qrels({k: qrels[k] for k in list(qrels)[:10]})
        small_r = RRun({k: run_dict[k] for k in list(qrels)[:10]})
        t_warm, _ = timed(lambda: ranx_eval(small_q, small_r, ks))
        t_rx, v_rx = timed(lambda: ranx_eval(qr, rr, ks), repeat=reps)
        all_keys = [f"{m}@{k}" for m in METRICS for k in ks]
        print(f"  ranx          {t_rx:8.3f} s  ratio ranx/ours    = {t_rx / t_ours:6.1f}x   "
              + compare_values(v_ours, {k: float(v) for k, v in v_rx.items()}, all_keys, "equality vs ranx")
              + f"   (after JIT warm-up {t_warm:.1f} s; building Qrels/Run {t_build:.1f} s)")


def write_trec_files(n_queries: int, folder: Path) -> tuple[Path, Path]:
    qids, ids, scores, qrels = make_data(n_queries, seed=1)
    runp, qrelp = folder / "run.trec", folder / "qrels.txt"
    ranks = np.tile(np.arange(1, 101), n_queries)
    with open(runp, "w") as f:
        f.writelines(f"{q} Q0 {i} {r} {s:.0f} bench\n"
                     for q, i, r, s in zip(qids.tolist(), ids.tolist(), ranks.tolist(), scores.tolist()))
    with open(qrelp, "w") as f:
        f.writelines(f"{q} 0 {d} {g}\n" for q, rel in qrels.items() for d, g in rel.items())
    return runp, qrelp


PYTREC_SCRIPT = r"""
import json, sys, pytrec_eval
qp, rp = sys.argv[1], sys.argv[2]
with open(qp) as f: qrels = pytrec_eval.parse_qrel(f)
with open(rp) as f: run = pytrec_eval.parse_run(f)
ks = ",".join(str(k) for k in range(1, 101))
ev = pytrec_eval.RelevanceEvaluator(qrels, {"success." + ks, "P." + ks, "recall." + ks, "ndcg_cut." + ks,
                                            "map_cut." + ks})
per = ev.evaluate(run)
n = len(qrels)
print(json.dumps({"ndcg@10": sum(v["ndcg_cut_10"] for v in per.values()) / n,
                  "precision@5": sum(v["P_5"] for v in per.values()) / n}))
"""

MEM_SCRIPT = r"""
import sys
import numpy, pandas, scipy, pyarrow, pyarrow.csv, pyarrow.compute
import rag_metrics.cli, rag_metrics.evaluation, rag_metrics.io.trec
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
base = status("VmRSS")
code = rag_metrics.cli.main(sys.argv[1:])
peak = status("VmHWM")  # high-water mark of this process (not inherited from the parent like ru_maxrss)
print("PEAK", base, peak, file=sys.stderr)
"""


def bench_cli(n_queries: int) -> None:
    import json

    with tempfile.TemporaryDirectory() as d:
        runp, qrelp = write_trec_files(n_queries, Path(d))
        size = runp.stat().st_size + qrelp.stat().st_size
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-m", "rag_metrics", "evaluate", "--qrels", str(qrelp), "--run", str(runp),
               "--k", "1-100", "--metrics", "hit_rate,precision,recall,ndcg,map", "--format", "json"]
        t_ours, p = timed(lambda: subprocess.run(cmd, capture_output=True, text=True, env=env), repeat=2)
        assert p.returncode == 0, p.stderr
        ours_v = json.loads(p.stdout)["metrics"]
        t_trec, p2 = timed(lambda: subprocess.run([sys.executable, "-c", PYTREC_SCRIPT, str(qrelp), str(runp)],
                                                  capture_output=True, text=True, env=env))
        assert p2.returncode == 0, p2.stderr
        tv = json.loads(p2.stdout)
        mem = subprocess.run([sys.executable, "-c", MEM_SCRIPT] + cmd[3:], capture_output=True, text=True, env=env)
        base_rss, peak_rss = map(int, [ln for ln in mem.stderr.splitlines() if ln.startswith("PEAK")][0].split()[1:])
        # the same at 3x the input, to separate the fixed overhead (reader threads, buffers) from the slope
        big = Path(d) / "big"
        big.mkdir()
        runp3, qrelp3 = write_trec_files(3 * n_queries, big)
        size3 = runp3.stat().st_size + qrelp3.stat().st_size
        mem3 = subprocess.run([sys.executable, "-c", MEM_SCRIPT, "evaluate", "--qrels", str(qrelp3),
                               "--run", str(runp3)] + cmd[8:], capture_output=True, text=True, env=env)
        base3, peak3 = map(int, [ln for ln in mem3.stderr.splitlines() if ln.startswith("PEAK")][0].split()[1:])
        diff = max(abs(ours_v["ndcg@10"] - tv["ndcg@10"]), abs(ours_v["precision@5"] - tv["precision@5"]))
        print(f"\n[CLI end to end: {n_queries:,} queries x 100 TREC run ({size / 1e6:.0f} MB of input), K=1..100]")
        print(f"  rag-metrics evaluate           {t_ours:7.2f} s")
        print(f"  pytrec_eval parse + evaluate   {t_trec:7.2f} s   ratio ours/pytrec = {t_ours / t_trec:.2f}x "
              f"(target <= 0.5x); values equal: {'OK' if diff < 1e-9 else 'DIFFERENT'}")
        used, used3 = peak_rss - base_rss, peak3 - base3
        slope = (used3 - used) / (size3 - size)
        print(f"  peak RSS above the process after imports: {used / 1e6:.0f} MB for {size / 1e6:.0f} MB of input "
              f"({used / size:.2f}x); {used3 / 1e6:.0f} MB for {size3 / 1e6:.0f} MB ({used3 / size3:.2f}x); "
              f"marginal {slope:.2f} bytes per input byte (target <= 2x); imports alone {base_rss / 1e6:.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,100000")
    ap.add_argument("--cli-queries", type=int, default=20_000)
    ap.add_argument("--no-ranx", action="store_true")
    args = ap.parse_args()
    try:
        import ranx  # noqa: F401
        with_ranx = not args.no_ranx
    except ImportError:
        with_ranx = False
        print("ranx not installed (pip install -r benchmarks/requirements.txt): skipping ranx")
    for n in [int(x) for x in args.sizes.split(",")]:
        bench_in_memory(n, [1, 3, 5, 10], with_ranx)
        bench_in_memory(n, list(range(1, 101)), with_ranx)
    if args.cli_queries:
        bench_cli(args.cli_queries)


if __name__ == "__main__":
    main()
