"""The sql tool over a whole SQLite database: every query in the sandbox, the file mounted read-only."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from structbench.toolbox import SqliteDatabase, ToolLimits


@pytest.fixture(scope="module")
def database() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="structbench-sqlite-tool-"))
    folder.chmod(0o755)  # the sandbox's uid reads it in place
    path = folder / "db.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, age INTEGER)")
        con.executemany("INSERT INTO people VALUES (?, ?, ?)", [(i, f"p{i}", i % 90) for i in range(20000)])
    con.close()
    path.chmod(0o644)
    yield path
    shutil.rmtree(folder)


def test_reading_queries_answer(database: Path) -> None:
    sql = SqliteDatabase(database, ToolLimits(seconds=5, max_rows=3))
    result = sql.run("SELECT count(*) AS n, max(age) AS oldest FROM people")
    assert result.text.splitlines() == ["n | oldest", "20000 | 89", "(1 row)"]
    many = sql.run("SELECT name FROM people ORDER BY id")
    assert many.rows == 20000 and many.text.splitlines()[-1] == "(20000 rows; the first 3 shown)"
    assert sql.run("PRAGMA table_info(people)").text.splitlines()[0].startswith("cid | name | type")


@pytest.mark.parametrize("query, says", [
    ("ATTACH '/etc/passwd' AS host", "not authorized"),
    ("DELETE FROM people", "not authorized"),
    ("CREATE TEMP TABLE planted(x)", "not authorized"),
    ("PRAGMA writable_schema = 1", "not authorized"),
    ("SELECT load_extension('/tmp/evil.so')", "not authorized"),
    ("SELECT 1; SELECT 2", "one statement at a time"),
    ("SELECT count(*) FROM people a, people b, people c", "ran past the 2 s limit"),
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r", "ran past the 2 s limit"),
])
def test_hostile_queries_are_refused_or_stopped(database: Path, query: str, says: str) -> None:
    before = database.read_bytes()
    result = SqliteDatabase(database, ToolLimits(seconds=2)).run(query)
    assert result.error is not None and says in result.error, result.text
    assert database.read_bytes() == before
