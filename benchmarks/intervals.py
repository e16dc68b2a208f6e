"""Time the headline intervals of a 10,000-sample run, per benchmark; target: no slower than before clusters.

Usage: OPENBLAS_NUM_THREADS=1 python benchmarks/intervals.py [N] [REPEAT]   (default 10000 samples, best of 3
CPU times; one BLAS thread so that CPU time is the time a lone core would take). Builds N synthetic
outcomes per benchmark (labels for SciTab and StructFact, per-sample values for RFQA, SKA-Bench with a tenth
of rejection samples, StrucText-Eval), about six to a cluster (a shared table or document), and times
``stats.metric_interval`` (1,000 resamples, the interval ``metrics.json`` stores): the cluster interval where
the benchmark declares clusters (what a run stores), and the independent-samples one (``by="sample"``: what
``report --resample sample`` computes, and a run of a benchmark without clusters). Prints milliseconds.

``--columns`` times them over the outcomes as a run holds them
(``structbench.runfiles.outcomes.Outcomes``: numpy columns) and adds the whole result entry a run computes at
its end (``results.compute_result``: metrics, every breakdown,
the baselines, the corrected twins and the headline interval); the issue's target is under 10 s at 100,000::

    OPENBLAS_NUM_THREADS=1 python benchmarks/intervals.py 100000 1 --columns
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from typing import Any

from structbench.benchmarks import BENCHMARKS
from structbench.contract.benchmark import Benchmark, Scored

PER_CLUSTER = 6


def outcome(name: str, i: int, rng: random.Random) -> dict[str, Any]:
    """The benchmark-specific part of one synthetic outcome."""
    if name == "scitab":
        gold, parsed = rng.choice(("supports", "refutes", "not enough info")), rng.choice(
            ("supports", "refutes", "not enough info", None))
        return {"gold": gold, "parsed": parsed, "score": float(gold == parsed), "meta": {"setting": "3-class"}}
    if name == "structfact":
        gold, parsed = rng.choice(("Yes", "No", "Not sure enough")), rng.choice(("Yes", "No", "Not sure enough", None))
        return {"gold": gold, "parsed": parsed, "score": float(gold == parsed)}
    if name == "rfqa":
        cell, ts = rng.random(), rng.random()
        values = {"cell_precision": cell, "cell_recall": cell, "cell_f1": cell, "tuple_similarity": ts,
                  "invalid": float(rng.random() < 0.05)}
        return {"gold": None, "parsed": None, "score": (cell + ts) / 2, "values": values}
    if name == "skabench":
        if i % 10 == 0:
            rejected = float(rng.random() < 0.5)
            return {"gold": "no", "parsed": "no", "score": rejected, "values": {"rejected": rejected},
                    "meta": {"testbed": "negative_rejection"}}
        f1 = rng.random()
        return {"gold": [], "parsed": [], "score": f1, "values": {"f1": f1}, "meta": {"testbed": "noise"}}
    rouge = rng.random()
    values = {"rougeL": float(rouge > 0.5), "rougeL_raw": rouge, "exact_match": float(rouge > 0.9), "bleu": rouge,
              "empty": 0.0}
    return {"gold": "", "parsed": "", "score": values["rougeL"], "values": values}


def synthetic(bench: Benchmark, n: int, seed: int = 0) -> list[Scored]:
    rng = random.Random(seed)
    clustered = "cluster" in Scored.model_fields
    out = []
    for i in range(n):
        fields: dict[str, Any] = {"id": f"s{i:06d}", "task": "t", **outcome(bench.name, i, rng)}
        if clustered:
            fields["cluster"] = f"c{i // PER_CLUSTER}"
        out.append(Scored(**fields))
    return out


def best_ms(fn: Callable[[], Any], repeat: int) -> float:
    """The best CPU time of ``repeat`` calls (``process_time``: other load on a shared machine does not count)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append((time.process_time() - start) * 1000)
    return min(times)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    columns = "--columns" in sys.argv[1:]
    n = int(args[0]) if args else 10_000
    repeat = int(args[1]) if len(args) > 1 else 3
    from structbench.runfiles.outcomes import Outcomes
    from structbench.runfiles.results import compute_result
    from structbench.stats import metric_interval

    units: dict[str, Callable[[Benchmark, list[Scored]], Any]] = {"sample": lambda b, s: metric_interval(
        s, b, b.headline)}
    if "cluster" in Scored.model_fields:  # after clusters: by the benchmark's unit (stored), and by samples
        units = {"cluster": lambda b, s: metric_interval(s, b, b.headline),
                 "sample": lambda b, s: metric_interval(s, b, b.headline, by="sample")}
    if columns:
        units["result"] = lambda b, s: compute_result(b, b.variants[0], "s", "m", s)
    print(f"{n} samples, {PER_CLUSTER} per cluster, 1000 resamples; best of {repeat} CPU times (ms)"
          + (", over columns" if columns else ""))
    for name in BENCHMARKS:
        bench = BENCHMARKS.get(name)()
        scored: Any = synthetic(bench, n)
        if columns:
            scored = Outcomes.of(scored)
        cells = [f"{unit} {best_ms(lambda f=fn, b=bench, s=scored: f(b, s), repeat):8.1f}"
                 for unit, fn in units.items()]
        print(f"{name:10s} " + "   ".join(cells))


if __name__ == "__main__":
    main()
