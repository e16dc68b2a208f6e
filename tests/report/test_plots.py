"""Figure selection by breakdown key, group ordering, depth x width heatmaps, confusion matrices."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from structbench.contract.benchmark import Scored
from structbench.report.build import build_document
from structbench.report.crosstab import crosstab
from structbench.report.entries import EntryView
from structbench.report.plots import BREAKDOWN_PLOTS, _ordered, breakdown_figure, confusion_figure, plot_for
from structbench.report.tables import confusions, group_order, label_counts, numeric_value
from structbench.runfiles.records import SampleRecord
from structbench.runfiles.results import compute_result
from structbench.runfiles.rundir import held_entry
from structbench.stats.confusion import ConfusionMatrix
from toybench import ToyBench


class GridBench(ToyBench):
    breakdown_keys = ("depth", "width", "budget")

    def answer_labels(self, scored: Sequence[Scored]) -> tuple[str, ...]:
        return ("yes", "no")


class FreeTextBench(GridBench):
    """The same answers, but the benchmark declares no label set (free text, as StrucText-Eval's)."""

    def answer_labels(self, scored: Sequence[Scored]) -> tuple[str, ...]:
        return ()


def view(seed: int = 0, strategy: str = "direct", model: str = "m", bench: GridBench | None = None,
         answer: Callable[[int, bool], Any] | None = None) -> EntryView:
    rng = np.random.default_rng(seed)
    records = []
    for i in range(120):
        depth, width = int(rng.integers(1, 4)), int(rng.integers(1, 3))
        ok = rng.random() < 1.0 / depth
        records.append(
            SampleRecord(
                benchmark="toy", variant="small", strategy=strategy, model=model, id=f"s{i}", task="t",
                prompt="p", output="yes" if ok else "no", parsed=answer(i, ok) if answer else "yes" if ok else "no",
                gold="yes",
                score=float(ok), meta={"depth": depth, "width": width, "budget": ["1k", "4k", "12k"][i % 3]},
            )
        )
    bench = bench or GridBench()
    result = compute_result(bench, "small", strategy, model, [r.scored() for r in records])
    return EntryView(result, held_entry(("toy", "small", strategy, model, ""), records), model, Path("run"), None,
                     bench)


def test_plot_selection_is_a_table_keyed_by_breakdown_name() -> None:
    budget = plot_for("budget", ["1k", "4k"])
    assert budget is BREAKDOWN_PLOTS["budget"] and budget.log_x and budget.xlabel == "token budget"
    attributes = plot_for("attributes", ["1", "2"])
    assert attributes is not None and attributes.metrics[0] == "tuple_similarity"
    assert plot_for("position", ["original", "random"]) is BREAKDOWN_PLOTS["position"]
    assert plot_for("budget", ["1k"]) is None  # one group: nothing to plot
    assert plot_for("colour", ["red", "blue", "green"]) is None  # not registered, not numeric
    generic = plot_for("rows", ["2", "3", "4"])
    assert generic is not None and generic.xlabel == "rows"
    assert plot_for("rows", ["2", "3"]) is None  # generic plots need three groups
    assert _ordered(["suffix", "random", "prefix", "original"], BREAKDOWN_PLOTS["position"]) == [
        "original", "prefix", "random", "suffix"
    ]


def test_group_values_sort_numerically_with_budget_suffixes() -> None:
    assert numeric_value("4k") == 4000 and numeric_value("0.5") == 0.5 and numeric_value("1M") == 1e6
    assert numeric_value(">4") is None and numeric_value("json") is None and numeric_value("nan") is None
    assert sorted(["24k", ">4", "1k", "12k", "2", "4k", "b", "a"], key=group_order) == [
        "2", ">4", "1k", "4k", "12k", "24k", "a", "b"
    ]
    # Bins as RFQA and SKA-Bench label them.
    bins = [">500", "101-500", "11-50", "2-10", "51-100", "1"]
    assert sorted(bins, key=group_order) == ["1", "2-10", "11-50", "51-100", "101-500", ">500"]
    assert sorted(["4+", "<2", "2", "3"], key=group_order) == ["<2", "2", "3", "4+"]
    assert plot_for("cells", bins) is BREAKDOWN_PLOTS["cells"] and plot_for("attrs", ["1", "2"]) is not None
    assert _ordered(bins, BREAKDOWN_PLOTS["cells"])[-1] == ">500"


def test_crosstab_reaggregates_each_cell() -> None:
    v = view()
    rows, cols, grid = crosstab(v, ("depth", "width")) or ([], [], np.zeros(0))
    assert rows == ["1", "2", "3"] and cols == ["1", "2"]
    for i, d in enumerate(rows):
        for j, w in enumerate(cols):
            cell = [r.score for r in v.records if str(r.meta["depth"]) == d and str(r.meta["width"]) == w]
            assert grid[i, j] == pytest.approx(sum(cell) / len(cell))
    assert crosstab(v, ("depth", "nothing")) is None


def test_document_gets_line_plots_and_heatmap() -> None:
    views = [view(0, "direct"), view(1, "cot")]
    doc = build_document(views, "t")
    section = doc.sections[1]
    titles = [c.title for c in section.children]
    assert titles == ["toy:small by depth", "toy:small by width", "toy:small by budget",
                      "toy:small by depth × width", "toy:small predicted labels"]
    budget = section.children[2]
    assert budget.blocks[0].columns[2:] == ["1k (n=40)", "4k (n=40)", "12k (n=40)"]  # type: ignore[union-attr]
    figure = budget.blocks[1]
    assert figure.caption == "accuracy vs token budget" and figure.svg.startswith("<svg")  # type: ignore[union-attr]
    heat = section.children[3].blocks[0]
    # Two panels, each a raster grid and a raster colour bar; no duplicate raster ids survive.
    assert heat.svg.count("<image") == 4 and 'id="image' not in heat.svg  # type: ignore[union-attr]
    made = breakdown_figure(views, "width", BREAKDOWN_PLOTS["width"], "w")
    assert made is not None and made[1] == "accuracy" and 'id="w-figure_1"' in made[0]


def test_confusion_matrices_come_from_the_typed_field() -> None:
    v = view()
    assert confusions(v) == []
    cm = ConfusionMatrix(gold=["yes", "no"], predicted=["yes", "no", "invalid"], counts=[[3, 1, 0], [2, 4, 1]])
    v.result.confusion_matrices["labels"] = cm
    assert confusions(v) == [("labels", cm)]
    svg = confusion_figure([v], "c")
    assert svg is not None and "invalid" in svg and "labels" in svg


def test_label_distribution_only_for_few_scalar_labels() -> None:
    v = view()
    labels, gold, per_view = label_counts([v]) or ([], {}, [])
    assert labels == ["no", "yes"] and gold["yes"] == 120 and sum(per_view[0].values()) == 120
    assert label_counts([view(answer=lambda i, ok: [str(i)])]) is None
    assert label_counts([view(answer=lambda i, ok: f"label{i}")]) is None
    assert label_counts([view(bench=FreeTextBench())]) is None  # a few short answers, but not labels
    assert v.result.headline.value is not None and not math.isnan(v.result.headline.value)


def test_names_with_dollar_signs_are_shown_as_text() -> None:
    views = [view(0, "direct", model="cost$1$ model")]
    made = breakdown_figure(views, "depth", BREAKDOWN_PLOTS["depth"], "d")
    assert made is not None and "cost$1$ model / direct" in made[0]
    doc = build_document(views, "t")
    assert any(c.title.endswith("depth × width") for c in doc.sections[1].children)
