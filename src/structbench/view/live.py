"""Result entries as the view shows them: a finished run's from its ``metrics.json``, a running one's computed from
the records read so far, the way the run will compute them at its end (``results.compute_result``, the headline's
bootstrap interval over the benchmark's clusters), so the numbers on the page converge to the final ones."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from structbench.contract.benchmark import Benchmark
from structbench.report.runs import BenchmarkCache
from structbench.runfiles.cells import cell_text
from structbench.runfiles.columns import Counts, EntryKey
from structbench.runfiles.outcomes import Outcomes
from structbench.runfiles.results import ResultEntry, compute_result, with_interval


@dataclass(frozen=True)
class Snapshot:
    """One entry's current records, copied out of the records being read so a thread can aggregate them."""

    key: EntryKey
    outcomes: Outcomes
    counts: Counts


def label(key: EntryKey) -> str:
    """``toy:small / direct [serialization=csv] / openai:m``: an entry as the page names it."""
    bench, variant, strategy, model, cell = key
    return f"{bench}:{variant} / {strategy}" + (f" [{cell_text(cell)}]" if cell else "") + f" / {model}"


def entry_json(result: ResultEntry, *, live: bool, note: str | None = None) -> dict[str, Any]:
    """What the page shows of an entry: its headline with its interval, n, errors and baselines."""
    h = result.headline
    return {
        "label": label((result.benchmark, result.variant, result.strategy, result.model, result.cell)),
        "benchmark": result.benchmark, "variant": result.variant, "strategy": result.strategy,
        "model": result.model, "cell": result.cell, "metric": h.name, "value": h.value, "ci_low": h.ci_low,
        "ci_high": h.ci_high, "confidence": h.confidence, "resampled": h.resampled(), "n": result.n,
        "errors": result.errors, "harness_errors": result.harness_errors, "too_long": result.too_long,
        "cut_off": result.reasoning_cut_off, "baselines": result.baselines, "live": live, "note": note,
    }


def counts_json(key: EntryKey, counts: Counts, *, note: str) -> dict[str, Any]:
    """An entry whose metric cannot be computed here (its benchmark does not load): its counts, and why."""
    bench, variant, strategy, model, cell = key
    return {
        "label": label(key), "benchmark": bench, "variant": variant, "strategy": strategy, "model": model,
        "cell": cell, "metric": None, "value": None, "ci_low": None, "ci_high": None, "confidence": None,
        "resampled": "–", "n": len(counts.counted), "errors": counts.errors, "harness_errors": counts.harness_errors,
        "too_long": counts.too_long, "cut_off": counts.reasoning_cut_off, "baselines": {}, "live": True,
        "note": note,
    }


def compute(snapshot: Snapshot, bench: Benchmark, *, resamples: int, seed: int = 0) -> ResultEntry:
    """The entry's result over the records so far, its headline's interval from ``resamples`` cluster resamples."""
    _, variant, strategy, model, cell = snapshot.key
    c = snapshot.counts
    result = compute_result(bench, variant, strategy, model, snapshot.outcomes, errors=c.errors,
                            harness_errors=c.harness_errors, too_long=c.too_long, reasoning_cut_off=c.reasoning_cut_off,
                            replies_cut_off=c.replies_cut_off, replies_unclosed=c.replies_unclosed, interval=False,
                            cell=cell)
    if result.headline.value is None:
        return result
    headline = with_interval(result.headline, bench, variant, snapshot.outcomes, resamples=resamples, seed=seed)
    return result.model_copy(update={"headline": headline})


def live_entries(snapshots: Sequence[Snapshot], benches: BenchmarkCache, options: Callable[[EntryKey], dict[str, str]],
                 *, resamples: int) -> list[dict[str, Any]]:
    """Every entry of ``snapshots`` computed; ``options(key)``: what the entry's benchmark was built with."""
    out = []
    for snap in snapshots:
        bench = benches.get(snap.key[0], options(snap.key))
        if bench is None:
            out.append(counts_json(snap.key, snap.counts, note=benches.notes.get(snap.key[0], "could not be loaded")))
            continue
        try:
            out.append(entry_json(compute(snap, bench, resamples=resamples), live=True))
        except Exception as err:  # a benchmark's aggregate that fails on a partial run must not stop the view
            out.append(counts_json(snap.key, snap.counts, note=f"not computed ({type(err).__name__}: {err})"))
    return out
