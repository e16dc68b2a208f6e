"""A reasoning model as a user evaluates one: ``structbench run`` against a server that thinks before it answers
(``structbench.testing.reasoning_server``, in its own process), its thought naming a wrong option letter first,
its answer the gold one. The synthetic SciTab and StructFact releases are the data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from faults import child_pythonpath
from structbench.testing.cli import Invocation, invoke

TESTS = Path(__file__).resolve().parents[1]
DATA = TESTS / "synthetic"
RUN = ["-b", "scitab,structfact", "-s", "zero_shot", "--limit", "20", "--data-dir", str(DATA),
       "--allow-modified-data", "--no-cache", "--no-progress"]


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": child_pythonpath(),
            "STRUCTBENCH_CACHE": str(tmp_path / "cache")}


def sb(tmp_path: Path, *args: str, check: int = 0) -> Invocation:
    proc = invoke(*args, env=_env(tmp_path), cwd=tmp_path)
    assert proc.returncode == check, proc.stderr
    return proc


@contextmanager
def thinker(tmp_path: Path, shape: str) -> Iterator[str]:
    """The reasoning server answering SciTab and StructFact zero-shot prompts with the gold letter."""
    port_file = tmp_path / f"port-{shape}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "structbench.testing.reasoning_server", "--shape", shape, "--oracle", "scitab",
         "--oracle", "structfact", "--strategy", "zero_shot", "--limit", "20", "--data-dir", str(DATA),
         "--port-file", str(port_file)],
        stdout=subprocess.DEVNULL, env=_env(tmp_path))
    try:
        for _ in range(600):
            if port_file.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert port_file.exists(), "the reasoning server did not start"
        yield f"http://127.0.0.1:{port_file.read_text()}/v1"
    finally:
        proc.kill()
        proc.wait()


def _results(run_dir: Path) -> list[dict[str, object]]:
    return json.loads((run_dir / "metrics.json").read_text())["results"]


def _records(run_dir: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("shape", ["inline", "reasoning_content", "reasoning"])
def test_the_answer_is_scored_not_the_thought(tmp_path: Path, shape: str) -> None:
    with thinker(tmp_path, shape) as url:
        proc = sb(tmp_path, "run", "-m", "openai:r1", "--base-url", url, *RUN, "--out", "run")
    results = _results(tmp_path / "run")
    assert [(r["benchmark"], r["headline"]["value"]) for r in results] == [("scitab", 1.0), ("structfact", 1.0)]
    assert "cut off in thought" not in proc.stdout and "reasoning_cut_off" not in proc.stderr
    records = _records(tmp_path / "run")
    assert records and all("The answer is" in str(r["reasoning"]) and r["parsed"] == r["gold"] for r in records)
    assert all("<think>" not in str(r["output"]) and "The answer is" not in str(r["output"]) for r in records)
    if shape != "inline":
        assert all(isinstance(r["reasoning_tokens"], int) for r in records)


def test_a_reply_cut_off_inside_its_thought_is_counted_never_parsed(tmp_path: Path) -> None:
    with thinker(tmp_path, "cutoff") as url:
        proc = sb(tmp_path, "run", "-m", "openai:r1", "--base-url", url, *RUN, "--out", "run")
    records = _records(tmp_path / "run")
    assert records and all(r["parsed"] is None and r["output"] == "" and r["reasoning_cut_off"] for r in records)
    results = _results(tmp_path / "run")
    assert all(r["reasoning_cut_off"] == r["n"] == r["replies_cut_off"] for r in results)
    assert "| cut off in thought |" in proc.stdout
    for r in results:
        line = f"note: {r['benchmark']}:{r['variant']}/zero_shot: {r['n']} of {r['n']} sample(s) got no answer"
        assert line in proc.stderr and "--reasoning-budget" in proc.stderr
    assert all(r["replies_unclosed"] == 0 for r in results)


def test_a_thought_the_model_never_closed_is_not_blamed_on_the_budget(tmp_path: Path) -> None:
    """A reply that ends (finish_reason stop) inside a thought it never closed has no answer either, but no budget
    ran out: the note points at the tags and the template, not at --reasoning-budget."""
    with thinker(tmp_path, "unclosed") as url:
        proc = sb(tmp_path, "run", "-m", "openai:r1", "--base-url", url, *RUN, "--out", "run")
    records = _records(tmp_path / "run")
    assert records and all(r["output"] == "" and r["replies_unclosed"] == r["replies_cut_off"] == 1 for r in records)
    results = _results(tmp_path / "run")
    assert all(r["reasoning_cut_off"] == r["n"] == r["replies_unclosed"] for r in results)
    for r in results:
        line = (f"note: {r['benchmark']}:{r['variant']}/zero_shot: {r['n']} of {r['n']} sample(s) got no answer: "
                f"{r['n']} of the model's replies ended (finish_reason stop) inside a thought the model never closed")
        assert line in proc.stderr
    assert "ran out of tokens" not in proc.stderr and "--reasoning-budget will not help" in proc.stderr


def test_reasoning_flags_are_the_runs_and_a_resume_keeps_them(tmp_path: Path) -> None:
    with thinker(tmp_path, "inline") as url:
        sb(tmp_path, "run", "-m", "openai:r1", "--base-url", url, *RUN, "--out", "run", "--reasoning-budget", "256",
           "--reasoning-effort", "low", "--think-tags", "<think>,</think>", "--think-tags", "[THINK],[/THINK]",
           "--chat-template-arg", "enable_thinking=true", "--system-prompt", "Think first.")
        config = json.loads((tmp_path / "run" / "manifest.json").read_text())["config"]
        assert config["reasoning"] == {"budget": 256, "effort": "low", "opened": False,
                                       "tags": [["<think>", "</think>"], ["[THINK]", "[/THINK]"]]}
        assert config["chat_template_args"] == {"enable_thinking": True} and config["system_prompt"] == "Think first."
        assert all(r["headline"]["value"] == 1.0 for r in _results(tmp_path / "run"))
        refused = sb(tmp_path, "run", "--resume", "run", "--reasoning-budget", "512", check=2)
        assert "--reasoning-budget would change it" in refused.stderr
        sb(tmp_path, "run", "--resume", "run", "--base-url", url, "--reasoning-budget", "256")
    bad = sb(tmp_path, "run", "-m", "mock", "-b", "scitab", "--data-dir", str(DATA), "--allow-modified-data",
             "--reasoning-effort", "extreme", check=2)
    assert "--reasoning-effort: reasoning effort 'extreme': expected one of" in bad.stderr
    bad = sb(tmp_path, "run", "-m", "mock", "-b", "scitab", "--data-dir", str(DATA), "--allow-modified-data",
             "--reasoning-effort", "low", check=2)
    assert "the mock backend has no reasoning effort" in bad.stderr
    bad = sb(tmp_path, "run", "-m", "anthropic:claude-x", "--base-url", "http://127.0.0.1:9", "-b", "scitab",
             "--data-dir", str(DATA), "--allow-modified-data", "--reasoning-budget", "512", "--out", "claude", check=2)
    assert "--reasoning-budget 512: Anthropic's extended thinking takes a budget of at least 1024" in bad.stderr
    assert not (tmp_path / "claude").exists()


def test_claude_thinks_adaptively_at_the_effort_asked_and_each_effort_is_its_own_cache_entry(tmp_path: Path) -> None:
    """``--reasoning-effort`` with the anthropic backend: every call asks for adaptive thinking at that effort, the
    manifest records it, the signed thinking blocks are the thought (never parsed: the answer scores the maximum), and
    a run at another effort makes its own calls where a repeat of the first is answered from the cache."""
    from structbench.testing.batch_server import BatchServer, serve_batches_in_thread
    from structbench.testing.reasoning_server import OracleAnswers, ReasoningServer

    answers = OracleAnswers()
    answers.add_run(["scitab", "structfact"], strategies=["zero_shot"], limit=20, data_dir=str(DATA))
    server = BatchServer(ReasoningServer("reasoning_content", answers=answers))
    env = {**_env(tmp_path), "ANTHROPIC_API_KEY": "sk-ant-test-0123456789abcdef"}
    cached = [a for a in RUN if a != "--no-cache"]

    def run(out: str, *flags: str, check: int = 0, model: str = "anthropic:claude-x") -> Invocation:
        proc = invoke("run", "-m", model, "--base-url", url, *cached, "--out", out, *flags, env=env, cwd=tmp_path)
        assert proc.returncode == check, proc.stderr
        return proc

    with serve_batches_in_thread(server) as url:
        run("low", "--reasoning-effort", "low", "--reasoning-budget", "2048")
        first = list(server.messages_sent)
        assert first and all(b["thinking"] == {"type": "adaptive"} and b["output_config"] == {"effort": "low"}
                             for b in first)
        assert sorted({b["max_tokens"] for b in first}) == [10 + 2048, 64 + 2048]  # StructFact's, SciTab's + room
        config = json.loads((tmp_path / "low" / "manifest.json").read_text())["config"]
        assert config["reasoning"] == {"budget": 2048, "effort": "low", "opened": False, "tags": None}
        assert all(r["headline"]["value"] == 1.0 for r in _results(tmp_path / "low"))
        records = _records(tmp_path / "low")
        assert all("The answer is" in str(r["reasoning"]) and "The answer is" not in str(r["output"]) for r in records)
        run("high", "--reasoning-effort", "high", "--reasoning-budget", "2048")
        again = server.messages_sent[len(first):]
        assert len(again) == len(first) and all(b["output_config"] == {"effort": "high"} for b in again)
        run("low-again", "--reasoning-effort", "low", "--reasoning-budget", "2048")
        assert len(server.messages_sent) == 2 * len(first)  # the first run's answers, from the cache
        calls = len(server.messages_sent)
        refused = [run("none", "--reasoning-effort", "none", check=2),
                   run("minimal", "--reasoning-effort", "minimal", "--reasoning-budget", "4096", check=2),
                   run("openai", "--reasoning-effort", "max", check=2, model="openai:claude-x")]
        # (after the synthetic data's note) one line each
        assert [[line for line in r.stderr.splitlines() if not line.startswith("note: ")] for r in refused] == [
            ["error: --reasoning-effort none: the anthropic backend sends only low, medium, high, xhigh, max "
             "(leave it out for the model's default)"],
            ["error: --reasoning-effort minimal: the anthropic backend sends only low, medium, high, xhigh, max "
             "(leave it out for the model's default)"],
            ["error: --reasoning-effort max: the openai backend sends only none, minimal, low, medium, high, xhigh "
             "(leave it out for the model's default)"]]
        assert len(server.messages_sent) == calls and server.stats.direct == calls
        assert not any((tmp_path / out).exists() for out in ("none", "minimal", "openai"))
