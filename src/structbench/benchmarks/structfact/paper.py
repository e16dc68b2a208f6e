"""StructFact's tables (Huang et al.): Table 1 (prompts), Table 3 (tasks) and Table 7 (temperature 0),
with their presets and how a run's records fill each column.

Every number is the mean over three option orders (maps 0, 1 and 2): each order's accuracy and weighted
F1 are computed on that order's records, then averaged. Overall is the mean of the four prompt settings.
"""

from __future__ import annotations

from pathlib import Path

from structbench.benchmarks.structfact.options import PAPER_OPTION_MAPS
from structbench.papers.spec import Cell, Mean, Measure, Orders, PaperTable, Preset, RunRow

PUBLISHED = Path(__file__).parent / "published"
ORDERS = Orders("option_map", tuple(str(m) for m in PAPER_OPTION_MAPS), default="0", id_suffix="/map{value}")
"""The paper averages each model over three option orders; the official code's maps 0, 1 and 2."""

PROMPTS = {"zs_direct": "zero_shot", "zs_cot": "zero_shot_cot", "fs_direct": "few_shot", "fs_cot": "few_shot_cot"}
"""Table 1's prompt settings -> strategies (Figure 13)."""
METRICS = {"acc": "accuracy", "f1": "weighted_f1"}

TASKS = {
    "arith": "Arithmetic Calculation",
    "geo": "Spatiotemporal Cognition",
    "multihop": "Multi-hop Reasoning",
    "comp": "Composition Understanding",
    "struct": "Combining Structural and Unstructural",
}
"""Table 3's tasks -> the release's CHALLENGE names (the paper's Geography-Time Reasoning and Combining
Structured and Unstructured)."""

DIFFERENCES = (
    "The paper's 13,407 questions are not released: the preset runs the 25-question demo (give the full "
    "release with --bench structfact:full -o full_path=FILE and the same strategies and options)."
)
PAPER_VARIANTS = ("demo", "full")
"""The released demo and the full release hold the paper's questions; ``generated`` does not."""
SELECTION = ("full_path",)
"""Where the full release is read from."""
ORDER_OPTION = {"option_map": ",".join(ORDERS.values), "shots": "1"}
"""The three option orders, and one example of the same task per few-shot prompt (Appendix K.1)."""


def _prompt_row() -> RunRow:
    cells: dict[str, Cell] = {
        f"{prompt}_{m}": Measure(strategy, metric, orders=ORDERS)
        for prompt, strategy in PROMPTS.items()
        for m, metric in METRICS.items()
    }
    for m in METRICS:
        cells[f"overall_{m}"] = Mean(tuple(f"{prompt}_{m}" for prompt in PROMPTS))
    return RunRow(cells)


def _prompt_table(file: str, name: str, description: str, temperature: str) -> PaperTable:
    return PaperTable(
        benchmark="structfact",
        path=PUBLISHED / file,
        preset=Preset(
            name=name,
            description=description,
            benches=("structfact",),
            strategies=tuple(PROMPTS.values()),
            options={**ORDER_OPTION, "temperature": temperature, "top_p": "0.95"},
            differences=DIFFERENCES,
        ),
        rows=(_prompt_row(),),
        plot=("overall_acc", "overall_f1"),
        variants=PAPER_VARIANTS,
        requires={"temperature": temperature},
        selection=SELECTION,
    )


TABLE1 = _prompt_table(
    "table1.json",
    "structfact-table1",
    "StructFact Table 1: zero-/few-shot x w/o and w/ CoT, accuracy and weighted F1, three option orders",
    "0.6",
)
TABLE7 = _prompt_table(
    "table7.json",
    "structfact-table7",
    "StructFact Table 7: Table 1 at temperature 0",
    "0",
)
TABLE3 = PaperTable(
    benchmark="structfact",
    path=PUBLISHED / "table3.json",
    preset=Preset(
        name="structfact-table3",
        description="StructFact Table 3: the five tasks, zero-shot w/o CoT, three option orders",
        benches=("structfact",),
        strategies=("zero_shot",),
        options={**ORDER_OPTION, "temperature": "0.6", "top_p": "0.95"},
        differences=DIFFERENCES,
    ),
    rows=(
        RunRow(
            {
                f"{task}_{m}": Measure("zero_shot", metric, where={"task": challenge}, orders=ORDERS)
                for task, challenge in TASKS.items()
                for m, metric in METRICS.items()
            }
        ),
    ),
    plot=("geo_f1", "struct_f1"),
    variants=PAPER_VARIANTS,
    requires={"temperature": "0.6"},
    selection=SELECTION,
)

TABLES = (TABLE1, TABLE3, TABLE7)
