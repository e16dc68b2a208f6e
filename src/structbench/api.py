"""structbench from Python: ``evaluate`` a model on benchmarks (``evaluate_suite`` for a suite file) and get typed
results back, the run directory written as ``structbench run`` writes it. The command line is a layer over these.

    import structbench

    run = structbench.evaluate("oracle", "scitab", limit=30, out="runs/oracle-scitab")
    run.results[0].headline, run.results[0].interval, run.results[0].n

``evaluate`` is ``configure`` (what decides the results: a ``RunConfig``, checked as the command's flags are) then
``run`` (one run directory filled, resuming what an earlier call finished). Errors are typed as everywhere in
structbench (``UsageError``, ``DataError``, ``StorageError``, ``RunStoppedError`` ...: ``structbench.errors``);
samples whose model call failed for good are no error: they are the result's ``failures``, and calling again
retries exactly them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench.backends.factory import DEFAULT_MAX_REPLY_BYTES, DEFAULT_TIMEOUT, BackendSpec
from structbench.errors import BudgetError, RunStoppedError, UsageError
from structbench.runner.session import (
    MAX_CONSECUTIVE_FAILURES,
    Costs,
    Executor,
    Notify,
    RunSettings,
    execute,
    to_stderr,
)

if TYPE_CHECKING:  # the rest loads on first use: the command's --help imports this module
    from structbench.interop.trackers import Tracking
    from structbench.interop.trackers.log import Outcome
    from structbench.manifest import Manifest
    from structbench.results import MetricsFile, ResultEntry, Robustness
    from structbench.runconfig import Generation, Reasoning, RunConfig
    from structbench.runner.control import CacheErrorPolicy
    from structbench.runner.failures import Failure
    from structbench.runner.run import Kept, Run

__all__ = [
    "DEFAULT_MODEL",
    "Connection",
    "Costs",
    "EvalResult",
    "Result",
    "RunSettings",
    "SuiteResult",
    "SuiteRun",
    "configure",
    "evaluate",
    "evaluate_suite",
    "log",
    "log_settings",
    "resume",
    "run",
]

DEFAULT_MODEL = "llamacpp"
"""The embedded model (Gemma 3 270M on llama.cpp), what runs without a ``model``."""
DEFAULT_SUITE = ["structfact:generated"]
"""What runs without ``bench``: StructFact questions over a fictional world (no download, facts no model has seen),
few-shot with A/B/C options, so even the embedded base model answers with a parseable option letter (constrained
decoding where the backend has it) and its score can be read against the chance and majority baselines beside it."""
DEFAULT_STRATEGIES = ["few_shot"]
DEFAULT_OPTIONS = {"structfact.tables": "synthetic", "structfact.per_task": "6", "structfact.answer": "constrained"}
"""Six questions per task (30 in all, about a minute on two CPU cores); given options win."""
DEFAULT_SUITE_TITLE = (
    "the default quick suite: StructFact's generated variant, 30 claims about tables of a fictional world (six per "
    "reasoning task) to be judged Yes, No or Not sure (options A, B, C), few-shot, the reply constrained to one "
    "option letter where the backend can"
)
"""What the default suite evaluates, as the summary after the table says it."""
DEFAULT_MAX_REPLY_MB = DEFAULT_MAX_REPLY_BYTES / 2**20


@dataclass(frozen=True)
class Connection:
    """How the model is reached (none of it changes the results, so none of it is in the run's configuration)."""

    base_url: str | None = None
    """An OpenAI-compatible server's URL (several replicas of one model: ``URL,URL,...``); a password in it is used,
    never stored."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the API key (the key itself is never passed, logged or stored)."""
    concurrency: int = 8
    """Samples in flight at once."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds a model request may take, waiting in the server's queue included."""
    max_retries: int = 6
    max_reply_mb: float = DEFAULT_MAX_REPLY_MB
    """Largest reply body read from a server (MiB); a larger one is an error."""

    def __post_init__(self) -> None:
        from structbench.runner.arguments import check_arguments

        check_arguments(asdict(self), caller="Connection")

    def spec(self, config: RunConfig) -> BackendSpec:
        """The backend of ``config`` reached this way."""
        return BackendSpec.parse(
            config.model,
            base_url=self.base_url or config.base_url,  # the password, if any, is only given here
            api_key_env=self.api_key_env,
            concurrency=self.concurrency,
            timeout=self.timeout,
            max_retries=self.max_retries,
            max_reply_bytes=int(self.max_reply_mb * 2**20),
            options=config.model_options,
        )


@dataclass(frozen=True)
class Result:
    """One (benchmark, variant, strategy, model) of a run: its headline with interval and ``n``; ``entry`` is the
    whole ``metrics.json`` entry (every metric, breakdowns, baselines, errors, exclusions ...)."""

    benchmark: str
    variant: str
    strategy: str
    model: str
    metric: str
    """The headline metric's name (the benchmark's ``headline``)."""
    headline: float | None
    """Its value; None when no sample was scored (never an invented 0)."""
    interval: tuple[float, float] | None
    """Its bootstrap interval (``confidence``), resampling the benchmark's clusters; None when none was computed."""
    confidence: float | None
    n: int
    """Samples scored."""
    entry: ResultEntry = field(repr=False)
    cell: str = ""
    """The sweep's cell (``key=value;...``, ``structbench.cells``); ``""`` in a run without a sweep."""

    @classmethod
    def of(cls, entry: ResultEntry) -> Result:
        h = entry.headline
        interval = (h.ci_low, h.ci_high) if h.ci_low is not None and h.ci_high is not None else None
        return cls(entry.benchmark, entry.variant, entry.strategy, entry.model, h.name, h.value, interval,
                   h.confidence, entry.n, entry, entry.cell)


@dataclass(frozen=True)
class EvalResult:
    """A finished run: its results, and where everything else is (``run_dir``: manifest, samples, metrics)."""

    run_dir: Path
    config: RunConfig
    manifest: Manifest
    """``manifest.json``: the configuration, the backend, the sessions, the packages."""
    metrics: MetricsFile
    """``metrics.json``."""
    results: list[Result]
    failures: list[Failure]
    """Samples whose model call failed for good (or that a bug kept from being scored): counted as the metrics say;
    evaluating again retries exactly them."""
    records: Sequence[Kept] = field(repr=False)
    """Every current sample's record, without its texts (``samples.jsonl`` has them); a run's records are built as
    they are read (``runner.kept.RecordView``), so a large run hands them out without holding them."""
    model_title: str = ""
    """The model as a reader knows it (``Backend.title``)."""
    notes: list[str] = field(default_factory=list)
    """The run's notes and warnings, as they were printed."""

    def result(self, bench: str | None = None, strategy: str | None = None, cell: str | None = None) -> Result:
        """The one result of ``bench`` (``BENCH`` or ``BENCH:VARIANT``), ``strategy`` and sweep ``cell`` (its
        ``key=value;...`` name); a ``UsageError`` unless exactly one matches."""
        name, _, variant = (bench or "").partition(":")
        found = [r for r in self.results if (not name or r.benchmark == name) and (not variant or r.variant == variant)
                 and (strategy is None or r.strategy == strategy) and (cell is None or r.cell == cell)]
        if len(found) != 1:
            have = ", ".join(f"{r.benchmark}:{r.variant}/{r.strategy}" + (f" [{r.cell}]" if r.cell else "")
                             for r in self.results)
            asked = f"{bench or '*'}/{strategy or '*'}" + (f" [{cell}]" if cell is not None else "")
            raise UsageError(f"{len(found)} results match {asked} (results: {have})")
        return found[0]

    @property
    def robustness(self) -> list[Robustness]:
        """A sweep's cells compared with its reference cell, per benchmark, strategy and model (``metrics.json``'s
        ``robustness``); empty without a sweep."""
        return list(self.metrics.robustness)


def _option_text(value: object) -> str:
    """An option's value as ``--option KEY=VALUE`` writes it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def bench_entries(bench: str | Sequence[str] | None) -> list[str] | None:
    """``bench`` as ``BENCH[:VARIANT]`` entries, once each in order; ``all`` stands for every registered benchmark."""
    from structbench.benchmarks import BENCHMARKS
    from structbench.plugins import warn_plugin

    if bench is None:
        return None
    items = bench.split(",") if isinstance(bench, str) else list(bench)
    entries = list(dict.fromkeys(e.strip() for e in items if e.strip()))
    every = [name for name, _ in BENCHMARKS.usable(warn_plugin)] if "all" in entries else []
    return list(dict.fromkeys(n for e in entries for n in (every if e == "all" else [e])))


def _names(value: str | Sequence[str] | None) -> list[str]:
    items = (value.split(",") if isinstance(value, str) else list(value)) if value else []
    return list(dict.fromkeys(v.strip() for v in items if v.strip()))


def preset_config(name: str, options: Mapping[str, str]) -> tuple[list[str], list[str], dict[str, str]]:
    """Preset ``name`` (a paper table's or a robustness grid's) as benches, strategies and options; ``options`` may
    add what the preset leaves open (a data path, a tokenizer), not change what it sets."""
    from structbench.papers.registry import find_preset

    preset = find_preset(name)
    merged = dict(preset.options)
    for key, value in options.items():
        bare = key.partition(".")[2] or key
        fixed = preset.options.get(key, preset.options.get(bare))
        if fixed is not None and fixed != value:
            raise UsageError(f"--option {key}={value}: preset {name} runs the paper's {bare}={fixed}")
        merged[key] = value
    return list(preset.benches), list(preset.strategies), merged


def sweep_values(sweep: Mapping[str, str | Sequence[object]] | None) -> dict[str, list[str]]:
    """``sweep`` as ``RunConfig.sweeps``: each key's values as a list or one comma-separated string (``--sweep``'s
    ``V1,V2,...``); a value that cannot name a cell is a usage error."""
    from structbench.cells import VALUES, check_sweep_values

    out: dict[str, list[str]] = {}
    for key, values in (sweep or {}).items():
        items = values.split(VALUES) if isinstance(values, str) else [_option_text(v) for v in values]
        out[str(key).strip()] = [v.strip() for v in items if v.strip()]
    check_sweep_values(out)
    return out


def _generation(temperature: float | None, top_p: float | None) -> Generation:
    """The run's sampling settings; a bad value is a usage error naming its flag."""
    from pydantic import ValidationError

    from structbench.runconfig import Generation

    try:
        return Generation(temperature=temperature, top_p=top_p)
    except ValidationError as err:
        problem = err.errors()[0]
        flag = "--" + str(problem["loc"][0]).replace("_", "-")
        raise UsageError(f"{flag} {problem['input']}: {problem['msg'].lower()}") from None


def _reasoning(budget: int, effort: str | None, tags: Sequence[tuple[str, str]] | None, opened: bool,
               flags: bool = True) -> Reasoning:
    """The run's ``Reasoning``; a bad value is a usage error naming the setting (its flag, with ``flags``)."""
    from pydantic import ValidationError

    from structbench.runconfig import Reasoning

    try:
        return Reasoning(budget=budget, effort=effort, tags=list(tags) if tags is not None else None, opened=opened)
    except ValidationError as err:
        problem = err.errors()[0]
        name = {"effort": "reasoning_effort", "tags": "think_tags"}.get(str(problem["loc"][0]), "reasoning_budget")
        flag = "--" + name.replace("_", "-") if flags else f"configure({name}={problem['input']!r})"
        raise UsageError(f"{flag}: {problem['msg'].removeprefix('Value error, ')}") from None


def configure(
    model: str = DEFAULT_MODEL,
    bench: str | Sequence[str] | None = None,
    *,
    strategy: str | Sequence[str] | None = None,
    preset: str | None = None,
    options: Mapping[str, object] | None = None,
    sweep: Mapping[str, str | Sequence[object]] | None = None,
    limit: int | None = None,
    sample: int | None = None,
    sample_ids: str | Sequence[str] | None = None,
    seed: int = 0,
    epochs: int = 1,
    data_dir: str | Path | None = None,
    allow_modified_data: bool = False,
    base_url: str | None = None,
    model_options: Mapping[str, object] | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    system_prompt: str | None = None,
    chat_template_args: Mapping[str, Any] | None = None,
    reasoning_budget: int = 0,
    reasoning_effort: str | None = None,
    think_tags: Sequence[tuple[str, str]] | None = None,
    thought_opened: bool = False,
    flag_words: bool = False,
    max_turns: int | None = None,
) -> RunConfig:
    """What decides a run's results, checked (an unknown benchmark, a bad option ... is a ``UsageError``).

    ``bench``: ``BENCH[:VARIANT]`` entries (a list or one comma-separated string; ``all``: every benchmark); None
    runs the default quick suite. ``strategy``: names for every benchmark, ``BENCH[:VARIANT]/NAME`` for one, or
    ``all``; None: each benchmark's default. ``preset``: one paper table's configuration (benchmarks, strategies
    and options; ``options`` may only add to it) or a robustness grid (``robust-<bench>``: its sweep too).
    ``options``: benchmark run options, ``KEY`` (every benchmark that has it) or ``BENCH.KEY``. ``sweep``: options
    evaluated at several values in one run (``{"serialization": ["csv", "json"]}`` or ``"csv,json"``; several keys:
    their grid), each cell compared with the reference cell in ``metrics.json``'s robustness. ``limit``: the first
    N samples of each benchmark; ``sample``: a random N of them, drawn with ``seed`` (kept in the benchmark's
    order); ``sample_ids``: only the samples with these ids.
    ``temperature`` and ``top_p`` replace every request's own (the benchmarks' and strategies' sampling included).
    ``max_turns``: model calls a tool loop (``-s tools``) makes at most per sample (None: each strategy's own).
    The rest are ``structbench run``'s flags of the same names. A bad argument is a ``UsageError`` naming it
    (``limit=0``; ``flag_words``: as the run command's flag, ``--limit 0``)."""
    from structbench.runconfig import RunConfig
    from structbench.runner.arguments import check_arguments, named

    check_arguments({
        "model": model, "bench": bench, "strategy": strategy, "preset": preset, "options": options, "sweep": sweep,
        "limit": limit, "sample": sample, "sample_ids": sample_ids, "seed": seed, "epochs": epochs,
        "data_dir": data_dir, "allow_modified_data": allow_modified_data, "base_url": base_url,
        "model_options": model_options, "max_tokens": max_tokens, "temperature": temperature, "top_p": top_p,
        "system_prompt": system_prompt, "chat_template_args": chat_template_args,
        "reasoning_budget": reasoning_budget, "reasoning_effort": reasoning_effort, "think_tags": think_tags,
        "thought_opened": thought_opened}, caller="configure", flags=flag_words)

    def arg(name: str, value: object) -> str:
        return named(name, value, flag_words)

    if sample is not None and limit is not None:
        raise UsageError(f"{arg('limit', limit)} takes the first samples and {arg('sample', sample)} a seeded random "
                         "set of them; give one")
    ids = _names(sample_ids) if sample_ids is not None else None
    if sample_ids is not None and not ids:
        raise UsageError(f"{arg('sample_ids', sample_ids)} names no sample; give ID[,ID...]")
    opts = {key: _option_text(value) for key, value in (options or {}).items()}
    strategies = _names(strategy)
    benches = bench_entries(bench)
    sweeps = sweep_values(sweep)
    if preset is not None:
        from structbench.runner.sweep import preset_sweeps

        if bench is not None or strategy is not None:
            drop = "--bench and --strategy" if flag_words else "bench and strategy"
            raise UsageError(f"{arg('preset', preset)} sets the benchmarks and strategies; drop {drop}")
        benches, strategies, opts = preset_config(preset, opts)
        sweeps = preset_sweeps(preset, sweeps)
    elif benches is None:
        benches = DEFAULT_SUITE
        strategies = strategies or DEFAULT_STRATEGIES
        opts = DEFAULT_OPTIONS | opts
    elif not benches:
        raise UsageError(f"{arg('bench', repr(bench) if flag_words else bench)} names no benchmark; give "
                         "BENCH[:VARIANT],... or 'all' (structbench list shows them)")
    if base_url is not None:
        from structbench.backends.openai_compat import shown_base_urls

        base_url = shown_base_urls(base_url)  # passwords [REDACTED]: the configuration is stored
    return RunConfig(
        model=model,
        base_url=base_url or None,
        benches=benches,
        strategies=strategies,
        options=opts,
        sweeps=sweeps,
        limit=limit,
        sample=sample,
        sample_ids=ids,
        seed=seed,
        epochs=epochs,
        data_dir=str(data_dir) if data_dir else None,
        allow_modified_data=allow_modified_data,
        max_tokens=max_tokens,
        model_options={key: _option_text(value) for key, value in (model_options or {}).items()},
        system_prompt=system_prompt or None,
        chat_template_args=dict(chat_template_args or {}),
        generation=_generation(temperature, top_p),
        reasoning=_reasoning(reasoning_budget, reasoning_effort, think_tags, thought_opened, flag_words),
        max_turns=max_turns,
    )


def is_default_suite(config: RunConfig) -> bool:
    """Whether ``config`` evaluates the default quick suite, unchanged."""
    return (config.benches, config.strategies, config.options, config.limit) == (
        DEFAULT_SUITE, DEFAULT_STRATEGIES, DEFAULT_OPTIONS, None)


def default_run_dir(config: RunConfig) -> Path:
    """``runs/<model>-<hash of the configuration>``: the same configuration finds the same directory."""
    from structbench.runner.run import default_run_dir as named

    return named(config)


def _check_executor(settings: RunSettings) -> None:
    if settings.executor == "ray":
        from structbench.runner.cluster import check_reachable

        # before any run directory is made: Ray would retry a dead address for minutes
        check_reachable(settings.ray_address or os.environ.get("RAY_ADDRESS"))


def _finished(the_run: Run, notes: list[str]) -> EvalResult:
    assert the_run.metrics is not None
    return EvalResult(
        run_dir=the_run.run_dir,
        config=the_run.config,
        manifest=the_run.manifest,
        metrics=the_run.metrics,
        results=[Result.of(e) for e in the_run.metrics.results],
        failures=list(the_run.failures),
        records=the_run.records,
        model_title=the_run.model_title,
        notes=notes,
    )


def _noting(notify: Notify | None) -> tuple[list[str], Notify]:
    """A list the notes are kept in, and the ``Notify`` that keeps each and passes it on (stderr by default)."""
    notes: list[str] = []
    shown = notify or to_stderr

    def note(line: str) -> None:
        notes.append(line)
        shown(line)

    return notes, note


def log_settings(log_to: str | Sequence[str] | None, options: Mapping[str, str] | None = None,
             samples: bool = False) -> Tracking | None:
    """Where finished runs are logged (``--log-to mlflow,wandb``, ``--log-option``, ``--log-samples``), checked before
    anything runs (an unknown tracker, a missing extra, an unknown option: ``UsageError``); None for none."""
    if not log_to and not options and not samples:
        return None
    from structbench.interop.trackers import Tracking

    return Tracking.of(log_to, options, samples)


def log(run_dir: str | Path, tracking: Tracking, notify: Notify | None = None) -> list[Outcome]:
    """Log a finished run to its trackers (``structbench.interop.trackers``); a tracker that fails is a warning on
    ``notify`` (the run is on disk either way), each outcome returned."""
    from structbench.interop.trackers.log import log_after_run

    return log_after_run(Path(run_dir), tracking, notify or to_stderr)


def run(
    config: RunConfig,
    *,
    out: str | Path | None = None,
    connection: Connection | None = None,
    settings: RunSettings | None = None,
    notify: Notify | None = None,
    tracking: Tracking | None = None,
) -> EvalResult:
    """Fill the run directory ``out`` (default ``runs/<model>-<config hash>``) with ``config``'s run, resuming what an
    earlier call finished; a directory holding another configuration is a ``UsageError``. With ``tracking``, the
    finished run is then logged to its trackers (``log``)."""
    if isinstance(out, str) and not out.strip():
        raise UsageError(f"--out {out!r}: empty; give a directory (an empty value would mean the current one)")
    settings = settings or RunSettings()
    _check_executor(settings)
    run_dir = Path(out) if out is not None else default_run_dir(config)
    notes, note = _noting(notify)
    the_run = execute(config, (connection or Connection()).spec(config), run_dir, settings, note)
    if tracking is not None:
        log(run_dir, tracking, note)
    return _finished(the_run, notes)


def resume(
    run_dir: str | Path,
    *,
    connection: Connection | None = None,
    settings: RunSettings | None = None,
    notify: Notify | None = None,
    tracking: Tracking | None = None,
) -> EvalResult:
    """Continue the run in ``run_dir`` as its manifest defines it (then log it to ``tracking``'s trackers)."""
    from structbench.manifest import read_manifest
    from structbench.redact import MASK
    from structbench.runformat import MANIFEST

    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    if manifest is None:
        raise UsageError(f"--resume {run_dir}: no {MANIFEST} there")
    config = manifest.config
    connection = connection or Connection()
    if config.base_url is not None and MASK in config.base_url and connection.base_url is None:
        raise UsageError(f"--resume {run_dir}: the run's --base-url had a password, which is never stored; "
                         "give --base-url again")
    return run(config, out=run_dir, connection=connection, settings=settings, notify=notify, tracking=tracking)


def evaluate(
    model: str = DEFAULT_MODEL,
    bench: str | Sequence[str] | None = None,
    *,
    strategy: str | Sequence[str] | None = None,
    limit: int | None = None,
    out: str | Path | None = None,
    preset: str | None = None,
    options: Mapping[str, object] | None = None,
    sweep: Mapping[str, str | Sequence[object]] | None = None,
    sample: int | None = None,
    sample_ids: str | Sequence[str] | None = None,
    seed: int = 0,
    epochs: int = 1,
    data_dir: str | Path | None = None,
    allow_modified_data: bool = False,
    model_options: Mapping[str, object] | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    system_prompt: str | None = None,
    chat_template_args: Mapping[str, Any] | None = None,
    reasoning_budget: int = 0,
    reasoning_effort: str | None = None,
    think_tags: Sequence[tuple[str, str]] | None = None,
    thought_opened: bool = False,
    max_turns: int | None = None,
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    concurrency: int = 8,
    timeout: float = DEFAULT_TIMEOUT,
    max_retries: int = 6,
    max_reply_mb: float = DEFAULT_MAX_REPLY_MB,
    cache: str | Path | None = None,
    no_cache: bool = False,
    on_cache_error: CacheErrorPolicy = "stop",
    offline: bool = False,
    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
    workers: int | None = None,
    executor: Executor = "local",
    ray_address: str | None = None,
    ray_gpus_per_worker: float = 0.0,
    progress: bool = True,
    progress_every: float = 30.0,
    log_to: str | Sequence[str] | None = None,
    log_options: Mapping[str, str] | None = None,
    log_samples: bool = False,
    prices: str | Path | Mapping[str, Mapping[str, float]] | None = None,
    max_cost: float | None = None,
    max_tokens_total: int | None = None,
    batch: bool = False,
    batch_poll: float = 30.0,
    notify: Notify | None = None,
) -> EvalResult:
    """Evaluate ``model`` (``BACKEND[:NAME]``, e.g. ``openai:gpt-4o-mini``, ``oracle``) on ``bench`` into the run
    directory ``out`` and return its results, as ``structbench run`` does with the flags of the same names: every
    flag of the command is a keyword here.

    What decides the results is ``configure``'s (``strategy``, ``limit``, ``preset``, ``options``, ``sweep``,
    ``seed`` ...);
    how the model is reached is ``Connection``'s (``base_url``, ``api_key_env``, ``concurrency`` ...), how the run
    executes ``RunSettings``' (``cache``, ``no_cache``, ``workers``, ``progress`` ...), what it costs and may cost
    ``Costs``' (``prices``: a prices file or its mapping; ``max_cost``, ``max_tokens_total``, ``batch``,
    ``batch_poll``). Notes and warnings go to ``notify`` (default: stderr) and into the result's ``notes``. A bad
    argument is a ``UsageError`` naming it before anything runs (``concurrency=0``). The same call again resumes the
    run and returns the same results without a model call. ``log_to`` (``mlflow``, ``wandb``, or both) logs the
    finished run to those trackers, with ``log_options`` (``--log-option``) and its per-sample table when
    ``log_samples``; a tracker that fails is a warning, never a lost run."""
    from structbench.runner.arguments import check_arguments

    check_arguments({name: value for name, value in locals().items() if name != "check_arguments"},
                    caller="evaluate")
    trackers = log_settings(log_to, log_options, log_samples)
    config = configure(
        model, bench, strategy=strategy, preset=preset, options=options, sweep=sweep, limit=limit, sample=sample,
        sample_ids=sample_ids, seed=seed, epochs=epochs, data_dir=data_dir, allow_modified_data=allow_modified_data,
        base_url=base_url, model_options=model_options, max_tokens=max_tokens, temperature=temperature, top_p=top_p,
        system_prompt=system_prompt, chat_template_args=chat_template_args,
        reasoning_budget=reasoning_budget, reasoning_effort=reasoning_effort, think_tags=think_tags,
        thought_opened=thought_opened, max_turns=max_turns,
    )
    connection = Connection(base_url, api_key_env, concurrency, timeout, max_retries, max_reply_mb)
    settings = RunSettings(
        cache=Path(cache) if cache is not None else None, no_cache=no_cache, on_cache_error=on_cache_error,
        offline=offline, progress=progress, progress_every=progress_every,
        max_consecutive_failures=max_consecutive_failures, workers=workers, executor=executor,
        ray_address=ray_address, ray_gpus_per_worker=ray_gpus_per_worker,
        costs=_costs(config.model, prices, max_cost, max_tokens_total, batch, batch_poll),
    )
    return run(config, out=out, connection=connection, settings=settings, notify=notify, tracking=trackers)


def _costs(model: str, prices: str | Path | Mapping[str, Mapping[str, float]] | None, max_cost: float | None,
           max_tokens_total: int | None, batch: bool, batch_poll: float) -> Costs | None:
    """``evaluate``'s cost settings: ``prices`` a file (read as ``--prices`` reads it) or the mapping itself (as a
    suite file's ``prices:``)."""
    from structbench.backends import BACKENDS
    from structbench.runner.session import costs_of

    if max_cost is not None and prices is None and BACKENDS.get(model.partition(":")[0]).prices is None:
        raise UsageError(f"evaluate(max_cost={max_cost!r}): needs the models' prices: give prices= (a prices file, or "
                         "the mapping of a model to its prices in US dollars per million tokens)")
    if not isinstance(prices, Mapping):
        return costs_of(Path(prices) if prices is not None else None, max_cost, max_tokens_total, batch, batch_poll)
    from structbench.prices import Prices

    costs = costs_of(None, None, max_tokens_total, batch, batch_poll) or Costs()
    return replace(costs, prices=Prices.from_data(dict(prices), "prices="), max_cost=max_cost)


@dataclass(frozen=True)
class SuiteRun:
    """One model of a suite: its run, or why it stopped."""

    name: str
    model: str
    run_dir: Path
    result: EvalResult | None
    """None when the run stopped (``error``)."""
    error: RunStoppedError | BudgetError | None = None


@dataclass(frozen=True)
class SuiteResult:
    """Every model of a suite file, one run directory each, and the report over them."""

    root: Path
    """The suite's directory (its runs and report)."""
    runs: list[SuiteRun]
    reports: list[Path]
    """The report files written (none when the suite says ``report: none`` or no run finished)."""

    @property
    def results(self) -> list[Result]:
        """The results of every finished run, model after model."""
        return [r for run_ in self.runs if run_.result is not None for r in run_.result.results]

    @property
    def metrics(self) -> MetricsFile:
        """Every finished run's entries as one metrics file (what the suite's table shows)."""
        from structbench.results import MetricsFile

        return MetricsFile(results=[r.entry for r in self.results],
                           robustness=[x for run_ in self.runs if run_.result is not None
                                       for x in run_.result.metrics.robustness])


def evaluate_suite(
    path: str | Path,
    *,
    out: str | Path | None = None,
    settings: RunSettings | None = None,
    max_reply_mb: float = DEFAULT_MAX_REPLY_MB,
    notify: Notify | None = None,
    on_start: Callable[[int, int, SuiteRun], None] | None = None,
    on_run: Callable[[SuiteRun], None] | None = None,
    tracking: Tracking | None = None,
) -> SuiteResult:
    """Validate the suite file, run each of its models (resuming what earlier calls finished) and write the report
    over them; a model whose run stops (``RunStoppedError``, or ``BudgetError`` at its budget) does not stop the next
    one. ``out`` defaults to the suite's own ``out``, else ``runs/<file stem>``. ``on_start(i, count, run)`` is called
    before each model's run, ``on_run(run)`` after it. The suite's ``prices`` price every model's run (beside
    ``settings.costs``' budget and batches; not both files). With ``tracking``, each finished run is logged to its
    trackers after ``on_run``."""
    from structbench.report.api import ReportOptions, write_report
    from structbench.runner.suite import load_suite, runs, suite_prices

    path = Path(path)
    settings = settings or RunSettings()
    _check_executor(settings)
    suite = load_suite(path)
    prices = suite_prices(suite, path)
    if prices is not None:
        if settings.costs is not None and settings.costs.prices is not None:
            raise UsageError(f"{path} sets prices; --prices cannot be given beside it")
        settings = replace(settings, costs=replace(settings.costs or Costs(), prices=prices))
    root = Path(out) if out is not None else (path.parent / suite.out if suite.out else Path("runs") / path.stem)
    planned = runs(suite, root, path.parent)
    done: list[SuiteRun] = []
    for i, plan in enumerate(planned, start=1):
        if on_start is not None:
            on_start(i, len(planned), SuiteRun(plan.name, plan.config.model, plan.run_dir, None))
        spec = replace(plan.spec, max_reply_bytes=int(max_reply_mb * 2**20))
        notes, note = _noting(notify)
        try:
            entry = SuiteRun(plan.name, plan.config.model, plan.run_dir,
                             _finished(execute(plan.config, spec, plan.run_dir, settings, note), notes))
        except (RunStoppedError, BudgetError) as err:
            entry = SuiteRun(plan.name, plan.config.model, plan.run_dir, None, err)
        done.append(entry)
        if on_run is not None:
            on_run(entry)
        if tracking is not None and entry.result is not None:
            log(entry.run_dir, tracking, note)
    finished = [r.run_dir for r in done if r.result is not None]
    reports: list[Path] = []
    if finished and suite.report != "none":
        target = root / ("report.html" if suite.report == "html" else "report.md")
        reports = list(write_report(finished, target, ReportOptions(title=f"structbench suite {path.name}")))
    return SuiteResult(root, done, reports)
