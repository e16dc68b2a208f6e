"""SKA-Bench -s tools: a table knowledge base is given as its schema and queried; KG knowledge keeps the paper's
prompt and gets no tool; the answer list is read by the paper's parser."""

from __future__ import annotations

import asyncio
import json

from structbench.backends.base import Choice, Request, Response
from structbench.benchmarks.skabench import BENCHMARK as SKABENCH
from structbench.data.datasets import DataContext

OPTIONS = {"db": "galois/world_1", "questions": "3", "budget": "1k", "testbed": "noise"}


def _loaded(knowledge: str, shared_data: DataContext) -> tuple[object, list]:
    bench = SKABENCH({**OPTIONS, "knowledge": knowledge})
    return bench, list(bench.load("rfqa", shared_data, seed=0, limit=None))


def test_a_table_is_queried_and_the_answer_list_parsed(shared_data: DataContext) -> None:
    bench, samples = _loaded("table", shared_data)
    sample = samples[0]
    loop = bench.strategy("tools")
    gold = json.loads(bench.oracle(sample, Request.chat("x")))
    sent: list[Request] = []

    async def generate(request: Request) -> Response:
        sent.append(request)
        if len(sent) == 1:
            return Response(choices=(Choice(text="```sql\nSELECT count(*) AS n FROM t\n```"),))
        return Response(choices=(Choice(text=f"Done.\n{json.dumps(gold)}"),))

    attempt = asyncio.run(loop.run(sample, generate))
    first = sent[0].messages[0].content
    assert first.startswith("### Table:\nThe table is not shown in full") and "Table t(" in first
    assert "**Task Description:** Please look at the table" in first
    assert sent[1].messages[-1].content.startswith("Result of your sql block:\n```\nn\n")
    assert bench.score(sample, attempt, loop).score == 1.0


def test_kg_knowledge_keeps_the_papers_prompt_without_tools(shared_data: DataContext) -> None:
    bench, samples = _loaded("kg", shared_data)
    task = bench.strategy("tools").task(samples[0])
    assert task.workspace.tools == {} and task.messages[0].content == bench.prompt(samples[0])
