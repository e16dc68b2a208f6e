"""The paper's three-order protocol as one run: ``option_map=0,1,2``, each map's metrics and their average."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from benchmarks.structfact.structfact_helpers import run, scripted_generate
from structbench.backends.base import Request
from structbench.backends.mock import MockBackend, prompt_text
from structbench.backends.oracle import OracleBackend
from structbench.benchmarks.structfact import StructFact
from structbench.benchmarks.structfact.metrics import METRIC_NAMES, classification_metrics
from structbench.contract.benchmark import Attempt, Scored
from structbench.core.errors import UsageError
from structbench.data.datasets import DataContext
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from structbench.stats.bootstrap import counts_of

pytestmark = pytest.mark.shared


def _always_yes_letter(request: Request) -> str:
    """A model that always answers "Yes", by whatever letter the prompt gives it."""
    match = re.search(r"^([ABC])\) Yes$", prompt_text(request), re.MULTILINE)
    return match.group(1) if match else "A"


def _run(tmp_path: Path, shared_datasets: Path, backend: object, **options: str) -> list:
    config = RunConfig(
        model="mock",
        benches=["structfact:demo"],
        strategies=["zero_shot"],
        options={"option_map": "0,1,2", **options},
        data_dir=str(shared_datasets),
    )
    selections = prepare(config, DataContext(data_dir=shared_datasets, offline=True))
    return Run(tmp_path / "run", config).execute(
        backend, selections, cache=None, concurrency=4, progress=False  # type: ignore[arg-type]
    ).results


def test_three_maps_in_one_run_with_the_averaged_headline(tmp_path: Path, shared_datasets: Path) -> None:
    always_a = MockBackend(default="A")  # "A" is Yes, No, Not sure enough under maps 0, 1, 2
    (result,) = _run(tmp_path, shared_datasets, always_a)
    assert result.n == 75 and result.errors == 0
    groups = result.breakdowns["option_map"]
    assert {m: g.n for m, g in groups.items()} == {"0": 25, "1": 25, "2": 25}
    # the demo is 21 YES and 4 NO: "A" is right 21 times under map 0, 4 times under map 1, never under map 2
    assert groups["0"].metrics["accuracy"] == pytest.approx(21 / 25)
    assert groups["1"].metrics["accuracy"] == pytest.approx(4 / 25)
    assert groups["2"].metrics["accuracy"] == 0.0
    for name in (*METRIC_NAMES, "no_answer"):
        mean = np.mean([g.metrics[name] for g in groups.values()])
        assert result.metrics[name] == pytest.approx(mean), name
    assert result.headline.name == "weighted_f1"
    assert result.headline.value == pytest.approx(np.mean([g.metrics["weighted_f1"] for g in groups.values()]))
    per_map = result.extra["option_maps"]
    assert per_map["1"]["letters"] == {"A": "No", "B": "Yes", "C": "Not sure enough"}
    assert per_map["2"]["n"] == 25 and per_map["2"]["metrics"] == groups["2"].metrics
    assert "option_map" not in result.extra
    # every task's numbers are averaged over the maps too
    task = next(iter(result.breakdowns["task"].values()))
    assert task.n == 15 and task.metrics["accuracy"] <= 1.0

    # a model that says Yes under every order scores the same under each map
    (steady,) = _run(tmp_path / "steady", shared_datasets, MockBackend(reply=_always_yes_letter))
    accuracies = {m: g.metrics["accuracy"] for m, g in steady.breakdowns["option_map"].items()}
    assert accuracies == dict.fromkeys(("0", "1", "2"), pytest.approx(21 / 25))


def test_each_map_prompts_and_parses_its_own_order(shared_data: DataContext) -> None:
    bench = StructFact({"option_map": "0,1,2", "shots": 2})
    samples = bench.load("demo", shared_data, seed=0, limit=None)
    assert [s.id for s in samples[:3]] == ["0/map0", "0/map1", "0/map2"]
    assert [s.meta["option_map"] for s in samples[:3]] == ["0", "1", "2"]
    seen: list[Request] = []
    for s in samples[:3]:
        run(bench.strategy("few_shot"), s, scripted_generate(["A"], seen))
    prompts = [prompt_text(r) for r in seen]
    assert "A) Yes\nB) No\nC) Not sure enough" in prompts[0]
    assert "A) No\nB) Yes\nC) Not sure enough" in prompts[1]
    assert "A) Not sure enough\nB) Yes\nC) No" in prompts[2]
    # the same examples (drawn per record) under every map: only the options' order differs
    examples = [p.split("Here are some examples.\n")[1].split("Now, consider")[0] for p in prompts]
    assert re.sub(r"A: [ABC]\.", "", examples[0]) == re.sub(r"A: [ABC]\.", "", examples[1])
    gold_yes = samples[0]
    assert gold_yes.gold.label == "YES"  # type: ignore[union-attr]
    letters = {"0": "A", "1": "B", "2": "B"}
    for s in samples[:3]:
        assert bench.score(s, Attempt(output=letters[s.meta["option_map"]]), bench.strategy("zero_shot")).score == 1.0
        assert bench.export_fields(s)["answer_option"] == letters[s.meta["option_map"]]
    assert len(bench.load("demo", shared_data, seed=0, limit=7)) == 9  # whole records: 3 of them


def test_oracle_reaches_one_under_three_maps(tmp_path: Path, shared_datasets: Path) -> None:
    (result,) = _run(tmp_path, shared_datasets, OracleBackend())
    assert result.headline.value == 1.0
    assert all(g.metrics["weighted_f1"] == 1.0 for g in result.breakdowns["option_map"].values())


def test_vectorized_statistic_equals_the_map_average() -> None:
    rng = random.Random(5)
    labels = ["YES", "NO", "NOT SURE ENOUGH"]
    bench = StructFact({"option_map": "0,1,2"})
    pool = []
    for i in range(90):
        gold, parsed = rng.choice(labels), rng.choice([*labels, None])
        meta = {"option_map": str(i % 3)}
        pool.append(Scored(id=f"{i}", task="t", parsed=parsed, gold=gold, score=float(parsed == gold), meta=meta))
    idx = np.random.default_rng(4).integers(0, len(pool), size=(40, len(pool)))
    idx[0] = np.repeat(np.arange(30) * 3, 3)  # a resample without maps 1 and 2: the average is map 0's alone
    for metric in ("weighted_f1", "macro_f1", "balanced_accuracy"):
        stat = bench.statistic(pool, metric)
        assert stat is not None
        slow = [bench.aggregate([pool[i] for i in row])[metric] for row in idx]
        assert stat.weighted(counts_of(idx, idx.shape[1])) == pytest.approx(slow, abs=1e-12), metric
    assert bench.aggregate(pool)["weighted_f1"] == pytest.approx(
        np.mean([
            classification_metrics([str(s.gold) for s in pool[m::3]], [s.parsed for s in pool[m::3]])["weighted_f1"]
            for m in range(3)
        ])
    )


@pytest.mark.parametrize("value", ["6", "0,0", "", "a", "0,7"])
def test_bad_option_maps_are_usage_errors(value: str) -> None:
    with pytest.raises(UsageError, match="option_map"):
        StructFact({"option_map": value})
