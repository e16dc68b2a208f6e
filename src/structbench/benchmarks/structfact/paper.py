"""StructFact's tables (Huang et al.): Table 1 (prompts), Table 3 (tasks), Table 7 (temperature 0) and the
appendix's Tables 9 (other prompting strategies), 10-22 (the other metrics per prompt and per task) and 23
(evidence resilience), with their presets and how a run's records fill each column.

Every number is the mean over three option orders (maps 0, 1 and 2): each order's metric is computed on that
order's records, then averaged. Overall is the mean of the four prompt settings. The presets show few-shot
examples as the official code does, with ``[data example]`` in place of their data.
"""

from __future__ import annotations

from pathlib import Path

from structbench.benchmarks.structfact.options import PAPER_OPTION_MAPS
from structbench.papers.robustness import robustness_preset
from structbench.papers.spec import Cell, Mean, Measure, Orders, PaperTable, Preset, RunRow

PUBLISHED = Path(__file__).parent / "published"
ORDERS = Orders("option_map", tuple(str(m) for m in PAPER_OPTION_MAPS), default="0", id_suffix="/map{value}")
"""The paper averages each model over three option orders; the official code's maps 0, 1 and 2."""

PROMPTS = {"zs_direct": "zero_shot", "zs_cot": "zero_shot_cot", "fs_direct": "few_shot", "fs_cot": "few_shot_cot"}
"""Table 1's prompt settings -> strategies (Figure 13)."""
METRICS = {"acc": "accuracy", "f1": "weighted_f1"}
ALL_METRICS = {
    **METRICS,
    "prec": "weighted_precision",
    "recall": "weighted_recall",
    "ba": "balanced_accuracy",
    "mf1": "macro_f1",
}
"""The appendix's metrics (Acc., F1, Prec., Recall, BA, MF1) -> the benchmark's."""

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
ORDER_OPTION = {"option_map": ",".join(ORDERS.values), "shots": "1", "few_shot_placeholder": "true"}
"""The three option orders, one example per few-shot prompt (Appendix K.1), shown as the official
``generate_few_shot_examples`` shows it: the literal ``[data example]`` instead of its data."""


def _prompt_row(metrics: tuple[str, ...] = ("acc", "f1")) -> RunRow:
    cells: dict[str, Cell] = {
        f"{prompt}_{m}": Measure(strategy, ALL_METRICS[m], orders=ORDERS)
        for prompt, strategy in PROMPTS.items()
        for m in metrics
    }
    for m in metrics:
        cells[f"overall_{m}"] = Mean(tuple(f"{prompt}_{m}" for prompt in PROMPTS))
    return RunRow(cells)


def _preset(name: str, description: str, strategies: tuple[str, ...], temperature: str = "0.6",
            differences: str = DIFFERENCES, **options: str) -> Preset:
    return Preset(
        name=name,
        description=description,
        benches=("structfact",),
        strategies=strategies,
        options={**ORDER_OPTION, "temperature": temperature, "top_p": "0.95", **options},
        differences=differences,
    )


def _prompt_table(file: str, name: str, description: str, temperature: str,
                  metrics: tuple[str, ...] = ("acc", "f1")) -> PaperTable:
    return PaperTable(
        benchmark="structfact",
        path=PUBLISHED / file,
        preset=_preset(name, description, tuple(PROMPTS.values()), temperature),
        rows=(_prompt_row(metrics),),
        plot=(f"overall_{metrics[0]}", f"overall_{metrics[1]}"),
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
def _task_cells(strategy: str, metrics: tuple[str, ...], options: dict[str, str] | None = None) -> dict[str, Cell]:
    return {
        f"{task}_{m}": Measure(strategy, ALL_METRICS[m], where={"task": challenge}, orders=ORDERS,
                               options=options or {})
        for task, challenge in TASKS.items()
        for m in metrics
    }


def _task_table(number: int, strategy: str, metrics: tuple[str, ...], what: str) -> PaperTable:
    """One prompt's five tasks under two metrics (Table 3 and the appendix's Tables 12-22)."""
    return PaperTable(
        benchmark="structfact",
        path=PUBLISHED / f"table{number}.json",
        preset=_preset(f"structfact-table{number}", f"StructFact Table {number}: {what}", (strategy,)),
        rows=(RunRow(_task_cells(strategy, metrics)),),
        plot=(f"geo_{metrics[1]}", f"struct_{metrics[1]}"),
        variants=PAPER_VARIANTS,
        requires={"temperature": "0.6"},
        selection=SELECTION,
    )


TABLE3 = _task_table(3, "zero_shot", ("acc", "f1"), "the five tasks, zero-shot w/o CoT, three option orders")

APPENDIX_PROMPTS = {"zero_shot": "zero-shot w/o CoT", "zero_shot_cot": "zero-shot w/ CoT",
                    "few_shot": "few-shot w/o CoT", "few_shot_cot": "few-shot w/ CoT"}
PAIRS = {("prec", "recall"): "precision and recall", ("ba", "mf1"): "balanced accuracy and macro F1",
         ("acc", "f1"): "accuracy and F1"}
TASK_TABLES = (
    (12, "zero_shot", ("prec", "recall")), (13, "zero_shot", ("ba", "mf1")),
    (14, "zero_shot_cot", ("acc", "f1")), (15, "zero_shot_cot", ("prec", "recall")),
    (16, "zero_shot_cot", ("ba", "mf1")),
    (17, "few_shot", ("acc", "f1")), (18, "few_shot", ("prec", "recall")), (19, "few_shot", ("ba", "mf1")),
    (20, "few_shot_cot", ("acc", "f1")), (21, "few_shot_cot", ("prec", "recall")), (22, "few_shot_cot", ("ba", "mf1")),
)
"""The appendix's per-task tables: number, prompt (strategy), metric pair."""
APPENDIX_TASK_TABLES = tuple(
    _task_table(n, strategy, pair, f"the five tasks, {APPENDIX_PROMPTS[strategy]}, {PAIRS[pair]}")
    for n, strategy, pair in TASK_TABLES
)
TABLE10 = _prompt_table("table10.json", "structfact-table10", "StructFact Table 10: Table 1's prompts, balanced "
                        "accuracy and macro F1", "0.6", ("ba", "mf1"))
TABLE11 = _prompt_table("table11.json", "structfact-table11", "StructFact Table 11: Table 1's prompts, precision and "
                        "recall", "0.6", ("prec", "recall"))

METHODS = {"Self-Refine.": "self_refine", "Self-Consis.": "self_consistency", "Format Instruct.": "format_instructions"}
"""Table 9's prompting strategies (Appendix J) -> strategies."""


def _method_row(strategy: str, label: str) -> RunRow:
    cells = _task_cells(strategy, ("acc", "f1"))
    cells.update({f"overall_{m}": Measure(strategy, METRICS[m], orders=ORDERS) for m in METRICS})
    return RunRow(cells, label=f"{{model}}, {label}")


TABLE9 = PaperTable(
    benchmark="structfact",
    path=PUBLISHED / "table9.json",
    preset=_preset(
        "structfact-table9",
        "StructFact Table 9: self-refinement, self-consistency and format instructions across the five tasks",
        tuple(METHODS.values()),
        vote_on_raw_text="true",
    ),
    rows=tuple(_method_row(strategy, label) for label, strategy in METHODS.items()),
    plot=("overall_acc", "overall_f1"),
    variants=PAPER_VARIANTS,
    requires={"temperature": "0.6"},
    selection=SELECTION,
)

EVIDENCE = {
    "w/ data": ("zero_shot", {}),
    "w/ shuffled data (rows)": ("shuffled", {"shuffle": "rows"}),
    "w/ shuffled data (columns)": ("shuffled", {"shuffle": "columns"}),
    "w/ shuffled data (rows and columns)": ("shuffled", {"shuffle": "both"}),
    "w/o data": ("without_data", {}),
}
"""Table 23's settings -> strategy and the run options each needs (one shuffle per run)."""
TABLE23 = PaperTable(
    benchmark="structfact",
    path=PUBLISHED / "table23.json",
    preset=_preset(
        "structfact-table23",
        "StructFact Table 23: evidence resilience, zero-shot w/o CoT with the data, shuffled, and without it",
        ("zero_shot", "shuffled", "without_data"),
        differences=DIFFERENCES + " One run shuffles one way (shuffle=both: rows and columns); the rows-only and "
        "columns-only rows each need a run of the shuffled strategy with --option shuffle=rows or shuffle=columns "
        "(and the preset's other options), which fills them beside this one.",
    ),
    rows=tuple(
        RunRow(_task_cells(strategy, ("acc", "f1", "prec", "recall"), options), label=f"{{model}}, {setting}")
        for setting, (strategy, options) in EVIDENCE.items()
    ),
    plot=("arith_acc", "geo_acc"),
    variants=PAPER_VARIANTS,
    requires={"temperature": "0.6"},
    selection=SELECTION,
    unmapped={
        f"{task}_{m}_decr": "the paper's decrease against the w/ data row, which structbench prints as a row of its "
        "own (compare the rows)"
        for task in TASKS
        for m in ("acc", "f1", "prec", "recall")
    },
)

TABLES = (TABLE1, TABLE3, TABLE7, TABLE9, TABLE10, TABLE11, *APPENDIX_TASK_TABLES, TABLE23)


ROBUSTNESS = (
    robustness_preset("structfact", "structfact:demo", "zero_shot", options={"temperature": "0"},
                      description="The released demo (zero-shot w/o CoT, greedy) in 28 cells: the paper's strings "
                                  "and 6 other table formats x no perturbation, shuffled rows, shuffled columns, "
                                  "transposed"),
    robustness_preset("structfact-generated", "structfact:generated", "zero_shot",
                      options={"per_task": "20", "temperature": "0"},
                      description="100 claims generated over RelationalFactQA's tables (zero-shot, greedy) in 28 "
                                  "cells: 7 table formats x 4 perturbations"),
)
"""The standard robustness grids (``structbench.papers.robustness``): ``--preset robust-structfact``."""
