"""SKA-Bench's instance builder behind ``structbench generate skabench`` (``benchmarks.skabench.build``), with the
models of ``--synthesize-model`` called through a model pool of its own that shares the response cache, so an
interrupted build resumes without repeating a completed call."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterable
from pathlib import Path

from structbench.backends.base import BackendError
from structbench.benchmarks.skabench import build
from structbench.benchmarks.skabench.instances import instance_line, write_instances
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
    instances: Iterable[Instance],
    synthesis: build.Synthesis,
    cache_file: Path | None,
    note: Callable[[str], None],
    path: Path,
) -> int:
    """``build.synthesize`` inside a model pool of its own, answering repeated requests from ``cache_file`` (none:
    no cache), each instance written to ``path`` as it is done; returns how many."""
    cache = ResponseCache(cache_file) if cache_file is not None else None
    try:
        async with ModelPool(cache) as pool:
            count = 0
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as fh:
                async for instance in build.synthesize(instances, synthesis, note):
                    fh.write(instance_line(instance))
                    count += 1
        note(f"{pool.model_calls} model calls")
        return count
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
    """Build the instances, add synthesized noisy rows when asked, and write them to ``out`` whole or not at all, each
    as it is built (a set of thousands of questions is gigabytes, never held); returns how many. Fewer questions than
    asked: one ``note: ...`` line (``builder.shortfall``). ``cache`` defaults to
    ``$STRUCTBENCH_CACHE/responses.sqlite``."""
    instances = build.build(source, shape, note=lambda line: note(f"note: {line}"))
    first = next(instances, None)
    if first is None:  # (an empty file: -b skabench refuses it as a set without questions)
        raise DataError(f"{out}: no question could be built from the tables (too few rows or columns for the "
                        "knowledge asked: --min-rows, --min-columns); nothing written")
    every = itertools.chain([first], instances)
    with atomic_path(out) as tmp:
        if synthesis is None:
            return write_instances(every, tmp)
        cache_file = None if no_cache else cache or cache_root() / "responses.sqlite"
        try:
            return asyncio.run(synthesize_in_pool(every, synthesis, cache_file, note, tmp))
        except BackendError as err:
            raise SynthesisFailed(
                f"a synthesis model call failed for good: {err} (nothing written; completed calls are cached, so "
                "running the same command again retries only what failed)"
            ) from err
