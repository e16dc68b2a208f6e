"""Every option of a run, declared once: ``RunArguments`` is ``structbench.evaluate``'s keywords as typed fields, and
each field's ``Flag`` says how the ``run`` command spells it (its flags, help and command-line type), whether a suite
file sets it, which part of a run it configures, and how resuming compares it with the run's configuration.

The ``run`` command's options, ``evaluate``'s (and ``configure``'s) keywords, the suite file's settings and the
resume-conflict check are views of this one model, as Inspect's ``GenerateConfig`` is unpacked into ``eval()``:
adding an option is one field here plus the code where it takes effect. A bad value is a ``UsageError`` naming it in
its caller's words (``concurrency=0`` from Python, ``--concurrency 0`` from the command line).
"""

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from structbench.backends.factory import DEFAULT_MAX_REPLY_BYTES, DEFAULT_TIMEOUT
from structbench.core.errors import UsageError
from structbench.core.words import FLAG_NAMES, spelt
from structbench.runfiles.runconfig import SEED_LIMIT

if TYPE_CHECKING:
    from structbench.runfiles.runconfig import RunConfig

MAX_CONSECUTIVE_FAILURES = 10
"""``max_consecutive_failures``' default (``runner.control.MAX_CONSECUTIVE_FAILURES``, which loads more)."""

Scalar = str | int | float | bool
Names = str | list[str] | tuple[str, ...]
"""A comma-separated string of names, or a list of them."""
Values = str | list[Scalar] | tuple[Scalar, ...]
"""One comma-separated string of values, or a list of them."""
PathLike = str | Path

DEFAULT_MODEL = "llamacpp"
"""The embedded model (Gemma 3 270M on llama.cpp), what runs without a ``model``."""

Part = Literal["config", "connection", "settings", "costs", "tracking", "call"]
"""What an option configures: the run's identity (``RunConfig``, compared on resume), how the model is reached
(``Connection``), how the run executes (``RunSettings``), its cost (``Costs``), its trackers, or the call itself
(where the run goes, what it resumes, where notes go)."""

Same = Callable[[Any, "RunConfig", Mapping[str, Any]], bool]
"""Whether a value given on resuming matches the run's configuration (the other given values beside it)."""


class ExecutorChoice(StrEnum):
    """``--executor``."""

    local = "local"
    ray = "ray"


class TurnLimitChoice(StrEnum):
    """``--turn-limit``."""

    wrong = "wrong"
    apart = "apart"


class CacheErrorChoice(StrEnum):
    """``--on-cache-error``."""

    stop = "stop"
    continue_ = "continue"


@dataclass(frozen=True)
class Flag:
    """How the ``run`` command takes one option, and where the option belongs."""

    part: Part
    help: str = ""
    names: tuple[str, ...] = ()
    """The flag's names (empty: typer's own, ``--name`` or ``--name/--no-name`` for a bool)."""
    cli: Any = None
    """The command-line type when it is not the Python one (``list[str]`` of ``KEY=VALUE`` for a mapping)."""
    parse: Callable[[Any], Any] | None = None
    """A command-line value (given, not empty) as the Python value."""
    suite: bool = False
    """A suite file sets it (per model or for the whole suite): refused beside one on the command line."""
    same: Same | None = None
    """It defines the run: resuming with another value is refused (None: it may change on resume)."""
    min: float | None = None
    """The command line's bound when the field's is open (``gt``): click ranges are closed."""
    ranged: bool = True
    """The command line shows and checks the field's range (False: the model's check names the flag)."""
    show_default: bool | None = None


def _flag(part: Part, help: str = "", **kwargs: Any) -> Flag:
    return Flag(part, help, **kwargs)


def _is(of: Callable[["RunConfig"], Any], view: Callable[[Any], Any] = lambda v: v) -> Same:
    """``same`` for an option stored as ``of(config)`` (the given value seen through ``view``)."""
    return lambda value, config, given: view(value) == of(config)


def _bench(value: Any, config: "RunConfig", given: Mapping[str, Any]) -> bool:
    from structbench.runner.option_values import bench_entries

    return bench_entries(value) == config.benches


def _names(value: Any) -> list[str]:
    from structbench.runner.option_values import names

    return names(value)


def _option_texts(value: Any) -> dict[str, str]:
    from structbench.runner.option_values import option_text

    return {k: option_text(v) for k, v in (value or {}).items()}


def _options(value: Any, config: "RunConfig", given: Mapping[str, Any]) -> bool:
    return given.get("preset") is not None or _option_texts(value) == config.options


def _sweep(value: Any, config: "RunConfig", given: Mapping[str, Any]) -> bool:
    from structbench.runner.option_values import sweep_values
    from structbench.runner.sweep import preset_sweeps

    sweeps = sweep_values(value)
    preset = given.get("preset")
    return (preset_sweeps(preset, sweeps) if preset is not None else sweeps) == config.sweeps


def _preset(value: Any, config: "RunConfig", given: Mapping[str, Any]) -> bool:
    from structbench.runner.option_values import preset_config

    chosen = preset_config(value, _option_texts(given.get("options")))
    return chosen == (config.benches, config.strategies, config.options)


def _out(value: Any, config: "RunConfig", given: Mapping[str, Any]) -> bool:
    return Path(value).resolve() == Path(given["resume"]).resolve()


def _model_options(value: Any, config: "RunConfig", given: Mapping[str, Any]) -> bool:
    # each one given as the run has it (one left out is kept, not removed)
    return all(config.model_options.get(k) == v for k, v in _option_texts(value).items())


def _base_url(value: Any, config: "RunConfig", given: Mapping[str, Any]) -> bool:
    from structbench.backends.openai_compat import shown_base_urls

    return value is not None and shown_base_urls(value) == config.base_url


def _tags(value: Any) -> list[tuple[str, str]] | None:
    return [(opening, closing) for opening, closing in value] if value else None


def _parse(name: str) -> Callable[[Any], Any]:
    """The command-line reader ``name`` of ``runner.config`` (loaded when a value is read)."""

    def parse(value: Any) -> Any:
        from structbench.runner import config

        return getattr(config, name)(value)

    return parse


def _parse_options(value: list[str]) -> dict[str, str]:
    from structbench.runner.config import parse_options

    return parse_options(value, output="--output-dir")


def _parse_sweeps(value: list[str]) -> dict[str, list[str]]:
    from structbench.runfiles.cells import parse_sweeps

    return parse_sweeps(value)


def _parse_log_options(value: list[str]) -> dict[str, str]:
    from structbench.runner.config import parse_options

    return parse_options(value, flag="--log-option")


def _parse_out(value: str) -> Path:
    if not value.strip():  # as a path it would be the current directory
        raise UsageError(f"{spelt('out', repr(value))}: empty; give a directory (an empty value would mean the "
                         "current one)")
    return Path(value)


def _named_folder(value: PathLike | None) -> PathLike | None:
    """A folder given as text names one: an empty string would be the current directory."""
    if isinstance(value, str) and not value.strip():
        raise ValueError("empty")
    return value


def _field(expected: str, default: Any = None, **constraints: Any) -> Any:
    """A field whose ``description`` is what a bad value should have been (``{name}``: the option as spelt)."""
    return Field(default=default, description=expected, **constraints)


CONFIG_HELP = " (part of the config)"


class RunArguments(BaseModel):
    """Every option of a run, typed (``evaluate``'s keywords); defaults are those of ``evaluate`` and ``run``. The
    fields are in the order of ``structbench run --help``."""

    model_config = ConfigDict(strict=True, extra="forbid", arbitrary_types_allowed=True)

    model: Annotated[str, Field(min_length=1, description="'BACKEND[:NAME]', a string"), _flag(
        "config", "BACKEND[:NAME], e.g. openai:gpt-4o-mini.", names=("--model", "-m"), suite=True,
        same=_is(lambda c: c.model))] = DEFAULT_MODEL
    bench: Annotated[Names | None, _field("a benchmark 'BENCH[:VARIANT]' or a list of them, strings"), _flag(
        "config", "Comma-separated BENCH[:VARIANT] list, or 'all'.", names=("--bench", "-b"), cli=str | None,
        suite=True, same=_bench)] = None
    strategy: Annotated[Names | None, _field("a strategy name or a list of them, strings"), _flag(
        "config", "Comma-separated strategies (BENCH[:VARIANT]/NAME: for one), or 'all'.", names=("--strategy", "-s"),
        cli=str | None, suite=True, same=_is(lambda c: c.strategies, _names))] = None
    preset: Annotated[str | None, _field("a preset's name, a string"), _flag(
        "config", "Run one paper table's configuration, or a robustness grid (robust-<bench>; structbench list shows "
        "them).", names=("--preset", "-p"), suite=True, same=_preset)] = None
    options: Annotated[dict[str, Scalar | list[Scalar] | tuple[Scalar, ...]] | None,
                       _field("a mapping of option names to values (strings, numbers, booleans or lists of them)"),
                       _flag("config", "Benchmark run option KEY=VALUE or BENCH.KEY=VALUE (repeatable).",
                             names=("--option", "-o"), cli=list[str] | None, parse=_parse_options, suite=True,
                             same=_options)] = None
    sweep: Annotated[dict[str, Values] | None,
                     _field("a mapping of option names to their values: a list, or one comma-separated string"),
                     _flag("config", "Run a benchmark option at several values, KEY=V1,V2,... or BENCH.KEY=V1,V2,... "
                           "(repeatable: the grid of all), in one run compared in its robustness section.",
                           names=("--sweep",), cli=list[str] | None, parse=_parse_sweeps, suite=True,
                           same=_sweep)] = None
    limit: Annotated[int | None, _field("a number of samples of at least 1 (or leave {name} out for all)", ge=1),
                     _flag("config", "Evaluate the first N (at least 1) samples of each benchmark.",
                           names=("--limit", "-n"), ranged=False, suite=True, same=_is(lambda c: c.limit))] = None
    sample: Annotated[int | None, _field("a number of samples of at least 1", ge=1), _flag(
        "config", "Evaluate a random N samples of each benchmark, drawn with --seed and kept in order (part of the "
        "config; --limit takes the first N).", names=("--sample",), suite=True, same=_is(lambda c: c.sample))] = None
    sample_ids: Annotated[Names | None, _field("a sample id or a list of them, strings"), _flag(
        "config", "Evaluate only these samples: ID[,ID...]" + CONFIG_HELP + ".", names=("--sample-id",),
        cli=str | None, suite=True, same=_is(lambda c: c.sample_ids or [], _names))] = None
    max_tokens: Annotated[int | None, _field("a number of tokens (an int of at least 1)", ge=1), _flag(
        "config", "Cap every request's max_tokens" + CONFIG_HELP + ".", names=("--max-tokens",), suite=True,
        same=_is(lambda c: c.max_tokens))] = None
    max_turns: Annotated[int | None, _field("a number of model calls per sample (an int from 1 to 1000)", ge=1,
                                            le=1000), _flag(
        "config", "Model calls a tool loop (-s tools) makes at most per sample (part of the config; default: the "
        "strategy's own, 10, ClaimDB's 20 as in its paper); see --turn-limit.", names=("--max-turns",), suite=True,
        same=_is(lambda c: c.max_turns))] = None
    turn_limit: Annotated[Literal["wrong", "apart"] | None, _field("'wrong' or 'apart'"), _flag(
        "config", "A tool loop that reaches --max-turns still calling tools: wrong scores it as a reply without an "
        "answer, in n (the default); apart leaves it out of n, counted apart (part of the config).",
        names=("--turn-limit",), cli=TurnLimitChoice | None, parse=lambda v: v.value if v is not None else None,
        suite=True, same=_is(lambda c: c.turn_limit))] = None
    temperature: Annotated[float | None, _field("a number of at least 0", ge=0.0), _flag(
        "config", "Sampling temperature of every request, replacing the benchmark's and strategy's own" + CONFIG_HELP
        + ".", names=("--temperature",), suite=True, same=_is(lambda c: c.generation.temperature))] = None
    top_p: Annotated[float | None, _field("a number in (0, 1]", gt=0, le=1), _flag(
        "config", "Nucleus sampling of every request, in (0, 1]" + CONFIG_HELP + ".", names=("--top-p",),
        ranged=False, suite=True, same=_is(lambda c: c.generation.top_p))] = None
    system_prompt: Annotated[str | None, _field("a string"), _flag(
        "config", "A system message before every chat request's own.", names=("--system-prompt",), suite=True,
        same=_is(lambda c: c.system_prompt))] = None
    chat_template_args: Annotated[dict[str, Any] | None, _field("a mapping of argument names to values"), _flag(
        "config", "Chat-template argument KEY=VALUE (repeatable; YAML values), e.g. enable_thinking=false.",
        names=("--chat-template-arg",), cli=list[str] | None, parse=_parse("parse_template_args"), suite=True,
        same=_is(lambda c: c.chat_template_args, lambda v: dict(v or {})))] = None
    reasoning_budget: Annotated[int, Field(ge=0, description="a number of tokens (an int of at least 0)"), _flag(
        "config", "Tokens added to every request's answer budget for a reasoning model's thought.",
        names=("--reasoning-budget",), suite=True, same=_is(lambda c: c.reasoning.budget))] = 0
    reasoning_effort: Annotated[str | None, _field("a string"), _flag(
        "config", "How hard a reasoning model thinks: openai sends reasoning_effort (none, minimal, low, medium, "
        "high, xhigh), anthropic adaptive thinking with output_config.effort (low, medium, high, xhigh, max).",
        names=("--reasoning-effort",), suite=True, same=_is(lambda c: c.reasoning.effort))] = None
    think_tags: Annotated[list[tuple[str, str]] | tuple[tuple[str, str], ...] | None,
                          _field("a list of (open, close) pairs of strings"), _flag(
        "config", "OPEN,CLOSE tags around a thought (repeatable; default <think>,</think>).", names=("--think-tags",),
        cli=list[str] | None, parse=_parse("parse_think_tags"), suite=True,
        same=_is(lambda c: c.reasoning.tags, _tags))] = None
    thought_opened: Annotated[bool, Field(description="a bool"), _flag(
        "config", "The server's chat template opens the thought (replies start inside it, as DeepSeek-R1's do).",
        names=("--thought-opened",), suite=True, same=_is(lambda c: c.reasoning.opened))] = False
    concurrency: Annotated[int, Field(ge=1, description="an int of at least 1"), _flag(
        "connection", "Samples in flight at once.", names=("--concurrency", "-c"), suite=True)] = 8
    workers: Annotated[int | None, _field("a number of worker processes (an int of at least 1)", ge=1), _flag(
        "settings", "Worker processes sharing --concurrency (default: one per core for a server backend, else 1; with "
        "--executor ray: Ray actors, default one per cluster CPU).", names=("--workers", "-w"))] = None
    executor: Annotated[Literal["local", "ray"], Field(description="'local' or 'ray'"), _flag(
        "settings", "local: worker processes on this machine; ray: actors on a Ray cluster (pip install "
        "'structbench[ray]').", cli=ExecutorChoice, parse=lambda v: v.value)] = "local"
    ray_address: Annotated[str | None, _field("an address, a string"), _flag(
        "settings", "Ray cluster to join with --executor ray (default: RAY_ADDRESS, else a new local one).")] = None
    ray_gpus_per_worker: Annotated[float, Field(ge=0.0, description="a number of at least 0"), _flag(
        "settings", "GPUs each Ray worker reserves (a local model per GPU worker).")] = 0.0
    seed: Annotated[int, Field(ge=-SEED_LIMIT, lt=SEED_LIMIT, description="an int within ±2^63"), _flag(
        "config", "Seed for generators, shuffles and sampling.", names=("--seed",), suite=True,
        same=_is(lambda c: c.seed))] = 0
    epochs: Annotated[int, Field(ge=1, description="an int of at least 1"), _flag(
        "config", "Answer every sample this many times, each epoch with its own request seed; metrics are the mean "
        "over epochs" + CONFIG_HELP + ".", names=("--epochs",), suite=True, same=_is(lambda c: c.epochs))] = 1
    out: Annotated[PathLike | None, _field("a directory (a non-empty str, or a Path; an empty value would mean the "
                                           "current one)"), AfterValidator(_named_folder), _flag(
        "call", "Run directory (default runs/<model>-<config hash>).", names=("--output-dir", "--out"),
        cli=str | None, parse=_parse_out, same=_out, show_default=False)] = None
    resume: Annotated[PathLike | None, _field("a run directory (a non-empty str, or a Path)"),
                      AfterValidator(_named_folder), _flag(
        "call", "Continue the run in this directory.", names=("--resume",), cli=Path | None, suite=True)] = None
    base_url: Annotated[str | None, _field("a URL (a string; several: comma-separated)"), _flag(
        "config", "OpenAI-compatible server URL; several replicas of one model: URL,URL,...",
        names=("--base-url",), suite=True, same=_base_url)] = None
    model_options: Annotated[dict[str, Scalar] | None, _field("a mapping of option names to values"), _flag(
        "config", "Backend option KEY=VALUE (repeatable), e.g. n_ctx=4096.", names=("--model-option", "-M"),
        cli=list[str] | None, parse=_parse("parse_model_options"), suite=True, same=_model_options)] = None
    device: Annotated[str | None, _field("a device, a string"), _flag(
        "config", "hf/vllm: cpu, cuda, cuda:1, mps (a model option).", suite=True,
        same=_is(lambda c: c.model_options.get("device")))] = None
    dtype: Annotated[str | None, _field("a dtype, a string"), _flag(
        "config", "hf/vllm: auto, float32, bfloat16 (a model option).", suite=True,
        same=_is(lambda c: c.model_options.get("dtype")))] = None
    api_key_env: Annotated[str, Field(min_length=1, description="the name of an environment variable"), _flag(
        "connection", "Environment variable holding the API key.", suite=True)] = "OPENAI_API_KEY"
    timeout: Annotated[float, Field(gt=0, description="a number of seconds above 0"), _flag(
        "connection", "Seconds a model request may take, waiting in the server's queue included.", min=0.001,
        suite=True)] = DEFAULT_TIMEOUT
    max_retries: Annotated[int, Field(ge=0, description="an int of at least 0"), _flag(
        "connection", "Retries on 429/5xx/dropped connections; a timed-out request is retried once at most.",
        suite=True)] = 6
    max_reply_mb: Annotated[float, Field(gt=0, description="a number of MiB above 0"), _flag(
        "connection", "Largest reply body read from a server (MiB); a larger one is an error.",
        min=0.001)] = DEFAULT_MAX_REPLY_BYTES / 2**20
    max_consecutive_failures: Annotated[int, Field(ge=0, description="an int of at least 0"), _flag(
        "settings", "Stop the run when this many model calls in a row fail the same way (0: never).")] = \
        MAX_CONSECUTIVE_FAILURES
    cache: Annotated[PathLike | None, _field("a file (a str or a Path)"), _flag(
        "settings", "Response cache file (default <cache>/responses.sqlite).", cli=Path | None)] = None
    no_cache: Annotated[bool, Field(description="a bool"), _flag(
        "settings", "Do not read or write the response cache.", names=("--no-cache",))] = False
    on_cache_error: Annotated[Literal["stop", "continue"], Field(description="'stop' or 'continue'"), _flag(
        "settings", "When the cache cannot be written: stop (keeping every answer) or continue without it.",
        cli=CacheErrorChoice, parse=lambda v: v.value)] = "stop"
    data_dir: Annotated[PathLike | None, _field("a directory (a str or a Path)"), _flag(
        "config", "Local copy of the datasets (<dir>/<dataset>/...); env STRUCTBENCH_DATA_DIR.", names=("--data-dir",),
        cli=Path | None, suite=True, same=_is(lambda c: c.data_dir, str))] = None
    allow_modified_data: Annotated[bool, Field(description="a bool"), _flag(
        "config", "Use --data-dir files that differ from the public release (modified on purpose); the run's manifest "
        "lists them. Without it such a file is an error.", names=("--allow-modified-data",), suite=True,
        same=_is(lambda c: c.allow_modified_data))] = False
    offline: Annotated[bool, Field(description="a bool"), _flag("settings", "Never download datasets.")] = False
    progress: Annotated[bool, Field(description="a bool"), _flag(
        "settings", "Progress on stderr: a bar on a terminal, a line every --progress-every seconds in logs.")] = True
    progress_every: Annotated[float, Field(gt=0, description="a number of seconds above 0"), _flag(
        "settings", "Seconds between progress lines when stderr is not a terminal.", min=0.1)] = 30.0
    # -- cost, budget and batches (docs/usage/costs.md): none of them part of the run's identity --
    prices: Annotated[PathLike | dict[str, dict[str, int | float]] | None,
                      _field("a prices file (a str or a Path), or the mapping of a model to its prices"), _flag(
        "costs", "YAML/JSON file of prices per model (USD per million input, output, cached tokens): the run's cost in "
        "metrics.json, the manifest and the table.", names=("--prices",), cli=Path | None)] = None
    max_cost: Annotated[float | None, _field("a number of US dollars of at least 0", ge=0.0), _flag(
        "costs", "Stop the run (exit 6) once its calls cost this many US dollars at --prices; the same command with a "
        "larger budget resumes it.", names=("--max-cost",))] = None
    max_tokens_total: Annotated[int | None, _field("a number of tokens (an int of at least 1)", ge=1), _flag(
        "costs", "Stop the run (exit 6) once its calls used this many tokens (prompt + completion); a larger budget "
        "resumes it.", names=("--max-tokens-total",))] = None
    batch: Annotated[bool, Field(description="a bool"), _flag(
        "costs", "Send the calls through the provider's batch API (openai, anthropic: half the price, results within "
        "24 h), one batch per strategy step; resumable.", names=("--batch",))] = False
    batch_poll: Annotated[float, Field(gt=0, description="a number of seconds above 0"), _flag(
        "costs", "Most seconds between two polls of a running batch.", names=("--batch-poll",), min=0.1)] = 30.0
    # -- experiment trackers (docs/usage/trackers.md): after the run is on disk; a tracker that fails is a warning --
    log_to: Annotated[Names | None, _field("a tracker's name ('mlflow', 'wandb') or a list of them"), _flag(
        "tracking", "Log the finished run to experiment trackers: mlflow, wandb or mlflow,wandb (pip install "
        "'structbench[mlflow]' / '[wandb]').", names=("--log-to",), cli=str | None)] = None
    log_options: Annotated[dict[str, Scalar] | None, _field("a mapping of tracker option names to values"), _flag(
        "tracking", "Tracker setting KEY=VALUE or TRACKER.KEY=VALUE (repeatable): tracking_uri, experiment (mlflow); "
        "project, entity, mode=offline, dir, group (wandb); run_name.", names=("--log-option",), cli=list[str] | None,
        parse=_parse_log_options)] = None
    log_samples: Annotated[bool, Field(description="a bool"), _flag(
        "tracking", "Also log the per-sample table (W&B: a Table; MLflow: samples.json).",
        names=("--log-samples",))] = False
    notify: Annotated[Callable[[str], None] | None, _field("a function of one line (a str), or None")] = None
    """Where notes and warnings go (default: stderr): Python's only, the command prints them."""

    def part(self, part: Part) -> dict[str, Any]:
        """This part's options by name (``Connection(**args.part("connection"))``)."""
        return {name: getattr(self, name) for name, flag in FLAGS.items() if flag.part == part}


def flag_of(field: FieldInfo) -> Flag | None:
    """The ``Flag`` among a field's metadata (None: a keyword the command has no flag for)."""
    return next((m for m in field.metadata if isinstance(m, Flag)), None)


FLAGS: dict[str, Flag] = {name: flag for name, field in RunArguments.model_fields.items()
                          if (flag := flag_of(field)) is not None}
"""Every option the ``run`` command has, by its Python name, in ``--help``'s order."""
SUITE_DEFINED = tuple(name for name, flag in FLAGS.items() if flag.suite)
"""Options a suite file sets (per model or for the whole suite): refused beside one. How the jobs are spread
(``--workers``, ``--executor``, ``--ray-*``) is not among them: it applies to every model of the suite."""


def flag_name(name: str) -> str:
    """How the run command spells option ``name`` (its last long flag: ``--out`` for ``--output-dir``)."""
    flag = FLAGS.get(name)
    longs = [n for n in (flag.names if flag else ()) if n.startswith("--")]
    return longs[-1] if longs else "--" + name.replace("_", "-")


FLAG_NAMES.update({name: flag_name(name) for name in FLAGS})  # the words errors deep in a run use (core.words)


def named(name: str, value: Any, flags: bool) -> str:
    """An argument as its caller wrote it: ``name=value`` (Python) or ``--flag value`` (``flags``: the command)."""
    if flags:
        return f"{flag_name(name)} {value}"
    return f"{name}={value!r}"


def option_field(name: str) -> Any:
    """A copy of option ``name``'s pydantic field (type constraints, default and description), for a model that
    reads the same option from elsewhere (a suite file): its bounds are declared once, here."""
    field = RunArguments.model_fields[name]
    return FieldInfo.merge_field_infos(field, metadata=[m for m in field.metadata if not isinstance(m, Flag)])


def check_arguments(values: Mapping[str, Any], *, caller: str, flags: bool = False) -> RunArguments:
    """``values`` (arguments by their Python names) as ``RunArguments``; the first bad one is a ``UsageError`` naming
    it and saying what to give: ``caller(name=value): give ...`` (``flags``: as the run command's flag, ``--name
    value: give ...``)."""
    try:
        return RunArguments.model_validate(dict(values))
    except ValidationError as err:
        problem = err.errors()[0]
        name = str(problem["loc"][0]) if problem["loc"] else "?"
        if problem["type"] == "extra_forbidden":
            from structbench.core.registry import did_you_mean

            hint = did_you_mean(name, RunArguments.model_fields)
            raise UsageError(f"{caller}: no argument {name!r}{hint}") from None
        field = RunArguments.model_fields[name]
        spelt = flag_name(name) if flags else name
        expected = (field.description or "another value").format(name=spelt)
        where = named(name, values.get(name), flags) if flags else f"{caller}({named(name, values.get(name), flags)})"
        raise UsageError(f"{where}: give {expected}") from None


def resume_conflicts(config: "RunConfig", values: Mapping[str, Any], given: Collection[str]) -> list[str]:
    """The options among ``given`` (by Python name) whose ``values`` differ from the resumed run's ``config``."""
    return [name for name in given
            if (flag := FLAGS.get(name)) is not None and flag.same is not None
            and not flag.same(values.get(name), config, values)]
