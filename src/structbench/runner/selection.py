"""What a run evaluates, loaded: each benchmark variant with its samples and strategies (``Selection``).

Every executor (one process, forked workers, Ray actors) holds the same selections, prepared from the run's
configuration by ``prepare``; jobs name their (selection, strategy, sample) by index into them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from structbench.benchmark import Benchmark, Strategy
from structbench.benchmarks import BENCHMARKS
from structbench.data.sample import Sample
from structbench.datasets import DataContext
from structbench.errors import UsageError
from structbench.registry import did_you_mean
from structbench.runconfig import RunConfig
from structbench.runner.config import check_limit, check_options_used, options_for, split_bench
from structbench.runner.sweep import Cell, cell_text, cells_for, check_sweeps


@dataclass
class Selection:
    """One benchmark variant of a run (in one cell of a sweep), with its samples and the strategies to apply."""

    bench: Benchmark
    variant: str
    samples: list[Sample]
    strategies: list[Strategy]
    cell: str = ""
    """The sweep's cell (``runner.sweep``: its options, ``key=value;...``); ``""`` in a run without a sweep."""
    axes: tuple[str, ...] = ()
    """The swept keys of the cell, in the sweep's order."""


def load_benchmark(entry: str, options: dict[str, str]) -> tuple[Benchmark, str]:
    """Instantiate ``BENCH[:VARIANT]`` with the options meant for it."""
    name, variant = split_bench(entry)
    cls = BENCHMARKS.get(name)
    bench = cls(options_for(cls, options))
    return bench, bench.check_variant(variant)


@dataclass(frozen=True)
class StrategyName:
    """A ``--strategy`` value: a plain ``STRATEGY`` for every benchmark, or ``BENCH[:VARIANT]/STRATEGY`` for one
    benchmark (and variant)."""

    strategy: str
    bench: str | None = None
    variant: str = ""

    @classmethod
    def parse(cls, text: str) -> StrategyName:
        target, slash, strategy = text.rpartition("/")
        if not slash:
            return cls(text)
        bench, _, variant = target.partition(":")
        return cls(strategy, bench, variant)

    def applies(self, bench: str, variant: str) -> bool:
        return self.bench is None or (self.bench == bench and self.variant in ("", variant))


def strategies_for(bench: str, variant: str, names: list[str]) -> list[str]:
    """The strategy names that apply to one ``BENCH:VARIANT``."""
    parsed = (StrategyName.parse(name) for name in names)
    return [n.strategy for n in parsed if n.applies(bench, variant)]


def check_qualified(names: list[str], entries: list[tuple[str, str]]) -> None:
    """Refuse a ``BENCH[:VARIANT]/STRATEGY`` that names no benchmark of the run (a typo must not pass)."""
    for name in names:
        parsed = StrategyName.parse(name)
        if parsed.bench is not None and not any(parsed.applies(b, v) for b, v in entries):
            run = ", ".join(f"{b}:{v}" for b, v in entries)
            raise UsageError(f"--strategy {name}: {name.rpartition('/')[0]} is not part of this run ({run})")


def pick_strategies(bench: Benchmark, names: list[str]) -> list[Strategy]:
    """``[]`` -> the default; ``["all"]`` -> every strategy; else the named ones (each must exist)."""
    names = list(dict.fromkeys(n for n in names if n))  # drop repeats and empty names
    if not names:
        return [bench.strategy(None)]
    if names == ["all"]:
        return list(bench.strategies().values())
    return [bench.strategy(n) for n in names]


def load_samples(
    bench: Benchmark, variant: str, data: DataContext, *, seed: int, limit: int | None, sample: int | None = None,
    ids: Sequence[str] | None = None,
) -> list[Sample]:
    """The variant's samples: those named by ``ids`` (when given), then a random ``sample`` of them drawn with
    ``seed`` (in their order), then the first ``limit``; none at all is a ``UsageError`` that says why."""
    check_limit(limit)
    narrowed = sample is not None or ids is not None  # the loader's limit is a hint: it may load only the first
    everything = bench.load(variant, data, seed=seed, limit=None if narrowed else limit)
    samples = everything
    if ids is not None:
        wanted = set(ids)
        samples = [s for s in samples if s.id in wanted]
        if not samples:
            like = ", ".join(s.id for s in everything[:3])
            raise UsageError(f"{bench.name}:{variant}: no sample has an id of --sample-id {','.join(ids[:5])}"
                             + (f" (its ids look like {like})" if like else "")
                             + did_you_mean(ids[0], [s.id for s in everything]))
    if sample is not None and sample < len(samples):
        rng = random.Random(f"{seed}/{bench.name}:{variant}")  # a string seed: the same draw on every platform
        samples = [samples[i] for i in sorted(rng.sample(range(len(samples)), sample))]
    if limit is not None:
        samples = samples[:limit]
    if not samples:
        left_out = "; ".join(f"{e.count} {e.reason}" for e in bench.exclusions([]))
        raise UsageError(
            f"{bench.name}:{variant}: no samples to evaluate" + (f" (left out: {left_out})" if left_out else "")
        )
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        raise UsageError(f"{bench.name}:{variant}: duplicate sample ids")
    return samples


def prepare(config: RunConfig, data: DataContext, model_context: int | None = None) -> list[Selection]:
    """Load every selected benchmark's samples (narrowed by ``sample_ids``, ``sample`` and ``limit``) and strategies,
    once per cell of the run's sweep; ``model_context`` (the model's context in tokens, where known) lets benchmarks
    leave out prompts that cannot fit it. Cells that differ only in a benchmark's ``prompt_options`` share one load
    and one list of samples."""
    if not config.benches:
        raise UsageError("no benchmark to evaluate: the run's configuration names none")
    classes = [BENCHMARKS.get(split_bench(e)[0]) for e in config.benches]
    check_options_used(classes, config.options)
    check_sweeps(classes, config.options, config.sweeps)
    loaded: list[tuple[Benchmark, str, Cell]] = []
    for entry in dict.fromkeys(config.benches):  # a repeated BENCH[:VARIANT] is evaluated once
        cls = BENCHMARKS.get(split_bench(entry)[0])
        for cell in cells_for(cls, config.sweeps):
            try:
                bench, variant = load_benchmark(entry, {**config.options, **cell.qualified(cls.name)})
            except UsageError as err:
                raise UsageError(f"{err} (in the sweep's cell {cell_text(cell.id)})" if cell.id else str(err)) from None
            loaded.append((bench, variant, cell))
    check_qualified(config.strategies, [(bench.name, variant) for bench, variant, _ in loaded])
    selections = []
    shared: dict[tuple[Any, ...], tuple[Benchmark, list[Sample]]] = {}
    for bench, variant, cell in loaded:
        bench.model_context = model_context
        key = (bench.name, variant, cell.load_key(type(bench).prompt_options))
        if key in shared:
            first, samples = shared[key]
            bench.take_load(first)
        else:
            samples = load_samples(bench, variant, data, seed=config.seed, limit=config.limit, sample=config.sample,
                                   ids=config.sample_ids)
            shared[key] = (bench, samples)
        names = strategies_for(bench.name, variant, config.strategies)
        selections.append(Selection(bench, variant, samples, pick_strategies(bench, names), cell.id,
                                    tuple(k for k, _ in cell.options)))
    if config.sample_ids is not None:
        found = {s.id for sel in selections for s in sel.samples}
        missing = [i for i in config.sample_ids if i not in found]
        if missing:
            raise UsageError(f"--sample-id {','.join(missing[:5])}: no such sample in "
                             f"{', '.join(f'{s.bench.name}:{s.variant}' for s in selections)}"
                             f"{did_you_mean(missing[0], found)}")
    return selections


def needs_model_context(config: RunConfig) -> bool:
    """Whether a selected benchmark leaves out prompts by the model's context (``Benchmark.uses_model_context``)."""
    return any(BENCHMARKS.get(split_bench(e)[0]).uses_model_context for e in config.benches)
