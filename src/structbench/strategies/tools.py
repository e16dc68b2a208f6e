"""The tool loop: the model queries the sample's data with tools until it gives a final answer, or runs out of turns.

Each turn is one model call through the runner's ``generate`` (so it is cached: a run killed mid-loop asks the
completed turns again of the cache, not of the model) and every tool call of the reply is run on the sample's
``Workspace``, whose results go back as the next turn (with the reply as its backend returned it where it must see it
again, ``Choice.replay``: Anthropic's signed thinking blocks; the loop itself reads only the answer). A backend with
function calling (``ToolSupport.native``: OpenAI-compatible servers, Anthropic) gets the tools as function tools and
returns ``tool_calls``; any other speaks the text protocol (``strategies.text_protocol``: fenced ``sql``/``python``
blocks). The final reply, a turn without a tool call, is the attempt's output, read by the benchmark's own parser
(``answer``). A loop that reaches the turn limit still calling tools has no answer: by default it is scored as a reply
without an answer (an empty output, so a model that stalls on hard questions does not leave them out of ``n``), or,
with ``--turn-limit apart`` (or a strategy built with ``count_turn_limit=False``), counted apart and not scored
(``Attempt.turn_limit``).

The record keeps the trace (``artifacts["tools"]``): each call's turn, tool, arguments, result (cut to
``TRACE_CHARS``), error and seconds, at most ``TRACE_CALLS`` of them; tokens and cost are summed over the turns by the
runner, as for any strategy that calls the model more than once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from structbench.backends.base import GenerationParams, Message, Request, ToolCall, ToolSpec
from structbench.contract.benchmark import (
    DEFAULT_MAX_TURNS,
    AnswerFormat,
    Attempt,
    Generate,
    Strategy,
    ToolSupport,
    tool_support,
)
from structbench.data.evidence import Table
from structbench.data.sample import Sample
from structbench.sandbox import NamespaceMode
from structbench.strategies import text_protocol
from structbench.strategies.common import as_written
from structbench.toolbox import (
    DuckTables,
    NamedTable,
    PythonTables,
    Tool,
    ToolLimits,
    ToolResult,
    Workspace,
    parse_arguments,
    table_names,
)

TRACE_CHARS = 2000
"""Characters of a call's arguments and of its result kept in the record's trace."""
TRACE_CALLS = 60
"""Calls a record's trace keeps (the first ones; the count of all is kept too)."""
MAX_CALLS_PER_TURN = 8
"""Tool calls run per model reply; more are answered with an error instead of being run."""


@dataclass(frozen=True)
class ToolTask:
    """What a benchmark gives the loop for one sample: the opening turns and the sample's tools."""

    messages: tuple[Message, ...]
    """The conversation's start (a system turn, then the user's question with the schema); the text protocol's
    instructions are appended to the last turn for a model without function calling."""
    workspace: Workspace
    max_tokens: int = 1024
    """Tokens per reply."""
    response_format: dict[str, Any] | None = None
    """Structured output asked of every reply (an OpenAI ``response_format``), with function tools only: the text
    protocol's replies must be free to hold a fenced block."""


@dataclass
class Trace:
    """The loop's record: every call, and the counts the report shows."""

    protocol: str
    turns: int = 0
    calls: int = 0
    errors: int = 0
    turn_limit: bool = False
    entries: list[dict[str, Any]] = field(default_factory=list)

    def add(self, turn: int, tool: str, arguments: str, result: ToolResult) -> None:
        self.calls += 1
        self.errors += result.error is not None
        if len(self.entries) < TRACE_CALLS:
            self.entries.append({
                "turn": turn, "tool": tool, "arguments": _cut(arguments), "result": _cut(result.text),
                "error": result.error, "seconds": round(result.seconds, 4), "rows": result.rows,
            })

    def to_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "turns": self.turns, "calls": self.calls, "errors": self.errors,
                "turn_limit": self.turn_limit, "trace": self.entries}


def _cut(text: str) -> str:
    return text if len(text) <= TRACE_CHARS else text[:TRACE_CHARS] + f"... ({len(text)} characters)"


class ToolLoop(Strategy):
    """Query the data with tools, then answer: the benchmark builds each sample's ``ToolTask``."""

    def __init__(self, name: str, task: Callable[[Sample], ToolTask], description: str = "", *,
                 answer: AnswerFormat, max_turns: int = DEFAULT_MAX_TURNS, count_turn_limit: bool = True) -> None:
        self.name = name
        self.task = task
        self.description = description
        self.answer = answer
        self.max_turns = max_turns
        """This strategy's turn limit (the paper's, where it states one); ``--max-turns`` overrides it."""
        self.count_turn_limit = count_turn_limit
        """Score a loop at the turn limit as a reply without an answer (the default, and a paper's code that counts
        it wrong), instead of counting it apart (``Attempt.turn_limit``); ``--turn-limit`` overrides it."""

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        support = tool_support(generate)
        task = await asyncio.to_thread(self.task, sample)  # loading a large table takes a while
        try:
            return await self._loop(task, support, generate)
        finally:
            await asyncio.to_thread(task.workspace.close)

    async def _loop(self, task: ToolTask, support: ToolSupport, generate: Generate) -> Attempt:
        workspace = task.workspace
        kinds: dict[str, str] = {}  # the text protocol's fence language -> the first tool of that kind
        for name, tool in workspace.tools.items():
            kinds.setdefault(tool.kind, name)
        limit = support.max_turns or self.max_turns
        params = GenerationParams(max_tokens=task.max_tokens, temperature=0.0,
                                  response_format=task.response_format if support.native else None)
        messages = list(task.messages)
        specs: tuple[ToolSpec, ...] = ()
        if support.native:
            specs = tuple(ToolSpec(t.name, t.describe(), t.parameters()) for t in workspace.tools.values())
        elif kinds:
            last = messages[-1]
            messages[-1] = Message(last.role, f"{last.content}\n\n{text_protocol.instructions(list(kinds))}")
        trace = Trace("function" if support.native else "text")
        text = ""
        for turn in range(1, limit + 1):
            response = await generate(Request(messages=tuple(messages), params=params, tools=specs))
            trace.turns = turn
            choice = response.choices[0]
            text = choice.text
            if support.native and choice.tool_calls:
                messages.append(Message("assistant", text, tool_calls=choice.tool_calls, replay=choice.replay))
                messages += await self._native(workspace, choice.tool_calls, turn, trace)
                continue
            found = [] if support.native else text_protocol.calls(text, kinds)
            if not found:
                return Attempt(output=text, artifacts={"tools": trace.to_json(), **as_written(choice)})
            answered = []
            for k, call in enumerate(found):
                result = (await asyncio.to_thread(workspace.call, call.tool, call.code) if k < MAX_CALLS_PER_TURN
                          else _too_many())
                trace.add(turn, call.tool, call.code, result)
                answered.append((call, result.text))
            messages += [Message("assistant", text, replay=choice.replay),
                         Message("user", text_protocol.results(answered))]
        trace.turn_limit = True
        if (support.turn_limit or ("wrong" if self.count_turn_limit else "apart")) == "wrong":
            # no final answer: the parser reads none; the last reply (a tool call) stays in the trace
            return Attempt(output="", artifacts={"tools": {**trace.to_json(), "last_reply": _cut(text)}})
        return Attempt(output=text, artifacts={"tools": trace.to_json()}, turn_limit=True)

    @staticmethod
    async def _native(workspace: Workspace, calls: tuple[ToolCall, ...], turn: int, trace: Trace) -> list[Message]:
        """Run a reply's function calls; each result is a ``tool`` turn answering its call."""
        out = []
        for k, call in enumerate(calls):
            if k >= MAX_CALLS_PER_TURN:
                result = _too_many()
            else:
                arguments = parse_arguments(call.arguments)
                result = await asyncio.to_thread(workspace.call, call.name, arguments)
            trace.add(turn, call.name, call.arguments, result)
            out.append(Message("tool", result.text, tool_call_id=call.id))
        return out


def not_shown(tables: int) -> str:
    """What a table benchmark's tool prompt says of its data (its schema, row counts and first rows are shown)."""
    if tables == 1:
        return "The table is not shown in full: query it with the tools before you answer."
    return "The tables are not shown in full: query them with the tools before you answer."


def table_workspace(tables: Sequence[Table], *, limits: ToolLimits | None = None, python: bool = True,
                    namespaces: NamespaceMode = "auto") -> Workspace:
    """``sql`` (and ``python``) over a sample's tables, named ``t`` (or ``t1``, ``t2`` ...), captions as titles; the
    schema shows each one's columns and types, row count and first rows. No table: no tool, and no schema."""
    tables = [t for t in tables if t.header]  # a table without columns holds nothing to query
    if not tables:
        return Workspace({}, "")
    named = [NamedTable.of(name, t.header, t.rows, t.caption) for name, t in zip(table_names(len(tables)), tables,
                                                                                  strict=True)]
    sql = DuckTables(named, limits, namespaces)
    tools: dict[str, Tool] = {"sql": sql}
    if python:
        tools["python"] = PythonTables(named, limits, namespaces)
    return Workspace(tools, sql.schema())


def _too_many() -> ToolResult:
    return ToolResult.failed(f"at most {MAX_CALLS_PER_TURN} tool calls are run per reply; this one was not")
