"""The CoT oracle on RFQA's large-base samples: those whose base data exceeds 3,000 rows.

The test suite runs the CoT oracle only on samples with at most 3,000 base rows (plus bird_10) to
stay fast; this script covers the rest: joins and scans over tables of 4k to 164k rows, where the
oracle returns every base row and the query runs in memory over them. It prints, per sample, the
base rows, the seconds taken, cell F1 and tuple similarity, and exits 1 when any scores below 1.

    python benchmarks/rfqa_cot_large.py [--data-dir ../shared/datasets] [--min-rows 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from structbench.backends.base import Choice, Request, Response
from structbench.benchmarks.rfqa import RFQABenchmark
from structbench.benchmarks.rfqa.cot import BaseQuery
from structbench.benchmarks.rfqa.database import quote
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample

REPO = Path(__file__).resolve().parents[1]


def base_rows(bench: RFQABenchmark, sample: Sample) -> int:
    """How many rows the CoT oracle returns for ``sample`` (all its base queries together)."""
    db = bench.database(sample)
    assert db is not None
    total = 0
    for data in sample.extra["cot"]:
        base = BaseQuery.from_json(data)
        where = f" WHERE {base.conditions}" if base.conditions else ""
        total += int(str(db.execute(f"SELECT count(*) FROM {quote(base.table)}{where}")[2][0][0]))
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--min-rows", type=int, default=3000)
    args = parser.parse_args()
    bench = RFQABenchmark()
    samples = bench.load("all", DataContext(data_dir=args.data_dir, offline=True), seed=0, limit=None)
    large = [(s, n) for s in samples if (n := base_rows(bench, s)) > args.min_rows]
    print(f"{len(large)} of {len(samples)} samples have more than {args.min_rows} base rows")
    print(f"{'sample':<10} {'base rows':>10} {'seconds':>8} {'cell F1':>8} {'TS':>6}")
    failed = []
    for sample, n in large:

        async def generate(request: Request, sample: Sample = sample) -> Response:
            return Response(choices=(Choice(text=bench.oracle(sample, request)),))

        start = time.perf_counter()
        attempt = asyncio.run(bench.strategy("cot").run(sample, generate))
        values = bench.score(sample, attempt, bench.strategy("cot")).values
        seconds = time.perf_counter() - start
        f1, ts = values["cell_f1"], values["tuple_similarity"]
        print(f"{sample.id:<10} {n:>10} {seconds:>8.1f} {f1:>8.3f} {ts:>6.3f}", flush=True)
        if f1 < 1 or ts < 1:
            failed.append(sample.id)
            if "execution_error" in attempt.artifacts:
                print(f"  execution error: {attempt.artifacts['execution_error']}")
    print(f"{len(large) - len(failed)} of {len(large)} at F1 = TS = 1.0" + (f"; failed: {failed}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
