"""Program-of-thought: cut the program out of a reply, run it in the sandbox, read its verdict.

The H.4 prompt asks for Python that sets ``ans`` and calls ``equal(a, b)``. The program runs inside
a harness (``harness``) that defines ``equal``, executes the program and reports ``ans``:

- ``True`` -> supports, ``False`` -> refutes, ``None`` -> not enough info;
- a string -> read with the label parser ("supports", "the claim is false", "C" ...);
- anything else, or an exception, timeout or resource limit -> no label (invalid, counted wrong);
- no ``ans`` at all -> the last non-empty line the program printed, read with the label parser.

``equal`` is tolerant by default (numbers equal within a relative 1e-6, so 88.64 - 86.69 equals 1.95);
``exact`` (plain ``==``) reproduces the floating-point failures the paper reports in its PoT error
analysis (Appendix G, error case 5).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Literal

from structbench.benchmarks.scitab.parse import parse_label
from structbench.benchmarks.scitab.prompts import SEPARATOR
from structbench.benchmarks.scitab.source import NEI, REFUTES, SUPPORTS, Label
from structbench.core import untrusted
from structbench.sandbox import Limits, NamespaceMode, run_python

EqualMode = Literal["tolerant", "exact"]

EQUAL: dict[EqualMode, str] = {
    "tolerant": '''
def equal(a, b):
    """Numbers are equal within a relative 1e-6 (floating-point noise); other values by ==."""
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return a == b
    return abs(x - y) <= 1e-6 * max(1.0, abs(x), abs(y))
''',
    "exact": """
def equal(a, b):
    return a == b
""",
}

MARKER = "__SCITAB_ANSWER__"

HARNESS = """
import json, sys
{equal}
_source = {source!r}
_scope = {{"__name__": "__main__", "__builtins__": __builtins__, "equal": equal}}
exec(compile(_source, "<program>", "exec"), _scope)
_ans = _scope.get("ans", _scope)
if _ans is _scope:
    _report = {{"type": "missing"}}
elif _ans is None or isinstance(_ans, bool):
    _report = {{"type": "bool", "value": _ans}}
elif isinstance(_ans, str):
    _report = {{"type": "str", "value": _ans[:1000]}}
else:
    _report = {{"type": type(_ans).__name__, "repr": repr(_ans)[:200]}}
sys.stdout.flush()
print("\\n{marker}" + json.dumps(_report))
"""

_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|$)", re.DOTALL | re.IGNORECASE)


def extract_program(reply: str) -> str:
    """The program in ``reply``: the first fenced block if any, else the reply up to a "------" line.

    When that does not compile, leading and trailing prose lines are dropped (up to 10 each) until
    it does; if nothing compiles, the text is returned as is and fails when run.
    """
    fenced = _FENCE.search(reply)
    text = fenced.group(1) if fenced else reply.split(f"\n{SEPARATOR}", 1)[0]
    text = text.strip("\n")
    if _compiles(text):
        return text
    lines = text.split("\n")
    for start in range(min(len(lines), 10)):
        for end in range(len(lines), max(start, len(lines) - 10), -1):
            candidate = "\n".join(lines[start:end])
            if candidate.strip() and _compiles(candidate):
                return candidate
    return text


def _compiles(source: str) -> bool:
    try:
        compile(source, "<program>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def harness(program: str, equal: EqualMode = "tolerant") -> str:
    """The script the sandbox runs: ``equal``, the program, then one line reporting ``ans``."""
    return HARNESS.format(equal=EQUAL[equal], source=program, marker=MARKER)


@dataclass(frozen=True)
class ProgramOutcome:
    """What running a program decided; stored in ``Attempt.artifacts["program"]``."""

    label: Label | None
    status: str
    """``ok``, ``error`` (an exception), ``timeout``, ``SIGXCPU``, ``exit N`` ..."""
    ans: str | None
    """``repr`` of the program's ``ans`` (None when it set none)."""
    stdout: str
    error: str | None
    equal: EqualMode

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_BOOLS: dict[Any, Label] = {True: SUPPORTS, False: REFUTES, None: NEI}


def _label_of(report: Any, printed: str) -> tuple[Label | None, str | None]:
    """The label of the harness's report; a report of another shape (a program can print one of its own) has none."""
    if not isinstance(report, dict):
        return None, None
    kind = report.get("type")
    if kind == "bool":
        value = report.get("value")
        if not (value is None or isinstance(value, bool)):
            return None, repr(value)
        return _BOOLS[value], repr(value)
    if kind == "str":
        value = str(report.get("value"))
        return parse_label(value, options=True), repr(value)
    if kind == "missing":
        lines = [line for line in printed.splitlines() if line.strip()]
        return (parse_label(lines[-1], options=True) if lines else None), None
    return None, str(report.get("repr"))


def run_program(
    program: str,
    *,
    equal: EqualMode = "tolerant",
    limits: Limits | None = None,
    namespaces: NamespaceMode = "auto",
) -> ProgramOutcome:
    """Run ``program`` in the sandbox and read its verdict."""
    result = run_python(harness(program, equal), limits=limits or Limits(), namespaces=namespaces)
    printed, marker, last = result.stdout.rpartition("\n" + MARKER)
    stderr_tail = result.stderr.strip()[-800:] or None
    if result.ok:
        report: Any = {"type": "missing"}  # sys.exit() before the harness reported
        if marker:
            try:
                report = untrusted.loads(last.splitlines()[0])  # (the program may print it)
            except (ValueError, IndexError):
                return ProgramOutcome(None, "error", None, result.stdout[-2000:], "unreadable report", equal)
        else:
            printed = result.stdout
        label, ans = _label_of(report, printed)
        return ProgramOutcome(label, "ok", ans, printed[-2000:], stderr_tail, equal)
    status = result.status()
    if status.startswith("exit"):
        status = "error"
    return ProgramOutcome(None, status, None, result.stdout[-2000:], stderr_tail, equal)
