"""Run directories as the report sees them: metrics, sample records, and the benchmarks that scored them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from structbench.contract.benchmark import Benchmark
from structbench.core.errors import UsageError
from structbench.runfiles.cells import options_for
from structbench.runfiles.rundir import RunFiles, read_run_files


def load_runs(path: Path) -> list[RunFiles]:
    """A run directory, or Inspect logs (a ``.eval`` file, or a directory of them: one run per model)."""
    from structbench.report.inspect_runs import holds_logs, load_inspect_runs

    return load_inspect_runs(path) if holds_logs(path) else [load_run(path)]


def load_run(path: Path) -> RunFiles:
    """Read ``metrics.json`` (required), ``manifest.json`` and ``samples.jsonl`` (optional) of a run, or the
    Inspect logs of one model (``load_runs``)."""
    from structbench.report.inspect_runs import holds_logs, load_inspect_runs

    if holds_logs(path):
        runs = load_inspect_runs(path)
        if len(runs) > 1:
            models = ", ".join(r.metrics.results[0].model for r in runs)
            raise UsageError(f"{path}: logs of {len(runs)} models ({models}); give each model's logs on their own")
        return runs[0]
    return read_run_files(path)


def isolation_of(run: RunFiles) -> str | None:
    """The weakest isolation the run's model-written code got (the manifest's ``sandbox.isolation``); None when it
    ran no such code, or its files do not say (no manifest, or one written before the field)."""
    sandbox = run.manifest.sandbox if run.manifest is not None else None
    return sandbox.isolation if sandbox is not None else None


def isolation_how(level: str) -> str:
    """How code at ``level`` ran, as a report says it (``sandbox.levels.LEVELS``; a level this structbench does not
    know is named as it is)."""
    from structbench.sandbox.levels import LEVELS

    return LEVELS.get(level, f"with isolation {level!r}, which this structbench does not know")


def isolation_note(run: RunFiles) -> str | None:
    """A line saying that the run's model-written code ran with less isolation than Linux namespaces give (the
    manifest's ``sandbox.isolation``); None when it had them, or ran no such code."""
    level = isolation_of(run)
    if level is None or level == "namespaces":
        return None
    return f"{run.path}: model-written code ran {isolation_how(level)}."


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

        try:
            cls = BENCHMARKS.get(name)
            return cls(options_for(cls, options))
        except Exception as err:  # any import or option failure: the report goes on without intervals
            self.notes[name] = f"could not be loaded ({type(err).__name__}: {err})"
            return None
