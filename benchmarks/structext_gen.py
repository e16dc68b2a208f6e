"""StrucText-Eval generation speed: questions per second for the Test and Test-Hard suites.

Ground-truth verification (re-parsing every text with orjson / rapidyaml / libyaml / lxml / expat /
the heading parser and comparing every answer) is included; building ``Sample`` objects and writing
files are not. Each run draws a fresh seed. For each suite it prints the first (cold) run and the
best of ``--repeat`` runs, with and without verification: wall-clock time (what the targets are
about) and the CPU time of all processes (this one and the generator's forked workers), which shows
how much of the wall time parallel workers hide. ``--workers 1`` measures one process.

    python benchmarks/structext_gen.py [--repeat 7] [--suite test hard] [--workers N]
"""

from __future__ import annotations

import argparse
import os
import time

from structbench.benchmarks.structext.suites import suite_items
from structbench.core.forkmap import cpu_count


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the generator's worker processes)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timings(suite: str, repeat: int, verify: bool, seed0: int,
            workers: int | None) -> tuple[int, list[tuple[float, float]]]:
    """The question count and ``(wall, cpu)`` seconds of each run."""
    runs, count = [], 0
    for run in range(repeat):
        wall, cpu = time.perf_counter(), cpu_seconds()
        count = len(suite_items(suite, seed=seed0 + run, verify=verify, workers=workers))
        runs.append((time.perf_counter() - wall, cpu_seconds() - cpu))
    return count, runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--suite", nargs="+", default=["test", "hard"], choices=["test", "hard"])
    parser.add_argument("--workers", type=int, default=None, help="processes (default: one per CPU)")
    args = parser.parse_args()
    print(f"workers: {args.workers or cpu_count()}")
    print(f"{'suite':5s} {'':10s} {'n':>5s}  {'cold wall':>9s}  {'best wall':>9s} {'q/s':>8s}  "
          f"{'best cpu':>8s} {'q/cpu-s':>8s}")
    for k, suite in enumerate(args.suite):
        for verify in (True, False):
            seed0 = 1000 * k + (0 if verify else 500)
            count, runs = timings(suite, args.repeat, verify, seed0, args.workers)
            wall = min(r[0] for r in runs)
            cpu = min(r[1] for r in runs)
            label = "verified" if verify else "unverified"
            print(f"{suite:5s} {label:10s} {count:5d}  {runs[0][0]:8.3f}s  {wall:8.3f}s {count / wall:8.0f}  "
                  f"{cpu:7.3f}s {count / cpu:8.0f}")


if __name__ == "__main__":
    main()
