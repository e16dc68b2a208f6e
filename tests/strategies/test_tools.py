"""The tool loop as a strategy: both protocols, the turn limit, the trace, bad calls answered as results."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from structbench.backends.base import Choice, Message, Request, Response, ToolCall
from structbench.contract.benchmark import DIRECT, ToolSupport, TurnLimit
from structbench.data.evidence import Table
from structbench.data.sample import LabelGold, Sample
from structbench.strategies import text_protocol
from structbench.strategies.tools import MAX_CALLS_PER_TURN, TRACE_CHARS, ToolLoop, ToolTask, table_workspace

TABLE = Table(header=["team", "wins"], rows=[["Ants", "3"], ["Bees", "5"], ["Cats", "1"]], caption="League")
SAMPLE = Sample(id="s1", benchmark="toy", variant="v", task="t", question="Who won most?", evidence=[TABLE],
                gold=LabelGold(label="Bees"))


@dataclass
class Scripted:
    """A ``generate`` that replies from a script (a function of the request) and keeps every request."""

    reply: Callable[[Request], Choice]
    native: bool = False
    max_turns: int | None = None
    turn_limit: TurnLimit | None = None
    requests: list[Request] = field(default_factory=list)

    @property
    def tool_support(self) -> ToolSupport:
        return ToolSupport(native=self.native, max_turns=self.max_turns, turn_limit=self.turn_limit)

    async def __call__(self, request: Request) -> Response:
        self.requests.append(request)
        return Response(choices=(self.reply(request),))


def loop(max_turns: int = 10, python: bool = False, count_turn_limit: bool = True) -> ToolLoop:
    def task(sample: Sample) -> ToolTask:
        workspace = table_workspace(sample.evidence, python=python)  # type: ignore[arg-type]
        return ToolTask((Message("user", f"{workspace.schema}\nQ: {sample.question}"),), workspace)

    return ToolLoop("tools", task, answer=DIRECT, max_turns=max_turns, count_turn_limit=count_turn_limit)


def run(strategy: ToolLoop, generate: Scripted):
    return asyncio.run(strategy.run(SAMPLE, generate))


def test_text_protocol_runs_fenced_blocks_and_hands_back_their_results() -> None:
    def reply(request: Request) -> Choice:
        assert request.tools == ()  # no function tools without function calling
        if len(request.messages or ()) == 1:
            assert "```sql" in request.messages[0].content  # the protocol is described once, in the first turn
            return Choice(text="First I look.\n```sql\nSELECT team FROM t ORDER BY wins DESC LIMIT 1\n```\n"
                               "```json\n{\"not\": \"a call\"}\n```")
        return Choice(text="Bees")

    generate = Scripted(reply)
    attempt = run(loop(), generate)
    assert attempt.output == "Bees" and not attempt.turn_limit
    assert [m.role for m in generate.requests[1].messages] == ["user", "assistant", "user"]
    assert generate.requests[1].messages[2].content == "Result of your sql block:\n```\nteam\nBees\n(1 row)\n```"
    loop_record = attempt.artifacts["tools"]
    assert (loop_record["protocol"], loop_record["turns"], loop_record["calls"], loop_record["errors"]) == \
        ("text", 2, 1, 0)
    assert loop_record["trace"][0] | {"seconds": 0} == {
        "turn": 1, "tool": "sql", "arguments": "SELECT team FROM t ORDER BY wins DESC LIMIT 1",
        "result": "team\nBees\n(1 row)", "error": None, "seconds": 0, "rows": 1}


def test_native_calls_go_out_as_function_tools_and_come_back_as_tool_turns() -> None:
    def reply(request: Request) -> Choice:
        assert [t.name for t in request.tools] == ["sql"] and request.tools[0].parameters["required"] == ["query"]
        messages = request.messages or ()
        if messages[-1].role == "user":
            return Choice(text="", tool_calls=(
                ToolCall("c1", "sql", json.dumps({"query": "SELECT sum(wins) AS total FROM t"})),
                ToolCall("c2", "sql", "{not json"),
                ToolCall("c3", "shell", json.dumps({"query": "ls /"})),
            ))
        assert [(m.role, m.tool_call_id) for m in messages[-3:]] == [("tool", "c1"), ("tool", "c2"), ("tool", "c3")]
        return Choice(text="9")

    generate = Scripted(reply, native=True)
    attempt = run(loop(), generate)
    turn = generate.requests[1].messages
    assert turn[1].role == "assistant" and [c.id for c in turn[1].tool_calls] == ["c1", "c2", "c3"]
    assert turn[2].content == "total\n9\n(1 row)"
    assert turn[3].content == "error: the sql tool takes a JSON object with one string field 'query'"
    assert turn[4].content == "error: there is no tool 'shell'; the tools are sql"
    assert attempt.output == "9" and attempt.artifacts["tools"]["errors"] == 2


def test_a_loop_at_the_turn_limit_has_no_answer_and_is_scored_as_one_by_default() -> None:
    """A stalling loop reads as a reply without an answer (an empty output, in n), its last reply kept in the trace;
    ``--max-turns`` wins over the strategy's limit."""
    query = "```sql\nSELECT 1 AS one\n```"
    always = Scripted(lambda r: Choice(text=query))
    attempt = run(loop(max_turns=3), always)
    assert (attempt.output, attempt.turn_limit, len(always.requests)) == ("", False, 3)
    tools = attempt.artifacts["tools"]
    assert (tools["turn_limit"], tools["turns"], tools["last_reply"]) == (True, 3, query)
    limited = Scripted(lambda r: Choice(text=query), max_turns=2)  # --max-turns wins
    assert run(loop(max_turns=3), limited).artifacts["tools"]["turns"] == 2 and len(limited.requests) == 2


def test_a_loop_at_the_turn_limit_is_counted_apart_by_the_strategy_or_the_run() -> None:
    """``count_turn_limit=False`` (a benchmark's option) or ``--turn-limit apart`` leaves the sample apart, its last
    reply the output; ``--turn-limit wrong`` overrides a strategy that counts apart, and ``apart`` one that scores."""
    query = "```sql\nSELECT 1 AS one\n```"
    apart = run(loop(max_turns=2, count_turn_limit=False), Scripted(lambda r: Choice(text=query)))
    assert (apart.turn_limit, apart.output) == (True, query)
    by_run = run(loop(max_turns=2), Scripted(lambda r: Choice(text=query), turn_limit="apart"))
    assert (by_run.turn_limit, by_run.output) == (True, query)
    scored = run(loop(max_turns=2, count_turn_limit=False), Scripted(lambda r: Choice(text=query), turn_limit="wrong"))
    assert (scored.turn_limit, scored.output) == (False, "")


def test_calls_beyond_the_per_reply_cap_are_answered_not_run() -> None:
    blocks = "".join(f"```sql\nSELECT {k} AS k\n```\n" for k in range(MAX_CALLS_PER_TURN + 2))
    generate = Scripted(lambda r: Choice(text=blocks if len(r.messages or ()) == 1 else "done"))
    attempt = run(loop(), generate)
    trace = attempt.artifacts["tools"]["trace"]
    assert len(trace) == MAX_CALLS_PER_TURN + 2
    assert all(t["error"] is None for t in trace[:MAX_CALLS_PER_TURN])
    assert all("at most" in t["error"] for t in trace[MAX_CALLS_PER_TURN:])


def test_trace_results_are_capped() -> None:
    long = "SELECT repeat('x', 3000) AS x"
    generate = Scripted(lambda r: Choice(text=f"```sql\n{long}\n```" if len(r.messages or ()) == 1 else "done"))
    entry = run(loop(), generate).artifacts["tools"]["trace"][0]
    assert len(entry["result"]) < TRACE_CHARS + 40 and entry["result"].endswith("characters)")


def test_the_python_tool_sees_the_tables() -> None:
    generate = Scripted(lambda r: Choice(text="```python\nprint(t['wins'].sum())\n```" if len(r.messages or ()) == 1
                                         else "9"))
    attempt = run(loop(python=True), generate)
    assert attempt.artifacts["tools"]["trace"][0]["result"] == "9"


def test_text_calls_are_read_from_the_answer_only() -> None:
    tools = {"sql": "db_execute_sql", "python": "python"}
    assert text_protocol.calls("```SQL\nSELECT 1\n```", tools) == [text_protocol.TextCall("sql", "db_execute_sql",
                                                                                           "SELECT 1")]
    assert text_protocol.calls("```py\nprint(1)", tools) == [text_protocol.TextCall("python", "python", "print(1)")]
    assert text_protocol.calls("```python\nprint(1)\n```", {"sql": "sql"}) == []  # not a tool of this workspace
    assert text_protocol.calls("The answer is A.", tools) == []

