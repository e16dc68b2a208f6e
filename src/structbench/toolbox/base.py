"""What every tool shares: its limits, what a call returns, how rows are shown, and a sample's set of tools."""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from structbench.core import untrusted
from structbench.sandbox import SandboxError

if TYPE_CHECKING:
    from structbench.sandbox import SandboxResult

TOOL_DESCRIPTIONS = {
    "sql": "Run one read-only SQL SELECT query over the data and return its result rows.",
    "python": "Run a Python program (pandas and numpy available, the tables given as DataFrames) and return what "
              "it prints.",
}
"""What each tool does, as the model is told (function tools' descriptions; the text protocol's instructions)."""


@dataclass(frozen=True)
class ToolLimits:
    """What one tool call may use and return: a query or program past a limit is stopped, and the model told."""

    seconds: float = 10.0
    """Wall-clock seconds per call (a query is interrupted, a program killed)."""
    memory_mb: int = 512
    """Memory of one call: DuckDB's memory limit; the sandbox's address space for SQLite and Python."""
    max_rows: int = 50
    """Result rows shown to the model (the rest are counted where known, never sent)."""
    max_chars: int = 4000
    """Characters of a result shown to the model (a longer one is cut, and says so)."""

    def __post_init__(self) -> None:
        if not 0 < self.seconds <= 3600:
            raise ValueError(f"tool limit seconds={self.seconds!r}: expected seconds above 0, at most 3600")
        for name, low in (("memory_mb", 64), ("max_rows", 1), ("max_chars", 100)):
            value = getattr(self, name)
            if not isinstance(value, int) or value < low:
                raise ValueError(f"tool limit {name}={value!r}: expected a whole number of at least {low}")


@dataclass(frozen=True)
class ToolResult:
    """One call's outcome: the text the model reads and, for a call that failed or was refused, why."""

    text: str
    """What goes back to the model as the tool's result (capped)."""
    error: str | None = None
    """One line saying why the call failed or was refused (it is in ``text`` too); None when it succeeded."""
    seconds: float = 0.0
    rows: int | None = None
    """Rows the query returned, where known (a program: None)."""
    truncated: bool = False
    """Rows or characters were left out of ``text``."""

    @classmethod
    def failed(cls, error: str, seconds: float = 0.0) -> ToolResult:
        line = " ".join(error.split())
        return cls(text=f"error: {line}", error=line, seconds=seconds)


def past_time(limits: ToolLimits) -> str:
    return f"the query ran past the {limits.seconds:g} s limit and was stopped"


def past_memory(limits: ToolLimits) -> str:
    return f"the query needs more than the {limits.memory_mb} MiB it may use"


def query_report(result: SandboxResult, marker: str, limits: ToolLimits, output_bytes: int) -> dict[str, Any] | str:
    """The JSON object a sandboxed query program printed after ``marker``; or, what the model is told, why there is
    none: a limit the program ran past, its last error line, a line cut at the sandbox's output limit, or unreadable."""
    _, marked, line = result.stdout.rpartition(marker)
    if not marked:
        if result.timed_out or result.signal in ("SIGXCPU", "SIGKILL"):
            return past_time(limits)
        if "MemoryError" in result.stderr or "bad_alloc" in result.stderr or result.signal in ("SIGSEGV", "SIGABRT"):
            return past_memory(limits)
        tail = result.stderr.strip().splitlines()[-1:] or [result.status()]
        return f"the query could not be run: {tail[0]}"
    if result.stdout_truncated:
        return (f"the result is larger than the {output_bytes >> 20} MiB a query may return; select fewer rows, fewer "
                "columns or shorter values")
    try:
        out = untrusted.loads(line)  # (a model's query shapes it: SQL builds nested lists)
    except ValueError:
        return "the query's result could not be read"
    return out if isinstance(out, dict) else "the query's result could not be read"


def cell_text(value: Any) -> str:
    """A result cell as the model reads it: NULL for a missing value, floats without trailing noise."""
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return repr(round(value, 10)) if value == value else "NaN"
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return " ".join(str(value).split("\n"))


def show_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]], more: bool, limits: ToolLimits,
              total: int | None = None) -> tuple[str, bool]:
    """Rows as ``a | b`` lines under their header, at most ``limits.max_rows`` of them and ``limits.max_chars``
    characters, with a last line saying how many there are; and whether anything was left out."""
    if not columns:
        return "(the statement returned no result set)", False
    shown = rows[: limits.max_rows]
    lines = [" | ".join(columns), *(" | ".join(cell_text(v) for v in row) for row in shown)]
    cut = more or len(rows) > len(shown) or (total is not None and total > len(shown))
    if total is not None and cut:
        lines.append(f"({total} rows; the first {len(shown)} shown)")
    elif cut:
        lines.append(f"(more than {len(shown)} rows; the first {len(shown)} shown)")
    else:
        lines.append(f"({len(shown)} row{'s' if len(shown) != 1 else ''})")
    text, clipped = clip("\n".join(lines), limits.max_chars)
    return text, cut or clipped


def json_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]], limits: ToolLimits, total: int | None = None
              ) -> tuple[str, bool]:
    """Rows as a JSON list of ``{column: value}`` objects (at most ``limits.max_rows``), a note after it when rows
    were left out; and whether anything was."""
    shown = [dict(zip(columns, row, strict=False)) for row in rows[: limits.max_rows]]
    text = json.dumps(shown, ensure_ascii=False, default=str)
    cut = len(rows) > len(shown) or (total is not None and total > len(shown))
    if cut:
        text += f"\n({total if total is not None else 'more'} rows; the first {len(shown)} shown)"
    clipped, was = clip(text, limits.max_chars)
    return clipped, cut or was


def clip(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters (saying so), and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[: limit - 40].rstrip() + f"\n... (cut at {limit} characters)", True


class Tool(ABC):
    """One tool of a sample's workspace: a name, the single text argument it takes, and a call."""

    kind: str
    """What it runs: ``sql`` or ``python`` (the text protocol's fence language)."""
    name: str
    """The name the model calls it by (``sql``; a benchmark may name it as its paper did)."""
    argument: str
    """The argument's name (``query``, ``code``): a function tool's one parameter."""
    argument_description: str = ""
    description: str = ""
    """What the model is told the tool does (default: ``TOOL_DESCRIPTIONS`` of its kind)."""

    def describe(self) -> str:
        return self.description or TOOL_DESCRIPTIONS.get(self.kind, self.name)

    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (a function tool's ``parameters``)."""
        return {
            "type": "object",
            "properties": {self.argument: {"type": "string", "description": self.argument_description}},
            "required": [self.argument],
            "additionalProperties": False,
        }

    @abstractmethod
    def run(self, argument: str) -> ToolResult:
        """Run one call; every failure is a ``ToolResult.failed``, never an exception."""

    def close(self) -> None:  # noqa: B027  (optional: most tools hold nothing)
        """Release what the tool holds (a database connection)."""


@dataclass
class Workspace:
    """A sample's tools and the description of its data a prompt shows (schemas, row counts, a few rows)."""

    tools: dict[str, Tool]
    schema: str
    """The data as the prompt describes it (never the whole of it)."""
    calls: int = field(default=0, init=False)

    def call(self, name: str, arguments: str | Mapping[str, Any]) -> ToolResult:
        """Run tool ``name``: ``arguments`` is the argument itself (a fenced block of the text protocol) or a
        function call's arguments object (``parse_arguments``); an unknown tool or arguments without the tool's
        one string field come back as a failed result, for the model to read."""
        self.calls += 1
        tool = self.tools.get(name)
        if tool is None:
            return ToolResult.failed(f"there is no tool {name!r}; the tools are {', '.join(sorted(self.tools))}")
        argument = arguments if isinstance(arguments, str) else _argument(tool, arguments)
        if argument is None:
            return ToolResult.failed(f"the {name} tool takes a JSON object with one string field {tool.argument!r}")
        started = time.perf_counter()
        try:
            return tool.run(argument)
        except SandboxError:  # the machine could not run the sandbox at all: the harness's failure, never the model's
            raise
        except Exception as err:  # a tool's own bug must not end the sample: the model reads it, the trace keeps it
            return ToolResult.failed(f"the {name} tool failed: {type(err).__name__}: {err}",
                                     time.perf_counter() - started)

    def close(self) -> None:
        for tool in self.tools.values():
            tool.close()


def parse_arguments(text: str) -> dict[str, Any]:
    """A function call's arguments (a JSON object as text); {} when they are not one (the call then fails)."""
    try:
        parsed = untrusted.loads(text) if text.strip() else {}
    except ValueError:  # (not JSON, or nested deeper than ``untrusted.MAX_NESTING``)
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _argument(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """The tool's single argument from a call's arguments object (a model that named it otherwise, with one field,
    is read too)."""
    value = arguments.get(tool.argument)
    if value is None and len(arguments) == 1:
        value = next(iter(arguments.values()))
    return value if isinstance(value, str) else None
