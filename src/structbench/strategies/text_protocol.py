"""The text protocol of tool calls, for models without function calling (llama.cpp, hf, vLLM offline, the embedded
model): the prompt describes the tools, the model calls one by writing a fenced block in its language
(```` ```sql ```` or ```` ```python ````), and the results come back in the next user turn. A reply without such a
block is the final answer. Only the answer part of a reply is read (a thought never is)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

FENCES = {"sql": "sql", "python": "python", "py": "python", "python3": "python"}
"""A fence's language -> the tool it calls."""
_BLOCK = re.compile(r"```[ \t]*([A-Za-z0-9_]+)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)

USAGE = {
    "sql": "```sql\nSELECT ...\n```\n(one SQL SELECT statement over the tables; its rows come back)",
    "python": "```python\nprint(...)\n```\n(a Python program with pandas; the tables are DataFrames of the same names "
              "and all in the dict `tables`; what it prints comes back)",
}
INSTRUCTIONS = """You can query the data before you answer. To run a query, reply with one fenced code block:

{usage}

Each block you write is run, and its result comes back in the next message; nothing carries over between blocks. \
When you know the answer, reply without any code block, giving your final answer as asked above."""


@dataclass(frozen=True)
class TextCall:
    """One fenced block of a reply: its language (the tool's kind), the tool it calls and the code."""

    kind: str
    tool: str
    code: str


def instructions(kinds: Sequence[str]) -> str:
    """How the model calls the tools of ``kinds`` (``sql``, ``python``, in the order given), appended to the first
    user turn."""
    return INSTRUCTIONS.format(usage="\n\n".join(USAGE[k] for k in kinds if k in USAGE))


def calls(text: str, tools: Mapping[str, str]) -> list[TextCall]:
    """The tool calls of a reply: its fenced blocks in the languages of ``tools`` (kind -> the tool of that kind; an
    unclosed last block too, as a reply cut off at its token budget leaves it); other blocks are not calls."""
    found = []
    for match in _BLOCK.finditer(text):
        kind = FENCES.get(match.group(1).lower())
        code = match.group(2).strip()
        if kind is not None and kind in tools and code:
            found.append(TextCall(kind, tools[kind], code))
    return found


def results(answered: Sequence[tuple[TextCall, str]]) -> str:
    """The user turn that hands back the results of a reply's blocks, in order."""
    parts = []
    for k, (call, text) in enumerate(answered, 1):
        label = f"block {k}" if len(answered) > 1 else "block"
        parts.append(f"Result of your {call.kind} {label}:\n```\n{text}\n```")
    return "\n\n".join(parts)
