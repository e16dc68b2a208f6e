"""``python -m structbench.tools.skabench_build``: SKA-Bench's instance builder (``benchmarks.skabench.build``; its
``--help`` says what it does), with the models of ``--synthesize-model`` called through a model pool of its own that
shares the response cache, so an interrupted build resumes without repeating a completed call."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from structbench.benchmarks.skabench import build
from structbench.benchmarks.skabench.units import Instance
from structbench.datasets import cache_root
from structbench.runner.cache import ResponseCache
from structbench.runner.calls import ModelPool


async def synthesize_in_pool(instances: list[Instance], args: argparse.Namespace) -> list[Instance]:
    """``build.synthesize`` inside a model pool of the command's own, sharing the response cache."""
    cache = None if args.no_cache else ResponseCache(args.cache or cache_root() / "responses.sqlite")
    try:
        async with ModelPool(cache) as pool:
            result = await build.synthesize(instances, args)
        print(f"{pool.model_calls} model calls", file=sys.stderr)
        return result
    finally:
        if cache is not None:
            cache.close()


def main(argv: Sequence[str] | None = None) -> int:
    return build.main(argv, synthesize_in_pool)


if __name__ == "__main__":
    sys.exit(main())
