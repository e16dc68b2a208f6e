"""Time RFQA's metrics on the largest gold table (904 tuples) with fuzzy matching; target < 50 ms.

Usage: python benchmarks/rfqa_metrics.py [DATA_DIR]   (DATA_DIR holds relationalfactqa/, default
../shared/datasets). Prints the gold table's size and the median / best time of all metrics (cell
P/R/F1, tuple similarity, QATCH's five) against a perturbed copy: 10% of rows dropped, numbers off by
5% or 20%, typos in long strings, shuffled order.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from structbench.benchmarks.rfqa.database import DatabaseCache
from structbench.benchmarks.rfqa.gold import execute_gold
from structbench.benchmarks.rfqa.matching import PublishedRule
from structbench.benchmarks.rfqa.metrics import table_metrics
from structbench.benchmarks.rfqa.queries import read_queries
from structbench.benchmarks.rfqa.source import QUERIES_FILE

TARGET_MS = 50.0


def perturb(rows: list[list[Any]], rng: random.Random) -> list[list[Any]]:
    out = []
    for row in rows:
        if rng.random() < 0.1:
            continue
        new = []
        for v in row:
            if isinstance(v, int | float) and not isinstance(v, bool):
                v = v * rng.choice((1.0, 1.05, 1.2))
            elif isinstance(v, str) and len(v) >= 10 and rng.random() < 0.3:
                i = rng.randrange(len(v))
                v = v[:i] + "#" + v[i + 1 :]
            new.append(v)
        out.append(new)
    rng.shuffle(out)
    return out


def timed(fn: Any, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    data_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "datasets"
    root = data_dir / "relationalfactqa"
    queries = read_queries(root / QUERIES_FILE)
    query = max(queries, key=lambda q: q.tuples or 0)
    gold = execute_gold(query, DatabaseCache(root))
    assert gold.table is not None, gold.reason
    rows = gold.table.rows
    actual = perturb(rows, random.Random(0))
    print(f"{query.qid}: {len(rows)} tuples x {len(gold.table.columns)} attributes; prediction {len(actual)} tuples")
    ordered = True  # include tuple order too
    table_metrics(rows, actual, ordered=ordered)  # warm-up
    for label, fn in (
        ("all metrics, intended rule", lambda: table_metrics(rows, actual, ordered=ordered)),
        ("all metrics, identical table", lambda: table_metrics(rows, rows, ordered=ordered)),
    ):
        t = timed(fn, 20)
        verdict = "OK" if statistics.median(t) < TARGET_MS else "SLOW"
        print(
            f"{label}: median {statistics.median(t):.1f} ms, best {min(t):.1f} ms (target {TARGET_MS:.0f} ms) {verdict}"
        )
    t = timed(lambda: table_metrics(rows, actual, rule=PublishedRule(), ordered=ordered), 3)
    print(f"all metrics, as-published rule (option, brute force): median {statistics.median(t):.1f} ms")
    print("values:", {k: round(v, 4) for k, v in table_metrics(rows, actual, ordered=ordered).items()})


if __name__ == "__main__":
    main()
