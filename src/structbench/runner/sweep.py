"""Sweeps: one run over a grid of benchmark option values (``--sweep KEY=V1,V2,...``, repeatable).

Each benchmark of the run is evaluated once per *cell*: one value of every swept key it accepts (the grid is the
product of the keys' values, the first key varying slowest). A cell is named by its options, ``key=value`` pairs
in key order joined by ``;`` (``perturbation=transpose;serialization=csv``): the records (``SampleRecord.cell``),
the result entries (``ResultEntry.cell``) and the run's resumption all key on it, so a resumed sweep repeats no
call and ``report``/``compare`` tell the cells apart. A run without a sweep has one cell, ``""``, and its records
and results read as before. A key is given as ``--option`` gives it: ``KEY`` for every selected benchmark that has
it, ``BENCH.KEY`` for one.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from structbench.benchmark import Benchmark
from structbench.errors import UsageError
from structbench.registry import did_you_mean

PAIRS = ";"
"""Joins a cell's ``key=value`` pairs."""
VALUES = ","
"""Separates a ``--sweep`` flag's values."""


@dataclass(frozen=True)
class Cell:
    """One point of a benchmark's grid: a value for each swept key it accepts, in the sweep's order."""

    options: tuple[tuple[str, str], ...] = ()
    """(bare key, value) pairs, in the order the sweep gives the keys."""

    @property
    def id(self) -> str:
        """``key=value`` pairs in key order, ``;``-joined; ``""`` for a run without a sweep."""
        return cell_id(dict(self.options))

    def qualified(self, bench: str) -> dict[str, str]:
        """The cell's options as ``--option`` pairs for one benchmark (``BENCH.KEY``)."""
        return {f"{bench}.{k}": v for k, v in self.options}

    def load_key(self, prompt_options: Iterable[str]) -> tuple[tuple[str, str], ...]:
        """The options that may change which samples load (all but the benchmark's ``prompt_options``): cells that
        agree on them share one load."""
        shared = set(prompt_options)
        return tuple(sorted((k, v) for k, v in self.options if k not in shared))


def cell_id(options: Mapping[str, str]) -> str:
    """The name of the cell with these options (keys sorted, so the order a sweep gives them in does not matter)."""
    return PAIRS.join(f"{k}={v}" for k, v in sorted(options.items()))


def cell_options(cell: str) -> dict[str, str]:
    """A cell's options from its name (``{}`` for ``""``)."""
    out: dict[str, str] = {}
    for pair in cell.split(PAIRS) if cell else []:
        key, _, value = pair.partition("=")
        out[key] = value
    return out


def cell_text(cell: str, order: Sequence[str] = ()) -> str:
    """A cell as readers see it: ``serialization=csv, perturbation=transpose``, keys in ``order`` first (a sweep's
    order), then the others in key order."""
    options = cell_options(cell)
    keys = [k for k in order if k in options] + [k for k in options if k not in order]
    return ", ".join(f"{k}={options[k]}" for k in keys)


def check_sweep_values(sweeps: Mapping[str, Sequence[str]]) -> None:
    """Keys and values a cell can be named by: no empty key or value list, no ``;`` or ``=`` in a key, no ``;`` in a
    value, no value twice."""
    for key, values in sweeps.items():
        if not key or PAIRS in key or "=" in key or VALUES in key:
            raise UsageError(f"--sweep {key!r}: a key is an option name (KEY or BENCH.KEY)")
        if not values:
            raise UsageError(f"--sweep {key}: give at least one value (KEY=V1,V2,...)")
        bad = [v for v in values if PAIRS in v]
        if bad:
            raise UsageError(f"--sweep {key}: a value may not contain {PAIRS!r} ({bad[0]!r})")
        if len(set(values)) != len(values):
            twice = next(v for v in values if values.count(v) > 1)
            raise UsageError(f"--sweep {key}: value {twice!r} is given twice")


def parse_sweeps(pairs: Sequence[str]) -> dict[str, list[str]]:
    """``["serialization=csv,json", "perturbation=none,transpose"]`` -> key -> values, in the order given; a key
    given twice, a pair without ``=`` or without values is a usage error."""
    sweeps: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, values = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--sweep {pair!r}: expected KEY=V1,V2,... (or BENCH.KEY=V1,V2,...)")
        if key in sweeps:
            raise UsageError(f"--sweep {key}: given twice; put every value in one --sweep {key}=V1,V2,...")
        sweeps[key] = [v.strip() for v in values.split(VALUES) if v.strip()]
    check_sweep_values(sweeps)
    return sweeps


def swept_keys(bench_cls: type[Benchmark], sweeps: Mapping[str, Sequence[str]]) -> list[tuple[str, list[str]]]:
    """The swept keys ``bench_cls`` accepts (its ``BENCH.KEY`` entries and the bare keys it declares) with their
    values, in the sweep's order."""
    fields = bench_cls.Options.model_fields
    out: list[tuple[str, list[str]]] = []
    for key, values in sweeps.items():
        prefix, dot, rest = key.partition(".")
        if dot and prefix == bench_cls.name:
            out.append((rest, list(values)))
        elif not dot and key in fields:
            out.append((key, list(values)))
    return out


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
            raise UsageError(f"--sweep {key}: benchmark {prefix!r} is not part of this run")
        targets = [by_name[prefix]] if dot else list(by_name.values())
        fields = sorted({f for b in targets for f in b.Options.model_fields})
        bare = rest if dot else key
        if bare not in fields:
            where = f"{prefix} has" if dot else "no selected benchmark has"
            raise UsageError(f"--sweep {key}: {where} no such option.{did_you_mean(bare, fields)} "
                             f"Options: {', '.join(fields) or 'none'}")
    for cls in dict.fromkeys(bench_classes):
        keys = [k for k, _ in swept_keys(cls, sweeps)]
        twice = next((k for k in keys if keys.count(k) > 1), None)
        if twice is not None:
            raise UsageError(f"--sweep {twice} and --sweep {cls.name}.{twice} both sweep {cls.name}'s {twice}")
        set_too = [k for k in keys if k in _option_keys(cls, options)]
        if set_too:
            raise UsageError(f"--sweep {set_too[0]}: {cls.name}'s {set_too[0]} is also set by --option; drop one")


def _option_keys(bench_cls: type[Benchmark], options: Mapping[str, str]) -> set[str]:
    fields = bench_cls.Options.model_fields
    out = set()
    for key in options:
        prefix, dot, rest = key.partition(".")
        if (dot and prefix == bench_cls.name) or (not dot and key in fields):
            out.add(rest if dot else key)
    return out


def reference_cell(bench: Benchmark, cells: Sequence[str]) -> str:
    """The cell a sweep's cells are compared with: the one whose options have the values ``bench`` (any cell's
    benchmark) has without the sweep (the paper's: a serialization's ``paper``, no perturbation), else the first."""
    swept = {k for cell in cells for k in cell_options(cell)}
    model = type(bench.options)
    base = bench.options.model_dump(exclude_unset=True, exclude=swept)
    try:
        unswept: Any = model.model_validate(base)
    except ValidationError:
        return cells[0] if cells else ""
    for cell in cells:
        options = cell_options(cell)
        try:
            typed: Any = model.model_validate({**base, **options})
        except ValidationError:
            continue
        if all(getattr(typed, k, None) == getattr(unswept, k, None) for k in options):
            return cell
    return cells[0] if cells else ""


def preset_sweeps(name: str, given: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """``--preset NAME``'s sweeps with the ``--sweep`` keys it leaves open; one that changes a key the preset
    sweeps is a usage error (the preset's grid is what its documented cost counts)."""
    from structbench.papers import find_preset

    out = {k: list(v) for k, v in find_preset(name).sweeps.items()}
    for key, values in given.items():
        bare = key.partition(".")[2] or key
        fixed = out.get(key, out.get(bare))
        if fixed is not None and fixed != values:
            raise UsageError(f"--sweep {key}: preset {name} sweeps {bare} over {VALUES.join(fixed)}")
        out[key] = list(values)
    return out
