"""Program-of-thought over the DataFrame: the model's code runs in the sandbox on the table, its value is the answer.

The table goes into the sandbox as its Parquet file and is read there with ``pandas.read_parquet``, as the
official baseline reads it; the program then runs in a function ``answer(df)``, called once (``pd`` and ``np`` are
imported). How the reply becomes that function (``pot_reply``):

- ``official`` (the baseline's ``example_postprocess``): the reply's first line is the expression returned.
- ``program`` (default): the first fenced code block if there is one, else the reply; when it defines
  ``answer(df)`` itself, that function runs; otherwise its first non-empty line, without a leading ``return``, is
  the expression returned (so a chat model's fenced one-liner, or a whole function, runs too).

The value becomes the answer's text (``pot_render``):

- ``str`` (the official runner): ``str(value)``, its line breaks as spaces;
- ``lists`` (default): first a pandas Series or Index, a NumPy array, a tuple or a set becomes a list, a one-column
  DataFrame its column's list, and NumPy scalars Python's (``str`` of a NumPy 2 scalar in a list reads
  ``np.int64(3)``, which the official check cannot read back as 3); then as ``str``.

A program that raises, exceeds its limits or sets nothing gives no answer (an empty one, wrong unless the gold is
empty too) and the reason is kept with the attempt.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from structbench.core import untrusted
from structbench.core.errors import DataError
from structbench.sandbox import Limits, NamespaceMode, run_python

ReplyMode = Literal["program", "official"]
RenderMode = Literal["lists", "str"]
LIBRARIES = ("pandas", "pyarrow")
"""What the sandboxed program may import besides the standard library: pandas, and pyarrow to read Parquet."""
TABLE = "table.parquet"
MARKER = "__DATABENCH_ANSWER__"
MAX_ANSWER = 20_000
"""Characters of the answer's text kept (a program that returns a whole table prints it all)."""

_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|$)", re.DOTALL | re.IGNORECASE)
_DEFINES = re.compile(r"^\s*def\s+answer\s*\(", re.MULTILINE)
_RETURN = re.compile(r"^return\b\s*")

RENDER = {
    "str": """
def _render(value):
    return str(value)
""",
    "lists": """
def _plain(value):
    import numpy as np
    if isinstance(value, pd.DataFrame) and value.shape[1] == 1:
        value = value.iloc[:, 0]
    if isinstance(value, (pd.Series, pd.Index, np.ndarray)):
        value = value.tolist()
    if isinstance(value, (tuple, set, frozenset)):
        value = list(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value

def _render(value):
    return str(_plain(value))
""",
}

HARNESS = """
import json, sys
import numpy as np
import pandas as pd
{render}
_source = {source!r}
_scope = {{"__name__": "__main__", "__builtins__": __builtins__, "pd": pd, "np": np}}
exec(compile(_source, "<program>", "exec"), _scope)
_df = pd.read_parquet({table!r})
_text = _render(_scope["answer"](_df)).replace("\\n", " ")
sys.stdout.flush()
print("\\n{marker}" + json.dumps({{"answer": _text[:{limit}]}}))
"""


@dataclass(frozen=True)
class Program:
    """What runs: the source that defines ``answer(df)``, and how it was read from the reply."""

    source: str
    how: str
    """``function`` (the reply defines ``answer``) or ``expression`` (a line returned)."""


def as_function(expression: str) -> str:
    return f"def answer(df):\n    return {expression}\n"


def extract_program(reply: str, mode: ReplyMode = "program") -> Program:
    """The function ``answer(df)`` the reply gives (see the module docstring)."""
    if mode == "official":
        return Program(as_function(reply.split("\n")[0].strip()), "expression")
    fenced = _FENCE.search(reply)
    code = fenced.group(1) if fenced else reply
    if _DEFINES.search(code):
        return Program(code.strip("\n"), "function")
    first = next((line.strip() for line in code.split("\n") if line.strip()), "")
    return Program(as_function(_RETURN.sub("", first)), "expression")


def harness(program: Program, render: RenderMode = "lists") -> str:
    """The script the sandbox runs: reads the table, defines and calls ``answer(df)``, reports its text."""
    return HARNESS.format(render=RENDER[render], source=program.source, table=TABLE, marker=MARKER,
                          limit=MAX_ANSWER)


@dataclass(frozen=True)
class ProgramOutcome:
    """What running a program gave; stored in ``Attempt.artifacts["program"]``."""

    answer: str | None
    """The answer's text (None when the program gave none)."""
    status: str
    """``ok``, ``error`` (an exception), ``timeout``, ``SIGXCPU``, ``exit N`` ..."""
    code: str
    how: str
    error: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_program(
    program: Program, table: Path, *, render: RenderMode = "lists", limits: Limits | None = None,
    namespaces: NamespaceMode = "auto",
) -> ProgramOutcome:
    """Run ``program`` in the sandbox on the table in ``table`` (a Parquet file) and read its answer."""
    try:
        data = table.read_bytes()
    except OSError as err:
        raise DataError(f"{table}: cannot read the table ({err.strerror or err})") from err
    result = run_python(harness(program, render), files={TABLE: data}, libraries=LIBRARIES,
                        limits=limits or Limits(), namespaces=namespaces)
    _, marker, last = result.stdout.rpartition("\n" + MARKER)
    error = result.stderr.strip()[-800:] or None
    if result.ok and marker:
        try:
            answer = untrusted.loads(last.splitlines()[0])["answer"]  # (the program may print it)
        except (ValueError, IndexError, KeyError, TypeError):
            return ProgramOutcome(None, "error", program.source, program.how, "unreadable report")
        return ProgramOutcome(str(answer), "ok", program.source, program.how, error)
    status = result.status() if not result.ok else "error"
    if status.startswith("exit"):
        status = "error"
    return ProgramOutcome(None, status, program.source, program.how, error or "the program reported no answer")
