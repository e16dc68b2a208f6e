"""The in-memory step's typing of the model's cells: each column's fast path gives what ``_coerce`` gives."""

from __future__ import annotations

import pytest

from cell_values import outcome, values
from structbench.benchmarks.rfqa.cot import _base_type, _coerce, _column_coercer

TYPES = ("BIGINT", "INTEGER", "HUGEINT", "DOUBLE", "DECIMAL(10,2)", "FLOAT", "BOOLEAN", "VARCHAR", "DATE")


@pytest.mark.parametrize("db_type", TYPES)
def test_each_columns_fast_path_coerces_as_coerce(db_type: str) -> None:
    coerce = _column_coercer(db_type)
    base = _base_type(db_type)
    for value in values(db_type):
        assert outcome(coerce, value) == outcome(lambda v: _coerce(v, base), value), (db_type, value)
