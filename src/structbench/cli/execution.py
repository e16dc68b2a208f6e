"""How ``run`` executes a configuration (one run directory), for a single model and for each model of a suite."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from structbench.errors import ExitCode, StorageError, Terminated

if TYPE_CHECKING:
    from structbench.backends import BackendSpec
    from structbench.results import MetricsFile
    from structbench.runner.cache import ResponseCache
    from structbench.runner.config import RunConfig
    from structbench.runner.control import CacheErrorPolicy, RunControl
    from structbench.runner.run import Run


class ExecutorChoice(StrEnum):
    """``--executor``."""

    local = "local"
    ray = "ray"


class CacheErrorChoice(StrEnum):
    """``--on-cache-error``."""

    stop = "stop"
    continue_ = "continue"

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


def execute(config: RunConfig, spec: BackendSpec, run_dir: Path, settings: RunSettings) -> tuple[Run, MetricsFile]:
    """Evaluate ``config`` on the backend ``spec`` names into ``run_dir``; Ctrl-C and SIGTERM say how to resume."""
    from structbench.backends import BACKENDS, make_backend
    from structbench.datasets import DataContext, cache_root
    from structbench.runner.control import RunControl
    from structbench.runner.run import Run, model_context
    from structbench.runner.selection import needs_model_context, prepare
    from structbench.runner.workers import worker_count

    BACKENDS.get(spec.backend)  # an unknown backend fails before any data is loaded
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
    control = RunControl(settings.max_consecutive_failures, settings.on_cache_error)
    response_cache = (None if settings.no_cache
                      else open_cache(settings.cache or cache_root() / "responses.sqlite", control))
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


def open_cache(path: Path, control: RunControl) -> ResponseCache | None:
    """The response cache, or None when it cannot be opened and ``--on-cache-error continue`` was given."""
    from structbench.runner.cache import ResponseCache

    try:
        return ResponseCache(path)
    except StorageError as err:
        if control.on_cache_error == "stop":
            raise StorageError(f"{err}; pass --on-cache-error continue (or --no-cache) to run without it") from err
        typer.echo(f"warning: {err}; running without the response cache (--on-cache-error continue)", err=True)
        return None
