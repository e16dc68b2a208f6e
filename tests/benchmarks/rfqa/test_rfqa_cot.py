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


@pytest.mark.parametrize("db_type", TYPES)
def test_no_json_value_makes_coerce_raise(db_type: str) -> None:
    """A model's cell is hostile input: JSON's Infinity and NaN in a text column, or an integer of 400 digits in a
    numeric one, is a value or None, never an exception that ends the sample's scoring."""
    import json

    coerce = _column_coercer(db_type)
    for value in [*values(db_type), *json.loads("[Infinity, -Infinity, NaN, 1e400, " + "9" * 400 + "]")]:
        assert outcome(coerce, value)[0] != "raises", (db_type, value)


def test_json_infinity_and_nan_in_a_text_column_are_their_text() -> None:
    import json

    from structbench.benchmarks.rfqa import cot

    rows = json.loads('[{"k": 1, "v": Infinity}, {"k": 2, "v": NaN}, {"k": 3, "v": -Infinity}, {"k": 4, "v": 2.0}]')
    bases = [cot.BaseQuery("t", ["k", "v"], ["BIGINT", "VARCHAR"])]
    result = cot.execute('SELECT "v" FROM "t" ORDER BY "k"', bases, {"t": rows}, ["v"])
    assert [r["v"] for r in result] == ["inf", "nan", "-inf", "2"]


@pytest.mark.parametrize("db_type", ["BIGINT", "DOUBLE", "BOOLEAN", "VARCHAR"])
def test_a_large_base_table_goes_in_through_arrow_as_through_list_parameters(
    db_type: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cot._insert``: the same rows, of the same types, whether a base table goes in through Arrow (from
    ``ARROW_ROWS`` rows on, when every coerced value is of the column's Python type) or as list parameters; a column
    Arrow cannot hold as it is (a float in a BIGINT column, an integer beyond 64 bits, a lone surrogate) takes the
    list parameters, casts and errors included."""
    import random

    import duckdb

    from structbench.benchmarks.rfqa import cot

    rng = random.Random(db_type)
    coerce = cot._column_coercer(db_type)
    cells = [v for v in [*values(db_type), "é", "\ud800", "a\x00b", "  x ", 2**63 - 1, -(2**63), 2**63, 1.5]
             if outcome(coerce, v)[0] != "raises"]
    bases = [cot.BaseQuery("t", ["k", "v"], ["BIGINT", db_type])]

    def run(rows: list[dict[str, object]]) -> tuple[str, ...]:
        try:
            result = cot.execute('SELECT "k", "v" FROM "t" ORDER BY "k"', bases, {"t": rows}, ["k", "v"])
        except duckdb.Error as err:
            return ("error", type(err).__name__, str(err))
        return tuple(f"{type(r['v']).__name__}:{r['v']!r}" for r in result)

    tables = [[{"k": i, "v": v} for i, v in enumerate(cells)]]  # every edge value in one table: many fall back
    for _ in range(6):  # a table of the column's own values (within 2**53) and nulls, and one of any values
        own = {"BIGINT": int, "DOUBLE": float, "BOOLEAN": bool, "VARCHAR": str}[db_type]
        kinds = [v for v in cells if v is None or (type(v) is own and not (own is int and abs(v) >= 2**53))]  # type: ignore[arg-type]
        rows = [{"k": i, "v": rng.choice(cells if rng.random() < 0.5 else kinds or cells)} for i in range(50)]
        tables += [rows, [{"k": i, "v": rng.choice(kinds or cells)} for i in range(50)]]
    arrow = 0
    for rows in tables:
        monkeypatch.setattr(cot, "ARROW_ROWS", 10**9)
        listed = run(rows)
        monkeypatch.setattr(cot, "ARROW_ROWS", 1)
        values_ = [list(map(cot._column_coercer(t), c))
                   for c, t in zip(cot.align_columns(rows, ["k", "v"]), ["BIGINT", db_type], strict=True)]
        arrow += cot._arrow_table(["BIGINT", db_type], values_) is not None
        assert run(rows) == listed
    assert arrow >= 6


def test_a_query_over_too_many_of_the_models_rows_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The released query joins the reply's rows with themselves: a reply of many rows made it run for minutes,
    holding every other sample's step; past ``SCRATCH_SECONDS`` it is stopped (the reply's rows are unusable, as
    any that cannot be queried), and the next query runs."""
    import duckdb

    from structbench.benchmarks.rfqa import cot

    monkeypatch.setattr(cot, "SCRATCH_SECONDS", 0.5)
    bases = [cot.BaseQuery("t", ["k"], ["BIGINT"])]
    rows = {"t": [{"k": i} for i in range(4000)]}
    with pytest.raises(duckdb.InterruptException):
        cot.execute('SELECT count(*) AS n FROM "t" a, "t" b, "t" c WHERE a.k + b.k > c.k', bases, rows, ["n"])
    assert cot.execute('SELECT count(*) AS n FROM "t"', bases, rows, ["n"]) == [{"n": 4000}]
