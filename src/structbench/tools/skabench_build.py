"""SKA-Bench's instance builder behind ``structbench generate skabench`` (``benchmarks.skabench.build``), with the
models of ``--synthesize-model`` called through a model pool of its own that shares the response cache, so an
interrupted build resumes without repeating a completed call."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from structbench.backends.base import BackendError
from structbench.benchmarks.skabench import build
from structbench.benchmarks.skabench.instances import write_instances
from structbench.benchmarks.skabench.units import Instance
from structbench.core.atomic import atomic_path
from structbench.core.errors import DataError, ExitCode, StructbenchError
from structbench.data.datasets import cache_root
from structbench.runner.cache import ResponseCache
from structbench.runner.calls import ModelPool


class SynthesisFailed(StructbenchError):
    """A synthesis model call failed for good (exit code 3); nothing was written."""

    exit_code = ExitCode.FAILED_SAMPLES


async def synthesize_in_pool(
    instances: list[Instance], synthesis: build.Synthesis, cache_file: Path | None, note: Callable[[str], None]
) -> list[Instance]:
    """``build.synthesize`` inside a model pool of its own, answering repeated requests from ``cache_file`` (none:
    no cache)."""
    cache = ResponseCache(cache_file) if cache_file is not None else None
    try:
        async with ModelPool(cache) as pool:
            result = await build.synthesize(instances, synthesis, note)
        note(f"{pool.model_calls} model calls")
        return result
    finally:
        if cache is not None:
            cache.close()


def write_set(
    out: Path,
    source: build.Source,
    shape: build.Shape,
    synthesis: build.Synthesis | None,
    *,
    cache: Path | None = None,
    no_cache: bool = False,
    note: Callable[[str], None] = print,
) -> int:
    """Build the instances, add synthesized noisy rows when asked, and write them to ``out`` whole or not at all;
    returns how many. ``cache`` defaults to ``$STRUCTBENCH_CACHE/responses.sqlite``."""
    instances = build.build(source, shape)
    if not instances:  # (an empty file: -b skabench refuses it as a set without questions)
        raise DataError(f"{out}: no question could be built from the tables (too few rows or columns for the "
                        "knowledge asked: --min-rows, --min-columns); nothing written")
    if synthesis is not None:
        cache_file = None if no_cache else cache or cache_root() / "responses.sqlite"
        try:
            instances = asyncio.run(synthesize_in_pool(instances, synthesis, cache_file, note))
        except BackendError as err:
            raise SynthesisFailed(
                f"a synthesis model call failed for good: {err} (nothing written; completed calls are cached, so "
                "running the same command again retries only what failed)"
            ) from err
    with atomic_path(out) as tmp:
        return write_instances(instances, tmp)
