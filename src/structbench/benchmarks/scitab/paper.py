"""SciTab's Table 4 (Lu et al.): macro-F1 in the zero-shot and in-context settings, 2-class and 3-class,
with the closed models' CoT and PoT rows; its preset and how a run fills the columns.

2-class columns come from the ``2class`` variant (NEI claims excluded, two-class prompts), 3-class
columns from ``all``; a run's model gets a row per prompting method, as the paper's GPT-4 and GPT-4+CoT,
and one with section 4.1's prompt for encoder-decoder and open-source models (zero-shot).
"""

from __future__ import annotations

from pathlib import Path

from structbench.papers.robustness import robustness_preset
from structbench.papers.spec import Measure, PaperTable, Preset, RunRow

PUBLISHED = Path(__file__).parent / "published"
CLASSES = {"2class": "2class", "3class": "all"}
"""Table 4's class settings -> variants."""


def _cells(setting: str, strategy: str, classes: tuple[str, ...] = ("2class", "3class")) -> dict[str, Measure]:
    return {f"{setting}_{c}": Measure(strategy, "macro_f1", variant=CLASSES[c]) for c in classes}


TABLE4 = PaperTable(
    benchmark="scitab",
    path=PUBLISHED / "table4.json",
    preset=Preset(
        name="scitab-table4",
        description="SciTab Table 4: zero-shot and in-context (3 demonstrations), 2- and 3-class macro-F1, "
        "with CoT and PoT",
        benches=("scitab:2class", "scitab:all"),
        strategies=("zero_shot", "in_context", "cot", "open_model", "scitab:2class/pot"),
        options={"pot_equal": "exact"},
        differences="The paper's held-out pool and its Balanced COPA demonstrations are unknown: see the SciTab "
        "divergences (pool of 25 claims, demonstrations from it). Decoding is greedy (the paper states none).",
        scoring="PoT programs compare numbers exactly (--option pot_equal=exact: equal is ==, so "
        "equal(88.64 - 86.69, 1.95) is False), as the paper's programs did (Appendix G, Table 5's calculation "
        "errors); structbench's default compares within a relative 1e-6.",
    ),
    rows=(
        RunRow({**_cells("zs", "zero_shot"), **_cells("ic", "in_context")}),
        RunRow(_cells("ic", "cot"), label="{model}+CoT"),
        RunRow(_cells("ic", "pot", ("2class",)), label="{model} PoT"),
        RunRow(_cells("zs", "open_model"), label="{model} (open-model prompt)"),
    ),
    plot=("zs_2class", "zs_3class"),
    requires={"keep_pool": "false"},
)

TABLES = (TABLE4,)


ROBUSTNESS = (
    robustness_preset("scitab", "scitab:all", "zero_shot",
                      description="The 1,199 claims (zero-shot, Appendix H.1) in 28 cells: the paper's || a | b || "
                                  "lines and 6 other table formats x no perturbation, shuffled rows and columns, "
                                  "transposed"),
)
"""The standard robustness grid (``structbench.papers.robustness``): ``--preset robust-scitab``."""
