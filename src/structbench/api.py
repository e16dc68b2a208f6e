"""structbench from Python: ``evaluate`` a model on benchmarks (``evaluate_suite`` for a suite file) and get typed
results back, the run directory written as ``structbench run`` writes it. The command line is a layer over these.

    import structbench

    run = structbench.evaluate("oracle", "scitab", limit=30, out="runs/oracle-scitab")
    run.results[0].headline, run.results[0].interval, run.results[0].n

``evaluate`` is ``configure`` (what decides the results: a ``RunConfig``, checked as the command's flags are) then
``run`` (one run directory filled, resuming what an earlier call finished). Errors are typed as everywhere in
structbench (``UsageError``, ``DataError``, ``StorageError``, ``RunStoppedError`` ...: ``structbench.core.errors``);
samples whose model call failed for good are no error: they are the result's ``failures``, and calling again
retries exactly them.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench.backends.factory import DEFAULT_MAX_REPLY_BYTES, DEFAULT_TIMEOUT, BackendSpec
from structbench.core.errors import BudgetError, RunStoppedError, UsageError
from structbench.runner.arguments import DEFAULT_MODEL, FLAGS, RunArguments, check_arguments, flag_name, named
from structbench.runner.configure import (
    DEFAULT_OPTIONS,
    DEFAULT_STRATEGIES,
    DEFAULT_SUITE,
    bench_entries,
    preset_config,
    sweep_values,
)
from structbench.runner.notes import notes_from_logs
from structbench.runner.session import (
    Costs,
    Notify,
    RunSettings,
    execute,
    to_stderr,
)

if TYPE_CHECKING:  # the rest loads on first use: the command's --help imports this module
    from structbench.backends.base import Backend
    from structbench.interop.trackers import Tracking
    from structbench.interop.trackers.log import Outcome
    from structbench.runfiles.manifest import Manifest
    from structbench.runfiles.results import MetricsFile, ResultEntry, Robustness
    from structbench.runfiles.runconfig import RunConfig
    from structbench.runner.failures import Failure
    from structbench.runner.objects import BenchArgument
    from structbench.runner.run import Kept, Run

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_OPTIONS",
    "DEFAULT_STRATEGIES",
    "DEFAULT_SUITE",
    "Connection",
    "Costs",
    "EvalResult",
    "Result",
    "RunSettings",
    "SuiteResult",
    "SuiteRun",
    "bench_entries",
    "configure",
    "evaluate",
    "evaluate_suite",
    "log",
    "log_settings",
    "preset_config",
    "resume",
    "run",
    "sweep_values",
]

DEFAULT_SUITE_TITLE = (
    "the default quick suite: StructFact's generated variant, 30 claims about tables of a fictional world (six per "
    "reasoning task) to be judged Yes, No or Not sure (options A, B, C), few-shot, the reply constrained to one "
    "option letter where the backend can"
)
"""What the default suite evaluates, as the summary after the table says it."""
DEFAULT_MAX_REPLY_MB = DEFAULT_MAX_REPLY_BYTES / 2**20


@dataclass(frozen=True)
class Connection:
    """How the model is reached. None of it changes the results; the server's address is recorded with the run's
    configuration all the same (``recorded``: passwords masked), so that the run resumes against it."""

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
        check_arguments(asdict(self), caller="Connection")

    def recorded(self, config: RunConfig) -> RunConfig:
        """``config`` with this connection's base URL (passwords masked) where it names none: the configuration
        ``evaluate(base_url=...)`` makes, so ``resume`` and ``--resume`` find the server again."""
        if self.base_url is None or config.base_url is not None:
            return config
        from structbench.backends.openai_compat import shown_base_urls

        return config.model_copy(update={"base_url": shown_base_urls(self.base_url)})

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
    """The sweep's cell (``key=value;...``, ``structbench.runfiles.cells``); ``""`` in a run without a sweep."""

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
    they are read (``runfiles.columns.RecordView``), so a large run hands them out without holding them."""
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


def configure(model: str = DEFAULT_MODEL, bench: str | Sequence[str] | None = None, **options: Any) -> RunConfig:
    """What decides a run's results, checked (an unknown benchmark, a bad option ... is a ``UsageError`` naming it,
    ``configure(limit=0)``). The keywords are ``evaluate``'s that define the run (``runner.arguments.RunArguments``,
    the fields whose part is ``config``).

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
    ``turn_limit``: ``"wrong"`` (a loop at that limit scored as a reply without an answer) or ``"apart"`` (left
    out of n); None: each strategy's own.
    The rest are ``structbench run``'s flags of the same names."""
    from structbench.runner.arguments import FLAGS
    from structbench.runner.configure import run_config

    other = next((name for name in options if name in FLAGS and FLAGS[name].part != "config"), None)
    if other is not None:
        raise UsageError(f"configure: {other} does not decide a run's results; give it to run() or evaluate()")
    return run_config(check_arguments({"model": model, "bench": bench, **options}, caller="configure"))


def is_default_suite(config: RunConfig) -> bool:
    """Whether ``config`` evaluates the default quick suite, unchanged."""
    return (config.benches, config.strategies, config.options, config.limit) == (
        DEFAULT_SUITE, DEFAULT_STRATEGIES, DEFAULT_OPTIONS, None)


def default_run_dir(config: RunConfig) -> Path:
    """``runs/<model>-<hash of the configuration>``: the same configuration finds the same directory."""
    from structbench.runner.run import default_run_dir as named

    return named(config)


def _check_objects(caller: str, **given: Any) -> None:
    """``UsageError`` naming the first of ``given`` (by argument name) that is not the kind of object it must be (None
    is the default): a plain value where an object is asked for failed deep inside, as an ``AttributeError``."""
    from structbench.backends.base import Backend
    from structbench.runfiles.runconfig import RunConfig

    kinds: dict[str, tuple[Any, str]] = {
        "config": (RunConfig, "a RunConfig (structbench.api.configure makes one)"),
        "out": ((str, Path), "a directory (a str or a Path)"),
        "connection": (Connection, "a structbench.api.Connection"),
        "settings": (RunSettings, "a structbench.api.RunSettings"),
        "backend": (Backend, "a structbench.backends.base.Backend object (a model named by a string goes in config)"),
    }
    if given.get("tracking") is not None:  # the trackers' registry is imported only by a run that logs to one
        from structbench.interop.trackers import Tracking

        kinds["tracking"] = (Tracking, "a Tracking (structbench.api.log_settings makes one)")
    for name, value in given.items():
        if value is None and name != "config":
            continue
        kind, what = kinds[name]
        if not isinstance(value, kind):
            raise UsageError(f"{caller}({name}={value!r:.60}): give {what}")


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
    backend: Backend | None = None,
) -> EvalResult:
    """Fill the run directory ``out`` (default ``runs/<model>-<config hash>``) with ``config``'s run, resuming what an
    earlier call finished; a directory holding another configuration is a ``UsageError``. With ``tracking``, the
    finished run is then logged to its trackers (``log``). ``backend``: the model as an object, answering in this
    process (else the one ``config.model`` names is built)."""
    if isinstance(out, str) and not out.strip():
        raise UsageError(f"run(out={out!r}): empty; give a directory (an empty value would mean the current one)")
    _check_objects("run", config=config, out=out, connection=connection, settings=settings, backend=backend,
                   tracking=tracking)
    if backend is not None:
        from structbench.runner.objects import model_name

        if (name := model_name(backend, "run")) != config.model:  # its answers would be recorded as another model's
            raise UsageError(f"run(backend=...): the backend object is {name}, but the configuration's model is "
                             f"{config.model}; configure the run with model={name!r} (or pass the object as "
                             "evaluate's model)")
    settings = settings or RunSettings()
    _check_executor(settings)
    connection = connection or Connection()
    config = connection.recorded(config)
    run_dir = Path(out) if out is not None else default_run_dir(config)
    notes, note = _noting(notify)
    with notes_from_logs(note):
        the_run = execute(config, connection.spec(config), run_dir, settings, note, backend)
    if tracking is not None:
        log(run_dir, tracking, note)
    return _finished(the_run, notes)


def _resumed(run_dir: Path, connection: Connection, flags: bool, caller: str) -> RunConfig:
    """The configuration of the run in ``run_dir``; no run there, or a password to give again, is a ``UsageError``."""
    from structbench.core.redact import MASK
    from structbench.runfiles.manifest import read_manifest
    from structbench.runfiles.runformat import MANIFEST

    where = named("resume", run_dir, flags) if flags else f"{caller}({named('resume', str(run_dir), flags)})"
    manifest = read_manifest(run_dir)
    if manifest is None:
        raise UsageError(f"{where}: no {MANIFEST} there")
    config = manifest.config
    if config.base_url is not None and MASK in config.base_url and connection.base_url is None:
        again = "--base-url" if flags else "base_url="
        raise UsageError(f"{where}: the run's base URL had a password or key, which is never stored; give {again} "
                         "again")
    return config


def resume(
    run_dir: str | Path,
    *,
    connection: Connection | None = None,
    settings: RunSettings | None = None,
    notify: Notify | None = None,
    tracking: Tracking | None = None,
) -> EvalResult:
    """Continue the run in ``run_dir`` as its manifest defines it (then log it to ``tracking``'s trackers)."""
    if not isinstance(run_dir, str | Path) or not str(run_dir).strip():
        raise UsageError(f"resume({run_dir!r}): give the run directory (a non-empty str, or a Path)")
    _check_objects("resume", connection=connection, settings=settings, tracking=tracking)
    connection = connection or Connection()
    config = _resumed(Path(run_dir), connection, False, "resume")
    return run(config, out=run_dir, connection=connection, settings=settings, notify=notify, tracking=tracking)


@dataclass(frozen=True)
class RunPlan:
    """One run's options, checked and sorted into what ``run`` takes: nothing has run yet."""

    config: RunConfig
    run_dir: Path
    connection: Connection
    settings: RunSettings
    tracking: Tracking | None


def run_tracking(args: RunArguments) -> Tracking | None:
    """The trackers the run ``args`` describe is logged to (``log_settings``), checked; None for none."""
    from structbench.runner.configure import option_text

    options = {k: option_text(v) for k, v in args.log_options.items()} if args.log_options is not None else None
    return log_settings(args.log_to, options, args.log_samples)


def run_settings(args: RunArguments, *, flags: bool = False) -> RunSettings:
    """How the run ``args`` describe executes (its cost settings loaded and checked)."""
    options = args.part("settings") | {"cache": Path(args.cache) if args.cache is not None else None}
    return RunSettings(**options, costs=_costs(args, flags))


def plan_run(args: RunArguments, given: Collection[str] = (), *, flags: bool = False,
             caller: str = "evaluate") -> RunPlan:
    """The run ``args`` describe, checked before anything runs: a new one (its ``RunConfig`` from ``configure``'s
    rules), or with ``resume`` the run in that directory, which an option among ``given`` that defines the run may not
    change. Errors name each option as the caller wrote it (``flags``: as the run command's flag)."""
    from structbench.runner.arguments import resume_conflicts
    from structbench.runner.configure import run_config

    tracking = run_tracking(args)
    settings = run_settings(args, flags=flags)
    connection = Connection(base_url=args.base_url, **args.part("connection"))  # the URL's password used, not kept
    if args.resume is None:
        config = run_config(args, flags=flags, caller=caller)
        run_dir = Path(args.out) if args.out is not None else default_run_dir(config)
        return RunPlan(config, run_dir, connection, settings, tracking)
    run_dir = Path(args.resume)
    config = _resumed(run_dir, connection, flags, caller)
    values = {name: getattr(args, name) for name in FLAGS}
    conflicts = resume_conflicts(config, values, [name for name in FLAGS if name in given and name != "resume"])
    if conflicts:
        spelt = ", ".join(flag_name(name) if flags else named(name, values[name], flags) for name in conflicts)
        kept = ("--concurrency, --timeout, --max-retries, --cache" if flags else
                "concurrency, timeout, max_retries, cache")
        where = named("resume", run_dir, flags) if flags else f"{caller}(resume={str(run_dir)!r})"
        raise UsageError(f"{where} continues that run as its manifest defines it; {spelt} would change it (start a new "
                         f"run instead, or drop them; {kept} and the like may be given)")
    return RunPlan(config, run_dir, connection, settings, tracking)


def evaluate(model: str | Backend = DEFAULT_MODEL, bench: BenchArgument = None, **options: Any) -> EvalResult:
    """Evaluate ``model`` (``BACKEND[:NAME]``, e.g. ``openai:gpt-4o-mini``, ``oracle``) on ``bench`` into the run
    directory ``out`` and return its results, as ``structbench run`` does with the flags of the same names: every
    flag of the command is a keyword here, under its Python name (``runner.arguments.RunArguments`` declares them
    all, and ``inspect.signature(evaluate)`` lists them).

    ``model`` may also be a ``Backend`` object (it answers in this process, its ``backend:model`` naming the run), and
    ``bench`` a ``Benchmark`` class or instance, or a list mixing them with names: a class is registered under its
    ``name`` for this process (as a plugin would be), an instance's options are the run's options for it.

    What decides the results is ``configure``'s (``strategy``, ``limit``, ``preset``, ``options``, ``sweep``,
    ``seed`` ...);
    how the model is reached is ``Connection``'s (``base_url``, ``api_key_env``, ``concurrency`` ...), how the run
    executes ``RunSettings``' (``cache``, ``no_cache``, ``workers``, ``progress`` ...), what it costs and may cost
    ``Costs``' (``prices``: a prices file or its mapping; ``max_cost``, ``max_tokens_total``, ``batch``,
    ``batch_poll``). ``resume``: continue the run in that directory as its manifest defines it (an option given that
    would change it is a ``UsageError``). Notes and warnings go to ``notify`` (default: stderr) and into the result's
    ``notes``. A bad argument is a ``UsageError`` naming it before anything runs (``concurrency=0``). The same call
    again resumes the run and returns the same results without a model call. ``log_to`` (``mlflow``, ``wandb``, or
    both) logs the finished run to those trackers, with ``log_options`` (``--log-option``) and its per-sample table
    when ``log_samples``; a tracker that fails is a warning, never a lost run."""
    from structbench.runner.objects import bench_names, model_name

    backend = model if not isinstance(model, str) else None
    names, bench_options = bench_names(bench, "evaluate")
    if bench_options:
        options = options | {"options": bench_options | dict(options.get("options") or {})}
    args = check_arguments({"model": model_name(model, "evaluate"), "bench": names, **options}, caller="evaluate")
    given = set(options) | {name for name, value in (("model", model), ("bench", bench))
                            if value != RunArguments.model_fields[name].default}
    plan = plan_run(args, given, caller="evaluate")
    if backend is not None and plan.settings.executor == "ray":
        raise UsageError("evaluate(executor='ray'): a backend object answers in this process; give the model's name "
                         "to run it on a Ray cluster")
    return run(plan.config, out=plan.run_dir, connection=plan.connection, settings=plan.settings,
               notify=args.notify, tracking=plan.tracking, backend=backend)


def _keywords(first: Callable[..., Any], part: str | None = None) -> inspect.Signature:
    """``first``'s signature with ``**options`` spelt out as the keywords ``RunArguments`` declares (those of one
    ``part`` only, if given): what ``help()`` and editors show."""
    own = [p for p in inspect.signature(first).parameters.values() if p.kind != p.VAR_KEYWORD]
    taken = {p.name for p in own}
    keywords = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=field.default,
                                  annotation=field.annotation)
                for name, field in RunArguments.model_fields.items()
                if name not in taken and (part is None or (name in FLAGS and FLAGS[name].part == part))]
    return inspect.signature(first).replace(parameters=[*own, *keywords])


evaluate.__signature__ = _keywords(evaluate)  # type: ignore[attr-defined]
configure.__signature__ = _keywords(configure, "config")  # type: ignore[attr-defined]


def _costs(args: RunArguments, flags: bool) -> Costs | None:
    """The cost settings: ``prices`` a file (read as ``--prices`` reads it) or the mapping itself (as a suite file's
    ``prices:``)."""
    from structbench.backends import BACKENDS
    from structbench.runner.session import costs_of

    prices, max_cost = args.prices, args.max_cost
    if (not flags and max_cost is not None and prices is None
            and (backend := args.model.partition(":")[0]) in BACKENDS and BACKENDS.get(backend).prices is None):
        raise UsageError(f"evaluate(max_cost={max_cost!r}): needs the models' prices: give prices= (a prices file, or "
                         "the mapping of a model to its prices in US dollars per million tokens)")
    if not isinstance(prices, Mapping):
        return costs_of(Path(prices) if prices is not None else None, max_cost, args.max_tokens_total, args.batch,
                        args.batch_poll)
    from structbench.backends.prices import Prices

    costs = costs_of(None, None, args.max_tokens_total, args.batch, args.batch_poll) or Costs()
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
        from structbench.runfiles.results import MetricsFile

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

    if not isinstance(path, str | Path) or not str(path).strip():
        raise UsageError(f"evaluate_suite({path!r}): give the suite file's path (a non-empty str, or a Path)")
    if out is not None and (not isinstance(out, str | Path) or not str(out).strip()):
        raise UsageError(f"evaluate_suite(out={out!r}): give a directory (a non-empty str, or a Path; an empty value "
                         "would mean the current one)")
    _check_objects("evaluate_suite", settings=settings, tracking=tracking)
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
    if settings.costs is not None and settings.costs.prices is not None:  # every model priced before any runs
        settings.costs.prices.require([plan.spec.label for plan in planned])
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
