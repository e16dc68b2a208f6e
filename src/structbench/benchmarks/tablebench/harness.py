"""The script the sandbox runs for a TableBench program (never imported by structbench: its text is the sandbox's
``main.py``, so it needs only the standard library, pandas and matplotlib).

It writes the question's table to ``table.csv`` as the released parser does (``pandas.DataFrame`` of row dicts,
``to_csv(index=False)``), runs the model's program (``program.py``) with its printed output captured and a time
limit, and for a chart reads the values drawn on the current axes, by chart type. The last line it prints is
``MARKER`` and a JSON report: whether the program ran, what it printed, the values, the error. The values are
compared with the reference outside the sandbox, which never sees the reference.

Two ways to run the program:

- ``isolated``: once, in a namespace of its own, as a script runs;
- ``released`` (the parser of April 2025) and ``paper`` (that of August 2024): as the released parser does, bug
  for bug: the program's lines indented under ``if __name__ == '__main__':`` and ``exec``'d with the parser's
  globals (the modules it imports: ``re``, ``os``, ``sys``, ``ast``, ``np``, ``pd``, ``plt``; in 2024 ``json``
  instead of ``ast``) and a separate dict of locals, so a function the program defines sees the parser's globals
  but not the program's own top-level names; a chart program is run twice in one process without closing its
  figure (the execution check, then the chart test), so a program that draws on the current figure without making
  a new one draws everything twice.

A job may ask for several ways at once (``modes``: the released way and the isolated one of structbench's corrected
twin): the harness imports pandas and matplotlib once, then runs each way in a process ``fork``ed from that state,
the directory put back as it was before each, so each way sees what a sandbox of its own would show it (but for
matplotlib's cache folder, which the imports leave), importing once instead of once per way. The report then holds
one entry per way; a way whose process ended without one is reported by how it ended and its stderr.

pyplot is imported before a program runs only where it may draw: a chart, or a program whose text names ``plt``,
``plot`` or ``matplotlib`` (so its import never counts against the program's time limit, as before). Any other
program run the released way gets, as the global ``plt``, a stand-in that imports pyplot at its first use (a
program can only reach it by a name it builds), and an answer run only the isolated way imports no matplotlib:
importing pyplot costs more CPU than the rest of such a program's run.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import json
import os
import re
import signal
import sys
import types
from typing import Any

MARKER = "__TABLEBENCH_REPORT__"
MAX_OUTPUT = 100_000
"""Characters of printed output reported back."""


class NoFork(Exception):
    """The harness cannot run a way in a child process here."""


class ProgramTimeout(Exception):
    """The program ran past its time limit (the released parser's 15-second timeout)."""


def _alarm(signum: int, frame: Any) -> None:
    raise ProgramTimeout("timed out")


def write_table(table: dict[str, Any]) -> None:
    """``table.csv`` as the released parser writes it: one dict per row (a repeated column name keeps its last
    cell), a short row padded with empty cells."""
    import pandas as pd

    columns = table["columns"]
    rows = [{columns[i]: (row[i] if i < len(row) else None) for i in range(len(columns))} for row in table["data"]]
    pd.DataFrame(rows).to_csv("table.csv", index=False)


def under_main(source: str) -> str:
    """The released parser's wrapping: every line of the stripped program indented under the ``__main__`` test."""
    wrapped = "\nif __name__ == '__main__':\n"
    for line in source.strip().split("\n"):
        wrapped += f"    {line}\n"
    return wrapped


DRAWS = re.compile(r"plt|plot|matplotlib")
"""Text of a program that may use pyplot (``plt``, ``df.plot``, its own import of matplotlib)."""


def draws(job: dict[str, Any], source: str) -> bool:
    """Whether pyplot is imported before the program runs: for a chart, or a program that names it."""
    return job["kind"] == "chart" or DRAWS.search(source) is not None


class Pyplot(types.ModuleType):
    """``matplotlib.pyplot`` imported at its first use: the released globals' ``plt`` for a program that never names
    it (``draws``), which can reach it only by a name it builds (``globals()["p" + "lt"]``)."""

    def __getattr__(self, name: str) -> Any:
        import matplotlib.pyplot as plt

        return getattr(plt, name)


def released_globals(mode: str, eager: bool = True) -> dict[str, Any]:
    """The modules the released parser's module imports (a program may lean on them without importing them), as the
    script runs: ``__name__`` is ``__main__``. Without ``eager``, ``plt`` is the ``Pyplot`` stand-in."""
    import numpy as np
    import pandas as pd

    if eager:
        import matplotlib.pyplot as plt
    else:
        plt = Pyplot("matplotlib.pyplot")
    scope = {"__name__": "__main__", "__builtins__": builtins, "re": re, "os": os, "sys": sys, "np": np, "pd": pd,
             "plt": plt}
    return {**scope, "json": json} if mode == "paper" else {**scope, "ast": ast}


def run(source: str, mode: str, timeout: float, scope: dict[str, Any] | None = None) -> tuple[bool, str, str]:
    """Run the program once: (whether it ended without an exception, what it printed, the error)."""
    printed = io.StringIO()
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.redirect_stdout(printed):
            if scope is not None:
                wrapped = under_main(source)
                exec(wrapped, scope, {"c": wrapped})
            else:
                exec(compile(source, "program.py", "exec"), {"__name__": "__main__", "__builtins__": builtins})
        return True, printed.getvalue(), ""
    except SystemExit as stop:
        ok = stop.code in (None, 0)
        return ok, printed.getvalue(), "" if ok else f"SystemExit: {stop.code}"
    except BaseException as err:
        return False, printed.getvalue(), f"{type(err).__name__}: {err}"[:2000]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _numbers(values: Any) -> Any:
    """JSON-able copies of drawn values: numbers as floats, lists as lists, anything else as its text."""
    if isinstance(values, list | tuple):
        return [_numbers(v) for v in values]
    if hasattr(values, "tolist") and not isinstance(values, str | bytes):
        return _numbers(values.tolist())
    if isinstance(values, bool):
        return float(values)
    if isinstance(values, int | float):
        return float(values)
    return str(values)


def drawn_values(chart_type: str) -> list[Any]:
    """The y values on the current axes, by chart type, as the released chart test reads them: line and radar
    lines' y data (a radar line without its closing point), bar and waterfall patch heights, horizontal bar widths,
    pie wedges as fractions of the circle (two decimals), area fills' non-zero y vertices, scatter offsets' y."""
    import matplotlib.pyplot as plt

    axes: Any = plt.gca()  # matplotlib objects of every chart type: read duck-typed, as the chart test reads them
    if chart_type == "line":
        return [list(line.get_ydata()) for line in axes.get_lines()]
    if chart_type == "radar":
        return [list(line.get_ydata())[:-1] for line in axes.get_lines()]
    if chart_type in ("bar", "waterfall"):
        return [patch.get_height() for patch in axes.patches]
    if chart_type == "hbar":
        return [patch.get_width() for patch in axes.patches]
    if chart_type == "pie":
        return [round((patch.theta2 - patch.theta1) / 360.0, 2) for patch in axes.patches]
    if chart_type == "area":
        return [[y for y in collection.get_paths()[0].vertices[:, 1] if y != 0] for collection in axes.collections]
    if chart_type == "scatter":
        return [[offset[1] for offset in collection.get_offsets()] for collection in axes.collections]
    raise ValueError(f"chart type {chart_type!r} is not one the chart test reads")


def execute(job: dict[str, Any], source: str, mode: str) -> dict[str, Any]:
    """Run the program one way, in this process: its report."""
    report: dict[str, Any] = {"ran": False, "stdout": "", "error": "", "values": None, "values_error": ""}
    timeout = float(job["timeout"])
    scope = released_globals(mode, draws(job, source)) if mode in ("released", "paper") else None
    ran, printed, error = run(source, mode, timeout, scope)
    report.update(ran=ran, stdout=printed[:MAX_OUTPUT], error=error)
    if job["kind"] == "chart":
        if scope is not None:  # the chart test runs the program again, on the figure the first run left
            ran_again, _, error = run(source, mode, timeout, scope)
        else:
            ran_again = ran
        if ran_again:
            try:
                report["values"] = _numbers(drawn_values(job["chart_type"]))
            except BaseException as err:
                report["values_error"] = f"{type(err).__name__}: {err}"[:2000]
        else:
            report["values_error"] = error or "the program failed"
    return report


def _status(wait: int) -> str:
    """A forked run's end as the sandbox names a process's (``ok``, ``exit 1``, ``SIGKILL`` ...)."""
    if os.WIFSIGNALED(wait):
        number = os.WTERMSIG(wait)
        try:
            return signal.Signals(number).name
        except ValueError:
            return f"signal {number}"
    code = os.WEXITSTATUS(wait)
    return "ok" if code == 0 else f"exit {code}"


class Directory:
    """The working directory as the harness left it before any program ran, put back between two runs: what a
    run added goes, the files the harness wrote and the libraries' links are written again."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table
        self.entries = set(os.listdir("."))
        self.files: dict[str, bytes] = {}
        for name in ("main.py", "program.py", "job.json"):
            with open(name, "rb") as handle:
                self.files[name] = handle.read()
        self.links = {name: os.readlink(os.path.join(".libraries", name)) for name in os.listdir(".libraries")} \
            if os.path.isdir(".libraries") else {}

    def restore(self) -> None:
        import shutil

        for name in set(os.listdir(".")) - self.entries:
            path = os.path.join(".", name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        for name, content in self.files.items():
            with open(name, "wb") as handle:
                handle.write(content)
        write_table(self.table)
        if self.links:
            os.makedirs(".libraries", exist_ok=True)
            for name, target in self.links.items():
                link = os.path.join(".libraries", name)
                if not os.path.islink(link):
                    if os.path.lexists(link):
                        os.unlink(link)
                    os.symlink(target, link)


def forked(job: dict[str, Any], source: str, mode: str) -> dict[str, Any]:
    """Run the program one way in a child process (its stderr and report through anonymous files): its report, or
    how the child ended when it left none (``exit`` and the end of its ``stderr``)."""
    try:
        out, err = os.memfd_create("report"), os.memfd_create("stderr")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
    except (AttributeError, OSError) as error:  # no fork here (the sandbox's guard, its process limit, no memfd)
        raise NoFork(f"{type(error).__name__}: {error}") from None
    if pid == 0:  # the child: run, write the report, leave without the parent's clean-up
        code = 0
        try:
            os.dup2(err, 2)
            report = execute(job, source, mode)
            os.write(out, json.dumps(report).encode())
        except BaseException:
            code = 1
        finally:
            for stream in (sys.__stdout__, sys.__stderr__):
                with contextlib.suppress(BaseException):
                    stream.flush()  # type: ignore[union-attr]
            os._exit(code)
    runs = 2 if job["kind"] == "chart" and mode != "isolated" else 1
    deadline = runs * float(job["timeout"]) + float(job.get("startup", 60.0))
    _, wait = _wait(pid, deadline)
    text = _read(out).decode("utf-8", "replace")
    stderr = _read(err).decode("utf-8", "replace")
    sys.stderr.write(stderr)
    os.close(out)
    os.close(err)
    status = "timeout" if wait is None else _status(wait)
    if text and status == "ok":
        return dict(json.loads(text))
    return {"exit": status, "stderr": stderr[-4000:]}


def _wait(pid: int, seconds: float) -> tuple[int, int | None]:
    """Wait for the child up to ``seconds``, then kill it (None: it ran past them)."""
    import time

    end = time.monotonic() + seconds
    while True:
        done, wait = os.waitpid(pid, os.WNOHANG)
        if done:
            return done, wait
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return pid, None
        time.sleep(0.01)


def _read(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def main() -> None:
    with open("job.json", encoding="utf-8") as handle:
        job = json.load(handle)
    with open("program.py", encoding="utf-8") as handle:
        source = handle.read()
    os.environ.setdefault("MPLBACKEND", "Agg")
    modes = list(job["modes"])
    report: dict[str, Any] = {}
    eager = draws(job, source)
    try:
        if eager:
            import matplotlib

            matplotlib.use("Agg")
        write_table(job["table"])
        if len(modes) > 1:  # what every way imports, once (the released way's globals: numpy, pandas, pyplot)
            released_globals("released", eager)
            directory = Directory(job["table"])
    except BaseException as err:  # the harness itself failed: not the program's doing
        report["harness_error"] = f"{type(err).__name__}: {err}"[:2000]
        print("\n" + MARKER + json.dumps(report), file=sys.__stdout__, flush=True)
        return
    if len(modes) == 1:
        report["modes"] = {modes[0]: execute(job, source, modes[0])}
    else:
        report["modes"] = {}
        for i, mode in enumerate(modes):
            if i:
                directory.restore()
            try:
                report["modes"][mode] = forked(job, source, mode)
            except NoFork as err:  # the caller runs the ways left one sandbox each
                report["fork_error"] = str(err)[:2000]
                break
    print("\n" + MARKER + json.dumps(report), file=sys.__stdout__, flush=True)


if __name__ == "__main__":
    main()
