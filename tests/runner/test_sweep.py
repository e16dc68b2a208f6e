"""Sweeps: parsing, the cells of each benchmark's grid, what is refused, the reference cell, and selections that
share one load where cells differ only in prompt options."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.analysis.robustness import reference_cell
from structbench.benchmarks import BENCHMARKS
from structbench.core.errors import UsageError
from structbench.core.words import flag_words
from structbench.data.datasets import DataContext
from structbench.runfiles.cells import Cell, cell_id, cell_options, cell_text, parse_sweeps
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.selection import prepare, sweep_plan
from structbench.runner.sweep import cells_for, check_sweeps, preset_sweeps

STRUCTFACT = BENCHMARKS.get("structfact")
SCITAB = BENCHMARKS.get("scitab")
GENERATED = {"structfact.tables": "synthetic", "structfact.per_task": "2"}


def test_parse_keeps_the_order_and_refuses_what_cannot_name_a_cell() -> None:
    assert parse_sweeps(["serialization=csv, json", "structfact.perturbation=none,transpose"]) == {
        "serialization": ["csv", "json"], "structfact.perturbation": ["none", "transpose"]}
    for bad, says in ((["serialization"], "expected KEY=V1,V2"), (["=csv"], "expected KEY=V1,V2"),
                      (["serialization="], "at least one value"), (["serialization=csv,csv"], "'csv' is given twice"),
                      (["serialization=a;b"], "may not contain ';'"),
                      (["serialization=csv", "serialization=json"], "given twice")):
        with pytest.raises(UsageError, match=says):
            parse_sweeps(bad)
    token = flag_words.set(True)  # the command line's words
    try:
        with pytest.raises(UsageError, match=r"^--sweep serialization: value 'csv' is given twice"):
            parse_sweeps(["serialization=csv,csv"])
    finally:
        flag_words.reset(token)


def test_the_grid_is_the_product_first_key_slowest_and_a_cell_names_itself_in_key_order() -> None:
    sweeps = {"serialization": ["paper", "csv"], "perturbation": ["none", "transpose"], "scitab.markup": ["keep"]}
    cells = cells_for(STRUCTFACT, sweeps)  # scitab.markup is not structfact's
    assert [dict(c.options) for c in cells] == [
        {"serialization": "paper", "perturbation": "none"}, {"serialization": "paper", "perturbation": "transpose"},
        {"serialization": "csv", "perturbation": "none"}, {"serialization": "csv", "perturbation": "transpose"}]
    assert [k for k, _ in cells[0].options] == ["serialization", "perturbation"]  # the sweep's order
    assert cells[1].id == "perturbation=transpose;serialization=paper"
    assert cells[1].qualified("structfact") == {"structfact.serialization": "paper",
                                                "structfact.perturbation": "transpose"}
    assert cell_options(cells[1].id) == {"perturbation": "transpose", "serialization": "paper"}
    assert cell_text(cells[1].id, ["serialization"]) == "serialization=paper, perturbation=transpose"
    assert cells_for(STRUCTFACT, {}) == [Cell()] and Cell().id == ""
    assert len(cells_for(SCITAB, sweeps)) == 4 * 1
    assert cell_id({"b": "1", "a": "x=y"}) == "a=x=y;b=1" and cell_options("a=x=y;b=1") == {"a": "x=y", "b": "1"}


def test_only_prompt_options_share_a_load() -> None:
    cell = Cell((("serialization", "csv"), ("per_task", "3"), ("perturbation", "dates")))
    assert cell.load_key(STRUCTFACT.loading.prompt_options) == (("per_task", "3"),)


def test_sweeps_no_benchmark_takes_or_set_twice_are_refused() -> None:
    check_sweeps([STRUCTFACT, SCITAB], {}, {"serialization": ["csv"], "scitab.markup": ["keep"]})
    cases = [
        ({"serializaton": ["csv"]}, {}, "no selected benchmark has this option. Did you mean: serialization?"),
        ({"rfqa.limit": ["1"]}, {}, "benchmark 'rfqa' is not part of this run"),
        ({"scitab.option_map": ["1"]}, {}, "scitab has no such option"),
        ({"serialization": ["csv"], "structfact.serialization": ["json"]}, {}, "both sweep structfact's serialization"),
        ({"serialization": ["csv"]}, {"structfact.serialization": "json"}, "also set by options; drop one"),
    ]
    for sweeps, options, says in cases:
        with pytest.raises(UsageError, match=says.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
            check_sweeps([STRUCTFACT, SCITAB], options, sweeps)


def test_the_reference_is_the_cell_at_the_options_values_without_the_sweep() -> None:
    cells = ["perturbation=transpose;serialization=csv", "perturbation=none;serialization=paper",
             "perturbation=none;serialization=csv"]
    assert reference_cell(STRUCTFACT({"serialization": "csv", "perturbation": "transpose"}), cells) == cells[1]
    assert reference_cell(STRUCTFACT({"option_map": "0,1"}), ["option_map=1", "option_map=0,1"]) == "option_map=1"
    assert reference_cell(STRUCTFACT(), ["serialization=csv", "serialization=json"]) == "serialization=csv"  # first


def test_a_preset_sweeps_its_grid_and_takes_other_keys() -> None:
    grid = preset_sweeps("robust-scitab", {"perturbation_seed": ["0", "1"]})
    assert grid["serialization"][0] == "paper" and len(grid["serialization"]) == 7
    assert grid["perturbation"] == ["none", "shuffle_rows", "shuffle_columns", "transpose"]
    assert grid["perturbation_seed"] == ["0", "1"]
    with pytest.raises(UsageError, match="preset robust-scitab sweeps serialization over paper,csv"):
        preset_sweeps("robust-scitab", {"scitab.serialization": ["csv"]})


def test_cells_that_differ_in_prompt_options_share_one_load(tmp_path: object) -> None:
    data = DataContext.from_env(None, offline=True)
    config = RunConfig(model="oracle", benches=["structfact:generated"], options=GENERATED,
                       sweeps={"serialization": ["paper", "csv"], "perturbation": ["none", "transpose"]})
    selections = prepare(config, data)
    assert [s.cell for s in selections] == ["perturbation=none;serialization=paper",
                                            "perturbation=transpose;serialization=paper",
                                            "perturbation=none;serialization=csv",
                                            "perturbation=transpose;serialization=csv"]
    assert all(s.samples is selections[0].samples for s in selections)  # one stream, read once for all
    assert selections[3].bench.options.serialization == "csv"
    assert selections[3].axes == ("serialization", "perturbation")
    loads = prepare(config.model_copy(update={"sweeps": {"per_task": ["1", "2"]},
                                              "options": {"structfact.tables": "synthetic"}}), data)
    assert len(list(loads[0].samples)) == 5 and len(list(loads[1].samples)) == 10  # a load option: a load per cell
    with pytest.raises(UsageError, match=r"structfact: bad --option: perturbation: .*unknown perturbation 'flip'.* "
                                         r"\(in the sweep's cell perturbation=flip\)"):
        prepare(config.model_copy(update={"sweeps": {"perturbation": ["none", "flip"]}}), data)


@pytest.mark.shared
def test_scitab_cells_take_the_demonstrations_of_the_one_load(shared_datasets: object) -> None:
    data = DataContext.from_env(shared_datasets, offline=True)  # type: ignore[arg-type]
    config = RunConfig(model="oracle", benches=["scitab"], strategies=["in_context"], limit=3,
                       sweeps={"serialization": ["paper", "csv"]})
    first, second = prepare(config, data)
    assert second.samples is first.samples and second.bench is not first.bench
    assert second.bench.demonstrations("all") == first.bench.demonstrations("all")
    assert second.bench.exclusions([]) == first.bench.exclusions([])
    prompt = second.bench.prompt(next(iter(second.samples)), "in_context")
    assert "Table:" in prompt and prompt != first.bench.prompt(next(iter(first.samples)), "in_context")


def test_a_sweep_says_its_cells_and_calls_before_setting_them_up(tmp_path: Path) -> None:
    import structbench

    notes: list[str] = []
    structbench.evaluate("oracle", "structfact:generated", strategy="zero_shot", limit=3, out=tmp_path / "r",
                         options={"tables": "synthetic", "per_task": 2}, progress=False, notify=notes.append,
                         sweep={"serialization": ["paper", "csv", "df_loader", "indexed_row_major"],
                                "perturbation": ["none", "transpose"]})
    assert notes[0] == ("note: the sweep is 8 cells (structfact:generated: 4 serialization x 2 perturbation, 1 "
                        "strategy): 24 samples to answer (at most 3 per cell and strategy, 1 epoch(s)), each at least "
                        "one model call; each cell is set up before the first call, which takes a while for a large "
                        "grid")
    large = RunConfig(model="oracle", benches=["scitab", "structext:test"], strategies=["all"], epochs=2,
                      sweeps={"perturbation_seed": [str(i) for i in range(1000)], "scitab.serialization":
                              [f"v{i}" for i in range(100)]})
    plan = sweep_plan(large)  # said from the configuration alone: nothing is loaded
    assert plan is not None and plan.startswith("note: the sweep is 100,001 cells (scitab: 1,000 perturbation_seed x "
                                                "100 serialization, 6 strategies; structext:test: no swept key, 8 "
                                                "strategies): every sample of each cell under each strategy")
