"""Every paper table and preset, collected from the registered benchmarks."""

from __future__ import annotations

from structbench.core.errors import UsageError
from structbench.core.plugins import warn_plugin
from structbench.core.registry import did_you_mean
from structbench.papers.spec import PaperTable, Preset


def paper_tables(benchmark: str | None = None) -> list[PaperTable]:
    """The paper tables of every registered benchmark (or of one), in registry order."""
    from structbench.benchmarks import BENCHMARKS

    classes = [BENCHMARKS.get(benchmark)] if benchmark is not None else [c for _, c in BENCHMARKS.usable(warn_plugin)]
    return [t for cls in classes for t in cls.paper.tables]


def preset_table(name: str) -> PaperTable:
    """The table whose preset is ``name``; an unknown name is a ``UsageError`` with suggestions."""
    tables = {t.name: t for t in paper_tables()}
    if name not in tables:
        hint = did_you_mean(name, tables)
        raise UsageError(f"unknown preset {name!r}.{hint} Presets: {', '.join(tables)} (structbench list shows them).")
    return tables[name]


def robustness_presets(benchmark: str | None = None) -> list[Preset]:
    """The robustness presets of every registered benchmark (or of one): ``Benchmark.paper.robustness``."""
    from structbench.benchmarks import BENCHMARKS

    classes = [BENCHMARKS.get(benchmark)] if benchmark is not None else [c for _, c in BENCHMARKS.usable(warn_plugin)]
    return [p for cls in classes for p in cls.paper.robustness]


def find_preset(name: str) -> Preset:
    """The preset called ``name``: a paper table's, or a robustness grid's; an unknown name is a ``UsageError``."""
    presets = {t.name: t.preset for t in paper_tables()} | {p.name: p for p in robustness_presets()}
    if name not in presets:
        hint = did_you_mean(name, presets)
        raise UsageError(f"unknown preset {name!r}.{hint} Presets: {', '.join(presets)} (structbench list shows "
                         "them).")
    return presets[name]
