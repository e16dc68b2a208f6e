"""A toy benchmark that declares a paper table, to test the paper view without a real paper.

Its table (``papertoy.json``) has columns for the direct and vote strategies, the red and blue tasks,
one column averaged over two option orders (the ``serialization`` option), a Mean, a paired Mean of one
column with itself and a Change; importing this module registers it as ``papertoy``."""

from __future__ import annotations

from pathlib import Path

from structbench.benchmarks import BENCHMARKS
from structbench.contract.benchmark import PaperParts
from structbench.papers import Change, Mean, Measure, Orders, PaperTable, Preset, RunRow
from toybench import ToyBench

ORDERS = Orders("serialization", ("markdown", "csv"), default="markdown")
TABLE = PaperTable(
    benchmark="papertoy",
    path=Path(__file__).with_name("papertoy.json"),
    preset=Preset(
        name="papertoy-table1",
        description="the toy paper's Table 1",
        benches=("papertoy",),
        strategies=("direct", "vote"),
        options={"serialization": "markdown,csv", "size": "40"},
    ),
    rows=(
        RunRow(
            {
                "direct": Measure("direct", "accuracy"),
                "vote": Measure("vote", "accuracy"),
                "red": Measure("direct", "accuracy", where={"task": "red"}),
                "blue": Measure("direct", "accuracy", where={"task": "blue"}),
                "orders": Measure("direct", "accuracy", orders=ORDERS),
                "overall": Mean(("direct", "vote")),
                "same": Mean(("direct", "direct")),
                "tasks": Mean(("red", "blue")),
                "change": Change(base="direct", other="vote"),
            }
        ),
        RunRow({"refine": Measure("refine", "accuracy", variant="big")}, label="{model} (refine)"),
    ),
    plot=("direct", "overall"),
    requires={"size": "40"},
)


class PaperToy(ToyBench):
    name = "papertoy"
    title = "Toy paper"

    paper = PaperParts(tables=(TABLE,))


if "papertoy" not in BENCHMARKS:
    BENCHMARKS.register("papertoy", PaperToy)
