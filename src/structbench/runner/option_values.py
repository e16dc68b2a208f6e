"""How a run option's value is read, whatever wrote it (a flag's text, a keyword's list, a suite file's value):
names, benchmark entries, option texts, a preset's configuration and sweep values. Below ``arguments`` (which
compares a resumed run's options with them) and ``configure`` (which builds the ``RunConfig``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from structbench.core.errors import UsageError


def option_text(value: object) -> str:
    """An option's value as ``--option KEY=VALUE`` writes it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def names(value: str | Sequence[str] | None) -> list[str]:
    """A comma-separated string or a list of names as the names, once each in order."""
    items = (value.split(",") if isinstance(value, str) else list(value)) if value else []
    return list(dict.fromkeys(v.strip() for v in items if v.strip()))


def bench_entries(bench: str | Sequence[str] | None) -> list[str] | None:
    """``bench`` as ``BENCH[:VARIANT]`` entries, once each in order; ``all`` stands for every registered benchmark."""
    from structbench.benchmarks import BENCHMARKS
    from structbench.core.plugins import warn_plugin

    if bench is None:
        return None
    items = bench.split(",") if isinstance(bench, str) else list(bench)
    entries = list(dict.fromkeys(e.strip() for e in items if e.strip()))
    every = [name for name, _ in BENCHMARKS.usable(warn_plugin)] if "all" in entries else []
    return list(dict.fromkeys(n for e in entries for n in (every if e == "all" else [e])))


def preset_config(name: str, options: Mapping[str, str], flags: bool = True) -> tuple[list[str], list[str],
                                                                                      dict[str, str]]:
    """Preset ``name`` (a paper table's or a robustness grid's) as benches, strategies and options; ``options`` may
    add what the preset leaves open (a data path, a tokenizer), not change what it sets."""
    from structbench.benchmarks.presets import find_preset

    preset = find_preset(name)
    merged = dict(preset.options)
    for key, value in options.items():
        bare = key.partition(".")[2] or key
        fixed = preset.options.get(key, preset.options.get(bare))
        if fixed is not None and fixed != value:
            given = f"--option {key}={value}" if flags else f"options={{{key!r}: {value!r}}}"
            raise UsageError(f"{given}: preset {name} runs the paper's {bare}={fixed}")
        merged[key] = value
    return list(preset.benches), list(preset.strategies), merged


def sweep_values(sweep: Mapping[str, str | Sequence[object]] | None) -> dict[str, list[str]]:
    """``sweep`` as ``RunConfig.sweeps``: each key's values as a list or one comma-separated string (``--sweep``'s
    ``V1,V2,...``); a value that cannot name a cell is a usage error."""
    from structbench.runfiles.cells import VALUES, check_sweep_values

    out: dict[str, list[str]] = {}
    for key, values in (sweep or {}).items():
        items = values.split(VALUES) if isinstance(values, str) else [option_text(v) for v in values]
        out[str(key).strip()] = [v.strip() for v in items if v.strip()]
    check_sweep_values(out)
    return out
