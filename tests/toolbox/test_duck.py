"""The sql tool over a sample's tables: DuckDB locked down against hostile queries, results capped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from structbench.data.evidence import Table
from structbench.sandbox import SandboxError
from structbench.strategies.tools import table_workspace
from structbench.toolbox import DuckTables, NamedTable, ToolLimits, Workspace, duck
from structbench.toolbox.duck import MAX_QUERY_CHARS

SCORES = NamedTable.of("t", ["Model", "Acc", "Acc", ""], [["a", "88.6", "1", "x"], ["b", "86.7", "2", "y"],
                                                          ["c", "", "3", "z"]], title="Results")


@pytest.fixture
def sql() -> DuckTables:
    tool = DuckTables([SCORES], ToolLimits(seconds=2, memory_mb=128, max_rows=5, max_chars=600))
    yield tool
    tool.close()


def test_schema_shows_types_row_count_and_first_rows(sql: DuckTables) -> None:
    schema = sql.schema()
    assert schema.startswith("Table t(model VARCHAR, acc DOUBLE, acc_2 BIGINT, column_4 VARCHAR): 3 rows. "
                             "Caption: Results. First rows:")
    assert "c | NULL | 3 | z" in schema


def test_a_select_returns_rows_capped_with_their_count(sql: DuckTables) -> None:
    result = sql.run("SELECT model, acc FROM t ORDER BY acc DESC NULLS LAST")
    assert result.error is None and result.rows == 3
    assert result.text.splitlines() == ["model | acc", "a | 88.6", "b | 86.7", "c | NULL", "(3 rows)"]
    many = sql.run("SELECT range AS n FROM range(1000)")
    assert many.truncated and many.rows == 1000
    assert many.text.splitlines()[-1] == "(1000 rows; the first 5 shown)"


@pytest.mark.parametrize("query, says", [
    ("SELECT * FROM read_csv('/etc/passwd')", "file system operations are disabled"),
    ("SELECT * FROM read_text('/etc/hostname')", "file system operations are disabled"),
    ("SELECT * FROM glob('/*')", "file system operations are disabled"),
    ("COPY t TO '/tmp/structbench-stolen.csv'", "not COPY statements"),
    ("EXPORT DATABASE '/tmp/structbench-export'", "not EXPORT statements"),
    ("ATTACH '/tmp/structbench-other.db' AS other", "not ATTACH statements"),
    ("INSTALL httpfs", "not LOAD statements"),
    ("LOAD httpfs", "not LOAD statements"),
    ("SET enable_external_access = true", "not SET statements"),
    ("PRAGMA memory_limit = '64GB'", "not SET statements"),
    ("PRAGMA enable_profiling", "not PRAGMA statements"),
    ("CREATE TABLE planted AS SELECT 1", "not CREATE statements"),
    ("DELETE FROM t", "not DELETE statements"),
    ("SELECT 1; DROP TABLE t", "exactly one SQL statement"),
    ("SELECT count(*) FROM range(100000) a, range(100000) b, range(1000) c", "ran past the 2 s limit"),
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r", "ran past the 2 s limit"),
    ("SELECT string_agg(repeat('x', 1000), '') FROM range(100000) a, range(1000) b", "more than the 128 MiB"),
])
def test_hostile_queries_are_refused_or_stopped(sql: DuckTables, query: str, says: str) -> None:
    result = sql.run(query)
    assert result.error is not None and says in result.error, result.text
    assert result.text == f"error: {result.error}"
    assert not any(os.path.exists(f"/tmp/structbench-{name}") for name in ("stolen.csv", "export", "other.db"))
    assert sql.run("SELECT count(*) AS n FROM t").text.splitlines()[1] == "3"  # the tool still works


def test_nothing_is_written_to_the_working_directory(sql: DuckTables, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    sql.run("SELECT a.range FROM range(3000000) a ORDER BY a.range * 7 % 13 DESC LIMIT 3")
    assert list(tmp_path.iterdir()) == []


def test_workspace_turns_bad_calls_into_results(sql: DuckTables) -> None:
    ws = Workspace({"sql": sql}, sql.schema())
    assert ws.call("shell", "ls").error == "there is no tool 'shell'; the tools are sql"
    assert "one string field 'query'" in (ws.call("sql", {"sql": 1}).error or "")
    assert ws.call("sql", {"statement": "SELECT 2 AS two"}).text.splitlines()[1] == "2"
    assert ws.calls == 3


@pytest.mark.parametrize("query", [
    "SELECT len(string_split(repeat('a,', 400000000), ','))",
    "SELECT length(repeat(repeat('a', 100000000), 30))",
    "SELECT range(60000000)",
])
def test_a_value_built_inside_one_expression_stops_at_the_memory_limit(sql: DuckTables, query: str) -> None:
    """DuckDB's memory limit does not count such a value and its interrupt is not checked while it is built: in the
    run's process the first query grew to 21 GB and the kernel killed the run. In the sandbox it ends at the address
    space the call may use, and the model is told so."""
    result = sql.run(query)
    assert result.error == f"the query needs more than the {sql.limits.memory_mb} MiB it may use", result.text
    assert sql.run("SELECT count(*) AS n FROM t").error is None  # the next call runs as before


def test_a_query_too_long_is_refused_before_duckdb_parses_it(sql: DuckTables) -> None:
    """DuckDB's parser builds the whole tree of a query in the run's process before any limit applies: 10 MB of
    nested subqueries took 4 GB there."""
    depth = MAX_QUERY_CHARS // 16 + 1
    query = "SELECT * FROM " + "(SELECT * FROM " * depth + "t" + ")" * depth
    result = sql.run(query)
    assert result.error == f"the query has {len(query):,} characters; at most {MAX_QUERY_CHARS:,} are read"
    assert sql.run("SELECT count(*) AS n FROM (SELECT * FROM (SELECT * FROM t))").error is None


def test_the_sandbox_mode_reaches_the_sql_tool() -> None:
    ws = table_workspace([Table(header=["a"], rows=[["1"]])], namespaces="off")
    assert {name: tool.namespaces for name, tool in ws.tools.items()} == {"sql": "off", "python": "off"}
    ws.close()


def test_a_sandbox_that_cannot_start_is_the_harness_failure_not_the_model_s(sql: DuckTables, monkeypatch) -> None:
    """The model would otherwise read "the query could not be run" and be scored on it, and the run would show no
    error: the sample is a harness error instead (counted, retried on resume)."""
    def broken(*args, **kwargs):
        raise SandboxError("sandbox: the program could not be started: no interpreter")

    monkeypatch.setattr(duck, "run_python", broken)
    with pytest.raises(SandboxError, match="no interpreter"):
        Workspace({"sql": sql}, "").call("sql", "SELECT 1")
