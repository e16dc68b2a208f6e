"""``metrics.json`` computed from a run's records by the analysis side alone (``record_metrics``): the same numbers
the run wrote, from the record columns, without a ``Run``."""

from __future__ import annotations

import json
from pathlib import Path

import structbench
from structbench.analysis.record_metrics import CurrentEntry, metrics_of, run_entries, run_metrics, usage_totals
from structbench.runfiles.rundir import read_records, read_run_files
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


def test_a_finished_run_directory_alone_gives_back_its_metrics_json(tmp_path: Path) -> None:
    """Through the one reader of a run directory (``rundir``), with a retried sample, two epochs of which the
    configuration kept one, a sweep and the calls' usage: the same ``metrics.json``."""
    run_dir = tmp_path / "run"
    structbench.evaluate("oracle", ToyBench, strategy="direct,vote", limit=6, out=run_dir, progress=False,
                         cache=tmp_path / "cache.sqlite", sweep={"toy.serialization": ["markdown", "csv"]})
    lines = (run_dir / "samples.jsonl").read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])
    retried = json.dumps({**first, "epoch": 1, "score": 0.0}).encode() + b"\n"  # beyond the run's one epoch
    failed = json.dumps({**first, "score": 0.0, "error": "timeout", "error_kind": "model"}).encode() + b"\n"
    (run_dir / "samples.jsonl").write_bytes(failed + b"".join(lines) + retried)  # the failure tried again: its last
    written = json.loads((run_dir / "metrics.json").read_text())

    again = run_metrics(read_run_files(run_dir))

    assert again.model_dump(mode="json") == {**written, "results": again.model_dump(mode="json")["results"]}
    by_key = {(r["benchmark"], r["variant"], r["strategy"], r["cell"]): r for r in written["results"]}
    assert {(r.benchmark, r.variant, r.strategy, r.cell): r.model_dump(mode="json") for r in again.results} == by_key
    assert len(by_key) == 4 and again.usage.usage.calls >= 24 and len(again.robustness) == 2
    entries = run_entries(read_run_files(run_dir))
    assert [len(e.rows) for e in entries] == [6] * 4 and entries[0].axes == ("serialization",)


def test_an_entry_without_records_is_an_empty_result() -> None:
    import numpy as np

    metrics = metrics_of([CurrentEntry(ToyBench(), "small", "direct", None, np.zeros(0, dtype=np.int64))], "oracle")
    assert metrics.results[0].n == 0 and metrics.results[0].headline.value is None
