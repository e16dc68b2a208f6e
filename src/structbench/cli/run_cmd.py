"""``structbench run``: evaluate a model (or each model of a suite file) through ``structbench.api``; every flag of
the command is defined here, in ``run``'s signature, and this module only reads them, calls the API and prints."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from structbench.api import DEFAULT_MAX_REPLY_MB, DEFAULT_MODEL, DEFAULT_SUITE_TITLE
from structbench.backends.factory import DEFAULT_TIMEOUT
from structbench.cli.common import (
    DataDirOpt,
    LimitOpt,
    ModifiedDataOpt,
    OptionOpt,
    SeedOpt,
    comma_list,
    echo_cut_off,
    echo_exclusions,
    echo_failures,
    echo_usage,
    interrupted,
    path_value,
    print_markdown,
    shown_urls,
)
from structbench.errors import ExitCode, UsageError
from structbench.runner.session import MAX_CONSECUTIVE_FAILURES

if TYPE_CHECKING:
    from structbench.api import EvalResult


class ExecutorChoice(StrEnum):
    """``--executor``."""

    local = "local"
    ray = "ray"


class CacheErrorChoice(StrEnum):
    """``--on-cache-error``."""

    stop = "stop"
    continue_ = "continue"


SUITE_DEFINED = ("model", "bench", "strategy", "option", "limit", "seed", "max_tokens", "base_url", "model_option",
                 "device", "dtype", "api_key_env", "timeout", "max_retries", "resume", "data_dir", "concurrency",
                 "system_prompt", "chat_template_arg", "reasoning_budget", "reasoning_effort", "think_tags",
                 "thought_opened", "allow_modified_data", "epochs", "temperature", "top_p", "sample", "sample_id",
                 "sweep")
"""``run`` flags a suite file sets (per model or for the whole suite): refused beside one. How the jobs are spread
(``--workers``, ``--executor``, ``--ray-*``) is not among them: it applies to every model of the suite."""


def _typed(ctx: typer.Context, name: str) -> bool:
    """Whether flag ``name`` was given on the command line (ParameterSource.COMMANDLINE, compared by name: typer
    vendors click)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _resume_conflicts(ctx: typer.Context, resume: Path, config: Any, given: dict[str, Any]) -> list[str]:
    """The run-defining flags given on the command line whose values differ from the resumed run's."""
    from structbench.api import bench_entries, preset_config
    from structbench.cells import parse_sweeps
    from structbench.runner.config import parse_model_options, parse_options, parse_template_args, parse_think_tags
    from structbench.runner.sweep import preset_sweeps

    def typed(name: str) -> bool:
        return _typed(ctx, name)

    same = {
        "model": lambda v: v == config.model,
        "base_url": lambda v: v is not None and shown_urls(v) == config.base_url,
        "bench": lambda v: bench_entries(v) == config.benches,
        "strategy": lambda v: comma_list(v) == config.strategies,
        "option": lambda v: given["preset"] is not None or parse_options(v or []) == config.options,
        "sweep": lambda v: (preset_sweeps(given["preset"], parse_sweeps(v or [])) if given["preset"] is not None
                            else parse_sweeps(v or [])) == config.sweeps,
        "limit": lambda v: v == config.limit,
        "sample": lambda v: v == config.sample,
        "sample_id": lambda v: comma_list(v) == (config.sample_ids or []),
        "temperature": lambda v: v == config.generation.temperature,
        "top_p": lambda v: v == config.generation.top_p,
        "seed": lambda v: v == config.seed,
        "epochs": lambda v: v == config.epochs,
        "max_tokens": lambda v: v == config.max_tokens,
        "data_dir": lambda v: str(v) == config.data_dir,
        "allow_modified_data": lambda v: v == config.allow_modified_data,
        "preset": lambda v: preset_config(v, parse_options(given["option"] or [])) == (
            config.benches, config.strategies, config.options),
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
        typer.Option("--preset", "-p", help="Run one paper table's configuration, or a robustness grid "
                                             "(robust-<bench>; structbench list shows them)."),
    ] = None,
    option: OptionOpt = None,
    sweep: Annotated[
        list[str] | None,
        typer.Option("--sweep", help="Run a benchmark option at several values, KEY=V1,V2,... or BENCH.KEY=V1,V2,... "
                                     "(repeatable: the grid of all), in one run compared in its robustness section."),
    ] = None,
    limit: LimitOpt = None,
    sample: Annotated[
        int | None,
        typer.Option("--sample", min=1, help="Evaluate a random N samples of each benchmark, drawn with --seed and "
                                             "kept in order (part of the config; --limit takes the first N)."),
    ] = None,
    sample_id: Annotated[
        str | None,
        typer.Option("--sample-id", help="Evaluate only these samples: ID[,ID...] (part of the config)."),
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", min=1, help="Cap every request's max_tokens (part of the config).")
    ] = None,
    temperature: Annotated[
        float | None,
        typer.Option("--temperature", min=0.0, help="Sampling temperature of every request, replacing the "
                                                   "benchmark's and strategy's own (part of the config)."),
    ] = None,
    top_p: Annotated[
        float | None,
        typer.Option("--top-p", help="Nucleus sampling of every request, in (0, 1] (part of the config)."),
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
        typer.Option("--output-dir", "--out", help="Run directory (default runs/<model>-<config hash>).",
                     show_default=False),
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
    from structbench.api import Connection, RunSettings, configure, default_run_dir, is_default_suite, run
    from structbench.api import resume as resume_run
    from structbench.cells import parse_sweeps
    from structbench.runner.config import parse_model_options, parse_options, parse_template_args, parse_think_tags
    from structbench.runner.session import costs_of

    out_dir = path_value(out, "--out")
    settings = RunSettings(
        cache=cache, no_cache=no_cache, on_cache_error=on_cache_error.value, offline=offline,
        progress=progress, progress_every=progress_every, max_consecutive_failures=max_consecutive_failures,
        workers=workers, executor=executor.value, ray_address=ray_address,
        ray_gpus_per_worker=ray_gpus_per_worker,
        costs=costs_of(prices, max_cost, max_tokens_total, batch, batch_poll),
    )
    if suite is not None:
        from structbench.cli.suite_cmd import run_suite

        typed = [f"--{name.replace('_', '-')}" for name in SUITE_DEFINED if _typed(ctx, name)]
        if typed:
            raise UsageError(f"{suite} defines the models and benchmarks; {', '.join(typed)} cannot be given with a "
                             "suite file (--out, --cache, --no-cache, --offline, --progress and the like can)")
        code = run_suite(suite, out_dir, settings, max_reply_mb=max_reply_mb)
        if code != ExitCode.OK:
            raise typer.Exit(code)
        return

    connection = Connection(base_url, api_key_env, concurrency, timeout, max_retries, max_reply_mb)
    if resume is not None:
        from structbench.manifest import read_manifest

        manifest = read_manifest(resume)
        if manifest is not None:
            given = {"model": model, "base_url": base_url, "bench": bench, "strategy": strategy, "option": option,
                     "sweep": sweep, "limit": limit, "sample": sample, "sample_id": sample_id,
                     "temperature": temperature, "top_p": top_p, "seed": seed, "epochs": epochs,
                     "max_tokens": max_tokens, "data_dir": data_dir, "out": out,
                     "preset": preset, "model_option": model_option, "device": device, "dtype": dtype,
                     "system_prompt": system_prompt, "chat_template_arg": chat_template_arg,
                     "reasoning_budget": reasoning_budget, "reasoning_effort": reasoning_effort,
                     "think_tags": think_tags, "thought_opened": thought_opened,
                     "allow_modified_data": allow_modified_data}
            conflicts = _resume_conflicts(ctx, resume, manifest.config, given)
            if conflicts:
                raise UsageError(
                    f"--resume {resume} continues that run as its manifest defines it; "
                    f"{', '.join(conflicts)} would change it (start a new run instead, or drop them; "
                    "--concurrency, --timeout, --max-retries, --cache and the like may be given)"
                )
        with interrupted(resume):
            result = resume_run(resume, connection=connection, settings=settings, notify=echo_err)
    else:
        config = configure(
            model,
            bench,
            strategy=strategy,
            preset=preset,
            options=parse_options(option or [], output="--output-dir"),
            sweep=parse_sweeps(sweep or []),
            limit=limit,
            sample=sample,
            sample_ids=sample_id,
            temperature=temperature,
            top_p=top_p,
            seed=seed,
            epochs=epochs,
            data_dir=data_dir,
            allow_modified_data=allow_modified_data,
            base_url=base_url,
            model_options=parse_model_options(model_option or [])
            | {key: value for key, value in (("device", device), ("dtype", dtype)) if value is not None},
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            chat_template_args=parse_template_args(chat_template_arg or []),
            reasoning_budget=reasoning_budget,
            reasoning_effort=reasoning_effort,
            think_tags=parse_think_tags(think_tags or []),
            thought_opened=thought_opened,
        )
        run_dir = out_dir or default_run_dir(config)
        with interrupted(run_dir):
            result = run(config, out=run_dir, connection=connection, settings=settings, notify=echo_err)
    from structbench.report.markdown import headline_table  # after the run: the report's modules bring numpy

    print_markdown(headline_table(result.metrics))
    typer.echo(_summary(result, DEFAULT_SUITE_TITLE if is_default_suite(result.config) else None))
    typer.echo(f"run directory: {result.run_dir}")
    echo_usage(result.metrics)
    echo_exclusions(result.metrics)
    echo_cut_off(result.metrics)
    if result.failures:
        echo_failures(result.failures, result.run_dir, len(result.records))
        raise typer.Exit(ExitCode.FAILED_SAMPLES)


def echo_err(line: str) -> None:
    typer.echo(line, err=True)


def _summary(result: EvalResult, suite: str | None) -> str:
    """The paragraph after the table: the model and suite that ran, and how to read each score (``report.summary``);
    ``suite`` describes the suite where the command knows it (the default one)."""
    import shutil

    from structbench.benchmarks import BENCHMARKS
    from structbench.report.summary import answer_counts, run_summary, suite_text

    metrics = result.metrics
    if suite is None:
        entries: dict[tuple[str, str], tuple[list[str], int]] = {}
        for r in metrics.results:
            samples = r.n + r.harness_errors + r.too_long
            strategies = entries.setdefault((r.benchmark, r.variant), ([], samples))[0]
            strategies += [r.strategy] if r.strategy not in strategies else []  # once, however many sweep cells
        suite = suite_text([(BENCHMARKS.get(b).title, b, v, s, n) for (b, v), (s, n) in entries.items()])
    width = min(100, max(40, shutil.get_terminal_size((100, 24)).columns))
    return "\n" + run_summary(result.model_title, suite, metrics, answer_counts(result.records), width=width) + "\n"
