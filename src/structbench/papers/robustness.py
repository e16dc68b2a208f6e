"""Robustness presets: a standard grid of serializations and perturbations per benchmark that shows tables.

``structbench run --model M --preset robust-<benchmark>`` runs the benchmark's paper prompt in every cell of the
grid (``runner.sweep``) and compares the cells in one run
(``structbench.analysis.robustness``). The grid is ToRR's seven
table formats (the paper's own standing for Markdown) crossed with no perturbation and the three that reorder or
reshape a table; a run costs ``cells x samples x strategies`` model calls (``docs/usage/robustness.md`` lists each
preset's). Benchmarks declare theirs through ``Benchmark.paper.robustness``.
"""

from __future__ import annotations

from collections.abc import Mapping

from structbench.papers.spec import Preset

SERIALIZATIONS = ("csv", "json", "html", "indexed_row_major", "df_loader", "concat")
"""ToRR's formats besides Markdown, which the paper's own writing stands for (the reference cell's)."""
PERTURBATIONS = ("none", "shuffle_rows", "shuffle_columns", "transpose")
"""No change (the reference), then rows and columns reordered and the table transposed."""
PREFIX = "robust-"


def robustness_preset(name: str, entry: str, strategy: str, *, paper_format: str = "paper",
                      options: Mapping[str, str] | None = None, description: str = "") -> Preset:
    """``robust-<name>``: the standard grid for ``entry`` (``BENCH[:VARIANT]``) under ``strategy``: ``paper_format``
    (the paper's writing, the reference) and ``SERIALIZATIONS`` crossed with ``PERTURBATIONS``."""
    grid = {"serialization": (paper_format, *SERIALIZATIONS), "perturbation": PERTURBATIONS}
    cells = len(grid["serialization"]) * len(grid["perturbation"])
    return Preset(
        name=f"{PREFIX}{name}",
        description=description or f"{entry} ({strategy}) in {cells} cells: 7 table formats x 4 perturbations",
        benches=(entry,),
        strategies=(strategy,),
        options=dict(options or {}),
        sweeps=grid,
    )
