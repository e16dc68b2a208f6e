"""The sql tool over a whole SQLite database: every query in the sandbox, the file mounted read-only."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from structbench.core.memo import Memo
from structbench.sandbox import SandboxResult
from structbench.toolbox import SqliteDatabase, ToolLimits
from structbench.toolbox import sqlite as sqlite_tool


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
    ("SELECT hex(FTS3_TOKENIZER('simple'))", "not authorized"),
    ("SELECT 1; SELECT 2", "one statement at a time"),
    ("SELECT printf('%.*c', 3000000, 'x') AS big", "the result is larger than the 1 MiB a query may return"),
    ("SELECT count(*) FROM people a, people b, people c", "ran past the 2 s limit"),
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r", "ran past the 2 s limit"),
])
def test_hostile_queries_are_refused_or_stopped(database: Path, query: str, says: str) -> None:
    before = database.read_bytes()
    result = SqliteDatabase(database, ToolLimits(seconds=2)).run(query)
    assert result.error is not None and says in result.error, result.text
    assert database.read_bytes() == before


def test_a_deterministic_query_runs_once_per_file(database: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The same query over the same file under the same limits comes back without a sandbox the second time, when it
    succeeded and names no function whose value can change (nor does the schema, a view's); a changed file runs it
    again."""
    monkeypatch.setattr(sqlite_tool, "_MEMO", Memo(8))
    started: list[str] = []
    real = sqlite_tool.run_python

    def counted(code: str, **kwargs: Any) -> SandboxResult:
        started.append(json.loads(kwargs["stdin"])["query"])
        return real(code, **kwargs)

    monkeypatch.setattr(sqlite_tool, "run_python", counted)
    sql = SqliteDatabase(database, ToolLimits(seconds=5, max_rows=3))
    count = "SELECT count(*) AS n FROM people"
    first, again = sql.run(count), SqliteDatabase(database, ToolLimits(seconds=5, max_rows=3)).run(count)
    assert first.text == again.text == "n\n20000\n(1 row)" and started == [count]
    SqliteDatabase(database, ToolLimits(seconds=5, max_rows=4)).run(count)  # other limits
    dice, missing = "SELECT abs(random()) % 6 AS roll", "SELECT nothing FROM absent"
    for query in (dice, dice, missing, missing):
        sql.run(query)
    assert started == [count] * 2 + [dice] * 2 + [missing] * 2
    folder = tmp_path / "db"
    folder.mkdir(mode=0o755)
    path = folder / "dice.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE VIEW dice AS SELECT abs(random()) % 6 AS roll")
    con.close()
    path.chmod(0o644)
    rolls = SqliteDatabase(path)
    for _ in range(2):
        assert rolls.run("SELECT roll FROM dice").error is None
    plain = folder / "plain.sqlite"
    shutil.copy(database, plain)
    for _ in range(2):
        SqliteDatabase(plain).run(count)
    with sqlite3.connect(plain) as con:
        con.execute("INSERT INTO people VALUES (20000, 'new', 1)")
    con.close()
    assert SqliteDatabase(plain).run(count).text == "n\n20001\n(1 row)"
    assert started[6:] == ["SELECT roll FROM dice"] * 2 + [count] * 2
