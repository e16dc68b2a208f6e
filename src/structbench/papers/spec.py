"""How a benchmark declares its papers' tables: the published data, the run configuration behind each
table (a preset), and how a run's sample records fill each column.

A benchmark returns ``PaperTable``s from ``Benchmark.paper_tables()``; the report and the CLI read
only these types, so the core never needs to know what a column of a particular paper means.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from structbench.papers.published import PublishedTable, load_published


@dataclass(frozen=True)
class Orders:
    """A column the paper averages over several runs that differ in one run option (StructFact's three
    option orders): each value's metric is computed on its own records, and the column is their mean."""

    option: str
    """The run option that varies (``option_map``)."""
    values: tuple[str, ...]
    """Its values the paper averages over (``("0", "1", "2")``)."""
    default: str
    """Its value in a run that does not set it."""
    id_suffix: str = ""
    """How a run that asks every question under each value names the samples: ``/map{value}`` appended to
    the question's id. The orders' samples are paired on the id without it (resampled together)."""

    def base_id(self, sample_id: str, value: str) -> str:
        """The question's id without the order's suffix."""
        return sample_id.removesuffix(self.id_suffix.format(value=value)) if self.id_suffix else sample_id


@dataclass(frozen=True)
class Measure:
    """A metric of one strategy over the sample records that match ``where``, re-aggregated with the
    benchmark's own ``aggregate`` (so a macro-F1 over a task is the macro-F1 of that task's samples)."""

    strategy: str
    metric: str
    """A key of the benchmark's ``aggregate`` result (a fraction)."""
    variant: str | None = None
    """The variant the column needs; None accepts any."""
    where: Mapping[str, str] = field(default_factory=dict)
    """Record fields that must match: ``task``, or a meta key (a list-valued meta key must contain the value)."""
    orders: Orders | None = None


@dataclass(frozen=True)
class Mean:
    """The mean of other columns of the same row (the paper's Overall and Avg. columns)."""

    columns: tuple[str, ...]


@dataclass(frozen=True)
class Change:
    """The relative change ``(other - base) / base`` of two columns of the same row (RFQA's Diff %)."""

    base: str
    other: str


Cell = Measure | Mean | Change


@dataclass(frozen=True)
class RunRow:
    """The row a run's model adds to the table; a table may add several per model (one per prompting
    method, as SciTab's ``GPT-4`` and ``GPT-4+CoT``)."""

    cells: Mapping[str, Cell]
    """Column key -> how the run fills it; columns not listed stay empty for this row."""
    label: str = "{model}"
    """The row's label; ``{model}`` is the run's model."""


@dataclass(frozen=True)
class Preset:
    """The run configuration behind one table: ``structbench run --model M --preset NAME``."""

    name: str
    description: str
    benches: tuple[str, ...]
    """``BENCH[:VARIANT]`` entries."""
    strategies: tuple[str, ...]
    """Strategy names for every entry, or ``BENCH[:VARIANT]/STRATEGY`` for one entry only."""
    options: Mapping[str, str] = field(default_factory=dict)
    """``--option`` pairs (decoding, option orders, testbeds, budgets ...)."""
    differences: str = ""
    """What the preset cannot reproduce of the paper's setting, in a sentence."""


@dataclass(frozen=True)
class PaperTable:
    """One paper table a benchmark reproduces: its published numbers, preset and column mapping."""

    benchmark: str
    path: Path
    """The published-table JSON file (``PublishedTable``)."""
    preset: Preset
    rows: tuple[RunRow, ...]
    plot: tuple[str, ...] = ()
    """Column keys drawn in the figure that places the runs among the published models."""
    requires: Mapping[str, str] = field(default_factory=dict)
    """Run options the table's numbers depend on (StructFact's temperature): entries of runs with other
    values do not fill the table (a temperature-0 run goes to Table 7, not Table 1)."""
    unmapped: Mapping[str, str] = field(default_factory=dict)
    """Columns no run can fill -> why (human judges ...)."""
    selection: tuple[str, ...] = ()
    """Preset options that only choose which samples are built (SKA-Bench's testbed, budgets): a run
    with other values still fills the columns it covers, without a note."""

    @property
    def name(self) -> str:
        return self.preset.name

    @property
    def published(self) -> PublishedTable:
        return load_published(self.path)

    def problems(self) -> list[str]:
        """What is inconsistent between the mapping and the published data (empty when all is well)."""
        data = self.published
        keys = {c.key for c in data.columns}
        out = []
        if data.benchmark != self.benchmark:
            out.append(f"{self.path.name}: benchmark {data.benchmark!r}, expected {self.benchmark!r}")
        for i, row in enumerate(self.rows):
            for key, cell in row.cells.items():
                refs = [key]
                if isinstance(cell, Mean):
                    refs += list(cell.columns)
                elif isinstance(cell, Change):
                    refs += [cell.base, cell.other]
                out += [f"rows[{i}]: unknown column {r!r}" for r in refs if r not in keys]
                if isinstance(cell, Mean | Change):
                    inputs = cell.columns if isinstance(cell, Mean) else (cell.base, cell.other)
                    out += [f"rows[{i}].{key}: column {r!r} is not filled by this row" for r in inputs
                            if r not in row.cells]
        out += [f"plot: unknown column {k!r}" for k in self.plot if k not in keys]
        covered = {k for row in self.rows for k in row.cells}
        out += [f"column {c.key!r} is filled by no row" for c in data.columns if c.key not in covered and
                c.key not in self.unmapped]
        return out
