"""Reading a run's configuration from flags (``--option KEY=VALUE`` ...) and the options that reach each benchmark;
the configuration itself is ``structbench.runfiles.runconfig.RunConfig``."""

from __future__ import annotations

from typing import Any

from structbench.contract.benchmark import Benchmark
from structbench.core.errors import UsageError
from structbench.core.registry import did_you_mean
from structbench.core.words import flag_words, spelt, word
from structbench.runfiles.cells import options_for as options_for  # where report and interop read it too


def check_limit(limit: int | None) -> None:
    """``--limit`` must ask for at least one sample: a result over none would have no metric to show."""
    if limit is not None and limit < 1:
        raise UsageError(f"{spelt('limit', str(limit))}: give a number of samples of at least 1 (or leave "
                         f"{word('limit')} out for all)")


def split_bench(entry: str) -> tuple[str, str | None]:
    """``BENCH[:VARIANT]`` -> (bench, variant or None)."""
    name, _, variant = entry.partition(":")
    return name, variant or None


def parse_options(pairs: list[str], flag: str = "--option", *, output: str | None = None) -> dict[str, str]:
    """``["k=v", ...]`` -> dict; a pair without ``=`` is a usage error. ``output``: the command's output flag, named
    when the value looks like what other harnesses' ``-o`` takes (a path), as ``-o`` is ``--option`` here."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            hint = " (or BENCH.KEY=VALUE)" if flag == "--option" else ""
            if flag == "--option" and output is not None and not sep:
                raise UsageError(f"-o/--option {pair!r}: expected KEY=VALUE{hint}; -o is --option here, not the "
                                 f"output: to write to {pair}, give {output} {pair}")
            raise UsageError(f"{flag} {pair!r}: expected KEY=VALUE{hint}")
        options[key.strip()] = value
    return options


def parse_template_args(pairs: list[str]) -> dict[str, Any]:
    """``--chat-template-arg KEY=VALUE`` pairs, each value read as YAML (``true``, ``1024``, ``high``), as a suite
    file's ``chat_template_args`` would give it."""
    import yaml

    args: dict[str, Any] = {}
    for key, value in parse_options(pairs, flag="--chat-template-arg").items():
        try:
            args[key] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            args[key] = value
    return args


def parse_think_tags(values: list[str]) -> list[tuple[str, str]] | None:
    """``--think-tags OPEN,CLOSE`` values as tag pairs (None when none was given)."""
    if not values:
        return None
    pairs = []
    for value in values:
        opening, comma, closing = value.partition(",")
        if not comma or not opening.strip() or not closing.strip():
            raise UsageError(f"--think-tags {value!r}: expected OPEN,CLOSE, e.g. '<think>,</think>'")
        pairs.append((opening.strip(), closing.strip()))
    return pairs


def parse_model_options(pairs: list[str]) -> dict[str, str]:
    """``--model-option KEY=VALUE`` pairs: backend load settings, checked by the backend."""
    return parse_options(pairs, flag="--model-option")


def _option(key: str) -> str:
    """A benchmark option in its caller's words: ``--option KEY`` from the command line, ``options['KEY']`` from
    Python."""
    return f"--option {key}" if flag_words.get() else f"options[{key!r}]"


def check_options_used(bench_classes: list[type[Benchmark]], options: dict[str, str]) -> None:
    """Refuse options that no selected benchmark accepts (a typo must not pass silently)."""
    names = {b.name for b in bench_classes}
    for key in options:
        prefix, dot, _ = key.partition(".")
        if dot and prefix not in names:
            raise UsageError(f"{_option(key)}: benchmark {prefix!r} is not part of this run")
        if not dot and not any(key in b.Options.model_fields for b in bench_classes):
            accepted = sorted({f for b in bench_classes for f in b.Options.model_fields})
            raise UsageError(
                f"{_option(key)}: no selected benchmark has this option.{did_you_mean(key, accepted)} "
                f"Options: {', '.join(accepted) or 'none'}"
            )
