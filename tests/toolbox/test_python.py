"""The python tool: the tables as DataFrames in the sandbox; hostile programs contained."""

from __future__ import annotations

import pytest

from structbench.toolbox import NamedTable, PythonTables, ToolLimits

TABLES = [NamedTable.of("t1", ["team", "wins"], [["Ants", "3"], ["Bees", "5"]]),
          NamedTable.of("t2", ["team", "city"], [["Ants", "Oslo"], ["Bees", "Lima"]])]


@pytest.fixture(scope="module")
def python() -> PythonTables:
    return PythonTables(TABLES, ToolLimits(seconds=3, max_chars=300))


def test_tables_are_dataframes(python: PythonTables) -> None:
    result = python.run("print(t1.merge(t2, on='team').query('wins > 4')['city'].tolist(), sorted(tables))")
    assert result.error is None and result.text == "['Lima'] ['t1', 't2']"


@pytest.mark.parametrize("code, says", [
    ("while True:\n    pass", "ran past the 3 s limit"),
    ("print(open('/etc/passwd').read())", "FileNotFoundError"),
    ("import socket\nsocket.create_connection(('127.0.0.1', 22), 1)", "OSError"),
    ("import os, time\nfor _ in range(50):\n    if os.fork() == 0:\n        time.sleep(5)\n        os._exit(0)",
     "BlockingIOError"),  # a few threads at most (pandas' pool), never a fork bomb
    ("x = bytearray(10**10)", "MemoryError"),
    ("raise ValueError('no such column')", "ValueError: no such column"),
])
def test_hostile_programs_come_back_as_errors(python: PythonTables, code: str, says: str) -> None:
    result = python.run(code)
    assert result.error is not None and says in result.error, result.text


def test_long_output_is_cut(python: PythonTables) -> None:
    result = python.run("print('x' * 5000)")
    assert result.truncated and len(result.text) <= 300 and result.text.endswith("(cut at 300 characters)")
