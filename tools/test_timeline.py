"""What each test process ran when, file by file, from a ``LAB_TEST_TIMELINE`` file (tests/tiers.py).

    LAB_TEST_TIMELINE=/tmp/timeline.tsv ./lab test
    python tools/test_timeline.py /tmp/timeline.tsv

Prints, per process, its files in the order they ran with their start (seconds from the first test)
and their length, then each process's busy time and the files that took longest: where a parallel
run waits on its slowest process, and which file to split or speed up first.
"""
from __future__ import annotations

import sys
from collections import defaultdict


def main(path: str) -> int:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4:
                print(f"{path}:{n}: not 'process, start, end, test id' separated by tabs: skipped", file=sys.stderr)
                continue
            rows.append((parts[0], float(parts[1]), float(parts[2]), parts[3].split("::")[0]))
    if not rows:
        print(f"{path}: no tests recorded (was LAB_TEST_TIMELINE set for the run?)", file=sys.stderr)
        return 1
    t0 = min(r[1] for r in rows)
    spans: dict[tuple[str, str], list[float]] = {}
    for worker, start, end, file in rows:
        span = spans.setdefault((worker, file), [start, end, 0.0])
        span[0], span[1], span[2] = min(span[0], start), max(span[1], end), span[2] + end - start
    by_worker: dict[str, list[tuple[float, float, float, str]]] = defaultdict(list)
    for (worker, file), (start, end, busy) in spans.items():
        by_worker[worker].append((start, end, busy, file))
    for worker in sorted(by_worker):
        files = sorted(by_worker[worker])
        busy = sum(b for _, _, b, _ in files)
        last = max(e for _, e, _, _ in files) - t0
        print(f"{worker}: {len(files)} files, busy {busy:.0f} s, last ends at {last:.0f} s")
        for start, _end, b, file in files:
            if b >= 5:
                print(f"  {start - t0:7.0f} s  {b:6.1f} s  {file}")
    print("longest files:")
    for (worker, file), (_start, _end, busy) in sorted(spans.items(), key=lambda kv: -kv[1][2])[:15]:
        print(f"  {busy:6.1f} s  {file} ({worker})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
