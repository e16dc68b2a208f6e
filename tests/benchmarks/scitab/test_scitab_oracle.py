"""The oracle reaches the maximum on every strategy and variant, through the strategies and the runner."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from structbench.backends.base import Choice, Request, Response
from structbench.backends.oracle import OracleBackend
from structbench.benchmarks.scitab import SciTab
from structbench.contract.benchmark import Attempt
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.export import score_predictions
from structbench.runner.run import Run
from structbench.runner.selection import prepare

Loaded = tuple[SciTab, dict[str, list[Sample]]]


def _run_all(bench: SciTab, strategy: str, samples: list[Sample]) -> list[Attempt]:
    async def one(sample: Sample) -> Attempt:
        async def generate(request: Request) -> Response:
            return Response(choices=(Choice(text=bench.oracle(sample, request)),))

        return await bench.strategy(strategy).run(sample, generate)

    async def every() -> list[Attempt]:
        return list(await asyncio.gather(*(one(s) for s in samples)))

    return asyncio.run(every())


def _by_label(samples: list[Sample], per_label: int) -> list[Sample]:
    picked: dict[str, list[Sample]] = {}
    for s in samples:
        group = picked.setdefault(s.gold.label, [])  # type: ignore[union-attr]
        if len(group) < per_label:
            group.append(s)
    return [s for group in picked.values() for s in group]


@pytest.mark.parametrize("variant", ["all", "2class"])
@pytest.mark.parametrize("strategy", ["zero_shot", "open_model", "in_context", "cot"])
def test_oracle_is_perfect_on_every_sample(loaded: Loaded, variant: str, strategy: str) -> None:
    bench, samples = loaded
    attempts = _run_all(bench, strategy, samples[variant])
    scored = [bench.score(s, a, bench.strategy(strategy)) for s, a in zip(samples[variant], attempts, strict=True)]
    metrics = bench.aggregate(scored)
    two = "macro_f1_2class" if variant == "2class" else "macro_f1_no_nei"
    assert metrics["macro_f1"] == metrics["accuracy"] == metrics[two] == 1.0
    assert metrics.get("macro_f1_3class", 1.0) == 1.0
    assert metrics["invalid_rate"] == 0.0


@pytest.mark.parametrize("variant", ["all", "2class"])
def test_oracle_program_is_perfect(loaded: Loaded, variant: str) -> None:
    bench, samples = loaded
    subset = _by_label(samples[variant], 2)
    attempts = _run_all(bench, "pot", subset)
    assert all(a.artifacts["program"]["status"] == "ok" for a in attempts)
    scored = [bench.score(s, a, bench.strategy("pot")) for s, a in zip(subset, attempts, strict=True)]
    assert bench.aggregate(scored)["macro_f1"] == 1.0
    # the same raw replies from a predictions file: score() runs them itself
    predictions: dict[str, str | list[str]] = {s.id: a.output for s, a in zip(subset, attempts, strict=True)}
    result = score_predictions(bench, variant, subset, bench.strategy("pot"), predictions, source=Path("p.jsonl"))
    assert result.headline.value == 1.0 and result.metrics["program_error_rate"] == 0.0


def test_runner_end_to_end_with_every_strategy(tmp_path: Path, shared_datasets: Path) -> None:
    config = RunConfig(model="oracle", benches=["scitab:all"], strategies=["all"], limit=6)
    selections = prepare(config, DataContext(data_dir=shared_datasets, offline=True))
    metrics = Run(tmp_path / "run", config).execute(
        OracleBackend(), selections, cache=None, concurrency=4, progress=False
    )
    assert [r.strategy for r in metrics.results] == ["zero_shot", "open_model", "in_context", "cot", "pot", "tools"]
    for result in metrics.results:
        assert result.headline.name == "macro_f1" and result.headline.value == 1.0, result.strategy
        assert result.errors == 0 and result.n == 6
        matrix = result.confusion_matrices["3-class"]
        assert matrix.total == 6 and matrix.predicted == ["supports", "refutes", "not enough info", "invalid"]


def test_wrong_replies_score_zero(loaded: Loaded) -> None:
    bench, samples = loaded
    sample = next(s for s in samples["all"] if s.gold.label == "supports")  # type: ignore[union-attr]
    assert bench.score(sample, Attempt(output="B"), bench.strategy("zero_shot")).score == 0.0
    assert bench.score(sample, Attempt(output="ans = False"), bench.strategy("pot")).parsed == "refutes"
    assert bench.score(sample, Attempt(output=""), bench.strategy("pot")).parsed is None
