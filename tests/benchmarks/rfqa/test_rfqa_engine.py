"""PostgreSQL semantics on DuckDB: typed loading, '1' vs 1, integer division, the target schema."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from structbench.benchmarks.rfqa.database import Database, load_table, new_connection
from structbench.benchmarks.rfqa.engine import output_columns, referenced_tables, to_duckdb


@pytest.fixture
def db(tmp_path: Path) -> Database:
    path = tmp_path / "t.csv"
    path.write_text("ID,Name ,Score,Code,Flag\n1,Ann,7,001,True\n2,Bob,2,12,False\n3,,nan,null,\n4,Cy,null,7,True\n")
    d = Database(key="test/t", connection=new_connection())
    load_table(
        d, "t", path, {"id": "INTEGER", "name": "STRING", "score": "INTEGER", "code": "STRING", "flag": "BOOLEAN"}
    )
    return d


def test_declared_types_and_nulls(db: Database) -> None:
    assert db.tables["t"] == {
        "id": "BIGINT",
        "name": "VARCHAR",
        "score": "BIGINT",
        "code": "VARCHAR",
        "flag": "BOOLEAN",
    }
    _, types, rows = db.execute("SELECT * FROM t ORDER BY id")
    assert types == ["BIGINT", "VARCHAR", "BIGINT", "VARCHAR", "BOOLEAN"]
    assert rows[2] == (3, None, None, None, None)  # empty, nan and null are NULL in every column
    assert rows[0][3] == "001"  # a declared text column keeps leading zeros


def test_quoted_number_matches_integer_column_as_in_postgres(db: Database) -> None:
    assert db.execute(to_duckdb("SELECT name FROM t WHERE id = '1'", db.tables))[2] == [("Ann",)]
    assert db.execute(to_duckdb("SELECT name FROM t WHERE code = '12'", db.tables))[2] == [("Bob",)]
    # PostgreSQL refuses text = integer; DuckDB refuses it too (binder or conversion error)
    with pytest.raises(duckdb.Error):
        db.execute(to_duckdb("SELECT name FROM t WHERE name = 1", db.tables))


def test_integer_division_as_in_postgres(db: Database) -> None:
    sql = "SELECT score / (id + 1), score * 1.0 / (id + 1), 7 / 2, 7.0 / 2 FROM t WHERE id = 1"
    duck = to_duckdb(sql, db.tables)
    assert "//" in duck
    assert db.execute(duck)[2] == [(3, 3.5, 3, 3.5)]
    assert db.execute(to_duckdb("SELECT sum(score) / count(*) AS m FROM t", db.tables))[2] == [(2,)]  # 9 // 4
    assert db.execute(to_duckdb("SELECT id / 2 AS h FROM target.t WHERE id = 3", db.tables))[2] == [(1,)]


def test_target_schema_and_names() -> None:
    assert referenced_tables('SELECT a.x FROM target.usa_lake a JOIN "cast" c ON a.x = c.x') == ["usa_lake", "cast"]
    assert output_columns("SELECT T1.Name, count(x), max(y) AS Top, a * 2, t.name FROM t") == [
        "name",
        "count",
        "top",
        "?column?",
        "name_2",
    ]


def test_nulls_sort_as_in_postgres(db: Database) -> None:
    """NULL is larger than any value: last ascending, first descending (DuckDB's default: last in both)."""
    assert [r[0] for r in db.execute("SELECT score FROM t ORDER BY score")[2]] == [2, 7, None, None]
    assert [r[0] for r in db.execute("SELECT score FROM t ORDER BY score DESC")[2]] == [None, None, 7, 2]
    assert [r[0] for r in db.execute("SELECT score FROM t ORDER BY score DESC NULLS LAST")[2]] == [7, 2, None, None]
