"""What lines a run up with the paper: per-testbed headlines and averages, contexts taken as they are,
decoding and curation options."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from structbench.backends.oracle import OracleBackend
from structbench.benchmarks.skabench import SkaBench
from structbench.benchmarks.skabench.testbeds import PAPER_BREAKDOWNS, paper_breakdowns
from structbench.contract.benchmark import Scored
from structbench.core.errors import DataError
from structbench.data import Graph, Table, Text
from structbench.data.datasets import DataContext
from structbench.runfiles.results import compute_result
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.run import Run
from structbench.runner.selection import prepare


def _scored(testbed: str, kt: str, cell: str, score: float, n: int) -> list[Scored]:
    budget = cell if testbed == "noise_robustness" else "4k"
    position = cell if testbed == "order_insensitivity" else "random"
    units = cell if testbed == "information_integration" else "3"
    meta = {"testbed": testbed, "knowledge_type": kt, "budget": budget, "position": position, "positive_units": units}
    meta |= paper_breakdowns(testbed, kt, budget, position, units)
    return [Scored(id=f"{testbed}/{kt}/{cell}/{i}", task=testbed, parsed=None, gold=None, score=score, meta=meta)
            for i in range(n)]


def test_headline_per_testbed_and_the_papers_averages() -> None:
    scored = [
        *_scored("noise_robustness", "kg", "1k", 1.0, 4),  # Table 3 cell kg/1k = 1.0
        *_scored("noise_robustness", "table", "1k", 0.0, 1),  # cell table/1k = 0.0
        *_scored("order_insensitivity", "table", "prefix", 0.5, 2),
        *_scored("order_insensitivity", "table", "suffix", 1.0, 1),
        *_scored("information_integration", "kg", "2", 0.25, 4),
        *_scored("negative_rejection", "kg", "-", 1.0, 3),  # Table 5: kg 1.0, table 0.0
        *_scored("negative_rejection", "table", "-", 0.0, 1),
    ]
    metrics = SkaBench().aggregate(scored)
    assert metrics["noise_robustness"] == pytest.approx(0.8)  # 4 of 5 samples
    assert metrics["noise_robustness_avg"] == pytest.approx(0.5)  # Figure 5: the mean of the table's cells
    assert metrics["order_insensitivity"] == pytest.approx(2 / 3)
    assert metrics["order_insensitivity_avg"] == pytest.approx(0.75)
    assert metrics["information_integration"] == pytest.approx(0.25)
    assert metrics["negative_rejection"] == metrics["rejection_rate"] == pytest.approx(0.75)
    assert metrics["negative_rejection_avg"] == pytest.approx(0.5)  # Table 5's Avg. over knowledge types
    assert metrics["f1"] == pytest.approx((4 + 2 * 0.5 + 1 + 4 * 0.25) / 12)  # every QA sample alike
    result = compute_result(SkaBench(), "rfqa", "direct", "m", scored)
    assert result.breakdowns[PAPER_BREAKDOWNS["noise_robustness"]]["kg/1k"].metrics["noise_robustness"] == 1.0
    assert set(result.breakdowns[PAPER_BREAKDOWNS["order_insensitivity"]]) == {"table/prefix", "table/suffix"}
    assert set(result.breakdowns[PAPER_BREAKDOWNS["negative_rejection"]]) == {"kg", "table"}
    assert result.breakdowns[PAPER_BREAKDOWNS["information_integration"]]["kg/2"].n == 4
    only_noise = SkaBench().aggregate(scored[:5])
    assert math.isnan(only_noise["negative_rejection"]) and math.isnan(only_noise["order_insensitivity_avg"])


CONTEXTS = [
    {
        "id": "kg-noise",
        "testbed": "noise",
        "knowledge_type": "kg",
        "question": "Which nation has the Alta Verapaz Department?",
        "answers": ["Guatemala"],
        "units": [[f"Country {i}", "contains", f"Department {i}"] for i in range(9, 0, -1)]
        + [["Guatemala", "administrative_divisions", "Alta Verapaz Department"]],
        "budget": "1k",
    },
    {
        "id": "table-negative",
        "testbed": "negative_rejection",
        "knowledge_type": "table",
        "question": "Who scored 48 goals?",
        "header": ["Name", "Goals"],
        "units": [{"cells": ["Zed", "9"]}, {"cells": ["Amy", "3"]}],
        "budget": 4000,
    },
    {
        "id": "hybrid-integration",
        "testbed": "integration",
        "knowledge_type": "table+text",
        "question": "What are the goals of the athlete who managed Middlesbrough?",
        "answers": ["40"],
        "header": ["Name", "Goals"],
        "units": ["Bryan Robson: manager of Middlesbrough.", {"cells": ["Bryan Robson", "40"]}, "Ray: a player."],
        "positive_units": 2,
        "position": "prefix",
    },
]


def test_contexts_are_evaluated_exactly_as_laid_out(tmp_path: Path) -> None:
    path = tmp_path / "contexts.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in CONTEXTS) + "\n")
    bench = SkaBench({"path": str(path), "testbed": "all"})
    samples = {s.id: s for s in bench.load("contexts", DataContext(), seed=0, limit=None)}
    assert list(samples) == ["kg-noise", "table-negative", "hybrid-integration"]
    kg = samples["kg-noise"]
    graph = kg.evidence[0]
    assert isinstance(graph, Graph) and graph.triples[0] == ("Country 9", "contains", "Department 9")
    lines = bench.prompt(kg).split("\n")
    assert lines[1] == "(Country 9, contains, Department 9)"  # not re-shuffled
    assert lines[10] == "(Guatemala, administrative_divisions, Alta Verapaz Department)"
    assert kg.meta["budget"] == "1k" and kg.meta["position"] == "random"
    assert kg.meta[PAPER_BREAKDOWNS["noise_robustness"]] == "kg/1k"
    negative = samples["table-negative"]
    assert isinstance(negative.evidence[0], Table) and negative.evidence[0].rows == [["Zed", "9"], ["Amy", "3"]]
    assert "judge whether the following questions can be answered" in bench.prompt(negative)
    hybrid = samples["hybrid-integration"]
    assert [type(e) for e in hybrid.evidence] == [Table, Text, Text]
    prompt = bench.prompt(hybrid)
    assert prompt.index("|Bryan Robson|40|") < prompt.index("### Texts:\nBryan Robson: manager") < prompt.index("Ray:")
    assert hybrid.meta["positive_units"] == "2" and hybrid.meta["budget"] == "unknown"
    only = SkaBench({"path": str(path), "testbed": "noise,negative", "knowledge": "table"})
    assert [s.id for s in only.load("contexts", DataContext(), seed=0, limit=None)] == ["table-negative"]
    order = [{**CONTEXTS[0], "id": f"kg-{p}", "testbed": "order", "position": p} for p in ("prefix", "suffix")]
    path.write_text("\n".join(json.dumps(c) for c in order) + "\n")
    prefix_only = SkaBench({"path": str(path), "testbed": "order", "position": "prefix"})
    assert [s.id for s in prefix_only.load("contexts", DataContext(), seed=0, limit=None)] == ["kg-prefix"]
    path.write_text("\n".join(json.dumps(c) for c in CONTEXTS) + "\n")

    config = RunConfig.model_validate(
        {"model": "oracle", "benches": ["skabench:contexts"], "options": {"path": str(path), "testbed": "all"}}
    )
    metrics = Run(tmp_path / "run", config).execute(
        OracleBackend(), prepare(config, DataContext()), cache=None, concurrency=4, progress=False
    )
    (entry,) = metrics.results
    assert entry.n == 3 and entry.metrics["f1"] == entry.metrics["negative_rejection"] == 1.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"answers": []}, r":1: answers: required for the noise_robustness testbed"),
        ({"testbed": "speed"}, r":1: testbed: .*unknown testbed 'speed'"),
        ({"units": [{"cells": ["a"]}]}, r":1: units\[0\]: a row unit cannot be part of a kg context"),
        ({"testbed": "integration"}, r":1: positive_units: required for information integration"),
        ({"units": []}, r":1: units: List should have at least 1 item"),
    ],
)
def test_bad_context_lines_name_file_line_and_field(tmp_path: Path, change: dict[str, object], message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({**CONTEXTS[0], **change}) + "\n")
    with pytest.raises(DataError, match=f"bad.jsonl{message}"):
        SkaBench({"path": str(path)}).load("contexts", DataContext(), seed=0, limit=None)


def test_decoding_defaults_and_options(shared_data: DataContext) -> None:
    default = SkaBench()
    o = default.options
    assert o.temperature == 0.0 and o.max_tokens == 4096 and o.min_columns == 3
    tuned = SkaBench({"temperature": "0.6", "max_tokens": "8192", "questions": "1", "knowledge": "table"})
    samples = list(tuned.load("rfqa", shared_data, seed=0, limit=1))
    request = tuned.request(samples[0])
    assert request.params.temperature == 0.6 and request.params.max_tokens == 8192


def test_min_columns_keeps_only_wide_tables(shared_data: DataContext) -> None:
    wide = SkaBench({"min_columns": "6", "questions": "6", "knowledge": "table", "testbed": "noise"})
    instances = wide.instances("rfqa", shared_data, seed=0)
    assert instances and {i.meta["table"] for i in instances} == {"country"}  # city 5, country_language 4
    narrow = SkaBench({"questions": "12", "knowledge": "table"})
    assert len({i.meta["table"] for i in narrow.instances("rfqa", shared_data, seed=0)}) > 1
