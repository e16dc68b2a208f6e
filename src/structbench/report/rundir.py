"""A run directory as the report reads it (its manifest, metrics and current records), whether it was written by
``structbench run`` or built from Inspect logs (``report.inspect_runs``)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from structbench.cells import cell_options
from structbench.manifest import Manifest
from structbench.records import SampleRecord
from structbench.results import MetricsFile
from structbench.runconfig import RunConfig

EntryKey = tuple[str, str, str, str, str]
"""(benchmark, variant, strategy, model, sweep cell)."""


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

    @property
    def sweeps(self) -> dict[str, list[str]]:
        """The run's ``--sweep`` keys and values, in the sweep's order, as recorded in the manifest."""
        return {k: list(v) for k, v in self.config.sweeps.items()} if self.config is not None else {}

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
