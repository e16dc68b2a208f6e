"""``metrics.json`` computed from a run's records by the analysis side alone (``record_metrics``): the same numbers
the run wrote, from the record columns, without a ``Run``."""

from __future__ import annotations

import json
from pathlib import Path

import structbench
from structbench.analysis.record_metrics import CurrentEntry, metrics_of, usage_totals
from structbench.runfiles.rundir import read_records
from structbench.runner.kept import KeptRecords
from toybench import ToyBench


def test_the_metrics_of_a_runs_records_are_those_it_wrote(tmp_path: Path) -> None:
    done = structbench.evaluate("oracle", ToyBench, strategy="direct,vote", limit=8, out=tmp_path / "run",
                                progress=False, cache=tmp_path / "cache.sqlite")
    kept = KeptRecords()
    for record in read_records(tmp_path / "run" / "samples.jsonl"):
        kept.add(record)
    entries = [CurrentEntry(ToyBench(), r.variant, r.strategy, kept.entries[key], kept.entries[key].latest())
               for r in done.metrics.results
               for key in [(r.benchmark, r.variant, r.strategy, r.model, r.cell)]]
    again = metrics_of(entries, done.metrics.results[0].model)
    written = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert [r.model_dump(mode="json") for r in again.results] == written["results"]
    assert again.results[0].n == 8 and again.results[0].headline.value == 1.0
    assert usage_totals(entries, None) == again.usage and again.robustness == []


def test_an_entry_without_records_is_an_empty_result() -> None:
    import numpy as np

    metrics = metrics_of([CurrentEntry(ToyBench(), "small", "direct", None, np.zeros(0, dtype=np.int64))], "oracle")
    assert metrics.results[0].n == 0 and metrics.results[0].headline.value is None
