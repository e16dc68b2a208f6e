"""One Inspect task per structbench benchmark: structbench's dataset, strategy and scorer inside Inspect."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import ChatMessageAssistant, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from structbench.backends.base import Request
from structbench.benchmarks import BENCHMARKS
from structbench.contract.benchmark import Attempt, Benchmark, Scored, Strategy, bind_sample
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from structbench.inspect_tasks.model import InspectGenerate, chat_messages
from structbench.runfiles.inspect_schema import ATTEMPT
from structbench.runner.calls import ModelPool
from structbench.runner.export import fingerprint, first_requests
from structbench.runner.selection import load_benchmark, load_samples


def _first_requests(strategy: Strategy, samples: list[Sample]) -> list[Request | None]:
    """``runner.export.first_requests``, on a thread of its own when an event loop is running here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return first_requests(strategy, samples)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(first_requests, strategy, samples).result()


def _target(sample: Sample) -> str | list[str]:
    """The gold answer as Inspect shows it: the label, the answers, the text, or the table as JSON."""
    gold = sample.gold
    if gold.kind == "label":
        return gold.label
    if gold.kind == "answers":
        return list(gold.answers)
    if gold.kind == "text":
        return gold.text
    return json.dumps(gold.model_dump(mode="json"), ensure_ascii=False)


def inspect_dataset(bench: Benchmark, variant: str, strategy: Strategy, samples: list[Sample]) -> MemoryDataset:
    """The samples as an Inspect dataset: the input is the strategy's first prompt, the metadata carries the
    sample's breakdown keys and the fingerprint ``structbench score`` checks."""
    items = []
    for sample, request in zip(samples, _first_requests(strategy, samples), strict=True):
        items.append(
            InspectSample(
                id=sample.id,
                input=chat_messages(request) if request is not None else sample.question,
                target=_target(sample),
                metadata={
                    "task": sample.task,
                    "fingerprint": fingerprint(request, sample),
                    "meta": sample.meta,
                },
            )
        )
    return MemoryDataset(items, name=f"{bench.name}:{variant}")


@solver
def structbench_strategy(bench: Benchmark, strategy: Strategy, samples: dict[str, Sample],
                         max_tokens: int | None = None) -> Solver:
    """Run structbench's ``strategy`` on the sample through the task's model; the conversation it ended with
    becomes the state's messages and output."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sample = samples[str(state.sample_id)]
        calls = InspectGenerate(get_model(), max_tokens=max_tokens)
        bind_sample(bench, sample)
        async with ModelPool(cache=None):  # an LLM judge (StrucText-Eval's judge option) runs as in a run
            attempt = await strategy.run(sample, calls)
        state.store.set(ATTEMPT, {
            "output": attempt.output,
            "outputs": attempt.outputs,
            "confidence": attempt.confidence,
            "artifacts": attempt.artifacts,
            "calls": calls.calls,
        })
        if calls.last_output is not None:
            state.messages = [*calls.last_messages, ChatMessageAssistant(content=calls.last_output.completion)]
            state.output = calls.last_output
        return state

    return solve


def _attempt(state: TaskState) -> Attempt:
    stored = state.store.get(ATTEMPT)
    return Attempt(output=stored["output"], outputs=list(stored["outputs"]), confidence=stored["confidence"],
                   artifacts=dict(stored["artifacts"]))


@metric(scores="unreduced")
def structbench_metrics(benchmark: str, options: dict[str, Any]) -> Metric:
    """The benchmark's own corpus metrics (``Benchmark.aggregate``) over the scored samples, headline first:
    the numbers ``structbench score`` computes from the same outputs."""
    bench = BENCHMARKS.get(benchmark)(options)

    def compute(scores: list[SampleScore]) -> Value:
        scored = [Scored.model_validate(s.score.metadata["scored"]) for s in scores if s.score.metadata]
        if not scored:
            return {}
        values = bench.aggregate(scored)
        order = [bench.headline, *(k for k in values if k != bench.headline)]
        return {k: float(values[k]) for k in order if k in values and values[k] == values[k]}  # NaN: not defined

    return compute


def structbench_scorer(bench: Benchmark, strategy: Strategy, samples: dict[str, Sample],
                       options: dict[str, Any]) -> Scorer:
    """Parse the attempt with the benchmark's own parser and score it; the score's metadata holds the ``Scored``
    record, from which ``structbench_metrics`` aggregates."""

    @scorer(metrics=[structbench_metrics(bench.name, options)], name=bench.name)
    def build() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            attempt = _attempt(state)
            scored = bench.outcome(samples[str(state.sample_id)], attempt, strategy, epoch=max(0, state.epoch - 1))
            return Score(
                value=scored.score,
                answer=json.dumps(scored.parsed, ensure_ascii=False, default=str),
                explanation=f"gold: {json.dumps(scored.gold, ensure_ascii=False, default=str)}",
                metadata={"scored": scored.model_dump(mode="json"), "output": attempt.output,
                          "outputs": attempt.outputs or None},
            )

        return score

    return build()


def benchmark_task(
    name: str,
    *,
    variant: str | None = None,
    strategy: str | None = None,
    data_dir: str | Path | None = None,
    seed: int = 0,
    limit: int | None = None,
    max_tokens: int | None = None,
    options: dict[str, Any] | None = None,
) -> Task:
    """The Inspect task of benchmark ``name``: its variant's samples under one strategy, scored as structbench
    scores them. ``options`` are the benchmark's run options (``structbench run --option``); ``seed``, ``limit`` and
    ``max_tokens`` are checked as ``structbench.evaluate`` checks them (``-T limit=abc``: a ``UsageError``)."""
    from structbench.runner.arguments import check_arguments

    check_arguments({"seed": seed, "limit": limit, "max_tokens": max_tokens}, caller=f"structbench/{name}")
    options = dict(options or {})
    bench, chosen = load_benchmark(f"{name}:{variant}" if variant else name, {f"{name}.{k}": v for k, v in
                                                                                 options.items()})
    strat = bench.strategy(strategy)
    samples = load_samples(bench, chosen, DataContext.from_env(data_dir, dir_flag="-T data_dir="), seed=seed,
                           limit=limit)
    by_id = {s.id: s for s in samples}
    return Task(
        name=f"{name}_{chosen}_{strat.name}",
        dataset=inspect_dataset(bench, chosen, strat, samples),
        solver=structbench_strategy(bench, strat, by_id, max_tokens),
        scorer=structbench_scorer(bench, strat, by_id, bench.options.model_dump(mode="json")),
        metadata={"benchmark": name, "variant": chosen, "strategy": strat.name, "seed": seed, "limit": limit,
                  "options": options},
    )


def task_factory(name: str) -> Callable[..., Task]:
    """The ``@task`` function for benchmark ``name``; ``-T`` arguments other than the named ones are the
    benchmark's options."""

    def factory(
        variant: str | None = None,
        strategy: str | None = None,
        data_dir: str | None = None,
        seed: int = 0,
        limit: int | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Task:
        return benchmark_task(name, variant=variant, strategy=strategy, data_dir=data_dir, seed=seed, limit=limit,
                              max_tokens=max_tokens, options=options)

    factory.__name__ = factory.__qualname__ = name
    title = BENCHMARKS.get(name).title if BENCHMARKS.clash(name) is None else name  # a clash: refused when run
    factory.__doc__ = f"{title} ({name}) as structbench evaluates it."
    return task(name=name)(factory)
