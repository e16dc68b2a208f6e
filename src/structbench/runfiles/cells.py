"""A sweep's cells by name: a cell is its options, ``key=value`` pairs in key order joined by ``;``
(``perturbation=transpose;serialization=csv``); ``""`` is the one cell of a run without a sweep. Part of the contract:
records (``SampleRecord.cell``), result entries (``ResultEntry.cell``), ``metrics.json``'s robustness and every
reader of a run name cells this way. The grid itself is the runner's (``runner.sweep``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from structbench.core.errors import UsageError
from structbench.core.words import swept

if TYPE_CHECKING:
    from structbench.contract.benchmark import Benchmark

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
            raise UsageError(f"{swept(key)}: a key is an option name (KEY or BENCH.KEY)")
        if not values:
            raise UsageError(f"{swept(key)}: give at least one value (KEY=V1,V2,...)")
        bad = [v for v in values if PAIRS in v]
        if bad:
            raise UsageError(f"{swept(key)}: a value may not contain {PAIRS!r} ({bad[0]!r})")
        if len(set(values)) != len(values):
            twice = next(v for v in values if values.count(v) > 1)
            raise UsageError(f"{swept(key)}: value {twice!r} is given twice")


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


def options_for(bench_cls: type[Benchmark], options: dict[str, str]) -> dict[str, Any]:
    """The options that reach ``bench_cls``: its ``bench.key`` entries and the bare keys it declares."""
    fields = bench_cls.Options.model_fields
    mine: dict[str, Any] = {}
    for key, value in options.items():
        prefix, dot, rest = key.partition(".")
        if dot:
            if prefix == bench_cls.name:
                mine[rest] = value
        elif key in fields:
            mine[key] = value
    return mine


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
