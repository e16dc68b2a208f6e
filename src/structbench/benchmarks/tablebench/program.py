"""Running a reply's program in the sandbox: a program-of-thought answer, or a chart and the values it draws.

The sandbox runs ``harness.py`` (see there) with pandas and matplotlib, the question's table as ``table.csv``
and the program; it never gets the reference. What comes back is a ``ProgramOutcome``: whether the program ran
(the release's ECR@1), what it printed, and for a chart the values it drew, which ``chart_verdict`` compares with
the reference as the released chart test does.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import math
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from structbench.core import untrusted
from structbench.core.memo import Memo
from structbench.sandbox import Limits, NamespaceMode, SandboxError, run_python

Execution = Literal["isolated", "released", "paper"]
"""How a program runs: alone, as a script (structbench); as the released parser of April 2025 or of August 2024
runs it (``harness``)."""
Kind = Literal["answer", "chart"]

HARNESS = Path(__file__).with_name("harness.py")
MARKER = "__TABLEBENCH_REPORT__"
"""Keep in sync with ``harness.MARKER``."""
LIBRARIES = ("pandas", "matplotlib")
"""What a program may import beyond the standard library (numpy comes with pandas)."""
STARTUP_SECONDS = 60.0
"""Wall-clock time the sandbox allows beyond the program's own limit (twice for a chart run the released way):
importing pandas and matplotlib and writing the table take a few seconds on a busy machine."""


@dataclass(frozen=True)
class ProgramOutcome:
    """What a program did; stored per execution mode in ``Attempt.artifacts["program"]``."""

    status: str
    """``ok``, ``error`` (an exception), ``timeout``, ``no code`` (the reply has no python block), or the
    sandbox's status when it was stopped (``SIGKILL``, ``exit 1`` ...)."""
    ran: bool
    """It ran to its end without an exception (ECR@1)."""
    output: str
    """What it printed ("" when it failed: the released parser keeps no output of a failed program)."""
    values: Any = None
    """A chart's drawn values, by the chart type's rule (None when none could be read)."""
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProgramOutcome:
        return cls(**{k: data[k] for k in ("status", "ran", "output", "values", "error") if k in data})


NO_CODE = ProgramOutcome(status="no code", ran=False, output="", error="the reply has no ```python block")


def run_program(
    code: str,
    table: dict[str, Any],
    *,
    kind: Kind,
    chart_type: str | None = None,
    execution: Execution = "isolated",
    timeout: float = 15.0,
    limits: Limits,
    namespaces: NamespaceMode = "auto",
) -> ProgramOutcome:
    """Run ``code`` over ``table`` in the sandbox (``limits.wall_seconds`` is replaced by what the run needs)."""
    return run_programs(code, table, kind=kind, chart_type=chart_type, executions=(execution,), timeout=timeout,
                        limits=limits, namespaces=namespaces)[execution]


def run_programs(
    code: str,
    table: dict[str, Any],
    *,
    kind: Kind,
    chart_type: str | None = None,
    executions: Sequence[Execution],
    timeout: float = 15.0,
    limits: Limits,
    namespaces: NamespaceMode = "auto",
    deterministic: bool = False,
) -> dict[Execution, ProgramOutcome]:
    """Run ``code`` over ``table`` each way of ``executions``, in one sandbox (the harness forks a process per way
    after its imports, once; one more process is allowed for it), or one sandbox per way where
    the sandbox cannot fork. ``limits.wall_seconds`` is replaced by what the runs need.

    ``deterministic``: the caller knows the program's outcome is a function of what it runs on (no clock, no
    randomness, no set order; structbench's oracle's programs): a way it ran to its end with the same table, chart
    type, time limit, limits and namespaces in this process is not run again (``OutcomeMemo``). Any other program
    runs each time: a fresh interpreter draws its own hash seed, clock and random numbers, so two runs of one
    model-written program are two draws, which a memo would make one."""
    if not code:
        return dict.fromkeys(executions, NO_CODE)
    modes = list(dict.fromkeys(executions))
    if not deterministic:
        return _run_programs(code, table, kind=kind, chart_type=chart_type, modes=modes, timeout=timeout,
                             limits=limits, namespaces=namespaces)
    keys = {mode: _memo_key(code, table, kind, chart_type, mode, timeout, limits, namespaces) for mode in modes}
    with _MEMO.holding(sorted(keys.values())):
        outcomes = {mode: found for mode in modes if (found := _MEMO.get(keys[mode])) is not None}
        missing = [mode for mode in modes if mode not in outcomes]
        if missing:
            ran = _run_programs(code, table, kind=kind, chart_type=chart_type, modes=missing, timeout=timeout,
                                limits=limits, namespaces=namespaces)
            for mode, outcome in ran.items():
                if outcome.ran:  # a failure may be the machine's (a timeout under load): the next asker runs it
                    _MEMO.put(keys[mode], outcome)
            outcomes.update(ran)
    return {mode: outcomes[mode] for mode in modes}


def _memo_key(code: str, table: dict[str, Any], kind: Kind, chart_type: str | None, mode: Execution, timeout: float,
              limits: Limits, namespaces: NamespaceMode) -> str:
    """What decides a deterministic program's outcome one way (the harness, libraries and interpreter are this
    process's), hashed."""
    text = json.dumps([code, table_safe(table), kind, chart_type, mode, timeout, asdict(limits), namespaces],
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class OutcomeMemo:
    """Outcomes of deterministic programs by ``_memo_key`` (a bounded ``Memo``). ``holding`` makes a second asker of
    a program being run wait for its outcome rather than run it too (a run's workers ask at once)."""

    def __init__(self, size: int) -> None:
        self.outcomes: Memo[str, ProgramOutcome] = Memo(size)
        self.lock = threading.Lock()
        self.running: dict[str, threading.Lock] = {}

    def get(self, key: str) -> ProgramOutcome | None:
        return self.outcomes.get(key)

    def put(self, key: str, outcome: ProgramOutcome) -> None:
        self.outcomes.put(key, outcome)

    @contextlib.contextmanager
    def holding(self, keys: Sequence[str]) -> Iterator[None]:
        """The keys' locks, taken in order (no two askers wait on each other)."""
        with self.lock:
            locks = [self.running.setdefault(key, threading.Lock()) for key in keys]
        try:
            with contextlib.ExitStack() as stack:
                for lock in locks:
                    stack.enter_context(lock)
                yield
        finally:
            with self.lock:
                for key, lock in zip(keys, locks, strict=True):
                    if self.running.get(key) is lock and not lock.locked():  # at worst a second run, never wrong
                        del self.running[key]


_MEMO = OutcomeMemo(size=4096)


def _run_programs(code: str, table: dict[str, Any], *, kind: Kind, chart_type: str | None, modes: list[Execution],
                  timeout: float, limits: Limits, namespaces: NamespaceMode) -> dict[Execution, ProgramOutcome]:
    """``run_programs`` without the memo: one sandbox for ``modes``."""
    job = {"modes": modes, "kind": kind, "chart_type": chart_type, "timeout": timeout, "startup": STARTUP_SECONDS,
           "table": table}
    wall = sum(_runs(kind, mode) * timeout + STARTUP_SECONDS for mode in modes)
    processes = limits.max_processes + (len(modes) > 1)  # the harness and the way it forks
    sandbox = Limits(**{**asdict(limits), "wall_seconds": wall, "max_processes": processes})
    pyplot = kind == "chart" or any(mode != "isolated" for mode in modes)  # the harness imports it (harness.py)
    fonts = font_cache(namespaces) if pyplot else {}
    files = {**fonts, "program.py": code, "job.json": json.dumps(table_safe(job))}
    result = run_python(HARNESS.read_text(encoding="utf-8"), limits=sandbox, namespaces=namespaces, files=files,
                        libraries=LIBRARIES)
    _, marker, last = result.stdout.rpartition("\n" + MARKER)
    if not marker:
        status = result.status()
        failed = ProgramOutcome(status="error" if status == "ok" else status, ran=False, output="",
                                error=(result.stderr.strip()[-800:] or "the harness reported nothing"))
        return dict.fromkeys(modes, failed)
    try:
        report = untrusted.loads(last.splitlines()[0])  # (the program may print it)
    except (ValueError, IndexError):
        report = None
    unreadable = dict.fromkeys(modes, ProgramOutcome(status="error", ran=False, output="", error="unreadable report"))
    if not _well_formed(report):  # the program printed a report of its own: its failure, not the harness's
        return unreadable
    if report.get("harness_error"):
        if code == HARNESS_PROBE or _harness_fails(table, kind, chart_type, modes, timeout, limits, namespaces):
            raise SandboxError(f"tablebench: the sandbox could not prepare the program: {report['harness_error']}")
        return dict.fromkeys(modes, ProgramOutcome(  # the program wrote it (the harness alone reports none): scored
            status="error", ran=False, output="", error="the program printed the harness's report itself"))
    outcomes = {mode: _outcome(found) for mode, found in report.get("modes", {}).items() if mode in modes}
    for mode in modes:  # the ways the harness could not fork for, one sandbox each
        if mode not in outcomes:
            outcomes[mode] = _run_programs(code, table, kind=kind, chart_type=chart_type, modes=[mode],
                                           timeout=timeout, limits=limits, namespaces=namespaces)[mode]
    return {mode: outcomes[mode] for mode in modes}


FONT_LIST = """
import json, os, matplotlib
matplotlib.use("Agg")
from matplotlib import font_manager
path = os.path.join(matplotlib.get_cachedir(), f"fontlist-v{font_manager.FontManager.__version__}.json")
with open(path, encoding="utf-8") as handle:
    text = handle.read()
print("\\n" + MARKER + json.dumps({"cwd": os.getcwd(), "path": os.path.relpath(path), "text": text}))
"""


_FONTS_BUILDING = threading.Lock()


def font_cache(namespaces: NamespaceMode) -> dict[str, str]:
    """matplotlib's font list as a sandbox builds it, by its path in the sandbox's directory: written into each
    program's sandbox, it spares every import of pyplot the scan of every font (a third of a second of CPU per
    program). Built once per process, in a sandbox as the programs' (so it lists the fonts they see); none (each
    program scans, as before) where that fails or where the list names the sandbox's own directory (a private
    directory of its own per run, as without namespaces). A run's workers ask for it at once: the first builds it,
    the others wait for it rather than build it too."""
    with _FONTS_BUILDING:
        return _font_cache(namespaces)


@functools.cache
def _font_cache(namespaces: NamespaceMode) -> dict[str, str]:
    """``font_cache``, built (one sandbox run) the first time and kept."""
    try:
        result = run_python(FONT_LIST.replace("MARKER", repr(MARKER)), libraries=("matplotlib",),
                            namespaces=namespaces,
                            limits=Limits(cpu_seconds=30, wall_seconds=STARTUP_SECONDS, memory_mb=1024))
        _, marker, last = result.stdout.rpartition("\n" + MARKER)
        found = json.loads(last.splitlines()[0]) if marker and result.ok else {}
    except (SandboxError, ValueError, IndexError):
        return {}
    if not isinstance(found, dict):
        return {}
    path, text, cwd = found.get("path"), found.get("text"), found.get("cwd")
    if not (isinstance(path, str) and isinstance(text, str) and isinstance(cwd, str)) or cwd in text \
            or path.startswith(("/", "..")):
        return {}
    return {path: text}


def _runs(kind: Kind, execution: str) -> int:
    """How many times the harness runs a program: twice for a chart run the released way."""
    return 2 if kind == "chart" and execution != "isolated" else 1


HARNESS_PROBE = "pass"
"""The program ``_harness_fails`` runs: what the harness reports of it is the harness's own doing."""


def _harness_fails(table: dict[str, Any], kind: Kind, chart_type: str | None, modes: list[Execution],
                   timeout: float, limits: Limits, namespaces: NamespaceMode) -> bool:
    """Whether the harness reports that it failed for a program that does nothing, as it did for the one it ran: a
    program can print the harness's report (a failure, so the sample would be left out of the metrics as a harness
    error) and end the process before the real one is printed."""
    try:
        _run_programs(HARNESS_PROBE, table, kind=kind, chart_type=chart_type, modes=modes, timeout=timeout,
                      limits=limits, namespaces=namespaces)
    except SandboxError:
        return True
    return False


def _well_formed(report: Any) -> bool:
    """Whether ``report`` has the shape the harness writes (a model's program can print one of its own)."""
    if not isinstance(report, dict) or not isinstance(report.get("modes", {}), dict):
        return False
    if not isinstance(report.get("harness_error", ""), str):
        return False
    return all(isinstance(found, dict) for found in report.get("modes", {}).values())


def _outcome(report: dict[str, Any]) -> ProgramOutcome:
    """One way's outcome from the harness' report of it (or of how its process ended without one)."""
    if "exit" in report:
        status = str(report["exit"])
        return ProgramOutcome(status="error" if status == "ok" else status, ran=False, output="",
                              error=(str(report.get("stderr", "")).strip()[-800:] or "the harness reported nothing"))
    ran = bool(report.get("ran"))
    error = str(report.get("error") or report.get("values_error") or "")
    status = "ok" if ran else ("timeout" if error.startswith("ProgramTimeout") else "error")
    return ProgramOutcome(status=status, ran=ran, output=str(report.get("stdout", "")) if ran else "",
                          values=report.get("values"), error=error[:2000])


def table_safe(value: Any) -> Any:
    """``value`` with non-finite floats as JSON's ``null`` (a table cell that is NaN reads back as empty)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: table_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [table_safe(v) for v in value]
    return value


def chart_references(answer: str) -> list[Any]:
    """The reference values of a chart question: the list literal its answer assigns (``y_references = [[...]]``);
    ``ValueError`` when the answer is not such an assignment."""
    try:
        tree = ast.parse(answer.strip(), mode="exec")
    except SyntaxError as err:
        raise ValueError(f"the chart answer is not Python ({err.msg})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "y_references"
                                                 for t in node.targets):
            value = ast.literal_eval(node.value)
            if isinstance(value, list):
                return value
    raise ValueError("the chart answer assigns no list to y_references")


def _flat(values: Sequence[Any]) -> list[Any]:
    """One level of nesting removed, as the released chart test flattens (lists extended, the rest appended)."""
    out: list[Any] = []
    for value in values:
        if isinstance(value, list):
            out.extend(value)
        else:
            out.append(value)
    return out


def chart_verdict(references: list[Any], values: Any, chart_type: str | None) -> bool | None:
    """Whether the drawn ``values`` are the references, by the released chart test: both flattened, each rounded to
    two decimals (a pie's references as fractions of their sum first), sorted and compared one by one (NaN matching
    NaN). None where that test raises and prints nothing (no values, text among them, a pie summing to 0)."""
    if values is None or not isinstance(values, list):
        return None
    try:
        refs = _flat(references)
        if chart_type == "pie":
            total = sum(refs)
            refs = [round(r / total, 2) for r in refs]
        expected = sorted(round(r, 2) for r in refs)
        drawn = sorted(round(v, 2) for v in _flat(values))
        if len(expected) != len(drawn):
            return False
        for want, got in zip(expected, drawn, strict=True):
            if math.isnan(want):
                if not math.isnan(got):
                    return False
            elif want != got:
                return False
        return True
    except (TypeError, ValueError, ZeroDivisionError, ArithmeticError):
        return None
