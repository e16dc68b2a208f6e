"""StructFact question generation speed: questions per second, with and without the independent check.

For each table source it reports the one-off cost (reading the CSV files or JSON, profiling the columns
and finding foreign keys) and then the best of ``--repeat`` generations of ``--per-task`` questions per
task (a fresh seed each run), with every label re-derived by ``verify.py`` (what ``structfact:generated``
does) and without. Everything runs in one process. Reads ``../shared/datasets`` or ``--data-dir``.

    python benchmarks/structfact_gen.py [--tables rfqa scitab] [--per-task 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from structbench.backends.tokens import token_counter
from structbench.benchmarks.structfact.generated.generator import Generator
from structbench.benchmarks.structfact.generated.profile import World
from structbench.benchmarks.structfact.generated.tables import load_tables
from structbench.data.datasets import DataContext

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=["rfqa", "scitab"])
    parser.add_argument("--per-task", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get(
        "STRUCTBENCH_SHARED_DATASETS", REPO.parent / "shared" / "datasets")))
    args = parser.parse_args()
    data = DataContext(data_dir=args.data_dir, offline=True)
    counter = token_counter("regex")
    print(f"{'tables':8s} {'read':>6s} {'profile':>8s} {'check':>5s} {'n':>6s} {'best s':>7s} {'q/s':>7s}")
    for spec in args.tables:
        start = time.perf_counter()
        tables = load_tables(spec, data)
        read = time.perf_counter() - start
        start = time.perf_counter()
        world = World.of(tables)
        profile = time.perf_counter() - start
        for check in (True, False):
            generator = Generator(world, counter, check=check)
            runs, count = [], 0
            for seed in range(args.repeat):
                start = time.perf_counter()
                count = len(generator.generate(args.per_task, seed=seed))
                runs.append(time.perf_counter() - start)
            best = min(runs)
            print(f"{spec:8s} {read:6.2f} {profile:8.2f} {'yes' if check else 'no':>5s} {count:6d} {best:7.2f} "
                  f"{count / best:7.0f}")


if __name__ == "__main__":
    main()
