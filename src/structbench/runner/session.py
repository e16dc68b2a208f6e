"""One run directory filled: the backend built, the samples prepared, the executor and the response cache set up,
then ``Run.execute``. What ``structbench.evaluate`` (and so the ``run`` command) does for each model it evaluates."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from structbench.core.errors import StorageError, UsageError
from structbench.runner.arguments import MAX_CONSECUTIVE_FAILURES
from structbench.runner.notes import Notify

if TYPE_CHECKING:
    from structbench.backends import BackendSpec
    from structbench.backends.base import Backend
    from structbench.backends.prices import Prices
    from structbench.runfiles.runconfig import RunConfig
    from structbench.runner.batch.collector import BatchSettings
    from structbench.runner.budget import Budget
    from structbench.runner.cache import ResponseCache
    from structbench.runner.control import CacheErrorPolicy, RunControl
    from structbench.runner.run import Run

Executor = Literal["local", "ray"]
"""``local``: this process, or worker processes forked from it; ``ray``: actors on a Ray cluster."""


def to_stderr(line: str) -> None:
    """The default ``Notify``: one line on stderr."""
    sys.stderr.write(line + "\n")


@dataclass(frozen=True)
class RunSettings:
    """How a run executes, apart from what it evaluates (none of it changes the results)."""

    cache: Path | None = None
    """The response cache file (default ``<cache>/responses.sqlite``)."""
    no_cache: bool = False
    """Neither read nor write the response cache."""
    on_cache_error: CacheErrorPolicy = "stop"
    """When the cache cannot be written: stop (keeping every answer), or go on without it."""
    offline: bool = False
    """Never download datasets."""
    progress: bool = True
    """A progress bar (a line every ``progress_every`` seconds when stderr is not a terminal)."""
    progress_every: float = 30.0
    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES
    """Stop the run when this many model calls in a row fail the same way (0: never)."""
    workers: int | None = None
    """Worker processes (or Ray actors); None picks (``runner.workers.worker_count``)."""
    executor: Executor = "local"
    ray_address: str | None = None
    ray_gpus_per_worker: float = 0.0
    costs: Costs | None = None
    """Prices, the budget and ``--batch`` (None: none of them)."""

    def __post_init__(self) -> None:
        from structbench.runner.arguments import check_arguments

        check_arguments({f.name: getattr(self, f.name) for f in fields(self) if f.name != "costs"},
                        caller="RunSettings")


@dataclass(frozen=True)
class Costs:
    """What the run's calls cost and may cost, and whether they go in batches (``docs/usage/costs.md``); none of it
    is part of the run's identity, so a larger budget resumes the same run."""

    prices: Prices | None = None
    """``structbench.backends.prices.Prices`` (loaded from ``--prices`` or the suite), or None."""
    max_cost: float | None = None
    """Stop the run (``BudgetError``, exit 6) once its calls cost this many US dollars at ``prices``."""
    max_tokens_total: int | None = None
    """Stop the run once its calls used this many tokens (prompt + completion)."""
    batch: bool = False
    """Send the calls through the provider's batch API, one batch per strategy step."""
    batch_poll: float = 30.0
    """Most seconds between two polls of a running batch."""

    def __post_init__(self) -> None:
        from structbench.runner.arguments import check_arguments

        check_arguments({f.name: getattr(self, f.name) for f in fields(self) if f.name != "prices"}, caller="Costs")

    @property
    def one_process(self) -> bool:
        """Budgets and batches count every call in one process."""
        return self.batch or self.max_cost is not None or self.max_tokens_total is not None


def costs_of(prices: Path | None, max_cost: float | None, max_tokens_total: int | None, batch: bool,
             batch_poll: float) -> Costs | None:
    """The cost settings, the prices file read and checked (a bad one is a usage error naming its line); None when
    none is given."""
    if prices is None and max_cost is None and max_tokens_total is None and not batch:
        return None
    from structbench.backends.prices import load_prices

    loaded = load_prices(prices) if prices is not None else None
    return Costs(loaded, max_cost, max_tokens_total, batch, batch_poll)


def with_backend_prices(costs: Costs, spec: BackendSpec) -> Costs:
    """``costs`` with the backend's own prices of the model (``BackendEntry.prices``: LiteLLM's) where no prices were
    given; unchanged otherwise."""
    from dataclasses import replace

    from structbench.backends import BACKENDS
    from structbench.core.registry import load_target

    if spec.backend not in BACKENDS:  # a backend object of its own: no provider's price list
        return costs
    entry = BACKENDS.get(spec.backend)
    if costs.prices is not None or entry.prices is None:
        return costs
    find = cast("Callable[[BackendSpec], Prices | None]", load_target(entry.prices, f"backend {entry.name!r} prices"))
    prices = find(spec)
    return costs if prices is None else replace(costs, prices=prices)


def budget_of(costs: Costs, spec: BackendSpec, settings: RunSettings, notify: Notify = to_stderr) -> Budget:
    """The run's ``Budget``, after checking what the cost settings need: a price for the model (``--max-cost``
    without prices is a usage error), one process, a backend with a batch API."""
    from structbench.core.words import spelt, word
    from structbench.runner.budget import Budget

    if costs.prices is not None:
        costs.prices.require([spec.label])
    if costs.one_process:
        counted = (f"{word('batch')}, {word('max_cost')} and {word('max_tokens_total')} count every call in one "
                   "process")
        if settings.executor == "ray":
            raise UsageError(f"{counted}: drop {spelt('executor', 'ray')}")
        if settings.workers is not None and settings.workers > 1:
            notify(f"note: {spelt('workers', str(settings.workers))}: {counted}; running in one "
                   f"({word('concurrency')} still applies)")
    if costs.batch:
        from structbench.runner.batch.providers import PROVIDERS

        if spec.backend not in PROVIDERS:
            raise UsageError(f"{word('batch')}: the {spec.backend} backend has no batch API (openai and anthropic "
                             "have one)")
    return Budget(costs.max_cost, costs.max_tokens_total, costs.prices)


def batch_settings(costs: Costs) -> BatchSettings | None:
    """``--batch``'s settings, or None: the batch collector is imported only for a run that batches (#44)."""
    if not costs.batch:
        return None
    from structbench.runner.batch.collector import BatchSettings

    return BatchSettings(poll=costs.batch_poll)


def execute(
    config: RunConfig, spec: BackendSpec, run_dir: Path, settings: RunSettings, notify: Notify = to_stderr,
    backend: Backend | None = None,
) -> Run:
    """Evaluate ``config`` on the backend ``spec`` names (or the ``backend`` object given) into ``run_dir``; the run
    (its ``metrics`` set) when every job was recorded. A run that stops early raises (``RunStoppedError``,
    ``StorageError``, ``KeyboardInterrupt``, ``Terminated``): the finished samples are kept in ``run_dir`` and the
    same call resumes."""
    from structbench.backends import BACKENDS, make_backend
    from structbench.backends.base import BackendError
    from structbench.data.datasets import DataContext, cache_root
    from structbench.runner.control import RunControl, unreachable
    from structbench.runner.run import Run, model_context
    from structbench.runner.selection import needs_model_context, prepare, sweep_plan
    from structbench.runner.settings import RequestSettings
    from structbench.runner.workers import worker_count

    if backend is None:
        BACKENDS.get(spec.backend)  # an unknown backend fails before any data is loaded
    costs = with_backend_prices(settings.costs or Costs(), spec)
    budget = budget_of(costs, spec, settings, notify)  # so do prices without the model, a budget in several processes
    the_run = Run(run_dir, config)  # so does a run directory holding another configuration, or an unwritable one
    # and so does what the backend refuses (a model option, a LiteLLM provider it cannot place, a setting it cannot
    # send), as a suite checks its models: built now, it loads nothing before its first request
    backend = backend or make_backend(spec)
    the_run.check_backend(backend)
    RequestSettings.of(config).check(backend)
    context = None
    if needs_model_context(config):  # a benchmark leaves out what cannot fit the model's context: ask first
        try:
            context = model_context(backend)
        except BackendError as err:  # nothing answers where the model should be: said before any data is loaded
            if settings.max_consecutive_failures:
                raise unreachable(err) from None
            context = None  # the breaker is off (0): the calls fail one by one
        if context is not None:
            notify(f"note: the model's context is {context} tokens: prompts built to larger token budgets are "
                   "left out")
    data = DataContext.from_env(config.data_dir, offline=settings.offline, allow_modified=config.allow_modified_data)
    plan = sweep_plan(config)
    if plan is not None:  # before the cells are set up: a large grid takes a while
        notify(plan)
    selections = prepare(config, data, context)
    held = {id(selection.samples): selection for selection in selections}  # a sweep's cells may share them
    for selection in held.values():
        warning = selection.held_warning()
        if warning is not None:
            notify(warning)
    if data.modified:
        files = ", ".join(f"{m.dataset}/{m.path}" for m in data.modified[:3])
        files += " ..." if len(data.modified) > 3 else ""
        notify(f"note: {len(data.modified)} data file(s) differ from their release and are used as given "
               f"(--allow-modified-data): {files}; manifest.json lists them (modified_data)")
    workers = settings.workers
    cluster = None
    if settings.executor == "ray":
        from structbench.runner.cluster import Cluster

        cluster = Cluster(spec, address=settings.ray_address, actors=workers, offline=settings.offline,
                          gpus_per_worker=settings.ray_gpus_per_worker)
    else:
        workers = worker_count(backend, workers, notify)
    if costs.one_process:
        workers = 1
    control = RunControl(settings.max_consecutive_failures, settings.on_cache_error, budget=budget, notify=notify)
    response_cache = (None if settings.no_cache
                      else open_cache(settings.cache or cache_root() / "responses.sqlite", control, notify))
    try:
        the_run.execute(
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
            batch=batch_settings(costs),
        )
    finally:
        if response_cache is not None:
            response_cache.close()
    return the_run


def open_cache(path: Path, control: RunControl, notify: Notify = to_stderr) -> ResponseCache | None:
    """The response cache, or None when it cannot be opened and ``--on-cache-error continue`` was given."""
    from structbench.runner.cache import ResponseCache

    try:
        return ResponseCache(path)
    except StorageError as err:
        if control.on_cache_error == "stop":
            raise StorageError(f"{err}; pass --on-cache-error continue (or --no-cache) to run without it") from err
        notify(f"warning: {err}; running without the response cache (--on-cache-error continue)")
        return None
