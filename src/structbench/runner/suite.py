"""Suite files: several models over several benchmarks in one YAML file (``structbench run suite.yaml``).

A suite is validated whole before anything runs: an unknown key or a bad value is a ``UsageError`` naming the
file, the line and the key. Each model becomes one ``RunConfig`` (one run directory, resumable as any run) and one
``BackendSpec``; the benchmarks, variants, strategies and options of the suite are the same for every model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from structbench.backends.factory import BACKENDS, BackendSpec
from structbench.core.errors import UsageError
from structbench.core.yaml_input import field_name, line_of, read_yaml
from structbench.runfiles.runconfig import Generation, Reasoning, RunConfig
from structbench.runner.arguments import RunArguments, option_field

if TYPE_CHECKING:
    from structbench.backends.prices import Prices

Scalar = str | int | float | bool

MAX_SUITE_BYTES = 1 << 20
"""A suite file larger than this (1 MiB) is refused unread: a real suite is a few kilobytes."""
class SuiteGeneration(Generation):
    """A model's sampling settings; ``max_tokens`` caps every request (``structbench run --max-tokens``)."""

    max_tokens: int | None = option_field("max_tokens")


class SuiteModel(BaseModel):
    """One model of the suite, with its backend settings and what it changes in every request."""

    model_config = ConfigDict(extra="forbid")

    model: str
    """``BACKEND[:NAME]`` as ``structbench run --model`` takes it (``openai:Qwen/Qwen3-8B``, ``llamacpp``)."""
    name: str | None = None
    """The run directory's name under the suite's ``out`` (default: the model with ``:`` and ``/`` replaced)."""
    base_url: str | None = option_field("base_url")
    api_key_env: str = option_field("api_key_env")
    options: dict[str, Scalar] = Field(default_factory=dict)
    """Backend options (``--model-option KEY=VALUE``), e.g. ``n_ctx: 8192`` for llamacpp."""
    system_prompt: str | None = option_field("system_prompt")
    chat_template_args: dict[str, Any] = Field(default_factory=dict)
    generation: SuiteGeneration = Field(default_factory=SuiteGeneration)
    reasoning: Reasoning = Field(default_factory=Reasoning)
    """Thinking budget, effort and think tags for a reasoning model (``budget``, ``effort``, ``tags``, ``opened``)."""
    concurrency: int = option_field("concurrency")
    timeout: float = option_field("timeout")
    max_retries: int = option_field("max_retries")

    @field_validator("model")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        backend = value.partition(":")[0]
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; backends: {', '.join(BACKENDS.names())}")
        return value

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", value):
            raise ValueError("a run directory name: letters, digits, '.', '_' and '-'")
        return value

    def directory(self) -> str:
        from structbench.runner.run import directory_name

        return self.name or directory_name(self.model)


class SuiteBenchmark(BaseModel):
    """One benchmark: its variants (default: the benchmark's default), strategies (default: its default;
    ``all``: every one), options (``--option``) and sweeps (``--sweep``: option -> values, the grid of all)."""

    model_config = ConfigDict(extra="forbid")

    bench: str
    variants: list[str] = Field(default_factory=list)
    strategies: list[str] = Field(default_factory=list)
    options: dict[str, Scalar] = Field(default_factory=dict)
    sweep: dict[str, list[Scalar]] = Field(default_factory=dict)

    @field_validator("bench")
    @classmethod
    def _known(cls, value: str) -> str:
        from structbench.benchmarks import BENCHMARKS
        from structbench.core.registry import did_you_mean

        if value not in BENCHMARKS:
            raise ValueError(f"unknown benchmark {value!r}.{did_you_mean(value, BENCHMARKS.names())} Known: "
                             f"{', '.join(BENCHMARKS.names())}")
        return value

    def entries(self) -> list[str]:
        """``BENCH[:VARIANT]`` entries of the run."""
        return [f"{self.bench}:{v}" for v in self.variants] or [self.bench]


class Suite(BaseModel):
    """The whole suite file."""

    model_config = ConfigDict(extra="forbid")

    models: list[SuiteModel] = Field(min_length=1)
    benchmarks: list[SuiteBenchmark] = Field(min_length=1)
    limit: int | None = option_field("limit")
    seed: int = option_field("seed")
    epochs: int = option_field("epochs")
    """Answer every sample this many times (``structbench run --epochs``)."""
    max_turns: int | None = option_field("max_turns")
    """Model calls a tool loop makes at most per sample (``structbench run --max-turns``)."""
    turn_limit: Literal["wrong", "apart"] | None = option_field("turn_limit")
    """What a tool loop at its turn limit counts as (``structbench run --turn-limit``)."""
    data_dir: str | None = option_field("data_dir")
    allow_modified_data: bool = option_field("allow_modified_data")
    """Use ``data_dir`` files that differ from the public release (``--allow-modified-data``)."""
    out: str | None = None
    """The suite's directory: one run directory per model and the report (default: ``runs/<file name>``)."""
    report: Literal["html", "markdown", "none"] = "html"
    prices: str | dict[str, Any] | None = None
    """The models' prices (``structbench run --prices``): a prices file (relative to the suite file), or the prices
    themselves, ``MODEL: {input: USD, output: USD, cached: USD}`` per million tokens."""

    @field_validator("benchmarks", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        """``- scitab:2class`` stands for ``- {bench: scitab, variants: [2class]}``."""
        if not isinstance(value, list):
            return value
        out = []
        for item in value:
            if isinstance(item, str):
                bench, _, variant = item.partition(":")
                item = {"bench": bench, "variants": [variant] if variant else []}
            out.append(item)
        return out

    @field_validator("models")
    @classmethod
    def _distinct(cls, models: list[SuiteModel]) -> list[SuiteModel]:
        seen: set[str] = set()
        for i, m in enumerate(models):
            if m.directory() in seen:
                raise ValueError(f"models[{i}]: run directory {m.directory()!r} is used twice; give each a name")
            seen.add(m.directory())
        return models


@dataclass(frozen=True)
class PlannedRun:
    """One model's run: where it goes, what it evaluates, and its backend."""

    name: str
    run_dir: Path
    config: RunConfig
    spec: BackendSpec


def runs(suite: Suite, out: Path, base: Path = Path()) -> list[PlannedRun]:
    """One ``PlannedRun`` per model: the suite's benchmarks, strategies and options as one ``RunConfig``, built as
    ``structbench.evaluate`` builds one from the same options; a relative ``data_dir`` is taken from ``base`` (the
    suite file's folder)."""
    from structbench.runner.configure import run_config

    benches = [entry for b in suite.benchmarks for entry in b.entries()]
    strategies = [
        f"{entry}/{name}" for b in suite.benchmarks for entry in b.entries()
        for name in (b.strategies if b.strategies != ["all"] else _all_strategies(b.bench))
    ]
    shared = {
        "bench": benches, "strategy": strategies, "limit": suite.limit, "seed": suite.seed, "epochs": suite.epochs,
        "max_turns": suite.max_turns, "turn_limit": suite.turn_limit, "allow_modified_data": suite.allow_modified_data,
        "data_dir": str(base / suite.data_dir) if suite.data_dir else None,
        # as written in the file (str(True) is "True"): the configuration, and so its hash, stays as it was
        "options": {f"{b.bench}.{k}": str(v) for b in suite.benchmarks for k, v in b.options.items()},
        "sweep": {f"{b.bench}.{k}": [_text(v) for v in values] for b in suite.benchmarks
                  for k, values in b.sweep.items()},
    }
    planned = []
    for m in suite.models:
        g, r = m.generation, m.reasoning
        args = RunArguments.model_validate(shared | {
            "model": m.model, "base_url": m.base_url, "system_prompt": m.system_prompt,
            "chat_template_args": m.chat_template_args, "model_options": {k: str(v) for k, v in m.options.items()},
            "max_tokens": g.max_tokens, "temperature": g.temperature, "top_p": g.top_p,
            "reasoning_budget": r.budget, "reasoning_effort": r.effort, "think_tags": r.tags,
            "thought_opened": r.opened, "api_key_env": m.api_key_env, "concurrency": m.concurrency,
            "timeout": m.timeout, "max_retries": m.max_retries})
        config = run_config(args, caller="suite")
        if g.seed is not None:  # the request seed: a suite's own (the command has no flag for it)
            config = config.model_copy(update={"generation": Generation(**(config.generation.model_dump()
                                                                         | {"seed": g.seed}))})
        spec = BackendSpec.parse(m.model, base_url=m.base_url, api_key_env=m.api_key_env, concurrency=m.concurrency,
                                 timeout=m.timeout, max_retries=m.max_retries, options=config.model_options)
        planned.append(PlannedRun(m.directory(), out / m.directory(), config, spec))
    return planned


def _text(value: Scalar) -> str:
    """A YAML value as ``--sweep`` would give it (``true``, not ``True``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _all_strategies(bench: str) -> list[str]:
    from structbench.benchmarks import BENCHMARKS

    return list(BENCHMARKS.get(bench)().strategies())


def load_suite(path: Path) -> Suite:
    """Read and validate a suite file; every problem is a ``UsageError`` naming the file, line and key.

    The file's size, nesting, aliases and keys are checked first (``yaml_input.check_shape``), so a hostile file is
    refused in milliseconds instead of filling memory while it is expanded and validated."""
    data, lines = read_yaml(path, kind="the suite file", max_bytes=MAX_SUITE_BYTES)
    if not isinstance(data, dict):
        raise UsageError(f"{path}:1: a suite is a mapping with the keys models and benchmarks")
    try:
        suite = Suite.model_validate(data)
    except ValidationError as err:
        problems = []
        for e in err.errors():
            loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-")))
            message = "unknown key" if e["type"] == "extra_forbidden" else e["msg"].removeprefix("Value error, ")
            problems.append(f"{path}:{line_of(lines, loc)}: {field_name(loc) or 'suite'}: {message}")
        raise UsageError("; ".join(problems)) from None
    problems = [f"{path}:{line_of(lines, loc)}: {field_name(loc)}: {message}" for loc, message in _check(suite, path)]
    if problems:
        raise UsageError("; ".join(problems))
    suite_prices(suite, path, lines)  # a bad price is refused with the rest
    return suite


def suite_prices(suite: Suite, path: Path, lines: dict[tuple[Any, ...], int] | None = None) -> Prices | None:
    """The suite's prices (its ``prices`` file, relative to the suite file, or mapping), checked; None without."""
    from structbench.backends.prices import Prices, load_prices

    if suite.prices is None:
        return None
    if isinstance(suite.prices, str):
        return load_prices(path.parent / suite.prices)
    own = {loc[1:]: line for loc, line in (lines or {}).items() if loc[:1] == ("prices",)}
    return Prices.from_data(suite.prices, str(path), own, prefix="prices.")


def _check(suite: Suite, path: Path) -> list[tuple[tuple[Any, ...], str]]:
    """What only the benchmarks, backends and file system know: variants, strategies, options, model settings, the
    data folder."""
    from structbench.backends.factory import make_backend
    from structbench.benchmarks import BENCHMARKS
    from structbench.runner.settings import RequestSettings

    problems: list[tuple[tuple[Any, ...], str]] = []
    if suite.data_dir:  # relative to the suite file, as the runs take it
        folder = path.parent / suite.data_dir
        if not folder.is_dir():
            problems.append((("data_dir",), f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}"))
    for i, b in enumerate(suite.benchmarks):
        try:
            bench = BENCHMARKS.get(b.bench)({k: str(v) for k, v in b.options.items()})
            problems += _sweep_problems(i, b, bench)
        except UsageError as err:
            problems.append((("benchmarks", i, "options"), str(err).replace("--option", "option")))
            try:  # its variants and strategies are still checked (a sweep is checked with its options)
                bench = BENCHMARKS.get(b.bench)({})
            except UsageError:
                continue
        for j, variant in enumerate(b.variants):
            try:
                bench.check_variant(variant)
            except UsageError as err:
                problems.append((("benchmarks", i, "variants", j), str(err)))
        for j, strategy in enumerate(b.strategies):
            if strategy == "all" and len(b.strategies) == 1:
                continue
            try:
                bench.strategy(strategy)
            except UsageError as err:
                problems.append((("benchmarks", i, "strategies", j), str(err)))
    seen: set[str] = set()
    for i, b in enumerate(suite.benchmarks):
        for key in b.sweep:
            if f"{b.bench}.{key}" in seen:
                problems.append((("benchmarks", i, "sweep", key), f"{b.bench}'s {key} is swept by another entry of "
                                 f"{b.bench} already; sweep it in one"))
            seen.add(f"{b.bench}.{key}")
    if problems:
        return problems
    for plan in runs(suite, path.parent, path.parent):
        i = next(k for k, m in enumerate(suite.models) if m.directory() == plan.name)
        try:
            backend = make_backend(plan.spec)
            RequestSettings.of(plan.config).check(backend)
        except UsageError as err:
            text = str(err)
            key = ("options" if "--model-option" in text else "chat_template_args" if "chat_template" in text
                   else "reasoning" if "--reasoning-" in text else "model")
            problems.append((("models", i, key), str(err).replace("--model-option ", "option ")))
    return problems


def _sweep_problems(i: int, b: SuiteBenchmark, bench: Any) -> list[tuple[tuple[Any, ...], str]]:
    """A benchmark's sweep: options it has, not also set by ``options``, every value one it accepts and that can name a
    cell."""
    from structbench.core.words import swept
    from structbench.runfiles.cells import check_sweep_values

    problems: list[tuple[tuple[Any, ...], str]] = []
    fields = type(bench.options).model_fields
    for key, values in b.sweep.items():
        where = ("benchmarks", i, "sweep", key)
        try:
            check_sweep_values({key: [_text(v) for v in values]})
        except UsageError as err:
            problems.append((where, str(err).removeprefix(f"{swept(key)}: ")))
            continue
        if key not in fields:
            problems.append((where, f"{b.bench} has no option {key!r}"))
            continue
        if key in b.options:
            problems.append((where, f"{key} is also set in options: drop one"))
            continue
        for j, value in enumerate(values):
            try:
                type(bench)({**{k: str(v) for k, v in b.options.items()}, key: _text(value)})
            except UsageError as err:
                problems.append(((*where, j), str(err).replace("--option", "sweep")))
    return problems
