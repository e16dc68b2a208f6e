"""The run's arguments as ``structbench.evaluate`` and ``configure`` take them, checked in one place before anything
runs: each one's type and range, and a bad one is a ``UsageError`` naming it in the caller's words (``concurrency=0``
from Python, ``--concurrency 0`` from the command line, whose ``FLAGS`` say how it spells each).

``RunArguments`` is every keyword of ``evaluate`` as a typed field (a run flag is a keyword); what the values mean
(a benchmark that exists, an option it has) is checked later, where they are used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from structbench.errors import UsageError

Scalar = str | int | float | bool
Names = str | list[str] | tuple[str, ...]
"""A comma-separated string of names, or a list of them."""
Values = str | list[Scalar] | tuple[Scalar, ...]
"""One comma-separated string of values, or a list of them."""
PathLike = str | Path


def _field(expected: str, **constraints: Any) -> Any:
    return Field(default=None, description=expected, **constraints)


class RunArguments(BaseModel):
    """Every argument of a run (``evaluate``'s keywords), typed; defaults are those of ``evaluate``."""

    model_config = ConfigDict(strict=True, extra="forbid", arbitrary_types_allowed=True)

    model: Annotated[str, Field(min_length=1, description="'BACKEND[:NAME]', a string")] = "llamacpp"
    bench: Annotated[Names | None, _field("a benchmark 'BENCH[:VARIANT]' or a list of them, strings")]
    strategy: Annotated[Names | None, _field("a strategy name or a list of them, strings")]
    preset: Annotated[str | None, _field("a preset's name, a string")]
    options: Annotated[dict[str, Scalar | list[Scalar] | tuple[Scalar, ...]] | None,
                       _field("a mapping of option names to values (strings, numbers, booleans or lists of them)")]
    sweep: Annotated[dict[str, Values] | None,
                     _field("a mapping of option names to their values: a list, or one comma-separated string")]
    limit: Annotated[int | None, _field("a number of samples of at least 1 (or leave {name} out for all)", ge=1)]
    sample: Annotated[int | None, _field("a number of samples of at least 1", ge=1)]
    sample_ids: Annotated[Names | None, _field("a sample id or a list of them, strings")]
    seed: Annotated[int, Field(description="an int")] = 0
    epochs: Annotated[int, Field(ge=1, description="an int of at least 1")] = 1
    data_dir: Annotated[PathLike | None, _field("a directory (a str or a Path)")]
    allow_modified_data: Annotated[bool, Field(description="a bool")] = False
    model_options: Annotated[dict[str, Scalar] | None, _field("a mapping of option names to values")]
    max_tokens: Annotated[int | None, _field("a number of tokens (an int of at least 1)", ge=1)]
    temperature: Annotated[float | None, _field("a number of at least 0", ge=0)]
    top_p: Annotated[float | None, _field("a number in (0, 1]", gt=0, le=1)]
    system_prompt: Annotated[str | None, _field("a string")]
    chat_template_args: Annotated[dict[str, Any] | None, _field("a mapping of argument names to values")]
    reasoning_budget: Annotated[int, Field(ge=0, description="a number of tokens (an int of at least 0)")] = 0
    reasoning_effort: Annotated[str | None, _field("a string")]
    think_tags: Annotated[list[tuple[str, str]] | tuple[tuple[str, str], ...] | None,
                          _field("a list of (open, close) pairs of strings")]
    thought_opened: Annotated[bool, Field(description="a bool")] = False
    base_url: Annotated[str | None, _field("a URL (a string; several: comma-separated)")]
    api_key_env: Annotated[str, Field(min_length=1, description="the name of an environment variable")] = \
        "OPENAI_API_KEY"
    concurrency: Annotated[int, Field(ge=1, description="an int of at least 1")] = 8
    timeout: Annotated[float, Field(gt=0, description="a number of seconds above 0")] = 600.0
    max_retries: Annotated[int, Field(ge=0, description="an int of at least 0")] = 6
    max_reply_mb: Annotated[float, Field(gt=0, description="a number of MiB above 0")] = 16.0
    out: Annotated[PathLike | None, _field("a directory (a str or a Path)")]
    cache: Annotated[PathLike | None, _field("a file (a str or a Path)")]
    no_cache: Annotated[bool, Field(description="a bool")] = False
    on_cache_error: Annotated[Literal["stop", "continue"], Field(description="'stop' or 'continue'")] = "stop"
    offline: Annotated[bool, Field(description="a bool")] = False
    max_consecutive_failures: Annotated[int, Field(ge=0, description="an int of at least 0")] = 10
    workers: Annotated[int | None, _field("a number of worker processes (an int of at least 1)", ge=1)]
    executor: Annotated[Literal["local", "ray"], Field(description="'local' or 'ray'")] = "local"
    ray_address: Annotated[str | None, _field("an address, a string")]
    ray_gpus_per_worker: Annotated[float, Field(ge=0, description="a number of at least 0")] = 0.0
    progress: Annotated[bool, Field(description="a bool")] = True
    progress_every: Annotated[float, Field(gt=0, description="a number of seconds above 0")] = 30.0
    prices: Annotated[PathLike | dict[str, dict[str, float]] | None,
                      _field("a prices file (a str or a Path), or the mapping of a model to its prices")]
    max_cost: Annotated[float | None, _field("a number of US dollars of at least 0", ge=0)]
    max_tokens_total: Annotated[int | None, _field("a number of tokens (an int of at least 1)", ge=1)]
    batch: Annotated[bool, Field(description="a bool")] = False
    batch_poll: Annotated[float, Field(gt=0, description="a number of seconds above 0")] = 30.0
    max_turns: Annotated[int | None, _field("a number of model calls per sample (an int of at least 1)", ge=1)]
    log_to: Annotated[Names | None, _field("a tracker's name ('mlflow', 'wandb') or a list of them")]
    log_options: Annotated[dict[str, Scalar] | None, _field("a mapping of tracker option names to values")]
    log_samples: Annotated[bool, Field(description="a bool")] = False
    notify: Annotated[Callable[[str], None] | None, _field("a function of one line (a str), or None")]


FLAGS = {"bench": "--bench", "strategy": "--strategy", "options": "--option", "sweep": "--sweep",
         "sample_ids": "--sample-id", "model_options": "--model-option", "chat_template_args": "--chat-template-arg",
         "out": "--out", "model": "--model", "log_options": "--log-option"}
"""How the run command spells the arguments whose flag is not ``--`` and the name with dashes."""

def named(name: str, value: Any, flags: bool) -> str:
    """An argument as its caller wrote it: ``name=value`` (Python) or ``--flag value`` (``flags``: the command)."""
    if flags:
        return f"{FLAGS.get(name, '--' + name.replace('_', '-'))} {value}"
    return f"{name}={value!r}"


def check_arguments(values: Mapping[str, Any], *, caller: str, flags: bool = False) -> None:
    """Check ``values`` (arguments by their Python names) against ``RunArguments``; the first bad one is a
    ``UsageError`` naming it and saying what to give: ``caller(name=value): give ...`` (``flags``: as the run
    command's flag, ``--name value: give ...``)."""
    try:
        RunArguments.model_validate(dict(values))
    except ValidationError as err:
        problem = err.errors()[0]
        name = str(problem["loc"][0]) if problem["loc"] else "?"
        if problem["type"] == "extra_forbidden":
            raise UsageError(f"{caller}: no argument {name!r}") from None
        field = RunArguments.model_fields[name]
        spelt = FLAGS.get(name, "--" + name.replace("_", "-")) if flags else name
        expected = (field.description or "another value").format(name=spelt)
        where = named(name, values.get(name), flags) if flags else f"{caller}({named(name, values.get(name), flags)})"
        raise UsageError(f"{where}: give {expected}") from None
