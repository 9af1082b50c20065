"""`rag-metrics evaluate` end to end against pytrec_eval's parse + evaluate, with a breakdown.

    .venv/bin/python benchmarks/bench_cli.py [--queries 20000] [--repeat 5] [--keep DIR]

Two input shapes, generated into a temporary folder with a fixed seed:

- ``issue``: issue 13's files: 20,000 queries, per query 100 ranked ids drawn from ``d0``..``d4999``
  with distinct scores (about 64 MB), qrels with 40 judged ids per query, grades 0-3 (about 13 MB).
- ``bench``: ``bench_metrics.py``'s own files (100 ranked ids from 50,000 docs, rank-derived scores,
  1-7 judged ids per query).

For each shape it times, best of ``--repeat`` (the machine is shared and noisy: read the ratios):

- pytrec_eval in a fresh process: ``parse_qrel`` + ``parse_run`` + ``RelevanceEvaluator.evaluate``
  for success, P, recall, ndcg_cut and map_cut at K = 1..100 (what ``bench_metrics.py`` does);
- ``rag-metrics evaluate`` as a user runs it (a subprocess), K = 1..100, six metrics, JSON output;
- the breakdown of our command: start-up (``python -c "import rag_metrics.cli"``), then inside one
  process: parse (qrels and run), judge, kernels (every metric at every K), output (JSON text);
- the CPU time (user + system) of both commands, a fairer comparison when other jobs load the
  machine (both tools are single-threaded here, so on a quiet machine wall time ~ CPU time);
- the raw cost of reading the two files: ``cat`` to /dev/null and a plain ``read()`` in Python,
  and a bare ``python -c pass`` start-up, so the gap to the I/O limit is visible.

Values of both tools are compared (all six metrics at K = 1, 5, 10, 100 where pytrec_eval has them).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

METRICS = "hit_rate,mrr,precision,recall,ndcg,map"
TARGET = 0.35


# ----------------------------------------------------------------------------------------------
# Input files
# ----------------------------------------------------------------------------------------------

def _write_lines(path: Path, columns: list[np.ndarray], sep: str = " ") -> None:
    """Join string columns row-wise into lines and write them (NumPy string ops, no per-line f-string)."""
    out = columns[0].astype(object)
    for c in columns[1:]:
        out = out + sep + c.astype(object)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out.tolist()))
        f.write("\n")


def write_issue_shape(folder: Path, n_queries: int, seed: int = 13) -> tuple[Path, Path]:
    """Issue 13's files: 100 ids per query from d0..d4999, distinct scores; 40 judged ids, grades 0-3."""
    rng = np.random.default_rng(seed)
    n_docs, depth, n_judged = 5000, 100, 40
    docs = np.argsort(rng.random((n_queries, n_docs)), axis=1)[:, : depth + n_judged]  # distinct per query
    ranked = docs[:, :depth]
    # distinct and descending: cumulative sums of positive steps, printed with 6 decimals
    scores = np.cumsum(rng.integers(1, 20_000, size=(n_queries, depth)), axis=1)[:, ::-1] / 1e6
    q = np.array([f"q{i}" for i in range(n_queries)], dtype=object)
    d = np.array([f"d{i}" for i in range(n_docs)], dtype=object)
    ranks = np.tile(np.arange(1, depth + 1), n_queries).astype(str).astype(object)
    runp, qrelp = folder / "issue_run.trec", folder / "issue_qrels.txt"
    _write_lines(runp, [np.repeat(q, depth), np.full(n_queries * depth, "Q0", dtype=object), d[ranked.ravel()], ranks,
                        np.char.mod("%.6f", scores.ravel()).astype(object),
                        np.full(n_queries * depth, "issue", dtype=object)])
    # half of the judged ids from the ranking, half from outside it
    judged = np.concatenate([docs[:, : n_judged // 2], docs[:, depth: depth + n_judged // 2]], axis=1)
    grades = rng.integers(0, 4, size=judged.shape)
    _write_lines(qrelp, [np.repeat(q, n_judged), np.full(n_queries * n_judged, "0", dtype=object),
                         d[judged.ravel()], grades.ravel().astype(str).astype(object)])
    return runp, qrelp


def write_bench_shape(folder: Path, n_queries: int) -> tuple[Path, Path]:
    """The files of ``bench_metrics.py`` (its ``write_trec_files``)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_metrics import write_trec_files

    sub = folder / "bench"
    sub.mkdir(exist_ok=True)
    return write_trec_files(n_queries, sub)


# ----------------------------------------------------------------------------------------------
# Timed pieces
# ----------------------------------------------------------------------------------------------

PYTREC_SCRIPT = r"""
import json, sys, pytrec_eval
qp, rp = sys.argv[1], sys.argv[2]
with open(qp) as f: qrels = pytrec_eval.parse_qrel(f)
with open(rp) as f: run = pytrec_eval.parse_run(f)
ks = ",".join(str(k) for k in range(1, 101))
ev = pytrec_eval.RelevanceEvaluator(qrels, {"success." + ks, "P." + ks, "recall." + ks, "ndcg_cut." + ks,
                                            "map_cut." + ks, "recip_rank"})
per = ev.evaluate(run)
# trec_eval -c: every judged query counts; our default also leaves out queries with no relevant id
inscope = [q for q, rel in qrels.items() if any(g > 0 for g in rel.values())]
zero = {}
def mean(m):
    return sum(per.get(q, zero).get(m, 0.0) for q in inscope) / len(inscope)
out = {}
for k in (1, 5, 10, 100):
    out[f"hit_rate@{k}"] = mean(f"success_{k}")
    out[f"precision@{k}"] = mean(f"P_{k}")
    out[f"recall@{k}"] = mean(f"recall_{k}")
    out[f"ndcg@{k}"] = mean(f"ndcg_cut_{k}")
    out[f"map@{k}"] = mean(f"map_cut_{k}")
out["mrr@100"] = mean("recip_rank")  # every run here has 100 ids per query
print(json.dumps(out))
"""

BREAKDOWN_SCRIPT = r"""
import json, sys, time
marks = [(time.perf_counter(), time.process_time())]
def mark():
    marks.append((time.perf_counter(), time.process_time()))
import rag_metrics.cli
from rag_metrics.evaluate import evaluate
from rag_metrics.io import read_qrels, read_run, validate_run
from rag_metrics.metrics.registry import MetricKey
import pyarrow.csv, pyarrow.compute  # imported by the readers; counted with the imports
mark()
qp, rp = sys.argv[1], sys.argv[2]
golden = read_qrels(qp)
mark()
run, rep = read_run(rp)
validate_run(run, golden, source=rp)
mark()
res = evaluate(golden, run)
mark()
means = {f"{m}@{k}": res.mean(MetricKey(m, k)) for m in "hit_rate,mrr,precision,recall,ndcg,map".split(",")
         for k in range(1, 101)}
mark()
text = json.dumps({"n_queries": res.n_queries, "metrics": means}, indent=2)
mark()
names = ["imports", "parse_qrels", "parse_run", "judge", "kernels", "output"]
print(json.dumps({n: [marks[i + 1][0] - marks[i][0], marks[i + 1][1] - marks[i][1]] for i, n in enumerate(names)}
                 | {"pandas_imported": "pandas" in sys.modules}))
"""


def best_of(fn, repeat: int):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_ok(cmd: list[str], env: dict) -> subprocess.CompletedProcess:
    """Run a command to completion; ``p.cpu`` is its CPU time (user + system, all threads)."""
    c0 = _children_cpu()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    p.cpu = _children_cpu() - c0  # type: ignore[attr-defined]  # extra attribute for the caller
    if p.returncode != 0:
        raise SystemExit(f"{cmd[:4]}... failed ({p.returncode}):\n{p.stderr}")
    return p


def bench_shape(label: str, runp: Path, qrelp: Path, repeat: int, env: dict) -> float:
    py = sys.executable
    mb_run, mb_qrels = runp.stat().st_size / 1e6, qrelp.stat().st_size / 1e6
    with open(runp, "rb") as f:
        n_lines = sum(1 for _ in f)
    ours_cmd = [py, "-m", "rag_metrics", "evaluate", "--qrels", str(qrelp), "--run", str(runp),
                "--k", "1-100", "--metrics", METRICS, "--format", "json"]
    # interleave the two tools so a burst of load hits both alike
    all_ours: list[float] = []
    all_trec: list[float] = []
    cpu_ours: list[float] = []
    cpu_trec: list[float] = []
    p_ours = p_trec = None
    for _ in range(repeat):
        t = time.perf_counter()
        p_ours = run_ok(ours_cmd, env)
        all_ours.append(time.perf_counter() - t)
        cpu_ours.append(p_ours.cpu)
        t = time.perf_counter()
        p_trec = run_ok([py, "-c", PYTREC_SCRIPT, str(qrelp), str(runp)], env)
        all_trec.append(time.perf_counter() - t)
        cpu_trec.append(p_trec.cpu)
    t_ours, t_trec = min(all_ours), min(all_trec)
    ours_v = json.loads(p_ours.stdout)["metrics"]
    trec_v = json.loads(p_trec.stdout)
    diff = max(abs(ours_v[k] - v) for k, v in trec_v.items())

    t_start, _ = best_of(lambda: run_ok([py, "-c", "import rag_metrics.cli"], env), repeat)
    t_bare, _ = best_of(lambda: run_ok([py, "-c", "pass"], env), repeat)
    t_cat, _ = best_of(lambda: subprocess.run(["cat", str(runp), str(qrelp)], stdout=subprocess.DEVNULL, check=True),
                       repeat)

    def plain_read() -> int:
        n = 0
        for p in (runp, qrelp):
            with open(p, "rb") as f:
                n += len(f.read())
        return n

    t_read, _ = best_of(plain_read, repeat)
    def read_split() -> int:
        n = 0
        for p in (runp, qrelp):
            with open(p, "rb") as f:
                n += len(f.read().split())
        return n

    t_split, _ = best_of(read_split, max(1, repeat // 2))
    parts: dict[str, float] = {}
    cpu: dict[str, float] = {}
    pandas_used = False
    for _ in range(repeat):
        got = json.loads(run_ok([py, "-c", BREAKDOWN_SCRIPT, str(qrelp), str(runp)], env).stdout)
        pandas_used |= got.pop("pandas_imported")
        for k, (wall, c) in got.items():
            parts[k] = min(parts.get(k, float("inf")), wall)
            cpu[k] = min(cpu.get(k, float("inf")), c)

    ratio = t_ours / t_trec
    print(f"\n[{label}: {n_lines:,} run lines ({mb_run:.0f} MB) + qrels ({mb_qrels:.0f} MB), K=1..100, six metrics]")
    print(f"  rag-metrics evaluate (subprocess)   {t_ours:6.2f} s   (median {np.median(all_ours):.2f} s)")
    print(f"  pytrec_eval parse + evaluate        {t_trec:6.2f} s   (median {np.median(all_trec):.2f} s)   "
          f"ratio ours/pytrec = {ratio:.2f}x "
          f"(target <= {TARGET}x): {'MET' if ratio <= TARGET else 'NOT MET'}; "
          f"values equal: {'OK' if diff < 1e-9 else 'DIFFERENT'} (max |diff| {diff:.1e})")
    print(f"  CPU time (user + system, best of {repeat}; less sensitive to other load): ours {min(cpu_ours):.2f} s, "
          f"pytrec_eval {min(cpu_trec):.2f} s, ratio {min(cpu_ours) / min(cpu_trec):.2f}x")
    print("  breakdown of ours, in one process (best of each part: wall / CPU):")
    print(f"    start-up  python -c 'import rag_metrics.cli' {t_start:.3f} s (bare python -c pass {t_bare:.3f} s); "
          f"imports of the evaluate path (NumPy, pyarrow{', pandas' if pandas_used else '; no pandas'}) "
          f"{parts['imports']:.3f} / {cpu['imports']:.3f} s")
    print(f"    parse     qrels {parts['parse_qrels']:.3f} / {cpu['parse_qrels']:.3f} s; "
          f"run {parts['parse_run']:.3f} / {cpu['parse_run']:.3f} s (with validate_run)")
    print(f"    judge     {parts['judge']:.3f} / {cpu['judge']:.3f} s")
    print(f"    kernels   {parts['kernels']:.3f} / {cpu['kernels']:.3f} s (600 means)")
    print(f"    output    {parts['output']:.3f} / {cpu['output']:.3f} s (JSON text)")
    total = sum(parts.values())
    print(f"    sum       {total:.3f} / {sum(cpu.values()):.3f} s; the rest of the command's wall time is "
          f"process start, argument checks and printing")
    print(f"  I/O limit: cat both files > /dev/null {t_cat:.3f} s; Python read() {t_read:.3f} s; "
          f"read() + bytes.split() {t_split:.3f} s")
    return ratio


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--shapes", default="issue,bench")
    ap.add_argument("--keep", metavar="DIR", help="write the files here (reused when present)")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; best of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for shape in args.shapes.split(","):
            if shape == "issue":
                runp, qrelp = folder / "issue_run.trec", folder / "issue_qrels.txt"
                if not (args.keep and runp.exists()):
                    runp, qrelp = write_issue_shape(folder, args.queries)
                bench_shape("issue 13 shape (40 judged ids per query, grades 0-3)", runp, qrelp, args.repeat, env)
            elif shape == "bench":
                runp, qrelp = folder / "bench" / "run.trec", folder / "bench" / "qrels.txt"
                if not (args.keep and runp.exists()):
                    runp, qrelp = write_bench_shape(folder, args.queries)
                bench_shape("bench_metrics.py shape (1-7 judged ids per query)", runp, qrelp, args.repeat, env)
            else:
                raise SystemExit(f"--shapes: unknown shape {shape!r}; use issue,bench")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
