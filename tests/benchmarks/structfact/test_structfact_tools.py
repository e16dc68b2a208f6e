"""StructFact -s tools on the generated set (offline, synthetic tables): its tables are queried, not read, and the
final option letter is read by the zero-shot parser; a model that answers only after its tool scores 1.0."""

from __future__ import annotations

import json
from pathlib import Path

from structbench.backends.base import Request
from structbench.benchmarks.structfact import BENCHMARK as STRUCTFACT
from structbench.data.datasets import DataContext
from structbench.strategies.tools import ToolLoop
from structbench.testing.cli import invoke
from structbench.testing.openai_server import MockOpenAIServer, serve_in_thread

OPTIONS = {"tables": "synthetic", "per_task": "2"}


def test_generated_questions_are_answered_after_querying_their_tables(tmp_path: Path) -> None:
    bench = STRUCTFACT(OPTIONS)
    samples = list(bench.load("generated", DataContext(offline=True), seed=0, limit=None))
    loop = bench.strategy("tools")
    assert isinstance(loop, ToolLoop)
    answers, tabled = {}, set()
    for sample in samples:
        task = loop.task(sample)
        first = task.messages[0].content
        if any(e.kind == "table" for e in sample.evidence):  # the schema, never the whole table
            assert "not shown in full" in first and "Table t" in first and set(task.workspace.tools) == {"sql",
                                                                                                        "python"}
            tabled.add(sample.id)
        else:  # lists only: shown as zero-shot shows them, no tool
            assert "not shown in full" not in first and task.workspace.tools == {}
        answers[sample.question] = bench.oracle(sample, Request(messages=task.messages))
        task.workspace.close()
    assert len(tabled) == 9
    server = MockOpenAIServer(reply="(no data, no answer)", tool_model=True, tool_answers=answers,
                              tool_arguments={"sql": {"query": "SELECT count(*) AS n FROM information_schema.tables"}})
    with serve_in_thread(server) as url:
        proc = invoke("run", "-m", "openai:mock", "--base-url", url, "-b", "structfact:generated", "-s", "tools",
                      "-o", "tables=synthetic", "-o", "per_task=2", "--offline", "--no-progress", "--no-cache",
                      "--out", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stderr
    entry = json.loads((tmp_path / "run" / "metrics.json").read_text())["results"][0]
    assert entry["n"] == len(samples) == 10
    records = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    for record in records:  # a question with tables: queried, then answered right; without: no tool, no answer
        queried = record["artifacts"]["tools"]["trace"]
        assert record["score"] == float(record["id"] in tabled) == float(bool(queried))
        assert all(call["result"].startswith("n\n") for call in queried)
