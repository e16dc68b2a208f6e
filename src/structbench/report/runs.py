"""Run directories as the report sees them: metrics, sample records, and the benchmarks that scored them."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from structbench.benchmark import Benchmark
from structbench.errors import UsageError
from structbench.results import MetricsFile, ResultEntry
from structbench.runner.records import SampleRecord
from structbench.runner.store import MANIFEST, METRICS, SAMPLES, current_records, read_records
from structbench.runner.sweep import cell_options

EntryKey = tuple[str, str, str, str, str]
"""(benchmark, variant, strategy, model, sweep cell)."""


@dataclass
class RunDir:
    """One run directory, read-only."""

    path: Path
    manifest: dict[str, Any]
    metrics: MetricsFile
    records: list[SampleRecord]
    """The current record of each sample (``runner.store.current_records``: a sample tried again has its last
    line), so a failed attempt is neither a row of the report nor a second sample for ``compare``."""

    @property
    def options(self) -> dict[str, str]:
        """The run's ``--option`` pairs, as recorded in the manifest."""
        return dict(self.manifest.get("config", {}).get("options", {}))

    @property
    def sweeps(self) -> dict[str, list[str]]:
        """The run's ``--sweep`` keys and values, in the sweep's order, as recorded in the manifest."""
        return dict(self.manifest.get("config", {}).get("sweeps", {}))

    def cell_options(self, benchmark: str, cell: str) -> dict[str, str]:
        """The run's options with those of one sweep cell (``BENCH.KEY`` pairs, which win): what the cell's
        benchmark was built with."""
        return {**self.options, **{f"{benchmark}.{k}": v for k, v in cell_options(cell).items()}}

    def records_by_entry(self) -> dict[EntryKey, list[SampleRecord]]:
        """Records per entry, sorted by sample id: ``samples.jsonl`` is in completion order, which
        varies from run to run, and the bootstrap must not."""
        grouped: dict[EntryKey, list[SampleRecord]] = defaultdict(list)
        for r in sorted(self.records, key=lambda r: r.id):
            grouped[(r.benchmark, r.variant, r.strategy, r.model, r.cell)].append(r)
        return grouped


def load_runs(path: Path) -> list[RunDir]:
    """A run directory, or Inspect logs (a ``.eval`` file, or a directory of them: one run per model)."""
    from structbench.report.inspect_runs import holds_logs, load_inspect_runs

    return load_inspect_runs(path) if holds_logs(path) else [load_run(path)]


def load_run(path: Path) -> RunDir:
    """Read ``metrics.json`` (required), ``manifest.json`` and ``samples.jsonl`` (optional) of a run, or the
    Inspect logs of one model (``load_runs``)."""
    from structbench.report.inspect_runs import holds_logs, load_inspect_runs

    if holds_logs(path):
        runs = load_inspect_runs(path)
        if len(runs) > 1:
            models = ", ".join(r.metrics.results[0].model for r in runs)
            raise UsageError(f"{path}: logs of {len(runs)} models ({models}); give each model's logs on their own")
        return runs[0]
    metrics_path = path / METRICS
    if not path.is_dir():
        raise UsageError(f"{path}: no such run directory")
    if not metrics_path.is_file():
        if (path / MANIFEST).is_file():
            raise UsageError(f"{path}: no {METRICS} yet (the run did not finish; resume it with --resume {path})")
        raise UsageError(f"{path}: not a structbench run directory (no {METRICS} or {MANIFEST})")
    try:
        metrics = MetricsFile.model_validate_json(metrics_path.read_text())
    except ValueError as err:
        raise UsageError(f"{metrics_path}: not a metrics file: {err}") from None
    manifest_path = path / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    return RunDir(path, manifest, metrics, list(current_records(read_records(path / SAMPLES)).values()))


@dataclass
class BenchmarkCache:
    """Benchmark instances for re-aggregation, built with each run's options; None when not importable."""

    notes: dict[str, str] = field(default_factory=dict)
    """Benchmark name -> why it could not be loaded (its entries then get no interval)."""
    _cache: dict[tuple[str, tuple[tuple[str, str], ...]], Benchmark | None] = field(default_factory=dict)

    def get(self, name: str, options: dict[str, str]) -> Benchmark | None:
        key = (name, tuple(sorted(options.items())))
        if key not in self._cache:
            self._cache[key] = self._load(name, options)
        return self._cache[key]

    def _load(self, name: str, options: dict[str, str]) -> Benchmark | None:
        from structbench.benchmarks import BENCHMARKS
        from structbench.runner.config import options_for

        try:
            cls = BENCHMARKS.get(name)
            return cls(options_for(cls, options))
        except Exception as err:  # any import or option failure: the report goes on without intervals
            self.notes[name] = f"could not be loaded ({type(err).__name__}: {err})"
            return None


def entry_records(entry: ResultEntry, grouped: dict[EntryKey, list[SampleRecord]]) -> list[SampleRecord]:
    """The records behind one result entry."""
    return grouped.get((entry.benchmark, entry.variant, entry.strategy, entry.model, entry.cell), [])
