"""The prompts: ``pot`` is the official baseline's, ``direct`` and ``cot`` show the variant's table, and a table
larger than ``max_cells`` is not sent (its question counts as too long for the model)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest

from structbench.backends.base import PROMPT_TOO_LONG, BackendError, Request, Response
from structbench.benchmarks.databench import DataBench
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from structbench.testing.cli import invoke

databench_eval = pytest.importorskip("databench_eval")


def _first(data: DataContext, variant: str = "databench", **options: str) -> tuple[DataBench, Sample]:
    bench = DataBench(options)
    return bench, next(iter(bench.load(variant, data, seed=0, limit=None)))


def test_pot_sends_the_official_baselines_prompt(data: DataContext, monkeypatch: pytest.MonkeyPatch) -> None:
    bench, sample = _first(data)
    table = pd.read_parquet(sample.extra["table"])
    monkeypatch.setattr(databench_eval.utils, "load_table", lambda name, lang="EN": table)
    row = {"dataset": sample.meta["dataset"], "question": sample.question, "type": sample.extra["type"]}
    request = bench.program_request(sample)
    assert request.messages is not None and request.messages[-1].content == databench_eval.utils.example_generator(row)
    completion = DataBench({"pot_request": "completion"}).program_request(sample)
    assert completion.prompt == request.messages[-1].content and completion.messages is None


@pytest.mark.parametrize("variant", ["databench", "lite"])
def test_direct_shows_the_variants_table(variant: str, data: DataContext) -> None:
    bench, sample = _first(data, variant)
    text = bench.table_request(sample, "direct").messages[-1].content  # type: ignore[index]
    rows = pd.read_parquet(sample.extra["table"])
    assert sample.question in text and text.rstrip().endswith('"Answer: <answer>".')
    assert text.count("\n|") == len(rows) + 2  # the header, its separator line, then one line per row
    assert "The answer is True or False." in text  # the first question is a boolean


def test_the_serialization_and_perturbation_change_the_table_shown(data: DataContext) -> None:
    _, sample = _first(data, "lite")
    csv = DataBench({"serialization": "csv"}).table_request(sample, "direct").messages[-1].content  # type: ignore
    assert "name,region,main fruit,trees,yield (tonnes),organic,planted" in csv
    moved = DataBench({"perturbation": "shuffle_rows"}).table_request(sample, "direct").messages[-1].content  # type: ignore
    plain = DataBench().table_request(sample, "direct").messages[-1].content  # type: ignore[index]
    assert moved != plain and sorted(moved.splitlines()) == sorted(plain.splitlines())


def test_a_table_above_max_cells_is_too_long_and_never_sent(data: DataContext) -> None:
    bench, sample = _first(data, max_cells="100")
    sent: list[Request] = []

    async def generate(request: Request) -> Response:
        sent.append(request)
        raise AssertionError("not sent")

    with pytest.raises(BackendError, match=r"60 rows x 7 columns = 420 cells, more than max_cells=100") as info:
        asyncio.run(bench.strategy("direct").run(sample, generate))
    assert info.value.cause == PROMPT_TOO_LONG and not sent
    lite_bench, lite = _first(data, "lite", max_cells="200")  # 20 rows x 7: shown
    assert lite_bench.table_request(lite, "cot").messages  # type: ignore[union-attr]


def test_a_run_counts_tables_above_max_cells_as_too_long(generated: Path, tmp_path: Path) -> None:
    done = invoke("run", "-m", "oracle", "-b", "databench", "--strategy", "direct", "--data-dir", str(generated),
                  "--option", "max_cells=100", "--no-cache", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    (entry,) = json.loads((tmp_path / "run" / "metrics.json").read_text())["results"]
    assert entry["too_long"] == 40 and entry["n"] == 0


def test_bad_options_are_usage_errors(generated: Path, tmp_path: Path) -> None:
    for option, says in (("serialization=markdwn", "Did you mean: markdown?"), ("pot_reply=lenient", "pot_reply"),
                         ("max_cells=0", "max_cells")):
        done = invoke("run", "-m", "oracle", "-b", "databench", "--data-dir", str(generated), "--option", option,
                      "--out", str(tmp_path / option))
        assert done.returncode == 2 and says in done.stderr, (option, done.stderr)
