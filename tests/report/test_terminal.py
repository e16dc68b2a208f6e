"""The run's tables on a terminal: whole where they fit, else key columns with the rest below, else a block per
entry; never a name or a number cut."""

from __future__ import annotations

import pytest
from rich.console import Console

from structbench.report.markdown import headline_grid, headline_table
from structbench.report.terminal import fitted
from structbench.runfiles.results import Headline, MetricsFile, ResultEntry


def entry(bench: str, variant: str, strategy: str, cell: str = "") -> ResultEntry:
    return ResultEntry(benchmark=bench, variant=variant, strategy=strategy, model="openai:Qwen/Qwen2.5-7B-Instruct",
                       cell=cell, headline=Headline(name="weighted_f1", value=0.4034, ci_low=0.1967, ci_high=0.6005,
                                                    confidence=0.95, unit="table", clusters=12),
                       metrics={"weighted_f1": 0.4034}, n=30, errors=2, baselines={"chance": 0.3873, "majority": 0.3})


METRICS = MetricsFile(results=[entry("structfact", "generated", "few_shot"), entry("scitab", "all", "zero_shot"),
                               entry("skabench", "table", "direct", cell="perturbation=transpose"),
                               entry("structext", "test", "program_of_thought")])


def shown(width: int) -> str:
    console = Console(width=width, record=True, force_terminal=False)
    console.print(fitted(headline_grid(METRICS), width))
    return console.export_text()


@pytest.mark.parametrize("width", [40, 60, 80, 120, 400])
def test_every_name_and_number_reads_whole_at_any_width(width: int) -> None:
    text = shown(width)
    assert "…" not in text and max(len(line.rstrip()) for line in text.splitlines()) <= width
    words = " ".join(text.split())
    for r in METRICS.results:
        for value in (r.benchmark, r.variant, r.strategy, "weighted_f1", "0.4034", "[0.1967, 0.6005]",
                      "chance 0.3873, majority 0.3000", "openai:Qwen/Qwen2.5-7B-Instruct"):
            assert value in words, (width, value)
    assert "perturbation=transpose" in words


def test_the_layout_follows_the_width() -> None:
    wide, middle, narrow = shown(400), shown(120), shown(60)
    assert wide.splitlines()[0].split()[:4] == ["benchmark", "variant", "strategy", "cell"]  # the whole table
    assert "harness errors" in wide.splitlines()[0] and "model:" not in wide
    header = middle.splitlines()[0].split()
    assert header == ["benchmark", "variant", "strategy", "cell", "metric", "value", "95%", "CI", "n"]
    assert "skabench:table [perturbation=transpose]/direct" in middle and "resampled: 12 tables" in middle
    assert not narrow.startswith("benchmark") and "structext:test/program_of_thought" in narrow  # a block each
    assert "value: 0.4034" in narrow and "95% CI: [0.1967," in narrow


def test_a_pipe_gets_the_markdown_table() -> None:
    lines = headline_table(METRICS).splitlines()
    assert lines[0].startswith("| benchmark | variant | strategy | cell | model | metric | value | 95% CI |")
    assert len(lines) == 2 + len(METRICS.results) and all(line.count("|") == lines[0].count("|") for line in lines)
