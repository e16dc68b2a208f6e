"""StrucText-Eval generation speed: questions per second for the Test and Test-Hard suites.

Ground-truth verification (re-parsing every text with orjson / rapidyaml / libyaml / lxml / the
heading parser and comparing every answer) is included; building ``Sample`` objects and writing files
are not. Each run draws a fresh seed. For each suite it prints the first (cold) run and the best of
``--repeat`` runs, as wall-clock time and as CPU time of this process (``time.process_time``, less
disturbed on a shared machine), with and without verification.

    python benchmarks/structext_gen.py [--repeat 7] [--suite test hard]
"""

from __future__ import annotations

import argparse
import time

from structbench.benchmarks.structext.suites import suite_items


def timings(suite: str, repeat: int, verify: bool, seed0: int) -> tuple[int, list[tuple[float, float]]]:
    """The question count and ``(wall, cpu)`` seconds of each run."""
    runs, count = [], 0
    for run in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        count = len(suite_items(suite, seed=seed0 + run, verify=verify))
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    return count, runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--suite", nargs="+", default=["test", "hard"], choices=["test", "hard"])
    args = parser.parse_args()
    print(f"{'suite':5s} {'':10s} {'n':>5s}  {'cold wall':>9s}  {'best wall':>9s} {'q/s':>8s}  "
          f"{'best cpu':>8s} {'q/s':>8s}")
    for k, suite in enumerate(args.suite):
        for verify in (True, False):
            count, runs = timings(suite, args.repeat, verify, seed0=1000 * k + (0 if verify else 500))
            wall = min(r[0] for r in runs)
            cpu = min(r[1] for r in runs)
            label = "verified" if verify else "unverified"
            print(f"{suite:5s} {label:10s} {count:5d}  {runs[0][0]:8.3f}s  {wall:8.3f}s {count / wall:8.0f}  "
                  f"{cpu:7.3f}s {count / cpu:8.0f}")


if __name__ == "__main__":
    main()
