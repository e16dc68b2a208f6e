"""A run's tables on a terminal, fitted to its width.

The whole headline table needs some 220 columns; squeezed into 80, rich cut every heading and name (``ben…``,
``structf…``). Here a table is drawn whole where it fits; else its key columns (what names and scores an entry:
benchmark, variant, strategy, metric, value, interval, n) as a table, and each entry's other columns in a paragraph
under it; and where even the key columns do not fit, one block per entry. No name or number is ever cut.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from structbench.report.markdown import Grid

if TYPE_CHECKING:
    from rich.console import RenderableType

NAMING = ("benchmark", "variant", "strategy", "cell")
"""The columns an entry's name (``Grid.names``) already says."""


def _table(columns: list[str], rows: list[list[str]]) -> RenderableType:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0), header_style="bold")
    for name in columns:
        table.add_column(name, no_wrap=True)
    for row in rows:
        table.add_row(*map(Text, row))  # as text: a name's ``[link=...]`` is no rich markup
    return table


def table_width(columns: list[str], rows: list[list[str]]) -> int:
    """Columns ``_table`` of these cells needs with every cell whole (rich's own measure of it)."""
    from rich.console import Console
    from rich.measure import Measurement

    console = Console(width=100_000)
    return Measurement.get(console, console.options, _table(columns, rows)).maximum


def fitted(grid: Grid, width: int) -> RenderableType:
    """``grid`` for a terminal ``width`` columns wide: whole, or its key columns with the rest under the table, or a
    block per entry (see the module)."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    if table_width(grid.columns, grid.rows) <= width:
        return _table(grid.columns, grid.rows)
    keys = [i for i, c in enumerate(grid.columns) if c in grid.key]
    key_columns = [grid.columns[i] for i in keys]
    key_rows = [[row[i] for i in keys] for row in grid.rows]
    parts: list[RenderableType] = []
    if table_width(key_columns, key_rows) <= width:
        parts += [_table(key_columns, key_rows), Text("")]
        shown = set(grid.key)
    else:  # not even the key columns fit: each entry's key values go in its block too
        shown = set(NAMING)
    for name, row in zip(grid.names, grid.rows, strict=True):
        pairs = [f"{c}: {v}" for c, v in zip(grid.columns, row, strict=True) if c not in shown]
        parts.append(Text(name, style="bold"))
        parts.append(Padding(Text("; ".join(pairs)), (0, 0, 0, 2)))
    return Group(*parts)
