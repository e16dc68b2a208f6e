"""Run directories as the report sees them: metrics, sample records, and the benchmarks that scored them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from structbench.benchmark import Benchmark
from structbench.errors import UsageError
from structbench.manifest import read_manifest
from structbench.records import SampleRecord
from structbench.report.rundir import EntryKey, RunDir
from structbench.results import ResultEntry, read_metrics
from structbench.runformat import MANIFEST, METRICS, SAMPLES
from structbench.runner.store import current_records, read_records


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
    metrics = read_metrics(metrics_path)
    return RunDir(path, read_manifest(path), metrics, list(current_records(read_records(path / SAMPLES)).values()))


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
