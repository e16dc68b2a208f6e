"""TableBench's main results (the paper's table, and the 2024 leaderboard with the same numbers): ROUGE-L per
category, Pass@1 for charts and their Mix, under each of the four instruction types; its preset and how a run
fills the columns.

A run's model gets one row; each instruction type fills its four category columns and its overall column from the
paper's metrics (``*_original``: ROUGE-L; ``visualization``: Pass@1; ``overall_original``: their Mix).
"""

from __future__ import annotations

from pathlib import Path

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

TABLES = (MAIN,)
