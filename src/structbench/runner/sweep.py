"""Sweeps: one run over a grid of benchmark option values (``--sweep KEY=V1,V2,...``, repeatable).

Each benchmark of the run is evaluated once per *cell*: one value of every swept key it accepts (the grid is the
product of the keys' values, the first key varying slowest). A cell is named by its options, ``key=value`` pairs
in key order joined by ``;`` (``perturbation=transpose;serialization=csv``): the records (``SampleRecord.cell``),
the result entries (``ResultEntry.cell``) and the run's resumption all key on it, so a resumed sweep repeats no
call and ``report``/``compare`` tell the cells apart. A run without a sweep has one cell, ``""``, and its records
and results read as before. A key is given as ``--option`` gives it: ``KEY`` for every selected benchmark that has
it, ``BENCH.KEY`` for one. The cells' names are the run files'
(``structbench.runfiles.cells``); the reference cell a sweep's
cells are compared with is found by ``structbench.analysis.robustness`` (imported at the end of a run: it brings the
statistics, which a run's start-up needs none of).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from structbench.contract.benchmark import Benchmark
from structbench.core.errors import UsageError
from structbench.core.registry import did_you_mean
from structbench.core.words import swept, word
from structbench.runfiles.cells import VALUES, Cell, cell_id, cell_options, cell_text, check_sweep_values, parse_sweeps
from structbench.runfiles.cells import swept_keys as swept_keys  # where the report reads it too

__all__ = ["VALUES", "Cell", "cell_id", "cell_options", "cell_text", "cells_for", "check_sweep_values", "check_sweeps",
           "parse_sweeps", "preset_sweeps", "swept_keys"]


def cells_for(bench_cls: type[Benchmark], sweeps: Mapping[str, Sequence[str]]) -> list[Cell]:
    """Every cell of ``bench_cls``'s grid, the first key varying slowest; one empty cell when no swept key
    reaches it."""
    keys = swept_keys(bench_cls, sweeps)
    names = [k for k, _ in keys]
    return [Cell(tuple(zip(names, combo, strict=True))) for combo in itertools.product(*(v for _, v in keys))]


def check_sweeps(bench_classes: Sequence[type[Benchmark]], options: Mapping[str, str],
                 sweeps: Mapping[str, Sequence[str]]) -> None:
    """Refuse a sweep no selected benchmark accepts, a benchmark's key swept twice (``KEY`` and ``BENCH.KEY``), and a
    key also set by ``--option`` (a cell would not say which value it ran)."""
    check_sweep_values(sweeps)
    by_name = {b.name: b for b in bench_classes}
    for key in sweeps:
        prefix, dot, rest = key.partition(".")
        if dot and prefix not in by_name:
            raise UsageError(f"{swept(key)}: benchmark {prefix!r} is not part of this run")
        targets = [by_name[prefix]] if dot else list(by_name.values())
        fields = sorted({f for b in targets for f in b.Options.model_fields})
        bare = rest if dot else key
        if bare not in fields:
            what = f"{prefix} has no such option" if dot else "no selected benchmark has this option"
            raise UsageError(f"{swept(key)}: {what}.{did_you_mean(bare, fields)} "
                             f"Options: {', '.join(fields) or 'none'}")
    for cls in dict.fromkeys(bench_classes):
        keys = [k for k, _ in swept_keys(cls, sweeps)]
        twice = next((k for k in keys if keys.count(k) > 1), None)
        if twice is not None:
            raise UsageError(f"{swept(twice)} and {swept(f'{cls.name}.{twice}')} both sweep {cls.name}'s {twice}")
        set_too = [k for k in keys if k in _option_keys(cls, options)]
        if set_too:
            raise UsageError(f"{swept(set_too[0])}: {cls.name}'s {set_too[0]} is also set by {word('options')}; "
                             "drop one")


def _option_keys(bench_cls: type[Benchmark], options: Mapping[str, str]) -> set[str]:
    fields = bench_cls.Options.model_fields
    out = set()
    for key in options:
        prefix, dot, rest = key.partition(".")
        if (dot and prefix == bench_cls.name) or (not dot and key in fields):
            out.add(rest if dot else key)
    return out


def preset_sweeps(name: str, given: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """``--preset NAME``'s sweeps with the ``--sweep`` keys it leaves open; one that changes a key the preset
    sweeps is a usage error (the preset's grid is what its documented cost counts)."""
    from structbench.benchmarks.presets import find_preset

    out = {k: list(v) for k, v in find_preset(name).sweeps.items()}
    for key, values in given.items():
        bare = key.partition(".")[2] or key
        fixed = out.get(key, out.get(bare))
        if fixed is not None and fixed != values:
            raise UsageError(f"{swept(key)}: preset {name} sweeps {bare} over {VALUES.join(fixed)}")
        out[key] = list(values)
    return out
