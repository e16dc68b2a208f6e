"""``structbench``: list, run, export, score, report and compare. Heavy modules are imported inside commands."""

from __future__ import annotations

import errno
import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from structbench.atomic import atomic_path
from structbench.backends.factory import DEFAULT_TIMEOUT
from structbench.cli import batches_cmd, interop_cmds, report_cmds
from structbench.errors import ExitCode, StorageError, StructbenchError, Terminated, UsageError
from structbench.redact import MASK, redact

if TYPE_CHECKING:
    from structbench.backends import BackendSpec
    from structbench.results import MetricsFile
    from structbench.runner.cache import ResponseCache
    from structbench.runner.config import RunConfig
    from structbench.runner.control import CacheErrorPolicy, RunControl
    from structbench.runner.run import Run

def _flags_without_type() -> None:
    """typer 0.2x labels every flag ``<bool>`` in ``--help`` (``--no-cache <bool>``, ``--help <bool>``), as if it took
    a value; a flag takes none, so its type column is left empty. Other options keep their ``<int>``, ``<path>``."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "flags_without_type", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    display_type_rich.flags_without_type = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_without_type()

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    help="Evaluate language models on reasoning over structured knowledge.",
    pretty_exceptions_enable=False,
)

DEFAULT_SUITE = ["structfact:generated"]
"""What ``structbench run`` evaluates without ``--bench``: StructFact questions over a fictional world (no
download, facts no model has seen), few-shot with A/B/C options, so even the embedded base model answers
with a parseable option letter (constrained decoding where the backend has it) and its score can be read
against the chance and majority baselines printed beside it."""
DEFAULT_STRATEGIES = ["few_shot"]
DEFAULT_OPTIONS = {"structfact.tables": "synthetic", "structfact.per_task": "6", "structfact.answer": "constrained"}
"""Six questions per task (30 in all, about a minute on two CPU cores); ``--option`` values win."""
DEFAULT_SUITE_TITLE = (
    "the default quick suite: StructFact's generated variant, 30 claims about tables of a fictional world (six per "
    "reasoning task) to be judged Yes, No or Not sure (options A, B, C), few-shot, the reply constrained to one "
    "option letter where the backend can"
)
"""What ``structbench run`` without ``--bench`` evaluates, as the summary after the table says it."""
DEFAULT_MODEL = "llamacpp"
DEFAULT_MAX_REPLY_MB = 16.0
"""``--max-reply-mb``: far above any real completion (``backends.factory.DEFAULT_MAX_REPLY_BYTES``)."""
MAX_CONSECUTIVE_FAILURES = 10
"""``--max-consecutive-failures`` (``runner.control.MAX_CONSECUTIVE_FAILURES``)."""


class ExecutorChoice(StrEnum):
    """``--executor``."""

    local = "local"
    ray = "ray"


class CacheErrorChoice(StrEnum):
    """``--on-cache-error``."""

    stop = "stop"
    continue_ = "continue"

BenchArg = Annotated[str, typer.Argument(help="BENCH[:VARIANT]")]
DataDirOpt = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Local copy of the datasets (<dir>/<dataset>/...); env STRUCTBENCH_DATA_DIR."),
]
ModifiedDataOpt = Annotated[
    bool,
    typer.Option("--allow-modified-data",
                 help="Use --data-dir files that differ from the public release (modified on purpose); the run's "
                      "manifest lists them. Without it such a file is an error."),
]
OptionOpt = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="Benchmark run option KEY=VALUE or BENCH.KEY=VALUE (repeatable)."),
]
StrategyOpt = Annotated[str | None, typer.Option("--strategy", "-s", help="Strategy name (default: the benchmark's).")]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", "-n", help="Evaluate the first N (at least 1) samples of each benchmark.")
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for generators, shuffles and sampling.")]


def _console() -> Any:
    from rich.console import Console

    return Console()


def _option_default(field: Any) -> str:
    """An option's default as ``--option KEY=VALUE`` takes it (``none`` for no value)."""
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    return str(value)


def _option_blocks(options: Any, width: int) -> list[str]:
    """``    KEY (default VALUE): what it means`` per run option, from the Options model's field descriptions."""
    import re
    import textwrap

    blocks = []
    for name, field in options.model_fields.items():
        meaning = re.sub(r"``([^`]*)``", r"\1", " ".join((field.description or "").split()))
        blocks.append(textwrap.fill(f"{name} (default {_option_default(field)}){': ' + meaning if meaning else ''}",
                                    width=width, initial_indent="    ", subsequent_indent="        ",
                                    break_long_words=False, break_on_hyphens=False))
    return blocks


@app.command("list")
def list_cmd() -> None:
    """Benchmarks with their variants, strategies, metrics and options (meaning and default); presets; backends;
    where the embedded model's GGUF file is."""
    import shutil
    import textwrap

    from structbench.backends import BACKENDS
    from structbench.benchmarks import BENCHMARKS

    width = max(40, shutil.get_terminal_size((100, 24)).columns)

    def field(label: str, items: list[str]) -> str:
        """``label: a, b, c`` wrapped between items only, so every name stays whole and copyable."""
        return textwrap.fill(
            ", ".join(items) or "-", width=width, initial_indent=f"  {label + ':':<11} ", subsequent_indent=" " * 14,
            break_long_words=False, break_on_hyphens=False,
        )

    blocks = []
    for name in BENCHMARKS.names():
        cls = BENCHMARKS.get(name)
        bench = cls()
        strategies = [f"{s} (default)" if s == cls.default_strategy else s for s in bench.strategies()]
        metrics = [f"{cls.headline} (headline)", *(m for m in cls.metric_names if m != cls.headline)]
        variants = [f"{v} (default)" if i == 0 else v for i, v in enumerate(cls.variants)]
        options = _option_blocks(cls.Options, width)
        blocks.append("\n".join([
            f"{name}  {cls.title}",
            field("variants", variants),
            field("strategies", strategies),
            field("metrics", metrics),
            *(["  options:", *options] if options else [field("options", [])]),
        ]))
    typer.echo("\n\n".join(blocks))
    typer.echo("\n" + textwrap.fill(
        "Options are given as --option KEY=VALUE (every selected benchmark that has KEY) or --option BENCH.KEY=VALUE "
        "(one benchmark).", width=width, break_long_words=False, break_on_hyphens=False))
    title = ("presets: a robustness grid (docs/usage/robustness.md) or one paper table's configuration each "
             "(structbench run --model M --preset NAME [--limit N])")
    typer.echo("\n\n" + textwrap.fill(title, width=width, break_long_words=False, break_on_hyphens=False) + "\n")
    typer.echo("\n\n".join(_preset_blocks(field, width)))
    typer.echo("\n" + field("backends", [f"{b} (default)" if b == DEFAULT_MODEL else b for b in BACKENDS.names()]))
    typer.echo(textwrap.fill(
        f"The embedded model (Gemma 3 270M, Q4_K_M) is assembled on first use into {_embedded_path()}; "
        "`structbench embedded-model` prints its path (assembling it first), to serve it with llama.cpp yourself.",
        width=width, break_long_words=False, break_on_hyphens=False))


def _preset_blocks(field: Callable[[str, list[str]], str], width: int) -> list[str]:
    """``--preset`` names with the configuration behind each paper table, and each robustness grid."""
    import math
    import textwrap

    from structbench.papers import paper_tables, robustness_presets

    blocks = []
    for r in robustness_presets():  # a grid: --sweep values, cells x samples x strategies calls
        cells = math.prod(len(v) for v in r.sweeps.values())
        head = f"{r.name}  robustness grid, {cells} cells: {r.description}"
        blocks.append("\n".join([
            textwrap.fill(head, width=width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False),
            field("benchmarks", list(r.benches)),
            field("strategies", list(r.strategies)),
            field("options", [f"{k}={v}" for k, v in r.options.items()]),
            *(field(f"sweep {k}", list(v)) for k, v in r.sweeps.items()),
        ]))
    for t in paper_tables():
        p, data = t.preset, t.published
        head = f"{p.name}  {data.source} ({len(data.rows)} rows x {len(data.columns)} columns)"
        blocks.append("\n".join([
            textwrap.fill(head, width=width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False),
            field("benchmarks", list(p.benches)),
            field("strategies", list(p.strategies)),
            field("options", [f"{k}={v}" for k, v in p.options.items()]),
        ]))
    return blocks


def _embedded_path() -> str:
    from structbench.backends.llamacpp import embedded_model_file

    return str(embedded_model_file())


@app.command("embedded-model")
def embedded_model() -> None:
    """Print the path of the embedded model's GGUF file (Gemma 3 270M, Q4_K_M), assembling it first if needed: serve
    it yourself with e.g. `llama-server -m "$(structbench embedded-model)" -c 8192`."""
    from structbench.backends.llamacpp import embedded_model_file, embedded_model_path

    if not embedded_model_file().is_file():
        typer.echo(f"assembling the embedded model into {embedded_model_file()} (once) ...", err=True)
    typer.echo(str(embedded_model_path()))


def _path_value(text: str | None, flag: str) -> Path | None:
    """A path flag's value; an empty one is refused (as a path it would be the current directory)."""
    if text is None:
        return None
    if not text.strip():
        raise UsageError(f"{flag} {text!r}: empty; give a directory (an empty value would mean the current one)")
    return Path(text)


def _comma_list(text: str | None) -> list[str]:
    """``"a, b,a"`` -> ``["a", "b"]``: the items of a comma-separated flag, once each, in order."""
    return list(dict.fromkeys(part.strip() for part in (text or "").split(",") if part.strip()))


def _preset_config(name: str, option: list[str] | None) -> tuple[list[str], list[str], dict[str, str]]:
    """``--preset NAME`` as benches, strategies and options; ``--option`` may add options the preset
    leaves open (a data path, a tokenizer), not change the ones it sets."""
    from structbench.papers import find_preset
    from structbench.runner.config import parse_options

    preset = find_preset(name)
    options = dict(preset.options)
    for key, value in parse_options(option or []).items():
        bare = key.partition(".")[2] or key
        fixed = preset.options.get(key, preset.options.get(bare))
        if fixed is not None and fixed != value:
            raise UsageError(f"--option {key}={value}: preset {name} runs the paper's {bare}={fixed}")
        options[key] = value
    return list(preset.benches), list(preset.strategies), options


def _preset_entry(name: str, bench: str, strategy: str | None, option: list[str] | None) -> tuple[str, str, list[str]]:
    """``export``/``score`` with ``--preset NAME``: the preset's entry for ``bench`` (its variant when ``bench`` names
    none), the strategy (the preset's only one for it when not given) and the ``--option`` pairs: the preset's, which
    make ``score`` parse and score as the paper did, and those it leaves open."""
    from structbench.runner.config import split_bench

    benches, strategies, options = _preset_config(name, option)
    wanted, variant = split_bench(bench)
    entries = [b for b in benches if split_bench(b)[0] == wanted and variant in (None, split_bench(b)[1] or variant)]
    if not entries:
        raise UsageError(f"--preset {name} runs {', '.join(benches)}, not {bench}")
    entry = entries[0] if variant is None or ":" in entries[0] else f"{entries[0]}:{variant}"
    allowed = [s.rpartition("/")[2] for s in strategies
               if "/" not in s or s.rpartition("/")[0] in (entry, split_bench(entry)[0])]
    if strategy is None:
        if len(allowed) != 1:
            raise UsageError(f"--preset {name} runs the strategies {', '.join(allowed)} on {entry}: give --strategy")
        strategy = allowed[0]
    elif strategy not in allowed:
        raise UsageError(f"--preset {name} runs the strategies {', '.join(allowed)} on {entry}, not {strategy!r}")
    return entry, strategy, [f"{k}={v}" for k, v in options.items()]


PresetScoreOpt = Annotated[
    str | None,
    typer.Option("--preset", help="Use one paper table's configuration (structbench list shows them): its options, "
                 "so outputs are parsed and scored as the paper's released code did."),
]


def _benches(text: str | None) -> list[str]:
    """``--bench`` entries; ``all`` stands for every registered benchmark (its default variant)."""
    from structbench.benchmarks import BENCHMARKS

    entries = _comma_list(text)
    if "all" not in entries:
        return entries
    return list(dict.fromkeys(name for e in entries for name in (BENCHMARKS.names() if e == "all" else [e])))


def _shown_urls(base_url: str) -> str:
    """``--base-url`` (one URL or several, comma-separated) as stored: passwords ``[REDACTED]``."""
    from structbench.backends.openai_compat import shown_base_urls

    return shown_base_urls(base_url)


SUITE_DEFINED = ("model", "bench", "strategy", "option", "limit", "seed", "max_tokens", "base_url", "model_option",
                 "device", "dtype", "api_key_env", "timeout", "max_retries", "resume", "data_dir", "concurrency",
                 "system_prompt", "chat_template_arg", "reasoning_budget", "reasoning_effort", "think_tags",
                 "thought_opened", "allow_modified_data", "epochs", "sweep")
"""``run`` flags a suite file sets (per model or for the whole suite): refused beside one. How the jobs are spread
(``--workers``, ``--executor``, ``--ray-*``) is not among them: it applies to every model of the suite."""


def _typed(ctx: typer.Context, name: str) -> bool:
    """Whether flag ``name`` was given on the command line (ParameterSource.COMMANDLINE, compared by name: typer
    vendors click)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _resume_conflicts(ctx: typer.Context, resume: Path, config: Any, given: dict[str, Any]) -> list[str]:
    """The run-defining flags given on the command line whose values differ from the resumed run's."""
    from structbench.runner.config import parse_model_options, parse_options, parse_template_args, parse_think_tags
    from structbench.runner.sweep import parse_sweeps

    def typed(name: str) -> bool:
        return _typed(ctx, name)

    same = {
        "model": lambda v: v == config.model,
        "base_url": lambda v: v is not None and _shown_urls(v) == config.base_url,
        "bench": lambda v: _benches(v) == config.benches,
        "strategy": lambda v: _comma_list(v) == config.strategies,
        "option": lambda v: given["preset"] is not None or parse_options(v or []) == config.options,
        "sweep": lambda v: parse_sweeps(v or []) == config.sweeps,
        "limit": lambda v: v == config.limit,
        "seed": lambda v: v == config.seed,
        "epochs": lambda v: v == config.epochs,
        "max_tokens": lambda v: v == config.max_tokens,
        "data_dir": lambda v: str(v) == config.data_dir,
        "allow_modified_data": lambda v: v == config.allow_modified_data,
        "preset": lambda v: _preset_config(v, given["option"]) == (config.benches, config.strategies, config.options),
        "out": lambda v: Path(v).resolve() == resume.resolve(),
        "model_option": lambda v: all(  # each one given as the run has it (one left out is kept, not removed)
            config.model_options.get(k) == val for k, val in parse_model_options(v or []).items()),
        "device": lambda v: v == config.model_options.get("device"),
        "dtype": lambda v: v == config.model_options.get("dtype"),
        "system_prompt": lambda v: v == config.system_prompt,
        "chat_template_arg": lambda v: parse_template_args(v or []) == config.chat_template_args,
        "reasoning_budget": lambda v: v == config.reasoning.budget,
        "reasoning_effort": lambda v: v == config.reasoning.effort,
        "think_tags": lambda v: parse_think_tags(v or []) == config.reasoning.tags,
        "thought_opened": lambda v: v == config.reasoning.opened,
    }
    return [
        "--" + name.replace("_", "-")
        for name, matches in same.items()
        if typed(name) and not matches(given[name])
    ]


@app.command()
def run(
    ctx: typer.Context,
    suite: Annotated[
        Path | None,
        typer.Argument(help="A suite file (YAML): models x benchmarks, one run directory per model, then the report.",
                       show_default=False),
    ] = None,
    model: Annotated[
        str, typer.Option("--model", "-m", help="BACKEND[:NAME], e.g. openai:gpt-4o-mini.")
    ] = DEFAULT_MODEL,
    bench: Annotated[
        str | None, typer.Option("--bench", "-b", help="Comma-separated BENCH[:VARIANT] list, or 'all'.")
    ] = None,
    strategy: Annotated[
        str | None,
        typer.Option("--strategy", "-s", help="Comma-separated strategies (BENCH[:VARIANT]/NAME: for one), or 'all'."),
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option("--preset", "-p", help="Run one paper table's configuration (structbench list shows them)."),
    ] = None,
    option: OptionOpt = None,
    sweep: Annotated[
        list[str] | None,
        typer.Option("--sweep", help="Run a benchmark option at several values, KEY=V1,V2,... or BENCH.KEY=V1,V2,... "
                                     "(repeatable: the grid of all), in one run compared in its robustness section."),
    ] = None,
    limit: LimitOpt = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", min=1, help="Cap every request's max_tokens (part of the config).")
    ] = None,
    system_prompt: Annotated[
        str | None, typer.Option("--system-prompt", help="A system message before every chat request's own.")
    ] = None,
    chat_template_arg: Annotated[
        list[str] | None,
        typer.Option("--chat-template-arg", help="Chat-template argument KEY=VALUE (repeatable; YAML values), "
                                                 "e.g. enable_thinking=false."),
    ] = None,
    reasoning_budget: Annotated[
        int, typer.Option("--reasoning-budget", min=0, help="Tokens added to every request's answer budget for a "
                                                            "reasoning model's thought.")
    ] = 0,
    reasoning_effort: Annotated[
        str | None, typer.Option("--reasoning-effort", help="reasoning_effort sent with chat requests (none, minimal, "
                                                            "low, medium, high, xhigh).")
    ] = None,
    think_tags: Annotated[
        list[str] | None,
        typer.Option("--think-tags", help="OPEN,CLOSE tags around a thought (repeatable; default <think>,</think>)."),
    ] = None,
    thought_opened: Annotated[
        bool, typer.Option("--thought-opened", help="The server's chat template opens the thought (replies start "
                                                    "inside it, as DeepSeek-R1's do).")
    ] = False,
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1, help="Samples in flight at once.")] = 8,
    workers: Annotated[
        int | None,
        typer.Option("--workers", "-w", min=1,
                     help="Worker processes sharing --concurrency (default: one per core for a server backend, "
                          "else 1; with --executor ray: Ray actors, default one per cluster CPU)."),
    ] = None,
    executor: Annotated[
        ExecutorChoice,
        typer.Option(help="local: worker processes on this machine; ray: actors on a Ray cluster "
                          "(pip install 'structbench[ray]')."),
    ] = ExecutorChoice.local,
    ray_address: Annotated[
        str | None,
        typer.Option(help="Ray cluster to join with --executor ray (default: RAY_ADDRESS, else a new local one)."),
    ] = None,
    ray_gpus_per_worker: Annotated[
        float, typer.Option(min=0.0, help="GPUs each Ray worker reserves (a local model per GPU worker).")
    ] = 0.0,
    seed: SeedOpt = 0,
    epochs: Annotated[
        int,
        typer.Option("--epochs", min=1, help="Answer every sample this many times, each epoch with its own request "
                                             "seed; metrics are the mean over epochs (part of the config)."),
    ] = 1,
    out: Annotated[
        str | None,
        typer.Option("--out", help="Run directory (default runs/<model>-<config hash>).", show_default=False),
    ] = None,
    resume: Annotated[Path | None, typer.Option("--resume", help="Continue the run in this directory.")] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="OpenAI-compatible server URL; several replicas of one model: URL,URL,..."),
    ] = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option("--model-option", "-M", help="Backend option KEY=VALUE (repeatable), e.g. n_ctx=4096."),
    ] = None,
    device: Annotated[str | None, typer.Option(help="hf/vllm: cpu, cuda, cuda:1, mps (a model option).")] = None,
    dtype: Annotated[str | None, typer.Option(help="hf/vllm: auto, float32, bfloat16 (a model option).")] = None,
    api_key_env: Annotated[str, typer.Option(help="Environment variable holding the API key.")] = "OPENAI_API_KEY",
    timeout: Annotated[
        float, typer.Option(min=0.001, help="Seconds a model request may take, waiting in the server's queue "
                            "included.")
    ] = DEFAULT_TIMEOUT,
    max_retries: Annotated[
        int, typer.Option(min=0, help="Retries on 429/5xx/dropped connections; a timed-out request is retried "
                          "once at most.")
    ] = 6,
    max_reply_mb: Annotated[
        float, typer.Option(min=0.001, help="Largest reply body read from a server (MiB); a larger one is an error.")
    ] = DEFAULT_MAX_REPLY_MB,
    max_consecutive_failures: Annotated[
        int, typer.Option(min=0, help="Stop the run when this many model calls in a row fail the same way (0: never).")
    ] = MAX_CONSECUTIVE_FAILURES,
    cache: Annotated[Path | None, typer.Option(help="Response cache file (default <cache>/responses.sqlite).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
    on_cache_error: Annotated[
        CacheErrorChoice,
        typer.Option(help="When the cache cannot be written: stop (keeping every answer) or continue without it."),
    ] = CacheErrorChoice.stop,
    data_dir: DataDirOpt = None,
    allow_modified_data: ModifiedDataOpt = False,
    offline: Annotated[bool, typer.Option(help="Never download datasets.")] = False,
    progress: Annotated[
        bool,
        typer.Option(help="Progress on stderr: a bar on a terminal, a line every --progress-every seconds in logs."),
    ] = True,
    progress_every: Annotated[
        float, typer.Option(min=0.1, help="Seconds between progress lines when stderr is not a terminal.")
    ] = 30.0,
    # -- cost, budget and batches (docs/usage/costs.md): run settings, none of them part of the run's identity --
    prices: Annotated[
        Path | None,
        typer.Option("--prices", help="YAML/JSON file of prices per model (USD per million input, output, cached "
                                      "tokens): the run's cost in metrics.json, the manifest and the table."),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", min=0.0, help="Stop the run (exit 6) once its calls cost this many US dollars at "
                                                 "--prices; the same command with a larger budget resumes it."),
    ] = None,
    max_tokens_total: Annotated[
        int | None,
        typer.Option("--max-tokens-total", min=1, help="Stop the run (exit 6) once its calls used this many tokens "
                                                       "(prompt + completion); a larger budget resumes it."),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option("--batch", help="Send the calls through the provider's batch API (openai, anthropic: half the "
                                     "price, results within 24 h), one batch per strategy step; resumable."),
    ] = False,
    batch_poll: Annotated[
        float, typer.Option("--batch-poll", min=0.1, help="Most seconds between two polls of a running batch.")
    ] = 30.0,
) -> None:
    """Evaluate a model, or every model of a suite file. With no arguments: a quick offline suite on the embedded
    model."""
    from structbench.backends import BackendSpec
    from structbench.report.markdown import headline_table
    from structbench.runner.config import (
        Reasoning,
        RunConfig,
        check_limit,
        parse_model_options,
        parse_options,
        parse_template_args,
        parse_think_tags,
    )
    from structbench.runner.run import default_run_dir, read_manifest
    from structbench.runner.store import MANIFEST
    from structbench.runner.sweep import parse_sweeps, preset_sweeps

    out_dir = _path_value(out, "--out")
    policy: CacheErrorPolicy = "stop" if on_cache_error == CacheErrorChoice.stop else "continue"
    settings = RunSettings(cache, no_cache, policy, offline, progress, progress_every, max_consecutive_failures,
                           workers=workers, executor=executor, ray_address=ray_address,
                           ray_gpus_per_worker=ray_gpus_per_worker,
                           costs=_costs(prices, max_cost, max_tokens_total, batch, batch_poll))
    if executor == ExecutorChoice.ray:
        from structbench.runner.cluster import check_reachable

        # before any run directory is made: Ray would retry a dead address for minutes
        check_reachable(ray_address or os.environ.get("RAY_ADDRESS"))
    if suite is not None:
        from structbench.cli.suite_cmd import run_suite

        typed = [f"--{name.replace('_', '-')}" for name in SUITE_DEFINED if _typed(ctx, name)]
        if typed:
            raise UsageError(f"{suite} defines the models and benchmarks; {', '.join(typed)} cannot be given with a "
                             "suite file (--out, --cache, --no-cache, --offline, --progress and the like can)")
        code = run_suite(suite, out_dir, settings, max_reply_bytes=int(max_reply_mb * 2**20))
        if code != ExitCode.OK:
            raise typer.Exit(code)
        return

    if resume is not None:
        manifest = read_manifest(resume)
        if not manifest:
            raise UsageError(f"--resume {resume}: no {MANIFEST} there")
        config = RunConfig.model_validate(manifest["config"])
        given = {"model": model, "base_url": base_url, "bench": bench, "strategy": strategy, "option": option,
                 "sweep": sweep,
                 "limit": limit, "seed": seed, "epochs": epochs, "max_tokens": max_tokens, "data_dir": data_dir,
                 "out": out,
                 "preset": preset, "model_option": model_option, "device": device, "dtype": dtype,
                 "system_prompt": system_prompt, "chat_template_arg": chat_template_arg,
                 "reasoning_budget": reasoning_budget, "reasoning_effort": reasoning_effort, "think_tags": think_tags,
                 "thought_opened": thought_opened, "allow_modified_data": allow_modified_data}
        conflicts = _resume_conflicts(ctx, resume, config, given)
        if conflicts:
            raise UsageError(
                f"--resume {resume} continues that run as its manifest defines it; "
                f"{', '.join(conflicts)} would change it (start a new run instead, or drop them; "
                "--concurrency, --timeout, --max-retries, --cache and the like may be given)"
            )
        if config.base_url is not None and MASK in config.base_url and base_url is None:
            raise UsageError(f"--resume {resume}: the run's --base-url had a password, which is never stored; "
                             "give --base-url again")
        run_dir = resume
    else:
        check_limit(limit)
        options = parse_options(option or [])
        strategies = _comma_list(strategy)
        sweeps = parse_sweeps(sweep or [])
        if preset is not None:
            if bench is not None or strategy is not None:
                raise UsageError(f"--preset {preset} sets the benchmarks and strategies; drop --bench and --strategy")
            benches, strategies, options = _preset_config(preset, option)
            sweeps = preset_sweeps(preset, sweeps)
        elif bench is None:
            benches = DEFAULT_SUITE
            strategies = strategies or DEFAULT_STRATEGIES
            options = DEFAULT_OPTIONS | options
        else:
            benches = _benches(bench)
            if not benches:
                raise UsageError(f"--bench {bench!r} names no benchmark; give BENCH[:VARIANT],... or 'all' "
                                 "(structbench list shows them)")
        config = RunConfig(
            model=model,
            base_url=_shown_urls(base_url) if base_url else None,
            benches=benches,
            strategies=strategies,
            options=options,
            sweeps=sweeps,
            limit=limit,
            seed=seed,
            epochs=epochs,
            data_dir=str(data_dir) if data_dir else None,
            allow_modified_data=allow_modified_data,
            max_tokens=max_tokens,
            model_options=parse_model_options(model_option or [])
            | {key: value for key, value in (("device", device), ("dtype", dtype)) if value is not None},
            system_prompt=system_prompt or None,
            chat_template_args=parse_template_args(chat_template_arg or []),
            reasoning=_reasoning(Reasoning, reasoning_budget, reasoning_effort, parse_think_tags(think_tags or []),
                                 thought_opened),
        )
        run_dir = out_dir or default_run_dir(config)
    spec = BackendSpec.parse(
        config.model,
        base_url=base_url or config.base_url,  # the password, if any, is only on the command line
        api_key_env=api_key_env,
        concurrency=concurrency,
        timeout=timeout,
        max_retries=max_retries,
        max_reply_bytes=int(max_reply_mb * 2**20),
        options=config.model_options,
    )
    the_run, metrics = _execute(config, spec, run_dir, settings)
    _print_markdown(headline_table(metrics))
    default = (config.benches, config.strategies, config.options, config.limit) == (
        DEFAULT_SUITE, DEFAULT_STRATEGIES, DEFAULT_OPTIONS, None)
    typer.echo(_summary(the_run, metrics, DEFAULT_SUITE_TITLE if default else None))
    typer.echo(f"run directory: {run_dir}")
    _echo_usage(metrics)
    _echo_exclusions(metrics)
    _echo_cut_off(metrics)
    if the_run.failures:
        _echo_failures(the_run)
        raise typer.Exit(ExitCode.FAILED_SAMPLES)


def _reasoning(cls: Any, budget: int, effort: str | None, tags: list[tuple[str, str]] | None, opened: bool) -> Any:
    """The run's ``Reasoning`` settings from the flags; a bad value is a usage error naming the flag."""
    from pydantic import ValidationError

    try:
        return cls(budget=budget, effort=effort, tags=tags, opened=opened)
    except ValidationError as err:
        problem = err.errors()[0]
        flag = {"effort": "--reasoning-effort", "tags": "--think-tags"}.get(str(problem["loc"][0]), "--reasoning-*")
        raise UsageError(f"{flag}: {problem['msg'].removeprefix('Value error, ')}") from None


@dataclass(frozen=True)
class RunSettings:
    """How ``run`` executes, apart from what it evaluates (none of it changes the results)."""

    cache: Path | None
    no_cache: bool
    on_cache_error: CacheErrorPolicy
    offline: bool
    progress: bool
    progress_every: float
    max_consecutive_failures: int
    workers: int | None = None
    """``--workers``: worker processes (or Ray actors); None picks (``runner.workers.worker_count``)."""
    executor: ExecutorChoice = ExecutorChoice.local
    ray_address: str | None = None
    ray_gpus_per_worker: float = 0.0
    costs: Costs | None = None
    """``--prices``, the budget and ``--batch`` (None: none of them)."""


@dataclass(frozen=True)
class Costs:
    """What the run's calls cost and may cost, and whether they go in batches (``docs/usage/costs.md``)."""

    prices: Any = None
    """``structbench.prices.Prices`` (loaded from ``--prices`` or the suite), or None."""
    max_cost: float | None = None
    max_tokens_total: int | None = None
    batch: bool = False
    batch_poll: float = 30.0

    @property
    def one_process(self) -> bool:
        """Budgets and batches count every call in one process."""
        return self.batch or self.max_cost is not None or self.max_tokens_total is not None


def _costs(prices: Path | None, max_cost: float | None, max_tokens_total: int | None, batch: bool,
           batch_poll: float) -> Costs | None:
    """``run``'s cost flags, the prices file read and checked (a bad one is a usage error naming its line)."""
    if prices is None and max_cost is None and max_tokens_total is None and not batch:
        return None
    from structbench.prices import load_prices

    loaded = load_prices(prices) if prices is not None else None
    if max_cost is not None and loaded is None:
        raise UsageError("--max-cost needs the models' prices: give --prices FILE (US dollars per million tokens)")
    return Costs(loaded, max_cost, max_tokens_total, batch, batch_poll)


def _execute(config: RunConfig, spec: BackendSpec, run_dir: Path, settings: RunSettings) -> tuple[Run, MetricsFile]:
    """Evaluate ``config`` on the backend ``spec`` names into ``run_dir``; Ctrl-C and SIGTERM say how to resume."""
    from structbench.backends import BACKENDS, make_backend
    from structbench.batch.collector import BatchSettings
    from structbench.datasets import DataContext, cache_root
    from structbench.runner.control import RunControl
    from structbench.runner.run import Run, model_context, needs_model_context, prepare
    from structbench.runner.workers import worker_count

    BACKENDS.get(spec.backend)  # an unknown backend fails before any data is loaded
    costs = settings.costs or Costs()
    budget = _budget(costs, spec, settings)  # so do prices without the model, a budget in several processes
    the_run = Run(run_dir, config)  # so does a run directory holding another configuration, or an unwritable one
    backend, context = None, None
    if needs_model_context(config):  # a benchmark leaves out what cannot fit the model's context: ask first
        backend = make_backend(spec)
        context = model_context(backend)
        if context is not None:
            typer.echo(f"note: the model's context is {context} tokens: prompts built to larger token budgets are "
                       "left out", err=True)
    data = DataContext.from_env(config.data_dir, offline=settings.offline, allow_modified=config.allow_modified_data)
    selections = prepare(config, data, context)
    if data.modified:
        files = ", ".join(f"{m.dataset}/{m.path}" for m in data.modified[:3])
        files += " ..." if len(data.modified) > 3 else ""
        typer.echo(f"note: {len(data.modified)} data file(s) differ from their release and are used as given "
                   f"(--allow-modified-data): {files}; manifest.json lists them (modified_data)", err=True)
    backend = backend or make_backend(spec)
    workers = settings.workers
    cluster = None
    if settings.executor == ExecutorChoice.ray:
        from structbench.runner.cluster import Cluster

        cluster = Cluster(spec, address=settings.ray_address, actors=workers, offline=settings.offline,
                          gpus_per_worker=settings.ray_gpus_per_worker)
    else:
        workers = worker_count(backend, workers)
    if costs.one_process:
        workers = 1
    control = RunControl(settings.max_consecutive_failures, settings.on_cache_error, budget=budget)
    response_cache = (None if settings.no_cache
                      else _open_cache(settings.cache or cache_root() / "responses.sqlite", control))
    try:
        metrics = the_run.execute(
            backend,
            selections,
            cache=response_cache,
            concurrency=spec.concurrency,
            progress=settings.progress,
            progress_interval=settings.progress_every,
            control=control,
            workers=workers or 1,
            cluster=cluster,
            model_context=context,
            modified_data=data.modified,
            prices=costs.prices,
            batch=BatchSettings(poll=costs.batch_poll) if costs.batch else None,
        )
    except KeyboardInterrupt:
        typer.echo(f"interrupted; finished samples are saved in {run_dir}, the same command resumes", err=True)
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    except Terminated:
        typer.echo(f"terminated (SIGTERM); finished samples are saved in {run_dir}, the same command resumes",
                   err=True)
        raise typer.Exit(ExitCode.TERMINATED) from None
    finally:
        if response_cache is not None:
            response_cache.close()
    return the_run, metrics


def _budget(costs: Costs, spec: BackendSpec, settings: RunSettings) -> Any:
    """The run's ``Budget``, after checking what the cost settings need: a price for the model, one process, a
    backend with a batch API."""
    from structbench.runner.budget import Budget

    if costs.prices is not None:
        costs.prices.require([spec.label])
    if costs.one_process:
        if settings.executor == ExecutorChoice.ray:
            raise UsageError("--batch, --max-cost and --max-tokens-total count every call in one process: drop "
                             "--executor ray")
        if settings.workers is not None and settings.workers > 1:
            typer.echo(f"note: --workers {settings.workers}: --batch, --max-cost and --max-tokens-total count every "
                       "call in one process; running in one (--concurrency still applies)", err=True)
    if costs.batch:
        from structbench.batch.providers import PROVIDERS

        if spec.backend not in PROVIDERS:
            raise UsageError(f"--batch: the {spec.backend} backend has no batch API (openai and anthropic have one)")
    return Budget(costs.max_cost, costs.max_tokens_total, costs.prices)


def _summary(the_run: Run, metrics: MetricsFile, suite: str | None) -> str:
    """The paragraph after the table: the model and suite that ran, and how to read each score (``report.summary``);
    ``suite`` describes the suite where the command knows it (the default one)."""
    import shutil

    from structbench.benchmarks import BENCHMARKS
    from structbench.report.summary import answer_counts, run_summary, suite_text

    if suite is None:
        entries: dict[tuple[str, str], tuple[list[str], int]] = {}
        for r in metrics.results:
            samples = r.n + r.harness_errors + r.too_long
            strategies = entries.setdefault((r.benchmark, r.variant), ([], samples))[0]
            strategies += [r.strategy] if r.strategy not in strategies else []  # once, however many sweep cells
        suite = suite_text([(BENCHMARKS.get(b).title, b, v, s, n) for (b, v), (s, n) in entries.items()])
    width = min(100, max(40, shutil.get_terminal_size((100, 24)).columns))
    return "\n" + run_summary(the_run.model_title, suite, metrics, answer_counts(the_run.records), width=width) + "\n"


def _echo_failures(the_run: Run) -> None:
    from structbench.runner.failures import failure_summary
    from structbench.runner.store import SAMPLES

    typer.echo(
        failure_summary(
            the_run.failures,
            the_run.samples,
            details=f"every message is in {the_run.run_dir / SAMPLES} (fields error, error_kind)",
            retry="running the same command again retries exactly the failed samples",
        ),
        err=True,
    )


def _echo_exclusions(metrics: Any) -> None:
    """One stderr line per benchmark variant that left samples out, with the reasons (``extra.excluded``), and per
    entry whose prompts did not fit the model's context (``too_long``)."""
    from structbench.results import EXCLUDED, TOO_LONG_MEANING

    for r in metrics.results:
        if r.too_long:
            typer.echo(f"note: {r.benchmark}:{r.variant}/{r.strategy}: {r.too_long} sample(s) {TOO_LONG_MEANING} "
                       "(metrics.json: too_long; samples.jsonl: error_kind context)", err=True)
    seen = set()
    for r in metrics.results:
        excluded = r.extra.get(EXCLUDED)
        key = (r.benchmark, r.variant, str(excluded))
        if not excluded or key in seen:
            continue
        seen.add(key)
        reasons = "; ".join(f"{e['count']} {e['reason']}" for e in excluded)
        typer.echo(f"note: {r.benchmark}:{r.variant} left out: {reasons} (metrics.json: extra.excluded)", err=True)


def _echo_usage(metrics: MetricsFile) -> None:
    """The run's tokens and cost, in one line after the table (stdout: part of what the run reports)."""
    from structbench.usage import totals_text

    if metrics.usage is not None:
        typer.echo(f"tokens: {totals_text(metrics.usage, metrics.prices)}")


def _echo_cut_off(metrics: Any) -> None:
    """One stderr line per result whose samples got no answer because the replies ran out of tokens inside the
    model's thought (``reasoning_cut_off``): a reasoning model given a non-reasoning model's budget."""
    from structbench.report.markdown import cut_off_note

    for r in metrics.results:
        note = cut_off_note(r)
        if note is not None:
            typer.echo(f"note: {r.benchmark}:{r.variant}/{r.strategy}: {note} (metrics.json: reasoning_cut_off)",
                       err=True)


def _open_cache(path: Path, control: RunControl) -> ResponseCache | None:
    """The response cache, or None when it cannot be opened and ``--on-cache-error continue`` was given."""
    from structbench.runner.cache import ResponseCache

    try:
        return ResponseCache(path)
    except StorageError as err:
        if control.on_cache_error == "stop":
            raise StorageError(f"{err}; pass --on-cache-error continue (or --no-cache) to run without it") from err
        typer.echo(f"warning: {err}; running without the response cache (--on-cache-error continue)", err=True)
        return None


class ExportFormat(StrEnum):
    """``export --format``."""

    jsonl = "jsonl"
    parquet = "parquet"
    hf = "hf"


@app.command()
def export(
    bench: BenchArg,
    out: Annotated[Path, typer.Option("--out", help="File to write (a folder for --format hf).")],
    limit: LimitOpt = None,
    seed: SeedOpt = 0,
    strategy: StrategyOpt = None,
    option: OptionOpt = None,
    data_dir: DataDirOpt = None,
    allow_modified_data: ModifiedDataOpt = False,
    format: Annotated[
        ExportFormat,
        typer.Option("--format", "-f", help="jsonl (JSON lines), parquet (typed columns), or hf (a Hugging Face "
                     "datasets folder: datasets.load_dataset(OUT))."),
    ] = ExportFormat.jsonl,
    preset: PresetScoreOpt = None,
) -> None:
    """Write each sample's prompt (the strategy's first model call), gold, meta and fingerprint: JSON lines, Parquet,
    or a Hugging Face datasets folder."""
    from structbench.runner.export import export_lines

    if preset is not None:
        bench, strategy, option = _preset_entry(preset, bench, strategy, option)
    b, variant, samples, strat, settings = _load_one(bench, strategy, option, limit, seed, data_dir,
                                                     allow_modified_data)
    lines = export_lines(b, variant, samples, strat, settings)
    if format != ExportFormat.jsonl:
        _export_arrow(format, lines, out, f"{b.title}: {b.name}:{variant}, strategy {strat.name}", settings.flags())
    else:
        with atomic_path(out) as tmp, tmp.open("w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    typer.echo(f"wrote {len(samples)} samples to {out}")


def _export_arrow(format: ExportFormat, lines: Any, out: Path, title: str, flags: str) -> None:
    """``--format parquet`` or ``hf`` (needs ``pip install 'structbench[datasets]'``)."""
    try:
        from structbench.runner import tabular
    except ImportError as err:
        raise UsageError(f"--format {format.value} needs pyarrow: pip install 'structbench[datasets]' ({err})"
                         ) from None
    if format == ExportFormat.parquet:
        tabular.write_parquet(lines, out)
    else:
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out}: --format hf writes a folder; this is a file")
        description = (f"Exported with `structbench export {flags} --format hf`. Score a model's outputs with "
                       f"`structbench score {flags} --predictions FILE` (lines with `id`, `fingerprint`, `output`).")
        tabular.write_hf_dataset(lines, out, title=title, description=description)


@app.command()
def score(
    bench: BenchArg,
    predictions: Annotated[
        Path, typer.Option("--predictions", "-p", help="JSON lines, Parquet, or an export --format hf folder, with "
                           "'id', 'fingerprint' and 'output'.")
    ],
    strategy: StrategyOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write metrics JSON here.")] = None,
    limit: LimitOpt = None,
    seed: SeedOpt = 0,
    option: OptionOpt = None,
    data_dir: DataDirOpt = None,
    allow_modified_data: ModifiedDataOpt = False,
    model: Annotated[str, typer.Option(help="Model name to record in the results.")] = "predictions",
    unchecked: Annotated[
        bool,
        typer.Option("--unchecked", help="Score lines without a 'fingerprint' by id alone (not recommended)."),
    ] = False,
    preset: PresetScoreOpt = None,
) -> None:
    """Parse and score raw model outputs with the benchmark's own parser and metrics; with --preset, as the paper's
    released code parsed and scored them (structbench's corrected scores are recorded beside)."""
    from structbench.report.markdown import render
    from structbench.results import MetricsFile
    from structbench.runner.export import read_predictions, score_predictions
    from structbench.runner.failures import Failure, failure_summary
    from structbench.runner.store import write_json_atomic

    if preset is not None:
        bench, strategy, option = _preset_entry(preset, bench, strategy, option)
    preds = read_predictions(predictions)
    b, variant, samples, strat, settings = _load_one(bench, strategy, option, limit, seed, data_dir,
                                                     allow_modified_data)
    failures: list[Failure] = []
    entry = score_predictions(b, variant, samples, strat, preds, source=predictions, model=model,
                              settings=settings, require_fingerprint=not unchecked, on_failure=failures.append)
    metrics = MetricsFile(results=[entry])
    _print_markdown(render(metrics, title=f"scores of {predictions}"))
    if entry.missing:
        typer.echo(f"warning: {len(entry.missing)} sample(s) missing from {predictions}, counted as wrong", err=True)
    _echo_exclusions(metrics)
    _echo_cut_off(metrics)
    if out is not None:
        write_json_atomic(out, metrics.model_dump(mode="json"))
    if failures:
        typer.echo(
            failure_summary(
                failures,
                len(samples),
                details="they are counted in harness_errors and left out of the metrics",
                retry="scoring again after a fix of the benchmark retries them",
            ),
            err=True,
        )
        raise typer.Exit(ExitCode.FAILED_SAMPLES)


app.command("report")(report_cmds.report)
app.command("compare")(report_cmds.compare)
app.command("convert")(interop_cmds.convert)
app.command("publish")(interop_cmds.publish)
app.command("batches")(batches_cmd.batches)


def _load_one(
    entry: str, strategy: str | None, option: list[str] | None, limit: int | None, seed: int, data_dir: Path | None,
    allow_modified_data: bool = False,
) -> tuple[Any, str, list[Any], Any, Any]:
    """The benchmark, variant, samples and strategy of ``export``/``score``, and the settings that pick them."""
    from structbench.benchmarks import BENCHMARKS
    from structbench.datasets import DataContext
    from structbench.runner.config import check_limit, check_options_used, parse_options, split_bench
    from structbench.runner.export import ExportSettings
    from structbench.runner.run import load_benchmark, load_samples

    check_limit(limit)
    options = parse_options(option or [])
    check_options_used([BENCHMARKS.get(split_bench(entry)[0])], options)
    bench, variant = load_benchmark(entry, options)
    strat = bench.strategy(strategy)
    samples = load_samples(bench, variant, DataContext.from_env(data_dir, allow_modified=allow_modified_data),
                           seed=seed, limit=limit)
    settings = ExportSettings(bench=f"{bench.name}:{variant}", strategy=strat.name, seed=seed, limit=limit,
                              options=options)
    return bench, variant, samples, strat, settings


def _print_markdown(text: str) -> None:
    if sys.stdout.isatty():
        from rich.markdown import Markdown

        _console().print(Markdown(text))
    else:
        typer.echo(text)


STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES})
PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.EISDIR, errno.ENOTDIR})


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated()


def main() -> None:
    """Entry point: known failures print one line (secrets redacted) and exit with their ``ExitCode``; a bug
    prints its traceback (redacted too) and exits 1; SIGTERM ends like Ctrl-C, with 143."""
    signal.signal(signal.SIGTERM, _terminate)
    _redact_logs()
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("interrupted (Ctrl-C)", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except Terminated:
        typer.echo("terminated (SIGTERM)", err=True)
        sys.exit(ExitCode.TERMINATED)
    except StructbenchError as err:
        typer.echo(redact(f"error: {err}"), err=True)
        sys.exit(err.exit_code)
    except OSError as err:
        if err.errno in PATH_ERRNOS:  # a path given that cannot name the file wanted: the user's to fix
            typer.echo(redact(f"error: {err.filename or ''}: {err.strerror}"), err=True)
            sys.exit(ExitCode.USAGE)
        if err.errno not in STORAGE_ERRNOS:
            _crash()
        where = f"{err.filename}: " if err.filename else ""
        typer.echo(redact(f"error: {where}cannot be written: {err.strerror}"), err=True)
        sys.exit(ExitCode.STORAGE)
    except Exception:
        _crash()


def _redact_logs() -> None:
    """Log warnings to stderr as Python would without a handler, with secrets redacted."""
    import logging

    class Redacting(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return redact(super().format(record))

    handler = logging.StreamHandler()
    handler.setLevel(logging.WARNING)
    handler.setFormatter(Redacting("%(message)s"))
    logging.getLogger().addHandler(handler)


def _crash() -> None:
    typer.echo(redact(traceback.format_exc()), err=True)
    sys.exit(ExitCode.INTERNAL)
