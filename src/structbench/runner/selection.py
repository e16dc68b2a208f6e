"""What a run evaluates: each benchmark variant with its stream of samples and its strategies (``Selection``).

Every executor (one process, forked workers, Ray actors) holds the same selections, prepared from the run's
configuration by ``prepare``; jobs name their (selection, strategy, sample position) by index into them. The
samples themselves are read from the benchmark as a stream (``SampleStream``): the run's process reads each once,
in order, and hands it to whoever runs its jobs, so no process holds every sample, unless the benchmark's ``load``
builds them all at once (it returns a list: the stream then holds it, and a large one is warned about), or a run
forking workers reads a small stream whole before it forks them (``SampleStream.hold``: the workers then share its
samples, and jobs travel without them).
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from structbench.benchmarks import BENCHMARKS
from structbench.contract.benchmark import Benchmark, Strategy
from structbench.core.errors import DataError, UsageError
from structbench.core.registry import did_you_mean
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.config import check_limit, check_options_used, options_for, split_bench
from structbench.runner.sweep import Cell, cell_text, cells_for, check_sweeps, swept_keys

HELD_WARNING_BYTES = 512 * 2**20
"""Samples a benchmark builds all at once (a list) are warned about above about this much memory."""
PYTHON_PER_JSON_BYTE = 3
"""About what a loaded sample takes in memory per byte of its JSON (its objects, dictionaries and strings)."""
HOLD_FOR_WORKERS_BYTES = 16 * 2**20
"""A stream of known size whose samples take about this much memory or less is read whole before workers are forked
(``SampleStream.hold``)."""


class SampleStream:
    """One benchmark variant's samples as a run reads them: in order, one at a time, checked (unique ids) as they
    pass. The first pass continues the one ``open_samples`` opened (its first sample read, so that a benchmark's
    errors and empty selections surface before the run starts); each further pass loads them again.

    ``held`` says whether the benchmark built them all at once (``load`` returned a list, held here for the run);
    ``expected`` is how many there will be, where known before the end (the list's length, or what a streaming
    ``load`` announced with ``benchmark.Samples``); ``count`` how many the last complete pass read."""

    def __init__(self, label: str, reopen: Callable[[], Iterator[Sample]], *, held: Sequence[Sample] | None = None,
                 expected: int | None = None, whole: Callable[[], Iterable[Sample]] | None = None) -> None:
        self.label = label
        self._reopen = reopen
        self._whole = whole
        self.held = held
        self.expected = len(held) if held is not None else expected
        self.count: int | None = len(held) if held is not None else None
        self._opened: Iterator[Sample] | None = reopen() if held is None else None
        self.first: Sample | None = next(self._opened, None) if self._opened is not None else \
            (held[0] if held else None)
        self._seen: set[int] = set()

    def __iter__(self) -> Iterator[Sample]:
        if self.held is not None:
            self._seen = {hash(s.id) for s in self.held}
            yield from self.held
            return
        opened, self._opened = self._opened, None
        if opened is not None and self.first is not None:
            source: Iterator[Sample] = itertools.chain([self.first], opened)
        else:
            source = self._reopen()
        yield from self._checked(source)

    def _checked(self, source: Iterable[Sample]) -> Iterator[Sample]:
        """``source``'s samples, each id checked unique as it passes, counted at the end (a pass)."""
        seen: set[int] = set()
        self._seen, self.count = seen, None
        count = 0
        for sample in source:
            key = hash(sample.id)
            if key in seen:
                raise DataError(f"{self.label}: duplicate sample id {sample.id!r}")
            seen.add(key)
            count += 1
            yield sample
        self.count = count

    def hold(self, limit_bytes: int | None = None) -> bool:
        """Whether the stream holds its samples, reading the rest of them now (a pass, checked as any) if its size
        is known and they take about ``limit_bytes`` (``HOLD_FOR_WORKERS_BYTES``) or less, as estimated from the
        first sample. A run forking workers holds what it can before the fork: the workers then share the samples
        (copy-on-write), and the driver sends jobs as references instead of making and pickling each sample while
        the requests run."""
        if self.held is not None:
            return True
        limit_bytes = HOLD_FOR_WORKERS_BYTES if limit_bytes is None else limit_bytes
        if self.expected is None or self.first is None or \
                len(self.first.model_dump_json()) * PYTHON_PER_JSON_BYTE * self.expected > limit_bytes:
            return False
        if self._whole is not None:  # made at once (faster): the stream opened for the first sample is dropped
            self._opened = None
            held = list(self._checked(self._whole()))
            self.first = held[0] if held else None
        else:
            held = list(self)
        self.held, self._reopen = held, lambda: iter(held)
        return True

    def seen(self, sample_id: str) -> bool:
        """Whether the last pass read a sample of this id (the current samples: what metrics count)."""
        return hash(sample_id) in self._seen


@dataclass
class Selection:
    """One benchmark variant of a run (in one cell of a sweep), with its samples and the strategies to apply."""

    bench: Benchmark
    variant: str
    samples: SampleStream
    strategies: list[Strategy]
    cell: str = ""
    """The sweep's cell (``runner.sweep``: its options, ``key=value;...``); ``""`` in a run without a sweep."""
    axes: tuple[str, ...] = ()
    """The swept keys of the cell, in the sweep's order."""

    def __post_init__(self) -> None:
        if not isinstance(self.samples, SampleStream):  # a list of samples (tests build selections by hand)
            held = list(self.samples)
            self.samples = SampleStream(f"{self.bench.name}:{self.variant}", lambda: iter(held), held=held)

    def held_warning(self) -> str | None:
        """A warning when the benchmark built a large set of samples all at once (held for the whole run)."""
        held = self.samples.held
        if not held:
            return None
        step = max(1, len(held) // 20)
        probe = held[::step][:20]
        size = sum(len(s.model_dump_json()) for s in probe) / len(probe) * PYTHON_PER_JSON_BYTE * len(held)
        if size < HELD_WARNING_BYTES:
            return None
        return (f"warning: {self.bench.name}:{self.variant} builds its {len(held):,} samples all at once, and the run "
                f"holds them (about {size / 2**30:.1f} GB) until it ends; its documentation says why it cannot "
                "stream them. --limit or --sample runs fewer")



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
    """``open_samples``, all of them in a list (for what needs them together: an Inspect dataset, a test)."""
    return list(open_samples(bench, variant, data, seed=seed, limit=limit, sample=sample, ids=ids))


def open_samples(
    bench: Benchmark, variant: str, data: DataContext, *, seed: int, limit: int | None, sample: int | None = None,
    ids: Sequence[str] | None = None,
) -> SampleStream:
    """The variant's samples, as a stream: those named by ``ids`` (when given), then a random ``sample`` of them drawn
    with ``seed`` (in their order), then the first ``limit``; none at all is a ``UsageError`` that says why.

    A benchmark whose ``load`` yields is read lazily (``ids`` and ``sample`` read it through once first: to find
    the ids, to count what to draw from); one that returns a list is held."""
    check_limit(limit)
    label = f"{bench.name}:{variant}"
    narrowed = sample is not None or ids is not None  # the loader's limit is a hint: it may load only the first

    def load() -> Iterable[Sample]:
        return bench.load(variant, data, seed=seed, limit=None if narrowed else limit)

    loaded = load()
    if isinstance(loaded, Sequence):  # built all at once: select from the list, as it always was
        stream = _held(bench, label, list(loaded), seed=seed, limit=limit, sample=sample, ids=ids)
    else:
        stream = _streamed(bench, label, load, loaded, seed=seed, limit=limit, sample=sample, ids=ids)
    if stream.first is None:
        left_out = "; ".join(f"{e.count} {e.reason}" for e in bench.exclusions([]))
        raise UsageError(f"{label}: no samples to evaluate" + (f" (left out: {left_out})" if left_out else ""))
    return stream


def _held(bench: Benchmark, label: str, everything: list[Sample], *, seed: int, limit: int | None,
          sample: int | None, ids: Sequence[str] | None) -> SampleStream:
    samples = everything
    if ids is not None:
        wanted = set(ids)
        samples = [s for s in samples if s.id in wanted]
        if not samples:
            _no_such_ids(label, ids, [s.id for s in everything])
    if sample is not None and sample < len(samples):
        rng = random.Random(f"{seed}/{label}")  # a string seed: the same draw on every platform
        samples = [samples[i] for i in sorted(rng.sample(range(len(samples)), sample))]
    if limit is not None:
        samples = samples[:limit]
    found = [s.id for s in samples]
    if len(set(found)) != len(found):
        raise UsageError(f"{label}: duplicate sample ids")
    return SampleStream(label, lambda: iter(samples), held=samples)


def _streamed(bench: Benchmark, label: str, load: Callable[[], Iterable[Sample]], loaded: Iterable[Sample], *,
              seed: int, limit: int | None, sample: int | None, ids: Sequence[str] | None) -> SampleStream:
    expected = getattr(loaded, "expected", None)
    if ids is not None:  # a few named samples: found in one pass, and held
        wanted, found, every = set(ids), [], []
        for s in loaded:
            every.append(s.id)
            if s.id in wanted:
                found.append(s)
        if not found:
            _no_such_ids(label, ids, every)
        return _held(bench, label, found, seed=seed, limit=limit, sample=sample, ids=None)
    picks: set[int] | None = None
    if sample is not None:  # count them (holding none), then draw the positions as a list would be drawn
        total = sum(1 for _ in loaded)
        loaded = load()
        if sample < total:
            rng = random.Random(f"{seed}/{label}")  # a string seed: the same draw on every platform
            picks = set(rng.sample(range(total), sample))
        expected = min(sample, total)

    def select(source: Iterable[Sample]) -> Iterator[Sample]:
        chosen: Iterable[Sample] = source
        if picks is not None:
            chosen = (s for i, s in enumerate(source) if i in picks)
        return iter(itertools.islice(chosen, limit))

    first = [loaded]

    def reopen() -> Iterator[Sample]:
        source = first.pop() if first else load()
        return select(source)

    if limit is not None and expected is not None:
        expected = min(expected, limit)
    made: Callable[[], Iterable[Sample]] | None = getattr(loaded, "whole", None)
    whole = None if made is None or picks is not None else functools.partial(_first, made, limit)
    return SampleStream(label, reopen, expected=expected, whole=whole)


def _first(made: Callable[[], Iterable[Sample]], limit: int | None) -> Iterator[Sample]:
    """The first ``limit`` samples ``made`` makes (a loader's limit is a hint: it may make more)."""
    return itertools.islice(made(), limit)


def _no_such_ids(label: str, ids: Sequence[str], every: Sequence[str]) -> None:
    like = ", ".join(every[:3])
    raise UsageError(f"{label}: no sample has an id of --sample-id {','.join(ids[:5])}"
                     + (f" (its ids look like {like})" if like else "") + did_you_mean(ids[0], every))


def prepare(config: RunConfig, data: DataContext, model_context: int | None = None) -> list[Selection]:
    """Load every selected benchmark's samples (narrowed by ``sample_ids``, ``sample`` and ``limit``) and strategies,
    once per cell of the run's sweep; ``model_context`` (the model's context in tokens, where known) lets benchmarks
    leave out prompts that cannot fit it. Cells that differ only in a benchmark's ``loading.prompt_options`` share one
    load and one stream of samples."""
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
    shared: dict[tuple[Any, ...], tuple[Benchmark, SampleStream]] = {}
    for bench, variant, cell in loaded:
        bench.model_context = model_context
        key = (bench.name, variant, cell.load_key(type(bench).loading.prompt_options))
        if key in shared:  # the same samples prompted another way: one stream, read once for every such cell
            first, samples = shared[key]
            bench.take_load(first)
        else:
            samples = open_samples(bench, variant, data, seed=config.seed, limit=config.limit, sample=config.sample,
                                   ids=config.sample_ids)
            shared[key] = (bench, samples)
        names = strategies_for(bench.name, variant, config.strategies)
        selections.append(Selection(bench, variant, samples, pick_strategies(bench, names), cell.id,
                                    tuple(k for k, _ in cell.options)))
    if config.sample_ids is not None:  # few, and held: see open_samples
        found = {s.id for sel in selections for s in sel.samples.held or ()}
        missing = [i for i in config.sample_ids if i not in found]
        if missing:
            raise UsageError(f"--sample-id {','.join(missing[:5])}: no such sample in "
                             f"{', '.join(f'{s.bench.name}:{s.variant}' for s in selections)}"
                             f"{did_you_mean(missing[0], found)}")
    return selections


def sweep_plan(config: RunConfig) -> str | None:
    """What a sweep asks, in words, before its cells are set up (a large grid takes minutes before the first call):
    its cells per benchmark, and the samples they answer (each one model call or more); None without a sweep."""
    if not config.sweeps:
        return None
    parts, cells, jobs = [], 0, 0
    per = config.limit or config.sample or (len(config.sample_ids) if config.sample_ids is not None else None)
    for entry in dict.fromkeys(config.benches):
        name, variant = split_bench(entry)
        cls = BENCHMARKS.get(name)
        keys = swept_keys(cls, config.sweeps)
        grid = math.prod(len(values) for _, values in keys)
        names = [n for n in strategies_for(name, variant or cls.variants[0], config.strategies) if n]
        strategies = len(cls().strategies()) if names == ["all"] else max(1, len(set(names)))
        cells += grid
        jobs += grid * strategies * config.epochs * (per or 0)
        shape = " x ".join(f"{len(values):,} {key}" for key, values in keys) or "no swept key"
        parts.append(f"{entry}: {shape}, {strategies} {'strategy' if strategies == 1 else 'strategies'}")
    asked = (f"{jobs:,} samples to answer (at most {per:,} per cell and strategy, {config.epochs} epoch(s)), each at "
             "least one model call" if per else "every sample of each cell under each strategy, each at least one "
             "model call")
    return (f"note: the sweep is {cells:,} cells ({'; '.join(parts)}): {asked}; each cell is set up before the first "
            "call, which takes a while for a large grid")


def needs_model_context(config: RunConfig) -> bool:
    """Whether a selected benchmark leaves out prompts by the model's context (``Benchmark.loading.fits_context``)."""
    return any(BENCHMARKS.get(split_bench(e)[0]).loading.fits_context for e in config.benches)
