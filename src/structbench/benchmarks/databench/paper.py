"""DataBench's robustness preset: the standard grid of table formats and perturbations over DataBench Lite."""

from __future__ import annotations

from structbench.papers.robustness import robustness_preset

ROBUSTNESS = (
    robustness_preset("databench", "databench:lite", "direct", paper_format="markdown",
                      description="DataBench Lite's 1,300 questions (direct, the 20-row samples shown) in 28 cells: "
                                  "Markdown and 6 other table formats x no perturbation, shuffled rows and columns, "
                                  "transposed"),
)
"""``--preset robust-databench``. Only the lite variant: the whole tables are too large to show in most cells."""
