"""Checks shared by the tests of each benchmark's published tables."""

from __future__ import annotations

import math

from structbench.papers import PaperTable, PublishedTable


def check_shape(table: PaperTable, rows: list[str], columns: list[str]) -> PublishedTable:
    """The file holds exactly the paper's rows and columns (labels as printed, in order), every row has a
    value or a dash for every column, and the mapping refers only to these columns."""
    data = table.published
    assert [r.name for r in data.rows] == rows
    assert [c.label for c in data.columns] == columns
    assert all(len(r.values) == len(columns) for r in data.rows)
    assert table.problems() == []
    numbers = data.numbers()
    assert len(numbers) == sum(v is not None for r in data.rows for v in r.values)
    for n in numbers:
        assert n.metric in data.metrics and n.scale in ("percent", "fraction")
        assert n.source.startswith(f"{data.title} {data.table} (")
        assert math.isfinite(n.value)
        column = data.column(n.column)
        if column.scale is None:  # a column with its own scale holds relative differences, not rates
            assert 0.0 <= n.value <= (1.0 if n.scale == "fraction" else 100.0)
    return data


def values(data: PublishedTable, row: str) -> dict[str, float | None]:
    """Column key -> value of one row."""
    r = next(r for r in data.rows if r.name == row)
    return {c.key: v for c, v in zip(data.columns, r.values, strict=True)}


def value(data: PublishedTable, row: str, column: str) -> float:
    v = values(data, row)[column]
    assert v is not None
    return v
