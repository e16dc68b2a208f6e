"""Run directories as the report sees them: metrics, sample records, and the benchmarks that scored them."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from structbench.benchmark import Benchmark
from structbench.errors import UsageError
from structbench.manifest import Manifest, read_manifest
from structbench.records import SampleRecord
from structbench.results import MetricsFile, ResultEntry, read_metrics
from structbench.runconfig import RunConfig
from structbench.runformat import MANIFEST, METRICS, SAMPLES
from structbench.runner.store import current_records, read_records

EntryKey = tuple[str, str, str, str]
"""(benchmark, variant, strategy, model)."""


@dataclass
class RunDir:
    """One run directory, read-only."""

    path: Path
    manifest: Manifest | None
    """None for a directory without one (``score --out`` results placed in a folder)."""
    metrics: MetricsFile
    records: list[SampleRecord]
    """The current record of each sample (``runner.store.current_records``: a sample tried again has its last
    line), so a failed attempt is neither a row of the report nor a second sample for ``compare``."""

    @property
    def config(self) -> RunConfig | None:
        """The run's configuration, as recorded in the manifest."""
        return self.manifest.config if self.manifest is not None else None

    @property
    def options(self) -> dict[str, str]:
        """The run's ``--option`` pairs, as recorded in the manifest."""
        return dict(self.config.options) if self.config is not None else {}

    def records_by_entry(self) -> dict[EntryKey, list[SampleRecord]]:
        """Records per entry, sorted by sample id: ``samples.jsonl`` is in completion order, which
        varies from run to run, and the bootstrap must not."""
        grouped: dict[EntryKey, list[SampleRecord]] = defaultdict(list)
        for r in sorted(self.records, key=lambda r: r.id):
            grouped[(r.benchmark, r.variant, r.strategy, r.model)].append(r)
        return grouped


def load_run(path: Path) -> RunDir:
    """Read ``metrics.json`` (required), ``manifest.json`` and ``samples.jsonl`` (optional) of a run."""
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
    return grouped.get((entry.benchmark, entry.variant, entry.strategy, entry.model), [])
