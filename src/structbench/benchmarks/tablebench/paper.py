"""TableBench's published tables, their presets and how a run fills the columns: the paper's main results (and the
2024 leaderboard with the same numbers), and the two tables of the leaderboard of April 2025; its robustness preset.

Main results: a run's model gets one row; each instruction type fills its four category columns and its overall
column from the paper's metrics (``*_original``: ROUGE-L; ``visualization``: Pass@1; ``overall_original``: their
Mix). The leaderboard's tables take the refined metrics of April 2025 as the released code computes them
(``scorer=released``): its methods table gets a row per instruction type (``{model} + DP``), its models table one
row with each instruction type's overall Mix.
"""

from __future__ import annotations

from pathlib import Path

from structbench.papers.robustness import robustness_preset
from structbench.papers.spec import Measure, PaperTable, Preset, RunRow

PUBLISHED = Path(__file__).parent / "published"
CATEGORIES = {
    "fc": "fact_checking_original",
    "nr": "numerical_reasoning_original",
    "da": "data_analysis_original",
    "viz": "visualization",
    "overall": "overall_original",
}
"""Column prefix -> the metric of ``TableBench.aggregate`` that fills it."""
STRATEGIES = ("dp", "tcot", "scot", "pot")

MAIN = PaperTable(
    benchmark="tablebench",
    path=PUBLISHED / "main.json",
    preset=Preset(
        name="tablebench-paper",
        description="TableBench main results: the four instruction types (DP, TCoT, SCoT, PoT), ROUGE-L per "
        "category, Pass@1 for charts and their Mix, parsed as the August 2024 code did",
        benches=("tablebench",),
        strategies=STRATEGIES,
        options={"scorer": "paper"},
        differences="The paper ran the release of 2024-08-29; structbench reads the current one (886 questions "
        "cleaned on 2025-04-18). ROUGE-L is averaged (the paper's code takes the median of 1,000 unseeded bootstrap "
        "means); replies get up to 4,096 new tokens (the paper's inference allowed 8,000: --max-tokens 8000).",
        scoring="The first 'Final Answer:' line of a reply (and of a program's output, with nothing read from an "
        "output without one); programs run as the released parser runs them: exec'd with its globals, a chart's "
        "program twice on the same figure.",
    ),
    rows=(RunRow({f"{prefix}_{strategy}": Measure(strategy, metric)
                  for prefix, metric in CATEGORIES.items() for strategy in STRATEGIES}),),
    plot=("overall_dp", "overall_tcot", "overall_scot", "overall_pot"),
)

LEADERBOARD_DIFFERENCES = (
    "The leaderboard states nothing of its runs beyond the instruction type (decoding, token limit): greedy, up to "
    "4,096 new tokens here; it ran the release of 2025-04-18, structbench reads the Hub's current one.")
LEADERBOARD_SCORING = (
    "The repository's parser and metrics of April 2025 (eval_tablebench_script.py): the first 'Final Answer:' line, "
    "EM on punctuation-stripped texts, programs run as its parser runs them, and the overall Mix with each chart "
    "counted as Pass@1 / 100 (a perfect model's Overall is 94.41).")
LEADERBOARD_CATEGORIES = {
    "fc": "fact_checking",
    "nr": "numerical_reasoning",
    "da": "data_analysis",
    "viz": "visualization",
    "overall": "overall",
}
"""Column of the methods table -> the metric of ``TableBench.aggregate`` (under ``scorer=released``) that fills it."""
LABELS = {"dp": "DP", "tcot": "TCoT", "scot": "SCoT", "pot": "PoT"}
"""Strategy -> the instruction type as the leaderboard prints it."""


def _leaderboard(name: str, file: str, shows: str, rows: tuple[RunRow, ...], plot: tuple[str, ...]) -> PaperTable:
    """One of the leaderboard's tables (April 2025), every instruction type scored by the released code."""
    return PaperTable(
        benchmark="tablebench",
        path=PUBLISHED / file,
        preset=Preset(
            name=name,
            description=f"TableBench leaderboard (April 2025), {shows}, scored by the released code of April 2025",
            benches=("tablebench",),
            strategies=STRATEGIES,
            options={"scorer": "released"},
            differences=LEADERBOARD_DIFFERENCES,
            scoring=LEADERBOARD_SCORING,
        ),
        rows=rows,
        plot=plot,
        requires={"scorer": "released"},
    )


LEADERBOARD_METHODS = _leaderboard(
    "tablebench-leaderboard", "leaderboard_methods.json",
    "methods: the four instruction types, FC / NR / DA / VIZ and the overall Mix",
    tuple(RunRow({key: Measure(strategy, metric) for key, metric in LEADERBOARD_CATEGORIES.items()},
                 label=f"{{model}} + {LABELS[strategy]}") for strategy in STRATEGIES),
    ("overall",),
)
LEADERBOARD_MODELS = _leaderboard(
    "tablebench-leaderboard-models", "leaderboard_models.json",
    "models: the overall Mix under each of the four instruction types",
    (RunRow({strategy: Measure(strategy, "overall") for strategy in STRATEGIES}),),
    STRATEGIES,
)

TABLES = (MAIN, LEADERBOARD_METHODS, LEADERBOARD_MODELS)


ROBUSTNESS = (
    robustness_preset("tablebench", "tablebench", "dp",
                      description="TableBench's 886 questions under direct prompting in 28 cells: the release's "
                                  "instruction (its table as a Python dict) and 6 other table formats x no "
                                  "perturbation, shuffled rows and columns, transposed"),
)
"""The standard robustness grid (``structbench.papers.robustness``): ``--preset robust-tablebench``."""
