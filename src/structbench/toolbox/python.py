"""The ``python`` tool: a model-written program run in the sandbox, the sample's tables as pandas DataFrames.

Each call is a fresh sandboxed program (``sandbox.run_python`` with pandas and numpy read-only, no network, nothing
of the host, capped memory, CPU and wall time, a few threads): the tables are globals of their names (``t``, or
``t1``, ``t2`` ...) and all of them are in ``tables``; what it prints is the result, and an exception's last lines are
the error. Nothing carries over from one call to the next.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from structbench.sandbox import Limits, NamespaceMode, run_python
from structbench.toolbox.base import Tool, ToolLimits, ToolResult, clip
from structbench.toolbox.tables import NamedTable, python_name

THREADS = 8
"""Processes and threads the program may have (RLIMIT_NPROC counts threads): pandas reads a large CSV with a pool of
threads; a fork bomb stops there (and dies with the program's PID namespace)."""
IMPORT_SECONDS = 10
"""CPU and wall-clock seconds added to the limit for starting the interpreter and importing pandas (a second or
two, more on a loaded machine): the program's own time is what ``ToolLimits.seconds`` bounds."""


class PythonTables(Tool):
    """``python`` over the given tables."""

    kind = name = "python"
    argument = "code"
    argument_description = ("A Python program; the tables are pandas DataFrames named as in the prompt (and all in "
                            "the dict `tables`); print what you want to see.")

    def __init__(self, tables: Sequence[NamedTable], limits: ToolLimits | None = None,
                 namespaces: NamespaceMode = "auto") -> None:
        self.limits = limits or ToolLimits()
        self.namespaces = namespaces
        self.csv = {python_name(t.name): t.csv_text() for t in tables}

    def run(self, argument: str) -> ToolResult:
        started = time.perf_counter()
        limits = self.limits
        seconds = limits.seconds + IMPORT_SECONDS
        sandbox = Limits(cpu_seconds=max(1, int(-(-seconds // 1))), wall_seconds=seconds,
                         memory_mb=max(limits.memory_mb, 384), max_processes=THREADS,
                         max_output_bytes=limits.max_chars * 4)
        result = run_python(argument, tables=self.csv, limits=sandbox, namespaces=self.namespaces)
        elapsed = time.perf_counter() - started
        if result.timed_out or result.signal in ("SIGXCPU", "SIGKILL"):
            return ToolResult.failed(f"the program ran past the {limits.seconds:g} s limit and was stopped", elapsed)
        if not result.ok:
            lines = [ln for ln in result.stderr.strip().splitlines() if ln.strip()]
            last = lines[-1] if lines else result.status()
            if "MemoryError" in last:
                last = f"MemoryError: the program needs more than the {sandbox.memory_mb} MiB it may use"
            printed = f"{result.stdout.rstrip()}\n" if result.stdout.strip() else ""
            text, cut = clip(f"{printed}error: {last}", limits.max_chars)
            return ToolResult(text=text, error=last, seconds=elapsed, truncated=cut)
        text, cut = clip(result.stdout.rstrip() or "(the program printed nothing)", limits.max_chars)
        return ToolResult(text=text, seconds=elapsed, truncated=cut or result.stdout_truncated)
