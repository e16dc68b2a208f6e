"""SciTab -s tools as a user runs it: a loopback model that answers only after calling the tool it is offered scores
1.0, with the tool's result in every record's trace; the same through Anthropic's tool_use; the turn limit counted
apart; reading and querying paired in the report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from structbench.benchmarks.scitab.prompts import ZERO_SHOT_ANSWERS
from structbench.benchmarks.scitab.source import DATA_FILE, SOURCE, read_claims
from structbench.data.datasets import DataContext
from structbench.testing.batch_server import BatchServer, serve_batches_in_thread
from structbench.testing.cli import invoke
from structbench.testing.openai_server import MockOpenAIServer, serve_in_thread

COUNT = {"sql": {"query": "SELECT count(*) AS n FROM t"}}
LIMIT = "12"


@pytest.fixture(scope="module")
def answers(shared_data: DataContext) -> dict[str, str]:
    """Each claim -> its gold zero-shot answer: what the tool model says once it has a tool's result."""
    return {c.claim: ZERO_SHOT_ANSWERS[c.label] for c in read_claims(shared_data.file(SOURCE, DATA_FILE))}


def tool_model(answers: dict[str, str]) -> MockOpenAIServer:
    return MockOpenAIServer(reply="(no answer without the data)", tool_model=True, tool_arguments=COUNT,
                            tool_answers=answers)


def run(tmp_path: Path, url: str, *args: str, model: str = "openai:mock", out: str = "run") -> Any:
    return invoke("run", "--model", model, "--base-url", url, "--bench", "scitab", "--limit", LIMIT,
                  "--no-progress", "--no-cache", "--out", str(tmp_path / out), *args)


def records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]


@pytest.fixture
def data_env(shared_datasets: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("STRUCTBENCH_DATA_DIR", str(shared_datasets))
    yield


@pytest.mark.usefixtures("data_env")
def test_a_model_that_queries_before_answering_scores_1_with_every_result_traced(tmp_path: Path,
                                                                                 answers: dict[str, str]) -> None:
    server = tool_model(answers)
    with serve_in_thread(server) as url:
        proc = run(tmp_path, url, "-s", "zero_shot,tools")
    assert proc.returncode == 0, proc.stderr
    metrics = {r["strategy"]: r for r in json.loads((tmp_path / "run" / "metrics.json").read_text())["results"]}
    assert metrics["tools"]["headline"]["value"] == 1.0 and metrics["tools"]["n"] == int(LIMIT)
    assert metrics["zero_shot"]["metrics"]["invalid_rate"] == 1.0  # offered no tool, the same model has no answer
    looped = [r for r in records(tmp_path / "run") if r["strategy"] == "tools"]
    assert len(looped) == int(LIMIT) and len(server.tool_results) == int(LIMIT)
    for record in looped:
        loop = record["artifacts"]["tools"]
        assert (loop["protocol"], loop["turns"], loop["calls"], loop["turn_limit"]) == ("function", 2, 1, False)
        call = loop["trace"][0]
        assert call["tool"] == "sql" and json.loads(call["arguments"]) == COUNT["sql"]
        assert call["result"] in server.tool_results and call["result"].startswith("n\n")
        assert record["calls"] == 2 and len(record["call_usage"]) == 2  # tokens summed over the turns
        assert record["usage"]["prompt_tokens"] == sum(c["prompt_tokens"] for c in record["call_usage"])
    report = invoke("report", str(tmp_path / "run"), "--out", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr
    markdown = (tmp_path / "report.md").read_text()
    assert "### scitab:all reading and querying" in markdown
    row = next(line for line in markdown.splitlines()
               if line.startswith(f"| openai:mock | zero_shot | {LIMIT} | macro_f1 |"))
    assert "| 1.0000 |" in row and row.endswith("| 2.00 | 1.00 | 0 of 12 | 0 |")
    html = (tmp_path / "report.html").read_text()
    assert "tool calls (the tool loop" in html and '"tools": "2 model calls, 1 tool calls' in html


@pytest.mark.usefixtures("data_env")
def test_anthropic_tool_use_scores_the_same(tmp_path: Path, answers: dict[str, str]) -> None:
    with serve_batches_in_thread(BatchServer(tool_model(answers))) as url:
        proc = run(tmp_path, url, "-s", "tools", model="anthropic:claude-x")
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "run" / "metrics.json").read_text())["results"][0]
    assert result["headline"]["value"] == 1.0
    assert [r["artifacts"]["tools"]["calls"] for r in records(tmp_path / "run")] == [1] * int(LIMIT)


@pytest.mark.usefixtures("data_env")
def test_a_loop_at_the_turn_limit_is_scored_as_no_answer_by_default(tmp_path: Path, answers: dict[str, str]) -> None:
    """A model that never stops querying keeps its samples in n, scored as replies without an answer (a stalling
    model must not raise its score by leaving the hard questions out), and they are counted and noted."""
    with serve_in_thread(tool_model(answers)) as url:
        proc = run(tmp_path, url, "-s", "tools", "--max-turns", "1")
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "run" / "metrics.json").read_text())["results"][0]
    assert (result["turn_limit_scored"], result["turn_limit"], result["n"], result["errors"]) == (12, 0, 12, 0)
    assert result["headline"]["value"] is not None and result["metrics"]["accuracy"] == 0.0
    assert "12 of 12 sample(s) reached the tool loop's turn limit (--max-turns) still calling tools" in proc.stderr
    assert "scored as replies without an answer" in proc.stderr
    looped = records(tmp_path / "run")
    assert all(r["turn_limit"] and r["error_kind"] is None and r["output"] == "" for r in looped)
    assert all(r["artifacts"]["tools"]["trace"] and "last_reply" in r["artifacts"]["tools"] for r in looped)
    report = invoke("report", str(tmp_path / "run"), "--out", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr
    markdown = (tmp_path / "report.md").read_text()
    assert "| 12 in n |" in markdown and "12 of 12 sample(s) reached the tool loop's turn limit" in markdown


@pytest.mark.usefixtures("data_env")
def test_a_loop_at_the_turn_limit_is_counted_apart_with_turn_limit_apart(tmp_path: Path,
                                                                         answers: dict[str, str]) -> None:
    with serve_in_thread(tool_model(answers)) as url:
        proc = run(tmp_path, url, "-s", "tools", "--max-turns", "1", "--turn-limit", "apart")
    result = json.loads((tmp_path / "run" / "metrics.json").read_text())["results"][0]
    assert (result["turn_limit"], result["turn_limit_scored"], result["n"], result["errors"],
            result["headline"]["value"]) == (12, 0, 0, 0, None)
    assert "12 sample(s) reached the tool loop's turn limit (--max-turns) still calling tools" in proc.stderr
    looped = records(tmp_path / "run")
    assert all(r["error_kind"] == "turns" and r["artifacts"]["tools"]["turn_limit"] for r in looped)
    assert all(r["artifacts"]["tools"]["trace"] for r in looped)  # the calls it made are kept
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert (manifest["config"]["max_turns"], manifest["config"]["turn_limit"]) == (1, "apart")
    # resumed with its server gone: its samples are settled, so nothing is asked again
    again = invoke("run", "--resume", str(tmp_path / "run"), "--no-progress", "--no-cache")
    assert again.returncode == proc.returncode == 0, again.stderr
    assert len(records(tmp_path / "run")) == 12
