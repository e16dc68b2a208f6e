"""Tools a model calls to query the data it is asked about: ``sql`` and ``python``, over hostile input.

What a model writes is run here, never trusted: SQL over a sample's tables in an in-memory DuckDB locked down before
the first query (``duck``), SQL over a whole database file in the sandbox (``sqlite``), and Python with the tables as
pandas DataFrames in the sandbox (``python``). Each call comes back as a ``ToolResult``: the text the model reads
(capped in rows and characters) and, when the call failed or was refused, a one-line error that is also what the
model reads, so a failure is a turn of the conversation, never an exception. ``Workspace`` is a sample's set of tools
and the schema a prompt shows.
"""

from structbench.toolbox.base import (
    TOOL_DESCRIPTIONS,
    Tool,
    ToolLimits,
    ToolResult,
    Workspace,
    parse_arguments,
)
from structbench.toolbox.duck import DuckTables
from structbench.toolbox.python import PythonTables
from structbench.toolbox.sqlite import SqliteDatabase
from structbench.toolbox.tables import NamedTable, table_names

__all__ = [
    "TOOL_DESCRIPTIONS",
    "DuckTables",
    "NamedTable",
    "PythonTables",
    "SqliteDatabase",
    "Tool",
    "ToolLimits",
    "ToolResult",
    "Workspace",
    "parse_arguments",
    "table_names",
]
